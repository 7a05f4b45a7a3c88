#!/usr/bin/env bash
# Time to first byte of a connection through cordon's network proxy with the gate's real audit
# log (the decision and the open record made durable before the client hears of the
# connection), with the log on the disk and on a tmpfs, against a direct connection and one
# fdatasync on the same file system, interleaved (crates/gate/examples/proxy_first_byte.rs).
#
#   benches/proxy-first-byte.sh                 # release build, 300 connections per place
#   CONNECTIONS=1000 DISK_DIR=/var/tmp TMPFS_DIR=/dev/shm benches/proxy-first-byte.sh
#
# Goal (issue 25): added first byte <= one fdatasync + 0.5 ms. docs/benchmarks.md records
# the results with the load average.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${CONNECTIONS:-300}
cargo build --release -q -p cordon-gate --example proxy_first_byte
bin=target/release/examples/proxy_first_byte
uptime
"$bin" "${DISK_DIR:-/var/tmp}" "$n"
tmpfs=${TMPFS_DIR:-/dev/shm}
if [ "$(stat -f -c %T "$tmpfs")" = tmpfs ]; then
  "$bin" "$tmpfs" "$n"
else
  echo "$tmpfs is not a tmpfs: set TMPFS_DIR" >&2
fi
uptime
