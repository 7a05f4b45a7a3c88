#!/usr/bin/env bash
# Start-up cost of `cordon exec -- /bin/true` on each Linux backend, side by side in one
# hyperfine run with bare bubblewrap (a minimal sandbox, and the same mounts and namespaces
# cordon builds, taken from `cordon profile --format bwrap`) and an unconfined /bin/true.
#
#   benches/exec-startup.sh            # builds release, prints the table and the ratios
#   RUNS=1000 benches/exec-startup.sh  # more runs
#   BASE=/path/to/old/cordon benches/exec-startup.sh   # an A/B: the other build in the same run
#   STATE=/dev/shm benches/exec-startup.sh             # the audit log on tmpfs (its syncs ~free)
#   CORDON=/path/to/cordon benches/exec-startup.sh     # that build (not rebuilt)
#
# Needs: hyperfine and bubblewrap (Debian packages `hyperfine`, `bubblewrap`). Results go to
# target/bench/exec-startup.json; docs/benchmarks.md records them with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "install bubblewrap (apt-get install bubblewrap)" >&2; exit 1; }

[ -n "${CORDON:-}" ] || cargo build --release -q -p cordon-cli
out=$PWD/target/bench
mkdir -p "$out"
ws=$(mktemp -d)
# Every run records its decision (fsynced) in the default audit log: the cost is part of what is
# measured, but the records go to a scratch state directory outside the workspace, not yours.
export XDG_STATE_HOME=$(mktemp -d -p "${STATE:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$ws" "$XDG_STATE_HOME"' EXIT
cordon=${CORDON:-$PWD/target/release/cordon}
cd "$ws"   # the embedded default policy: this directory read-write

# The same view without cordon: the options `cordon profile --format bwrap` prints (cordon's
# inner stage, seccomp program and status pipe are what the comparison measures).
"$cordon" profile --format bwrap > "$out/bwrap-profile.sh"
CORDON_TMP=$(mktemp -d -p "$ws")
# As root the profile gives the sandbox device nodes of its own, made in $CORDON_TMP first.
eval "$(grep -E '^(mkdir -p|mknod) ' "$out/bwrap-profile.sh" || true)"
eval "$(sed -n '/^args=(/,/^)/p' "$out/bwrap-profile.sh")"
same="/usr/bin/bwrap ${args[*]} /bin/true"

runs=${RUNS:-500}
base=()
if [ -n "${BASE:-}" ]; then
  base=(-n 'base --backend landlock' "$BASE exec --backend landlock -- /bin/true"
        -n 'base --backend bwrap' "$BASE exec --backend bwrap -- /bin/true")
fi
hyperfine -N --warmup 50 --runs "$runs" --export-json "$out/exec-startup.json" \
  -n 'cordon --backend landlock' "$cordon exec --backend landlock -- /bin/true" \
  -n 'cordon --backend bwrap' "$cordon exec --backend bwrap -- /bin/true" \
  "${base[@]}" \
  -n 'bwrap (bare)' 'bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent --new-session /bin/true' \
  -n 'bwrap (same view)' "$same" \
  -n 'unconfined /bin/true' '/bin/true'

python3 - "$out/exec-startup.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
med = {k: v["median"] * 1000 for k, v in r.items()}
l, b, bare, same, t = (med[k] for k in ("cordon --backend landlock", "cordon --backend bwrap", "bwrap (bare)", "bwrap (same view)", "unconfined /bin/true"))
print()
for k, v in med.items():
    print(f"median {k:28} {v:7.3f} ms")
print(f"landlock / bare bwrap  = {l / bare:.2f}   (target <= 0.60)")
print(f"landlock - /bin/true   = {l - t:+.3f} ms (target <= +1.000)")
print(f"bwrap / bare bwrap     = {b / bare:.2f}   (target <= 1.30)")
print(f"bwrap / same-view bwrap = {b / same:.2f}")
if "base --backend landlock" in med:
    print(f"base landlock / bare bwrap = {med['base --backend landlock'] / bare:.2f}")
    print(f"base bwrap / bare bwrap    = {med['base --backend bwrap'] / bare:.2f}")
PY
