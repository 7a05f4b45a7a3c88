//! The bwrap invocation as a runnable, commented shell script: the same options
//! [`crate::bwrap::invocation`] builds for `cordon exec --backend bwrap`, one per line, each
//! with the policy key that caused it.
//!
//! cordon's own plumbing is listed in comments, not run: its seccomp program and status pipe
//! arrive as file descriptors, and it runs the command through its inner stage, which applies
//! Landlock inside the sandbox. The script runs the command directly, with the same view.

use std::path::Path;

use crate::bwrap::{invocation, Context};
use crate::profile::Profile;

/// Where the run's private /tmp stands in the profile; the script creates its own.
pub use super::PRIVATE_TMP;

/// Renders the script for `profile`, with `cwd` as the command's directory.
pub fn render(
    profile: &Profile,
    cwd: &Path,
    bwrap: &Path,
    root: bool,
) -> Result<String, crate::Error> {
    let cx = Context {
        cwd,
        tmp: Path::new(PRIVATE_TMP),
        root,
        seccomp_fds: &[10],
        dry_run: true,
        outer_network: false,
        outer_devices: false,
    };
    let inv = invocation(profile, &cx)?;
    let mut out = String::new();
    out.push_str("#!/bin/bash\n");
    out.push_str("# cordon: the bubblewrap sandbox `cordon exec --backend bwrap` builds, generated from the\n");
    out.push_str(
        "# policy. Usage: this-script COMMAND [ARGS...]. Later mounts win over earlier ones.\n",
    );
    out.push_str("set -euo pipefail\n");
    out.push_str(": \"${CORDON_TMP:=$(mktemp -d)}\"   # the run's private /tmp\n");
    if root {
        out.push_str("# as root, the sandbox's own /dev (see the --dev-bind option below)\n");
        out.push_str(&format!(
            "mkdir -p \"$CORDON_TMP/{0}\"\n",
            crate::bwrap::DEVICE_DIR
        ));
        for (name, major, minor) in crate::bwrap::DEVICE_NODES {
            out.push_str(&format!(
                "mknod -m 666 \"$CORDON_TMP/{}/{name}\" c {major} {minor}\n",
                crate::bwrap::DEVICE_DIR
            ));
        }
        for name in crate::bwrap::DEVICE_DIRS {
            out.push_str(&format!(
                "mkdir \"$CORDON_TMP/{}/{name}\"\n",
                crate::bwrap::DEVICE_DIR
            ));
        }
        for (name, target) in crate::bwrap::DEVICE_LINKS {
            out.push_str(&format!(
                "ln -s {target} \"$CORDON_TMP/{}/{name}\"\n",
                crate::bwrap::DEVICE_DIR
            ));
        }
        out.push_str(
            "# (cordon also mounts a devpts instance of the sandbox's own on pts, in a mount\n",
        );
        out.push_str("# namespace of its own; without it there are no pseudo-terminals inside)\n");
    }
    out.push_str("args=(\n");
    let mut plumbing = Vec::new();
    for o in &inv.options {
        let words: Vec<String> = o.words.iter().map(|w| word(&w.to_string_lossy())).collect();
        if o.plumbing {
            plumbing.push(format!("#   {}   ({})", words.join(" "), o.why));
            continue;
        }
        out.push_str(&format!("  # {}\n  {}\n", comment(&o.why), words.join(" ")));
    }
    out.push_str(")\n");
    if profile.network == cordon_policy::Network::Proxy {
        out.push_str("# sandbox.network = \"proxy\": the network namespace above (no --share-net) has only\n");
        out.push_str(&format!(
            "# loopback. Before the command starts, cordon's inner stage makes the proxy's\n\
             # listener on port {0} there (`proxy {0} FD` before the inner stage's `--`) and\n\
             # sends it to cordon over a unix socket; cordon's proxy accepts on it from outside\n\
             # the sandbox. Landlock lets TCP connect to port {0} only and bind nowhere; seccomp\n\
             # allows only IPv4 and IPv6 sockets. This script starts no proxy: the command it\n\
             # runs reaches nothing.\n",
            crate::PROXY_PORT
        ));
    }
    out.push_str("# cordon runs the command through its inner stage, a static program in a sealed memfd that\n");
    out.push_str("# applies Landlock inside (the `landlock` format) and then execs the command:\n");
    out.push_str(
        "#   /proc/self/fd/N RULESET_FD COUNT [PATH DIR_RIGHTS FILE_RIGHTS]... -- COMMAND...\n",
    );
    out.push_str("# and passes its own plumbing:\n");
    for p in plumbing {
        out.push_str(&p);
        out.push('\n');
    }
    out.push_str(&format!(
        "exec {} \"${{args[@]}}\" -- \"$@\"\n",
        word(&bwrap.to_string_lossy())
    ));
    Ok(out)
}

/// One shell word: the private tmp becomes "$CORDON_TMP"; anything unusual is single-quoted.
fn word(w: &str) -> String {
    if w == PRIVATE_TMP {
        return "\"$CORDON_TMP\"".into();
    }
    if let Some(rest) = w.strip_prefix(&format!("{PRIVATE_TMP}/")) {
        return format!("\"$CORDON_TMP\"/{}", word(rest));
    }
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Comment text on one line (policy root names are the user's text).
fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Access, PathRule};
    use cordon_policy::{Limits, Network};

    #[test]
    fn quoting_is_safe() {
        assert_eq!(word("/usr"), "/usr");
        assert_eq!(word("a b"), "'a b'");
        assert_eq!(word("it's"), "'it'\\''s'");
        assert_eq!(word("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(word(PRIVATE_TMP), "\"$CORDON_TMP\"");
        assert_eq!(comment("a\nb"), "a b");
    }

    #[test]
    fn script_runs_the_same_view() {
        let d = tempfile::tempdir().unwrap();
        let profile = Profile {
            rules: vec![PathRule {
                path: d.path().to_path_buf(),
                access: Access {
                    write: true,
                    exec: true,
                    device: false,
                },
                origin: "sandbox.paths.w (rw)".into(),
            }],
            protected: vec![],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        }
        .with_private_tmp(Path::new(PRIVATE_TMP));
        let text = render(&profile, d.path(), Path::new("/usr/bin/bwrap"), false).unwrap();
        assert!(
            text.contains("  # sandbox.paths.w (rw)\n  --bind "),
            "{text}"
        );
        assert!(text.contains("--bind \"$CORDON_TMP\" /tmp"), "{text}");
        assert!(
            text.contains("#   --add-seccomp-fd 10"),
            "plumbing is commented: {text}"
        );
        assert!(!text.contains("\n  --add-seccomp-fd"), "{text}");
        assert!(text.ends_with("exec /usr/bin/bwrap \"${args[@]}\" -- \"$@\"\n"));
        assert!(!text.contains("proxy"), "{text}");
        // sandbox.network = "deny": bwrap keeps its empty network namespace on every kernel
        // (only the Landlock backend drops it, network.rs).
        assert!(!text.contains("--share-net"), "{text}");
        // sandbox.network = "proxy": the same namespaces (no --share-net), and a note tying
        // the inner stage's listener to the policy.
        let text = render(
            &Profile {
                network: Network::Proxy,
                ..profile
            },
            d.path(),
            Path::new("/usr/bin/bwrap"),
            false,
        )
        .unwrap();
        assert!(!text.contains("\n  --share-net"), "{text}");
        assert!(
            text.contains("# sandbox.network = \"proxy\": the network namespace")
                && text.contains("`proxy 3128 FD`"),
            "{text}"
        );
    }
}
