#!/usr/bin/env bash
# Start-up cost of `cordon exec -- /bin/true` against bare bubblewrap doing the same job and an
# unconfined /bin/true, measured side by side in one hyperfine run.
#
#   benches/exec-startup.sh            # builds release, prints the table, writes target/bench/
#
# Needs: hyperfine and bubblewrap (Debian packages `hyperfine`, `bubblewrap`).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "install bubblewrap (apt-get install bubblewrap)" >&2; exit 1; }

cargo build --release -q -p cordon-cli
out=target/bench
mkdir -p "$out"
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
cordon=$PWD/target/release/cordon
cd "$ws"   # the embedded default policy: this directory read-write

runs=${RUNS:-500}
hyperfine -N --warmup 50 --runs "$runs" --export-json "$OLDPWD/$out/exec-startup.json" \
  -n 'cordon exec (landlock+seccomp)' "$cordon exec -- /bin/true" \
  -n 'bwrap (bare)' 'bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent --new-session /bin/true' \
  -n 'unconfined /bin/true' '/bin/true'

python3 - "$OLDPWD/$out/exec-startup.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
c, b, t = (r[k]["median"] * 1000 for k in ("cordon exec (landlock+seccomp)", "bwrap (bare)", "unconfined /bin/true"))
print(f"\nmedians: cordon {c:.3f} ms, bwrap {b:.3f} ms, /bin/true {t:.3f} ms")
print(f"cordon / bwrap = {c / b:.2f} (target <= 0.50); cordon - /bin/true = {c - t:+.3f} ms (target <= +1.000)")
PY
