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
//! use cordon_ossandbox::render::{landlock, oci, seatbelt};
//! use cordon_ossandbox::{seccomp, Profile};
//! use cordon_policy::Policy;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let policy = Policy::parse(cordon_policy::DEFAULT_POLICY, "default", dir.path()).unwrap();
//! let profile = Profile::from_policy(&policy);
//!
//! let sb = seatbelt::render(&profile).unwrap();
//! assert!(sb.text.starts_with("; cordon"));
//! assert!(sb.params.iter().any(|(k, _)| k == "RW_0"));
//!
//! let json = oci::render(&seccomp::rules(profile.network), oci::OciArch::X86_64);
//! assert_eq!(json["defaultAction"], "SCMP_ACT_ALLOW");
//!
//! let ruleset = landlock::render(&profile, 6);
//! assert_eq!(ruleset["abi"], 6);
//! # }
//! ```

#[cfg(target_os = "linux")]
pub mod bwrap;
#[cfg(target_os = "linux")]
pub mod landlock;
#[cfg(target_os = "linux")]
pub mod oci;
pub mod seatbelt;

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
