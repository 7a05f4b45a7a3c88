//! Live probes: what this machine can enforce, proved by doing it in a throw-away child,
//! not by reading version strings.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the running kernel and system offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// Landlock ABI the kernel reports (0: none).
    pub landlock_abi: i32,
    /// The kernel accepts seccomp filters.
    pub seccomp: bool,
    /// cordon runs as root (root owns the system files, so `auto` prefers bwrap).
    pub root: bool,
    /// A bubblewrap binary on the trusted path.
    pub bwrap: Option<PathBuf>,
}

/// Where bwrap is looked for: system locations only, never the caller's PATH.
pub const TRUSTED_BWRAP: &[&str] = &["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

impl Machine {
    /// The cheap facts every `cordon exec` needs (two syscalls).
    pub fn probe() -> Machine {
        Machine {
            landlock_abi: crate::landlock::kernel_abi(),
            seccomp: crate::seccomp::kernel_supports_filters(),
            root: unsafe { libc::geteuid() } == 0,
            bwrap: TRUSTED_BWRAP
                .iter()
                .map(PathBuf::from)
                .find(|p| p.is_file()),
        }
    }
}

/// One doctor finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// Runs `body` in a forked child and returns its exit code. `body` must only make raw
/// syscalls (it runs between fork and `_exit`).
fn in_child(body: impl FnOnce() -> i32) -> Option<i32> {
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return None;
        }
        if pid == 0 {
            libc::_exit(body());
        }
        let mut status = 0;
        if libc::waitpid(pid, &mut status, 0) != pid {
            return None;
        }
        libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status))
    }
}

/// Proves Landlock works: a child restricts itself to nothing and must then fail to open `/`.
pub fn landlock_enforces() -> Finding {
    let abi = crate::landlock::kernel_abi();
    if abi < 1 {
        return Finding { name: "landlock", ok: false, detail: "landlock_create_ruleset fails: no Landlock in this kernel (not built in, or not in the lsm= boot list)".into() };
    }
    let profile = crate::Profile {
        rules: vec![],
        protected: vec![],
        network: cordon_policy::Network::Deny,
        limits: Default::default(),
    };
    let prepared = match crate::landlock::prepare(&profile, abi) {
        Ok(p) => p,
        Err(e) => {
            return Finding {
                name: "landlock",
                ok: false,
                detail: format!("ABI {abi}, but building a ruleset failed: {e}"),
            }
        }
    };
    use std::os::fd::AsRawFd;
    let fd = prepared.fd.as_raw_fd();
    let code = in_child(|| unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0
        {
            return 2;
        }
        let r = libc::open(c"/".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        if r < 0 && *libc::__errno_location() == libc::EACCES {
            0
        } else {
            1
        }
    });
    match code {
        Some(0) => Finding {
            name: "landlock",
            ok: true,
            detail: format!("ABI {abi}: a restricted child was refused access to /"),
        },
        Some(1) => Finding {
            name: "landlock",
            ok: false,
            detail: format!("ABI {abi} reported, but a restricted child could still open /"),
        },
        _ => Finding {
            name: "landlock",
            ok: false,
            detail: format!("ABI {abi} reported, but landlock_restrict_self failed"),
        },
    }
}

/// Proves seccomp works: a child installs cordon's own filter and `unshare` must fail with EPERM.
pub fn seccomp_enforces() -> Finding {
    let programs =
        match crate::seccomp::compile(&crate::seccomp::rules(cordon_policy::Network::Deny)) {
            Ok(p) => p,
            Err(e) => {
                return Finding {
                    name: "seccomp",
                    ok: false,
                    detail: format!("compiling the filter failed: {e}"),
                }
            }
        };
    let code = in_child(|| unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || crate::seccomp::install(&programs).is_err()
        {
            return 2;
        }
        let r = libc::unshare(libc::CLONE_NEWUTS);
        if r < 0 && *libc::__errno_location() == libc::EPERM {
            0
        } else {
            1
        }
    });
    match code {
        Some(0) => Finding {
            name: "seccomp",
            ok: true,
            detail: "filter installed; a filtered child was refused unshare() with EPERM".into(),
        },
        Some(1) => Finding {
            name: "seccomp",
            ok: false,
            detail: "filter installed, but unshare() was not refused".into(),
        },
        _ => Finding {
            name: "seccomp",
            ok: false,
            detail: "the kernel refused to install a filter".into(),
        },
    }
}

/// Can an unprivileged child create a user namespace? (What bwrap needs when not setuid.)
pub fn user_namespaces() -> Finding {
    let code = in_child(|| unsafe {
        // As root, first become an unprivileged user so the probe answers for normal users.
        if libc::getuid() == 0
            && (libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0)
        {
            return 2;
        }
        if libc::unshare(libc::CLONE_NEWUSER) == 0 {
            0
        } else {
            1
        }
    });
    match code {
        Some(0) => Finding {
            name: "user namespaces",
            ok: true,
            detail: "an unprivileged child created a user namespace".into(),
        },
        Some(1) => Finding {
            name: "user namespaces",
            ok: false,
            detail:
                "unshare(CLONE_NEWUSER) is refused to unprivileged users (sysctl or LSM policy)"
                    .into(),
        },
        _ => Finding {
            name: "user namespaces",
            ok: false,
            detail: "could not run the probe".into(),
        },
    }
}

/// Is bwrap installed where we trust it, and does it actually start a sandbox?
pub fn bwrap_runs() -> Finding {
    let Some(bwrap) = TRUSTED_BWRAP.iter().map(Path::new).find(|p| p.is_file()) else {
        return Finding {
            name: "bwrap",
            ok: false,
            detail: format!(
                "not found in {} (Debian package `bubblewrap`)",
                TRUSTED_BWRAP.join(", ")
            ),
        };
    };
    let status = Command::new(bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--",
            "/bin/true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => Finding {
            name: "bwrap",
            ok: true,
            detail: format!(
                "{} started a sandbox with all namespaces unshared",
                bwrap.display()
            ),
        },
        Ok(s) => Finding {
            name: "bwrap",
            ok: false,
            detail: format!(
                "{} is installed but failed to start a sandbox ({s})",
                bwrap.display()
            ),
        },
        Err(e) => Finding {
            name: "bwrap",
            ok: false,
            detail: format!("{} could not be run: {e}", bwrap.display()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landlock_and_seccomp_probes_pass_on_this_machine() {
        let l = landlock_enforces();
        assert!(l.ok, "{l:?}");
        let s = seccomp_enforces();
        assert!(s.ok, "{s:?}");
    }
}
