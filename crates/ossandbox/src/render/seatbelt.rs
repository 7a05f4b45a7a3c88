//! Seatbelt (macOS): the profile as SBPL text for `/usr/bin/sandbox-exec -p TEXT -D KEY=VALUE…
//! -- cmd`.
//!
//! The profile starts from `(deny default)` and allows what a command-line program needs to
//! start, the policy's roots, and the network only when the policy allows it. Protected
//! paths are denied after every allow (in SBPL the later matching rule wins), which keeps
//! them read-only inside writable roots and keeps them from being created.
//!
//! **No path from the policy or the machine is ever part of the text.** Each one is a
//! parameter (`RW_0`, `RO_1`, `PROTECTED_0`, …) referenced as `(param "RW_0")` and passed as
//! `-D RW_0=/path`. Paths containing `"`, `\`, NUL, a newline or any other control character
//! are refused with [`Error::UnsafePath`] all the same: such values make `-D` handling
//! ambiguous, and the brief requires that they are rejected, not escaped. Only cordon's own
//! constants (the macOS system paths below) appear literally.
//!
//! **Paths are matched as Seatbelt sees them: resolved.** Seatbelt compares a rule with the
//! real path of the file, so a rule on a symlinked path never matches. On macOS `/tmp`,
//! `/var` and `/etc` are symlinks into `/private`, and `TMPDIR` lives under `/var/folders`.
//! Two layers take care of it:
//! - at run time on macOS, [`crate::seatbelt::resolve_paths`] resolves every path of the
//!   profile with `realpath(3)` (a path that does not exist yet, such as a protected path,
//!   by its deepest existing ancestor) before this renderer runs, and so does `cordon
//!   profile` on macOS;
//! - this renderer then rewrites parameter values under `/tmp`, `/var` and `/etc` to
//!   `/private/...`. After `realpath` this changes nothing; it matters when the profile is
//!   rendered on Linux (`cordon profile --format seatbelt`, the checked-in artifacts), where
//!   the paths are the Linux machine's: there the output shows where those paths would be
//!   on macOS, but other symlinks on a Mac (a workspace under a symlinked directory) can
//!   only be resolved on that Mac.
//!
//! The [`Profile`]'s system rules are Linux paths (`/lib`, `/etc/ld.so.cache`, …). When the
//! profile has any rule from `sandbox.system_read`, those rules are replaced by the macOS
//! lists in this module ([`MACOS_PROGRAMS`], [`MACOS_CONFIGURATION`], [`MACOS_DEVICES`]);
//! rules from the policy's own keys are rendered as they are.
//!
//! Seatbelt matches names, not inodes, so the profile also closes the ways a protected file
//! could get a writable name:
//! - **hard links** (`file-link`) are never allowed, anywhere. A link rule can be checked
//!   against one path of the two a `link(2)` involves, and which one is undocumented (Apple's
//!   own platform policy suggests the existing file, but that could not be verified here).
//!   If it were the new name, allowing links inside writable roots would let a protected or
//!   read-only file get a writable name. Programs that use hard links fall back when
//!   `link(2)` fails: git writes objects with `rename(2)` when `link(2)` fails, cargo and
//!   Rust's `std::fs::copy` copy instead; `ln` without `-s` fails with EPERM. Protected
//!   paths deny `file-link` explicitly as well, so they stay covered if a later version of
//!   this profile allows links elsewhere;
//! - **swapping a directory** (rename it away, edit, rename it back): the writable root that
//!   holds a protected path and every directory between them cannot be created, removed,
//!   renamed or replaced.
//!
//! This generator is tested by golden files and by parsing its output on Linux. The run-time
//! path that uses it ([`crate::seatbelt`]) is type-checked for macOS but has not been run by
//! cordon's own tests, which run on Linux.

// Parts serve only the macOS runner (`crate::seatbelt`); on Linux they are built and tested.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cordon_policy::Network;

use super::comment_text;
use crate::profile::{PathRule, Profile};
use crate::Error;

/// A rendered Seatbelt profile: the SBPL text and the `-D` parameters it references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seatbelt {
    /// SBPL for `sandbox-exec -p`.
    pub text: String,
    /// `(NAME, VALUE)` pairs for `-DNAME=VALUE`, in the order the text first uses them.
    pub params: Vec<(String, String)>,
}

impl Seatbelt {
    /// The `sandbox-exec` arguments that come before `-- cmd`: `-p TEXT -DNAME=VALUE…`.
    /// Each parameter is one argument: the option letter and the value cannot be pulled
    /// apart, whatever the value starts with.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["-p".to_string(), self.text.clone()];
        for (k, v) in &self.params {
            args.push(format!("-D{k}={v}"));
        }
        args
    }

    /// The text followed by its parameters as comments: what `cordon profile --format
    /// seatbelt` prints. (Parameter values appear only in this trailer, never in `text`.)
    pub fn audit(&self) -> String {
        let mut out = self.text.clone();
        out.push_str("\n; Parameters, passed as -DNAME=VALUE (never part of the text above):\n");
        for (k, v) in &self.params {
            let _ = writeln!(out, "; {k}={v}");
        }
        out
    }
}

/// Programs and the libraries they load on macOS: read, execute and map executable.
/// `/usr` includes `/usr/local` (Homebrew on Intel); `/System` and `/Library/Apple` hold the
/// frameworks `dyld` maps; the developer directories hold `git`, `cc`, `make` behind the
/// `/usr/bin` shims that `xcrun` resolves; `/opt/homebrew` is Homebrew on Apple silicon.
pub const MACOS_PROGRAMS: &[&str] = &[
    "/Applications/Xcode.app/Contents/Developer",
    "/Library/Apple",
    "/Library/Developer/CommandLineTools",
    "/System",
    "/bin",
    "/nix/store",
    "/opt/homebrew",
    "/sbin",
    "/usr",
];

/// Configuration ordinary programs read, read-only. Seatbelt matches resolved paths, so
/// `/etc` and `/var` appear as their real `/private/...` locations. As on Linux, `/etc` is
/// never granted whole: `master.passwd`, `sudoers`, `ssh/` and `ssl/private` stay out.
pub const MACOS_CONFIGURATION: &[&str] = &[
    // Listing `/`: some runtimes enumerate it while resolving their own location.
    "/",
    "/private/etc/bashrc",
    "/private/etc/group",
    "/private/etc/hosts",
    "/private/etc/localtime",
    "/private/etc/passwd",
    "/private/etc/paths",
    "/private/etc/paths.d",
    "/private/etc/profile",
    "/private/etc/protocols",
    "/private/etc/resolv.conf",
    "/private/etc/services",
    "/private/etc/shells",
    "/private/etc/ssl/cert.pem",
    "/private/etc/ssl/certs",
    "/private/etc/ssl/openssl.cnf",
    "/private/etc/zlogin",
    "/private/etc/zprofile",
    "/private/etc/zshenv",
    "/private/etc/zshrc",
    // `xcrun` (behind /usr/bin/git, cc, make) reads the selected developer directory here.
    "/private/var/db/xcode_select_link",
    // Time zones: /etc/localtime and /usr/share/zoneinfo point here.
    "/private/var/db/timezone",
    // DNS configuration, where /etc/resolv.conf points.
    "/private/var/run/resolv.conf",
    // /bin/sh is a shim that runs the shell this selects.
    "/private/var/select",
];

/// Device nodes: read, write data and ioctl (terminals). `/dev/fd` serves `/dev/stdin` and
/// bash's process substitution. The pseudo-terminal slaves `/dev/ttysNNN` are matched by
/// [`MACOS_TTY_REGEX`], the macOS counterpart of Linux's `/dev/pts`.
pub const MACOS_DEVICES: &[&str] = &[
    "/dev/fd",
    "/dev/null",
    "/dev/ptmx",
    "/dev/random",
    "/dev/tty",
    "/dev/urandom",
    "/dev/zero",
];

/// Pseudo-terminal slaves.
pub const MACOS_TTY_REGEX: &str = "^/dev/ttys[0-9]+$";

/// Mach services every program may look up, and why: the smallest set that lets a
/// command-line program start, look up users and groups, and notice time-zone changes.
///
/// Compared with public profiles (2025): Chromium's `common.sb` and OpenAI Codex's
/// `seatbelt_base_policy.sbpl` allow `opendirectoryd.libinfo` (crbug.com/792228); Codex's
/// platform defaults and Anthropic's sandbox-runtime add `notification_center` and
/// `opendirectoryd.membership` (Chromium's GPU profile too, crbug.com/1126350). Left out on
/// purpose, although one or more of them allow it: `logd`/`system.logger`/`diagnosticd`
/// (os_log; clients drop messages quietly), `cfprefsd` (preferences; defaults are used),
/// `bsd.dirhelper` (the per-user temp directory; cordon sets `TMPDIR` to the run's own),
/// `SecurityServer`/`securityd.xpc` (the keychain: secrets), `PowerManagement.control`,
/// `lsd.mapdb`/`launchservicesd`/`coreservices.*` (opening apps), fonts and audio services
/// (GUI programs), and any wildcard.
pub const MACOS_MACH_SERVICES: &[(&str, &str)] = &[
    (
        "com.apple.system.notification_center",
        "notify(3): libc learns of time-zone and configuration changes through notifyd",
    ),
    (
        "com.apple.system.opendirectoryd.libinfo",
        "getpwuid(3), getgrgid(3): user and group lookups (id, ls -l, git, ssh)",
    ),
    (
        "com.apple.system.opendirectoryd.membership",
        "getgrouplist(3), mbr_*(3): group membership (id, groups)",
    ),
];

/// Mach services looked up only when the network is allowed. Codex's network policy and
/// Chromium's `network.sb` allow these as well (they also allow `SecurityServer`, the
/// keychain, and `networkd`, which cordon leaves out).
pub const MACOS_NETWORK_MACH_SERVICES: &[(&str, &str)] = &[
    (
        "com.apple.SystemConfiguration.DNSConfiguration",
        "the resolver configuration getaddrinfo(3) uses",
    ),
    (
        "com.apple.SystemConfiguration.configd",
        "proxy and network reachability settings",
    ),
    ("com.apple.ocspd", "certificate revocation checks"),
    (
        "com.apple.trustd.agent",
        "TLS certificate trust evaluation (Security.framework)",
    ),
];

/// sysctl values every program may read: `(filter, name)`, where the filter is
/// `sysctl-name` (exact) or `sysctl-name-prefix`. The hardware, OS-version and limit values
/// runtimes ask for (the list Chromium and Codex use), and process information only for the
/// sandbox's own processes. Not `kern.procargs2` and not `kern.proc.all`: with those, a
/// command could read the arguments and environment of every process of the same user, the
/// agent that started cordon included.
pub const MACOS_SYSCTLS: &[(&str, &str)] = &[
    ("sysctl-name", "hw.activecpu"),
    ("sysctl-name", "hw.busfrequency_compat"),
    ("sysctl-name", "hw.byteorder"),
    ("sysctl-name", "hw.cacheconfig"),
    ("sysctl-name", "hw.cachelinesize_compat"),
    ("sysctl-name", "hw.cpufamily"),
    ("sysctl-name", "hw.cpufrequency"),
    ("sysctl-name", "hw.cpufrequency_compat"),
    ("sysctl-name", "hw.cputype"),
    ("sysctl-name", "hw.l1dcachesize_compat"),
    ("sysctl-name", "hw.l1icachesize_compat"),
    ("sysctl-name", "hw.l2cachesize_compat"),
    ("sysctl-name", "hw.l3cachesize_compat"),
    ("sysctl-name", "hw.logicalcpu"),
    ("sysctl-name", "hw.logicalcpu_max"),
    ("sysctl-name", "hw.machine"),
    ("sysctl-name", "hw.memsize"),
    ("sysctl-name", "hw.model"),
    ("sysctl-name", "hw.ncpu"),
    ("sysctl-name", "hw.nperflevels"),
    ("sysctl-name", "hw.packages"),
    ("sysctl-name", "hw.pagesize"),
    ("sysctl-name", "hw.pagesize_compat"),
    ("sysctl-name", "hw.physicalcpu"),
    ("sysctl-name", "hw.physicalcpu_max"),
    ("sysctl-name", "hw.tbfrequency_compat"),
    ("sysctl-name", "hw.vectorunit"),
    ("sysctl-name", "kern.argmax"),
    ("sysctl-name", "kern.boottime"),
    ("sysctl-name", "kern.hostname"),
    ("sysctl-name", "kern.maxfiles"),
    ("sysctl-name", "kern.maxfilesperproc"),
    ("sysctl-name", "kern.maxproc"),
    ("sysctl-name", "kern.ngroups"),
    ("sysctl-name", "kern.osproductversion"),
    ("sysctl-name", "kern.osrelease"),
    ("sysctl-name", "kern.ostype"),
    ("sysctl-name", "kern.osvariant_status"),
    ("sysctl-name", "kern.osversion"),
    ("sysctl-name", "kern.secure_kernel"),
    ("sysctl-name", "kern.usrstack64"),
    ("sysctl-name", "kern.version"),
    ("sysctl-name", "machdep.cpu.brand_string"),
    ("sysctl-name", "sysctl.proc_cputype"),
    ("sysctl-name", "sysctl.proc_translated"),
    ("sysctl-name", "vm.loadavg"),
    // CPU features (Intel and Apple silicon), performance levels.
    ("sysctl-name-prefix", "hw.optional."),
    ("sysctl-name-prefix", "hw.perflevel"),
    ("sysctl-name-prefix", "machdep.cpu."),
    // kinfo_proc of one process or group (ps -p, job control); signals and process-info
    // are limited to the sandbox's own processes by the rules above.
    ("sysctl-name-prefix", "kern.proc.pgrp."),
    ("sysctl-name-prefix", "kern.proc.pid."),
];

const SYSTEM_ORIGIN: &str = "sandbox.system_read";

/// Renders `profile` as SBPL with its parameters, or refuses a path that cannot be passed
/// safely (see the module docs).
pub fn render(profile: &Profile) -> Result<Seatbelt, Error> {
    let mut out = Sbpl::default();
    out.header();
    out.basics();

    let (system, policy): (Vec<&PathRule>, Vec<&PathRule>) = profile
        .rules
        .iter()
        .partition(|r| r.origin.starts_with(SYSTEM_ORIGIN));
    if !system.is_empty() {
        out.system();
    }

    if !policy.is_empty() {
        out.blank();
        out.comment("Roots from the policy.");
    }
    for rule in &policy {
        let value = param_value(&rule.path, &rule.origin)?;
        let kind = if rule.access.write { "RW" } else { "RO" };
        let name = out.param(kind, value);
        let mut ops = vec!["file-read*"];
        if rule.access.write {
            ops.push("file-write*");
        }
        if rule.access.exec {
            ops.push("process-exec");
            ops.push("file-map-executable");
        }
        out.comment(&format!("from {}", rule.origin));
        out.line(&format!(
            "(allow {} (subpath (param \"{name}\")))",
            ops.join(" ")
        ));
    }

    out.blank();
    match profile.network {
        Network::Deny => {
            out.comment("network: denied by sandbox.network = \"deny\"; no rule allows it, so (deny default) applies");
        }
        Network::Allow => {
            out.comment("network: allowed by sandbox.network = \"allow\"");
            out.line("(allow network*)");
            out.line("(allow system-socket)");
            for (service, why) in MACOS_NETWORK_MACH_SERVICES {
                out.comment(why);
                out.line(&format!("(allow mach-lookup (global-name \"{service}\"))"));
            }
        }
        Network::Proxy => {
            out.comment(&format!(
                "network: only cordon's proxy, by sandbox.network = \"proxy\": outbound to localhost:{} and nothing else;",
                crate::PROXY_PORT
            ));
            out.comment("names are resolved by the proxy, so no DNS service is allowed");
            out.line(&format!(
                "(allow network-outbound (remote ip \"localhost:{}\"))",
                crate::PROXY_PORT
            ));
        }
    }

    // Protected paths last: later rules win in SBPL.
    if !profile.protected.is_empty() {
        out.blank();
        out.comment(
            "Protected paths stay read-only inside writable roots, and cannot be created or",
        );
        out.comment("hard-linked to a writable name (Seatbelt matches names, not inodes). The");
        out.comment("literal names the path itself too, as OpenAI Codex does after finding that");
        out.comment("subpath alone left a protected directory creatable.");
        for p in &profile.protected {
            let value = param_value(&p.path, &p.origin)?;
            let name = out.param("PROTECTED", value);
            out.comment(&format!("from {}", p.origin));
            out.line(&format!(
                "(deny file-write* file-link (literal (param \"{name}\")) (subpath (param \"{name}\")))"
            ));
        }
        // A protected path is matched by name; swapping the writable root or a directory
        // below it (mv it away, edit, mv it back; or a symlink in its place) would move the
        // name somewhere writable. So they cannot be created, removed, renamed or replaced.
        let parents = protected_parents(profile, &policy);
        if !parents.is_empty() {
            out.comment(
                "Their writable root and the directories down to them cannot be created, removed,",
            );
            out.comment("renamed or replaced (a swapped or symlinked parent would move the protected path).");
            for (path, origin) in parents {
                let value = param_value(&path, origin)?;
                let name = out.param("PROTECTED_PARENT", value);
                out.comment(&format!("from {origin}"));
                out.line(&format!("(deny file-write* (literal (param \"{name}\")))"));
            }
        }
    }

    Ok(Seatbelt {
        text: out.text,
        params: out.params,
    })
}

/// The directories the rendered profile lets programs run from (`process-exec`), as
/// Seatbelt compares them: cordon's macOS program list when the profile has the system
/// rules, and the policy's roots with `exec`. The launcher checks a command against these
/// before starting it ([`crate::seatbelt::invocation`]), so a program the profile cannot run
/// is refused with 126 rather than by `sandbox-exec` with a status of its own.
pub fn executable_roots(profile: &Profile) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if profile
        .rules
        .iter()
        .any(|r| r.origin.starts_with(SYSTEM_ORIGIN))
    {
        out.extend(MACOS_PROGRAMS.iter().map(PathBuf::from));
    }
    for r in &profile.rules {
        if r.access.exec && !r.origin.starts_with(SYSTEM_ORIGIN) {
            if let Ok(v) = param_value(&r.path, &r.origin) {
                out.push(PathBuf::from(v));
            }
        }
    }
    out
}

/// A resolved path as Seatbelt compares it (`/tmp`, `/var`, `/etc` under `/private`).
pub fn compared_path(path: &Path) -> PathBuf {
    match path.to_str() {
        Some(s) => PathBuf::from(macos_real_path(s)),
        None => path.to_path_buf(),
    }
}

/// Checks a path for use as a `-D` value.
fn param_value(path: &Path, origin: &str) -> Result<String, Error> {
    let refuse = |problem: &'static str| Error::UnsafePath {
        path: path.to_string_lossy().into_owned(),
        origin: origin.to_string(),
        target: "Seatbelt",
        problem,
    };
    let s = path.to_str().ok_or_else(|| refuse("is not valid UTF-8"))?;
    for c in s.chars() {
        let problem = match c {
            '"' => "contains a double quote",
            '\\' => "contains a backslash",
            '\0' => "contains a NUL byte",
            '\n' => "contains a newline",
            c if c.is_control() => "contains a control character",
            _ => continue,
        };
        return Err(refuse(problem));
    }
    if !s.starts_with('/') {
        return Err(refuse("is not absolute (Seatbelt matches absolute paths)"));
    }
    Ok(macos_real_path(s))
}

/// Seatbelt matches a file by its resolved path, and on macOS `/tmp`, `/var` and `/etc` are
/// symlinks into `/private`: a rule on `/var/folders/…` (where `TMPDIR` lives) would never
/// match. Paths under them are rewritten to their real location.
fn macos_real_path(s: &str) -> String {
    for top in ["/tmp", "/var", "/etc"] {
        if s == top
            || s.strip_prefix(top)
                .is_some_and(|rest| rest.starts_with('/'))
        {
            return format!("/private{s}");
        }
    }
    s.to_string()
}

/// The outermost writable root holding a protected path and the directories between it and
/// that path, each with the origin of the first protected path that needs it; sorted.
fn protected_parents<'a>(profile: &'a Profile, policy: &[&PathRule]) -> Vec<(PathBuf, &'a str)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for p in &profile.protected {
        let root = policy
            .iter()
            .filter(|r| r.access.write && !r.access.device && p.path.starts_with(&r.path))
            .map(|r| r.path.as_path())
            .min_by_key(|r| r.components().count());
        let Some(root) = root else { continue };
        let mut dir = p.path.parent();
        while let Some(d) = dir {
            if !d.starts_with(root) {
                break;
            }
            if seen.insert(d.to_path_buf()) {
                out.push((d.to_path_buf(), p.origin.as_str()));
            }
            dir = d.parent();
        }
    }
    out.sort();
    out
}

#[derive(Default)]
struct Sbpl {
    text: String,
    params: Vec<(String, String)>,
}

impl Sbpl {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }

    fn comment(&mut self, s: &str) {
        let _ = writeln!(self.text, "; {}", comment_text(s));
    }

    fn blank(&mut self) {
        self.text.push('\n');
    }

    /// Adds a parameter `KIND_N` (N counts per kind) and returns its name.
    fn param(&mut self, kind: &str, value: String) -> String {
        let prefix = format!("{kind}_");
        let n = self
            .params
            .iter()
            .filter(|(k, _)| {
                k.strip_prefix(&prefix)
                    .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
            })
            .count();
        let name = format!("{kind}_{n}");
        self.params.push((name.clone(), value));
        name
    }

    fn header(&mut self) {
        self.line("; cordon: Seatbelt profile (SBPL) for /usr/bin/sandbox-exec, generated from the policy.");
        self.line("; Paths from the policy are parameters, passed as -D NAME=VALUE and used as");
        self.line("; (param \"NAME\"); they are never part of this text. Later rules win over earlier ones.");
        self.line("(version 1)");
        self.line("(deny default)");
    }

    fn basics(&mut self) {
        self.blank();
        self.comment("What every program needs to start.");
        self.line("(allow process-fork)");
        self.line("(allow signal (target same-sandbox))");
        self.line("(allow process-info* (target same-sandbox))");
        self.comment("sysctl reads: hardware, OS version, limits, the sandbox's own processes");
        self.comment("(MACOS_SYSCTLS); no other process's arguments or environment; no writes.");
        self.line("(allow sysctl-read");
        let n = MACOS_SYSCTLS.len();
        for (i, (kind, name)) in MACOS_SYSCTLS.iter().enumerate() {
            let close = if i + 1 == n { ")" } else { "" };
            self.line(&format!("  ({kind} \"{name}\"){close}"));
        }
        self.comment(
            "stat(2) and access(2) anywhere, so path lookup and realpath(3) work; no contents.",
        );
        self.line("(allow file-read-metadata file-test-existence)");
        for (service, why) in MACOS_MACH_SERVICES {
            self.comment(why);
            self.line(&format!("(allow mach-lookup (global-name \"{service}\"))"));
        }
        self.comment("notify(3) reads its state from this shared memory.");
        self.line("(allow ipc-posix-shm-read* (ipc-posix-name \"apple.shm.notification_center\"))");
    }

    fn system(&mut self) {
        self.blank();
        self.comment(
            "from sandbox.system_read: macOS system paths (cordon's list, in place of the",
        );
        self.comment("Linux system paths of the profile).");
        self.comment("from sandbox.system_read (programs)");
        self.line("(allow file-read* process-exec file-map-executable");
        self.filters("subpath", MACOS_PROGRAMS);
        self.comment("from sandbox.system_read (configuration)");
        self.line("(allow file-read*");
        let (dirs, files): (Vec<&str>, Vec<&str>) =
            MACOS_CONFIGURATION.iter().partition(|p| is_dir_constant(p));
        let mut filters: Vec<(&str, &str)> = files.iter().map(|p| ("literal", *p)).collect();
        filters.extend(dirs.iter().map(|p| ("subpath", *p)));
        filters.sort_by_key(|(_, p)| *p);
        let n = filters.len();
        for (i, (kind, p)) in filters.into_iter().enumerate() {
            let close = if i + 1 == n { ")" } else { "" };
            self.line(&format!("  ({kind} \"{p}\"){close}"));
        }
        self.comment("from sandbox.system_read (devices)");
        self.line("(allow file-read* file-write-data file-ioctl");
        for p in MACOS_DEVICES {
            let kind = if *p == "/dev/fd" {
                "subpath"
            } else {
                "literal"
            };
            self.line(&format!("  ({kind} \"{p}\")"));
        }
        self.line(&format!("  (regex #\"{MACOS_TTY_REGEX}\"))"));
        self.comment("openpty(3): new pseudo-terminals through /dev/ptmx.");
        self.line("(allow pseudo-tty)");
    }

    fn filters(&mut self, kind: &str, paths: &[&str]) {
        let n = paths.len();
        for (i, p) in paths.iter().enumerate() {
            let close = if i + 1 == n { ")" } else { "" };
            self.line(&format!("  ({kind} \"{p}\"){close}"));
        }
    }
}

/// Which configuration constants are directories (granted as `subpath`); the rest are files
/// (granted as `literal`).
fn is_dir_constant(p: &str) -> bool {
    matches!(
        p,
        "/private/etc/paths.d"
            | "/private/etc/ssl/certs"
            | "/private/var/db/timezone"
            | "/private/var/select"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Access, Protected};
    use cordon_policy::Limits;

    fn rule(path: &str, access: Access, origin: &str) -> PathRule {
        PathRule {
            path: path.into(),
            access,
            origin: origin.into(),
        }
    }

    fn profile(rules: Vec<PathRule>, protected: Vec<(&str, &str)>) -> Profile {
        Profile {
            rules,
            protected: protected
                .into_iter()
                .map(|(p, o)| Protected {
                    path: p.into(),
                    origin: o.into(),
                })
                .collect(),
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        }
    }

    const RW: Access = Access {
        write: true,
        exec: true,
        device: false,
    };

    #[test]
    fn constants_are_safe_to_splice() {
        for p in MACOS_PROGRAMS
            .iter()
            .chain(MACOS_CONFIGURATION)
            .chain(MACOS_DEVICES)
        {
            assert!(param_value(Path::new(p), "const").is_ok(), "{p}");
        }
        for (s, _) in MACOS_MACH_SERVICES
            .iter()
            .chain(MACOS_NETWORK_MACH_SERVICES)
        {
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_'),
                "{s}"
            );
        }
        for (kind, name) in MACOS_SYSCTLS {
            assert!(
                matches!(*kind, "sysctl-name" | "sysctl-name-prefix"),
                "{kind}"
            );
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_'),
                "{name}"
            );
        }
        let mut sorted = MACOS_PROGRAMS.to_vec();
        sorted.sort();
        assert_eq!(sorted, MACOS_PROGRAMS);
    }

    #[test]
    fn no_sysctl_reveals_other_processes_arguments_or_environment() {
        let text = render(&profile(vec![], vec![])).unwrap().text;
        for leak in [
            "kern.procargs",
            "kern.proc.all",
            "kern.proc.\"",
            "\"kern.\"",
        ] {
            assert!(!text.contains(leak), "{leak}");
        }
        assert!(
            !text.contains("(allow sysctl-read)"),
            "no blanket sysctl-read"
        );
        assert!(!text.contains("sysctl-write"));
        for (_, name) in MACOS_SYSCTLS {
            assert!(!name.starts_with("kern.procargs") && *name != "kern.proc.all");
        }
    }

    #[test]
    fn parameters_are_single_arguments() {
        let p = profile(
            vec![rule("/Users/a/-D x=y", RW, "sandbox.paths.w (rw)")],
            vec![],
        );
        let sb = render(&p).unwrap();
        assert_eq!(
            sb.args(),
            vec![
                "-p".to_string(),
                sb.text.clone(),
                "-DRW_0=/Users/a/-D x=y".into()
            ]
        );
    }

    #[test]
    fn executable_roots_follow_the_rendered_rules() {
        let ro = Access::READ;
        let mut p = profile(
            vec![
                rule("/w", RW, "sandbox.paths.w (rw)"),
                rule(
                    "/tmp/cordon-x",
                    Access { exec: false, ..RW },
                    "private TMPDIR (created for this run)",
                ),
                rule("/ref", ro, "sandbox.paths.ref (ro)"),
            ],
            vec![],
        );
        assert_eq!(executable_roots(&p), vec![PathBuf::from("/w")]);
        let text = render(&p).unwrap().text;
        assert!(text.contains("process-exec file-map-executable (subpath (param \"RW_0\"))"));
        assert_eq!(text.matches("process-exec").count(), 1);
        // With system rules, the macOS program list (never the Linux one).
        p.rules.push(rule(
            "/lib",
            Access::READ_EXEC,
            "sandbox.system_read (programs)",
        ));
        let roots = executable_roots(&p);
        assert!(
            roots.contains(&PathBuf::from("/usr")) && roots.contains(&PathBuf::from("/System"))
        );
        assert!(!roots.contains(&PathBuf::from("/lib")));
        assert_eq!(
            compared_path(Path::new("/var/folders/x")),
            PathBuf::from("/private/var/folders/x")
        );
    }

    #[test]
    fn roots_are_params_never_text() {
        let p = profile(
            vec![rule("/Users/a/my proj (x)", RW, "sandbox.paths.w (rw)")],
            vec![],
        );
        let sb = render(&p).unwrap();
        assert!(!sb.text.contains("my proj"));
        assert_eq!(
            sb.params,
            vec![("RW_0".to_string(), "/Users/a/my proj (x)".to_string())]
        );
        assert!(sb.text.contains(
            "; from sandbox.paths.w (rw)\n(allow file-read* file-write* process-exec file-map-executable (subpath (param \"RW_0\")))\n"
        ));
        // No system rules in the profile: no macOS system paths either.
        assert!(!sb.text.contains("\"/usr\""));
    }

    #[test]
    fn unsafe_paths_are_refused_by_name() {
        for (bad, what) in [
            ("/w/a\"b", "double quote"),
            ("/w/a\\b", "backslash"),
            ("/w/a\0b", "NUL"),
            ("/w/a\nb", "newline"),
            ("/w/a\rb", "control character"),
            ("relative", "not absolute"),
        ] {
            let p = profile(vec![rule(bad, RW, "sandbox.paths.w (rw)")], vec![]);
            let e = render(&p).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains(what) && msg.contains("sandbox.paths.w"),
                "{msg}"
            );
            let p = profile(vec![], vec![(bad, "sandbox.protected")]);
            assert!(render(&p).is_err(), "{bad:?} as a protected path");
        }
    }

    #[test]
    fn macos_symlinked_tops_resolve_into_private() {
        assert_eq!(macos_real_path("/tmp"), "/private/tmp");
        assert_eq!(
            macos_real_path("/var/folders/x/T/run"),
            "/private/var/folders/x/T/run"
        );
        assert_eq!(macos_real_path("/etc/hosts"), "/private/etc/hosts");
        assert_eq!(macos_real_path("/tmpfoo"), "/tmpfoo");
        assert_eq!(macos_real_path("/private/tmp/x"), "/private/tmp/x");
        assert_eq!(macos_real_path("/Users/a/tmp"), "/Users/a/tmp");
    }

    #[test]
    fn protected_parents_between_root_and_path() {
        let p = profile(
            vec![
                rule("/w", RW, "sandbox.paths.w (rw)"),
                rule("/w/sub", RW, "sandbox.paths.sub (rw)"),
            ],
            vec![
                (
                    "/w/sub/.git/config",
                    "sandbox.protected (in sandbox.paths.sub)",
                ),
                (
                    "/w/sub/.git/hooks",
                    "sandbox.protected (in sandbox.paths.sub)",
                ),
                ("/w/top", "sandbox.protected (in sandbox.paths.w)"),
            ],
        );
        let refs: Vec<&PathRule> = p.rules.iter().collect();
        let parents: Vec<PathBuf> = protected_parents(&p, &refs)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        // The outermost writable root (/w) is included: renaming it away would carry the
        // protected paths with it.
        assert_eq!(
            parents,
            vec![
                PathBuf::from("/w"),
                PathBuf::from("/w/sub"),
                PathBuf::from("/w/sub/.git")
            ]
        );
    }
}
