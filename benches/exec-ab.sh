#!/usr/bin/env bash
# An A/B of `cordon exec -- /bin/true` start-up between two builds, interleaved run by run
# (A, B, bare bwrap, A, B, …) so that a machine whose load drifts (shared CI, other builds)
# weighs on both alike; hyperfine runs each command's runs in one block, which a drifting load
# skews. Prints the medians and the ratios to bare bubblewrap, and each command's user+system
# CPU time per run (getrusage of the children: far less sensitive to the load than wall time).
#
#   benches/exec-ab.sh OLD_CORDON NEW_CORDON            # 300 rounds
#   RUNS=1000 STATE=/dev/shm benches/exec-ab.sh A B     # the audit log on tmpfs
#
# Needs python3 and bubblewrap. The embedded default policy in an empty directory, as
# benches/exec-startup.sh.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_CORDON NEW_CORDON" >&2; exit 2; }
ws=$(mktemp -d)
export XDG_STATE_HOME=$(mktemp -d -p "${STATE:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$ws" "$XDG_STATE_HOME"' EXIT
cd "$ws"
python3 - "$1" "$2" "${RUNS:-300}" <<'PY'
import os, resource, statistics, subprocess, sys, time
old, new, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmds = {
    "old landlock": [old, "exec", "--backend", "landlock", "--", "/bin/true"],
    "new landlock": [new, "exec", "--backend", "landlock", "--", "/bin/true"],
    "old bwrap": [old, "exec", "--backend", "bwrap", "--", "/bin/true"],
    "new bwrap": [new, "exec", "--backend", "bwrap", "--", "/bin/true"],
    "bare bwrap": ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                   "--unshare-all", "--die-with-parent", "--new-session", "/bin/true"],
    "/bin/true": ["/bin/true"],
}
t = {k: [] for k in cmds}
cpu = {k: 0.0 for k in cmds}
def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime
for i in range(runs + 20):
    for k, c in cmds.items():
        c0 = children_cpu()
        s = time.perf_counter()
        r = subprocess.run(c, stdin=subprocess.DEVNULL)
        d = time.perf_counter() - s
        if i >= 20:
            cpu[k] += children_cpu() - c0
        if r.returncode != 0:
            raise SystemExit(f"{k}: exit {r.returncode}")
        if i >= 20:
            t[k].append(d * 1000)
med = {k: statistics.median(v) for k, v in t.items()}
for k, v in med.items():
    print(f"median {k:14} {v:8.3f} ms   cpu {cpu[k] / runs * 1000:7.3f} ms/run")
bare = med["bare bwrap"]
for b in ("landlock", "bwrap"):
    print(f"{b:8} old/bare {med['old ' + b] / bare:.2f}  new/bare {med['new ' + b] / bare:.2f}  "
          f"new-old {med['new ' + b] - med['old ' + b]:+.3f} ms")
print("load average:", open("/proc/loadavg").read().split()[:3])
PY
