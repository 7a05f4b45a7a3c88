#!/usr/bin/env bash
# `cordon hook claude` from process start to its answer (the host waits this long before every
# tool call), for Claude Code PreToolUse input: an allowed Bash command (decided, recorded with
# an fsync in the audit log, rewritten), a denied one, a Read, and the embedded default policy.
# hyperfine runs each through `sh -c '… < input'` and subtracts the shell's own start-up.
#
#   benches/hook-startup.sh            # builds release, prints the table and the medians
#   RUNS=1000 benches/hook-startup.sh  # more runs
#
# Needs: hyperfine (Debian package `hyperfine`). Results go to target/bench/hook-startup.json;
# docs/benchmarks.md records them with the machine. Goal: <= 3 ms median for a shell command.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }

cargo build --release -q -p cordon-cli
out=$PWD/target/bench
mkdir -p "$out"
ws=$(mktemp -d) plain=$(mktemp -d)   # plain: no cordon.toml, the embedded default policy
# Decisions are recorded (fsynced) as always, into scratch state and runtime directories.
export XDG_STATE_HOME=$(mktemp -d) XDG_RUNTIME_DIR=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$ws" "$plain" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"' EXIT
cordon=$PWD/target/release/cordon
cp crates/cli/tests/hooks/policy.toml "$ws/cordon.toml"
echo hello > "$ws/a.txt"
input() { # TOOL TOOL_INPUT_JSON [CWD]
  printf '{"session_id":"s","transcript_path":"/t","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"%s","tool_input":%s,"tool_use_id":"t"}' "${3:-$ws}" "$1" "$2"
}
input Bash '{"command":"cargo test --quiet 2>&1 | tail -n 20","description":"Run tests"}' > "$ws/allow.json"
input Bash '{"command":"rm -rf build"}' > "$ws/deny.json"
input Read "{\"file_path\":\"$ws/a.txt\"}" > "$ws/read.json"
input Bash '{"command":"cargo test --quiet 2>&1 | tail -n 20"}' "$plain" > "$plain/allow.json"
"$cordon" hook claude --policy "$ws/cordon.toml" < "$ws/allow.json" | grep -q '"allow"' \
  || { echo "the hook did not allow the benchmark's command" >&2; exit 1; }
(cd "$plain" && "$cordon" hook claude < allow.json | grep -q '"allow"') \
  || { echo "the hook did not allow the benchmark's command under the default policy" >&2; exit 1; }

runs=${RUNS:-300}
cd "$ws"
hyperfine --warmup 20 --runs "$runs" --export-json "$out/hook-startup.json" \
  -n 'hook claude: Bash allowed (rewritten)' "$cordon hook claude --policy $ws/cordon.toml < $ws/allow.json" \
  -n 'hook claude: Bash denied' "$cordon hook claude --policy $ws/cordon.toml < $ws/deny.json" \
  -n 'hook claude: Read allowed' "$cordon hook claude --policy $ws/cordon.toml < $ws/read.json" \
  -n 'hook claude: Bash allowed, embedded default policy' "cd $plain && $cordon hook claude < $plain/allow.json" \
  -n 'baseline: /bin/true' "/bin/true < $ws/allow.json"

python3 - "$out/hook-startup.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print()
for x in r:
    cpu = (x["user"] + x["system"]) * 1000
    print(f"median {x['command']:52} {x['median'] * 1000:7.3f} ms  (min {x['min'] * 1000:.3f}; CPU user+sys {cpu:.2f} ms)")
allow = r[0]["median"] * 1000
print(f"Bash allowed: {allow:.3f} ms median (goal <= 3.000 ms): {'met' if allow <= 3 else 'NOT met'}")
PY
