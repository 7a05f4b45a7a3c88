#!/usr/bin/env bash
# The network proxy against direct connections on loopback: bulk throughput (a server sends
# 1 GiB; best of ROUNDS) and time to first byte (connect, one byte there and back; median of
# PINGS connections), through HTTP CONNECT and SOCKS5 with a Decide that allows at once, and
# through CONNECT with the real audit log (each decision and connection record fsynced); and,
# for comparison, through a reference relay that only splices (no proxy): the floor that the
# second TCP connection sets.
#
#   benches/proxy-throughput.sh                       # release build, prints a Markdown table
#   BULK_MIB=4096 ROUNDS=7 PINGS=2000 benches/proxy-throughput.sh
#   taskset -c 0 benches/proxy-throughput.sh          # one CPU: the rate ratio is the CPU ratio
#
# Goals (issue 15): bulk >= 80 % of direct, added time to first byte <= 1 ms median.
# docs/benchmarks.md records the results with the machine's state.
set -euo pipefail
cd "$(dirname "$0")/.."
# TMPDIR is where the audit-log case writes its log (and fsyncs).
cargo run --release -q -p cordon-netproxy --example throughput
