#!/usr/bin/env bash
# Formats-checks and lints bwrap's inner stage (crates/ossandbox/inner/main.rs). build.rs
# compiles it with plain rustc, so neither `cargo fmt` nor `cargo clippy` ever sees it; this
# runs rustfmt --check, then clippy on the command line build.rs uses, with warnings denied
# (the file itself denies undocumented unsafe blocks and unsafe_op_in_unsafe_fn). Run by
# .ci/run; needs rustfmt and clippy (`rustup component add rustfmt clippy`).
set -euo pipefail
cd "$(dirname "$0")/.."
src=crates/ossandbox/inner/main.rs
rustfmt --edition 2021 --check "$src"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
target=$(rustc -vV | sed -n 's/^host: //p')
clippy-driver --edition=2021 --crate-type=bin --crate-name=cordon_inner \
  -Copt-level=s -Cpanic=abort -Crelocation-model=static \
  -Clink-arg=-nostartfiles -Clink-arg=-nostdlib -Clink-arg=-static \
  --target "$target" -o "$out/cordon-inner" "$src" -D warnings
