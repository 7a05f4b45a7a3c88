#!/usr/bin/env python3
"""Differential fuzz of Codex's apply_patch against `cordon hook codex` (issue 21 class 5).

Each variant patch is applied by Codex's own parser and applier, offline
(`codex --codex-run-as-apply-patch PATCH`, the code Codex runs for the tool), in a fresh
tree BASE/{proj,home,victim.txt}, cwd and root BASE/proj, HOME BASE/home; and the same patch
is given to `cordon hook codex --policy BASE/proj/cordon.toml`. A variant is a hole when Codex
changed a file outside the project (or on the persistence surface in it) and cordon answered
allow. Usage: fuzz-codex-patch.py CORDON CODEX [N] [SEED] [--corpus FILE]: N random variants
from SEED (plus the whole corpus of fixed cases); prints counts and every hole; with --corpus,
writes every variant Codex acted on outside or on the surface (the regression corpus).
"""
import hashlib, json, os, random, shutil, subprocess, sys, tempfile

POLICY = 'version = 1\n[sandbox.paths.workspace]\nroot = "."\nmode = "rw"\n[shell]\ndefault = "allow"\n'
SURFACE = (".git/", ".claude/", ".codex/", ".gemini/", ".envrc", "cordon.toml", ".mcp.json")

PREFIX = ["", " ", "\t", "  ", "\u00a0", "\ufeff", "\u3000", "\u2028", "\x0b", "\x0c"]
MARK = {
    "add": ["*** Add File: ", "*** Add File:", "*** add file: ", "*** ADD FILE: ", "***  Add File: ",
            "***Add File: ", "*** Add File:  ", "*** Add  File: ", "*** Add File:\t", "** Add File: "],
    "update": ["*** Update File: ", "*** update file: ", "*** Update File:"],
    "delete": ["*** Delete File: ", "*** delete file: ", "*** Delete File:"],
}
PATHS = ["../out.txt", "/BASE/out.txt", "sub/../../out.txt", "./../out.txt", "~/out.txt",
         "~//out.txt", "../out.txt ", " ../out.txt", "../out.txt\t", "..//out.txt",
         "/BASE//out.txt", "/BASE/./out.txt", "\u2024\u2024/out.txt", "..\\out.txt",
         ".git/config", ".claude/settings.json", "cordon.toml", ".envrc", "ok.txt",
         "../victim.txt", "/BASE/victim.txt", "~", "~/", "../", "/BASE/proj/../out.txt"]
EOL = ["\n", "\r\n", "\r"]
BEGIN = ["*** Begin Patch", "*** begin patch", " *** Begin Patch", "*** Begin Patch ", "\ufeff*** Begin Patch"]
END = ["*** End Patch", " *** End Patch", "*** End Patch ", ""]


def pick(r, xs):
    """The first (well-formed) choice most of the time, so that most variants are applied."""
    return xs[0] if r.random() < 0.6 else r.choice(xs)


def variant(r):
    eol = pick(r, EOL)
    op = r.choice(["add", "add", "update", "delete", "move", "two"])
    pre = pick(r, PREFIX)
    path = r.choice(PATHS)
    lines = [pick(r, BEGIN)]
    if op == "add":
        lines += [pre + pick(r, MARK["add"]) + path, "+hi"]
    elif op == "update":
        lines += [pre + pick(r, MARK["update"]) + path, "@@", "-victim", "+changed"]
    elif op == "delete":
        lines += [pre + pick(r, MARK["delete"]) + path]
    elif op == "move":
        lines += ["*** Update File: ok.txt", pre + r.choice(["*** Move to: ", "*** move to: ", "*** Move to:"]) + path,
                  "@@", "-ok", "+moved"]
    else:
        lines += ["*** Add File: inside.txt", "+in", pre + pick(r, MARK["add"]) + path, "+hi"]
    end = pick(r, END)
    if end:
        lines.append(end)
    text = eol.join(lines) + r.choice(["", eol, eol + eol])
    wrap = r.random()
    if wrap < 0.1:
        text = "<<'EOF'\n" + text + "\nEOF\n"
    elif wrap < 0.15:
        text = "\n\n" + text
    return text


def tree(base):
    out = {}
    for root, dirs, files in os.walk(base):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, base)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def setup(base):
    for d in ("proj/sub", "home", "proj/.git", "proj/.claude"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    open(os.path.join(base, "proj/cordon.toml"), "w").write(POLICY)
    open(os.path.join(base, "proj/ok.txt"), "w").write("ok\n")
    open(os.path.join(base, "victim.txt"), "w").write("victim\n")
    open(os.path.join(base, "proj/.git/config"), "w").write("victim\n")
    open(os.path.join(base, "proj/.claude/settings.json"), "w").write("victim\n")


def run(cordon, codex, patch_t):
    base = tempfile.mkdtemp(prefix="cfz")
    try:
        setup(base)
        patch = patch_t.replace("/BASE", base)
        proj = os.path.join(base, "proj")
        env = dict(os.environ, HOME=os.path.join(base, "home"))
        before = tree(base)
        c = subprocess.run([codex, "--codex-run-as-apply-patch", patch], cwd=proj, env=env,
                           capture_output=True, timeout=20)
        after = tree(base)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        bad = [k for k in changed if not k.startswith("proj/") or k[5:].startswith(SURFACE)]
        hook_in = {"session_id": "s", "turn_id": "t", "transcript_path": None, "cwd": proj,
                   "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
                   "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "u"}
        h = subprocess.run([cordon, "hook", "codex", "--policy", os.path.join(proj, "cordon.toml")],
                           cwd=proj, env=dict(env, XDG_STATE_HOME=os.path.join(base, "state"),
                                              XDG_CONFIG_HOME=os.path.join(base, "config")),
                           input=json.dumps(hook_in).encode(), capture_output=True, timeout=20)
        out = h.stdout.decode(errors="replace").strip()
        allowed = h.returncode == 0 and out == "{}"
        return c.returncode, changed, bad, allowed, out + h.stderr.decode(errors="replace")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    cordon, codex = args[0], args[1]
    n = int(args[2]) if len(args) > 2 else 300
    seed = int(args[3]) if len(args) > 3 else 21
    corpus_out = sys.argv[sys.argv.index("--corpus") + 1] if "--corpus" in sys.argv else None
    r = random.Random(seed)
    variants = [variant(r) for _ in range(n)]
    counts = {"variants": 0, "codex_applied": 0, "codex_outside_or_surface": 0,
              "cordon_allowed": 0, "holes": 0}
    corpus, seen = [], set()
    for v in variants:
        if v in seen:
            continue
        seen.add(v)
        counts["variants"] += 1
        rc, changed, bad, allowed, said = run(cordon, codex, v)
        counts["codex_applied"] += bool(changed)
        counts["codex_outside_or_surface"] += bool(bad)
        counts["cordon_allowed"] += allowed
        if bad:
            corpus.append(v)
        if bad and allowed:
            counts["holes"] += 1
            print("HOLE", json.dumps(v), bad, said[:200])
    print(json.dumps(counts))
    if corpus_out:
        json.dump(corpus, open(corpus_out, "w"), indent=0, ensure_ascii=True)
    sys.exit(1 if counts["holes"] else 0)


main()
