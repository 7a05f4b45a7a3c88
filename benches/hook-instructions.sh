#!/usr/bin/env bash
# `cordon hook claude` A/B in load-independent units: instructions executed in user space
# (valgrind's callgrind, the whole process: dynamic loader, start-up, decision, record) and the
# page faults and system calls of one call, for two cordon binaries on the same allowed Bash
# call, policy and disk as benches/audit-hook-ab.sh. On a shared machine the wall and CPU
# times of a 3 ms process move with the load; these counts do not (the page faults move a
# little with the page cache's state, the instructions by < 0.1 %).
#
#   benches/hook-instructions.sh OLD_CORDON NEW_CORDON
#
# Needs: valgrind, perf, strace. Prints, per binary: instructions (total, in ld.so, under
# clap), page faults (median of 21 runs), system calls.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
for t in valgrind callgrind_annotate perf strace; do
  command -v $t >/dev/null || { echo "install $t" >&2; exit 1; }
done
base=$(mktemp -d "${BENCH_DIR:-/var/tmp}/cordon-hook-ins.XXXXXX")
trap 'rm -rf "$base"' EXIT
mkdir -p "$base/ws" "$base/old" "$base/new" "$base/run" "$base/cfg"
cp crates/cli/tests/hooks/policy.toml "$base/ws/cordon.toml"
printf '{"session_id":"s","transcript_path":"/t","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --quiet 2>&1 | tail -n 20"},"tool_use_id":"t"}' \
  "$base/ws" > "$base/ws/allow.json"
export XDG_RUNTIME_DIR=$base/run XDG_CONFIG_HOME=$base/cfg
cd "$base/ws"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the counts below do not depend on it)"
for b in old new; do
  bin=${!b}
  export XDG_STATE_HOME=$base/$b
  "$bin" hook claude --policy "$base/ws/cordon.toml" < allow.json | grep -q '"allow"' \
    || { echo "$b: the hook did not allow the benchmark's command" >&2; exit 1; }
  valgrind --tool=callgrind --callgrind-out-file="$base/cg.$b" \
    "$bin" hook claude --policy "$base/ws/cordon.toml" < allow.json > /dev/null 2> "$base/vg.$b"
  total=$(grep -o 'Collected : [0-9]*' "$base/vg.$b" | grep -o '[0-9]*$')
  ann=$(callgrind_annotate --inclusive=yes "$base/cg.$b" 2>/dev/null)
  ldso=$(awk '/dl-sysdep.c:_dl_sysdep_start/{gsub(",","",$1); print $1; exit}' <<<"$ann")
  clap=$(awk '/clap_builder::derive::CommandFactory>::command|Command::_do_parse|drop_in_place<clap_builder::builder::command::Command> /{gsub(",","",$1); s+=$1} END{print s+0}' <<<"$ann")
  faults=$(for i in $(seq 21); do
      perf stat -x, -e page-faults -o "$base/pf" "$bin" hook claude --policy "$base/ws/cordon.toml" < allow.json > /dev/null
      grep page-faults "$base/pf" | cut -d, -f1
    done | sort -n | sed -n 11p)
  strace -f -c -o "$base/st" "$bin" hook claude --policy "$base/ws/cordon.toml" < allow.json > /dev/null
  calls=$(awk '/^[ 0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ && !/total$/{n+=$4} END{print n}' "$base/st")
  printf '%s: %s instructions (ld.so start-up %s, clap %s); %s page faults; %s system calls\n' \
    "$b" "$total" "${ldso:-?}" "$clap" "$faults" "$calls"
done
