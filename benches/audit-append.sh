#!/bin/sh
# The audit log's costs (issue 25): one durable append, 100 parallel connection records with
# and without group commit. On the disk of DIR (default: a directory under $HOME's state dir,
# i.e. the real disk, not tmpfs). Prints the load average first: numbers on a loaded machine
# are not comparable.
set -eu
dir=${1:-${XDG_STATE_HOME:-$HOME/.local/state}/cordon-bench}
uptime
cargo run -q --release -p cordon-approval --example audit_bench -- "$dir"
