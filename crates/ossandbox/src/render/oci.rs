//! The seccomp deny list as an OCI runtime-spec seccomp profile (`linux.seccomp`), usable as
//! is by crun, runc, Docker/Podman (`--security-opt seccomp=FILE`) and Kubernetes
//! (`seccompProfile: {type: Localhost}`): the way a fleet runs cordon's syscall limits.
//!
//! It is rendered from [`seccomp::rules`](crate::seccomp::rules), the list cordon compiles
//! and installs itself. The mapping:
//!
//! - `defaultAction: SCMP_ACT_ALLOW`: the list denies, everything else is allowed. There is
//!   no `defaultErrnoRet`: runtimes refuse an errno for a non-errno default action (crun:
//!   "errno value specified for action `SCMP_ACT_ALLOW`").
//! - Each rule alternative (a rule's `when` is an OR of ANDs) is one entry
//!   `{names: [name], action: SCMP_ACT_ERRNO, errnoRet, args, comment}`; the args of one
//!   entry are ANDed, entries are ORed. `comment` (the rule's `why`) is Docker's field;
//!   runtimes ignore it.
//! - [`ArgCheck::Eq32`] → `SCMP_CMP_MASKED_EQ` with `value` (the mask) `0xffffffff` and
//!   `valueTwo` the datum: only the low 32 bits are compared, like cordon's filter.
//! - [`ArgCheck::Ne32`] → `SCMP_CMP_NE` on the full 64-bit value: libseccomp has no masked
//!   not-equal. It denies at least what cordon denies (low bits differ ⇒ value differs), and
//!   also the odd call whose high bits are set; libc passes a clean `int`, so nothing real is
//!   lost. The entry's comment says so.
//! - [`ArgCheck::HasBits`] / [`ArgCheck::HasBits32`] → `SCMP_CMP_MASKED_EQ` with `value` =
//!   `valueTwo` = the mask (all of the mask's bits set).
//!
//! **Foreign ABIs.** `architectures` lists only the target's native one. libseccomp (which
//! crun and runc use) applies its "bad architecture" action, which defaults to killing, to
//! syscalls of any architecture not listed: i386 `int 0x80` calls from an x86_64 process,
//! and on x86_64 also x32 calls (numbers with bit 30 set). cordon's own filter returns EPERM
//! for them instead; the OCI format has no field for that action, so under a runtime they
//! are killed (SIGSYS): stricter, never looser.
//!
//! **Runtimes resolve names with their own libseccomp.** crun skips a name its libseccomp
//! does not know, with a warning ("unknown seccomp syscall `X` ignored", shown with
//! `--debug`), and that call is then *not* denied. Check the runtime's warnings when
//! deploying to an older one.
//!
//! `tests/crun-seccomp.sh` runs the x86_64 profile under crun and checks each verdict
//! against a control run; with crun 1.8.1 and libseccomp 2.5.4 (Debian 12) every name was
//! known, every denied call failed with its errno, and x32 and i386 calls were killed with
//! SIGSYS.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::seccomp::{ArgCheck, SyscallRule};

/// The architecture the profile is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OciArch {
    X86_64,
    Aarch64,
}

impl OciArch {
    /// The runtime-spec name, e.g. `SCMP_ARCH_X86_64`.
    pub fn scmp_name(self) -> &'static str {
        match self {
            OciArch::X86_64 => "SCMP_ARCH_X86_64",
            OciArch::Aarch64 => "SCMP_ARCH_AARCH64",
        }
    }

    /// The architecture cordon is built for, when it is one of these.
    pub fn native() -> Option<OciArch> {
        if cfg!(target_arch = "x86_64") {
            Some(OciArch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(OciArch::Aarch64)
        } else {
            None
        }
    }
}

/// Syscalls of the deny list that exist on x86_64 only; left out of an aarch64 profile.
pub use crate::seccomp::X86_64_ONLY;

/// Renders `rules` as an OCI seccomp profile for `arch`. Entries are sorted by syscall name,
/// then in the order of the rule's alternatives; the output is deterministic.
pub fn render(rules: &[SyscallRule], arch: OciArch) -> Value {
    let mut sorted: Vec<&SyscallRule> = rules
        .iter()
        .filter(|r| arch == OciArch::X86_64 || !X86_64_ONLY.contains(&r.name))
        .collect();
    sorted.sort_by_key(|r| r.name); // stable: keeps the order of equal names
    let mut syscalls = Vec::new();
    for rule in sorted {
        if rule.when.is_empty() {
            syscalls.push(entry(rule, None));
        }
        for checks in &rule.when {
            syscalls.push(entry(rule, Some(checks)));
        }
    }
    json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": [arch.scmp_name()],
        "syscalls": syscalls,
    })
}

/// The profile as pretty JSON with sorted keys and a final newline: the bytes `cordon
/// profile --format seccomp` prints (see [`super::json_text`]).
pub fn to_string_pretty(profile: &Value) -> String {
    super::json_text(profile)
}

fn entry(rule: &SyscallRule, checks: Option<&Vec<ArgCheck>>) -> Value {
    let mut comment = rule.why.to_string();
    let mut e = json!({
        "names": [rule.name],
        "action": "SCMP_ACT_ERRNO",
        "errnoRet": rule.errno,
    });
    if let Some(checks) = checks {
        let args: Vec<Value> = checks.iter().map(arg).collect();
        if checks.iter().any(|c| matches!(c, ArgCheck::Ne32 { .. })) {
            comment.push_str(
                " (not-equal is compared on all 64 bits: libseccomp has no masked not-equal; this denies at least what cordon's filter denies)",
            );
        }
        let indexes: BTreeSet<u8> = checks.iter().map(index).collect();
        if indexes.len() != checks.len() {
            // crun and runc split same-argument checks into separate rules, i.e. OR them.
            comment.push_str(
                " (several checks on one argument: runtimes OR them, so this entry denies more than cordon's filter)",
            );
        }
        e["args"] = Value::Array(args);
    }
    e["comment"] = Value::String(comment);
    e
}

fn index(check: &ArgCheck) -> u8 {
    match *check {
        ArgCheck::Eq32 { index, .. }
        | ArgCheck::Ne32 { index, .. }
        | ArgCheck::HasBits { index, .. }
        | ArgCheck::HasBits32 { index, .. } => index,
    }
}

fn arg(check: &ArgCheck) -> Value {
    let (value, value_two, op) = match *check {
        ArgCheck::Eq32 { value, .. } => (0xffff_ffff_u64, value as u64, "SCMP_CMP_MASKED_EQ"),
        ArgCheck::Ne32 { value, .. } => (value as u64, 0, "SCMP_CMP_NE"),
        ArgCheck::HasBits { mask, .. } => (mask, mask, "SCMP_CMP_MASKED_EQ"),
        ArgCheck::HasBits32 { mask, .. } => (mask as u64, mask as u64, "SCMP_CMP_MASKED_EQ"),
    };
    json!({
        "index": index(check),
        "value": value,
        "valueTwo": value_two,
        "op": op,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &'static str, when: Vec<Vec<ArgCheck>>) -> SyscallRule {
        SyscallRule {
            name,
            errno: 1,
            when,
            why: "because",
        }
    }

    #[test]
    fn masked_eq_takes_the_mask_first() {
        let v = render(
            &[rule(
                "ioctl",
                vec![vec![ArgCheck::Eq32 {
                    index: 1,
                    value: 0x5412,
                }]],
            )],
            OciArch::X86_64,
        );
        assert_eq!(
            v["syscalls"][0]["args"][0],
            json!({"index": 1, "value": 0xffff_ffffu64, "valueTwo": 0x5412, "op": "SCMP_CMP_MASKED_EQ"})
        );
    }

    #[test]
    fn alternatives_become_entries_in_order() {
        let v = render(
            &[
                rule(
                    "clone",
                    vec![
                        vec![ArgCheck::HasBits { index: 0, mask: 2 }],
                        vec![ArgCheck::HasBits { index: 0, mask: 1 }],
                    ],
                ),
                rule("bpf", vec![]),
            ],
            OciArch::X86_64,
        );
        let s = v["syscalls"].as_array().unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0]["names"][0], "bpf");
        assert!(s[0].get("args").is_none());
        assert_eq!(s[1]["args"][0]["value"], 2);
        assert_eq!(s[2]["args"][0]["value"], 1);
    }

    #[test]
    fn aarch64_leaves_out_x86_only_calls() {
        let v = render(
            &[rule("open", vec![]), rule("openat", vec![])],
            OciArch::Aarch64,
        );
        assert_eq!(v["architectures"], json!(["SCMP_ARCH_AARCH64"]));
        assert_eq!(v["syscalls"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn same_argument_checks_are_flagged() {
        let v = render(
            &[rule(
                "x",
                vec![vec![
                    ArgCheck::Ne32 { index: 0, value: 1 },
                    ArgCheck::Ne32 { index: 0, value: 2 },
                ]],
            )],
            OciArch::X86_64,
        );
        let c = v["syscalls"][0]["comment"].as_str().unwrap();
        assert!(
            c.contains("runtimes OR them") && c.contains("64 bits"),
            "{c}"
        );
    }
}
