#!/usr/bin/env bash
# What the live watch of a wrapped server's roots costs (issue 21): `cordon mcp wrap` watches
# every directory under the writable roots with inotify and checks them 100-250 ms after any
# write, the server idle or not. Measured as the wrapper process's own CPU time (user+sys, from
# /proc/PID/stat: load-insensitive, unlike wall time), A (a build without the live watch,
# default /tmp/cordon-before) against B (this tree's), interleaved A/B/A/B in one run, with a
# server of the bench's own (Python) over a root of FILES files (default 10,000, in 100
# directories, in a git repository):
#   idle   the server answers `initialize` and does nothing for SECS seconds (should be ~0);
#   write  the server rewrites an ordinary file every 5 ms for SECS seconds (the worst case:
#          a check about every debounce).
#
#   benches/mcp-live.sh                               # builds release, prints the numbers
#   A=/tmp/cordon-before B=target/debug/cordon SECS=20 benches/mcp-live.sh   # not rebuilt
#
# Prints the load average first. Results go to target/bench/mcp-live.json.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${B:-}" ]; then
  cargo build --release -q -p cordon-cli
  B=target/release/cordon
fi
out=$PWD/target/bench
mkdir -p "$out"
export A=$(realpath "${A:-/tmp/cordon-before}") B=$(realpath "$B") OUT=$out/mcp-live.json \
  SECS=${SECS:-10} FILES=${FILES:-10000}
[ -x "$A" ] || { echo "A=$A is not an executable cordon" >&2; exit 1; }
export XDG_STATE_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"' EXIT
uptime

python3 - <<'PY'
import json, os, subprocess, tempfile, time

secs, files = float(os.environ["SECS"]), int(os.environ["FILES"])
tick = os.sysconf("SC_CLK_TCK")

SERVER = r'''
import json, os, sys, threading, time
root, mode, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
def write():
    end = time.monotonic() + secs
    i = 0
    while time.monotonic() < end:
        with open(os.path.join(root, "data.txt"), "w") as f:
            f.write(str(i))
        i += 1
        time.sleep(0.005)
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m and m.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {
            "protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"}}}), flush=True)
        if mode == "write":
            threading.Thread(target=write, daemon=True).start()
'''

def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / tick  # utime + stime

def session(cordon, d, mode):
    ws = f"{d}/ws"
    argv = [cordon, "mcp", "wrap", "--policy", f"{d}/cordon.toml", "--name", "bench", "--",
            "/usr/bin/python3", f"{d}/bin/server.py", ws, mode, str(secs)]
    p = subprocess.Popen(argv, cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}) + "\n").encode())
    p.stdin.flush()
    json.loads(p.stdout.readline())
    c0 = cpu_ms(p.pid)
    time.sleep(secs)
    c1 = cpu_ms(p.pid)
    p.stdin.close(); p.wait(timeout=60)
    return round((c1 - c0) / secs, 2)  # ms of CPU per second

res = {"secs": secs, "files": files, "load": os.getloadavg(), "a": os.environ["A"],
       "b": os.environ["B"]}
with tempfile.TemporaryDirectory() as d:
    os.makedirs(f"{d}/ws"); os.makedirs(f"{d}/bin")
    open(f"{d}/bin/server.py", "w").write(SERVER)
    subprocess.run(["git", "init", "-q", f"{d}/ws"], check=True)
    for i in range(files):
        sub = f"{d}/ws/d{i % 100}"
        os.makedirs(sub, exist_ok=True)
        open(f"{sub}/f{i}.txt", "w").close()
    with open(f"{d}/cordon.toml", "w") as f:
        f.write(f"""version = 1
[sandbox.paths.ws]
root = "ws"
mode = "rw"
[sandbox.paths.bin]
root = "bin"
mode = "ro"
[mcp]
default = "allow"
[approval]
audit_log = "{d}/audit.jsonl"
""")
    runs = {}
    for _ in range(2):
        for mode in ["idle", "write"]:
            for which in ["a", "b"]:
                runs.setdefault(f"{mode}_{which}", []).append(
                    session(os.environ[which.upper()], d, mode))
res["cpu_ms_per_s"] = runs
res["load_after"] = os.getloadavg()
print(json.dumps(res, indent=1))
open(os.environ["OUT"], "w").write(json.dumps(res, indent=1))
PY
