//! seccomp: a deny list that returns an errno (never kills), as data first and BPF second, so
//! the filter cordon installs and the one it prints for audit are the same list.
//!
//! [`rules`] is the data; [`compile`] turns it into one classic-BPF program (see [`bpf`] for
//! its layout: a binary search over syscall numbers, cheap for the kernel to attach).

pub mod bpf;

use cordon_policy::Network;

use crate::Error;

pub use bpf::Instruction;
pub use bpf::Program;

/// A comparison on one syscall argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgCheck {
    /// The low 32 bits equal the value (ioctl request numbers are 32-bit in the kernel, so
    /// high bits set by the caller must not dodge the rule).
    Eq32 { index: u8, value: u32 },
    /// The low 32 bits differ from the value.
    Ne32 { index: u8, value: u32 },
    /// All bits of `mask` are set in the 64-bit argument.
    HasBits { index: u8, mask: u64 },
    /// All bits of `mask` are set in the low 32 bits (file modes are 32-bit in the kernel).
    HasBits32 { index: u8, mask: u32 },
}

/// One deny rule: `name` fails with `errno` when every check in any one of `when` holds
/// (an empty `when` denies the call unconditionally).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallRule {
    pub name: &'static str,
    pub errno: i32,
    pub when: Vec<Vec<ArgCheck>>,
    /// Why the call is denied, for audit output.
    pub why: &'static str,
}

/// Namespace-creating clone flags (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET).
pub const CLONE_NEW_FLAGS: [u64; 7] = [
    0x0002_0000,
    0x0200_0000,
    0x0400_0000,
    0x0800_0000,
    0x1000_0000,
    0x2000_0000,
    0x4000_0000,
];

const S_ISUID: u32 = 0o4000;
const S_ISGID: u32 = 0o2000;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// The syscalls every confined child is denied, whatever the policy says.
const ALWAYS: &[(&str, &str)] = &[
    (
        "io_uring_setup",
        "io_uring performs I/O outside the syscall filter",
    ),
    (
        "io_uring_enter",
        "io_uring performs I/O outside the syscall filter",
    ),
    (
        "io_uring_register",
        "io_uring performs I/O outside the syscall filter",
    ),
    (
        "ptrace",
        "tracing another process reads and changes its memory",
    ),
    ("process_vm_readv", "reads another process's memory"),
    ("process_vm_writev", "writes another process's memory"),
    (
        "pidfd_getfd",
        "steals a file descriptor from another process",
    ),
    ("bpf", "loads kernel programs"),
    (
        "perf_event_open",
        "kernel and CPU profiling, a side channel",
    ),
    ("add_key", "kernel keyrings are shared outside the sandbox"),
    (
        "request_key",
        "kernel keyrings are shared outside the sandbox",
    ),
    ("keyctl", "kernel keyrings are shared outside the sandbox"),
    ("mount", "changes the filesystem view"),
    ("umount2", "changes the filesystem view"),
    ("pivot_root", "changes the filesystem root"),
    ("chroot", "changes the filesystem root"),
    ("move_mount", "new mount API"),
    ("open_tree", "new mount API"),
    ("fsopen", "new mount API"),
    ("fsconfig", "new mount API"),
    ("fsmount", "new mount API"),
    ("fspick", "new mount API"),
    ("mount_setattr", "new mount API"),
    ("unshare", "new namespaces escape the sandbox's view"),
    ("setns", "joins another namespace"),
    ("init_module", "loads kernel code"),
    ("finit_module", "loads kernel code"),
    ("delete_module", "unloads kernel code"),
    ("kexec_load", "replaces the running kernel"),
    ("kexec_file_load", "replaces the running kernel"),
    (
        "userfaultfd",
        "stalls the kernel, a building block of kernel exploits",
    ),
    (
        "open_by_handle_at",
        "opens files by handle, bypassing path checks",
    ),
    (
        "name_to_handle_at",
        "file handles, used with open_by_handle_at",
    ),
    ("reboot", "reboots the machine"),
    ("swapon", "changes system swap"),
    ("swapoff", "changes system swap"),
    ("syslog", "reads the kernel log"),
    ("acct", "process accounting is system-wide"),
    ("quotactl", "system-wide quotas"),
    ("quotactl_fd", "system-wide quotas"),
    ("settimeofday", "changes the system clock"),
    ("clock_settime", "changes the system clock"),
    ("clock_adjtime", "changes the system clock"),
    ("adjtimex", "changes the system clock"),
    ("sethostname", "changes the host name"),
    ("setdomainname", "changes the domain name"),
    ("iopl", "raw I/O port access"),
    ("ioperm", "raw I/O port access"),
    ("vhangup", "hangs up the terminal"),
    ("uselib", "obsolete loader interface"),
    ("lookup_dcookie", "kernel profiling interface"),
    ("fanotify_init", "watches the whole filesystem"),
];

/// The deny list for a profile's network setting, sorted by name. x32 syscall numbers and
/// foreign architectures are handled by the program's prologue ([`compile`]).
pub fn rules(network: Network) -> Vec<SyscallRule> {
    let mut out: Vec<SyscallRule> = ALWAYS
        .iter()
        .map(|(name, why)| SyscallRule {
            name,
            errno: libc::EPERM,
            when: vec![],
            why,
        })
        .collect();
    // Round 8 of issue 21: Landlock does not check reading extended attributes, so the value
    // of a file's attribute outside the roots (a browser download's `user.xdg.origin.url`,
    // with its tokens) was read by name. No path can be told apart here: every read of an
    // attribute answers "not supported", as a file system without them does, which copying
    // tools (cp -a, tar, Python's shutil) take in their stride.
    for name in [
        "getxattr",
        "lgetxattr",
        "fgetxattr",
        "getxattrat",
        "listxattr",
        "llistxattr",
        "flistxattr",
        "listxattrat",
    ] {
        out.push(SyscallRule {
            name,
            errno: libc::EOPNOTSUPP,
            when: vec![],
            why: "reads extended attributes, which Landlock does not check (a file's outside the roots would be read); answered as a file system without them",
        });
    }
    out.push(SyscallRule {
        name: "clone",
        errno: libc::EPERM,
        when: CLONE_NEW_FLAGS
            .iter()
            .map(|&mask| vec![ArgCheck::HasBits { index: 0, mask }])
            .collect(),
        why: "clone with namespace flags creates namespaces",
    });
    out.push(SyscallRule {
        name: "clone3",
        errno: libc::ENOSYS,
        when: vec![],
        why: "clone3's flags live in memory the filter cannot read; ENOSYS makes libc fall back to clone",
    });
    out.push(SyscallRule {
        name: "ioctl",
        errno: libc::EPERM,
        when: vec![
            vec![ArgCheck::Eq32 {
                index: 1,
                value: TIOCSTI,
            }],
            vec![ArgCheck::Eq32 {
                index: 1,
                value: TIOCLINUX,
            }],
        ],
        why: "TIOCSTI/TIOCLINUX inject keystrokes into the terminal",
    });
    // No setuid/setgid files: inside the sandbox no_new_privs makes them harmless, but one
    // left in a writable root (owned by root when cordon runs as root) escalates whoever
    // runs it later, outside. Modes are checked wherever a file gets them.
    for (name, index) in [
        ("chmod", 1),
        ("fchmod", 1),
        ("fchmodat", 2),
        ("fchmodat2", 2),
        ("creat", 1),
        ("open", 2),
        ("openat", 3),
        ("mknod", 1),
        ("mknodat", 2),
    ] {
        out.push(SyscallRule {
            name,
            errno: libc::EPERM,
            when: [S_ISUID, S_ISGID]
                .iter()
                .map(|&mask| vec![ArgCheck::HasBits32 { index, mask }])
                .collect(),
            why: "creates a setuid or setgid file",
        });
    }
    out.push(SyscallRule {
        name: "openat2",
        errno: libc::ENOSYS,
        when: vec![],
        why: "openat2's mode lives in memory the filter cannot read; ENOSYS makes callers fall back to openat",
    });
    // Limits of another process (cordon's RLIMIT_NOFILE, a host process's RLIMIT_CPU) are
    // changed without a signal and without any check Landlock makes: only pid 0 (the caller).
    out.push(SyscallRule {
        name: "prlimit64",
        errno: libc::EPERM,
        when: vec![vec![ArgCheck::Ne32 { index: 0, value: 0 }]],
        why: "changes the resource limits of another process (pid 0, the caller, is allowed)",
    });
    if network == Network::Proxy {
        // The network namespace holds nothing but loopback and the proxy's listener, and
        // Landlock (ABI 4) lets TCP connect only to the proxy's port; seccomp keeps every
        // other family out: unix sockets (a socket file of the host's, such as a container
        // daemon's, is not in the namespace), netlink (the namespace's routes and links),
        // packet and the rest.
        out.push(SyscallRule {
            name: "socket",
            errno: libc::EPERM,
            when: vec![vec![
                ArgCheck::Ne32 {
                    index: 0,
                    value: libc::AF_INET as u32,
                },
                ArgCheck::Ne32 {
                    index: 0,
                    value: libc::AF_INET6 as u32,
                },
            ]],
            why: "sandbox.network = \"proxy\": only IPv4 and IPv6 sockets, which reach nothing but the proxy's listener in the command's own network namespace",
        });
        out.push(SyscallRule {
            name: "socketpair",
            errno: libc::EPERM,
            when: vec![vec![ArgCheck::Ne32 {
                index: 0,
                value: libc::AF_UNIX as u32,
            }]],
            why: "sandbox.network = \"proxy\"; connected unix socket pairs reach nothing outside",
        });
    }
    if network == Network::Deny {
        out.push(SyscallRule {
            name: "socket",
            errno: libc::EPERM,
            when: vec![],
            why: "network denied; unix sockets too, because Landlock before ABI 9 cannot stop connect() to a socket file outside the roots",
        });
        out.push(SyscallRule {
            name: "socketpair",
            errno: libc::EPERM,
            when: vec![vec![ArgCheck::Ne32 {
                index: 0,
                value: libc::AF_UNIX as u32,
            }]],
            why: "network denied; connected unix socket pairs reach nothing outside",
        });
    }
    if network == Network::Allow {
        // The network, not the host's other processes: a socket file of the operator's
        // session (`/run/user/UID/bus`, whose systemd runs `systemd-run --user` commands
        // outside any sandbox; a container daemon's socket, root on the host) is reached by
        // connect(), which Landlock before ABI 9 does not check. Round 8 of issue 21.
        out.push(SyscallRule {
            name: "socket",
            errno: libc::EPERM,
            when: vec![vec![ArgCheck::Eq32 {
                index: 0,
                value: libc::AF_UNIX as u32,
            }]],
            why: "sandbox.network = \"allow\" gives the network, not the host's unix socket files (a session bus, a container daemon), whose connect() Landlock before ABI 9 does not check; socketpair(AF_UNIX) stays",
        });
    }
    out.sort_by(|a, b| a.name.cmp(b.name));
    out
}

/// What the Landlock backend adds when it runs without its own namespaces (see
/// [`crate::run::namespaces`]): other processes of the user are then in reach of calls that
/// need no signal and that Landlock does not check, and the host's SysV IPC objects are
/// shared. Only the caller itself (pid/who 0) may be the target; SysV IPC is refused.
pub fn host_process_rules() -> Vec<SyscallRule> {
    let self_only = |name: &'static str, index: u8, why: &'static str| SyscallRule {
        name,
        errno: libc::EPERM,
        when: vec![vec![ArgCheck::Ne32 { index, value: 0 }]],
        why,
    };
    // setpriority/ioprio_set(which, who, …): a process group or a user (every process of
    // it) is another target even with who 0.
    let which_who = |name: &'static str, process: u32, why: &'static str| SyscallRule {
        name,
        errno: libc::EPERM,
        when: vec![
            vec![ArgCheck::Ne32 {
                index: 0,
                value: process,
            }],
            vec![ArgCheck::Ne32 { index: 1, value: 0 }],
        ],
        why,
    };
    let mut out = vec![
        which_who(
            "setpriority",
            0,
            "renices another process (PRIO_PROCESS with who 0 only)",
        ),
        which_who(
            "ioprio_set",
            1,
            "changes another process's I/O priority (IOPRIO_WHO_PROCESS with who 0 only)",
        ),
        self_only("sched_setaffinity", 0, "pins another process to CPUs"),
        self_only(
            "sched_setscheduler",
            0,
            "changes another process's scheduling policy",
        ),
        self_only(
            "sched_setparam",
            0,
            "changes another process's scheduling priority",
        ),
        self_only(
            "sched_setattr",
            0,
            "changes another process's scheduling attributes",
        ),
        self_only(
            "migrate_pages",
            0,
            "moves another process's memory between NUMA nodes",
        ),
        self_only(
            "move_pages",
            0,
            "moves another process's memory between NUMA nodes",
        ),
    ];
    for name in [
        "shmget",
        "shmat",
        "shmctl",
        "shmdt",
        "msgget",
        "msgsnd",
        "msgrcv",
        "msgctl",
        "semget",
        "semop",
        "semtimedop",
        "semctl",
    ] {
        out.push(SyscallRule {
            name,
            errno: libc::EPERM,
            when: vec![],
            why: "SysV IPC objects are shared with the host without an IPC namespace",
        });
    }
    out.sort_by(|a, b| a.name.cmp(b.name));
    out
}

/// Syscalls of the deny lists that exist on x86_64 only (the generic table aarch64 uses has
/// `openat`, `fchmodat`, `mknodat` instead, which are listed too). Only these may be missing
/// from [`syscall_number`]: any other unknown name fails [`compile`].
pub const X86_64_ONLY: &[&str] = &[
    "chmod", "creat", "ioperm", "iopl", "mknod", "open", "uselib",
];

/// The syscall number of `name` on the architecture cordon was built for (None for a name
/// cordon does not know, or one of [`X86_64_ONLY`] elsewhere, e.g. `iopl` on aarch64).
pub fn syscall_number(name: &str) -> Option<i64> {
    let n = match name {
        "io_uring_setup" => libc::SYS_io_uring_setup,
        "io_uring_enter" => libc::SYS_io_uring_enter,
        "io_uring_register" => libc::SYS_io_uring_register,
        "ptrace" => libc::SYS_ptrace,
        "process_vm_readv" => libc::SYS_process_vm_readv,
        "process_vm_writev" => libc::SYS_process_vm_writev,
        "pidfd_getfd" => libc::SYS_pidfd_getfd,
        "bpf" => libc::SYS_bpf,
        "perf_event_open" => libc::SYS_perf_event_open,
        "add_key" => libc::SYS_add_key,
        "request_key" => libc::SYS_request_key,
        "keyctl" => libc::SYS_keyctl,
        "mount" => libc::SYS_mount,
        "umount2" => libc::SYS_umount2,
        "pivot_root" => libc::SYS_pivot_root,
        "chroot" => libc::SYS_chroot,
        "move_mount" => libc::SYS_move_mount,
        "open_tree" => libc::SYS_open_tree,
        "fsopen" => libc::SYS_fsopen,
        "fsconfig" => libc::SYS_fsconfig,
        "fsmount" => libc::SYS_fsmount,
        "fspick" => libc::SYS_fspick,
        "mount_setattr" => libc::SYS_mount_setattr,
        "unshare" => libc::SYS_unshare,
        "setns" => libc::SYS_setns,
        "init_module" => libc::SYS_init_module,
        "finit_module" => libc::SYS_finit_module,
        "delete_module" => libc::SYS_delete_module,
        "kexec_load" => libc::SYS_kexec_load,
        "kexec_file_load" => libc::SYS_kexec_file_load,
        "userfaultfd" => libc::SYS_userfaultfd,
        "open_by_handle_at" => libc::SYS_open_by_handle_at,
        "name_to_handle_at" => libc::SYS_name_to_handle_at,
        "reboot" => libc::SYS_reboot,
        "swapon" => libc::SYS_swapon,
        "swapoff" => libc::SYS_swapoff,
        "syslog" => libc::SYS_syslog,
        "acct" => libc::SYS_acct,
        "quotactl" => libc::SYS_quotactl,
        "quotactl_fd" => libc::SYS_quotactl_fd,
        "settimeofday" => libc::SYS_settimeofday,
        "clock_settime" => libc::SYS_clock_settime,
        "clock_adjtime" => libc::SYS_clock_adjtime,
        "adjtimex" => libc::SYS_adjtimex,
        "sethostname" => libc::SYS_sethostname,
        "setdomainname" => libc::SYS_setdomainname,
        "vhangup" => libc::SYS_vhangup,
        "lookup_dcookie" => libc::SYS_lookup_dcookie,
        "fanotify_init" => libc::SYS_fanotify_init,
        "clone" => libc::SYS_clone,
        "clone3" => libc::SYS_clone3,
        "ioctl" => libc::SYS_ioctl,
        "socket" => libc::SYS_socket,
        "socketpair" => libc::SYS_socketpair,
        "prlimit64" => libc::SYS_prlimit64,
        "setpriority" => libc::SYS_setpriority,
        "ioprio_set" => libc::SYS_ioprio_set,
        "sched_setaffinity" => libc::SYS_sched_setaffinity,
        "sched_setscheduler" => libc::SYS_sched_setscheduler,
        "sched_setparam" => libc::SYS_sched_setparam,
        "sched_setattr" => libc::SYS_sched_setattr,
        "migrate_pages" => libc::SYS_migrate_pages,
        "move_pages" => libc::SYS_move_pages,
        "shmget" => libc::SYS_shmget,
        "shmat" => libc::SYS_shmat,
        "shmctl" => libc::SYS_shmctl,
        "shmdt" => libc::SYS_shmdt,
        "msgget" => libc::SYS_msgget,
        "msgsnd" => libc::SYS_msgsnd,
        "msgrcv" => libc::SYS_msgrcv,
        "msgctl" => libc::SYS_msgctl,
        "semget" => libc::SYS_semget,
        "semop" => libc::SYS_semop,
        "semtimedop" => libc::SYS_semtimedop,
        "semctl" => libc::SYS_semctl,
        "fchmod" => libc::SYS_fchmod,
        "fchmodat" => libc::SYS_fchmodat,
        "fchmodat2" => 452, // not yet in libc for every target; the same number on x86_64 and aarch64
        "openat" => libc::SYS_openat,
        "openat2" => libc::SYS_openat2,
        "mknodat" => libc::SYS_mknodat,
        "getxattr" => libc::SYS_getxattr,
        "lgetxattr" => libc::SYS_lgetxattr,
        "fgetxattr" => libc::SYS_fgetxattr,
        "listxattr" => libc::SYS_listxattr,
        "llistxattr" => libc::SYS_llistxattr,
        "flistxattr" => libc::SYS_flistxattr,
        // Linux 6.13's *at forms, the same number on every architecture (the unified table);
        // the libc crate does not name them yet.
        "getxattrat" => 464,
        "listxattrat" => 465,
        #[cfg(target_arch = "x86_64")]
        "chmod" => libc::SYS_chmod,
        #[cfg(target_arch = "x86_64")]
        "creat" => libc::SYS_creat,
        #[cfg(target_arch = "x86_64")]
        "open" => libc::SYS_open,
        #[cfg(target_arch = "x86_64")]
        "mknod" => libc::SYS_mknod,
        #[cfg(target_arch = "x86_64")]
        "iopl" => libc::SYS_iopl,
        #[cfg(target_arch = "x86_64")]
        "ioperm" => libc::SYS_ioperm,
        #[cfg(target_arch = "x86_64")]
        "uselib" => libc::SYS_uselib,
        _ => return None,
    };
    Some(n)
}

/// Compiles the rules to the programs to install, in order: one program, whose prologue
/// refuses foreign architectures and (on x86_64) x32 numbers with EPERM, never a kill. For a
/// syscall named by several rules, the first rule (in slice order) whose `when` matches, and
/// within it the first alternative, gives the errno.
///
/// A rule naming a call [`syscall_number`] does not know is an error, never skipped (a typo
/// would leave the call open); only the [`X86_64_ONLY`] calls are left out elsewhere, where
/// they do not exist.
pub fn compile(rules: &[SyscallRule]) -> Result<Vec<Program>, Error> {
    Ok(vec![bpf::generate(rules)?])
}

/// Installs `programs` on the calling thread. Only raw syscalls, no allocation: safe between
/// fork/clone and exec. Stops at the first program the kernel refuses and returns its errno
/// (the caller must then not run the command: the filters before it stay installed, the rest
/// are missing). A program too long for `sock_fprog.len` is refused with EINVAL rather than
/// installed cut short.
///
/// # Safety
/// `no_new_privs` must already be set (or the caller must hold CAP_SYS_ADMIN), and the
/// caller must accept that from then on this thread (and whatever it execs) runs under the
/// filters: a filter cannot be removed.
pub unsafe fn install(programs: &[Program]) -> Result<(), i32> {
    for prog in programs {
        let Ok(len) = u16::try_from(prog.len()) else {
            return Err(libc::EINVAL);
        };
        let fprog = libc::sock_fprog {
            len,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: `fprog` points at `len` instructions of `prog`, which is borrowed for the
        // whole call; `Instruction` is repr(C) with the layout of `struct sock_filter`, and
        // the kernel copies (never writes) the program before returning. The caller upholds
        // the no_new_privs precondition.
        let r = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &fprog as *const libc::sock_fprog,
            )
        };
        if r != 0 {
            // SAFETY: __errno_location returns a valid pointer to this thread's errno.
            return Err(unsafe { *libc::__errno_location() });
        }
    }
    Ok(())
}

/// The Landlock backend's second program (installed after the deny list, by
/// [`install_listener`]): `inotify_add_watch` goes to cordon's supervisor
/// (`run/inotify.rs`) as a user notification, because Landlock has no right for inotify and
/// a watch outside the roots would report the names made there. Everything else is left to
/// the first program: a foreign architecture or an x32 number is allowed here and refused
/// there (the kernel takes the strictest result of all programs, and ERRNO outranks
/// USER_NOTIF).
pub fn inotify_program() -> Program {
    use bpf::{ARCH_OFFSET, AUDIT_ARCH_NATIVE, JEQ_K, LD_W_ABS, NR_OFFSET, RET_K};
    let i = |code, jt, jf, k| Instruction { code, jt, jf, k };
    vec![
        i(LD_W_ABS, 0, 0, ARCH_OFFSET),
        i(JEQ_K, 0, 3, AUDIT_ARCH_NATIVE),
        i(LD_W_ABS, 0, 0, NR_OFFSET),
        i(JEQ_K, 0, 1, libc::SYS_inotify_add_watch as u32),
        i(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
        i(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Installs `prog` with `SECCOMP_FILTER_FLAG_NEW_LISTENER` and returns the listener (a
/// close-on-exec descriptor: whoever holds it answers the calls the program notifies). Raw
/// syscalls only, no allocation: safe between fork/clone and exec. The errno on failure.
///
/// # Safety
/// As [`install`]. The caller must hand the listener on and close its own copy before the
/// command runs: a command holding it could answer its own calls.
pub unsafe fn install_listener(prog: &Program) -> Result<i32, i32> {
    let Ok(len) = u16::try_from(prog.len()) else {
        return Err(libc::EINVAL);
    };
    let fprog = libc::sock_fprog {
        len,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: as in `install`: the kernel copies `len` instructions of `prog`, borrowed for
    // the call, and returns a new descriptor of ours.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r < 0 {
        // SAFETY: __errno_location returns a valid pointer to this thread's errno.
        return Err(unsafe { *libc::__errno_location() });
    }
    Ok(r as i32)
}

/// Does this kernel accept seccomp filters? Asked of the kernel: PR_GET_SECCOMP fails with
/// EINVAL when seccomp is not built in.
pub fn kernel_supports_filters() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointers and changes nothing; the extra arguments are
    // ignored zeros.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in every list cordon installs, as the kernel's own tables know it.
    fn listed_names() -> std::collections::BTreeSet<&'static str> {
        [Network::Deny, Network::Allow, Network::Proxy]
            .into_iter()
            .flat_map(rules)
            .chain(host_process_rules())
            .map(|r| r.name)
            .collect()
    }

    #[test]
    fn every_listed_name_is_a_syscall_on_x86_64_and_aarch64() {
        use std::str::FromStr;
        for name in listed_names() {
            let x86_64 = syscalls::x86_64::Sysno::from_str(name);
            let aarch64 = syscalls::aarch64::Sysno::from_str(name);
            assert!(x86_64.is_ok(), "{name} is no x86_64 syscall");
            // X86_64_ONLY is exactly what aarch64 lacks: nothing else may be left out there.
            assert_eq!(
                aarch64.is_err(),
                X86_64_ONLY.contains(&name),
                "{name}: on aarch64 {aarch64:?}"
            );
            // This build's numbers are the kernel's (fchmodat2 is written by hand).
            let native = if cfg!(target_arch = "x86_64") {
                x86_64.ok().map(|s| s.id())
            } else {
                aarch64.ok().map(|s| s.id())
            };
            assert_eq!(syscall_number(name), native.map(i64::from), "{name}");
        }
        for name in X86_64_ONLY {
            assert!(listed_names().contains(name), "{name} is in no list");
        }
    }

    #[test]
    fn foreign_architectures_get_eperm_not_kill() {
        let progs = compile(&rules(Network::Deny)).unwrap();
        let prog: Program = progs[0]
            .iter()
            .map(|i| Instruction {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect();
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        const AUDIT_ARCH_I386: u32 = 3 | 0x4000_0000;
        const AUDIT_ARCH_AARCH64: u32 = 183 | 0x8000_0000 | 0x4000_0000;
        const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        let foreign = if cfg!(target_arch = "x86_64") {
            AUDIT_ARCH_AARCH64
        } else {
            AUDIT_ARCH_X86_64
        };
        for arch in [AUDIT_ARCH_I386, foreign, 0, u32::MAX] {
            for nr in [0, 1, 59, 101, 272, 0x4000_0000, u32::MAX] {
                let data = bpf::tests::seccomp_data(arch, nr, [0; 6]);
                assert_eq!(bpf::tests::execute(&prog, &data), eperm, "{arch:#x} {nr}");
            }
        }
        assert!(
            prog.iter().all(|i| i.code != bpf::RET_K
                || i.k == libc::SECCOMP_RET_ALLOW
                || i.k & libc::SECCOMP_RET_ACTION_FULL == libc::SECCOMP_RET_ERRNO),
            "the program returns something other than ALLOW or ERRNO"
        );
    }

    /// "allow" keeps every socket family but unix (round 8 of issue 21: a host socket file
    /// such as the session bus was reached on Landlock), and socketpair(AF_UNIX).
    #[test]
    fn network_allow_keeps_sockets_but_unix_ones() {
        assert!(rules(Network::Deny).iter().any(|r| r.name == "socket"));
        assert!(!rules(Network::Allow).iter().any(|r| r.name == "socketpair"));
        let prog = &compile(&rules(Network::Allow)).unwrap()[0];
        let arch = if cfg!(target_arch = "x86_64") {
            62 | 0x8000_0000 | 0x4000_0000
        } else {
            183 | 0x8000_0000 | 0x4000_0000
        };
        let call = |nr: libc::c_long, domain: i32| {
            let data = bpf::tests::seccomp_data(arch, nr as u32, [domain as u64, 1, 0, 0, 0, 0]);
            bpf::tests::execute(prog, &data)
        };
        for domain in [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK] {
            assert_eq!(call(libc::SYS_socket, domain), libc::SECCOMP_RET_ALLOW);
        }
        assert_eq!(
            call(libc::SYS_socket, libc::AF_UNIX),
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32
        );
        assert_eq!(
            call(libc::SYS_socketpair, libc::AF_UNIX),
            libc::SECCOMP_RET_ALLOW
        );
    }

    #[test]
    fn network_proxy_keeps_only_inet_sockets() {
        let prog = &compile(&rules(Network::Proxy)).unwrap()[0];
        let arch = if cfg!(target_arch = "x86_64") {
            62 | 0x8000_0000 | 0x4000_0000
        } else {
            183 | 0x8000_0000 | 0x4000_0000
        };
        let call = |nr: libc::c_long, domain: i32| {
            let data = bpf::tests::seccomp_data(arch, nr as u32, [domain as u64, 1, 0, 0, 0, 0]);
            bpf::tests::execute(prog, &data)
        };
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        for domain in [libc::AF_INET, libc::AF_INET6] {
            assert_eq!(call(libc::SYS_socket, domain), libc::SECCOMP_RET_ALLOW);
        }
        for domain in [
            libc::AF_UNIX,
            libc::AF_NETLINK,
            libc::AF_PACKET,
            libc::AF_VSOCK,
        ] {
            assert_eq!(call(libc::SYS_socket, domain), eperm, "{domain}");
        }
        assert_eq!(
            call(libc::SYS_socketpair, libc::AF_UNIX),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(call(libc::SYS_socketpair, libc::AF_INET), eperm);
    }

    /// The inotify program notifies inotify_add_watch only, and only for native numbers (the
    /// deny list refuses the rest).
    #[test]
    fn inotify_program_notifies_inotify_add_watch_only() {
        let prog = inotify_program();
        let native = bpf::AUDIT_ARCH_NATIVE;
        let run = |arch, nr: libc::c_long| {
            bpf::tests::execute(&prog, &bpf::tests::seccomp_data(arch, nr as u32, [0; 6]))
        };
        let watch = libc::SYS_inotify_add_watch;
        assert_eq!(run(native, watch), libc::SECCOMP_RET_USER_NOTIF);
        for nr in [libc::SYS_inotify_init1, libc::SYS_openat, libc::SYS_read, 0] {
            assert_eq!(run(native, nr), libc::SECCOMP_RET_ALLOW, "{nr}");
        }
        assert_eq!(run(3 | 0x4000_0000, watch), libc::SECCOMP_RET_ALLOW);
    }

    /// Fail closed: a call the program notifies, with no listener left (the supervisor gone
    /// while the call waits, or before the call), fails with ENOSYS. On the real kernel, in a
    /// forked child (the filter cannot be removed); the watch succeeds unfiltered first.
    #[test]
    fn a_notified_call_without_its_listener_fails_with_enosys() {
        let prog = inotify_program();
        // SAFETY: the child makes raw system calls only on memory allocated before the fork
        // (`prog`, C string literals), then `_exit`s; the parent waits for it.
        let child = unsafe { libc::fork() };
        assert!(child >= 0);
        if child == 0 {
            // SAFETY: as above; every descriptor is the child's own.
            unsafe {
                let fd = libc::inotify_init1(libc::IN_CLOEXEC);
                // Unfiltered, the watch works (so ENOSYS below is the filter's doing).
                if fd < 0 || libc::inotify_add_watch(fd, c"/".as_ptr(), libc::IN_CREATE) < 0 {
                    libc::_exit(10);
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    libc::_exit(11);
                }
                let Ok(listener) = install_listener(&prog) else {
                    libc::_exit(12)
                };
                // The listener is held by a grandchild that waits for the call to be pending
                // and then exits without answering.
                let holder = libc::fork();
                if holder == 0 {
                    let mut p = libc::pollfd {
                        fd: listener,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    libc::poll(&mut p, 1, 60_000);
                    libc::_exit(0);
                }
                libc::close(listener);
                let pending = libc::inotify_add_watch(fd, c"/".as_ptr(), libc::IN_CREATE);
                let pending_errno = *libc::__errno_location();
                let mut st = 0;
                libc::waitpid(holder, &mut st, 0);
                // And with no listener at all.
                let after = libc::inotify_add_watch(fd, c"/".as_ptr(), libc::IN_CREATE);
                let after_errno = *libc::__errno_location();
                let ok = pending == -1
                    && pending_errno == libc::ENOSYS
                    && after == -1
                    && after_errno == libc::ENOSYS;
                libc::_exit(if ok { 0 } else { 1 });
            }
        }
        let mut st = 0;
        // SAFETY: waitpid writes one int; `child` is ours.
        assert_eq!(unsafe { libc::waitpid(child, &mut st, 0) }, child);
        assert!(libc::WIFEXITED(st), "{st:#x}");
        assert_eq!(libc::WEXITSTATUS(st), 0);
    }

    #[test]
    fn compiles_to_one_program() {
        for network in [Network::Deny, Network::Allow, Network::Proxy] {
            let progs = compile(&rules(network)).unwrap();
            assert_eq!(progs.len(), 1);
            assert!(!progs[0].is_empty() && progs[0].len() < bpf::MAX_INSTRUCTIONS);
        }
    }
}
