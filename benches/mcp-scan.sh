#!/usr/bin/env bash
# What the scan after each wrapped tool call costs (issue 21): `cordon mcp wrap` checks the
# writable roots for plants after every allowed `tools/call`, before the answer goes back.
# Measured as the wrapper process's own CPU time (user+sys, from /proc/PID/stat: load-
# insensitive, unlike wall time) per call, for the everything server's `echo` tool, with the
# root empty against the root holding FILES files (default 10,000, in 100 directories, in a git
# repository), interleaved A/B/A/B in one run. The difference is the scan's cost per call on
# that root; the median latency is printed too (a loaded-machine number).
#
#   benches/mcp-scan.sh                        # builds release, prints the numbers
#   CALLS=500 FILES=100000 benches/mcp-scan.sh
#   CORDON=target/debug/cordon benches/mcp-scan.sh   # another build (not rebuilt)
#
# Needs python3 and scripts/test-deps.sh's servers. Prints the load average first.
# Results go to target/bench/mcp-scan.json.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=${CORDON_TEST_DEPS:-/opt/cordon-test}
server=$deps/npm/node_modules/.bin/mcp-server-everything
[ -x "$server" ] || { echo "$server missing: run scripts/test-deps.sh" >&2; exit 1; }
[ -n "${CORDON:-}" ] || cargo build --release -q -p cordon-cli
out=$PWD/target/bench
mkdir -p "$out"
export CORDON=$(realpath "${CORDON:-$PWD/target/release/cordon}") OUT=$out/mcp-scan.json \
  CALLS=${CALLS:-300} FILES=${FILES:-10000} SERVER=$server DEPS=$deps
export XDG_STATE_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"' EXIT
uptime

python3 - <<'PY'
import json, os, statistics, subprocess, tempfile, time

cordon, calls, files = os.environ["CORDON"], int(os.environ["CALLS"]), int(os.environ["FILES"])
server, deps = os.environ["SERVER"], os.environ["DEPS"]
tick = os.sysconf("SC_CLK_TCK")

def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / tick  # utime + stime

def session(d, ws):
    argv = [cordon, "mcp", "wrap", "--policy", f"{d}/cordon.toml", "--name", "bench", "--", server]
    p = subprocess.Popen(argv, cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
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
    # Warm up (and let the listings settle: a directory changed within 2 s is listed again).
    for i in range(1, 11):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"message": "w"}}})
        answer(i)
    time.sleep(2.5)
    c0, times = cpu_ms(p.pid), []
    for i in range(100, 100 + calls):
        t = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"message": f"m{i}"}}})
        r = answer(i)
        times.append((time.perf_counter() - t) * 1000)
        assert "error" not in r and not r["result"].get("isError"), r
    c1 = cpu_ms(p.pid)
    p.stdin.close(); p.wait(timeout=60)
    return (c1 - c0) / calls, statistics.median(times)

res = {"calls": calls, "files": files, "load": os.getloadavg()}
with tempfile.TemporaryDirectory() as d:
    for ws in ["empty", "full"]:
        os.mkdir(f"{d}/{ws}")
        subprocess.run(["git", "init", "-q", f"{d}/{ws}"], check=True)
    for i in range(files):
        sub = f"{d}/full/d{i % 100}"
        os.makedirs(sub, exist_ok=True)
        open(f"{sub}/f{i}.txt", "w").close()
    with open(f"{d}/cordon.toml", "w") as f:
        f.write(f"""version = 1
[sandbox.paths.empty]
root = "empty"
mode = "rw"
[sandbox.paths.full]
root = "full"
mode = "rw"
[sandbox.paths.deps]
root = "{deps}"
mode = "ro"
exec = true
[mcp]
default = "allow"
[approval]
audit_log = "{d}/audit.jsonl"
""")
    # Both roots are in one policy: the empty case runs with `full` removed from it.
    text = open(f"{d}/cordon.toml").read()
    runs = {"empty": [], "full": []}
    for _ in range(2):
        for case in ["empty", "full"]:
            other = "full" if case == "empty" else "empty"
            with open(f"{d}/cordon.toml", "w") as f:
                f.write(text.replace(f'[sandbox.paths.{other}]\nroot = "{other}"\nmode = "rw"\n', ""))
            runs[case].append(session(d, f"{d}/{case}"))
res["cpu_ms_per_call"] = {k: [round(c, 3) for c, _ in v] for k, v in runs.items()}
res["median_ms"] = {k: [round(m, 3) for _, m in v] for k, v in runs.items()}
res["load_after"] = os.getloadavg()
print(json.dumps(res, indent=1))
open(os.environ["OUT"], "w").write(json.dumps(res, indent=1))
PY
