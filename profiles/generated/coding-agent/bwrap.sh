#!/bin/bash
# cordon: the bubblewrap sandbox `cordon exec --backend bwrap` builds, generated from the
# policy. Usage: this-script COMMAND [ARGS...]. Later mounts win over earlier ones.
set -euo pipefail
: "${CORDON_TMP:=$(mktemp -d)}"   # the run's private /tmp
# as root, the sandbox's own /dev (see the --dev-bind option below)
mkdir -p "$CORDON_TMP/.cordon-dev"
mknod -m 666 "$CORDON_TMP/.cordon-dev/null" c 1 3
mknod -m 666 "$CORDON_TMP/.cordon-dev/zero" c 1 5
mknod -m 666 "$CORDON_TMP/.cordon-dev/full" c 1 7
mknod -m 666 "$CORDON_TMP/.cordon-dev/random" c 1 8
mknod -m 666 "$CORDON_TMP/.cordon-dev/urandom" c 1 9
mknod -m 666 "$CORDON_TMP/.cordon-dev/tty" c 5 0
mkdir "$CORDON_TMP/.cordon-dev/pts"
mkdir "$CORDON_TMP/.cordon-dev/shm"
ln -s /proc/self/fd "$CORDON_TMP/.cordon-dev/fd"
ln -s /proc/self/fd/0 "$CORDON_TMP/.cordon-dev/stdin"
ln -s /proc/self/fd/1 "$CORDON_TMP/.cordon-dev/stdout"
ln -s /proc/self/fd/2 "$CORDON_TMP/.cordon-dev/stderr"
ln -s /proc/kcore "$CORDON_TMP/.cordon-dev/core"
ln -s pts/ptmx "$CORDON_TMP/.cordon-dev/ptmx"
# (cordon also mounts a devpts instance of the sandbox's own on pts, in a mount
# namespace of its own; without it there are no pseudo-terminals inside)
args=(
  # new mount, PID, IPC, UTS, cgroup and network namespaces (and user, when unprivileged)
  --unshare-all
  # the sandbox dies with cordon; a new session has no controlling terminal
  --die-with-parent --new-session
  # running as root: no capabilities inside
  --cap-drop ALL
  # a /proc for the new PID namespace
  --proc /proc
  # the kernel's writable /proc entries stay read-only (even for root)
  --ro-bind-try /proc/sys /proc/sys
  # the kernel's writable /proc entries stay read-only (even for root)
  --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger
  # the fresh /proc read-only: its kernel entries' modes are the host's
  --remount-ro /proc
  # running as root: the sandbox's own /dev (its nodes, links and devpts; sandbox.system_read devices), so chmod/chown/utime cannot reach the host's nodes
  --dev-bind "$CORDON_TMP"/.cordon-dev /dev
  # sandbox.system_read (configuration)
  --ro-bind /etc /etc
  # private /tmp: the run's own directory
  --bind "$CORDON_TMP" /tmp
  # sandbox.system_read (programs)
  --ro-bind /usr /usr
  # sandbox.paths.project (rw)
  --bind ${POLICY_DIR} ${POLICY_DIR}
  # sandbox.protected: the directory above a protected path, kept from being renamed away
  --bind ${POLICY_DIR}/.git ${POLICY_DIR}/.git
  # sandbox.system_read (configuration)
  --ro-bind /sys/devices/system/cpu /sys/devices/system/cpu
  # sandbox.protected: the directory above a protected path, kept from being renamed away
  --bind ${POLICY_DIR}/.git/objects ${POLICY_DIR}/.git/objects
  # sandbox.protected: the directory above a protected path, kept from being renamed away
  --bind ${POLICY_DIR}/.git/objects/info ${POLICY_DIR}/.git/objects/info
  # running as root: the sandbox's /dev as the run's directory shows it, covered by an empty read-only tmpfs
  --tmpfs /tmp/.cordon-dev --remount-ro /tmp/.cordon-dev
  # sandbox.system_read (a symlink on this host)
  --symlink usr/bin /bin
  # sandbox.system_read (a symlink on this host)
  --symlink usr/sbin /sbin
  # sandbox.system_read (a symlink on this host)
  --symlink usr/lib /lib
  # sandbox.system_read (a symlink on this host)
  --symlink usr/lib64 /lib64
  # approval.audit_log (its directory: the audit trail lies in a writable root); hidden from the sandbox: missing, so its first missing component is covered and cannot be created
  --ro-bind /dev/null ${POLICY_DIR}/.cordon
  # sandbox.git = "protect" (in sandbox.paths.project): remote definitions git still reads: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/branches ${POLICY_DIR}/.git/branches
  # sandbox.git = "protect" (in sandbox.paths.project): makes git read config, hooks and refs from another directory: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/commondir ${POLICY_DIR}/.git/commondir
  # sandbox.git = "protect" (in sandbox.paths.project): the repository's configuration (core.fsmonitor, core.hooksPath, aliases, filters and pagers run programs)
  --ro-bind ${POLICY_DIR}/.git/config ${POLICY_DIR}/.git/config
  # sandbox.git = "protect" (in sandbox.paths.project): per-worktree configuration, read with the repository's: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/config.worktree ${POLICY_DIR}/.git/config.worktree
  # sandbox.git = "protect" (in sandbox.paths.project): programs git runs on commit, checkout, merge, push
  --ro-bind ${POLICY_DIR}/.git/hooks ${POLICY_DIR}/.git/hooks
  # sandbox.git = "protect" (in sandbox.paths.project): attributes (which filters and diff drivers run), excludes, grafts, sparse-checkout
  --ro-bind ${POLICY_DIR}/.git/info ${POLICY_DIR}/.git/info
  # sandbox.git = "protect" (in sandbox.paths.project): submodules' git directories, each with its own config and hooks: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/modules ${POLICY_DIR}/.git/modules
  # sandbox.git = "protect" (in sandbox.paths.project): other object stores git reads objects from: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/objects/info/alternates ${POLICY_DIR}/.git/objects/info/alternates
  # sandbox.git = "protect" (in sandbox.paths.project): other object stores git fetches from: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/objects/info/http-alternates ${POLICY_DIR}/.git/objects/info/http-alternates
  # sandbox.git = "protect" (in sandbox.paths.project): remote definitions git still reads: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/remotes ${POLICY_DIR}/.git/remotes
  # sandbox.git = "protect" (in sandbox.paths.project): recorded conflict resolutions: the directory alone turns rerere on, and the operator's next `git merge` writes a recorded resolution into the conflicted file: missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/rr-cache ${POLICY_DIR}/.git/rr-cache
  # sandbox.git = "protect" (in sandbox.paths.project): linked worktrees' git directories (commondir, gitdir, config.worktree): missing, so its first missing component is covered and cannot be created
  --ro-bind ${POLICY_DIR}/.git/worktrees ${POLICY_DIR}/.git/worktrees
  # the policy's remembered rules, inside a writable root: missing, so its first missing component is covered and cannot be created
  --ro-bind /dev/null ${POLICY_DIR}/cordon.rules.toml
  # the policy file, inside a writable root
  --ro-bind ${POLICY_DIR}/cordon.toml ${POLICY_DIR}/cordon.toml
  # the current directory
  --chdir ${POLICY_DIR}
)
# cordon runs the command through its inner stage, a static program in a sealed memfd that
# applies Landlock inside (the `landlock` format) and then execs the command:
#   /proc/self/fd/N RULESET_FD COUNT [PATH DIR_RIGHTS FILE_RIGHTS]... -- COMMAND...
# and passes its own plumbing:
#   --add-seccomp-fd 10   (cordon's seccomp filter (cordon profile --format seccomp))
exec /usr/bin/bwrap "${args[@]}" -- "$@"
