//! A run's credentials (`[credentials.NAME]`): the real values read outside the sandbox, a
//! fresh placeholder for each in the command's environment, and the CA bundle that makes the
//! command's clients accept cordon's proxy for the hosts whose TLS it terminates.
//!
//! ```text
//!  policy [credentials.gh] ──read (env: / file: link-safe / command: operator's program,
//!                            timeout, before the sandbox)──▶ real value (cordon's memory only)
//!                         ──placeholder "cordon-…" (fresh per run)──▶ GH_TOKEN in the command
//!  run's CA (netproxy) + system bundle + upstream_ca ──▶ TMPDIR/cordon-ca.pem ──▶ SSL_CERT_FILE,
//!                            REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, …
//! ```

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cordon_netproxy::{Secret, Termination};
use cordon_ossandbox::RunFile;
use cordon_policy::{Credential, Policy, Source};

use crate::{clean, Error};

/// The variables the command's TLS clients read a CA bundle from: OpenSSL and curl, Python
/// (requests, pip, httpx via SSL_CERT_FILE), node, git, cargo, Deno, AWS and gcloud SDKs.
pub const CA_BUNDLE_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_CAINFO",
    "PIP_CERT",
    "CARGO_HTTP_CAINFO",
    "DENO_CERT",
    "AWS_CA_BUNDLE",
    "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
];

/// The bundle's name in the run's private TMPDIR.
pub const CA_BUNDLE_FILE: &str = "cordon-ca.pem";

/// Where systems keep their bundle of trusted CAs (Debian and Arch, Fedora and RHEL, openSUSE,
/// Alpine and macOS): the first that exists is used.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The longest value a credential may have (a file or a program's output beyond is refused).
const MAX_VALUE: u64 = 64 * 1024;

/// How long a `command:` source may take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// What a run with credentials gets: the proxy's termination, and the command's variables and
/// files.
pub(crate) struct RunCredentials {
    pub termination: std::sync::Arc<Termination>,
    pub vars: Vec<(String, String)>,
    pub files: Vec<RunFile>,
}

/// Reads every credential of `policy` and prepares the run's termination (for the hosts of
/// credentials and of `[[network.requests]]`); `None` without either. A value that cannot be read refuses the run (125): the command never starts
/// with a placeholder that leads nowhere or, worse, with nothing checked.
///
/// `readable` is what the run's kernel profile lets the command read (each path and the policy
/// key behind it): a `file:` credential there is refused, since the command could read the
/// real value itself and the placeholder would protect nothing.
pub(crate) fn prepare(
    policy: &Policy,
    readable: &[(PathBuf, String)],
) -> Result<Option<RunCredentials>, Error> {
    let ruled: Vec<_> = policy
        .network
        .requests
        .iter()
        .map(|r| r.host.clone())
        .collect();
    if policy.credentials.is_empty() && ruled.is_empty() {
        return Ok(None);
    }
    let mut secrets = Vec::new();
    let mut vars = Vec::new();
    for c in &policy.credentials {
        within_reach(c, readable)?;
        let value = read(c)?;
        let placeholder = placeholder(c)?;
        vars.push((c.env.clone(), placeholder.clone()));
        secrets.push(Secret {
            name: c.name.clone(),
            placeholder,
            value,
            hosts: c.hosts.clone(),
            header: c.header.clone(),
        });
    }
    let system = system_bundle()?;
    let extra = match &policy.network.upstream_ca {
        Some(p) => std::fs::read(p).map_err(|e| {
            Error::failure(format!(
                "[network] upstream_ca {}: cannot read it: {e}",
                clean(&p.display().to_string())
            ))
        })?,
        None => Vec::new(),
    };
    let mut roots = system.clone();
    roots.push(b'\n');
    roots.extend_from_slice(&extra);
    let termination = Termination::new(secrets, ruled, &roots).map_err(|e| {
        Error::failure(format!(
            "cannot set up TLS termination for the run's credentials: {}",
            clean(&e.to_string())
        ))
    })?;
    // The command trusts what cordon trusts for upstreams, plus the run's CA for the hosts
    // cordon terminates.
    let mut bundle = roots;
    bundle.push(b'\n');
    bundle.extend_from_slice(termination.ca_pem().as_bytes());
    Ok(Some(RunCredentials {
        termination: std::sync::Arc::new(termination),
        vars,
        files: vec![RunFile {
            name: CA_BUNDLE_FILE.into(),
            contents: bundle,
            vars: CA_BUNDLE_VARS.iter().map(|v| v.to_string()).collect(),
        }],
    }))
}

/// A fresh placeholder for `c`: `cordon-NAME-` and 128 random bits in hex, unguessable, and
/// nothing like the value.
fn placeholder(c: &Credential) -> Result<String, Error> {
    let random = cordon_approval::audit::new_id()
        .map_err(|e| Error::failure(format!("cannot make a placeholder: {e}")))?;
    Ok(format!("cordon-{}-{random}", c.name))
}

fn system_bundle() -> Result<Vec<u8>, Error> {
    for p in SYSTEM_BUNDLES {
        if let Ok(b) = std::fs::read(p) {
            return Ok(b);
        }
    }
    Err(Error::failure(format!(
        "no system CA bundle ({}): cordon's proxy cannot verify upstream hosts for the run's credentials; install the system's CA certificates",
        SYSTEM_BUNDLES.join(", ")
    )))
}

/// A `file:` credential the sandbox lets the command read (a read-only root, `extra_read`, a
/// system directory): refused, naming the path it is readable through.
fn within_reach(c: &Credential, readable: &[(PathBuf, String)]) -> Result<(), Error> {
    let Source::File(path) = &c.from else {
        return Ok(());
    };
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    match readable
        .iter()
        .find(|(r, _)| path.starts_with(r) || real.starts_with(r))
    {
        Some((r, origin)) => Err(Error::failure(format!(
            "credential `{}` ({}): the sandboxed command could read the real value itself, through {} ({}); keep the file outside every path the sandbox reads, or use from = \"env:…\" or \"command:…\"",
            c.name,
            clean(&c.from.to_string()),
            clean(&r.display().to_string()),
            clean(origin)
        ))),
        None => Ok(()),
    }
}

/// Reads `c`'s real value. What a refusal says names the credential and its source, never a
/// value.
fn read(c: &Credential) -> Result<String, Error> {
    let fail = |why: &dyn std::fmt::Display| {
        Error::failure(format!(
            "credential `{}` ({}): {}; fix [credentials.{}] from, or what it names",
            c.name,
            clean(&c.from.to_string()),
            clean(&why.to_string()),
            c.name
        ))
    };
    let raw = match &c.from {
        Source::Env(var) => std::env::var(var).map_err(|_| {
            fail(&format!(
                "`{var}` is not set in cordon's environment (or not UTF-8)"
            ))
        })?,
        Source::File(path) => read_file(path).map_err(|e| fail(&e))?,
        Source::Command(argv) => run(argv).map_err(|e| fail(&e))?,
    };
    let value = raw.trim_end_matches(['\n', '\r']).to_string();
    if value.is_empty() {
        return Err(fail(&"the value is empty"));
    }
    // It goes into HTTP headers: a control character would split or end one.
    if value.bytes().any(|b| b.is_ascii_control()) {
        return Err(fail(
            &"the value holds a control character (a newline inside, say)",
        ));
    }
    Ok(value)
}

/// Why a credential's source gave no value: the kind says what failed, the message says it
/// in the words the refusal shows (`credential `NAME` (SOURCE): MESSAGE; fix …`).
fn why(kind: io::ErrorKind, message: impl Into<String>) -> io::Error {
    io::Error::new(kind, message.into())
}

/// A file's content, opened from `/` without following a link at any component.
fn read_file(path: &Path) -> io::Result<String> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(why(io::ErrorKind::InvalidInput, "not a file path"));
    };
    let bytes = cordon_fs::safe::Dir::open_absolute(dir)
        .and_then(|d| d.read(Path::new(name), MAX_VALUE))
        .map_err(|e| why(e.kind(), e.to_string()))?
        .ok_or_else(|| why(io::ErrorKind::NotFound, "no such file"))?;
    String::from_utf8(bytes).map_err(|_| why(io::ErrorKind::InvalidData, "the file is not UTF-8"))
}

/// The operator's program's standard output: run outside the sandbox, stdin closed, killed
/// after [`COMMAND_TIMEOUT`].
fn run(argv: &[String]) -> io::Result<String> {
    run_within(argv, COMMAND_TIMEOUT)
}

fn run_within(argv: &[String], timeout: Duration) -> io::Result<String> {
    let mut child = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| why(e.kind(), format!("cannot run it: {e}")))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    // Read on threads of their own, and waited for with a deadline: a program that leaves a
    // child holding its output open must not wedge the run.
    let (tx, rx) = std::sync::mpsc::channel();
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut out).take(MAX_VALUE + 1).read_to_end(&mut b);
        let _ = tx.send((true, b));
    });
    std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut err).take(4096).read_to_end(&mut b);
        let _ = tx2.send((false, b));
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(why(
                    io::ErrorKind::TimedOut,
                    format!("it took longer than {}s", COMMAND_TIMEOUT.as_secs()),
                ));
            }
            Err(e) => return Err(why(e.kind(), format!("cannot wait for it: {e}"))),
        }
    };
    let (mut out, mut err) = (None, Vec::new());
    for _ in 0..2 {
        let left = timeout.saturating_sub(start.elapsed());
        match rx.recv_timeout(left.max(Duration::from_secs(1))) {
            Ok((true, b)) => out = Some(b),
            Ok((false, b)) => err = b,
            Err(_) => break,
        }
    }
    let Some(out) = out else {
        return Err(why(
            io::ErrorKind::TimedOut,
            "its output was not closed in time (a process it left holds it?)",
        ));
    };
    if !status.success() {
        let said = String::from_utf8_lossy(&err);
        return Err(why(
            io::ErrorKind::Other,
            format!(
                "it failed ({status}){}",
                said.lines()
                    .next()
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default()
            ),
        ));
    }
    if out.len() as u64 > MAX_VALUE {
        return Err(why(
            io::ErrorKind::InvalidData,
            format!("its output is longer than {MAX_VALUE} bytes"),
        ));
    }
    String::from_utf8(out).map_err(|_| why(io::ErrorKind::InvalidData, "its output is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credential(from: &str) -> Credential {
        let text = format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[credentials.gh]\nenv = \"T\"\nfrom = {from:?}\nhosts = [\"api.example.org\"]\n"
        );
        Policy::parse(&text, "t.toml", Path::new("/"))
            .unwrap()
            .credentials
            .remove(0)
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_file_is_read_link_safely_and_trimmed() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("token");
        std::fs::write(&f, "s3cr3t\n").unwrap();
        let c = credential(&format!("file:{}", f.display()));
        assert_eq!(read(&c).unwrap(), "s3cr3t");
        // A link on the way is refused, and the refusal names no value.
        std::os::unix::fs::symlink(&f, d.path().join("link")).unwrap();
        let c = credential(&format!("file:{}", d.path().join("link").display()));
        let e = read(&c).unwrap_err().to_string();
        assert!(
            e.contains("credential `gh`") && !e.contains("s3cr3t"),
            "{e}"
        );
        // A newline inside would split a header.
        std::fs::write(&f, "a\nb\n").unwrap();
        let c = credential(&format!("file:{}", f.display()));
        assert!(read(&c)
            .unwrap_err()
            .to_string()
            .contains("control character"));
    }

    #[test]
    fn a_missing_variable_refuses_the_run() {
        let c = credential("env:CORDON_TEST_SURELY_UNSET_VARIABLE");
        let e = read(&c).unwrap_err();
        assert_eq!(e.exit_code(), crate::EXIT_FAILURE);
        assert!(e.to_string().contains("is not set"), "{e}");
    }

    #[test]
    fn a_command_is_the_operators_program_with_a_deadline() {
        assert_eq!(run(&argv(&["/bin/echo", "tok"])).unwrap(), "tok\n");
        let e = run(&argv(&["/bin/sh", "-c", "echo why >&2; exit 3"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exit status: 3") && e.contains("why"), "{e}");
        let start = Instant::now();
        let e = run_within(&argv(&["/bin/sleep", "30"]), Duration::from_secs(1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("took longer"), "{e}");
        // A process it leaves behind holding its output does not wedge the run. (Five
        // seconds, not one: sh itself must exit within them, else the error is "took longer";
        // a loaded machine can take over a second to start it.)
        let e = run_within(
            &argv(&["/bin/sh", "-c", "sleep 30 & echo tok"]),
            Duration::from_secs(5),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not closed in time"), "{e}");
        // Both bounded well before the 30 s of the sleeps.
        assert!(
            start.elapsed() < Duration::from_secs(25),
            "{:?}",
            start.elapsed()
        );
    }
}
