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

/// Whether `value` is a locale name glibc looks up by name, never as a path: an XPG name
/// `language[_territory][.codeset][@modifier]` (`C`, `POSIX`, `C.UTF-8`, `de_DE.ISO-8859-15`,
/// `sr_RS@latin`), i.e. letters, digits, `_`, `-`, `.` and `@`, without `..`, at most 255 bytes
/// (glibc's own limit). glibc treats a name with a `/` as a path and loads whatever locale
/// data (and message catalogues, with their format strings) it finds there.
pub fn is_locale_name(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 255
        && !value.contains("..")
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'@'))
}

/// Whether `value` is a time zone glibc looks up under its zone directory, never a file of
/// the caller's choosing: a zone name (`Europe/Paris`, `UTC`, with or without the leading `:`)
/// or a POSIX TZ string (`EST5EDT`, `CET-1CEST,M3.5.0,M10.5.0/3`, `<+0330>-3:30`). glibc's
/// `tzset` first loads `TZ` (less a leading `:`) as a tzfile: an absolute name is read as
/// written, a relative one under `/usr/share/zoneinfo`, so a leading `/` or a `..` would make
/// every program read (and parse) a file the caller chose. At most 255 bytes.
pub fn is_tz_value(value: &str) -> bool {
    let name = value.strip_prefix(':').unwrap_or(value);
    !name.is_empty()
        && value.len() <= 255
        && !name.starts_with('/')
        && !name.contains("..")
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'-' | b'+' | b'/' | b',' | b'.' | b':' | b'<' | b'>'
                )
        })
}

/// Whether a locale variable may pass: `LANG` and `LC_*` hold one locale name, `LANGUAGE`
/// (gettext) a `:`-separated list of them.
fn locale_value_ok(name: &str, value: &OsStr) -> bool {
    let Some(v) = value.to_str() else {
        return false;
    };
    if name == "LANGUAGE" {
        v.split(':').all(is_locale_name)
    } else {
        is_locale_name(v)
    }
}

/// Builds the child's environment from the parent's: the allow-list, `LC_*`, and the policy's
/// extra names; `TMPDIR` points at the run's private directory. `LANG`, `LANGUAGE` and `LC_*`
/// pass only when they hold valid locale names ([`is_locale_name`]), even when the policy
/// names them in `sandbox.env`; `TZ` only when it names a zone ([`is_tz_value`]).
pub fn scrub<I>(parent: I, extra: &[String], tmpdir: &OsStr) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut out: Vec<(OsString, OsString)> = parent
        .into_iter()
        .filter(|(k, v)| {
            let Some(k) = k.to_str() else { return false };
            let locale = k == "LANG" || k == "LANGUAGE" || k.starts_with("LC_");
            !is_loader_variable(k)
                && (PASSED.contains(&k) || k.starts_with("LC_") || extra.iter().any(|e| e == k))
                && (!locale || locale_value_ok(k, v))
                && (k != "TZ" || v.to_str().is_some_and(is_tz_value))
        })
        .collect();
    if !out.iter().any(|(k, _)| k == "PATH") {
        out.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    out.push(("TMPDIR".into(), tmpdir.to_os_string()));
    out.sort();
    out
}

/// Whether `name` is a variable that points clients at a proxy or past one, in any case and
/// spelling known (`HTTP_PROXY`, `NO_PROXY`, `npm_config_noproxy`, `YARN_NO_PROXY`,
/// `PIP_PROXY`, …). Under `network = "proxy"` the command inherits none of them, even when
/// `sandbox.env` names one, and gets cordon's proxy settings instead: a `NO_PROXY` for
/// loopback would send clients around the proxy into the sandbox's own, empty loopback.
pub fn is_proxy_variable(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    let tool = ["npm_config_", "yarn_", "pip_"]
        .iter()
        .find_map(|p| n.strip_prefix(p));
    // `proxy` and `noproxy` alone are proxy settings only as a tool's (`npm_config_proxy`).
    let generic = |v: &str| {
        matches!(
            v,
            "http_proxy" | "https_proxy" | "all_proxy" | "ftp_proxy" | "no_proxy"
        )
    };
    match tool {
        Some(rest) => generic(rest) || rest == "proxy" || rest == "noproxy",
        None => generic(&n),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn proxy_variables_in_every_spelling() {
        for k in [
            "HTTP_PROXY",
            "http_proxy",
            "NO_PROXY",
            "no_proxy",
            "npm_config_noproxy",
            "NPM_CONFIG_NOPROXY",
            "npm_config_no_proxy",
            "npm_config_https-proxy",
            "YARN_NO_PROXY",
            "yarn_https_proxy",
            "PIP_PROXY",
            "FTP_PROXY",
            "all_proxy",
        ] {
            assert!(is_proxy_variable(k), "{k}");
        }
        for k in [
            "PROXY",
            "NOPROXY",
            "PROXY_PASS",
            "HOME",
            "NOPROXY_X",
            "http_proxy_user",
        ] {
            assert!(!is_proxy_variable(k), "{k}");
        }
    }
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
    fn only_valid_locale_names_pass() {
        for good in [
            "C",
            "POSIX",
            "C.UTF-8",
            "en_US.UTF-8",
            "en_US.utf8",
            "de_DE.ISO-8859-15@euro",
            "sr_RS@latin",
            "ca_ES.UTF-8@valencia",
        ] {
            assert!(is_locale_name(good), "{good}");
        }
        let long = "a".repeat(256);
        for bad in [
            "",
            "/tmp/evil",
            "./evil",
            "../../tmp/evil",
            "..",
            "en_US/../../x",
            "C.UTF-8/",
            "en US",
            "C\nLD_PRELOAD=x",
            "de_DE:en",
            long.as_str(),
        ] {
            assert!(!is_locale_name(bad), "{bad:?}");
        }
        let parent = [
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "/tmp/evil"),
            ("LC_MESSAGES", "../../w/locale"),
            ("LC_CTYPE", "en_US.UTF-8"),
            ("LC_TIME", "x/y"),
            ("LANGUAGE", "de_DE:en_GB:en"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = scrub(parent, &["LC_ALL".into()], OsStr::new("/t"));
        let kept: Vec<_> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_str().unwrap(), v.to_str().unwrap()))
            .collect();
        assert_eq!(
            kept,
            [
                "LANG=C.UTF-8",
                "LANGUAGE=de_DE:en_GB:en",
                "LC_CTYPE=en_US.UTF-8",
                "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
                "TMPDIR=/t"
            ]
        );
        for bad in ["de:/tmp/x", "de::en", ":", "de:..", ""] {
            let parent = [(OsString::from("LANGUAGE"), OsString::from(bad))];
            let env = scrub(parent, &[], OsStr::new("/t"));
            assert!(!env.iter().any(|(k, _)| k == "LANGUAGE"), "{bad:?}");
        }
    }

    #[test]
    fn tz_passes_only_as_a_zone() {
        for good in [
            "UTC",
            "Europe/Paris",
            ":Europe/Paris",
            "America/Argentina/Buenos_Aires",
            "Etc/GMT+5",
            "EST5EDT",
            "CET-1CEST,M3.5.0,M10.5.0/3",
            "<+0330>-3:30",
            "right/UTC",
        ] {
            assert!(is_tz_value(good), "{good}");
            let parent = [(OsString::from("TZ"), OsString::from(good))];
            let env = scrub(parent, &[], OsStr::new("/t"));
            assert!(env.iter().any(|(k, v)| k == "TZ" && v == good), "{good}");
        }
        let long = "a".repeat(256);
        for bad in [
            "",
            ":",
            "/etc/shadow",
            ":/tmp/evil/zone",
            "//tmp/x",
            "../../../../tmp/evil",
            ":../../../tmp/evil",
            "Europe/../../../../tmp/x",
            "Europe/..",
            "UTC\nLD_PRELOAD=x",
            "Europe Paris",
            long.as_str(),
        ] {
            assert!(!is_tz_value(bad), "{bad:?}");
            // Named in sandbox.env as well: still dropped.
            let parent = [(OsString::from("TZ"), OsString::from(bad))];
            let env = scrub(parent, &["TZ".into()], OsStr::new("/t"));
            assert!(!env.iter().any(|(k, _)| k == "TZ"), "{bad:?}");
        }
    }

    #[test]
    fn default_path_when_missing() {
        let env = scrub(Vec::new(), &[], OsStr::new("/t"));
        assert!(env.iter().any(|(k, v)| k == "PATH" && v == DEFAULT_PATH));
    }
}
