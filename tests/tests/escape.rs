//! The escape suite: every attack of `cordon-attack` runs as a child of `cordon exec` under the
//! Landlock backend and must print `BLOCKED:`; `legit-*` work must print `OK:`.
//!
//! Each case runs twice: as root (`as_root::…`) and as an unprivileged user (`as_user::…`:
//! the `cordon-test` system user when the suite runs as root, else the current user). The
//! root mode fails, rather than skips, when the suite is not run as root: CI runs as root.
//!
//! Controls: where an attack can succeed unconfined in a mode, the same attack also runs
//! without a kernel sandbox and must print `ESCAPED:`, which proves the check can fail.
//! `Ctl::Cordon` runs it under `cordon exec` with `backend = "none"`; `Ctl::Direct` runs the
//! attack binary without cordon, for protections cordon applies whatever the backend
//! (environment scrubbing, closing inherited fds, capabilities). `Ctl::No` marks attacks
//! that even unconfined cannot succeed in that mode (e.g. mounts as an unprivileged user);
//! the reason is next to the case.
//!
//! Every case gets a fresh temporary directory under /tmp holding the workspace (`ws/`, the
//! policy's read-write root and the current directory) and `outside/`, which no root covers.
//! After the sandboxed run the outside directory must be exactly as before.
//!
//! The binaries (`cordon`, a sibling of `cordon-attack` in the target directory, and
//! `cordon-attack`) are copied once per test process into a world-readable directory under
//! /tmp, which is also the policy's read-only `bin` root: the repository may sit in a
//! directory the unprivileged user cannot enter.

// Landlock, seccomp and bubblewrap are Linux; so is every attack.
#![cfg(target_os = "linux")]

use cordon_e2e::{chown_tree, cordon_beside, describe, is_root, test_user, BinDir};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// cases

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Root,
    User,
}

/// The Linux backend under test. Every case runs on both.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    Landlock,
    /// bubblewrap's namespaces with Landlock + seccomp inside: outside paths and other
    /// processes do not exist there, so ENOENT/ESRCH/EROFS also count as blocked.
    Bwrap,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Landlock => "landlock",
            Backend::Bwrap => "bwrap",
        }
    }
}

/// A condition for a control: `Some(reason)` skips it (printed), `None` runs it.
type Cond = fn() -> Option<String>;

#[derive(Clone, Copy)]
enum Ctl {
    /// No control: the attack cannot succeed unconfined in this mode.
    No,
    /// Under `cordon exec` with `backend = "none"`: must escape.
    Cordon,
    /// The attack binary run directly, without cordon: must escape.
    Direct,
    /// `Cordon` when the condition holds.
    CordonIf(Cond),
    /// `Direct` when the condition holds.
    DirectIf(Cond),
}

use Ctl::{Cordon as C, Direct as D, No as N};

// What a case needs from the harness.
const FD: u32 = 1 << 0; // fd 60: outside/secret.txt opened read-only, handed to cordon
const PTY: u32 = 1 << 1; // stdin is a pty, cordon's controlling terminal
const ABSTRACT: u32 = 1 << 2; // an abstract unix socket listener outside
const UNIX: u32 = 1 << 3; // a pathname unix socket listener in outside/ ("docker.sock")
const TCP: u32 = 1 << 4; // a TCP listener on 127.0.0.1
const VICTIM: u32 = 1 << 5; // a process outside the sandbox, same user
const SUID: u32 = 1 << 6; // a setuid-root copy of cordon-attack (harness must be root)
const ENV: u32 = 1 << 7; // CORDON_TEST_SECRET and LD_PRELOAD in cordon's environment
const HANDLE: u32 = 1 << 8; // a file handle of outside/secret.txt, made by the harness
const SYSV: u32 = 1 << 9; // a SysV shared memory segment and message queue of the host
                          // issue 12 class 4: what the command inherits.
const OTHER_PTY: u32 = 1 << 10; // another pty of the user, input pending, master held here
const OUTFILE: u32 = 1 << 11; // stdout appends to a file outside the roots (`>> log`)
const INFILE: u32 = 1 << 12; // stdin reads a file outside the roots (`< file`)

const PASSED_FD: RawFd = 60;

#[derive(Clone, Copy)]
struct Case {
    attack: &'static str,
    legit: bool,
    root: Ctl,
    user: Ctl,
    needs: u32,
    /// A documented limitation of the Landlock backend: the attack still succeeds there, and
    /// the test pins that, so the README's "cannot" list stays true (the reason says why).
    gap: Option<&'static str>,
}

const fn attack(attack: &'static str, root: Ctl, user: Ctl, needs: u32) -> Case {
    Case {
        attack,
        legit: false,
        root,
        user,
        needs,
        gap: None,
    }
}

const fn legit(name: &'static str) -> Case {
    Case {
        attack: name,
        legit: true,
        root: N,
        user: N,
        needs: 0,
        gap: None,
    }
}

/// Marks a Landlock limitation (see `Case::gap`).
const fn gap(mut c: Case, why: &'static str) -> Case {
    c.gap = Some(why);
    c
}

/// issue 25: on the Landlock backend `network = "deny"` runs without a network namespace where
/// seccomp and Landlock ABI 6 keep the command off the network, so /proc/net is the host's
/// (read-only). bwrap keeps its namespace.
const PROC_NET_GAP: &str = "without a network namespace (network = \"deny\" on Landlock ABI 6 and later) /proc/net shows the host's sockets read-only; the command cannot make a socket to use them (docs/network-enforcement.md)";

/// A case that needs harness plumbing (`PTY`, `INFILE`…), for legit cases.
const fn needing(mut c: Case, needs: u32) -> Case {
    c.needs = needs;
    c
}

// Runtime conditions for controls that depend on kernel settings.
fn yama_allows_ptrace() -> Option<String> {
    match fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope") {
        Ok(v) if v.trim() != "0" => Some(format!("yama ptrace_scope={}", v.trim())),
        _ => None,
    }
}

fn legacy_tiocsti() -> Option<String> {
    match fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti") {
        Ok(v) if v.trim() == "0" => Some("dev.tty.legacy_tiocsti=0".into()),
        _ => None,
    }
}

fn perf_paranoid_allows_user() -> Option<String> {
    match fs::read_to_string("/proc/sys/kernel/perf_event_paranoid") {
        Ok(v) if v.trim().parse::<i32>().unwrap_or(3) > 2 => {
            Some(format!("perf_event_paranoid={}", v.trim()))
        }
        _ => None,
    }
}

fn init_environ_readable() -> Option<String> {
    // Some VMs' pid 1 refuses even root (this machine's does).
    fs::read("/proc/1/environ")
        .err()
        .map(|e| format!("the harness itself cannot read /proc/1/environ: {e}"))
}

fn harness_without_nnp() -> Option<String> {
    let s = fs::read_to_string("/proc/self/status").unwrap_or_default();
    if s.lines()
        .any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1'))
    {
        Some("the test harness itself runs with no_new_privs".into())
    } else {
        None
    }
}

fn harness_is_root() -> Option<String> {
    if is_root() {
        None
    } else {
        Some("only a root harness can make a setuid-root binary".into())
    }
}

macro_rules! suite {
    ($($id:ident: $case:expr,)*) => {
        const CASES: &[Case] = &[$($case,)*];

        /// Every case with cordon and its child running as root.
        mod as_root {
            use super::*;
            $( #[test] fn $id() { run_case(Mode::Root, Backend::Landlock, &$case); } )*
        }

        /// Every case with cordon and its child running as an unprivileged user.
        mod as_user {
            use super::*;
            $( #[test] fn $id() { run_case(Mode::User, Backend::Landlock, &$case); } )*
        }

        /// Every case on the bwrap backend, as root.
        mod bwrap_as_root {
            use super::*;
            $( #[test] fn $id() { run_case(Mode::Root, Backend::Bwrap, &$case); } )*
        }

        /// Every case on the bwrap backend, as an unprivileged user.
        mod bwrap_as_user {
            use super::*;
            $( #[test] fn $id() { run_case(Mode::User, Backend::Bwrap, &$case); } )*
        }
    };
}

suite! {
    // Reading outside the roots.
    read_abs: attack("read-abs", C, C, 0),
    read_dotdot: attack("read-dotdot", C, C, 0),
    read_symlink: attack("read-symlink", C, C, 0),
    read_proc_self_root: attack("read-proc-self-root", C, C, 0),
    // Unprivileged users cannot read /etc/shadow anyway.
    read_etc_shadow: attack("read-etc-shadow", C, N, 0),
    readdir_outside: attack("readdir-outside", C, C, 0),
    exec_outside: attack("exec-outside", C, C, 0),
    // Links and renames across the boundary.
    symlink_dir_write: attack("symlink-dir-write", C, C, 0),
    hardlink_out: attack("hardlink-out", C, C, 0),
    // Round 8 (issue 21): the same from an O_PATH descriptor (its /proc/self/fd link).
    hardlink_procfd: attack("hardlink-procfd", C, C, 0),
    rename_in: attack("rename-in", C, C, 0),
    rename_out: attack("rename-out", C, C, 0),
    // Writing outside the roots.
    create_outside: attack("create-outside", C, C, 0),
    overwrite_outside: attack("overwrite-outside", C, C, 0),
    truncate_outside: attack("truncate-outside", C, C, 0),
    chmod_outside: attack("chmod-outside", C, C, 0),
    // Only the owner (root, for /etc/passwd) may change modes.
    chmod_etc_passwd: attack("chmod-etc-passwd", C, N, 0),
    // Landlock has no right for metadata: the init's read-only mount tree keeps root's
    // command from a system file's or device node's mode, owner and times (EROFS).
    chmod_dev_null: attack("chmod-dev-null", C, N, 0),
    chown_etc_passwd: attack("chown-etc-passwd", C, N, 0),
    utime_usr_bin: attack("utime-usr-bin", C, N, 0),
    // A kernel /proc entry's mode is global (every /proc mount shows it): the fresh /proc is
    // read-only as a whole (Landlock's init; bwrap's `--remount-ro /proc`).
    chmod_proc_kallsyms: attack("chmod-proc-kallsyms", C, N, 0),
    setuid_chmod_workspace: attack("setuid-chmod-workspace", C, C, 0),
    setgid_fchmod_workspace: attack("setgid-fchmod-workspace", C, C, 0),
    setuid_create_workspace: attack("setuid-create-workspace", C, C, 0),
    utime_outside: attack("utime-outside", C, C, 0),
    setxattr_outside: attack("setxattr-outside", C, C, 0),
    // Round 8 (issue 21): reading an attribute's value is not checked by Landlock either.
    getxattr_outside: attack("getxattr-outside", C, C, 0),
    // Only root may give a file away.
    chown_outside: attack("chown-outside", C, N, 0),
    mkdir_outside: attack("mkdir-outside", C, C, 0),
    rmdir_outside: attack("rmdir-outside", C, C, 0),
    unlink_outside: attack("unlink-outside", C, C, 0),
    // System files, devices, /proc/sys and /sys: writable by root only.
    write_etc_passwd: attack("write-etc-passwd", C, N, 0),
    create_usr_bin: attack("create-usr-bin", C, N, 0),
    mknod_char: attack("mknod-char", C, N, 0),
    mknod_block: attack("mknod-block", C, N, 0),
    proc_sys_write: attack("proc-sys-write", C, N, 0),
    // No `sysrq-trigger` case: the kernels this suite runs on (CI's too) are built without
    // CONFIG_MAGIC_SYSRQ, so there is no /proc/sysrq-trigger to attack and a case could only
    // skip. bwrap binds it read-only where it exists (`--ro-bind-try`, proved by the bwrap
    // render's golden test); writes into procfs are attacked by `proc-sys-write`.
    sys_write: attack("sys-write", C, N, 0),
    // Inherited fds: cordon closes them whatever the backend, so the control is direct.
    fd_scan: attack("fd-scan", D, D, FD),
    fd_reopen: attack("fd-reopen", D, D, FD),
    // Other processes through /proc (ppid = cordon; victim = a process outside).
    proc_parent_environ: attack("proc-parent-environ", C, C, ENV),
    // Opening mem needs ptrace-attach rights, which Yama may deny to users.
    proc_parent_mem: attack("proc-parent-mem", C, Ctl::CordonIf(yama_allows_ptrace), 0),
    // Another user's process: root only.
    proc_init_environ: attack("proc-init-environ", Ctl::CordonIf(init_environ_readable), N, 0),
    proc_victim_environ: attack("proc-victim-environ", C, C, VICTIM),
    proc_parent_root: attack("proc-parent-root", C, C, 0),
    proc_parent_cwd: attack("proc-parent-cwd", C, C, 0),
    proc_parent_fd: attack("proc-parent-fd", C, C, 0),
    // The inotify supervisor (the direct parent on Landlock): its listener and memory.
    proc_supervisor_fd: attack("proc-supervisor-fd", C, C, 0),
    proc_supervisor_mem: attack("proc-supervisor-mem", C, Ctl::CordonIf(yama_allows_ptrace), 0),
    // Signals.
    kill_parent_term: attack("kill-parent-term", C, C, 0),
    kill_parent_kill: attack("kill-parent-kill", C, C, 0),
    kill_parent_probe: attack("kill-parent-probe", C, C, 0),
    // pid 1 belongs to root.
    kill_init_probe: attack("kill-init-probe", C, N, 0),
    kill_outside_process: attack("kill-outside-process", C, C, VICTIM),
    // ptrace and friends (Yama may deny them to users).
    ptrace_attach: attack("ptrace-attach", C, Ctl::CordonIf(yama_allows_ptrace), 0),
    ptrace_seize: attack("ptrace-seize", C, Ctl::CordonIf(yama_allows_ptrace), 0),
    process_vm_readv: attack("process-vm-readv", C, Ctl::CordonIf(yama_allows_ptrace), 0),
    pidfd_getfd: attack("pidfd-getfd", C, Ctl::CordonIf(yama_allows_ptrace), 0),
    // Terminal injection. Root may push into any tty; a user only into its controlling
    // terminal, which cordon's new session takes away even without a sandbox: direct.
    tiocsti: attack("tiocsti", C, Ctl::DirectIf(legacy_tiocsti), PTY),
    tiocsti_highbits: attack("tiocsti-highbits", C, Ctl::DirectIf(legacy_tiocsti), PTY),
    tiocsti_probe: attack("tiocsti-probe", C, C, 0),
    tiocsti_highbits_probe: attack("tiocsti-highbits-probe", C, C, 0),
    tioclinux_probe: attack("tioclinux-probe", C, C, 0),
    tioclinux_highbits_probe: attack("tioclinux-highbits-probe", C, C, 0),
    // Network. Packet and raw sockets need CAP_NET_RAW.
    socket_inet_stream: attack("socket-inet-stream", C, C, 0),
    socket_inet_dgram: attack("socket-inet-dgram", C, C, 0),
    socket_inet6: attack("socket-inet6", C, C, 0),
    socket_netlink: attack("socket-netlink", C, C, 0),
    socket_packet: attack("socket-packet", C, N, 0),
    socket_mptcp: attack("socket-mptcp", C, C, 0),
    socket_raw: attack("socket-raw", C, N, 0),
    socket_vsock: attack("socket-vsock", C, C, 0),
    tcp_loopback: attack("tcp-loopback", C, C, 0),
    udp_loopback: attack("udp-loopback", C, C, 0),
    tcp_connect_harness: attack("tcp-connect-harness", C, C, TCP),
    abstract_connect: attack("abstract-connect", C, C, ABSTRACT),
    unix_connect_outside: attack("unix-connect-outside", C, C, UNIX),
    // Mounts and namespaces: users get EPERM from the kernel except for user namespaces.
    mount_tmpfs: attack("mount-tmpfs", C, N, 0),
    // Undoing the read-only tree; no control: unconfined it would change the host's mounts.
    remount_root_rw: attack("remount-root-rw", N, N, 0),
    mount_setattr_rw: attack("mount-setattr-rw", N, N, 0),
    mount_bind_outside: attack("mount-bind-outside", C, N, 0),
    umount_probe: attack("umount-probe", C, N, 0),
    unshare_user: attack("unshare-user", C, C, 0),
    unshare_mount: attack("unshare-mount", C, N, 0),
    unshare_net: attack("unshare-net", C, N, 0),
    clone_newuser: attack("clone-newuser", C, C, 0),
    clone3: attack("clone3", C, C, 0),
    setns: attack("setns", C, N, 0),
    chroot: attack("chroot", C, N, 0),
    pivot_root_probe: attack("pivot-root-probe", C, N, 0),
    fsopen: attack("fsopen", C, N, 0),
    open_tree: attack("open-tree", C, N, 0),
    // Kernel interfaces. bpf, modules, kexec, reboot, swap, syslog, hostname, fanotify and
    // file handles need capabilities a user does not have.
    io_uring_setup: attack("io-uring-setup", C, C, 0),
    bpf_prog_load: attack("bpf-prog-load", C, N, 0),
    add_key: attack("add-key", C, C, 0),
    keyctl: attack("keyctl", C, C, 0),
    perf_event_open: attack("perf-event-open", C, Ctl::CordonIf(perf_paranoid_allows_user), 0),
    userfaultfd: attack("userfaultfd", C, C, 0),
    init_module: attack("init-module", C, N, 0),
    finit_module: attack("finit-module", C, N, 0),
    kexec_load: attack("kexec-load", C, N, 0),
    reboot_probe: attack("reboot-probe", C, N, 0),
    swapon_probe: attack("swapon-probe", C, N, 0),
    syslog_read: attack("syslog-read", C, N, 0),
    sethostname: attack("sethostname", C, N, 0),
    fanotify_init: attack("fanotify-init", C, N, 0),
    open_by_handle_at: attack("open-by-handle-at", C, N, HANDLE),
    // Foreign syscall ABIs.
    x32_getpid: attack("x32-getpid", C, C, 0),
    x32_socket: attack("x32-socket", C, C, 0),
    ia32_getpid: attack("ia32-getpid", C, C, 0),
    ia32_socket: attack("ia32-socket", C, C, 0),
    // Environment and privileges: cordon scrubs the environment and sets no_new_privs and
    // drops capabilities whatever the backend may be, so these controls are direct.
    env_secret: attack("env-secret", D, D, ENV),
    env_ld_preload: attack("env-ld-preload", D, D, ENV),
    no_new_privs: attack("no-new-privs", Ctl::DirectIf(harness_without_nnp), Ctl::DirectIf(harness_without_nnp), 0),
    // A user holds no capabilities to begin with.
    caps: attack("caps", D, N, 0),
    cap_bounding: attack("cap-bounding", D, Ctl::DirectIf(harness_without_nnp), 0),
    suid_exec: attack("suid-exec", Ctl::DirectIf(harness_is_root), Ctl::DirectIf(harness_is_root), SUID),
    // Legitimate work in the workspace.
    legit_files: legit("legit-files"),
    legit_inotify: legit("legit-inotify"),
    legit_script: legit("legit-script"),
    legit_pipe: legit("legit-pipe"),
    legit_socketpair: legit("legit-socketpair"),
    legit_tmpdir: legit("legit-tmpdir"),
    legit_etc_passwd: legit("legit-etc-passwd"),
    legit_ls_usr: legit("legit-ls-usr"),
    legit_mkfifo: legit("legit-mkfifo"),
    legit_links: legit("legit-links"),
    legit_dev: legit("legit-dev"),
    legit_signal_child: legit("legit-signal-child"),
    legit_proc_self: legit("legit-proc-self"),
    // issue 12 classes 3/5/8: other processes reached without a signal (same user), SysV IPC,
    // what /proc shows of the host.
    prlimit_parent: attack("prlimit-parent", C, C, 0),
    prlimit_victim: attack("prlimit-victim", C, C, VICTIM),
    setpriority_victim: attack("setpriority-victim", C, C, VICTIM),
    sched_setaffinity_victim: attack("sched-setaffinity-victim", C, C, VICTIM),
    sched_setscheduler_victim: attack("sched-setscheduler-victim", C, C, VICTIM),
    ioprio_set_victim: attack("ioprio-set-victim", C, C, VICTIM),
    oom_score_adj_victim: attack("oom-score-adj-victim", C, C, VICTIM),
    sysv_shm_id: attack("sysv-shm-id", C, C, SYSV),
    sysv_shm_key: attack("sysv-shm-key", C, C, SYSV),
    sysv_msgq: attack("sysv-msgq", C, C, SYSV),
    sysv_msgq_id: attack("sysv-msgq-id", C, C, SYSV),
    sysv_sem: attack("sysv-sem", C, C, SYSV),
    // Round 8 (issue 21): POSIX shared memory (a file in the host's /dev/shm) and message
    // queues of the host.
    // Round 8 (issue 21): Landlock does not mediate inotify: cordon's supervisor adds only the
    // watches the command could read; bwrap's view has no such path.
    inotify_outside: attack("inotify-outside", C, C, 0),
    inotify_outside_cwd: attack("inotify-outside-cwd", C, C, 0),
    inotify_outside_link: attack("inotify-outside-link", C, C, 0),
    posix_shm_read: attack("posix-shm-read", C, C, SYSV),
    posix_shm_write: attack("posix-shm-write", C, C, SYSV),
    posix_mq_open: attack("posix-mq-open", C, C, SYSV),
    proc_list_host: attack("proc-list-host", C, C, VICTIM),
    proc_net_tcp: gap(attack("proc-net-tcp", C, C, TCP), PROC_NET_GAP),
    // issue 12 class 4: what the command inherits. Another terminal of the same user (on
    // bwrap it does not exist in the private /dev/pts); the operator's terminal (stdin);
    // files the operator redirected stdout and stdin to, outside the roots. The command gets
    // a pty and pipes of its own; unconfined it holds the operator's objects: controls escape.
    pty_other_write: attack("pty-other-write", C, C, OTHER_PTY),
    pty_other_read: attack("pty-other-read", C, C, OTHER_PTY),
    pty_other_dirfd: attack("pty-other-dirfd", C, C, OTHER_PTY),
    pty_other_dotdot: attack("pty-other-dotdot", C, C, OTHER_PTY),
    tty_fchmod: attack("tty-fchmod", C, C, PTY),
    tty_termios: attack("tty-termios", C, C, PTY),
    stdout_ftruncate: attack("stdout-ftruncate", C, C, OUTFILE),
    stdout_fchmod: attack("stdout-fchmod", C, C, OUTFILE),
    stdout_fsetxattr: attack("stdout-fsetxattr", C, C, OUTFILE),
    stdout_punch_hole: attack("stdout-punch-hole", C, C, OUTFILE),
    stdout_reopen_trunc: attack("stdout-reopen-trunc", C, C, OUTFILE),
    stdin_fchmod: attack("stdin-fchmod", C, C, INFILE),
    stdin_fsetxattr: attack("stdin-fsetxattr", C, C, INFILE),
    legit_tty: needing(legit("legit-tty"), PTY),
    legit_own_pty: needing(legit("legit-own-pty"), PTY),
    legit_stdin_file: needing(legit("legit-stdin-file"), INFILE),
}

/// The suite and the attack binary agree, and there are enough distinct checks.
#[test]
fn suite_covers_every_attack() {
    let out = Command::new(attack_bin_in_target())
        .arg("list")
        .output()
        .expect("run cordon-attack list");
    assert!(out.status.success());
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut in_suite: Vec<&str> = CASES.iter().map(|c| c.attack).collect();
    in_suite.sort_unstable();
    let n = in_suite.len();
    in_suite.dedup();
    assert_eq!(n, in_suite.len(), "a case appears twice");
    for name in &listed {
        assert!(
            in_suite.contains(&name.as_str()),
            "attack {name} has no case"
        );
    }
    for name in &in_suite {
        assert!(
            listed.iter().any(|l| l == name),
            "case {name} is not an attack"
        );
    }
    let attacks = CASES.iter().filter(|c| !c.legit).count();
    assert!(attacks >= 40, "only {attacks} attacks");
}

// ---------------------------------------------------------------------------------------------
// binaries and users

fn attack_bin_in_target() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cordon-attack"))
}

struct Bins {
    dir: PathBuf,
    cordon: PathBuf,
    attack: PathBuf,
    suid: Option<PathBuf>,
}

static BINS: OnceLock<Bins> = OnceLock::new();

fn bins() -> &'static Bins {
    BINS.get_or_init(|| {
        let attack_src = attack_bin_in_target();
        let dir = BinDir::new("bin");
        Bins {
            cordon: dir.copy(&cordon_beside(&attack_src), "cordon", 0o755),
            attack: dir.copy(&attack_src, "cordon-attack", 0o755),
            suid: is_root().then(|| dir.copy(&attack_src, "cordon-attack-suid", 0o4755)),
            dir: dir.path().to_path_buf(),
        }
    })
}

#[derive(Clone, Copy)]
struct User {
    /// `None`: run as the current user.
    ids: Option<(u32, u32)>,
}

fn user_for(mode: Mode) -> User {
    match mode {
        Mode::Root => {
            assert!(
                is_root(),
                "the escape suite's root mode must run as root (CI runs the tests as root); \
                 run `cargo test -p cordon-e2e` as root"
            );
            User { ids: None }
        }
        Mode::User if is_root() => User {
            ids: Some(test_user()),
        },
        Mode::User => User { ids: None },
    }
}

// ---------------------------------------------------------------------------------------------
// fixture

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
    user: User,
}

const SECRET: &str = "CORDON-OUTSIDE-SECRET\n";

fn toml_str(p: &Path) -> String {
    let s = p.to_str().expect("utf-8 path");
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn policy_text(backend: &str, require: bool, extra: &str) -> String {
    format!(
        r#"version = 1

[sandbox]
backend = "{backend}"
require_os_sandbox = {require}
network = "deny"

[sandbox.paths.workspace]
root = "../ws"
mode = "rw"

[sandbox.paths.bin]
root = {bin}
mode = "ro"

[shell]
default = "allow"
{extra}"#,
        bin = toml_str(&bins().dir)
    )
}

impl Fixture {
    fn new(mode: Mode, backend: Backend) -> Fixture {
        let user = user_for(mode);
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        let outside = root.join("outside");
        fs::create_dir(&ws).unwrap();
        fs::create_dir(&outside).unwrap();
        fs::create_dir(root.join("tmp")).unwrap();
        fs::create_dir(root.join("state")).unwrap();
        fs::create_dir(outside.join("emptydir")).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        // The attribute `getxattr-outside` reads.
        xattr_set(&outside.join("secret.txt"), XATTR, b"CORDON-OUTSIDE-XATTR");
        fs::set_permissions(
            outside.join("secret.txt"),
            fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        fs::write(outside.join("victim.txt"), "victim\n").unwrap();
        let prog = outside.join("prog.sh");
        fs::write(
            &prog,
            "#!/bin/sh\necho \"ESCAPED: executed $0 outside the roots\"\nexit 1\n",
        )
        .unwrap();
        fs::set_permissions(&prog, fs::Permissions::from_mode(0o755)).unwrap();
        // Policies live beside the workspace, not in it: a policy file inside a writable root
        // is a protected path, which the Landlock backend refuses.
        fs::create_dir(root.join("policies")).unwrap();
        fs::write(
            root.join("policies/cordon.toml"),
            policy_text(backend.name(), true, ""),
        )
        .unwrap();
        fs::write(
            root.join("policies/cordon-none.toml"),
            policy_text("none", false, ""),
        )
        .unwrap();
        fs::write(
            root.join("policies/cordon-landlock.toml"),
            policy_text("landlock", true, ""),
        )
        .unwrap();
        let fx = Fixture {
            _tmp: tmp,
            root,
            ws,
            outside,
            user,
        };
        fx.chown_to_user();
        fx
    }

    fn chown_to_user(&self) {
        if let Some((uid, gid)) = self.user.ids {
            chown_tree(&self.ws, uid, gid);
            chown_tree(&self.outside, uid, gid);
            chown_tree(&self.root.join("tmp"), uid, gid);
            chown_tree(&self.root.join("state"), uid, gid);
        }
    }

    /// Writes `script` to `NAME` in the workspace (owned by the mode's user): `/bin/sh NAME`
    /// runs code the shell tool cannot read, so the sandbox alone must stop it (the same
    /// line given to `sh -c` is denied before it runs, issue 13).
    fn script(&self, name: &str, script: &str) -> String {
        fs::write(self.ws.join(name), script).unwrap();
        self.chown_to_user();
        name.to_string()
    }

    /// A policy file's place: `ROOT/policies/NAME`, beside the workspace.
    fn policy_file(&self, name: &str) -> PathBuf {
        self.root.join("policies").join(name)
    }

    fn policy(&self) -> PathBuf {
        self.policy_file("cordon.toml")
    }

    fn policy_none(&self) -> PathBuf {
        self.policy_file("cordon-none.toml")
    }

    /// `cordon exec --policy P [extra…] -- argv…`, in the workspace, as the mode's user.
    fn cordon(&self, policy: &Path, extra: &[&str], argv: &[OsString]) -> Command {
        let mut c = Command::new(&bins().cordon);
        c.arg("exec").arg("--policy").arg(policy).args(extra);
        c.arg("--").args(argv);
        self.prepare(&mut c);
        c
    }

    fn prepare(&self, c: &mut Command) {
        c.current_dir(&self.ws);
        c.env_clear();
        c.env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        );
        c.env("HOME", &self.ws);
        c.env("LANG", "C.UTF-8");
        // cordon makes its private TMPDIR under this one: inside the fixture, it goes away
        // with it even when a control kills cordon before it can clean up.
        c.env("TMPDIR", self.root.join("tmp"));
        // The default audit log goes here, beside the workspace (HOME is the workspace, and a
        // log inside a writable root would be a protected path, which Landlock refuses).
        c.env("XDG_STATE_HOME", self.root.join("state"));
        // The trust store likewise (issue 12, class 1): under HOME it would lie in the
        // workspace, a protected path, which Landlock refuses.
        c.env("XDG_CONFIG_HOME", self.root.join("config"));
        let name = if self.user.ids.is_some() {
            "cordon-test".to_string()
        } else {
            std::env::var("USER").unwrap_or_else(|_| "root".into())
        };
        c.env("USER", &name).env("LOGNAME", &name);
        if let Some((uid, gid)) = self.user.ids {
            c.uid(uid).gid(gid);
        }
        c.stdin(Stdio::null());
    }

    /// Snapshot of everything under outside/: type, mode, owner, size, mtime and content.
    fn outside_state(&self) -> BTreeMap<PathBuf, String> {
        fn walk(base: &Path, p: &Path, out: &mut BTreeMap<PathBuf, String>) {
            let m = fs::symlink_metadata(p).unwrap();
            let content = if m.is_file() {
                String::from_utf8_lossy(&fs::read(p).unwrap()).into_owned()
            } else if m.file_type().is_symlink() {
                fs::read_link(p).unwrap().display().to_string()
            } else {
                String::new()
            };
            out.insert(
                p.strip_prefix(base).unwrap().to_path_buf(),
                format!(
                    "mode {:o} owner {}:{} size {} mtime {}.{} {:?}",
                    m.mode(),
                    m.uid(),
                    m.gid(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    content
                ),
            );
            if m.is_dir() {
                for e in fs::read_dir(p).unwrap() {
                    walk(base, &e.unwrap().path(), out);
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.outside, &self.outside, &mut out);
        out
    }
}

// ---------------------------------------------------------------------------------------------
// running processes

/// What to set up in the child between fork and exec.
#[derive(Default)]
struct Pre {
    /// Duplicated onto `PASSED_FD` without close-on-exec.
    pass_fd: Option<RawFd>,
    /// stdin is a tty: make it the controlling terminal of a new session.
    ctty: bool,
    /// A seccomp filter to install.
    seccomp: Option<seccompiler::BpfProgram>,
}

fn install_pre(c: &mut Command, pre: Pre) {
    let Pre {
        pass_fd,
        ctty,
        seccomp,
    } = pre;
    // SAFETY: only async-signal-safe raw syscalls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            if let Some(fd) = pass_fd {
                if fd == PASSED_FD {
                    if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, PASSED_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if ctty {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(prog) = &seccomp {
                seccompiler::apply_filter(prog)
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
            }
            Ok(())
        });
    }
}

/// Spawns, waits (killing the process after a generous upper bound) and collects output.
fn run(c: Command) -> Output {
    run_to(c, Stdio::piped())
}

/// [`run`] with stdout going to `stdout`.
fn run_to(mut c: Command, stdout: Stdio) -> Output {
    c.stdout(stdout).stderr(Stdio::piped());
    let child = c
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", c.get_program()));
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(180)).is_err() {
            // SAFETY: kill takes integers only. The watchdog fires only while the main thread
            // still waits on the child, so `pid` is our own unreaped child and cannot have been
            // reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let out = child.wait_with_output().expect("wait");
    let _ = tx.send(());
    watchdog.join().unwrap();
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn open_pty() -> (OwnedFd, OwnedFd) {
    // SAFETY: posix_openpt, grantpt and unlockpt take integers; each result is checked. `buf`
    // is a live 128-byte buffer and ptsname_r is told its length, so the name it writes is NUL-
    // terminated within it; open reads that name. `m` and `s` are descriptors just created and
    // checked, each wrapped in an OwnedFd once.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = OwnedFd::from_raw_fd(m);
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, buf.as_mut_ptr(), buf.len()), 0);
        let s = libc::open(
            buf.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(
            s >= 0,
            "open pty slave: {}",
            std::io::Error::last_os_error()
        );
        (master, OwnedFd::from_raw_fd(s))
    }
}

/// name_to_handle_at(2) of `p`, encoded "TYPE:HEX" for `cordon-attack --handle`.
fn file_handle(p: &Path) -> String {
    #[repr(C)]
    struct FileHandle {
        handle_bytes: u32,
        handle_type: i32,
        f_handle: [u8; 128],
    }
    let mut fh = FileHandle {
        handle_bytes: 128,
        handle_type: 0,
        f_handle: [0; 128],
    };
    let mut mount_id = 0i32;
    let path = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: `path` is a live NUL-terminated string; `fh` is a `#[repr(C)]` file_handle with
    // `handle_bytes` set to the 128 bytes of `f_handle` it really has, and `mount_id` a live
    // i32: the kernel writes within both.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            libc::AT_FDCWD,
            path.as_ptr(),
            &mut fh as *mut FileHandle,
            &mut mount_id as *mut i32,
            0,
        )
    };
    assert_eq!(
        rc,
        0,
        "name_to_handle_at({}): {}",
        p.display(),
        std::io::Error::last_os_error()
    );
    let hex: String = fh.f_handle[..fh.handle_bytes as usize]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{}:{hex}", fh.handle_type)
}

/// A process outside the sandbox, killed and reaped on drop.
struct Victim(Child);

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Resources a case needs, alive for the whole case.
struct Env {
    args: Vec<OsString>,
    secret_fd: Option<fs::File>,
    pty: Option<(OwnedFd, OwnedFd)>,
    inherited: Inherited,
    victim: Option<Victim>,
    _tcp: Option<std::net::TcpListener>,
    _abstract: Option<std::os::unix::net::UnixListener>,
    _unix: Option<std::os::unix::net::UnixListener>,
    _sysv: Option<HostIpc>,
}

/// issue 12 class 5: a SysV shared memory segment (holding a marker) and a message queue of
/// the host, open to everyone (0666) so that only the sandbox can keep the command out;
/// removed on drop.
struct HostIpc {
    shm: i32,
    msq: i32,
    sem: i32,
    sem_key: i32,
    /// Round 8 (issue 21): POSIX IPC of the host, open to everyone: a file in /dev/shm
    /// (what `shm_open` makes) and a message queue (`mq_open`, the IPC namespace's mqueue).
    posix_shm: PathBuf,
    mq: std::ffi::CString,
}

impl HostIpc {
    fn new() -> HostIpc {
        // Keys from our pid and a counter: distinct per case and per test process.
        let base = (std::process::id() as i32 & 0xffff) << 12
            | (COUNTER.fetch_add(1, Ordering::Relaxed) as i32 & 0x7ff);
        let (shm_key, msq_key) = (0x4000_0000 | base, 0x2000_0000 | base);
        // SAFETY: shmget, msgget and semget take integers only, each result checked. `p` is
        // checked against shmat's failure value, so it points to the 4096-byte segment just
        // created, and 15 bytes are copied into it from a static string before it is detached.
        unsafe {
            let shm = libc::shmget(shm_key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
            assert!(shm >= 0, "shmget: {}", std::io::Error::last_os_error());
            let p = libc::shmat(shm, std::ptr::null(), 0);
            assert!(
                p as isize != -1,
                "shmat: {}",
                std::io::Error::last_os_error()
            );
            std::ptr::copy_nonoverlapping(b"CORDON-HOST-SHM".as_ptr(), p as *mut u8, 15);
            libc::shmdt(p);
            let msq = libc::msgget(msq_key, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
            assert!(msq >= 0, "msgget: {}", std::io::Error::last_os_error());
            let sem_key = 0x1000_0000 | base;
            let sem = libc::semget(sem_key, 1, libc::IPC_CREAT | libc::IPC_EXCL | 0o666);
            assert!(sem >= 0, "semget: {}", std::io::Error::last_os_error());
            let posix_shm = PathBuf::from(format!("/dev/shm/cordon-e2e-{base:x}"));
            fs::write(&posix_shm, "CORDON-HOST-POSIX-SHM").unwrap();
            fs::set_permissions(&posix_shm, fs::Permissions::from_mode(0o666)).unwrap();
            let mq = std::ffi::CString::new(format!("/cordon-e2e-{base:x}")).unwrap();
            // The mode set on the descriptor, not by clearing the umask: the umask is the
            // process's, and the other tests' threads making their fixtures meanwhile got
            // world-writable directories (cordon then refused their TMPDIR).
            let q = libc::mq_open(
                mq.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
                0o600 as libc::mode_t,
                std::ptr::null_mut::<libc::mq_attr>(),
            );
            assert!(q >= 0, "mq_open: {}", std::io::Error::last_os_error());
            assert_eq!(
                libc::fchmod(q, 0o666),
                0,
                "fchmod of the message queue: {}",
                std::io::Error::last_os_error()
            );
            libc::mq_close(q);
            HostIpc {
                shm,
                msq,
                sem,
                sem_key,
                posix_shm,
                mq,
            }
        }
    }

    fn args(&self) -> Vec<OsString> {
        let key = |id: i32, shm: bool| -> i32 {
            // SAFETY: `ds` is a zeroed plain-C struct on our stack (a valid value) that
            // IPC_STAT fills; `id` is an object `new` created.
            unsafe {
                if shm {
                    let mut ds: libc::shmid_ds = std::mem::zeroed();
                    libc::shmctl(id, libc::IPC_STAT, &mut ds);
                    ds.shm_perm.__key
                } else {
                    let mut ds: libc::msqid_ds = std::mem::zeroed();
                    libc::msgctl(id, libc::IPC_STAT, &mut ds);
                    ds.msg_perm.__key
                }
            }
        };
        [
            ("--shm-id", self.shm),
            ("--shm-key", key(self.shm, true)),
            ("--msq-id", self.msq),
            ("--msq-key", key(self.msq, false)),
            ("--sem-key", self.sem_key),
        ]
        .iter()
        .flat_map(|(k, v)| [OsString::from(k), OsString::from(v.to_string())])
        .chain([
            OsString::from("--posix-shm"),
            self.posix_shm.clone().into(),
            OsString::from("--mq"),
            OsString::from(self.mq.to_str().unwrap()),
        ])
        .collect()
    }
}

impl Drop for HostIpc {
    fn drop(&mut self) {
        // SAFETY: the IPC_RMID calls take the ids `new` created (checked) and a null buffer,
        // which IPC_RMID ignores. Failure leaves an object a later run's IPC_EXCL keys never
        // collide with.
        unsafe {
            libc::shmctl(self.shm, libc::IPC_RMID, std::ptr::null_mut());
            libc::msgctl(self.msq, libc::IPC_RMID, std::ptr::null_mut());
            libc::semctl(self.sem, 0, libc::IPC_RMID);
            libc::mq_unlink(self.mq.as_ptr());
        }
        let _ = fs::remove_file(&self.posix_shm);
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn unique() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

impl Env {
    fn new(fx: &Fixture, case: &Case) -> Env {
        let mut args: Vec<OsString> = vec!["--outside".into(), fx.outside.clone().into()];
        let mut env = Env {
            args: Vec::new(),
            secret_fd: None,
            pty: None,
            inherited: Inherited::default(),
            victim: None,
            _tcp: None,
            _abstract: None,
            _unix: None,
            _sysv: None,
        };
        if case.needs & FD != 0 {
            env.secret_fd = Some(fs::File::open(fx.outside.join("secret.txt")).unwrap());
            args.extend(["--fd".into(), PASSED_FD.to_string().into()]);
        }
        if case.needs & PTY != 0 {
            env.pty = Some(open_pty());
        }
        env.inherited = Inherited::new(fx, case, env.pty.as_ref(), &mut args);
        if case.needs & VICTIM != 0 {
            let mut c = Command::new("/bin/sleep");
            c.arg("3600")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Some((uid, gid)) = fx.user.ids {
                c.uid(uid).gid(gid);
            }
            let child = c.spawn().expect("spawn victim");
            args.extend(["--victim".into(), child.id().to_string().into()]);
            env.victim = Some(Victim(child));
        }
        if case.needs & TCP != 0 {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = l.local_addr().unwrap().port();
            args.extend(["--port".into(), port.to_string().into()]);
            env._tcp = Some(l);
        }
        if case.needs & ABSTRACT != 0 {
            use std::os::linux::net::SocketAddrExt;
            let name = format!("cordon-e2e-{}", unique());
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            env._abstract = Some(std::os::unix::net::UnixListener::bind_addr(&addr).unwrap());
            args.extend(["--abstract".into(), name.into()]);
        }
        if case.needs & UNIX != 0 {
            let p = fx.outside.join("docker.sock");
            env._unix = Some(std::os::unix::net::UnixListener::bind(&p).unwrap());
            if let Some((uid, gid)) = fx.user.ids {
                std::os::unix::fs::lchown(&p, Some(uid), Some(gid)).unwrap();
            }
            args.extend(["--socket".into(), p.into()]);
        }
        if case.needs & HANDLE != 0 {
            args.extend([
                "--handle".into(),
                file_handle(&fx.outside.join("secret.txt")).into(),
            ]);
        }
        if case.needs & SYSV != 0 {
            let ipc = HostIpc::new();
            args.extend(ipc.args());
            env._sysv = Some(ipc);
        }
        if case.needs & SUID != 0 {
            let p = bins().suid.clone().expect("a setuid copy (root harness)");
            args.extend(["--suid".into(), p.into()]);
        }
        env.args = args;
        env
    }

    fn argv(&self, bin: &Path, case: &Case) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![bin.into(), case.attack.into()];
        v.extend(self.args.iter().cloned());
        v
    }

    /// Per-run plumbing: the passed fd, the pty, the secret environment.
    fn apply(&self, c: &mut Command, case: &Case) {
        let mut pre = Pre::default();
        if let Some(f) = &self.secret_fd {
            pre.pass_fd = Some(f.as_raw_fd());
        }
        if let Some((_, slave)) = &self.pty {
            c.stdin(Stdio::from(slave.try_clone().unwrap()));
            pre.ctty = true;
        }
        if let Some(p) = &self.inherited.infile {
            c.stdin(fs::File::open(p).unwrap());
        }
        if case.needs & ENV != 0 {
            c.env("CORDON_TEST_SECRET", "e2e-secret-value");
            c.env("LD_PRELOAD", "/nonexistent.so");
        }
        install_pre(c, pre);
    }
}

// ---------------------------------------------------------------------------------------------
// issue 12 class 4: the objects the operator hands cordon as stdio, checked after the run

/// What the operator's earlier output in the redirected file says; the run appends to it.
const LOG_PREFIX: &str = "cordon-e2e: the operator's log, written before the run\n";
/// Pending input of the other terminal, as the command would read it.
const TYPED: &str = "cordon-e2e typed on another terminal\n";
/// What the stdin file holds (cordon-attack's `legit-stdin-file` expects it).
const STDIN_LINE: &str = "cordon-e2e stdin line\n";
const XATTR: &str = "user.cordon-e2e";

/// The operator's objects a case hands cordon, and their state before the run.
#[derive(Default)]
struct Inherited {
    /// The operator's terminal (the `PTY` slave): its path, mode and local modes.
    tty: Option<(PathBuf, u32, libc::tcflag_t)>,
    /// Another terminal of the same user: (master, slave, slave's path).
    other: Option<(OwnedFd, OwnedFd, PathBuf)>,
    outfile: Option<PathBuf>,
    infile: Option<PathBuf>,
    /// The user the operator's files belong to (`None`: the harness's).
    owner: Option<(u32, u32)>,
}

fn pty_path(master: &OwnedFd) -> PathBuf {
    let mut buf = [0 as libc::c_char; 128];
    assert_eq!(
        // SAFETY: `buf` is a live 128-byte buffer and ptsname_r is told its length.
        unsafe { libc::ptsname_r(master.as_raw_fd(), buf.as_mut_ptr(), buf.len()) },
        0
    );
    PathBuf::from(
        // SAFETY: ptsname_r succeeded (checked above), so `buf` holds a NUL-terminated name
        // within its 128 bytes, and it outlives the borrow.
        unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned(),
    )
}

fn lflag(fd: RawFd) -> libc::tcflag_t {
    // SAFETY: all-zero is a valid termios (plain integers).
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a live termios tcgetattr writes into.
    assert_eq!(unsafe { libc::tcgetattr(fd, &mut t) }, 0);
    t.c_lflag
}

fn xattr_set(p: &Path, name: &str, value: &[u8]) {
    let path = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let name = std::ffi::CString::new(name).unwrap();
    // SAFETY: `path` and `name` are live NUL-terminated strings, `value` a live slice of the
    // length given.
    let rc = unsafe {
        libc::setxattr(
            path.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    assert_eq!(rc, 0, "setxattr: {}", std::io::Error::last_os_error());
}

fn has_xattr(p: &Path) -> bool {
    let path = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let name = std::ffi::CString::new(XATTR).unwrap();
    // SAFETY: `path` and `name` are live NUL-terminated strings; a null buffer of size 0 only
    // asks for the value's size.
    unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

impl Inherited {
    fn new(
        fx: &Fixture,
        case: &Case,
        pty: Option<&(OwnedFd, OwnedFd)>,
        args: &mut Vec<OsString>,
    ) -> Inherited {
        let mut me = Inherited {
            owner: fx.user.ids,
            ..Inherited::default()
        };
        let give = |p: &Path| {
            if let Some((uid, gid)) = fx.user.ids {
                std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap();
            }
        };
        if let Some((master, slave)) = pty {
            // The operator's own terminal: the user's in user mode.
            let path = pty_path(master);
            give(&path);
            let st = fs::metadata(&path).unwrap();
            args.extend([
                "--tty-id".into(),
                format!("{}:{}", st.dev(), st.rdev()).into(),
            ]);
            me.tty = Some((path, st.mode(), lflag(slave.as_raw_fd())));
        }
        if case.needs & OTHER_PTY != 0 {
            let (master, slave) = open_pty();
            let path = pty_path(&master);
            give(&path);
            // No echo: whatever the master reads afterwards was written by someone.
            // SAFETY: all-zero is a valid termios (plain integers).
            let mut t: libc::termios = unsafe { std::mem::zeroed() };
            // SAFETY: `t` is a live termios tcgetattr writes into.
            assert_eq!(unsafe { libc::tcgetattr(slave.as_raw_fd(), &mut t) }, 0);
            t.c_lflag &= !libc::ECHO;
            assert_eq!(
                // SAFETY: `t` is the termios tcgetattr filled, with only ECHO cleared.
                unsafe { libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t) },
                0
            );
            // SAFETY: `TYPED` is a static byte string and write is told its exact length.
            let n = unsafe { libc::write(master.as_raw_fd(), TYPED.as_ptr().cast(), TYPED.len()) };
            assert_eq!(n, TYPED.len() as isize);
            args.extend(["--other-pty".into(), path.clone().into()]);
            me.other = Some((master, slave, path));
        }
        if case.needs & OUTFILE != 0 {
            me.outfile = Some(fx.root.join("stdout.log"));
        }
        if case.needs & INFILE != 0 {
            let p = fx.root.join("stdin.txt");
            fs::write(&p, STDIN_LINE.repeat(10_000)).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
            give(&p);
            me.infile = Some(p);
        }
        me
    }

    /// Runs `c`; with `OUTFILE`, stdout appends to a fresh copy of the operator's log and
    /// the output is what the run added to it.
    fn run(&self, c: Command) -> Output {
        let Some(log) = &self.outfile else {
            return run(c);
        };
        fs::write(log, LOG_PREFIX).unwrap();
        fs::set_permissions(log, fs::Permissions::from_mode(0o640)).unwrap();
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(log, Some(uid), Some(gid)).unwrap();
        }
        let f = fs::OpenOptions::new().append(true).open(log).unwrap();
        let mut out = run_to(c, f.into());
        let content = fs::read(log).unwrap();
        // A control that punched a hole over the log leaves NULs in front of its line.
        out.stdout = match content.strip_prefix(LOG_PREFIX.as_bytes()) {
            Some(rest) => rest.to_vec(),
            None => content.iter().copied().skip_while(|&b| b == 0).collect(),
        };
        out
    }

    /// After a blocked attack: every object the operator handed over is as it was.
    fn unchanged(&self, mode: Mode, case: &Case, pty: Option<&(OwnedFd, OwnedFd)>) {
        let name = case.attack;
        if let (Some((path, mode_before, lflag_before)), Some((_, slave))) = (&self.tty, pty) {
            let now = fs::metadata(path).unwrap().mode();
            assert_eq!(
                now,
                *mode_before,
                "[{mode:?}] {name}: the operator's terminal {} changed mode",
                path.display()
            );
            assert_eq!(
                lflag(slave.as_raw_fd()),
                *lflag_before,
                "[{mode:?}] {name}: the operator's terminal modes changed"
            );
        }
        if let Some((master, slave, path)) = &self.other {
            let mut buf = [0u8; 256];
            // SAFETY: fcntl with integer arguments only.
            let flags = unsafe { libc::fcntl(master.as_raw_fd(), libc::F_GETFL) };
            // SAFETY: fcntl with integer arguments only (the master is ours: making it non-
            // blocking changes no one else's file).
            unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) };
            // SAFETY: `buf` is a live 256-byte buffer and read is told its length.
            let n = unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            assert!(
                n <= 0,
                "[{mode:?}] {name}: something was written to {}: {:?}",
                path.display(),
                String::from_utf8_lossy(&buf[..n.max(0) as usize])
            );
            let mut pending: libc::c_int = 0;
            assert_eq!(
                // SAFETY: FIONREAD writes one c_int, and `pending` is a live c_int.
                unsafe { libc::ioctl(slave.as_raw_fd(), libc::FIONREAD, &mut pending) },
                0
            );
            assert_eq!(
                pending as usize,
                TYPED.len(),
                "[{mode:?}] {name}: the other terminal's pending input was read"
            );
        }
        if let Some(log) = &self.outfile {
            let content = fs::read(log).unwrap();
            assert!(
                content.starts_with(LOG_PREFIX.as_bytes()) && !content.contains(&0),
                "[{mode:?}] {name}: the operator's log lost content: {:?}",
                String::from_utf8_lossy(&content)
            );
            let m = fs::metadata(log).unwrap().mode() & 0o7777;
            assert_eq!(
                m, 0o640,
                "[{mode:?}] {name}: the operator's log changed mode"
            );
            assert!(
                !has_xattr(log),
                "[{mode:?}] {name}: the operator's log got an xattr"
            );
        }
        if let Some(p) = &self.infile {
            assert_eq!(
                fs::read_to_string(p).unwrap(),
                STDIN_LINE.repeat(10_000),
                "[{mode:?}] {name}: the stdin file changed"
            );
            let m = fs::metadata(p).unwrap().mode() & 0o7777;
            assert_eq!(m, 0o640, "[{mode:?}] {name}: the stdin file changed mode");
            assert!(
                !has_xattr(p),
                "[{mode:?}] {name}: the stdin file got an xattr"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the case runner

fn run_case(mode: Mode, backend: Backend, case: &Case) {
    // Like the root mode, a setuid case needs a root harness: it fails without one.
    assert!(
        case.needs & SUID == 0 || harness_is_root().is_none(),
        "{}: only a root harness can make a setuid-root binary: run the escape suite as root \
         (CI does)",
        case.attack
    );
    let fx = Fixture::new(mode, backend);
    let mut env = Env::new(&fx, case);
    let before = fx.outside_state();

    // 1. Under the Landlock backend: blocked (or, for legit work, OK).
    let mut argv = env.argv(&bins().attack, case);
    if backend == Backend::Bwrap {
        argv.extend(os(&["--backend", "bwrap"]));
    }
    let mut c = fx.cordon(&fx.policy(), &[], &argv);
    env.apply(&mut c, case);
    let out = env.inherited.run(c);
    let line = stdout(&out);
    eprintln!("[{mode:?}] sandboxed {}: {}", case.attack, line.trim_end());
    let can_escape_unconfined = !matches!(
        match mode {
            Mode::Root => case.root,
            Mode::User => case.user,
        },
        Ctl::No
    );
    // bwrap's read-only mounts and namespaces close the Landlock gaps: there they must be blocked.
    if let Some(why) = case
        .gap
        .filter(|_| can_escape_unconfined && backend == Backend::Landlock)
    {
        assert!(
            line.starts_with("ESCAPED: "),
            "[{mode:?}] {} is documented as a Landlock limitation ({why}) but was blocked: \
             update the case and the README's list of what the backend cannot do\n{}",
            case.attack,
            describe(&out)
        );
        eprintln!("[{mode:?}] {}: documented limitation: {why}", case.attack);
        return;
    }
    let want = if case.legit { "OK: " } else { "BLOCKED: " };
    assert!(
        out.status.code() == Some(0) && line.starts_with(want),
        "[{mode:?}] {} under cordon (landlock) must print {want}…\n{}",
        case.attack,
        describe(&out)
    );
    if case.legit {
        return;
    }
    let after = fx.outside_state();
    assert_eq!(
        before, after,
        "[{mode:?}] {}: the outside directory changed although the attack reported {line}",
        case.attack
    );
    env.inherited.unchanged(mode, case, env.pty.as_ref());
    if let Some(v) = env.victim.as_mut() {
        let alive = matches!(v.0.try_wait(), Ok(None));
        assert!(
            alive,
            "[{mode:?}] {}: the process outside the sandbox died",
            case.attack
        );
    }

    // 2. The control: without a kernel sandbox the same attack must escape. It does not
    // depend on the backend, so it runs once, with the Landlock pass.
    if backend == Backend::Bwrap {
        return;
    }
    let ctl = match mode {
        Mode::Root => case.root,
        Mode::User => case.user,
    };
    let (kind, cond) = match ctl {
        Ctl::No => return,
        Ctl::Cordon => (C, None),
        Ctl::Direct => (D, None),
        Ctl::CordonIf(f) => (C, Some(f)),
        Ctl::DirectIf(f) => (D, Some(f)),
    };
    if let Some(reason) = cond.and_then(|f| f()) {
        eprintln!(
            "control of {} skipped in {mode:?} mode: {reason}",
            case.attack
        );
        return;
    }
    let mut c = match kind {
        Ctl::Direct => {
            let argv = env.argv(&bins().attack, case);
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            fx.prepare(&mut c);
            c
        }
        _ => fx.cordon(&fx.policy_none(), &[], &env.argv(&bins().attack, case)),
    };
    env.apply(&mut c, case);
    let out = env.inherited.run(c);
    let line = stdout(&out);
    eprintln!("[{mode:?}] control {}: {}", case.attack, line.trim_end());
    // Killing cordon may take our reporter with it: cordon dying of that signal is proof.
    let parent_killed = match case.attack {
        "kill-parent-term" => killed_by(&out.status, libc::SIGTERM),
        "kill-parent-kill" => killed_by(&out.status, libc::SIGKILL),
        _ => false,
    };
    assert!(
        line.starts_with("ESCAPED: ") || parent_killed,
        "[{mode:?}] control: {} without a kernel sandbox ({}) must print ESCAPED — otherwise \
         the check above proves nothing\n{}",
        case.attack,
        if matches!(kind, Ctl::Direct) {
            "run directly"
        } else {
            "backend = \"none\""
        },
        describe(&out)
    );
}

fn killed_by(st: &ExitStatus, sig: i32) -> bool {
    st.signal() == Some(sig) || st.code() == Some(128 + sig)
}

// ---------------------------------------------------------------------------------------------
// cordon exec: exit codes, timeout, fail closed

macro_rules! cli_tests {
    ($($f:ident,)*) => {
        /// cordon's exit codes and start-up, with cordon running as root.
        mod cli_as_root {
            $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Landlock); } )*
        }
        /// cordon's exit codes and start-up, with cordon running as an unprivileged user.
        mod cli_as_user {
            $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Landlock); } )*
        }
        /// The same on the bwrap backend, as root.
        mod cli_bwrap_as_root {
            $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Bwrap); } )*
        }
        /// The same on the bwrap backend, as an unprivileged user.
        mod cli_bwrap_as_user {
            $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Bwrap); } )*
        }
    };
}

cli_tests! {
    exit_status_passthrough,
    exit_status_dash_c,
    exit_on_signal,
    exit_not_found,
    exit_not_executable,
    exit_denied_by_rule,
    timeout_kills_process_group,
    fail_closed_without_landlock,
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn has_cordon_line(out: &Output) -> bool {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .any(|l| l.starts_with("cordon: "))
}

fn exit_status_passthrough(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let out = run(fx.cordon(&fx.policy(), &[], &os(&["/bin/sh", "-c", "exit 7"])));
    assert_eq!(out.status.code(), Some(7), "{}", describe(&out));
}

fn exit_status_dash_c(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let mut c = Command::new(&bins().cordon);
    c.arg("exec")
        .arg("--policy")
        .arg(fx.policy())
        .args(["-c", "echo hi > dash-c.txt; exit 3"]);
    fx.prepare(&mut c);
    let out = run(c);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert_eq!(
        fs::read_to_string(fx.ws.join("dash-c.txt")).unwrap(),
        "hi\n"
    );
}

fn exit_on_signal(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let out = run(fx.cordon(&fx.policy(), &[], &os(&["/bin/sh", "-c", "kill -TERM $$"])));
    assert_eq!(out.status.code(), Some(143), "{}", describe(&out));
}

fn exit_not_found(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    for prog in ["cordon-e2e-no-such-program", "./no-such-program"] {
        let out = run(fx.cordon(&fx.policy(), &[], &os(&[prog])));
        assert_eq!(out.status.code(), Some(127), "{prog}: {}", describe(&out));
        assert!(has_cordon_line(&out), "{prog}: {}", describe(&out));
    }
}

fn exit_not_executable(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let p = fx.ws.join("notexec.sh");
    fs::write(&p, "#!/bin/sh\necho ran > ran.txt\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    fx.chown_to_user();
    let out = run(fx.cordon(&fx.policy(), &[], &os(&["./notexec.sh"])));
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    assert!(!fx.ws.join("ran.txt").exists());
}

fn exit_denied_by_rule(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    let rule =
        "\n[[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\nreason = \"e2e: rm is denied\"\n";
    let policy = fx.policy_file("deny.toml");
    fs::write(&policy, policy_text("landlock", true, rule)).unwrap();
    fs::create_dir(fx.ws.join("keep")).unwrap();
    fx.chown_to_user();
    let out = run(fx.cordon(&policy, &[], &os(&["rm", "-rf", "keep"])));
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    assert!(has_cordon_line(&out), "{}", describe(&out));
    assert!(fx.ws.join("keep").is_dir(), "the denied command ran");
}

fn pgrep(pattern: &str) -> Vec<i32> {
    let o = Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .expect("run pgrep");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn timeout_kills_process_group(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    // A unique fractional part marks every process of this run (sleep accepts it).
    let marker = format!(
        "{}{:04}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let script = format!("sleep 60.{marker} & sleep 61.{marker}");
    let mut c = fx.cordon(
        &fx.policy(),
        &["--timeout", "1s"],
        &os(&["/bin/sh", "-c", &script]),
    );
    // Files, not pipes: a surviving grandchild must not keep us waiting for EOF.
    let out_path = fx.root.join("timeout.out");
    let err_path = fx.root.join("timeout.err");
    c.stdout(fs::File::create(&out_path).unwrap());
    c.stderr(fs::File::create(&err_path).unwrap());
    let start = Instant::now();
    let mut child = c.spawn().expect("spawn cordon");
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(120)).is_err() {
            // SAFETY: kill takes integers only. The watchdog fires only while the main thread
            // still waits on the child, so `pid` is our own unreaped child and cannot have been
            // reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let status = child.wait().unwrap();
    let _ = tx.send(());
    watchdog.join().unwrap();
    let elapsed = start.elapsed();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    let pattern = format!("\\.{marker}");
    // Killed processes disappear asynchronously: wait for that, with an upper bound far
    // below the sleeps' 60 s.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut left = pgrep(&pattern);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = pgrep(&pattern);
    }
    for p in &left {
        // SAFETY: kill takes integers only; the pids come from pgrep for this test's unique
        // marker, looked up just now (a reused pid would be a process started in the last
        // moments with that marker in its command line).
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    assert_eq!(status.code(), Some(124), "status {status}, stderr {stderr}");
    assert!(
        elapsed < Duration::from_secs(30),
        "cordon took {elapsed:?} to enforce a 1s timeout"
    );
    assert!(
        left.is_empty(),
        "processes of the timed-out command survived: {left:?}"
    );
}

fn fail_closed_without_landlock(mode: Mode, backend: Backend) {
    use seccompiler::{SeccompAction, SeccompFilter};
    let fx = Fixture::new(mode, backend);
    // A kernel without Landlock: its three syscalls answer ENOSYS.
    let rules = [
        libc::SYS_landlock_create_ruleset,
        libc::SYS_landlock_add_rule,
        libc::SYS_landlock_restrict_self,
    ]
    .into_iter()
    .map(|nr| (nr, vec![]))
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap();
    let prog: seccompiler::BpfProgram = filter.try_into().unwrap();
    let marker = fx.ws.join("marker");
    let mut c = fx.cordon(
        &fx.policy(),
        &[],
        &[OsString::from("/usr/bin/touch"), marker.clone().into()],
    );
    install_pre(
        &mut c,
        Pre {
            seccomp: Some(prog),
            ..Pre::default()
        },
    );
    let out = run(c);
    assert_eq!(out.status.code(), Some(125), "{}", describe(&out));
    assert!(has_cordon_line(&out), "{}", describe(&out));
    assert!(!marker.exists(), "cordon ran the command without a sandbox");
}

// ---------------------------------------------------------------------------------------------
// bwrap-specific checks: what only a private mount and process view can give

macro_rules! bwrap_tests {
    ($($f:ident,)*) => {
        /// Guarantees of bwrap's view (and, for protected paths, of the Landlock backend's
        /// mounts too), with cordon running as root.
        mod bwrap_only_as_root {
            $( #[test] fn $f() { super::$f(super::Mode::Root); } )*
        }
        /// The same, with cordon running as an unprivileged user.
        mod bwrap_only_as_user {
            $( #[test] fn $f() { super::$f(super::Mode::User); } )*
        }
    };
}

bwrap_tests! {
    protected_paths_stay_read_only,
    protected_paths_cannot_be_moved_away,
    audit_log_in_the_workspace_is_out_of_reach,
    default_audit_log_in_the_workspace_is_out_of_reach,
    policy_in_the_workspace_is_out_of_reach,
    tmp_is_private,
    other_processes_are_invisible,
    network_namespace_is_empty,
}

const PROTECTED: &str = "[sandbox]\nprotected = [\".git/hooks\", \".git/config\"]\n";

/// A policy like the fixture's, with `.git/hooks` and `.git/config` protected.
fn protected_policy(fx: &Fixture, backend: Backend) -> PathBuf {
    let text = policy_text(backend.name(), true, "").replacen("[sandbox]\n", PROTECTED, 1);
    let p = fx.policy_file(&format!("protected-{}.toml", backend.name()));
    fs::write(&p, text).unwrap();
    p
}

/// On both backends: bwrap's read-only mounts, and the Landlock backend's init's, made in the
/// command's own mount namespace.
fn protected_paths_stay_read_only(mode: Mode) {
    for backend in [Backend::Bwrap, Backend::Landlock] {
        protected_paths_stay_read_only_on(mode, backend);
    }
}

fn protected_paths_stay_read_only_on(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    fs::create_dir(fx.ws.join(".git")).unwrap();
    fs::write(fx.ws.join(".git/config"), "[core]\n").unwrap();
    fx.chown_to_user();
    let mode_before = fs::metadata(fx.ws.join(".git/config"))
        .unwrap()
        .permissions()
        .mode();
    let script = "echo '[core] hooksPath = /tmp' >> .git/config; \
                  mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; \
                  chmod 777 .git/config; \
                  echo fine > allowed.txt";
    let out = run(fx.cordon(
        &protected_policy(&fx, backend),
        // The kernel layer is what is tested: the shell analysis asks for these writes to
        // the persistence surface, and --approve-all answers that ask.
        &["--approve-all"],
        &os(&["/bin/sh", "-c", script]),
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/config")).unwrap(),
        "[core]\n",
        "{}",
        describe(&out)
    );
    assert!(
        !fx.ws.join(".git/hooks").exists(),
        "a protected path that did not exist was created (or its placeholder left behind)\n{}",
        describe(&out)
    );
    assert_eq!(
        fs::metadata(fx.ws.join(".git/config"))
            .unwrap()
            .permissions()
            .mode(),
        mode_before,
        "chmod reached a protected file"
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join("allowed.txt")).unwrap(),
        "fine\n",
        "the rest of the workspace stays writable\n{}",
        describe(&out)
    );
}

fn tmp_is_private(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    let host_marker = tempfile::Builder::new()
        .prefix("cordon-host-marker-")
        .tempfile_in("/tmp")
        .unwrap();
    let name = host_marker
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let inside_name = format!("cordon-inside-{}", std::process::id());
    let script = format!("ls -a /tmp; touch /tmp/{inside_name}");
    // `touch /tmp/…` is outside the roots, so the analysis asks; --approve-all answers it,
    // and what this proves is the kernel layer's private /tmp.
    let out = run(fx.cordon(
        &fx.policy(),
        &["--approve-all"],
        &os(&["/bin/sh", "-c", &script]),
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        !stdout(&out).contains(&name),
        "the host's /tmp is visible inside\n{}",
        describe(&out)
    );
    assert!(
        !Path::new("/tmp").join(&inside_name).exists(),
        "a file written to /tmp inside reached the host's /tmp"
    );
}

fn other_processes_are_invisible(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    let out = run(fx.cordon(
        &fx.policy(),
        &[],
        &os(&[
            "/bin/sh",
            "-c",
            "ls /proc | grep -c '^[0-9]'; ls -d /proc/1/ && cat /proc/1/comm",
        ]),
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    let count: usize = text.lines().next().unwrap().trim().parse().unwrap();
    // bwrap's init, sh, ls, grep: a handful, never the host's hundreds.
    assert!(
        count <= 6,
        "{count} processes visible inside\n{}",
        describe(&out)
    );
    assert_eq!(
        text.lines().nth(2),
        Some("bwrap"),
        "pid 1 inside is bwrap's init, not the host's\n{}",
        describe(&out)
    );
}

/// bwrap keeps an empty network namespace under `network = "deny"` on every kernel (issue 25:
/// its own /proc would otherwise show the host's sockets; the Landlock backend drops it).
fn network_namespace_is_empty(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    let out = run(fx.cordon(&fx.policy(), &[], &os(&["/bin/cat", "/proc/net/dev"])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let ifaces: Vec<String> = stdout(&out)
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next().map(|s| s.trim().to_string()))
        .collect();
    assert_eq!(ifaces, vec!["lo".to_string()], "{}", describe(&out));
}

/// A read-only mount moves with its parent directory: renaming `.git` away and building a
/// fresh `.git/hooks` must fail, as must removing or renaming the protected paths themselves.
fn protected_paths_cannot_be_moved_away(mode: Mode) {
    for backend in [Backend::Bwrap, Backend::Landlock] {
        protected_paths_cannot_be_moved_away_on(mode, backend);
    }
}

fn protected_paths_cannot_be_moved_away_on(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    fs::create_dir_all(fx.ws.join(".git/hooks")).unwrap();
    fs::write(fx.ws.join(".git/config"), "[core]\n").unwrap();
    fx.chown_to_user();
    let script = "mv .git .git-old; mv .git/hooks .git/h2; rm -rf .git/hooks; mv .git/config .git/c2; \
                  mkdir -p .git-new/hooks && echo evil > .git-new/hooks/pre-commit && mv .git-new .git; true";
    let out = run(fx.cordon(
        &protected_policy(&fx, backend),
        // The kernel layer is what is tested: the shell analysis asks for these writes to
        // the persistence surface, and --approve-all answers that ask.
        &["--approve-all"],
        &os(&["/bin/sh", "-c", script]),
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        !fx.ws.join(".git-old").exists(),
        "the protected tree was renamed away\n{}",
        describe(&out)
    );
    assert!(fx.ws.join(".git/hooks").is_dir(), "{}", describe(&out));
    assert!(
        !fx.ws.join(".git/hooks/pre-commit").exists(),
        "a hook was planted\n{}",
        describe(&out)
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// A policy file inside the workspace, and the remembered rules beside it, are out of the
/// command's reach: otherwise a command grants itself the next call (or a wider sandbox).
fn policy_in_the_workspace_is_out_of_reach(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    let policy = fx.ws.join("cordon.toml");
    let text = policy_text("bwrap", true, "");
    fs::write(&policy, &text).unwrap();
    fx.chown_to_user();
    let attack = "echo '[[shell.rules]]' >> cordon.toml; \
                  printf 'version = 1\\n[[shell.rules]]\\npattern = \"*\"\\naction = \"allow\"\\n' > cordon.rules.toml; \
                  mv cordon.toml gone.toml; true";
    // The shell tool refuses the writes it sees; the sandbox must stop those it cannot see.
    let out = run(fx.cordon(&policy, &[], &os(&["/bin/sh", "-c", attack])));
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    let file = fx.script("attack.sh", attack);
    // The same on the Landlock backend: its init keeps both files read-only with mounts in
    // the command's own mount namespace.
    for backend in ["bwrap", "landlock"] {
        let text = policy_text(backend, true, "");
        fs::write(&policy, &text).unwrap();
        fx.chown_to_user();
        let out = run(fx.cordon(&policy, &[], &os(&["/bin/sh", &file])));
        assert_eq!(out.status.code(), Some(0), "{backend}\n{}", describe(&out));
        assert_eq!(
            fs::read_to_string(&policy).unwrap(),
            text,
            "{backend}\n{}",
            describe(&out)
        );
        // cordon creates the rules file (header only) so that it is protected as a file.
        let rules = fs::read_to_string(fx.ws.join("cordon.rules.toml")).unwrap();
        assert!(
            rules.starts_with("# Rules remembered by cordon") && !rules.contains("pattern"),
            "{backend}: the command remembered a rule for itself: {rules}\n{}",
            describe(&out)
        );
        assert!(!fx.ws.join("gone.toml").exists(), "{backend}");
    }
}

/// A policy that names no audit log records in `$HOME/.local/state/cordon/` (no
/// XDG_STATE_HOME); run from the home directory, that lies in the workspace and must survive
/// the command it records just the same, or be refused where it cannot.
fn default_audit_log_in_the_workspace_is_out_of_reach(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    let home_run = |policy: &Path, argv: &[&str]| {
        let mut c = fx.cordon(policy, &[], &os(argv));
        c.env_remove("XDG_STATE_HOME"); // HOME is the workspace
        run(c)
    };
    let out = home_run(&fx.policy(), &["/bin/true"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let log = fx.ws.join(".local/state/cordon/audit.jsonl");
    assert!(log.is_file(), "no default log at {}", log.display());
    let attack = "truncate -s 0 .local/state/cordon/audit.jsonl; \
                  rm -f .local/state/cordon/audit.jsonl.head; \
                  echo forged >> .local/state/cordon/audit.jsonl; \
                  mv .local/state/cordon .local/state/gone; mv .local .gone; true";
    // The shell tool refuses the writes it sees; the sandbox must stop those it cannot see.
    let out = home_run(&fx.policy(), &["/bin/sh", "-c", attack]);
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    let file = fx.script("attack.sh", attack);
    let out = home_run(&fx.policy(), &["/bin/sh", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // `cordon audit verify` without a FILE reads the log `exec` writes under the policy.
    let mut verify = Command::new(&bins().cordon);
    verify
        .args(["audit", "verify", "--policy"])
        .arg(fx.policy());
    fx.prepare(&mut verify);
    verify.env_remove("XDG_STATE_HOME");
    let verify = run(verify);
    assert_eq!(verify.status.code(), Some(0), "{}", describe(&verify));
    assert!(
        String::from_utf8_lossy(&verify.stdout).contains("3 record(s)"),
        "{}",
        describe(&verify)
    );

    // A run that records elsewhere (the fixture's XDG_STATE_HOME) cannot erase this trail.
    let attack = "rm -rf .local/state/cordon; mv .local .gone; true";
    let out = run(fx.cordon(&fx.policy(), &[], &os(&["/bin/sh", "-c", attack])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 3);

    // The Landlock backend keeps it out of reach too (its init's mounts): the attack run is
    // recorded, and the log verifies.
    let out = home_run(&fx.policy_file("cordon-landlock.toml"), &["/bin/sh", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let mut verify = Command::new(&bins().cordon);
    verify
        .args(["audit", "verify", "--policy"])
        .arg(fx.policy_file("cordon-landlock.toml"));
    fx.prepare(&mut verify);
    verify.env_remove("XDG_STATE_HOME");
    let verify = run(verify);
    assert_eq!(verify.status.code(), Some(0), "{}", describe(&verify));
    assert!(
        String::from_utf8_lossy(&verify.stdout).contains("4 record(s)"),
        "{}\n{}",
        describe(&out),
        describe(&verify)
    );
}

/// An audit log inside the workspace must survive the command it records.
fn audit_log_in_the_workspace_is_out_of_reach(mode: Mode) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    let policy = fx.policy_file("audited.toml");
    fs::write(
        &policy,
        policy_text(
            "bwrap",
            true,
            "[approval]\naudit_log = \"../ws/.cordon/audit.jsonl\"\n",
        ),
    )
    .unwrap();
    fx.chown_to_user();
    let out = run(fx.cordon(&policy, &[], &os(&["/bin/true"])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let attack = "truncate -s 0 .cordon/audit.jsonl; rm -f .cordon/audit.jsonl.head; \
                  echo forged >> .cordon/audit.jsonl; mv .cordon .gone; true";
    // The shell tool refuses the writes it sees; the sandbox must stop those it cannot see.
    let out = run(fx.cordon(&policy, &[], &os(&["/bin/sh", "-c", attack])));
    assert_eq!(out.status.code(), Some(126), "{}", describe(&out));
    let file = fx.script("attack.sh", attack);
    let out = run(fx.cordon(&policy, &[], &os(&["/bin/sh", &file])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let verify = Command::new(&bins().cordon)
        .args(["audit", "verify"])
        .arg(fx.ws.join(".cordon/audit.jsonl"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&verify.stdout).into_owned()
        + &String::from_utf8_lossy(&verify.stderr);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{report}\n{}",
        describe(&out)
    );
    // `/bin/true`, the line denied by the shell tool, the script.
    assert!(report.contains("3 record(s)"), "{report}");

    // The Landlock backend keeps it out of reach too (its init's mounts): the attack run is
    // recorded, and the log verifies.
    let ll = fx.policy_file("audited-landlock.toml");
    fs::write(
        &ll,
        policy_text(
            "landlock",
            true,
            "[approval]\naudit_log = \"../ws/.cordon/audit.jsonl\"\n",
        ),
    )
    .unwrap();
    let out = run(fx.cordon(&ll, &[], &os(&["/bin/sh", &file])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let verify = Command::new(&bins().cordon)
        .args(["audit", "verify"])
        .arg(fx.ws.join(".cordon/audit.jsonl"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&verify.stdout).into_owned()
        + &String::from_utf8_lossy(&verify.stderr);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{report}\n{}",
        describe(&out)
    );
    assert!(
        report.contains("4 record(s)"),
        "{report}\n{}",
        describe(&out)
    );
}

/// A real recursive watcher in the workspace: `inotifywait -r` (Debian package
/// `inotify-tools`) watches a tree of the workspace and reports a file made three levels
/// down, on both backends, as root and as the unprivileged user. On Landlock every one of its
/// `inotify_add_watch` calls goes through cordon's supervisor.
mod recursive_watch {
    use cordon_e2e::{cordon_copied, describe, is_root, shell_exec, shell_workspace, test_user};
    use std::path::Path;

    /// Waits (up to 60 s) for the watches, makes the file, waits for its event.
    const SCRIPT: &str = "\
        command -v inotifywait >/dev/null || { echo 'inotifywait is missing: install inotify-tools' >&2; exit 2; }
        mkdir -p a/b/c
        inotifywait -r -m -e create --format '%w%f' . >events 2>err &
        w=$!
        i=0; until grep -q 'Watches established' err; do i=$((i+1)); [ $i -gt 600 ] && { cat err >&2; exit 3; }; sleep 0.1; done
        touch a/b/c/made
        i=0; until grep -q 'a/b/c/made' events; do i=$((i+1)); [ $i -gt 600 ] && { cat events err >&2; exit 4; }; sleep 0.1; done
        kill $w
        echo seen";

    fn sees_events(backend: &str, user: bool) {
        assert!(is_root(), "run the escape suite as root (CI does)");
        let cordon = cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")));
        let ids = user.then(test_user);
        let (_tmp, root) = shell_workspace("inotifywait", backend, ids);
        let out = shell_exec(cordon, &root, ids, SCRIPT).output().unwrap();
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("seen"),
            "{backend}, user {user}: {}",
            describe(&out)
        );
    }

    #[test]
    fn landlock_as_root() {
        sees_events("landlock", false);
    }

    #[test]
    fn landlock_as_user() {
        sees_events("landlock", true);
    }

    #[test]
    fn bwrap_as_root() {
        sees_events("bwrap", false);
    }

    #[test]
    fn bwrap_as_user() {
        sees_events("bwrap", true);
    }
}
