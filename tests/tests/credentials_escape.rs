//! issue 24 items 1–2: a secret the command never holds, end to end through `cordon exec` on
//! the real kernel, on the Landlock and bwrap backends, as root and as the unprivileged test
//! user (`cordon-test`).
//!
//! The test runs an HTTPS server of its own on the host's loopback (`api.test`, a certificate
//! from a CA of its own, which the policy names as `[network] upstream_ca`) that answers only
//! `Authorization: Bearer TOKEN`. cordon reads TOKEN from its own environment
//! (`from = "env:…"`); the command gets `GH_TOKEN=cordon-gh-…` and:
//!
//! * curl, Python's urllib, git (dumb HTTP `ls-remote`) and node's fetch (undici's
//!   `EnvHttpProxyAgent`, node 20) reach the server with the placeholder (or no header at
//!   all: the credential's `header` is added) and get 200;
//! * its environment (`env`, every `/proc/*/environ`) and every file in its TMPDIR (the CA
//!   bundle included) hold the placeholder, never the token;
//! * the placeholder sent in plain http:// is refused (403) and recorded;
//! * a method `[[network.requests]]` denies gets 403, recorded;
//! * the audit log holds no token.

// Landlock, seccomp, bubblewrap and network namespaces are Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{cordon_beside, describe, is_root, test_user, BinDir};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::rustls;

const TOKEN: &str = "e2e-real-token-7f3a9c0d5b1e2468";
const REF: &str = "0123456789abcdef0123456789abcdef01234567";

/// The undici the node check loads: installed by `scripts/test-deps.sh`.
fn undici() -> PathBuf {
    let prefix = std::env::var_os("CORDON_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cordon-test"));
    let p = prefix.join("npm/node_modules/undici");
    assert!(
        p.join("package.json").is_file(),
        "{} is missing: run scripts/test-deps.sh",
        p.display()
    );
    p
}

/// The HTTPS server: its port and its CA's PEM.
fn upstream() -> (u16, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "e2e upstream CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["api.test".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca_cert, &ca_key)
        .unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
            )
            .unwrap(),
    );
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let config = config.clone();
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(60)));
                let conn = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, s);
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if tls.read_exact(&mut b).is_err() {
                        return;
                    }
                    head.push(b[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                let ok = head.lines().any(|l| {
                    l.split_once(':').is_some_and(|(n, v)| {
                        n.eq_ignore_ascii_case("authorization")
                            && v.trim() == format!("Bearer {TOKEN}")
                    })
                });
                let body = if !ok {
                    "unauthorized\n".to_string()
                } else if path.starts_with("/repo.git/info/refs") {
                    format!("{REF}\trefs/heads/main\n")
                } else if path == "/repo.git/HEAD" {
                    "ref: refs/heads/main\n".to_string()
                } else {
                    format!("ok {path}")
                };
                let status = if ok { "200 OK" } else { "401 Unauthorized" };
                let _ = write!(
                    tls,
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    (port, ca_cert.pem())
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ids: Option<(u32, u32)>,
}

fn chown_all(p: &Path, ids: Option<(u32, u32)>) {
    if let Some((uid, gid)) = ids {
        std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
        if p.is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                chown_all(&e.unwrap().path(), ids);
            }
        }
    }
}

fn run_case(cordon: &Path, backend: &str, user: bool, port: u16, ca: &str) {
    let ids = user.then(test_user);
    let tmp = tempfile::Builder::new()
        .prefix("cordon-e2e-creds-")
        .tempdir_in("/tmp")
        .unwrap();
    let fx = Fixture {
        root: tmp.path().to_path_buf(),
        _tmp: tmp,
        ids,
    };
    std::fs::set_permissions(&fx.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    for d in ["ws", "state", "tmp", "policies"] {
        std::fs::create_dir(fx.root.join(d)).unwrap();
    }
    let ws = fx.root.join("ws");
    let state = fx.root.join("state");
    let ca_file = fx.root.join("policies/upstream-ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let undici = undici();
    std::fs::write(
        ws.join("fetch.cjs"),
        format!(
            "const {{ EnvHttpProxyAgent, fetch }} = require({:?});\n\
             fetch('https://api.test:{port}/node', {{ dispatcher: new EnvHttpProxyAgent() }})\n\
             .then(r => r.text()).then(t => console.log(t))\n\
             .catch(e => console.log('ERR', String(e.cause || e)));\n",
            undici.display().to_string()
        ),
    )
    .unwrap();
    let py = format!(
        "import os, urllib.request as u\n\
         r = u.Request('https://api.test:{port}/python', headers={{'Authorization': 'Bearer ' + os.environ['GH_TOKEN']}})\n\
         print(u.urlopen(r).read().decode())\n"
    );
    std::fs::write(ws.join("fetch.py"), py).unwrap();
    std::fs::write(
        ws.join("run.sh"),
        format!(
            "echo ENV; env\n\
             for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\"; done 2>/dev/null | sed 's/^/PROCENV /'\n\
             echo FILES; cat \"$TMPDIR\"/* 2>&1 | grep -v '^[A-Za-z0-9+/=]*$'\n\
             echo \"CURL $(curl -sS -H \"Authorization: Bearer $GH_TOKEN\" https://api.test:{port}/curl 2>&1)\"\n\
             echo \"PY $(python3 fetch.py 2>&1 | tail -1)\"\n\
             echo \"GIT $(git ls-remote https://api.test:{port}/repo.git 2>&1 | tr '\\n' ' ')\"\n\
             echo \"NODE $(node --no-warnings fetch.cjs 2>&1)\"\n\
             echo \"LEAK $(curl -sS -H \"X-T: $GH_TOKEN\" http://web.test:{port}/ 2>&1)\"\n\
             echo \"DEL $(curl -sS -w ' %{{http_code}}' -X DELETE https://api.test:{port}/repos/x 2>&1)\"\n"
        ),
    )
    .unwrap();
    let log = state.join("audit.jsonl");
    let policy = fx.root.join("policies/cordon.toml");
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox]\nbackend = \"{backend}\"\nnetwork = \"proxy\"\nextra_read = [{:?}]\n\
             [sandbox.paths.ws]\nroot = {:?}\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = {:?}\n\
             [network]\nallow = [\"api.test:{port}\", \"web.test\"]\nupstream_ca = {:?}\n\
             [network.hosts]\n\"api.test\" = \"127.0.0.1\"\n\"web.test\" = \"127.0.0.1\"\n\
             [credentials.gh]\nenv = \"GH_TOKEN\"\nfrom = \"env:CORDON_E2E_REAL_TOKEN\"\nhosts = [\"api.test\"]\n\
             header = \"Authorization: Bearer {{}}\"\n\
             [[network.requests]]\nmethod = \"DELETE\"\nurl = \"api.test\"\naction = \"deny\"\n",
            undici.parent().unwrap().parent().unwrap().display().to_string(),
            ws.display().to_string(),
            log.display().to_string(),
            ca_file.display().to_string(),
        ),
    )
    .unwrap();
    for d in ["ws", "state", "tmp"] {
        chown_all(&fx.root.join(d), fx.ids);
    }
    let mut c = Command::new(cordon);
    c.args(["exec", "--policy"])
        .arg(&policy)
        .args(["--", "sh", "run.sh"])
        .current_dir(&ws)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .env("HOME", &state)
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CONFIG_HOME", &state)
        .env("TMPDIR", fx.root.join("tmp"))
        .env("LANG", "C.UTF-8")
        .env("CORDON_E2E_REAL_TOKEN", TOKEN)
        .stdin(Stdio::null());
    if let Some((uid, gid)) = fx.ids {
        c.uid(uid).gid(gid);
    }
    let out = c.output().unwrap();
    let what = format!("{backend}, {}", if user { "cordon-test" } else { "root" });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{what}: {}", describe(&out));
    for want in [
        "CURL ok /curl".to_string(),
        "PY ok /python".to_string(),
        format!("GIT {REF}\t"),
        format!("{REF}\trefs/heads/main"),
        "NODE ok /node".to_string(),
        "LEAK cordon: the request to web.test".to_string(),
        format!("DEL cordon: DELETE https://api.test:{port}/repos/x is refused"),
        " 403".to_string(),
    ] {
        assert!(
            stdout.contains(&want),
            "{what}: no `{want}` in\n{}",
            describe(&out)
        );
    }
    assert!(
        stdout.contains("GH_TOKEN=cordon-gh-"),
        "{what}: the placeholder is not in the command's environment:\n{stdout}"
    );
    assert!(
        stdout.contains("PROCENV GH_TOKEN=cordon-gh-"),
        "{what}: /proc/*/environ was not read:\n{stdout}"
    );
    // The files in its TMPDIR were read (the CA bundle: certificates, and no token).
    assert!(
        stdout.contains("-----BEGIN CERTIFICATE-----"),
        "{what}: the CA bundle was not read:\n{stdout}"
    );
    assert!(
        !stdout.contains(TOKEN),
        "{what}: the token reached the command:\n{stdout}"
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        !log.contains(TOKEN),
        "{what}: the token is in the audit log"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("https-request") && l.contains("DELETE /repos/x")),
        "{what}: the denied request is not recorded:\n{log}"
    );
    assert!(
        log.contains("placeholder of credential `gh`"),
        "{what}: the refusal is not recorded:\n{log}"
    );
}

#[test]
fn the_command_holds_a_placeholder_and_its_clients_reach_the_host_with_the_real_token() {
    assert!(
        is_root(),
        "these tests switch users: run them as root (CI does)"
    );
    for program in ["/usr/bin/curl", "/usr/bin/python3", "/usr/bin/node"] {
        assert!(
            Path::new(program).exists(),
            "{program} is missing: install it"
        );
    }
    let dir = BinDir::new("creds");
    let cordon = dir.copy(
        &cordon_beside(Path::new(env!("CARGO_BIN_EXE_cordon-attack"))),
        "cordon",
        0o755,
    );
    let (port, ca) = upstream();
    for backend in ["landlock", "bwrap"] {
        for user in [false, true] {
            run_case(&cordon, backend, user, port, &ca);
        }
    }
}

/// issue 24 item 4: `[network.forward]` gives the command a loopback port that cordon
/// connects, after the same decision, to its one destination; a plain TCP protocol (bash's
/// `/dev/tcp`, a line there and back) goes through. A forward whose destination the policy
/// does not allow is closed at once and recorded.
#[test]
fn a_forwarded_port_carries_plain_tcp_to_its_one_destination() {
    assert!(
        is_root(),
        "these tests switch users: run them as root (CI does)"
    );
    let dir = BinDir::new("fwd");
    let cordon = dir.copy(
        &cordon_beside(Path::new(env!("CARGO_BIN_EXE_cordon-attack"))),
        "cordon",
        0o755,
    );
    // The destination: answers each line with `PONG LINE`.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            std::thread::spawn(move || {
                use std::io::BufRead;
                let mut w = s.try_clone().unwrap();
                for line in std::io::BufReader::new(s).lines() {
                    let Ok(line) = line else { return };
                    if writeln!(w, "PONG {line}").is_err() {
                        return;
                    }
                }
            });
        }
    });
    for backend in ["landlock", "bwrap"] {
        for user in [false, true] {
            let ids = user.then(test_user);
            let tmp = tempfile::Builder::new()
                .prefix("cordon-e2e-fwd-")
                .tempdir_in("/tmp")
                .unwrap();
            let root = tmp.path();
            std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
            for d in ["ws", "state", "tmp"] {
                std::fs::create_dir(root.join(d)).unwrap();
            }
            let log = root.join("state/audit.jsonl");
            let policy = root.join("cordon.toml");
            std::fs::write(
                &policy,
                format!(
                    "version = 1\n[sandbox]\nbackend = \"{backend}\"\nnetwork = \"proxy\"\n\
                     [sandbox.paths.ws]\nroot = {:?}\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n\
                     [approval]\naudit_log = {:?}\n\
                     [network]\nallow = [\"db.test:{port}\"]\n\
                     [network.hosts]\n\"db.test\" = \"127.0.0.1\"\n\"blocked.test\" = \"127.0.0.1\"\n\
                     [network.forward]\n\"127.0.0.1:5432\" = \"db.test:{port}\"\n\"[::1]:6379\" = \"blocked.test:{port}\"\n",
                    root.join("ws").display().to_string(),
                    log.display().to_string(),
                ),
            )
            .unwrap();
            for d in ["ws", "state", "tmp"] {
                chown_all(&root.join(d), ids);
            }
            let script = "exec 3<>/dev/tcp/127.0.0.1/5432 && printf 'hello db\\n' >&3 && read -r l <&3 && echo \"FWD $l\"\n\
                          exec 4<>/dev/tcp/127.0.0.1/6379 && printf 'x\\n' >&4; read -r m <&4; echo \"BLOCKED [$m]\"\n\
                          exec 5<>/dev/tcp/127.0.0.1/5433 || echo 'NOPORT refused'\n";
            std::fs::write(root.join("ws/fwd.sh"), script).unwrap();
            chown_all(&root.join("ws/fwd.sh"), ids);
            let mut c = Command::new(&cordon);
            c.args(["exec", "--policy"])
                .arg(&policy)
                .args(["--", "bash", "fwd.sh"])
                .current_dir(root.join("ws"))
                .env_clear()
                .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
                .env("HOME", root.join("state"))
                .env("XDG_STATE_HOME", root.join("state"))
                .env("XDG_CONFIG_HOME", root.join("state"))
                .env("TMPDIR", root.join("tmp"))
                .stdin(Stdio::null());
            if let Some((uid, gid)) = ids {
                c.uid(uid).gid(gid);
            }
            let out = c.output().unwrap();
            let what = format!("{backend}, {}", if user { "cordon-test" } else { "root" });
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "{what}: {}", describe(&out));
            assert!(
                stdout.contains("FWD PONG hello db"),
                "{what}: {}",
                describe(&out)
            );
            assert!(stdout.contains("BLOCKED []"), "{what}: {}", describe(&out));
            assert!(
                stdout.contains("NOPORT refused"),
                "{what}: {}",
                describe(&out)
            );
            let log = std::fs::read_to_string(&log).unwrap();
            assert!(
                log.lines().any(|l| l.contains("\"forward\"")
                    && l.contains("db.test")
                    && l.contains("\"close\"")),
                "{what}: the forward's close record:\n{log}"
            );
            assert!(
                log.lines().any(|l| l.contains("\"forward\"")
                    && l.contains("blocked.test")
                    && l.contains("\"kind\":\"connection\"")
                    && l.contains("\"decision\":\"deny\"")),
                "{what}: the refused forward's record:\n{log}"
            );
        }
    }
}

/// Issue 21 (red team of `[credentials]`): a `file:` credential the sandbox can read hands the
/// command the real secret, whatever the proxy does with the placeholder. Its file in a
/// read-only root, under `extra_read`, or in a directory every run reads (`/usr`, here a
/// directory below `extra_read`'s): the run is refused (125) with a line naming the
/// credential and the path the command could read it through, and the command never runs.
/// On both backends, as root and as `cordon-test`.
#[test]
fn a_credential_file_the_command_can_read_is_refused() {
    assert!(
        is_root(),
        "these tests switch users: run them as root (CI does)"
    );
    let dir = BinDir::new("creds-read");
    let cordon = dir.copy(
        &cordon_beside(Path::new(env!("CARGO_BIN_EXE_cordon-attack"))),
        "cordon",
        0o755,
    );
    for backend in ["landlock", "bwrap"] {
        for user in [false, true] {
            let ids = user.then(test_user);
            let what = format!("{backend}, {}", if user { "cordon-test" } else { "root" });
            let tmp = tempfile::Builder::new()
                .prefix("cordon-e2e-creds-read-")
                .tempdir_in("/tmp")
                .unwrap();
            let root = tmp.path();
            std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
            for d in ["ws", "state", "tmp", "policies", "docs", "shared"] {
                std::fs::create_dir(root.join(d)).unwrap();
            }
            let secret_in_ro = root.join("docs/token.txt");
            let secret_in_extra = root.join("shared/token.txt");
            for (placement, secret) in [
                ("a read-only root", &secret_in_ro),
                ("extra_read", &secret_in_extra),
            ] {
                std::fs::write(secret, format!("{TOKEN}\n")).unwrap();
                std::fs::set_permissions(secret, std::fs::Permissions::from_mode(0o644)).unwrap();
                let policy = root.join("policies/cordon.toml");
                std::fs::write(
                    &policy,
                    format!(
                        "version = 1\n[sandbox]\nbackend = \"{backend}\"\nnetwork = \"proxy\"\nextra_read = [{:?}]\n\
                         [sandbox.paths.ws]\nroot = {:?}\nmode = \"rw\"\n\
                         [sandbox.paths.docs]\nroot = {:?}\nmode = \"ro\"\n\
                         [shell]\ndefault = \"allow\"\n\
                         [approval]\naudit_log = {:?}\n\
                         [network]\nallow = [\"api.test\"]\n\
                         [credentials.gh]\nenv = \"GH_TOKEN\"\nfrom = \"file:{}\"\nhosts = [\"api.test\"]\n",
                        root.join("shared").display().to_string(),
                        root.join("ws").display().to_string(),
                        root.join("docs").display().to_string(),
                        root.join("state/audit.jsonl").display().to_string(),
                        secret.display(),
                    ),
                )
                .unwrap();
                for d in ["ws", "state", "tmp"] {
                    chown_all(&root.join(d), ids);
                }
                let mut c = Command::new(&cordon);
                c.args(["exec", "--policy"])
                    .arg(&policy)
                    .args(["--", "cat"])
                    .arg(secret)
                    .current_dir(root.join("ws"))
                    .env_clear()
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .env("HOME", root.join("state"))
                    .env("XDG_STATE_HOME", root.join("state"))
                    .env("XDG_CONFIG_HOME", root.join("state"))
                    .env("TMPDIR", root.join("tmp"))
                    .env("LANG", "C.UTF-8")
                    .stdin(Stdio::null());
                if let Some((uid, gid)) = ids {
                    c.uid(uid).gid(gid);
                }
                let out = c.output().unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(
                    !stdout.contains(TOKEN),
                    "{what}, {placement}: the command read the real secret\n{}",
                    describe(&out)
                );
                assert_eq!(
                    out.status.code(),
                    Some(125),
                    "{what}, {placement}: {}",
                    describe(&out)
                );
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.lines().any(|l| l.starts_with("cordon: ")
                        && l.contains("credential `gh`")
                        && l.contains(&secret.display().to_string())
                        && l.contains("could read")),
                    "{what}, {placement}: the refusal does not say why\n{}",
                    describe(&out)
                );
            }
        }
    }
}
