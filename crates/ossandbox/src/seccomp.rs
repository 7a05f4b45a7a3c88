//! seccomp: a deny list that returns an errno (never kills), as data first and BPF second, so
//! the filter cordon installs and the one it prints for audit are the same list.

use std::collections::BTreeMap;

use cordon_policy::Network;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::Error;

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
    out.sort_by(|a, b| a.name.cmp(b.name));
    out
}

/// The syscall number of `name` on the architecture cordon was built for (None where the
/// call does not exist there, e.g. `iopl` on aarch64).
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
        "fchmod" => libc::SYS_fchmod,
        "fchmodat" => libc::SYS_fchmodat,
        "fchmodat2" => 452, // not yet in libc for every target; the same number on x86_64 and aarch64
        "openat" => libc::SYS_openat,
        "openat2" => libc::SYS_openat2,
        "mknodat" => libc::SYS_mknodat,
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

#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: TargetArch = TargetArch::aarch64;

/// AUDIT_ARCH_X86_64; x32 syscalls arrive with this arch and bit 30 set in the number.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_NATIVE: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Compiles the rules to the BPF programs to install, in order. Each program has one errno,
/// so rules are grouped by errno. Every program starts with seccompiler's architecture check;
/// a foreign ABI (i386 `int 0x80` from a 64-bit process) must never reach the per-ABI deny
/// list, and we make that check return EPERM instead of killing (the brief: refuse, never
/// kill). On x86_64 a first program refuses x32 numbers, which the native-arch check would
/// otherwise let through.
pub fn compile(rules: &[SyscallRule]) -> Result<Vec<BpfProgram>, Error> {
    let mut programs = Vec::new();
    #[cfg(target_arch = "x86_64")]
    programs.push(x32_guard());

    let mut by_errno: BTreeMap<i32, BTreeMap<i64, Vec<SeccompRule>>> = BTreeMap::new();
    for rule in rules {
        let Some(nr) = syscall_number(rule.name) else {
            continue;
        };
        let chains = by_errno
            .entry(rule.errno)
            .or_default()
            .entry(nr)
            .or_default();
        for checks in &rule.when {
            let conds = checks
                .iter()
                .map(condition)
                .collect::<Result<Vec<_>, _>>()?;
            chains.push(SeccompRule::new(conds).map_err(|e| Error::Seccomp(e.to_string()))?);
        }
    }
    for (errno, map) in by_errno {
        let filter = SeccompFilter::new(
            map,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            NATIVE_ARCH,
        )
        .map_err(|e| Error::Seccomp(e.to_string()))?;
        let mut prog: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| Error::Seccomp(e.to_string()))?;
        refuse_foreign_arch(&mut prog)?;
        programs.push(prog);
    }
    Ok(programs)
}

/// seccompiler's programs open with `ld arch; jeq NATIVE, +1; ret KILL_PROCESS`. Turn that
/// kill into EPERM, after checking the prologue is exactly that (a different seccompiler
/// must not be patched blindly).
fn refuse_foreign_arch(prog: &mut BpfProgram) -> Result<(), Error> {
    const RET_K: u16 = 0x06;
    match prog.get_mut(2) {
        Some(ins) if ins.code == RET_K && ins.k == libc::SECCOMP_RET_KILL_PROCESS => {
            ins.k = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
            Ok(())
        }
        _ => Err(Error::Seccomp(
            "unexpected program prologue from seccompiler; refusing to install".into(),
        )),
    }
}

fn condition(check: &ArgCheck) -> Result<SeccompCondition, Error> {
    let (index, len, op, value) = match *check {
        ArgCheck::Eq32 { index, value } => (
            index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            value as u64,
        ),
        ArgCheck::Ne32 { index, value } => (
            index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            value as u64,
        ),
        ArgCheck::HasBits { index, mask } => (
            index,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(mask),
            mask,
        ),
        ArgCheck::HasBits32 { index, mask } => (
            index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(mask as u64),
            mask as u64,
        ),
    };
    SeccompCondition::new(index, len, op, value).map_err(|e| Error::Seccomp(e.to_string()))
}

/// `if arch == x86_64 && nr >= X32_SYSCALL_BIT { return EPERM }`, else allow (other filters decide).
#[cfg(target_arch = "x86_64")]
fn x32_guard() -> BpfProgram {
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        ins(LD_W_ABS, 0, 0, 4),              // A = seccomp_data.arch
        ins(JEQ_K, 0, 3, AUDIT_ARCH_NATIVE), // not x86_64: allow (next program kills)
        ins(LD_W_ABS, 0, 0, 0),              // A = seccomp_data.nr
        ins(JGE_K, 0, 1, X32_SYSCALL_BIT),   // x32 number?
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Installs `programs` on the calling thread. Only raw syscalls: safe after fork.
///
/// # Safety
/// `no_new_privs` must already be set (or the caller must hold CAP_SYS_ADMIN).
pub unsafe fn install(programs: &[BpfProgram]) -> Result<(), i32> {
    for prog in programs {
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        let r = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &fprog as *const libc::sock_fprog,
        );
        if r != 0 {
            return Err(*libc::__errno_location());
        }
    }
    Ok(())
}

/// Does this kernel accept seccomp filters? Asked of the kernel: PR_GET_SECCOMP fails with
/// EINVAL when seccomp is not built in.
pub fn kernel_supports_filters() -> bool {
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_known_on_this_architecture() {
        for rule in rules(Network::Deny) {
            #[cfg(not(target_arch = "x86_64"))]
            if matches!(
                rule.name,
                "iopl" | "ioperm" | "uselib" | "chmod" | "creat" | "open" | "mknod"
            ) {
                continue;
            }
            assert!(
                syscall_number(rule.name).is_some(),
                "no number for {}",
                rule.name
            );
        }
    }

    #[test]
    fn foreign_architectures_get_eperm_not_kill() {
        for prog in compile(&rules(Network::Deny)).unwrap() {
            assert!(
                prog.iter()
                    .all(|i| i.code != 0x06 || i.k != libc::SECCOMP_RET_KILL_PROCESS),
                "a program still kills"
            );
        }
    }

    #[test]
    fn network_allow_keeps_sockets() {
        assert!(rules(Network::Deny).iter().any(|r| r.name == "socket"));
        assert!(!rules(Network::Allow)
            .iter()
            .any(|r| r.name == "socket" || r.name == "socketpair"));
    }

    #[test]
    fn compiles_to_grouped_programs() {
        let progs = compile(&rules(Network::Deny)).unwrap();
        // x32 guard (x86_64), EPERM group, ENOSYS group.
        let expected = if cfg!(target_arch = "x86_64") { 3 } else { 2 };
        assert_eq!(progs.len(), expected);
        assert!(progs.iter().all(|p| !p.is_empty() && p.len() < 4096));
    }
}
