//! `cordon doctor`: what this machine can enforce, from live probes.

#[cfg(target_os = "linux")]
use cordon_ossandbox::landlock::{enforcement, Enforcement};
use cordon_ossandbox::probe;
#[cfg(target_os = "linux")]
use cordon_policy::Network;

/// What `cordon doctor` cannot prove on macOS, and what the Seatbelt backend does not do.
#[cfg(target_os = "macos")]
const MACOS_NOTES: &[&str] = &[
    "not verified here:",
    "  - cordon's tests run on Linux; on macOS its Seatbelt path is type-checked, not tested.",
    "    The probe above shows that sandbox-exec confines; `cordon profile --format seatbelt`",
    "    prints the exact profile a run would use.",
    "what the seatbelt backend cannot do:",
    "  - kill a descendant that started its own session, or the command when cordon itself",
    "    is SIGKILLed (no subreaper or parent-death signal on macOS); both stay sandboxed",
    "  - enforce sandbox.limits.memory (macOS ignores RLIMIT_AS): such policies are refused",
    "  - allow hard links (link(2)): refused everywhere; git and cargo rename or copy instead",
];

/// On macOS: whether `sandbox-exec` runs and confines, proved by running it.
#[cfg(target_os = "macos")]
pub fn run() -> i32 {
    let f = probe::sandbox_exec_enforces();
    println!("cordon doctor: live probes on this machine");
    println!(
        "  {:<16} {:<4} {}",
        f.name,
        if f.ok { "ok" } else { "no" },
        f.detail
    );
    println!("backends:");
    if f.ok {
        println!(
            "  seatbelt  available: Seatbelt profile from the policy, run by /usr/bin/sandbox-exec"
        );
    } else {
        println!(
            "  seatbelt  unavailable: runs are refused (exit 125); there is no weaker fallback"
        );
    }
    println!("  landlock  Linux only");
    println!("  bwrap     Linux only");
    println!(
        "  auto      -> {}",
        if f.ok { "seatbelt" } else { "none available" }
    );
    for line in MACOS_NOTES {
        println!("{line}");
    }
    if f.ok {
        0
    } else {
        1
    }
}

#[cfg(target_os = "linux")]
pub fn run() -> i32 {
    let findings = [
        probe::landlock_enforces(),
        probe::seccomp_enforces(),
        probe::user_namespaces(),
        probe::bwrap_runs(),
    ];
    println!("cordon doctor: live probes on this machine");
    for f in &findings {
        println!(
            "  {:<16} {:<4} {}",
            f.name,
            if f.ok { "ok" } else { "no" },
            f.detail
        );
    }
    let landlock_ok = findings[0].ok;
    let seccomp_ok = findings[1].ok;
    let abi = cordon_ossandbox::landlock::kernel_abi();

    println!("backends:");
    let landlock_line = match (landlock_ok && seccomp_ok, enforcement(abi, Network::Deny)) {
        (false, _) => "unavailable: needs both Landlock and seccomp; policies with require_os_sandbox = true are refused (exit 125)".to_string(),
        (true, Enforcement::Full) => format!("full (Landlock ABI {abi}): filesystem roots, TCP, signal and abstract-socket scoping, seccomp deny list"),
        (true, Enforcement::Partial(gaps)) => format!(
            "partial (Landlock ABI {abi}) — cannot restrict: {}; refused while require_os_sandbox = true",
            gaps.iter().map(|g| format!("{} (ABI {})", g.what, g.needs_abi)).collect::<Vec<_>>().join(", ")
        ),
        (true, Enforcement::None) => "unavailable: no Landlock".to_string(),
    };
    println!("  {:<9} {landlock_line}", "landlock");
    let bwrap_line = match (findings[3].ok, landlock_ok && seccomp_ok) {
        (true, true) => "available: private mount view (protected paths stay read-only, private /tmp), PID/IPC/UTS/net namespaces, with Landlock + seccomp inside",
        (true, false) => "bwrap runs, but Landlock and seccomp are needed inside as well: unavailable",
        (false, _) => "unavailable (see the bwrap probe above); policies with sandbox.protected are refused",
    };
    println!("  {:<9} {bwrap_line}", "bwrap");
    println!("  {:<9} macOS only", "seatbelt");
    let root = unsafe { libc::geteuid() } == 0;
    let auto = match (landlock_ok && seccomp_ok, findings[3].ok, root) {
        (false, _, _) => "none available: runs are refused unless require_os_sandbox = false",
        (true, true, true) => "bwrap (running as root: only read-only mounts keep root from changing system files' metadata)",
        (true, true, false) => "landlock; bwrap for policies with protected paths",
        (true, false, _) => "landlock; policies with protected paths are refused",
    };
    println!("  {:<9} -> {auto}", "auto");

    println!("what the landlock backend alone cannot do (bwrap closes the first and the third):");
    println!("  - keep a path inside a writable root read-only: policies with sandbox.protected, a ro root inside a rw root, or the policy file, its cordon.rules.toml or the audit log inside a rw root are refused");
    if abi < 9 {
        println!("  - restrict connect() to unix socket files (Landlock ABI 9): while network = \"deny\", seccomp refuses socket() entirely; socketpair() still works");
    }
    println!("  - stop chmod/utime/setxattr on files the caller owns outside the roots (no Landlock right covers metadata; as root this includes system files; set-id bits are refused by seccomp)");
    println!("  - hide other processes' command lines in /proc (their memory, environment and fds are protected by Landlock's ptrace rules)");
    println!("  - let a program open a new pty itself (script, ssh -t, expect): the host's /dev/pts holds every terminal of the machine and is never granted; the command's own terminal is a pty cordon opens for it (bwrap: its /dev/pts is private)");
    if landlock_ok && seccomp_ok {
        0
    } else {
        1
    }
}
