//! Audit renderers: what the kernel will enforce, as text an operator can read, diff and
//! reuse elsewhere (`cordon profile --format seatbelt|landlock|seccomp`).
//!
//! Every artifact is rendered from the very data the backends enforce, never from a second
//! description of the policy: the typed [`Profile`](crate::Profile) for paths and network,
//! and [`seccomp::rules`](crate::seccomp::rules) for the syscall deny list. So what an
//! auditor reads is what runs.
//!
//! | artifact | renderer | for |
//! | --- | --- | --- |
//! | Seatbelt SBPL + `-D` parameters | [`seatbelt::render`] | macOS: `sandbox-exec -p TEXT -DKEY=VALUE… -- cmd` |
//! | OCI seccomp profile (JSON) | `oci::render` (Linux builds) | Docker, Podman, Kubernetes (`seccompProfile: Localhost`), crun/runc |
//! | Landlock ruleset (JSON) | `landlock::render` (Linux builds) | reading which rights each path gets on a given Landlock ABI |
//! | bwrap script | `bwrap::render` (Linux builds) | running the same mounts by hand |
//!
//! Guarantees, for every renderer:
//! - a pure function of its inputs (the Landlock renderer also asks the filesystem whether
//!   each path is a directory, as enforcement does, and says so in its output);
//! - deterministic byte for byte: sorted input, no timestamps, no hash-map iteration;
//! - every rule names the policy key that caused it (`PathRule::origin`,
//!   `Protected::origin`, `SyscallRule::why`);
//! - the Seatbelt renderer builds and renders on every OS. The Linux artifacts are built
//!   only on Linux: they are derived from this kernel's Landlock ABI, syscall numbers and
//!   errno values (from `libc`), which a macOS build does not have; `cordon profile` on macOS
//!   refuses those formats.
//!
//! ```
//! # #[cfg(target_os = "linux")] {
//! use cordon_ossandbox::{describe, Format};
//! use cordon_policy::Policy;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let policy = Policy::parse(cordon_policy::DEFAULT_POLICY, "default", dir.path()).unwrap();
//! let shown = describe(&policy).unwrap();
//!
//! let sb = shown.render(&Format::Seatbelt).unwrap();
//! assert!(sb.starts_with("; cordon"));
//!
//! let json = shown.render(&Format::Seccomp { arch: Some("x86_64".into()) }).unwrap();
//! assert!(json.contains("SCMP_ACT_ALLOW"));
//!
//! let ruleset = shown.render(&Format::Landlock { abi: Some(6) }).unwrap();
//! assert!(ruleset.contains("\"abi\": 6"));
//!
//! let effective = shown.render(&Format::Effective).unwrap();
//! assert!(effective.contains("refused system calls"));
//! # }
//! ```

#[cfg(target_os = "linux")]
pub(crate) mod bwrap;
pub(crate) mod effective;
#[cfg(target_os = "linux")]
pub(crate) mod landlock;
#[cfg(target_os = "linux")]
pub(crate) mod oci;
pub(crate) mod seatbelt;

use std::path::PathBuf;

use crate::{Error, Profile};

/// What `cordon profile` prints ([`crate::Prepared::render`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// What an auditor asks first: the effective access of each path after every backend's
    /// ordering (a protected path inside a writable root is read-only, whatever line grants
    /// the root), the network, the refused system calls, each with the policy key behind it.
    Effective,
    /// The SBPL text and its parameters (macOS).
    Seatbelt,
    /// A runnable bwrap script, with `cwd` as the command's directory.
    Bwrap { cwd: PathBuf },
    /// The Landlock ruleset as JSON at `abi` (default: this kernel's).
    Landlock { abi: Option<i32> },
    /// The OCI runtime-spec seccomp profile for `arch` (`x86_64`, `aarch64`; default: this
    /// machine's).
    Seccomp { arch: Option<String> },
}

/// The text of `format` for `profile` (whose private TMPDIR stands at [`PRIVATE_TMP`]).
pub(crate) fn artifact(profile: &Profile, format: &Format) -> Result<String, Error> {
    match format {
        Format::Effective => Ok(effective::render(profile)),
        Format::Seatbelt => {
            #[cfg(target_os = "macos")]
            let profile = &crate::seatbelt::resolve_paths(profile, &|p| std::fs::canonicalize(p));
            Ok(seatbelt::render(profile)?.audit())
        }
        #[cfg(not(target_os = "linux"))]
        _ => Err(Error::Refused(
            "--format bwrap, landlock and seccomp describe Linux kernels; render them with a Linux build of cordon".into(),
        )),
        #[cfg(target_os = "linux")]
        Format::Seccomp { arch } => {
            let arch = match arch.as_deref() {
                None => oci::OciArch::native().unwrap_or(oci::OciArch::X86_64),
                Some("x86_64") => oci::OciArch::X86_64,
                Some("aarch64") => oci::OciArch::Aarch64,
                Some(other) => {
                    return Err(Error::Refused(format!(
                        "unknown --arch `{other}` (x86_64, aarch64)"
                    )))
                }
            };
            Ok(oci::to_string_pretty(&oci::render(
                &crate::seccomp::rules(profile.network),
                arch,
            )))
        }
        #[cfg(target_os = "linux")]
        // The per-user configuration covers for this shell's HOME, XDG_CONFIG_HOME and
        // GIT_CONFIG_GLOBAL (a run takes them from the command's environment, which passes
        // HOME and, when `sandbox.env` lists them, the other two).
        Format::Landlock { abi } => Ok(json_text(&landlock::render(
            profile,
            render_abi(*abi),
            &std::env::vars_os().collect::<Vec<_>>(),
        ))),
        #[cfg(target_os = "linux")]
        Format::Bwrap { cwd } => {
            let bwrap = crate::Machine::probe()
                .bwrap
                .unwrap_or_else(|| "/usr/bin/bwrap".into());
            let root = rustix::process::geteuid().is_root();
            bwrap::render(profile, cwd, &bwrap, root)
        }
    }
}

/// The ABI to describe: the operator's, else this kernel's, else the newest this build knows
/// well (not running on Linux with Landlock).
#[cfg(target_os = "linux")]
fn render_abi(abi: Option<i32>) -> i32 {
    abi.unwrap_or_else(|| match crate::landlock::kernel_abi() {
        0 => 7,
        n => n,
    })
}

/// Where the per-run private `TMPDIR` stands in rendered artifacts: it is created for each
/// run, so an artifact can only show a placeholder.
pub const PRIVATE_TMP: &str = "/tmp/cordon-RUN";

/// Pretty JSON with every object's keys sorted, and a final newline: the bytes `cordon
/// profile` prints for the JSON artifacts. Sorting here keeps the output the same whether
/// or not some other crate in the build turns on serde_json's `preserve_order`.
pub fn json_text(value: &serde_json::Value) -> String {
    let mut v = value.clone();
    v.sort_all_objects();
    let mut s = serde_json::to_string_pretty(&v).expect("a JSON value always serializes");
    s.push('\n');
    s
}

/// Makes an origin or reason safe inside a one-line comment (`; …` in SBPL): control
/// characters (a newline would end the comment and start a rule) are escaped. Origins carry
/// names from the policy file, which the renderers do not trust.
pub(crate) fn comment_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_cannot_break_lines() {
        assert_eq!(
            comment_text("sandbox.paths.a\n(allow default)\r\0"),
            "sandbox.paths.a\\n(allow default)\\r\\u{0}"
        );
        assert_eq!(comment_text("sandbox.paths.é (rw)"), "sandbox.paths.é (rw)");
    }

    #[test]
    fn errors_stay_on_one_line() {
        let e = crate::Error::UnsafePath {
            path: "/w/a\nb".into(),
            origin: "sandbox.paths.w (rw)".into(),
            target: "Seatbelt",
            problem: "contains a newline",
        };
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(msg.contains("\"/w/a\\nb\"") && msg.contains("sandbox.paths.w"));
    }
}
