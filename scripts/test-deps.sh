#!/usr/bin/env bash
# Installs the third-party programs the test suite drives for real — agent hosts and MCP
# servers from npm, MCP servers and clients from PyPI — at pinned versions, under one prefix:
#
#   scripts/test-deps.sh                 # into /opt/cordon-test (CORDON_TEST_DEPS to change)
#
# Tests find them under $CORDON_TEST_DEPS (default /opt/cordon-test): npm packages in
# $CORDON_TEST_DEPS/npm/node_modules/.bin, Python ones in $CORDON_TEST_DEPS/venv/bin. A test
# whose program is missing fails and names this script; nothing is skipped. `.ci/run` calls it.
# Each part below belongs to the issue that added it; keep versions pinned.
set -euo pipefail
prefix=${CORDON_TEST_DEPS:-/opt/cordon-test}
# A download that fails once (a mirror's or a registry's hiccup) is tried again, twice, after a
# pause: CI runs this on a fresh machine and has one try.
retry() {
  local n
  for n in 1 2 3; do
    "$@" && return 0
    [ "$n" = 3 ] || { echo "test-deps: failed (try $n of 3), again in $((n * 15)) s: $*" >&2; sleep $((n * 15)); }
  done
  echo "test-deps: failed 3 times: $*" >&2
  return 1
}
mkdir -p "$prefix/npm"

command -v node >/dev/null && command -v npm >/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
}
# The venv is built on the distribution's python (/usr/bin/python3), not a per-user one such as
# pyenv's under /root: the tests run its programs as an unprivileged user too.
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv
}
if ! grep -qx 'home = /usr/bin' "$prefix/venv/pyvenv.cfg" 2>/dev/null; then
  rm -rf "$prefix/venv"
  /usr/bin/python3 -m venv "$prefix/venv"
fi

npm_packages=(
  # credentials (issue 24): node 20's fetch through an HTTPS_PROXY (EnvHttpProxyAgent)
  undici@6.21.3
  # agent hosts (issue 23). Claude Code 2.1.197 is the newest release whose engines field
  # accepts node 20 (later ones require node >= 22).
  @anthropic-ai/claude-code@2.1.197
  @openai/codex@0.171.0
  @google/gemini-cli@0.61.0
  # more agent hosts (issue 23, item 4): Copilot CLI and opencode ship a native binary per
  # platform in an optional dependency (node 20 only runs the loader)
  @github/copilot@1.0.102
  opencode-ai@1.18.33
  # MCP servers and clients (issue 27)
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/server-everything@2026.8.31
  # the official TypeScript SDK's client, driving the wrapper (crates/cli/tests/mcp_sdk/)
  @modelcontextprotocol/sdk@1.32.2
  # redteam (issue 21, round 10): pnpm runs a word that is none of its commands as a program
  # (crates/tools/tests/bypass.rs checks it with the real one)
  pnpm@10.34.9
  # shell analysis (issue 21, round 12): mise writes the operator's global configuration
  # (crates/tools/tests/bypass.rs checks it with the real one; the platform package itself,
  # as the `mise` package only fetches it from a preinstall script)
  @jdxcode/mise-linux-x64@2026.9.15
)
pip_packages=(
  # MCP servers and clients (issue 27)
  mcp-server-fetch==2026.10.24
  # runfast (issues 25/26): a FUSE file system whose fsync is slow or fails, for the
  # audit-sync overlap of `cordon exec` (crates/cli/tests/exec_sync.rs; libfuse3 from the
  # distribution)
  mfusepy==3.1.1
  # redteam (issue 21, round 4): pre-commit runs the hooks `.pre-commit-config.yaml` names at
  # the operator's next `git commit` (crates/tools/tests/bypass.rs checks it)
  pre-commit==4.7.0
)
# runfast: mfusepy loads the distribution's libfuse3 (crates/cli/tests/exec_sync.rs).
ldconfig -p | grep -q 'libfuse3\.so\.3 ' || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libfuse3-3
}
# redteam (issue 21): fd runs commands (`fd -x CMD`); the shell analysis sees through it and
# crates/tools/tests/bypass.rs checks that the real fd (Debian's `fdfind`) runs them.
command -v fdfind >/dev/null || command -v fd >/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fd-find
}
# redteam (issue 21): `go test -exec PROG` runs PROG; crates/tools/tests/bypass.rs checks it with
# the real go (Debian's golang-go).
command -v go >/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go
}
# redteam: `zip -TT CMD` runs CMD (crates/tools/tests/options.rs checks it with the real zip).
command -v zip >/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zip
}
# redteam (issue 21, round 4): `unzip` extracts names the line does not show
# (crates/tools/tests/bypass.rs extracts a planted hook with the real one).
command -v unzip >/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip
}
# redteam (issue 21, round 7): crates/tools/tests/bypass.rs runs the real lz4 (its output
# operand), ssh (`-o ProxyCommand=`), gpg (`--agent-program`), wget (`--use-askpass`),
# objcopy (binutils) and tmux (`new -d CMD`) to show what each writes or runs.
# vim: crates/tools/tests/files.rs runs the real vim to show 'exrc' reading a project `.vimrc`.
# Round 8: the same test file runs capsh (`--`), gdb (`-ex 'shell …'`), hyperfine, expect
# (`exec`), GNU parallel and `direnv exec` to show each runs the command it is given (perf
# where installed).
# Round 9: tests/tests/escape.rs runs the real `inotifywait -r` in the workspace (a watcher
# the Landlock backend's inotify supervisor must keep working).
# Round 10: crates/tools/tests/bypass.rs runs the real tcpdump (`-z CMD` on a rotated capture).
# Round 10: tests/tests/scan_escape.rs runs the real less (the `LESSOPEN` a `~/.lesskey`
# sets) and wget (`~/.wgetrc`'s `use_askpass`); it and crates/tools/tests/files.rs run the real
# Perl debugger (`.perldb`; perl5db.pl comes with Debian's perl, not perl-base), below.
# Round 11: the same test file runs php (`-r`, its input), lua (`-e`, its input) and m4
# (`syscmd` in its input or a file), interpreters no table had, 7-Zip (a file named `-sdel`
# that a glob makes its switch) and zstd (`--output-dir-flat`, `--trace` outside the roots).
for need in lz4:lz4 ssh:openssh-client gpg:gnupg wget:wget objcopy:binutils tmux:tmux vim:vim \
  capsh:libcap2-bin gdb:gdb hyperfine:hyperfine expect:expect parallel:parallel direnv:direnv \
  strace:strace fakeroot:fakeroot inotifywait:inotify-tools tcpdump:tcpdump less:less \
  php:php-cli lua5.4:lua5.4 m4:m4 7zz:7zip zstd:zstd cmake:cmake \
  rpm:rpm; do
  command -v "${need%%:*}" >/dev/null || {
    retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need#*:}"
  }
done
# Round 12: the same test file runs cmake (`-E env`/`time`/`chdir` run a command, `-E copy`
# writes anywhere) and rpm (`--eval '%(…)'`, `--pipe`), in the loop above.
# Round 12: crates/tools/tests/bypass.rs runs the real gsettings (its keyfile backend) to show
# `gsettings set` writing the operator's desktop settings, a command the desktop runs.
[ -f /usr/share/glib-2.0/schemas/org.gnome.desktop.default-applications.gschema.xml ] \
  && command -v gsettings >/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libglib2.0-bin gsettings-desktop-schemas
}
perl -e 'exit(!grep { -f "$_/perl5db.pl" } @INC)' 2>/dev/null || {
  retry apt-get update -qq && retry env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq perl
}
# redteam (issue 21, round 4): rustup's proxies (`cargo`, `rustc`) run the toolchain a
# `rust-toolchain.toml` names by path; the test drives a copy of this machine's rustup (under
# the prefix, so that an unprivileged user can run it too; /root is not theirs).
if [ ! -x "$prefix/rustup/rustup" ]; then
  rustup_bin=$(command -v rustup || echo "${CARGO_HOME:-$HOME/.cargo}/bin/rustup")
  [ -x "$rustup_bin" ] || { echo "test-deps: no rustup found to copy for the rust-toolchain test" >&2; exit 1; }
  mkdir -p "$prefix/rustup"
  cp "$(readlink -f "$rustup_bin")" "$prefix/rustup/rustup"
  chmod 755 "$prefix/rustup" "$prefix/rustup/rustup"
fi
if [ ${#npm_packages[@]} -gt 0 ]; then
  retry npm install --prefix "$prefix/npm" --no-audit --no-fund --loglevel=error "${npm_packages[@]}"
fi
if [ ${#pip_packages[@]} -gt 0 ]; then
  retry "$prefix/venv/bin/pip" install -q "${pip_packages[@]}"
fi
echo "test programs installed under $prefix"
