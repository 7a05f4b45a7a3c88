//! cordon's OS sandbox: the last line of defence.
//!
//! The model is one-way: a [`Policy`](cordon_policy::Policy) becomes a typed [`Profile`]
//! (read-only roots, read-write roots, executable roots, devices, network, protected paths,
//! limits); a backend turns the profile into kernel objects in the parent (a Landlock ruleset,
//! seccomp BPF); [`run::run`] applies them to the child between fork and exec, with nothing
//! but raw syscalls. There are no prompts here; this layer only blocks.
//!
//! A backend never claims protection it cannot enforce. [`choose`] refuses (the CLI exits
//! 125) when the kernel lacks what the policy needs and `require_os_sandbox` is set, and it
//! always refuses protected paths on Landlock, which cannot keep a subpath of a writable root
//! read-only.
//!
//! ```no_run
//! use cordon_ossandbox::{choose, prepare, run, Machine, Profile};
//! use cordon_policy::{Backend, Policy};
//!
//! let cwd = std::env::current_dir().unwrap();
//! let policy = Policy::discover(None, &cwd).unwrap();
//! let tmp = tempfile::tempdir().unwrap();
//! let profile = Profile::from_policy(&policy).with_private_tmp(tmp.path());
//! let choice = choose(Backend::Auto, &profile, policy.sandbox.require_os_sandbox, &Machine::probe())
//!     .expect("this kernel can enforce the policy");
//! let confinement = prepare(&choice, &profile).unwrap();
//! let spec = run::Spec {
//!     program: "ls".into(),
//!     args: vec![],
//!     cwd,
//!     env: cordon_ossandbox::env::scrub(std::env::vars_os(), &policy.sandbox.env, tmp.path().as_os_str()),
//!     timeout: policy.sandbox.limits.timeout,
//! };
//! let outcome = run::run(confinement, &spec).unwrap();
//! std::process::exit(outcome.exit_code());
//! ```

pub mod env;
pub mod landlock;
pub mod probe;
pub mod profile;
pub mod run;
pub mod seccomp;

use cordon_policy::Backend;

pub use probe::Machine;
pub use profile::{Access, PathRule, Profile, Protected};

/// Failures of this crate in the parent.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("landlock: {0}")]
    Landlock(String),
    #[error("seccomp: {0}")]
    Seccomp(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The backend that will run the child, after checking it can enforce the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// Landlock + seccomp at this Landlock ABI.
    Landlock { abi: i32 },
    /// No kernel sandbox (only `backend = "none"` or `require_os_sandbox = false`).
    Unconfined,
}

/// A backend choice and what the operator must be told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub backend: Chosen,
    /// Degradations accepted because `require_os_sandbox` is false; print them.
    pub warnings: Vec<String>,
}

/// Why no backend may run this profile (exit 125).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// Picks the backend for `profile` on `machine`, or refuses.
pub fn choose(
    requested: Backend,
    profile: &Profile,
    require: bool,
    machine: &Machine,
) -> Result<Choice, Refusal> {
    let unconfined = |why: String| -> Result<Choice, Refusal> {
        if require {
            Err(Refusal(format!(
                "{why}; refusing to run unconfined (require_os_sandbox = true)"
            )))
        } else {
            Ok(Choice {
                backend: Chosen::Unconfined,
                warnings: vec![format!(
                    "{why}; running UNCONFINED because require_os_sandbox = false"
                )],
            })
        }
    };
    match requested {
        Backend::Seatbelt => Err(Refusal("the seatbelt backend runs only on macOS".into())),
        Backend::Bwrap => Err(Refusal(
            "the bwrap backend is not part of this build yet; use --backend landlock or auto"
                .into(),
        )),
        Backend::None => unconfined("backend `none` was requested".into()),
        Backend::Landlock | Backend::Auto => {
            if let Some(p) = profile.protected.first() {
                return Err(Refusal(format!(
                    "Landlock cannot keep {} ({}) read-only inside a writable root, and no other backend is available; remove it from the policy or run where the bwrap backend is available",
                    p.path.display(),
                    p.origin
                )));
            }
            if !machine.seccomp {
                return unconfined("this kernel does not accept seccomp filters".into());
            }
            match landlock::enforcement(machine.landlock_abi, profile.network) {
                landlock::Enforcement::None => unconfined(
                    "this kernel has no Landlock (not built in or disabled at boot)".into(),
                ),
                landlock::Enforcement::Partial(gaps) => {
                    let list: Vec<String> = gaps
                        .iter()
                        .map(|g| format!("{} (needs ABI {})", g.what, g.needs_abi))
                        .collect();
                    let why = format!(
                        "Landlock ABI {} cannot restrict: {}",
                        machine.landlock_abi,
                        list.join(", ")
                    );
                    if require {
                        Err(Refusal(format!(
                            "{why}; set require_os_sandbox = false to accept partial confinement"
                        )))
                    } else {
                        Ok(Choice {
                            backend: Chosen::Landlock { abi: machine.landlock_abi },
                            warnings: vec![format!("{why}; running with PARTIAL confinement because require_os_sandbox = false")],
                        })
                    }
                }
                landlock::Enforcement::Full => Ok(Choice {
                    backend: Chosen::Landlock {
                        abi: machine.landlock_abi,
                    },
                    warnings: vec![],
                }),
            }
        }
    }
}

/// Builds the kernel objects for `choice` in the parent.
pub fn prepare(choice: &Choice, profile: &Profile) -> Result<run::Confinement, Error> {
    let mut rlimits = vec![(libc::RLIMIT_CORE, 0)]; // a core dump may hold secrets
    let l = &profile.limits;
    for (res, v) in [
        (libc::RLIMIT_AS, l.memory),
        (libc::RLIMIT_FSIZE, l.file_size),
        (libc::RLIMIT_NOFILE, l.open_files),
        (libc::RLIMIT_NPROC, l.processes),
        (libc::RLIMIT_CPU, l.cpu_time),
    ] {
        if let Some(v) = v {
            rlimits.push((res, v));
        }
    }
    Ok(match choice.backend {
        Chosen::Unconfined => run::Confinement {
            rlimits,
            ..Default::default()
        },
        Chosen::Landlock { abi } => run::Confinement {
            landlock: Some(landlock::prepare(profile, abi)?.fd),
            seccomp: seccomp::compile(&seccomp::rules(profile.network))?,
            rlimits,
            confine: true,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::{Limits, Network};
    use std::path::PathBuf;

    fn profile(protected: bool) -> Profile {
        Profile {
            rules: vec![],
            protected: if protected {
                vec![Protected {
                    path: PathBuf::from("/w/.git/hooks"),
                    origin: "sandbox.protected".into(),
                }]
            } else {
                vec![]
            },
            network: Network::Deny,
            limits: Limits::default(),
        }
    }

    fn machine(abi: i32, seccomp: bool) -> Machine {
        Machine {
            landlock_abi: abi,
            seccomp,
            user_namespaces: false,
            bwrap: None,
        }
    }

    #[test]
    fn full_landlock() {
        let c = choose(Backend::Auto, &profile(false), true, &machine(7, true)).unwrap();
        assert_eq!(c.backend, Chosen::Landlock { abi: 7 });
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn fails_closed_without_landlock_or_seccomp() {
        let e = choose(Backend::Landlock, &profile(false), true, &machine(0, true)).unwrap_err();
        assert!(
            e.0.contains("no Landlock") && e.0.contains("refusing"),
            "{e}"
        );
        let e = choose(Backend::Auto, &profile(false), true, &machine(7, false)).unwrap_err();
        assert!(e.0.contains("seccomp"), "{e}");
        let c = choose(Backend::Auto, &profile(false), false, &machine(0, true)).unwrap();
        assert_eq!(c.backend, Chosen::Unconfined);
        assert!(c.warnings[0].contains("UNCONFINED"));
    }

    #[test]
    fn partial_abi_refused_when_required() {
        let e = choose(Backend::Landlock, &profile(false), true, &machine(4, true)).unwrap_err();
        assert!(e.0.contains("ABI 4") && e.0.contains("signals"), "{e}");
        let c = choose(Backend::Landlock, &profile(false), false, &machine(4, true)).unwrap();
        assert!(c.warnings[0].contains("PARTIAL"));
    }

    #[test]
    fn protected_paths_never_run_on_landlock() {
        for require in [true, false] {
            let e = choose(
                Backend::Landlock,
                &profile(true),
                require,
                &machine(7, true),
            )
            .unwrap_err();
            assert!(e.0.contains("/w/.git/hooks"), "{e}");
        }
    }

    #[test]
    fn none_and_foreign_backends() {
        assert!(choose(Backend::None, &profile(false), true, &machine(7, true)).is_err());
        assert_eq!(
            choose(Backend::None, &profile(false), false, &machine(7, true))
                .unwrap()
                .backend,
            Chosen::Unconfined
        );
        assert!(
            choose(Backend::Seatbelt, &profile(false), false, &machine(7, true))
                .unwrap_err()
                .0
                .contains("macOS")
        );
        assert!(choose(Backend::Bwrap, &profile(false), false, &machine(7, true)).is_err());
    }
}
