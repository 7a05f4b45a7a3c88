#!/usr/bin/env bash
# Type-checks (and lints) the workspace for macOS from a Linux machine: `cargo check` and
# `cargo clippy` for the Apple targets, so the cfg(target_os = "macos") code paths, the
# Seatbelt launcher among them, at least compile. Nothing is linked or run: macOS cannot be
# executed here.
#
#   scripts/check-macos.sh            # x86_64-apple-darwin and aarch64-apple-darwin
#   scripts/check-macos.sh TARGET...  # only these
#
# Needs the targets' rust-std (`rustup target add x86_64-apple-darwin aarch64-apple-darwin`);
# not part of .ci/run, whose network may not be able to fetch them.
#
# The C build scripts (tree-sitter, tree-sitter-bash) must still compile their parsers. There
# is no Apple SDK here, so a shim stands in for the C compiler: the host gcc, without the
# Apple-only flags. The objects it makes are for Linux and are never linked: `check` and
# `clippy` stop before linking, which is all this script asks of them.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-apple-darwin aarch64-apple-darwin)

installed=$(rustup target list --installed)
# A fixed place (under target/, ignored by git): the C build scripts rerun when the compiler's
# path changes.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$(pwd)/$target_dir" ;; esac
shim_dir="$target_dir/check-macos"
command -v gcc >/dev/null || { echo "check-macos: gcc is needed for the C build scripts" >&2; exit 1; }
mkdir -p "$shim_dir"
cat >"$shim_dir/cc" <<'SHIM'
#!/usr/bin/env bash
args=()
skip=0
for a in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case "$a" in
    -arch) skip=1 ;;
    -mmacosx-version-min=*|-mios-version-min=*) ;;
    *) args+=("$a") ;;
  esac
done
exec gcc "${args[@]}"
SHIM
chmod +x "$shim_dir/cc"

for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$installed"; then
    echo "check-macos: the $t standard library is not installed: rustup target add $t" >&2
    exit 1
  fi
  var=$(tr '-' '_' <<<"$t")
  echo "== $t: cargo check"
  env "CC_$var=$shim_dir/cc" "AR_$var=ar" \
    cargo check --workspace --all-targets --locked --target "$t"
  echo "== $t: cargo clippy"
  env "CC_$var=$shim_dir/cc" "AR_$var=ar" \
    cargo clippy --workspace --all-targets --locked --target "$t" -- -D warnings
done
echo "check-macos: ok (${targets[*]}): type-checked and linted, not linked or run"
