//! Credentials at the proxy, against real curl and a real HTTPS upstream of the test's own
//! (its own CA, on loopback) that answers 200 only to the real bearer token: the client
//! holds a placeholder, the proxy terminates TLS for the credential's host with the run's
//! CA, puts the value in, and refuses the placeholder wherever it may not go.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use cordon_netproxy::{Secret, Termination};
use cordon_policy::Policy;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio_rustls::rustls;

use common::*;

const TOKEN: &str = "s3cr3t-real-token-0123456789";
const PLACEHOLDER: &str = "cordon-placeholder-gh-feedfacecafe";
const OTHER_PLACEHOLDER: &str = "cordon-placeholder-other-0badc0de";

/// An HTTPS server for `names` with a certificate from a CA of its own: 200 `ok PATH` to
/// `Authorization: Bearer TOKEN`, 401 to anything else. Returns its address, its CA (PEM)
/// and every header value it was sent.
async fn upstream(names: &[&str]) -> (SocketAddr, String, Arc<Mutex<Vec<String>>>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "upstream test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf =
        rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap()
            .signed_by(&leaf_key, &ca_cert, &ca_key)
            .unwrap();
    let server = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let seen = seen2.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(s).await else {
                    return;
                };
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let seen = seen.clone();
                    async move {
                        for v in req.headers().values() {
                            seen.lock()
                                .unwrap()
                                .push(String::from_utf8_lossy(v.as_bytes()).into_owned());
                        }
                        let ok = req
                            .headers()
                            .get("authorization")
                            .is_some_and(|v| v.as_bytes() == format!("Bearer {TOKEN}").as_bytes());
                        let mut r = Response::new(Full::new(Bytes::from(if ok {
                            format!("ok {}", req.uri().path())
                        } else {
                            "unauthorized".into()
                        })));
                        *r.status_mut() = if ok {
                            hyper::StatusCode::OK
                        } else {
                            hyper::StatusCode::UNAUTHORIZED
                        };
                        // A debugging upstream that echoes the header it got.
                        if let Some(v) = req.headers().get("authorization") {
                            r.headers_mut().insert("x-echo-authorization", v.clone());
                        }
                        // The upstream may close after any response: the proxy connects again.
                        if req.uri().path() == "/close" {
                            r.headers_mut().insert(
                                "connection",
                                hyper::header::HeaderValue::from_static("close"),
                            );
                        }
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    (addr, ca_cert.pem(), seen)
}

fn secret(name: &str, placeholder: &str, host: &str, header: bool) -> Secret {
    let text = format!(
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[credentials.{name}]\nenv = \"T\"\nfrom = \"env:T\"\nhosts = [\"{host}\"]\n{}",
        if header { "header = \"Authorization: Bearer {}\"\n" } else { "" }
    );
    let c = Policy::parse(&text, "t.toml", std::path::Path::new("/"))
        .unwrap()
        .credentials
        .remove(0);
    Secret {
        name: c.name,
        placeholder: placeholder.into(),
        value: TOKEN.into(),
        hosts: c.hosts,
        header: c.header,
    }
}

/// curl through the proxy; (HTTP status, body).
fn curl(proxy: SocketAddr, ca: &std::path::Path, url: &str, headers: &[String]) -> (u16, String) {
    let mut cmd = std::process::Command::new("curl");
    cmd.args(["-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}"])
        .arg("--proxy")
        .arg(format!("http://{proxy}"))
        .arg("--cacert")
        .arg(ca)
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("no_proxy")
        .env_remove("NO_PROXY");
    for h in headers {
        cmd.arg("-H").arg(h);
    }
    // Several URLs (space-separated) go over one connection to the proxy where curl can.
    let out = cmd.args(url.split(' ')).output().expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

#[test]
fn the_placeholder_reaches_its_host_as_the_real_token_and_nowhere_else() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (up, up_ca, seen) = rt.block_on(upstream(&["api.test", "other.test"]));
    let web = rt.block_on(head_echo_server());
    let port = up.port();
    let termination = Arc::new(
        Termination::new(
            vec![
                secret("gh", PLACEHOLDER, "api.test", true),
                secret("other", OTHER_PLACEHOLDER, "other.test", false),
            ],
            vec![],
            up_ca.as_bytes(),
        )
        .unwrap(),
    );
    let s = Setup::with_config(
        "version = 1\n[network]\nallow = [\"api.test\", \"other.test\", \"web.test\", \"plain.test\"]\n\
             [network.hosts]\n\"api.test\" = \"127.0.0.1\"\n\"other.test\" = \"127.0.0.1\"\n\"web.test\" = \"127.0.0.1\"\n\"plain.test\" = \"127.0.0.1\"\n",
        vec![],
        |c| c.termination = Some(termination.clone()),
    );
    let ca = s.dir.path().join("run-ca.pem");
    std::fs::write(&ca, termination.ca_pem()).unwrap();
    let api = format!("https://api.test:{port}/repos/x");

    // The placeholder in the client's own header: replaced.
    let (code, body) = curl(
        s.addr,
        &ca,
        &api,
        &[format!("Authorization: Bearer {PLACEHOLDER}")],
    );
    assert_eq!((code, body.as_str()), (200, "ok /repos/x"));
    // No header at all: the credential's `header` is added.
    let (code, body) = curl(s.addr, &ca, &api, &[]);
    assert_eq!((code, body.as_str()), (200, "ok /repos/x"));
    // The upstream closes after the first of two requests on one tunnel: the second still
    // goes, over a new connection to the same address.
    let (code, body) = curl(
        s.addr,
        &ca,
        &format!("https://api.test:{port}/close {api}"),
        &[],
    );
    assert_eq!((code, body.as_str()), (200, "ok /close\n200ok /repos/x"));
    // Through SOCKS5 (ALL_PROXY, socks5h) the credential's host is terminated all the same.
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "60",
            "-o",
            "-",
            "-w",
            "\n%{http_code}",
            "--proxy",
        ])
        .arg(format!("socks5h://{}", s.addr))
        .arg("--cacert")
        .arg(&ca)
        .arg(&api)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok /repos/x\n200",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An upstream that echoes the header back does not hand the value to the client.
    let out = std::process::Command::new("curl")
        .args(["-sS", "-i", "--max-time", "60", "--proxy"])
        .arg(format!("http://{}", s.addr))
        .arg("--cacert")
        .arg(&ca)
        .arg(&api)
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&out.stdout);
    assert!(
        head.contains(&format!("x-echo-authorization: Bearer {PLACEHOLDER}")),
        "{head}"
    );
    assert!(!head.contains(TOKEN), "{head}");
    // The run's CA is what the client trusts for the terminated host: without it, no TLS.
    let none = s.dir.path().join("empty.pem");
    std::fs::write(&none, up_ca.as_bytes()).unwrap();
    let (code, _) = curl(s.addr, &none, &api, &[]);
    assert_eq!(
        code, 0,
        "the upstream's own CA must not verify the proxy's leaf"
    );

    // gh's placeholder to other.test (terminated for its own credential): refused, 403.
    let (code, body) = curl(
        s.addr,
        &ca,
        &format!("https://other.test:{port}/"),
        &[format!("X-Token: {PLACEHOLDER}")],
    );
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("placeholder of credential `gh`"), "{body}");
    // ... and in Basic authorization, as git sends it.
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("git:{PLACEHOLDER}"));
    let (code, _) = curl(
        s.addr,
        &ca,
        &format!("https://other.test:{port}/"),
        &[format!("Authorization: Basic {basic}")],
    );
    assert_eq!(code, 403);
    // Plain http:// never carries a placeholder, not even to the credential's host.
    let (code, body) = curl(
        s.addr,
        &ca,
        &format!("http://web.test:{}/", web.port()),
        &[format!("X-Token: {PLACEHOLDER}")],
    );
    assert_eq!(code, 403, "{body}");

    let seen = seen.lock().unwrap().clone();
    assert!(
        !seen
            .iter()
            .any(|v| v.contains(PLACEHOLDER) || v.contains(OTHER_PLACEHOLDER)),
        "the upstream saw a placeholder: {seen:?}"
    );
    let log = s.finish();
    assert!(!log.contains(TOKEN), "the audit log holds the token");
    let refusals = log
        .lines()
        .filter(|l| l.contains("placeholder of credential `gh`"))
        .count();
    assert!(refusals >= 3, "each refusal recorded:\n{log}");
    assert!(log.contains("https-request"), "{log}");
    // No request rule names these hosts: their requests are not decided one by one.
    assert!(!log.contains("\"tool\":\"http\""), "{log}");
}

/// `[[network.requests]]` on a terminated host, decided by the engine: GET on `/repos/**`
/// allowed, POST asked (the person says yes once, then no), DELETE denied (403, recorded);
/// a host no rule names and no credential holds stays end to end.
#[test]
fn requests_are_decided_one_by_one_on_a_terminated_host() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (up, up_ca, _seen) = rt.block_on(upstream(&["api.test"]));
    let port = up.port();
    let policy = "version = 1\n[network]\nallow = [\"api.test\"]\n\
         [network.hosts]\n\"api.test\" = \"127.0.0.1\"\n\
         [[network.requests]]\nmethod = \"GET\"\nurl = \"api.test/repos/**\"\naction = \"allow\"\n\
         [[network.requests]]\nmethod = \"POST\"\nurl = \"api.test\"\naction = \"ask\"\n\
         [[network.requests]]\nmethod = \"DELETE\"\nurl = \"api.test\"\naction = \"deny\"\nreason = \"no deleting\"\n";
    let parsed = Policy::parse(
        &format!("{policy}[sandbox]\nnetwork = \"proxy\"\n"),
        "t.toml",
        std::path::Path::new("/"),
    )
    .unwrap();
    let ruled = parsed
        .network
        .requests
        .iter()
        .map(|r| r.host.clone())
        .collect();
    let termination = Arc::new(
        Termination::new(
            vec![secret("gh", PLACEHOLDER, "api.test", true)],
            ruled,
            up_ca.as_bytes(),
        )
        .unwrap(),
    );
    let s = Setup::with_config(
        policy,
        vec![cordon_approval::Answer::Once, cordon_approval::Answer::Deny],
        |c| c.termination = Some(termination.clone()),
    );
    let ca = s.dir.path().join("run-ca.pem");
    std::fs::write(&ca, termination.ca_pem()).unwrap();
    let url = |p: &str| format!("https://api.test:{port}{p}");
    let (code, body) = curl(s.addr, &ca, &url("/repos/a/b?page=2"), &[]);
    assert_eq!((code, body.as_str()), (200, "ok /repos/a/b"));
    let (code, _) = curl_method(s.addr, &ca, "POST", &url("/issues"));
    assert_eq!(code, 200, "the person said yes once");
    let (code, body) = curl_method(s.addr, &ca, "POST", &url("/issues"));
    assert_eq!(code, 403, "{body}");
    let (code, body) = curl_method(s.addr, &ca, "DELETE", &url("/repos/a"));
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("no deleting"), "{body}");
    let asked = s.decide.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [
            format!("http POST api.test:{port}/issues"),
            format!("http POST api.test:{port}/issues")
        ]
    );
    let log = s.finish();
    assert!(!log.contains(TOKEN));
    assert!(
        log.lines()
            .any(|l| l.contains("\"tool\":\"http\"") && l.contains("DELETE")),
        "the denied request's decision is recorded:\n{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("https-request") && l.contains("DELETE /repos/a")),
        "the refused request is recorded:\n{log}"
    );
}

/// curl with `-X METHOD`; (status, body).
fn curl_method(proxy: SocketAddr, ca: &std::path::Path, method: &str, url: &str) -> (u16, String) {
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "60",
            "-o",
            "-",
            "-w",
            "\n%{http_code}",
            "-X",
            method,
        ])
        .arg("--proxy")
        .arg(format!("http://{proxy}"))
        .arg("--cacert")
        .arg(ca)
        .arg(url)
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// Inside a terminated tunnel to `api.test`, a request whose `Host` header or absolute-form
/// target names another host (a CDN or shared front end routes by it: domain fronting) got
/// the credential's value put in and went upstream with that other name. Such a request is
/// refused; the tunnel's own host in any spelling (case, trailing dot, with or without the
/// port) still goes.
#[test]
fn a_request_naming_another_host_inside_a_terminated_tunnel_is_refused() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (up, up_ca, seen) = rt.block_on(upstream(&["api.test"]));
    let port = up.port();
    let termination = Arc::new(
        Termination::new(
            vec![secret("gh", PLACEHOLDER, "api.test", true)],
            vec![],
            up_ca.as_bytes(),
        )
        .unwrap(),
    );
    let s = Setup::with_config(
        "version = 1\n[network]\nallow = [\"api.test\"]\n[network.hosts]\n\"api.test\" = \"127.0.0.1\"\n",
        vec![],
        |c| c.termination = Some(termination.clone()),
    );
    let ca = s.dir.path().join("run-ca.pem");
    std::fs::write(&ca, termination.ca_pem()).unwrap();
    let api = format!("https://api.test:{port}/repos/x");
    let auth = format!("Authorization: Bearer {PLACEHOLDER}");
    for host in [
        "other.test".to_string(),
        format!("other.test:{port}"),
        "api.test:1".into(),
        format!("evil.test@api.test:{port}"),
        format!("api.test.other.test:{port}"),
    ] {
        let (code, body) = curl(s.addr, &ca, &api, &[auth.clone(), format!("Host: {host}")]);
        assert_eq!(code, 403, "Host: {host}: {body}");
        assert!(
            body.contains("not the tunnel's host"),
            "Host: {host}: {body}"
        );
    }
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}"])
        .arg("--proxy")
        .arg(format!("http://{}", s.addr))
        .arg("--cacert")
        .arg(&ca)
        .args([
            "--request-target",
            "https://other.test/repos/x",
            "-H",
            &auth,
        ])
        .arg(&api)
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.ends_with("\n403"), "absolute-form target: {text}");
    {
        let seen = seen.lock().unwrap();
        assert!(
            !seen
                .iter()
                .any(|v| v.contains("other.test") || v.contains("evil.test")),
            "a request for another host reached the upstream: {seen:?}"
        );
    }
    for host in [
        format!("api.test:{port}"),
        format!("API.Test.:{port}"),
        "api.test".into(),
    ] {
        let (code, body) = curl(s.addr, &ca, &api, &[auth.clone(), format!("Host: {host}")]);
        assert_eq!((code, body.as_str()), (200, "ok /repos/x"), "Host: {host}");
    }
    // Round 8 (issue 21): `Connection: host` named the checked Host header as hop-by-hop, and
    // the request went upstream without one (to the front end's default site).
    seen.lock().unwrap().clear();
    let (code, body) = curl(
        s.addr,
        &ca,
        &api,
        &[auth.clone(), "Connection: host".into()],
    );
    assert_eq!((code, body.as_str()), (200, "ok /repos/x"));
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|v| v == &format!("api.test:{port}")),
        "the request went upstream without its Host: {:?}",
        seen.lock().unwrap()
    );
    let log = s.finish();
    assert!(!log.contains(TOKEN));
}

/// Round 8 (issue 21): `[[network.requests]]` decide each request to the hosts they name, but a
/// plain `http://` request to such a host (the policy allows it on every port; the rule names
/// no port) went through the forwarding path, which decided only the connection: `DELETE
/// http://api.test/repos/a` reached the host although a rule denies DELETE there. Plain
/// requests to a ruled host are decided one by one as inside a terminated tunnel.
#[test]
fn plain_http_requests_to_a_ruled_host_are_decided_one_by_one() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let plain = rt.block_on(head_echo_server());
    let port = plain.port();
    let (_, up_ca, _) = rt.block_on(upstream(&["api.test"]));
    let policy = "version = 1\n[network]\nallow = [\"api.test\"]\n\
         [network.hosts]\n\"api.test\" = \"127.0.0.1\"\n\
         [[network.requests]]\nmethod = \"GET\"\nurl = \"api.test/repos/**\"\naction = \"allow\"\n\
         [[network.requests]]\nmethod = \"DELETE\"\nurl = \"api.test\"\naction = \"deny\"\nreason = \"no deleting\"\n";
    let parsed = Policy::parse(
        &format!("{policy}[sandbox]\nnetwork = \"proxy\"\n"),
        "t.toml",
        std::path::Path::new("/"),
    )
    .unwrap();
    let ruled = parsed
        .network
        .requests
        .iter()
        .map(|r| r.host.clone())
        .collect();
    let termination = Arc::new(Termination::new(vec![], ruled, up_ca.as_bytes()).unwrap());
    let s = Setup::with_config(policy, vec![], |c| {
        c.termination = Some(termination.clone())
    });
    let ca = s.dir.path().join("run-ca.pem");
    std::fs::write(&ca, termination.ca_pem()).unwrap();
    let url = |p: &str| format!("http://api.test:{port}{p}");
    let (code, body) = curl_method(s.addr, &ca, "GET", &url("/repos/a?x=1"));
    assert_eq!(code, 200, "{body}");
    assert!(body.starts_with("GET /repos/a?x=1 HTTP/1.1"), "{body}");
    let (code, body) = curl_method(s.addr, &ca, "DELETE", &url("/repos/a"));
    assert_eq!(code, 403, "a denied request reached the host: {body}");
    assert!(body.contains("no deleting"), "{body}");
    let log = s.finish();
    assert!(
        log.lines()
            .any(|l| l.contains("\"tool\":\"http\"") && l.contains("DELETE")),
        "the denied request's decision is recorded:\n{log}"
    );
}

/// Round 8 (issue 21): a request rule is matched against the path the server will read.
/// Servers remove dot segments (RFC 3986 §5.2.4), decode percent-encoded unreserved
/// characters, and many decode `%2F` or take `\` as `/`, so `DELETE /repos/../admin/x`,
/// `/%61dmin/x`, `/admin%2Fx`, `//admin/x` or `/admin\x` was matched as another path than the
/// one denied and reached the host. Each reading is decided (the most restrictive wins), and a
/// path whose readings have dot or empty segments is refused, saying which form to send.
#[test]
fn a_request_rule_is_not_walked_around_by_the_paths_spelling() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (up, up_ca, _seen) = rt.block_on(upstream(&["api.test"]));
    let port = up.port();
    let policy = "version = 1\n[network]\nallow = [\"api.test\"]\n\
         [network.hosts]\n\"api.test\" = \"127.0.0.1\"\n\
         [[network.requests]]\nmethod = \"DELETE\"\nurl = \"api.test/admin/**\"\naction = \"deny\"\nreason = \"no admin\"\n";
    let parsed = Policy::parse(
        &format!("{policy}[sandbox]\nnetwork = \"proxy\"\n"),
        "t.toml",
        std::path::Path::new("/"),
    )
    .unwrap();
    let ruled = parsed
        .network
        .requests
        .iter()
        .map(|r| r.host.clone())
        .collect();
    let termination = Arc::new(
        Termination::new(
            vec![secret("gh", PLACEHOLDER, "api.test", true)],
            ruled,
            up_ca.as_bytes(),
        )
        .unwrap(),
    );
    let s = Setup::with_config(policy, vec![], |c| {
        c.termination = Some(termination.clone())
    });
    let ca = s.dir.path().join("run-ca.pem");
    std::fs::write(&ca, termination.ca_pem()).unwrap();
    let url = |p: &str| format!("https://api.test:{port}{p}");
    // Controls: the rule denies the plain spelling, and other paths go.
    let (code, body) = curl_as_is(s.addr, &ca, "DELETE", &url("/admin/x"));
    assert_eq!(code, 403, "{body}");
    let (code, body) = curl_as_is(s.addr, &ca, "DELETE", &url("/repos/x"));
    assert_eq!((code, body.as_str()), (200, "ok /repos/x"));
    // An encoded slash inside a segment (GitLab's `projects/group%2Fname`) still goes.
    let (code, body) = curl_as_is(s.addr, &ca, "DELETE", &url("/projects/a%2Fb"));
    assert_eq!((code, body.as_str()), (200, "ok /projects/a%2Fb"));
    // A method override (header or `_method` in the query, which Rails, Laravel, Express's
    // method-override and Google's APIs honour) is the method the server runs.
    for (extra, u) in [
        ("X-HTTP-Method-Override: DELETE", url("/admin/x")),
        ("X-HTTP-Method: delete", url("/admin/x")),
        ("X-Method-Override: DELETE", url("/admin/x")),
        ("X-Unrelated: 1", url("/admin/x?_method=DELETE")),
    ] {
        let out = std::process::Command::new("curl")
            .args(["-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}"])
            .args(["-X", "POST", "-H", extra, "--proxy"])
            .arg(format!("http://{}", s.addr))
            .arg("--cacert")
            .arg(&ca)
            .arg(&u)
            .output()
            .expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            text.ends_with("\n403"),
            "POST {u} with {extra} reached the host: {text}"
        );
    }
    // Each override is a decision (and a record) of its own: a request naming many is refused.
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}"])
        .args([
            "-X",
            "POST",
            "-H",
            "X-HTTP-Method-Override: A, B, C, D, E",
            "--proxy",
        ])
        .arg(format!("http://{}", s.addr))
        .arg("--cacert")
        .arg(&ca)
        .arg(url("/repos/x"))
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.ends_with("\n400"), "{text}");
    // A path override (Symfony and IIS route by `X-Original-URL` / `X-Rewrite-URL`).
    for extra in ["X-Original-URL: /admin/x", "X-Rewrite-URL: /admin/x?y=1"] {
        let out = std::process::Command::new("curl")
            .args(["-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}"])
            .args(["-X", "DELETE", "-H", extra, "--proxy"])
            .arg(format!("http://{}", s.addr))
            .arg("--cacert")
            .arg(&ca)
            .arg(url("/repos/x"))
            .output()
            .expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            text.ends_with("\n403"),
            "DELETE /repos/x with {extra} reached the host: {text}"
        );
    }
    for path in [
        "/repos/../admin/x",
        "/./admin/x",
        "/repos/%2e%2e/admin/x",
        "/%61dmin/x",
        "/ADMIN/../admin/x",
        "/admin%2Fx",
        "/admin%2fx",
        "//admin/x",
        "/admin//x",
        "/admin\\x",
        "/admin%5Cx",
        "/repos/..%2Fadmin/x",
    ] {
        let (code, body) = curl_as_is(s.addr, &ca, "DELETE", &url(path));
        assert!(
            code == 403 || code == 400,
            "DELETE {path} reached the host ({code}): {body}"
        );
        assert!(!body.starts_with("ok "), "{path}: {body}");
    }
    s.finish();
}

/// curl with `-X METHOD` and `--path-as-is` (the path sent as written); (status, body).
fn curl_as_is(proxy: SocketAddr, ca: &std::path::Path, method: &str, url: &str) -> (u16, String) {
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "--path-as-is",
            "--max-time",
            "60",
            "-o",
            "-",
            "-w",
            "\n%{http_code}",
            "-X",
            method,
        ])
        .arg("--proxy")
        .arg(format!("http://{proxy}"))
        .arg("--cacert")
        .arg(ca)
        .arg(url)
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}
