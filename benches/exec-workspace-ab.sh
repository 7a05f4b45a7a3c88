#!/usr/bin/env bash
# `cordon exec -- /bin/true` A/B in a workspace the size of a real project: the after-run
# scan's two snapshots walk every directory of the writable root, which an empty workspace
# (benches/exec-ab.sh) does not show. Interleaved run by run (A, B, A, B, …); prints the
# medians and each build's user+system CPU time per run (getrusage of the children: far less
# sensitive to the machine's load than wall time), and the load average.
#
#   benches/exec-workspace-ab.sh OLD_CORDON NEW_CORDON          # 2,000 directories, 50 rounds
#   DIRS=5000 FILES=8 RUNS=30 BACKEND=bwrap benches/exec-workspace-ab.sh A B
#
# The workspace: DIRS directories (20 per level, nested), FILES files in each, a `.git`
# directory at the top (as `git init` leaves it). The embedded default policy (root ".").
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_CORDON NEW_CORDON" >&2; exit 2; }
ws=$(mktemp -d "${TMPDIR:-/tmp}/cordon-ws-ab.XXXXXX")
export XDG_STATE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cordon-ws-ab-state.XXXXXX")
trap 'rm -rf "$ws" "$XDG_STATE_HOME"' EXIT
python3 - "$ws" "${DIRS:-2000}" "${FILES:-8}" <<'PY'
import os, sys
root, dirs, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(os.path.join(root, ".git", "objects"))
os.makedirs(os.path.join(root, ".git", "refs"))
open(os.path.join(root, ".git", "HEAD"), "w").write("ref: refs/heads/main\n")
open(os.path.join(root, ".git", "config"), "w").write("[core]\n")
made = [root]
i = 0
while len(made) <= dirs:
    parent = made[i // 20]
    d = os.path.join(parent, f"d{i}")
    os.mkdir(d)
    for f in range(files):
        open(os.path.join(d, f"f{f}.rs"), "w").close()
    made.append(d)
    i += 1
PY
cd "$ws"
python3 - "$1" "$2" "${RUNS:-50}" "${BACKEND:-landlock}" <<'PY'
import os, resource, statistics, subprocess, sys, time
old, new, runs, backend = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cmds = {
    "old": [old, "exec", "--backend", backend, "--", "/bin/true"],
    "new": [new, "exec", "--backend", backend, "--", "/bin/true"],
}
t = {k: [] for k in cmds}
cpu = {k: 0.0 for k in cmds}
def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime
# Each build its own state directory: two builds that keep the scan's listings (beside the
# audit log) would otherwise each discard and rewrite the other's, every run.
state = os.environ["XDG_STATE_HOME"]
envs = {}
for k in cmds:
    os.makedirs(os.path.join(state, k), exist_ok=True)
    envs[k] = dict(os.environ, XDG_STATE_HOME=os.path.join(state, k))
for i in range(runs + 3):
    for k, c in cmds.items():
        c0 = children_cpu()
        s = time.perf_counter()
        r = subprocess.run(c, stdin=subprocess.DEVNULL, env=envs[k])
        d = time.perf_counter() - s
        if r.returncode != 0:
            raise SystemExit(f"{k}: exit {r.returncode}")
        if i >= 3:
            cpu[k] += children_cpu() - c0
            t[k].append(d * 1000)
for k in cmds:
    print(f"median {k} {backend:8} {statistics.median(t[k]):8.2f} ms   cpu {cpu[k] / runs * 1000:7.2f} ms/run")
print("load average:", open("/proc/loadavg").read().split()[:3])
PY
