#!/usr/bin/env bash
# Request-to-response time of `run_command /bin/true` inside one long-lived `cordon mcp`, per
# backend, against the same server spawning it unconfined (`backend = "none"`,
# `require_os_sandbox = false`). The client is a minimal JSON-RPC client over the server's
# pipes (no SDK in the timed path): it times from writing a `tools/call` to reading its result.
#
#   benches/mcp-latency.sh              # builds release, prints a table
#   CALLS=2000 benches/mcp-latency.sh   # more calls per server
#   STATE=/dev/shm benches/mcp-latency.sh   # the audit log on tmpfs (its syncs ~free)
#   CORDON=/path/to/cordon benches/mcp-latency.sh   # another build (not rebuilt)
#
# Needs python3. Every call records its decision (fsynced) in a scratch audit log: the cost is
# part of what is measured. Results go to target/bench/mcp-latency.json.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "install python3" >&2; exit 1; }

[ -n "${CORDON:-}" ] || cargo build --release -q -p cordon-cli
out=$PWD/target/bench
mkdir -p "$out"
export CORDON=${CORDON:-$PWD/target/release/cordon} OUT=$out/mcp-latency.json CALLS=${CALLS:-1000}
export XDG_STATE_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"' EXIT

python3 - <<'PY'
import json, os, resource, statistics, subprocess, tempfile, time

cordon, calls = os.environ["CORDON"], int(os.environ["CALLS"])

def policy(dir, backend):
    extra = 'require_os_sandbox = false\n' if backend == "none" else ''
    text = f"""version = 1
[sandbox]
backend = "{backend}"
{extra}[sandbox.paths.ws]
root = "ws"
mode = "rw"
[[shell.rules]]
pattern = "/bin/true"
action = "allow"
[approval]
audit_log = "{tempfile.mkdtemp(dir=os.environ.get("STATE") or None)}/audit.jsonl"
# The same call many times in a row is what a benchmark does (the check would ask).
doom_loop = 0
"""
    path = os.path.join(dir, "cordon.toml")
    open(path, "w").write(text)
    return path

def measure(backend, method, params, check):
    # The policy and the audit log beside the writable root `ws`, not in it (every backend can
    # then keep them out of the command's reach).
    d = tempfile.mkdtemp()
    os.mkdir(os.path.join(d, "ws"))
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    open(os.path.join(d, "ws", "f.txt"), "w").write("hello\n")
    p = subprocess.Popen([cordon, "mcp", "--policy", policy(d, backend)], cwd=os.path.join(d, "ws"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def send(msg):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
    def recv():
        while True:
            msg = json.loads(p.stdout.readline())
            if "id" in msg:
                return msg
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    recv()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(1, calls + 51):
        t = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        r = recv()
        dt = time.perf_counter() - t
        if not check(r):
            raise SystemExit(f"{backend} {method}: unexpected answer: {r}")
        if i > 50:  # the first 50 warm up (and open the gate)
            times.append(dt * 1000)
    p.stdin.close()
    p.wait()
    # The server's CPU time and that of everything it started and reaped (the sandboxes), per
    # call, its start-up and the warm-up calls included: load-insensitive, unlike the wall time.
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / (calls + 50) * 1000
    times.sort()
    return {"median_ms": statistics.median(times), "p10_ms": times[len(times) // 10],
            "p90_ms": times[len(times) * 9 // 10], "mean_ms": statistics.mean(times),
            "cpu_ms_per_call": cpu}

ran = lambda r: (r.get("result", {}).get("structuredContent") or {}).get("exit_code") == 0
run = ("tools/call", {"name": "run_command", "arguments": {"command": "/bin/true"}}, ran)
rows = {
    # The protocol alone: answered by the server without the gate.
    "tools/list": measure("none", "tools/list", {}, lambda r: "result" in r),
    # A decision and its audit record, no process: read_file of a 6-byte file.
    "read_file (none)": measure("none", "tools/call",
                                {"name": "read_file", "arguments": {"path": "ws/f.txt"}},
                                lambda r: r.get("result", {}).get("isError") is False),
    "run_command (none)": measure("none", *run),
    "run_command (landlock)": measure("landlock", *run),
    "run_command (bwrap)": measure("bwrap", *run),
}
json.dump(rows, open(os.environ["OUT"], "w"), indent=2)
base = rows["run_command (none)"]["median_ms"]
print(f"{'request':24} {'median':>9} {'p10':>9} {'p90':>9} {'median - none':>14} {'CPU/call':>9}")
for b, r in rows.items():
    print(f"{b:24} {r['median_ms']:8.3f}ms {r['p10_ms']:8.3f}ms {r['p90_ms']:8.3f}ms "
          f"{r['median_ms'] - base:+13.3f}ms {r['cpu_ms_per_call']:7.3f}ms")
print(f"load average: {os.getloadavg()}")
PY
