#!/usr/bin/env bash
# `cordon hook copilot` and `cordon hook opencode` from process start to their answer, next to
# `cordon hook claude` on the same allowed Bash command in one interleaved hyperfine run (the
# three parse different JSON and share everything else); then the whole path of opencode's
# plugin — spawn `cordon hook opencode`, write the request, read and apply the answer — timed
# inside node (opencode runs the plugin in Bun; node is the closest runtime the tests have).
#
#   benches/hook-newhosts.sh            # builds release, prints the medians
#   RUNS=1000 benches/hook-newhosts.sh  # more runs
#
# Needs: hyperfine (Debian package `hyperfine`), node. Results: target/bench/hook-newhosts.json.
# Goal (issue 23): the hook <= 3 ms median at rest.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v node >/dev/null || { echo "install node (apt-get install nodejs)" >&2; exit 1; }

cargo build --release -q -p cordon-cli
out=$PWD/target/bench
mkdir -p "$out"
ws=$(mktemp -d)
export XDG_STATE_HOME=$(mktemp -d) XDG_RUNTIME_DIR=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)
trap 'rm -rf "$ws" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"' EXIT
cordon=$PWD/target/release/cordon
cp crates/cli/tests/hooks/policy.toml "$ws/cordon.toml"
line='cargo test --quiet 2>&1 | tail -n 20'
printf '{"session_id":"s","transcript_path":"/t","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s","description":"Run tests"},"tool_use_id":"t"}' "$ws" "$line" > "$ws/claude.json"
printf '{"sessionId":"s","timestamp":1,"cwd":"%s","toolName":"bash","toolArgs":{"command":"%s","description":"Run tests"}}' "$ws" "$line" > "$ws/copilot.json"
printf '{"event":"tool.execute.before","cwd":"%s","tool":"bash","sessionID":"s","callID":"c","args":{"command":"%s"}}' "$ws" "$line" > "$ws/opencode.json"
for h in claude copilot opencode; do
  "$cordon" hook "$h" --policy "$ws/cordon.toml" < "$ws/$h.json" | grep -q '"allow"' \
    || { echo "the $h hook did not allow the benchmark's command" >&2; exit 1; }
done

runs=${RUNS:-300}
cd "$ws"
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out/hook-newhosts.json" \
  --input "$ws/claude.json" -n 'hook claude: Bash allowed' "$cordon hook claude --policy $ws/cordon.toml" \
  --input "$ws/copilot.json" -n 'hook copilot: bash allowed' "$cordon hook copilot --policy $ws/cordon.toml" \
  --input "$ws/opencode.json" -n 'hook opencode: bash allowed' "$cordon hook opencode --policy $ws/cordon.toml" \
  2>/dev/null || hyperfine --warmup 20 --runs "$runs" --export-json "$out/hook-newhosts.json" \
  -n 'hook claude: Bash allowed' "$cordon hook claude --policy $ws/cordon.toml < $ws/claude.json" \
  -n 'hook copilot: bash allowed' "$cordon hook copilot --policy $ws/cordon.toml < $ws/copilot.json" \
  -n 'hook opencode: bash allowed' "$cordon hook opencode --policy $ws/cordon.toml < $ws/opencode.json"

# The plugin's whole path, as opencode calls it: the plugin file `cordon install opencode`
# writes, imported and called RUNS times.
mkdir -p "$ws/.opencode/plugin" && (cd "$ws" && "$cordon" install opencode --policy "$ws/cordon.toml" >/dev/null)
cat > "$ws/plugin-bench.mjs" <<'JS'
const [plugin, dir, runs] = process.argv.slice(2);
const { Cordon } = await import(plugin);
const hooks = await Cordon({ directory: dir });
const times = [];
for (let i = 0; i < Number(runs); i++) {
  const output = { args: { command: "cargo test --quiet 2>&1 | tail -n 20" } };
  const t = process.hrtime.bigint();
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: `c${i}` }, output);
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
  if (!output.args.command.includes(" exec --from-hook ")) throw new Error("not rewritten");
}
times.sort((a, b) => a - b);
const cpu = process.cpuUsage();
console.log(`opencode plugin (node), bash allowed: median ${times[times.length >> 1].toFixed(3)} ms, min ${times[0].toFixed(3)} ms over ${runs} calls (plugin process CPU user+sys ${((cpu.user + cpu.system) / 1000 / Number(runs)).toFixed(3)} ms per call)`);
JS
node "$ws/plugin-bench.mjs" "$ws/.opencode/plugin/cordon.js" "$ws" "$runs"

python3 - "$out/hook-newhosts.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
for x in r:
    cpu = (x["user"] + x["system"]) * 1000
    print(f"median {x['command'][:40]:40} {x['median'] * 1000:7.3f} ms  (min {x['min'] * 1000:.3f}; CPU user+sys {cpu:.2f} ms)")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
