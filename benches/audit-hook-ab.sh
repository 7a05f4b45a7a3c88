#!/usr/bin/env bash
# `cordon hook claude` A/B for the audit log's one-sync append (issue 25): two cordon binaries
# in ONE hyperfine run (interleaved warm-ups, same disk, same load), each deciding an allowed
# Bash call and recording it durably in its own log on the real disk.
#
#   benches/audit-hook-ab.sh OLD_CORDON NEW_CORDON [RUNS]
#
# Prints `uptime` first: compare numbers only from one sitting.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 runs=${3:-300}
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
# The logs on the real disk (not tmpfs: the point is the syncs), one state dir per binary.
base=$(mktemp -d "${BENCH_DIR:-/var/tmp}/cordon-hook-ab.XXXXXX")
trap 'rm -rf "$base"' EXIT
mkdir -p "$base/ws" "$base/old" "$base/new" "$base/run" "$base/cfg"
cp crates/cli/tests/hooks/policy.toml "$base/ws/cordon.toml"
printf '{"session_id":"s","transcript_path":"/t","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --quiet 2>&1 | tail -n 20"},"tool_use_id":"t"}' \
  "$base/ws" > "$base/ws/allow.json"
export XDG_RUNTIME_DIR=$base/run XDG_CONFIG_HOME=$base/cfg
for b in old new; do
  bin=${!b}
  XDG_STATE_HOME=$base/$b "$bin" hook claude --policy "$base/ws/cordon.toml" < "$base/ws/allow.json" | grep -q '"allow"' \
    || { echo "$b: the hook did not allow the benchmark's command" >&2; exit 1; }
done
uptime
# hyperfine runs each through the shell (for the `<`) and subtracts the shell's start-up.
hyperfine --warmup 20 --runs "$runs" --export-json "$base/ab.json" \
  -n "old: hook claude, Bash allowed" "XDG_STATE_HOME=$base/old $old hook claude --policy $base/ws/cordon.toml < $base/ws/allow.json" \
  -n "new: hook claude, Bash allowed" "XDG_STATE_HOME=$base/new $new hook claude --policy $base/ws/cordon.toml < $base/ws/allow.json"
uptime
python3 - "$base/ab.json" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(f"median {x['command']:36} {x['median'] * 1000:7.3f} ms  (min {x['min'] * 1000:.3f}; user {x['user'] * 1000:.2f} sys {x['system'] * 1000:.2f} ms)")
PY
