#!/usr/bin/env bash
# What cordon adds to an allowed shell call of a real agent host: Claude Code (the version in
# scripts/test-deps.sh) driven by the project's mock model server (crates/cli/examples/
# hosts-mock.rs, 127.0.0.1 only), each run making one allowed Bash call.
#
#  1. The hook as the host runs it: cordon's hook is wrapped in a shim (bash) that takes the
#     time around `cordon hook claude` with $EPOCHREALTIME (no fork): RUNS real host runs, the
#     wall time the host waited for each decision (allowed, recorded — its sync left to exec's —, rewritten).
#     What the host sees is timed from the moment its input is there to be read (bash's
#     `read -t 0`, which reads nothing) to the first byte of the answer: cordon reads the
#     host's pipe itself, so its early decision (one whole JSON object read) shows. The shim's
#     whole time, its start to cordon's exit, is the second column.
#  2. The rewritten command: the exact line the hook gave the host (`cordon exec --from-hook
#     … -c='LINE'`) against LINE itself, both through `bash -c` as the host runs them,
#     interleaved by hyperfine: what the rewrite adds (sandbox set-up, audit record, exit).
#  Added cost of an allowed call = median 1 + (median 2 rewritten - median 2 bare).
#
#   benches/hosts-latency.sh                    # builds release; RUNS=20 host runs
#   RUNS=50 EXEC_RUNS=300 benches/hosts-latency.sh
#   CORDON=/path/to/cordon MOCK=/path/to/hosts-mock benches/hosts-latency.sh  # not rebuilt
#
# Needs: hyperfine (Debian package `hyperfine`), Claude Code from scripts/test-deps.sh (under
# $CORDON_TEST_DEPS, default /opt/cordon-test). Prints the load average with the numbers:
# on a loaded machine they are loaded-machine numbers. Goals (issue 23): hook <= 3 ms median
# at rest; hook + rewritten exec <= 10 ms median.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
claude=${CORDON_TEST_DEPS:-/opt/cordon-test}/npm/node_modules/.bin/claude
[ -x "$claude" ] || { echo "$claude is missing: run scripts/test-deps.sh" >&2; exit 1; }

if [ -z "${CORDON:-}" ] || [ -z "${MOCK:-}" ]; then
  cargo build --release -q -p cordon-cli --bin cordon --example hosts-mock
fi
cordon=${CORDON:-$PWD/target/release/cordon}
mock=${MOCK:-$PWD/target/release/examples/hosts-mock}
out=$PWD/target/bench
mkdir -p "$out"

ws=$(mktemp -d) home=$(mktemp -d)
export XDG_STATE_HOME=$home/.state XDG_CONFIG_HOME=$home/.config XDG_RUNTIME_DIR=$home/.runtime
mkdir -p "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
mockpid=
cleanup() { [ -n "$mockpid" ] && kill "$mockpid" 2>/dev/null; rm -rf "$ws" "$home"; }
trap cleanup EXIT

cat > "$ws/cordon.toml" <<'TOML'
version = 1

[sandbox.paths.workspace]
root = "."
mode = "rw"

[shell]
default = "allow"
TOML
line='echo cordon-bench >> ran.txt'

# The mock: one allowed Bash call per host run. Its stdin is a pipe this script holds open.
coproc MOCKP { "$mock" Bash "{\"command\":\"$line\",\"description\":\"bench\"}"; }
mockpid=$MOCKP_PID
read -r base <&"${MOCKP[0]}"

# cordon's hook, installed as the operator would, then wrapped in the timing shim.
(cd "$ws" && HOME=$home "$cordon" install claude --project --policy "$ws/cordon.toml" >/dev/null)
times=$ws/hook-times
# The shim's times ($EPOCHREALTIME, no fork): s its start, r the host's input there to be read
# (polled with `read -t 0`, which consumes nothing), f the first byte of cordon's answer (cordon
# reads the host's pipe itself and writes into a process substitution's pipe the shim reads),
# e cordon's exit; and cordon's CPU time (bash's `times`: the children's user+sys). The answer
# is passed on to the host whole, after e (the host reads it to the end anyway).
# The first run also records how the host starts the hook (its parent's command line), its
# input and its environment; it reads the input itself to keep a copy, so its times are left
# out (the 7th column says so).
cat > "$home/timed-hook.sh" <<SH
s=\$EPOCHREALTIME
copied=0
if [ ! -e '$ws/host-input.json' ]; then
  IFS= read -r -d '' input
  printf '%s' "\$input" > '$ws/host-input.json'
  exec 0<<<"\$input"
  copied=1
fi
until read -t 0; do :; done
r=\$EPOCHREALTIME
exec 3< <(exec '$cordon' hook claude --policy '$ws/cordon.toml')
IFS= read -r -N 1 -u 3 first
f=\$EPOCHREALTIME
IFS= read -r -d '' -u 3 rest
wait \$!
rc=\$?
e=\$EPOCHREALTIME
printf '%s' "\$first\$rest"
times > '$ws/cpu.'\$\$
{ read -r _; read -r cu cs; } < '$ws/cpu.'\$\$
echo "\$s \$r \$f \$e \$cu \$cs \$copied" >> '$times'
[ -e '$ws/host-cmdline' ] || tr '\\0' ' ' < /proc/\$PPID/cmdline > '$ws/host-cmdline'
[ -e '$ws/host-env' ] || env -0 > '$ws/host-env'
exit \$rc
SH
python3 - "$ws/.claude/settings.json" "$home/timed-hook.sh" <<'PY'
import json, sys
f, shim = sys.argv[1], sys.argv[2]
s = json.load(open(f))
h = s["hooks"]["PreToolUse"][0]["hooks"][0]
head, sep, tail = h["command"].partition(" || ")
assert " hook claude" in head and sep, h["command"]
h["command"] = f"bash {shim} || {tail}"
json.dump(s, open(f, "w"), indent=2)
PY

runs=${RUNS:-20}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  (cd "$ws" && env -i PATH="$PATH" HOME="$home" XDG_STATE_HOME="$XDG_STATE_HOME" \
      XDG_CONFIG_HOME="$XDG_CONFIG_HOME" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" \
      ANTHROPIC_BASE_URL="$base" ANTHROPIC_API_KEY=sk-cordon-bench \
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
      DISABLE_ERROR_REPORTING=1 \
      "$claude" -p "run the scripted tool call" --output-format json --max-turns 3 \
        --permission-mode acceptEdits </dev/null >"$ws/claude.out" 2>&1) \
    || { cat "$ws/claude.out" >&2; echo "claude failed (run $i)" >&2; exit 1; }
done
n=$(wc -l < "$times")
[ "$n" -ge "$runs" ] || { echo "the host ran the hook $n times in $runs runs" >&2; exit 1; }
ran=$(grep -c cordon-bench "$ws/ran.txt" 2>/dev/null || true)
[ "$ran" = "$runs" ] || { cat "$ws/claude.out" >&2; echo "the allowed call ran ${ran:-0} times in $runs host runs" >&2; exit 1; }

# The line the hook gave the host (same policy, same cwd: the same rewrite), from the very
# input the host gave the hook (kept by the shim's first run, with the host's environment).
cp "$ws/host-input.json" "$ws/input.json"
# The hook outside the host, with the host's own input and environment (minus the shim's `_`),
# so that what differs from the in-host number is the host's way of calling it, not the call.
cat > "$ws/replay.sh" <<SH
mapfile -d '' vars < '$ws/host-env'
exec env -i "\${vars[@]/#_=*/CORDON_BENCH=1}" '$cordon' hook claude --policy '$ws/cordon.toml' < '$ws/input.json'
SH
rewritten=$(cd "$ws" && "$cordon" hook claude --policy "$ws/cordon.toml" < "$ws/input.json" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["hookSpecificOutput"]["updatedInput"]["command"])')
printf '%s\n' "$rewritten" > "$ws/rewritten.sh"
printf '%s\n' "$line" > "$ws/bare.sh"
cd "$ws"
hyperfine -N --warmup 10 --runs "${EXEC_RUNS:-200}" --export-json "$out/hosts-latency-exec.json" \
  -n 'bare: bash -c LINE' "bash $ws/bare.sh" \
  -n 'rewritten: bash -c "cordon exec --from-hook ... -c LINE"' "bash $ws/rewritten.sh" \
  -n 'hook: cordon hook claude < input (outside the host, for its CPU time)' \
     "bash -c '$cordon hook claude --policy $ws/cordon.toml < $ws/input.json > /dev/null'" \
  -n 'replayed: the host'"'"'s input and environment, outside the host (incl. bash)' \
     "bash $ws/replay.sh" >/dev/null
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

echo "the host starts the hook as: $(cat "$ws/host-cmdline")"
python3 - "$times" "$out/hosts-latency-exec.json" <<'PY'
import json, re, statistics, sys
# s r f e cpu-user cpu-sys copied (see the shim); the run that copied the input is left out.
rows = [l.split() for l in open(sys.argv[1])]
rows = [r for r in rows if r[6] == "0"]
ms = lambda r, a, b: (float(r[b]) - float(r[a])) * 1000
hook = sorted(ms(r, 1, 2) for r in rows)
whole = statistics.median(ms(r, 0, 3) for r in rows)
wait = statistics.median(ms(r, 0, 1) for r in rows)
tail = statistics.median(ms(r, 2, 3) for r in rows)
def secs(t):  # bash `times`: 0m0.003s
    m = re.fullmatch(r"(\d+)m([\d.]+)s", t)
    return (int(m[1]) * 60 + float(m[2])) * 1000
# `times` is cumulative for the shim's children: cordon is its only one.
hook_cpu = statistics.median(secs(r[4]) + secs(r[5]) for r in rows)
r = {x["command"].split(":")[0]: x for x in json.load(open(sys.argv[2]))["results"]}
bare, rw = r["bare"], r["rewritten"]
exec_added = (rw["median"] - bare["median"]) * 1000
cpu = lambda x: (x["user"] + x["system"]) * 1000
h = statistics.median(hook)
print(f"hook as Claude Code ran it: median {h:.2f} ms over {len(hook)} calls (min {hook[0]:.2f}, max {hook[-1]:.2f}), from its input there to the answer's first byte")
print(f"  the shim's whole time: median {whole:.2f} ms (the host's input there after {wait:.2f} ms; cordon's exit {tail:.2f} ms after its answer); {hook_cpu:.1f} ms CPU user+sys (1 ms resolution)")
print(f"rewritten exec adds:        median {exec_added:.2f} ms (rewritten {rw['median']*1000:.2f} ms, bare {bare['median']*1000:.2f} ms; CPU user+sys {cpu(rw):.2f} vs {cpu(bare):.2f} ms)")
hk = r["hook"]
print(f"hook outside the host:      median {hk['median']*1000:.2f} ms, CPU user+sys {cpu(hk):.2f} ms (incl. bash -c)")
rp = r["replayed"]
print(f"  the host's input and env:   median {rp['median']*1000:.2f} ms, CPU user+sys {cpu(rp):.2f} ms (incl. bash; the same work as in the host)")
print(f"allowed shell call, added:  {h + exec_added:.2f} ms median (goal <= 10 ms; hook goal <= 3 ms)")
PY
