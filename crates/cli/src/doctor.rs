//! `cordon doctor`: what this machine can enforce, from live probes.

use cordon_ossandbox::Machine;

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
    let f = Machine::live_probes().remove(0);
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
    // landlock, seccomp, user namespaces, bwrap, own namespaces, proxy netns.
    let findings = Machine::live_probes();
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
    let machine = Machine::probe();
    let abi = machine.landlock_abi;

    println!("backends:");
    let landlock_line = match (landlock_ok && seccomp_ok, machine.landlock_gaps()) {
        (false, _) => "unavailable: needs both Landlock and seccomp; policies with require_os_sandbox = true are refused (exit 125)".to_string(),
        (true, Some(gaps)) if gaps.is_empty() => format!("full (Landlock ABI {abi}): filesystem roots, TCP, signal and abstract-socket scoping, seccomp deny list"),
        (true, Some(gaps)) => format!(
            "partial (Landlock ABI {abi}) — cannot restrict: {}; refused while require_os_sandbox = true",
            gaps.iter().map(|(what, abi)| format!("{what} (ABI {abi})")).collect::<Vec<_>>().join(", ")
        ),
        (true, None) => "unavailable: no Landlock".to_string(),
    };
    println!("  {:<9} {landlock_line}", "landlock");
    let namespaces_ok = findings[4].ok;
    // Protected paths on Landlock: mounts its init makes in the command's own mount namespace
    // (the live probe made one; `own_namespaces` is the cheap reading `auto` goes by).
    let protects = namespaces_ok && machine.own_namespaces;
    if landlock_ok && seccomp_ok {
        if namespaces_ok {
            println!("  {:<9} + own PID, IPC, mount namespaces (and a network one where network = \"deny\" below says so): other processes, the host's SysV IPC and sockets are out of reach, zombies are reaped, and the whole tree dies with the command, on SIGTERM (after a grace period) or with cordon", "");
        }
        if namespaces_ok {
            println!("  {:<9} + a devpts instance of the command's own on /dev/pts (at most {} ptys): a pty it makes (script, ssh -t, expect) is its own, and the host's terminals are not in its view", "", cordon_ossandbox::PTY_MAX.to_string_lossy());
        }
        if protects {
            println!("  {:<9} + the whole mount tree read-only in that namespace but for the writable roots (and the fresh /proc, read-only as a whole): no system file's, kernel /proc entry's or host device node's mode, owner or times can change, as root either (EROFS)", "");
            println!("  {:<9} + protected paths (sandbox.protected, sandbox.git = \"protect\", a ro root inside a rw root, the policy file and its cordon.rules.toml, the audit log and the trust store inside a rw root) kept read-only by bind mounts its init makes in that mount namespace before the command starts (the audit log hidden); Landlock forbids the command to mount or unmount", "");
        }
        if !namespaces_ok && machine.own_namespaces {
            // What `cordon profile` reports rests on `own_namespaces`: a run never gets less.
            println!("  {:<9} + the kernel refused the namespaces (probe above) although this machine's settings allow them: every landlock run is refused (exit 125) rather than run without them and the read-only mount tree; find what refuses them, or use --backend bwrap", "");
        } else if !namespaces_ok {
            println!("  {:<9} + no namespaces here: the landlock backend falls back to seccomp filters, which refuse prlimit64/setpriority/sched_set*/ioprio_set on other processes and all SysV IPC", "");
        }
    }
    let bwrap_line = match (findings[3].ok, landlock_ok && seccomp_ok) {
        (true, true) => "available: private mount view (protected paths stay read-only, private /tmp), PID/IPC/UTS namespaces (network: see below), with Landlock + seccomp inside",
        (true, false) => "bwrap runs, but Landlock and seccomp are needed inside as well: unavailable",
        (false, _) if protects => "unavailable (see the bwrap probe above)",
        (false, _) => "unavailable (see the bwrap probe above); policies with sandbox.protected are refused",
    };
    println!("  {:<9} {bwrap_line}", "bwrap");
    println!("  {:<9} macOS only", "seatbelt");
    let root = rustix::process::geteuid().is_root();
    let auto = match (landlock_ok && seccomp_ok, findings[3].ok, root) {
        (false, _, _) => "none available: runs are refused unless require_os_sandbox = false",
        (true, _, true) if protects => "landlock (running as root: its init's read-only mount tree keeps system files' metadata; protected paths kept read-only by its own mounts)",
        (true, true, true) => "bwrap (running as root: only read-only mounts keep root from changing system files' metadata, and the landlock backend cannot make its mount namespace here)",
        (true, _, false) if protects => "landlock (protected paths kept read-only by its own mounts)",
        (true, true, false) => "landlock; bwrap for policies with protected paths",
        (true, false, true) => "refused: as root only read-only mounts keep system files' metadata safe; the landlock backend cannot make its mount namespace here and bubblewrap is missing (Debian package `bubblewrap`); --backend landlock accepts the weaker backend",
        (true, false, false) => "landlock; policies with protected paths are refused",
    };
    // Inside an outer sandbox that leaves root no capabilities (Codex's, as root), bwrap
    // cannot start; Landlock runs when the outer keeps the system read-only (the plan's
    // choice, `cordon_ossandbox::Outer`).
    let nested;
    let auto = match &machine.outer {
        Some(o)
            if root
                && machine.bwrap.is_some()
                && machine.bwrap_usable().is_none()
                && o.system_read_only
                && landlock_ok
                && seccomp_ok =>
        {
            nested = format!(
                "landlock, with a named gap (bubblewrap cannot start inside {}, which keeps /etc and /usr read-only); policies with protected paths on its writable mounts are refused",
                o.name
            );
            nested.as_str()
        }
        _ => auto,
    };
    println!("  {:<9} -> {auto}", "auto");
    // sandbox.network = "deny" (the default): a network namespace only where seccomp and
    // this kernel's Landlock cannot keep the command off the network alone (issue 25).
    if landlock_ok && seccomp_ok {
        println!("network = \"deny\" (the default):");
        let deny = |backend: &cordon_ossandbox::Chosen| {
            cordon_ossandbox::network_isolation(cordon_policy::Network::Deny, backend, false)
        };
        println!(
            "  {:<9} {}",
            "landlock",
            deny(&cordon_ossandbox::Chosen::Landlock { abi })
        );
        if findings[3].ok {
            let bwrap = cordon_ossandbox::Chosen::Bwrap {
                bwrap: machine.bwrap.clone().unwrap_or_default(),
                abi,
            };
            println!("  {:<9} {}", "bwrap", deny(&bwrap));
        }
    }
    // sandbox.network = "proxy": a network namespace with only loopback, where the proxy's
    // listener is the one way out; refused where it cannot be made.
    let proxy_ok = findings[5].ok;
    let proxy_on = |backend_ok: bool| {
        match (backend_ok, proxy_ok) {
        (true, true) if abi >= 4 => "enforced: own network namespace, loopback only, the proxy's listener made inside before the command starts; TCP connect to its port only (Landlock ABI 4), IPv4/IPv6 sockets only (seccomp)",
        (true, true) => "enforced by the network namespace (loopback only, the proxy's listener made inside before the command starts) and seccomp (IPv4/IPv6 sockets only); Landlock before ABI 4 cannot narrow TCP ports",
        (true, false) => "refused (exit 125): no network namespace with the proxy's listener can be made here (see the proxy netns probe)",
        (false, _) => "refused: the backend is unavailable",
    }
    };
    println!("network = \"proxy\" (only cordon's proxy is reachable):");
    println!(
        "  {:<9} {}",
        "landlock",
        proxy_on(landlock_ok && seccomp_ok)
    );
    println!(
        "  {:<9} {}",
        "bwrap",
        proxy_on(findings[3].ok && landlock_ok && seccomp_ok)
    );
    println!(
        "  {:<9} refused: the command could go around the proxy",
        "none"
    );

    println!(
        "what the landlock backend alone cannot do (bwrap closes all but the unix-socket one):"
    );
    if !protects {
        println!("  - keep a path inside a writable root read-only (it needs a mount namespace of its own, unavailable here): policies with sandbox.protected or sandbox.git = \"protect\", a ro root inside a rw root, or the policy file, its cordon.rules.toml, the audit log or the trust store inside a rw root are refused");
    }
    if abi < 9 {
        println!("  - restrict connect() to unix socket files (Landlock ABI 9): while network = \"deny\", seccomp refuses socket() entirely; socketpair() still works");
    }
    if !protects {
        println!("  - stop chmod/utime/setxattr on files the caller owns outside the roots (no Landlock right covers metadata, and the read-only mount tree needs a mount namespace of its own, unavailable here; as root this includes system files and the host's /dev/null, so `auto` as root needs bwrap; set-id bits are refused by seccomp)");
    }
    if !namespaces_ok && !machine.own_namespaces {
        println!("  - without namespaces (probe above): hide other processes and the host's sockets in /proc (memory, environment and fds stay protected by Landlock's ptrace rules), or kill a setsid daemon when cordon itself is SIGKILLed; pthread/renice calls naming a pid (not 0) are refused");
    }
    if !namespaces_ok && !machine.own_namespaces {
        println!("  - without namespaces: let a program open a new pty itself (script, ssh -t, expect): the host's /dev/pts holds every terminal of the machine and is never granted; the command's own terminal is a pty cordon opens for it (bwrap: its /dev/pts is private)");
    }
    println!("on both Linux backends, refused (exit 125) rather than followed: a root, extra_read or protected path reached through a symlink inside a writable root (a run could have planted it), and a protected file, or one in a protected directory, with a second name (a hard link)");
    println!("on every backend: writable roots that are, hold or lie in a system directory (/proc, /sys, /dev, /etc, /boot, /run, /usr, /bin, /sbin, /lib*, /var except /var/tmp, /nix, /root and /home themselves) are refused; LANG, LANGUAGE and LC_* pass only as locale names");
    println!("bwrap also: the fresh /proc read-only (the landlock backend too, where it makes its mount namespace); as root the sandbox's own device nodes (landlock: the host's, read-only mount: they work, their metadata cannot change); an audit log in a writable root hidden (by the landlock backend too, where it keeps protected paths)");
    println!("after every run, on every backend: what the run left in the writable roots that makes the operator's tools run code (a .git directory or its config, commondir, hooks, modules, worktrees; a bare repository; a gitlink; .envrc; editor tasks and settings; coding agents' hook and MCP settings: .claude, .mcp.json, .gemini, .codex) is moved aside, warned about and recorded in the audit log");
    println!("agent hosts (cordon hook):");
    if let Ok(cwd) = std::env::current_dir() {
        for line in
            crate::install::report(&cwd, &|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        {
            println!("{line}");
        }
        for line in
            crate::install_file::report(&cwd, &|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        {
            println!("{line}");
        }
        println!("MCP servers (cordon mcp wrap):");
        for line in
            crate::install_mcp::report(&cwd, &|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        {
            println!("{line}");
        }
    }
    if landlock_ok && seccomp_ok {
        0
    } else {
        1
    }
}
