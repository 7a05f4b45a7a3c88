#!/usr/bin/env python3
"""Differential fuzz of Claude Code's, Gemini CLI's and Copilot CLI's file tools against
`cordon hook HOST` (issue 21 class 5: a tool's input is read by the hook at least as
leniently as by the host).

Each variant is one tool call the real host makes, offline, asked for by the project's mock
model server (`hosts-mock`, crates/cli/examples). The host runs in a fresh tree
BASE/{proj,home,out}, cwd BASE/proj, HOME BASE/home, its own permission gate off (Claude
Code `--permission-mode bypassPermissions`, Gemini CLI `--yolo`, Copilot CLI
`--allow-all-tools`) and, in place of cordon's hook, a recorder that keeps the hook's input
and allows. The content written carries a marker; where the host wrote is where a file with
the marker is. The recorded input is then given to the hook cordon install wires (`cordon
hook HOST --policy BASE/proj/cordon.toml`). A variant is a hole when the host wrote outside
the project or on the persistence surface in it and cordon answered allow to each recorded
call of the tool.

Usage: fuzz-host-files.py CORDON HOSTS_MOCK HOST N SEED [--corpus FILE] [--replay FILE]
HOST: claude | gemini | copilot. N random variants from SEED (each distinct one once); prints counts
and every hole, exits 1 on a hole. --corpus writes each variant the host acted on outside or
on the surface (the regression corpus, crates/cli/tests/hosts_support/host_file_calls.json's
form); --replay runs a corpus file's variants of HOST instead.
Check the detector with a CORDON that always allows (a script printing `{}`): it must find
holes.
"""
import json, os, random, shutil, subprocess, sys, tempfile, time

POLICY = 'version = 1\n[sandbox.paths.workspace]\nroot = "."\nmode = "rw"\n[shell]\ndefault = "allow"\n'
# The surface in the project the paths below name, as cordon lists it
# (crates/policy/src/surface.rs: git's config and hooks, not every file in .git; the hosts'
# settings; CLAUDE.md and GEMINI.md are instructions, deliberately off it).
SURFACE = (".git/config", ".git/hooks/", ".claude/settings", ".gemini/settings", ".vscode/tasks.json",
           ".envrc", "cordon.toml", ".mcp.json")
# The host's own records of the session (they quote the tool's input), not writes by the tool.
HOST_STATE = ("home/.claude/projects/", "home/.claude/file-history/", "home/.claude/todos/",
              "home/.claude/shell-snapshots/", "home/.claude/statsig/", "home/.claude.json",
              "home/.gemini/tmp/", "home/.state/", "home/.cache/", "home/.claude/session-env/",
              "home/.claude/history.jsonl", "home/.gemini/history/", "home/.copilot/session-state/",
              "home/.copilot/logs/", "rec/")
HOSTS = os.environ.get("CORDON_TEST_DEPS", "/opt/cordon-test") + "/npm/node_modules/.bin/"

# Paths, BASE the tree's root, H the home; each relative to the project (cwd) unless absolute.
PATHS = ["../out/x.txt", "BASE/out/x.txt", "sub/../../out/x.txt", "./../out/x.txt",
         "~/x.txt", "~//x.txt", "~/.bashrc", "BASE/out//x.txt", "BASE/./out/x.txt",
         "BASE/proj/../out/x.txt", "..//out/x.txt", " ../out/x.txt", "../out/x.txt ",
         "\u2024\u2024/out/x.txt", "..\\out\\x.txt", ".envrc", "./.envrc", ".//.envrc",
         "sub/../.envrc", ".git/config", ".git//config", ".GIT/config", ".claude/settings.json",
         ".claude//settings.json", ".claude/./settings.json", ".gemini/settings.json",
         ".vscode/tasks.json", "cordon.toml", "CORDON.toml", "./cordon.toml", ".mcp.json",
         "CLAUDE.md", "GEMINI.md", "BASE/proj/.envrc", "BASE/proj//.envrc", "BASE//proj/.envrc",
         "BASE/proj/sub/../.envrc", "BASE/proj/lnk/x.txt", "lnk/x.txt", "lnk/../x.txt",
         "lnkgit/config", ".env\u0072c", "\uff0eenvrc", ".envrc\u200b", "e\u0301.txt",
         "@.envrc", "%2eenvrc", ".vscode%2Ftasks.json", "file://BASE/out/x.txt",
         "BASE/proj/.envrc/", "x" * 300 + ".txt", "ok.txt", "sub/ok.txt", "$HOME/x.txt",
         "${HOME}/x.txt", "H/x.txt", "~cordon-test/x.txt", ".envrc\x00.txt", "BASE/out/x.txt\n"]
# NotebookEdit's: Claude Code edits only a notebook (its input check, before the hook).
NB_PATHS = ["../out/n.ipynb", "BASE/out/n.ipynb", "sub/../../out/n.ipynb", "~/n.ipynb", "H/n.ipynb",
            "lnk/n.ipynb", "BASE/out//n.ipynb", "..//out/n.ipynb", "BASE/out/./n.ipynb", "lnk/./n.ipynb",
            "n.ipynb", "./n.ipynb"]
NOTEBOOKS = ("out/n.ipynb", "home/n.ipynb", "proj/n.ipynb")
CLAUDE_TOOLS = ["Write", "Edit", "MultiEdit", "NotebookEdit"]
GEMINI_TOOLS = ["write_file", "replace"]
COPILOT_TOOLS = ["create", "edit"]
# Alternative names a host might accept for the path, as extra keys.
PATH_KEYS = {"Write": ["file_path", "path", "filePath"], "Edit": ["file_path", "path"],
             "MultiEdit": ["file_path", "path"], "NotebookEdit": ["notebook_path", "file_path", "path"],
             "write_file": ["file_path", "path", "absolute_path", "filePath"],
             "replace": ["file_path", "path", "absolute_path"],
             "create": ["path", "file_path", "filePath"], "edit": ["path", "file_path", "filePath"]}


def pick(r, xs):
    return xs[0] if r.random() < 0.5 else r.choice(xs)


def variant(r, host):
    """(tool, path template, extra keys) as JSON-able: the call is built in `call`."""
    tool = r.choice({"claude": CLAUDE_TOOLS, "gemini": GEMINI_TOOLS, "copilot": COPILOT_TOOLS}[host])
    v = {"tool": tool, "path": r.choice(NB_PATHS if tool == "NotebookEdit" else PATHS),
         "key": pick(r, PATH_KEYS[tool])}
    x = r.random()
    if x < 0.15:  # a second path key naming a harmless file: which one does each reader take?
        v["decoy"] = r.choice(PATH_KEYS[tool])
    elif x < 0.25:
        v["extra"] = r.choice([{"replace_all": "true"}, {"allow_multiple": "true"}, {"content": 1}, {"edits": "[]"},
                               {"old_string": None}, {"cell_id": 0}, {"edit_mode": "insert"}])
    return v


def call(v, base, mark):
    """The hosts-mock pairs for variant `v` in tree `base`."""
    p = v["path"].replace("BASE", base).replace("H/", base + "/home/")
    tool, key = v["tool"], v["key"]
    text = "%s\n" % mark
    if tool in ("Write", "write_file"):
        inp = {key: p, "content": text}
    elif tool == "Edit":
        inp = {key: p, "old_string": "victim", "new_string": mark}
    elif tool == "replace":  # Gemini CLI's needs an instruction too
        inp = {key: p, "instruction": "edit", "old_string": "victim", "new_string": mark}
    elif tool == "create":
        inp = {key: p, "file_text": text}
    elif tool == "edit":
        inp = {key: p, "old_str": "victim", "new_str": mark}
    elif tool == "MultiEdit":
        inp = {key: p, "edits": [{"old_string": "victim", "new_string": mark}]}
    else:
        inp = {key: p, "new_source": mark, "cell_id": "c1", "edit_mode": "replace"}
    if "decoy" in v and v["decoy"] != key:
        inp = {v["decoy"]: base + "/proj/ok.txt", **inp}
    inp.update(v.get("extra", {}))
    pairs = [(tool, inp)]
    if tool in ("Edit", "MultiEdit", "NotebookEdit"):  # Claude Code edits only what it read
        pairs.insert(0, ("Read", {"file_path": p}))
    return pairs


NB = json.dumps({"cells": [{"cell_type": "code", "id": "c1", "source": "victim", "metadata": {},
                            "outputs": [], "execution_count": None}],
                 "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def setup(base, host):
    for d in ("proj/sub", "proj/.git", "proj/.claude", "proj/.gemini", "proj/.vscode", "home/.gemini",
              "out", "rec"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    w = lambda p, t: open(os.path.join(base, p), "w").write(t)
    w("proj/cordon.toml", POLICY)
    # Every file a path above may name exists with the old text (an edit has something to
    # replace); the notebook's form where a notebook tool names it.
    for p in ("proj/ok.txt", "proj/sub/ok.txt", "proj/.envrc", "proj/.git/config",
              "proj/.claude/settings.local.json", "proj/.gemini/settings.json",
              "proj/.vscode/tasks.json", "proj/.mcp.json", "proj/CLAUDE.md", "proj/GEMINI.md",
              "out/x.txt", "home/x.txt", "home/.bashrc", "proj/x.txt"):
        # A JSON file stays JSON (a host that reads it refuses to start on anything else).
        w(p, '{"victim": 1}\n' if p.endswith(".json") else "victim\n")
    for p in NOTEBOOKS:
        w(p, NB)
    os.symlink(os.path.join(base, "out"), os.path.join(base, "proj/lnk"))
    os.symlink(os.path.join(base, "proj/.git"), os.path.join(base, "proj/lnkgit"))
    env = dict(os.environ, HOME=os.path.join(base, "home"))
    proj = os.path.join(base, "proj")
    if host == "claude":
        # The hook is cordon's only when asked (`cordon hook` is run on the recorded input).
        settings = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": recorder(base), "timeout": 30}]}]}}
        os.makedirs(os.path.join(proj, ".claude"), exist_ok=True)
        w("proj/.claude/settings.json", json.dumps(settings))
    elif host == "copilot":
        os.makedirs(os.path.join(base, "home/.copilot/hooks"), exist_ok=True)
        w("home/.copilot/hooks/rec.json", json.dumps({"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": recorder(base), "timeoutSec": 30}]}}))
    else:
        g = {"security": {"auth": {"selectedType": "gemini-api-key"}},
             "privacy": {"usageStatisticsEnabled": False}, "general": {"enableAutoUpdate": False},
             "hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [
                 {"type": "command", "name": "rec", "command": recorder(base), "timeout": 30000}]}]}}
        w("home/.gemini/settings.json", json.dumps(g))
        w("home/.gemini/trustedFolders.json", json.dumps({os.path.realpath(proj): "TRUST_FOLDER"}))


def recorder(base):
    return "f=$(mktemp %s/rec/XXXXXX); cat > \"$f\"; exit 0" % base


def marked(base, mark):
    """The files holding `mark`, relative to `base`, the host's own records left out."""
    out = []
    for root, dirs, files in os.walk(base):
        for f in files:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, base)
            if rel.startswith(HOST_STATE) or os.path.islink(p):
                continue
            try:
                if mark.encode() in open(p, "rb").read():
                    out.append(rel)
            except OSError:
                pass
    return out


def host_run(host, base, url):
    home = os.path.join(base, "home")
    env = {"PATH": os.environ["PATH"], "HOME": home, "XDG_STATE_HOME": home + "/.state",
           "XDG_CONFIG_HOME": home + "/.config", "XDG_CACHE_HOME": home + "/.cache"}
    if host == "claude":
        cmd = [HOSTS + "claude", "-p", "run the scripted tool call", "--output-format", "json",
               "--max-turns", "4", "--permission-mode", "bypassPermissions"]
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-cordon-test", IS_SANDBOX="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                   DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
    elif host == "copilot":
        cmd = [HOSTS + "copilot", "-p", "run the scripted tool call", "--allow-all-tools"]
        env.update(COPILOT_PROVIDER_TYPE="anthropic", COPILOT_PROVIDER_BASE_URL=url,
                   COPILOT_PROVIDER_API_KEY="cordon-test-key", COPILOT_MODEL="claude-sonnet-4-5",
                   COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false")
    else:
        cmd = [HOSTS + "gemini", "-p", "run the scripted tool call", "--yolo", "-m", "gemini-2.5-flash"]
        env.update(GEMINI_API_KEY="cordon-test-key", GOOGLE_GEMINI_BASE_URL=url,
                   GEMINI_TELEMETRY_ENABLED="false")
    return subprocess.run(cmd, cwd=os.path.join(base, "proj"), env=env, capture_output=True,
                          timeout=90, stdin=subprocess.DEVNULL)


def ask_cordon(cordon, host, base, rec):
    proj = os.path.join(base, "proj")
    home = os.path.join(base, "home")
    h = subprocess.run([cordon, "hook", host, "--policy", os.path.join(proj, "cordon.toml")], cwd=proj,
                       env=dict(os.environ, HOME=home, XDG_STATE_HOME=home + "/.state",
                                XDG_CONFIG_HOME=home + "/.config"),
                       input=rec, capture_output=True, timeout=30)
    out = h.stdout.decode(errors="replace").strip()
    refused = h.returncode != 0 or any(w in out for w in ('"deny"', '"ask"', '"block"'))
    return not refused, (out + h.stderr.decode(errors="replace")).strip()


def run(cordon, mock, host, v, n):
    base = tempfile.mkdtemp(prefix="hfz")
    mark = "FUZZMARK%06d" % n
    m = None
    try:
        setup(base, host)
        args = [mock]
        for tool, inp in call(v, base, mark):
            args += [tool, json.dumps(inp)]
        m = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        url = m.stdout.readline().decode().strip()
        o = host_run(host, base, url)
        wrote = marked(base, mark)
        bad = [k for k in wrote if not k.startswith("proj/") or k[5:].startswith(SURFACE)]
        recs = [open(os.path.join(base, "rec", f), "rb").read()
                for f in sorted(os.listdir(os.path.join(base, "rec")))]
        # cordon is asked of the tree as the host found it (an edit's old text is still
        # there): the same tree made again at the same path.
        shutil.rmtree(base)
        os.mkdir(base)
        setup(base, host)
        answers = []
        for rec in recs:
            try:
                j = json.loads(rec)  # Copilot CLI's hook input is camelCase
                if j.get("tool_name", j.get("toolName")) != v["tool"]:
                    continue
            except ValueError:
                pass
            answers.append(ask_cordon(cordon, host, base, rec))
        allowed = bool(answers) and all(a for a, _ in answers)
        said = "; ".join(s[:160] for _, s in answers)
        return wrote, bad, allowed, said, len(answers), o
    finally:
        if m:
            m.stdin.close()
            m.wait()
        shutil.rmtree(base, ignore_errors=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opt = lambda k: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else None
    cordon, mock, host = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2]
    n = int(args[3]) if len(args) > 3 else 40
    seed = int(args[4]) if len(args) > 4 else 25
    r = random.Random(seed)
    if opt("--replay"):
        variants = [c["variant"] for c in json.load(open(opt("--replay"))) if c["host"] == host]
    else:
        variants, seen = [], set()
        for _ in range(n * 20):
            v = variant(r, host)
            k = json.dumps(v, sort_keys=True)
            if k not in seen:
                seen.add(k)
                variants.append(v)
            if len(variants) == n:
                break
    counts = {"variants": 0, "hook_called": 0, "host_wrote": 0, "host_outside_or_surface": 0,
              "cordon_allowed": 0, "holes": 0}
    corpus = []
    t0 = time.time()
    for i, v in enumerate(variants):
        counts["variants"] += 1
        wrote, bad, allowed, said, calls, o = run(cordon, mock, host, v, i)
        counts["hook_called"] += bool(calls)
        counts["host_wrote"] += bool(wrote)
        counts["host_outside_or_surface"] += bool(bad)
        counts["cordon_allowed"] += allowed
        if os.environ.get("FUZZ_VERBOSE"):
            print(i, json.dumps(v, ensure_ascii=True), wrote, calls, allowed, said[:120], flush=True)
        if bad:  # the test's form: the calls themselves, BASE and the marker left to fill in
            corpus.append({"host": host, "variant": v, "calls": call(v, "BASE", "FUZZMARK")})
        if bad and allowed:
            counts["holes"] += 1
            print("HOLE", json.dumps(v, ensure_ascii=True), bad, said[:200], flush=True)
    counts["seconds"] = round(time.time() - t0)
    print(json.dumps(counts))
    if opt("--corpus"):
        json.dump(corpus, open(opt("--corpus"), "w"), indent=0, ensure_ascii=True)
    sys.exit(1 if counts["holes"] else 0)


main()
