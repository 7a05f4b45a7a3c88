#!/bin/sh
# Runs cordon's OCI seccomp profile under a real OCI runtime (crun) and checks that the
# calls it denies fail inside the container, against a control run without the profile.
#
#   sudo sh crates/ossandbox/tests/crun-seccomp.sh [PROFILE.json]
#
# PROFILE defaults to tests/golden/seccomp_x86_64_network_deny.json, which the test suite
# keeps byte-identical to `render::oci::render(&seccomp::rules(Network::Deny), X86_64)`.
# Needs root, x86_64, and the Debian packages crun, busybox-static, jq and gcc. Anything
# missing is a failure (exit 1), never a skip. Not part of `cargo test`: it needs root and
# a runtime, and it prints what it saw so the result can be recorded.
#
# The host's cgroup layout may be one crun refuses (hybrid v1/v2), so crun runs in a private
# mount namespace with a plain cgroup2 mount and --cgroup-manager=disabled; the host's
# mounts are not touched. crun runs with --debug because only then does it print
# "unknown seccomp syscall `X` ignored" for a name its libseccomp lacks (that call would not
# be denied); such a warning fails the check.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
profile=${1:-$here/golden/seccomp_x86_64_network_deny.json}

fail() { echo "crun-seccomp: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (crun needs it here)"
[ "$(uname -m)" = x86_64 ] || fail "the probe is written for x86_64"
for tool in crun busybox jq gcc unshare; do
    command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install crun busybox-static jq gcc)"
done
[ -r "$profile" ] || fail "no profile at $profile"
busybox=$(command -v busybox)
if ldd "$busybox" >/dev/null 2>&1; then fail "$busybox is not static (install busybox-static)"; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bundle/rootfs/bin" "$work/bundle/rootfs/tmp"
cp "$busybox" "$work/bundle/rootfs/bin/busybox"
ln -s busybox "$work/bundle/rootfs/bin/sh"

cat >"$work/probe.c" <<'EOF'
/* Each line: a call, then `ok`, `errno N (NAME)` or `killed by signal N`. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *what, long r) {
    if (r >= 0) printf("%-44s ok\n", what);
    else printf("%-44s errno %d (%s)\n", what, errno, strerrorname_np(errno));
    fflush(stdout);
}

/* Runs f in a child, so a kill (SIGSYS) is reported rather than ending the probe. */
static void in_child(const char *what, long (*f)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        long r = f();
        report(what, r);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        printf("%-44s killed by signal %d (%s)\n", what, WTERMSIG(status), sigabbrev_np(WTERMSIG(status)));
        fflush(stdout);
    }
}

static long x32_getpid(void) { return syscall(0x40000000 | 39); }
static long i386_getpid(void) {
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
    if (r < 0) { errno = -r; return -1; }
    return r;
}
/* In a child: a successful PTRACE_TRACEME would leave the probe traced by the runtime. */
static long do_traceme(void) { return syscall(SYS_ptrace, 0, 0, 0, 0); }
static long do_unshare(void) { return unshare(CLONE_NEWUSER); }
static long do_clone_newns(void) {
    /* raw clone with CLONE_NEWUSER; the child exits at once */
    long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (r == 0) _exit(0);
    if (r > 0) waitpid(r, 0, 0);
    return r;
}

int main(void) {
    int sv[2];
    in_child("unshare(CLONE_NEWUSER)", do_unshare);
    in_child("clone(CLONE_NEWUSER)", do_clone_newns);
    report("clone3(NULL, 0)", syscall(SYS_clone3, 0, 0));
    report("socket(AF_INET, SOCK_STREAM)", socket(AF_INET, SOCK_STREAM, 0));
    report("socket(AF_UNIX, SOCK_STREAM)", socket(AF_UNIX, SOCK_STREAM, 0));
    report("socketpair(AF_UNIX)", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    report("socketpair(AF_INET)", socketpair(AF_INET, SOCK_STREAM, 0, sv));
    int null = open("/dev/null", O_RDWR);
    char c = 'x';
    report("ioctl(/dev/null, TIOCSTI)", syscall(SYS_ioctl, null, 0x5412L, &c));
    report("ioctl(/dev/null, 1<<32 | TIOCSTI)", syscall(SYS_ioctl, null, 0x100005412L, &c));
    report("ioctl(/dev/null, FIONREAD)", syscall(SYS_ioctl, null, 0x541BL, &c));
    int f = open("/tmp/f", O_CREAT | O_WRONLY, 0644);
    report("open(/tmp/f, O_CREAT, 0644)", f);
    report("chmod(/tmp/f, 0755)", chmod("/tmp/f", 0755));
    report("chmod(/tmp/f, 04755)", chmod("/tmp/f", 04755));
    report("fchmodat2(/tmp/f, 04755)", syscall(452, AT_FDCWD, "/tmp/f", 04755, 0));
    report("openat2(/tmp/f)", syscall(SYS_openat2, AT_FDCWD, "/tmp/f", 0, 0));
    report("io_uring_setup(1, NULL)", syscall(SYS_io_uring_setup, 1, 0));
    in_child("ptrace(PTRACE_TRACEME)", do_traceme);
    report("bpf(0, NULL, 0)", syscall(SYS_bpf, 0, 0, 0));
    report("getpid()", getpid());
    in_child("x32 getpid (nr | 0x40000000)", x32_getpid);
    in_child("i386 getpid (int 0x80)", i386_getpid);
    return 0;
}
EOF
gcc -static -O1 -o "$work/bundle/rootfs/bin/probe" "$work/probe.c" || fail "could not build the probe"

cd "$work/bundle"
crun spec
jq '.process.terminal = false | .process.args = ["/bin/probe"]
    | .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]}]' \
    config.json >plain.json
jq --slurpfile sc "$profile" '.linux.seccomp = $sc[0]' plain.json >seccomp.json

run() { # config-file container-id
    cp "$1" config.json
    timeout 60 unshare -m sh -c 'umount -l /sys/fs/cgroup 2>/dev/null || true
        mount -t cgroup2 none /sys/fs/cgroup
        exec crun --debug --cgroup-manager=disabled run -b . "$0" 2>&1' "$2"
}

echo "== crun $(crun --version | head -1 | cut -d' ' -f3), libseccomp $(dpkg-query -W -f '${Version}' libseccomp2 2>/dev/null || echo '?')"
echo "== profile: $profile"
echo "== without the profile (control)"
run plain.json "cordon-plain-$$" | tee "$work/plain.out"
echo "== with the profile"
run seccomp.json "cordon-seccomp-$$" | tee "$work/seccomp.out"

# The verdicts the profile must produce.
status=0
expect() { # pattern-of-call expected-result
    line=$(grep -F -- "$1 " "$work/seccomp.out" | head -1)
    case "$line" in
        *"$2"*) echo "PASS  $1: $2" ;;
        *) echo "FAIL  $1: expected $2, got: ${line:-nothing}"; status=1 ;;
    esac
}
echo "== verdicts"
expect "unshare(CLONE_NEWUSER)" "errno 1 (EPERM)"
expect "clone(CLONE_NEWUSER)" "errno 1 (EPERM)"
expect "clone3(NULL, 0)" "errno 38 (ENOSYS)"
expect "socket(AF_INET, SOCK_STREAM)" "errno 1 (EPERM)"
expect "socket(AF_UNIX, SOCK_STREAM)" "errno 1 (EPERM)"
expect "socketpair(AF_UNIX)" "ok"
expect "socketpair(AF_INET)" "errno 1 (EPERM)"
expect "ioctl(/dev/null, TIOCSTI)" "errno 1 (EPERM)"
expect "ioctl(/dev/null, 1<<32 | TIOCSTI)" "errno 1 (EPERM)"
# Not denied: reaches the kernel, which answers ENOTTY for /dev/null (as in the control run).
expect "ioctl(/dev/null, FIONREAD)" "errno 25 (ENOTTY)"
expect "chmod(/tmp/f, 0755)" "ok"
expect "chmod(/tmp/f, 04755)" "errno 1 (EPERM)"
expect "openat2(/tmp/f)" "errno 38 (ENOSYS)"
expect "io_uring_setup(1, NULL)" "errno 1 (EPERM)"
expect "ptrace(PTRACE_TRACEME)" "errno 1 (EPERM)"
expect "bpf(0, NULL, 0)" "errno 1 (EPERM)"
expect "getpid()" "ok"
expect "x32 getpid (nr | 0x40000000)" "killed by signal 31 (SYS)"
expect "i386 getpid (int 0x80)" "killed by signal 31 (SYS)"
# A name the runtime's libseccomp does not know is skipped with a warning, and that call is
# then not denied: any warning is a failure here.
if grep -qi "unknown seccomp syscall" "$work/seccomp.out"; then
    echo "FAIL  the runtime ignored names: $(grep -i 'unknown seccomp syscall' "$work/seccomp.out" | tr '\n' ' ')"
    status=1
else
    echo "PASS  the runtime knew every syscall name"
fi
expect "fchmodat2(/tmp/f, 04755)" "errno 1 (EPERM)"
exit $status
