#!/usr/bin/env bash
# What `cordon mcp wrap` adds to a tool call (issue 27): request-to-response time of the
# everything server's `echo` tool, wrapped (an allow rule; the decision recorded and fdatasynced
# per call) against the same server unwrapped. The target: at most one fdatasync + 0.5 ms
# (median) more. The client is a minimal JSON-RPC client over the pipes (no SDK in the timed
# path); the server starts once per run, not per call.
#
#   benches/mcp-wrap-latency.sh                  # builds release, prints the medians
#   CALLS=2000 benches/mcp-wrap-latency.sh
#   STATE=/dev/shm benches/mcp-wrap-latency.sh   # the audit log on tmpfs (its syncs ~free)
#   CORDON=/path/to/cordon benches/mcp-wrap-latency.sh   # another build (not rebuilt)
#
# Needs python3 and scripts/test-deps.sh's servers. Prints the load average first: numbers on a
# loaded machine are not comparable. Results go to target/bench/mcp-wrap-latency.json.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=${CORDON_TEST_DEPS:-/opt/cordon-test}
server=$deps/npm/node_modules/.bin/mcp-server-everything
[ -x "$server" ] || { echo "$server missing: run scripts/test-deps.sh" >&2; exit 1; }
[ -n "${CORDON:-}" ] || cargo build --release -q -p cordon-cli
out=$PWD/target/bench
mkdir -p "$out"
export CORDON=${CORDON:-$PWD/target/release/cordon} OUT=$out/mcp-wrap-latency.json \
  CALLS=${CALLS:-1000} SERVER=$server DEPS=$deps
state=${STATE:-$(mktemp -d)}
export STATE=$state XDG_STATE_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"' EXIT
uptime

python3 - <<'PY'
import json, os, statistics, subprocess, tempfile, time

cordon, calls, server, deps = os.environ["CORDON"], int(os.environ["CALLS"]), os.environ["SERVER"], os.environ["DEPS"]

def session(argv, cwd):
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def send(m):
        p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
    def answer(id):
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == id and "method" not in m:
                return m
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    answer(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(1, calls + 1):
        t = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"message": f"m{i}"}}})
        r = answer(i)
        times.append((time.perf_counter() - t) * 1000)
        assert "error" not in r and not r["result"].get("isError"), r
    p.stdin.close(); p.wait(timeout=30)
    return statistics.median(times), sorted(times)[int(len(times) * 0.95)]

with tempfile.TemporaryDirectory() as d:
    os.mkdir(f"{d}/ws")
    with open(f"{d}/cordon.toml", "w") as f:
        f.write(f"""version = 1
[sandbox.paths.ws]
root = "ws"
mode = "rw"
[sandbox.paths.deps]
root = "{deps}"
mode = "ro"
exec = true
[mcp]
default = "deny"
[[mcp.rules]]
pattern = "bench/echo"
action = "allow"
[approval]
audit_log = "{os.environ['STATE']}/bench-audit.jsonl"
""")
    plain = session([server], f"{d}/ws")
    wrapped = session([cordon, "mcp", "wrap", "--policy", f"{d}/cordon.toml", "--name", "bench", "--", server], f"{d}/ws")
res = {"calls": calls, "unwrapped_ms": {"median": plain[0], "p95": plain[1]},
       "wrapped_ms": {"median": wrapped[0], "p95": wrapped[1]},
       "added_median_ms": wrapped[0] - plain[0], "load": os.getloadavg()}
print(f"unwrapped: median {plain[0]:.3f} ms, p95 {plain[1]:.3f} ms")
print(f"wrapped:   median {wrapped[0]:.3f} ms, p95 {wrapped[1]:.3f} ms")
print(f"added (median): {wrapped[0] - plain[0]:.3f} ms; load {os.getloadavg()[0]:.2f}")
json.dump(res, open(os.environ["OUT"], "w"), indent=1)
PY
