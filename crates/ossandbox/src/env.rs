//! The child's environment: an allow-list, never the parent's secrets or loader variables.

use std::ffi::{OsStr, OsString};

use cordon_policy::is_loader_variable;

/// Variables passed through when set: what programs need to find things, format output for
/// the terminal and pick a language. Everything else (API keys, tokens, `SSH_AUTH_SOCK`,
/// `LD_PRELOAD`, ...) is dropped.
pub const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "LANG",
    "LANGUAGE",
    "TZ",
];

/// The PATH a child gets when the parent has none.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// Builds the child's environment from the parent's: the allow-list, `LC_*`, and the policy's
/// extra names; `TMPDIR` points at the run's private directory.
pub fn scrub<I>(parent: I, extra: &[String], tmpdir: &OsStr) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut out: Vec<(OsString, OsString)> = parent
        .into_iter()
        .filter(|(k, _)| {
            let Some(k) = k.to_str() else { return false };
            !is_loader_variable(k)
                && (PASSED.contains(&k) || k.starts_with("LC_") || extra.iter().any(|e| e == k))
        })
        .collect();
    if !out.iter().any(|(k, _)| k == "PATH") {
        out.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    out.push(("TMPDIR".into(), tmpdir.to_os_string()));
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_loader_variables_never_pass() {
        let parent = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/a"),
            ("LC_ALL", "C"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("LD_PRELOAD", "/evil.so"),
            ("LD_LIBRARY_PATH", "/evil"),
            ("GLIBC_TUNABLES", "x"),
            ("TMPDIR", "/shared"),
            ("CARGO_HOME", "/c"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = scrub(
            parent,
            &["CARGO_HOME".into(), "LD_PRELOAD".into()],
            OsStr::new("/tmp/cordon-x"),
        );
        let keys: Vec<_> = env.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(keys, ["CARGO_HOME", "HOME", "LC_ALL", "PATH", "TMPDIR"]);
        assert_eq!(
            env.iter().find(|(k, _)| k == "TMPDIR").unwrap().1,
            "/tmp/cordon-x"
        );
    }

    #[test]
    fn default_path_when_missing() {
        let env = scrub(Vec::new(), &[], OsStr::new("/t"));
        assert!(env.iter().any(|(k, v)| k == "PATH" && v == DEFAULT_PATH));
    }
}
