//! The Landlock ruleset as JSON: which rights the ruleset handles on a given ABI, and which
//! rights each path gets — derived exactly as [`crate::landlock::prepare`] derives them
//! (through [`crate::landlock::fs_rights`]), so the listing is what the kernel receives.
//!
//! ```json
//! {
//!   "abi": 6,
//!   "enforcement": "full",
//!   "gaps": [],
//!   "handled_access_fs": ["execute", "write_file", "read_file", …],
//!   "handled_access_net": ["bind_tcp", "connect_tcp"],
//!   "scoped": ["abstract_unix_socket", "signal"],
//!   "rules": [{"path": "/usr", "type": "dir", "access": ["execute", "read_file", "read_dir"],
//!              "origin": "sandbox.system_read (programs)"}],
//!   "protected_mounts": [{"path": …, "mount": "read-only bind onto itself", "why": …}],
//!   "user_config_mounts": [{"path": "/root/.gitconfig", "mount": "/dev/null, read-only", "why": …}],
//!   "notes": [...]
//! }
//! ```
//!
//! Right names are the kernel's (`LANDLOCK_ACCESS_FS_MAKE_REG` → `make_reg`), in the
//! kernel's bit order. A rule on a file gets only the rights that apply to files, so each
//! path's type is looked up on the machine that renders the ruleset; a path that does not
//! exist there is rendered as a directory, and its `type` says `missing`.
//!
//! `protected_mounts` are the mounts the backend's init makes in the command's own mount
//! namespace before the command starts ([`crate::protect`]), which keep protected paths
//! read-only inside the writable roots (Landlock rules alone cannot): as planned on the
//! machine that renders them (a missing path is covered where it would be created).
//! `user_config_mounts` are the init's covers of the operator's per-user configuration that a
//! program dies on when it cannot read it ([`crate::protect::hidden_user_config`]), for the
//! environment `cordon profile` runs in.

use cordon_policy::Network;
use landlock::{Access, AccessFs, AccessNet, BitFlags, Scope, ABI};
use serde_json::{json, Value};

use crate::landlock::{enforcement, fs_rights, Enforcement};
use crate::profile::Profile;

/// Renders the ruleset that [`crate::landlock::prepare`] builds for `profile` on a kernel
/// with Landlock ABI `abi`; `env` is the command's environment (HOME and the rest that say
/// where the per-user configuration the init covers lies).
pub fn render(
    profile: &Profile,
    abi: i32,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Value {
    let level = ABI::from(abi);
    let handled_fs = AccessFs::from_all(level);
    // The same conditions as `prepare`.
    let handled_net = if profile.network != Network::Allow && abi >= 4 {
        AccessNet::from_all(level)
    } else {
        BitFlags::EMPTY
    };
    let scoped = if abi >= 6 {
        Scope::from_all(level)
    } else {
        BitFlags::EMPTY
    };

    // The rules the backend adds: `prepare`'s, and init's for what it mounts fresh (/proc, the
    // command's own devpts on /dev/pts; never the host's, see `landlock::HOST_PTYS`).
    let ptys = std::path::Path::new(crate::landlock::HOST_PTYS);
    let rules: Vec<Value> = profile
        .rules
        .iter()
        .map(|rule| {
            let (kind, is_dir) = match std::fs::metadata(&rule.path) {
                Ok(m) if m.is_dir() => ("dir", true),
                Ok(_) => ("file", false),
                Err(_) => ("missing", true),
            };
            json!({
                "path": rule.path.to_string_lossy(),
                "type": kind,
                "access": names(fs_rights(rule.access, is_dir, level)),
                "origin": if crate::landlock::is_host_ptys_rule(rule) {
                    format!("{} (added by init to the command's own devpts)", rule.origin)
                } else {
                    rule.origin.clone()
                },
            })
        })
        .collect();

    let (level_name, gaps) = match enforcement(abi, profile.network) {
        Enforcement::Full => ("full", vec![]),
        Enforcement::Partial(gaps) => ("partial", gaps),
        Enforcement::None => ("none", vec![]),
    };
    let gaps: Vec<Value> = gaps
        .iter()
        .map(|g| json!({"what": g.what, "needs_abi": g.needs_abi}))
        .collect();

    // The protected paths' mounts, as the init would make them (dry run: no placeholder is
    // created here).
    let rule_refs: Vec<&crate::profile::PathRule> = profile.rules.iter().collect();
    let plan = crate::protect::plan(
        &profile.protected,
        &crate::protect::writable_roots(&rule_refs),
        true,
    );
    let mount = |m: &crate::protect::Mount| {
        use crate::protect::Cover;
        json!({
            "path": m.at.to_string_lossy(),
            "mount": match m.cover {
                Cover::Anchor => "bound onto itself (a mount point cannot be renamed away)",
                Cover::ReadOnly => "read-only bind onto itself",
                Cover::Null => "/dev/null, read-only",
                Cover::EmptyDir => "an empty read-only tmpfs",
            },
            "why": m.why,
        })
    };
    let protected: Vec<Value> = match &plan {
        Ok(plan) => plan.anchors.iter().chain(&plan.covers).map(mount).collect(),
        Err(_) => vec![],
    };
    // The per-user configuration the init covers too.
    let user_config: Vec<Value> = crate::protect::hidden_user_config(&profile.rules, env)
        .iter()
        .map(mount)
        .collect();

    let mut notes = vec![
        "Everything in handled_access_fs, handled_access_net and scoped is denied unless a rule grants it.".to_string(),
        "A path's type (dir, file) was looked up on the machine that rendered this; a missing path is rendered as a directory (the kernel needs the path to exist when the ruleset is built).".to_string(),
    ];
    if profile.rules.iter().any(|r| r.path == ptys) {
        notes.push(format!("{} is the command's own: the backend's init mounts a devpts instance of its own there (ptmxmode=0666, mode=620, at most {} ptys) and adds this rule to it, so a pty the command makes (script, ssh -t, expect) is its own and the host's terminals (every session's) are not in its view; the command's terminal is a pty cordon opens for it and passes as a descriptor. Where that namespace cannot be made, the rule is left out and such programs get no pty.", crate::landlock::HOST_PTYS, crate::profile::PTY_MAX.to_string_lossy()));
    }
    if let Err(e) = crate::landlock::host_rules(profile) {
        notes.push(format!(
            "cordon refuses this policy on the Landlock backend: {e}"
        ));
    }
    if level as i32 != abi.max(0) {
        notes.push(format!(
            "ABI {abi} is newer than cordon knows; rights are those of ABI {}.",
            level as i32
        ));
    }
    notes.push("Landlock has no right for metadata (chmod, chown, utime, xattrs): the backend's init makes the command's whole mount tree read-only in its own mount namespace and gives write back only to the writable roots (rules with write access, device nodes aside: writing them works on a read-only mount), and makes its fresh /proc read-only as a whole (the mode of a kernel entry such as /proc/kallsyms is the host's); so no system file's, kernel /proc entry's or host device node's mode, owner or times can change, as root either. Where that namespace cannot be made, this does not hold, and `auto` as root picks bwrap.".to_string());
    notes.push("Landlock has no right for inotify: the command's inotify_add_watch goes to a supervisor (seccomp user notification), its parent, in the command's own Landlock domain with its credentials, which opens the path itself and watches it only if that open shows the command could read it (a directory or a regular file; anything else EACCES). So no watch reports the names made outside the roots. Without the backend's namespaces (where they cannot be made) there is no supervisor, and this does not hold.".to_string());
    match &plan {
        Ok(_) if !profile.protected.is_empty() => notes.push("Landlock rules cannot keep a path inside a writable root read-only: the backend's init makes protected_mounts in the command's own mount namespace before the command starts, and Landlock forbids the command to mount or unmount (where that namespace cannot be made, cordon refuses to run this policy on the Landlock backend).".to_string()),
        Ok(_) => {}
        Err(e) => notes.push(format!("cordon refuses this policy on the Landlock backend: {e}")),
    }

    if profile.network == Network::Deny {
        notes.push(format!(
            "sandbox.network = \"deny\": {}.",
            crate::network::isolation(profile.network, &crate::Chosen::Landlock { abi }, false)
        ));
    }
    if profile.network == Network::Proxy {
        notes.push(format!(
            "sandbox.network = \"proxy\": the command runs in a network namespace of its own with only loopback, where cordon's proxy listens on port {port} (made before the command starts); {}",
            if abi >= 4 && !profile.forwards.is_empty() {
                "TCP connect is allowed to that port and the forwarded ones ([network.forward]) only (net_rules), bind to none"
            } else if abi >= 4 {
                "TCP connect is allowed to that port only (net_rules), bind to none"
            } else {
                "this ABI cannot restrict TCP ports, so the namespace alone keeps the command from everything but the proxy"
            },
            port = crate::PROXY_PORT
        ));
    }
    let mut out = json!({
        "abi": abi,
        "enforcement": level_name,
        "gaps": gaps,
        "handled_access_fs": names(handled_fs),
        "handled_access_net": names(handled_net),
        "scoped": names(scoped),
        "rules": rules,
        "protected_mounts": protected,
        "user_config_mounts": user_config,
        "notes": notes,
    });
    if profile.network == Network::Proxy && abi >= 4 {
        out["net_rules"] = json!([{
            "port": crate::PROXY_PORT,
            "access": names(BitFlags::from(AccessNet::ConnectTcp)),
            "origin": "sandbox.network = \"proxy\" (cordon's proxy)",
        }]);
        for port in &profile.forwards {
            if let Some(rules) = out["net_rules"].as_array_mut() {
                rules.push(json!({
                    "port": port,
                    "access": names(BitFlags::from(AccessNet::ConnectTcp)),
                    "origin": "[network.forward] (a forwarded loopback port)",
                }));
            }
        }
    }
    out
}

/// Kernel names of the flags, in bit order: `MakeReg` → `make_reg`.
fn names<T>(flags: BitFlags<T>) -> Vec<String>
where
    T: Access + std::fmt::Debug,
{
    flags.iter().map(|f| snake(&format!("{f:?}"))).collect()
}

fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
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
    fn kernel_names_in_bit_order() {
        assert_eq!(
            names(AccessFs::from_all(ABI::V1)),
            [
                "execute",
                "write_file",
                "read_file",
                "read_dir",
                "remove_dir",
                "remove_file",
                "make_char",
                "make_dir",
                "make_reg",
                "make_sock",
                "make_fifo",
                "make_block",
                "make_sym"
            ]
        );
        assert_eq!(
            names(AccessFs::from_all(ABI::V5)).last().unwrap(),
            "ioctl_dev"
        );
        assert_eq!(
            names(AccessNet::from_all(ABI::V4)),
            ["bind_tcp", "connect_tcp"]
        );
        assert_eq!(
            names(Scope::from_all(ABI::V6)),
            ["abstract_unix_socket", "signal"]
        );
    }
}
