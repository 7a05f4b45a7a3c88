#!/usr/bin/env bash
# TLS termination (issue 24) against an end-to-end CONNECT tunnel through the same proxy, on
# loopback, to the same HTTPS server: time to the response's first byte on a new tunnel
# (connect, CONNECT, TLS, GET) and on an open one, and bulk throughput (best of ROUNDS).
#
#   benches/proxy-terminate.sh                      # release build, prints a Markdown table
#   BULK_MIB=1024 ROUNDS=5 PINGS=500 benches/proxy-terminate.sh
#
# Goals (issue 24): added first byte <= 2 ms over CONNECT; bulk >= 70 % of CONNECT.
# docs/benchmarks.md records the results with the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
cargo run --release -q -p cordon-netproxy --example terminate
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
