//! issue 15 item 3: under `sandbox.network = "proxy"` the command can reach nothing but the
//! proxy — end to end on the real kernel, on the Landlock and bwrap backends, as root and as
//! the unprivileged test user (`cordon-test`).
//!
//! Each run goes through cordon's OS sandbox API in `cordon-netrun`, which receives the
//! listener the backend made inside the command's network namespace and stands in for the
//! proxy (it answers every connection with one line). The test itself runs servers on the
//! host's loopback (TCP and UDP, IPv4 and IPv6) and checks on the host side that nothing the
//! command sent ever arrived there; each check has a control that runs the same attack
//! unconfined and must reach the server.
//!
//! * the command's very first action, a connect to 127.0.0.1:3128 or [::1]:3128, reaches the
//!   stand-in proxy (the listener exists before the command starts);
//! * TCP to the host's loopback servers, to raw public, private and metadata addresses, over
//!   IPv4 and IPv6, fails;
//! * UDP to the host's loopback servers and to DNS resolvers (127.0.0.53:53, 8.8.8.8:53,
//!   [2001:4860:4860::8888]:53) never arrives;
//! * binding a TCP port is refused (Landlock ABI 4), and so are netlink, packet and vsock
//!   sockets (seccomp);
//! * where the namespaces cannot be made (simulated by a seccomp filter on the runner, as the
//!   leftovers suite does), or the proxy is gone before it took its listener, the run is
//!   refused with exit 125 and the command never starts.
//!
//! issue 25: under `sandbox.network = "deny"` (the default) the command runs **without** a
//! network namespace where the kernel's Landlock has ABI 6 (seccomp refuses every `socket()`,
//! Landlock TCP and abstract unix sockets), so it shares the host's loopback with the test's
//! own servers. The `deny_*` matrix proves that nothing reaches them: TCP and UDP over IPv4 and
//! IPv6, ICMP echo, a netlink route dump, packet, raw and vsock sockets, an abstract unix
//! listener of the host, a pathname unix listener of the host inside the workspace, a socket
//! made by io_uring, and the i386 `socketcall` and x32 entries — each refused with EPERM at the
//! socket, and each escaping when run unconfined (`controls_deny_attacks_escape_unconfined`).

// Landlock, seccomp, bubblewrap and network namespaces are Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{cordon_beside, is_root, BinDir};
use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use cordon_ossandbox::PROXY_PORT;

/// What `cordon-netrun`'s stand-in proxy answers.
const BANNER: &str = "CORDON-STANDIN-PROXY";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Root,
    User,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    Landlock,
    Bwrap,
}

struct Bins {
    dir: PathBuf,
    netrun: PathBuf,
    attack: PathBuf,
    cordon: PathBuf,
}

static BINS: OnceLock<Bins> = OnceLock::new();

/// `cordon-netrun` and `cordon-attack`, copied into a world-readable directory (the
/// repository may sit where the unprivileged user cannot enter), which is also the policy's
/// `bin` root.
fn bins() -> &'static Bins {
    BINS.get_or_init(|| {
        let attack_src = PathBuf::from(env!("CARGO_BIN_EXE_cordon-attack"));
        let dir = BinDir::new("net");
        Bins {
            netrun: dir.copy(
                Path::new(env!("CARGO_BIN_EXE_cordon-netrun")),
                "cordon-netrun",
                0o755,
            ),
            attack: dir.copy(&attack_src, "cordon-attack", 0o755),
            cordon: dir.copy(&cordon_beside(&attack_src), "cordon", 0o755),
            dir: dir.path().to_path_buf(),
        }
    })
}

/// A policy with `network = "proxy"` and a workspace the mode's user owns.
struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    ids: Option<(u32, u32)>,
    backend: Backend,
}

impl Fixture {
    fn new(mode: Mode, backend: Backend) -> Fixture {
        Fixture::with_network(mode, backend, "proxy")
    }

    /// The same fixture with `sandbox.network = NETWORK`.
    fn with_network(mode: Mode, backend: Backend, network: &str) -> Fixture {
        let ids = match mode {
            Mode::Root => {
                assert!(
                    is_root(),
                    "the root mode must run as root (CI runs as root)"
                );
                None
            }
            Mode::User if !is_root() => None,
            Mode::User => Some(cordon_e2e::test_user()),
        };
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-net-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        fs::create_dir(&ws).unwrap();
        if let Some((uid, gid)) = ids {
            std::os::unix::fs::lchown(&ws, Some(uid), Some(gid)).unwrap();
        }
        fs::write(
            root.join("cordon.toml"),
            format!(
                "version = 1\n[sandbox]\nrequire_os_sandbox = true\nnetwork = \"{network}\"\n\
                 [sandbox.paths.workspace]\nroot = \"ws\"\nmode = \"rw\"\n\
                 [sandbox.paths.bin]\nroot = \"{}\"\nmode = \"ro\"\n",
                bins().dir.display()
            ),
        )
        .unwrap();
        Fixture {
            _tmp: tmp,
            root,
            ws,
            ids,
            backend,
        }
    }

    /// `cordon-netrun BACKEND POLICY [flags] -- argv…` in the workspace, as the mode's user.
    fn netrun(&self, flags: &[&str], argv: &[OsString]) -> Command {
        let mut c = Command::new(&bins().netrun);
        c.arg(match self.backend {
            Backend::Landlock => "landlock",
            Backend::Bwrap => "bwrap",
        })
        .arg(self.root.join("cordon.toml"))
        .args(flags)
        .arg("--")
        .args(argv)
        .current_dir(&self.ws)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        c
    }

    /// `cordon exec --policy POLICY --backend B -- argv…` in the workspace as the mode's user,
    /// with cordon's state and configuration in `state`, and an operator's `NO_PROXY` for
    /// loopback (inside the sandbox, loopback is the sandbox's own).
    fn cordon_exec(&self, policy: &Path, state: &Path, argv: &[&str]) -> Output {
        let mut c = Command::new(&bins().cordon);
        c.arg("exec")
            .arg("--policy")
            .arg(policy)
            .args([
                "--backend",
                match self.backend {
                    Backend::Landlock => "landlock",
                    Backend::Bwrap => "bwrap",
                },
            ])
            .arg("--")
            .args(argv)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.ws)
            .env("XDG_STATE_HOME", state)
            .env("XDG_CONFIG_HOME", state)
            .env("NO_PROXY", "localhost,127.0.0.1,::1")
            .env("no_proxy", "localhost,127.0.0.1,::1")
            .env("npm_config_noproxy", "localhost,127.0.0.1,::1")
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        c.output().unwrap()
    }

    /// One attack under the proxy profile: its stdout line and the runner's stderr.
    fn attack(&self, name: &str, extra: &[&str]) -> (String, String) {
        let mut argv: Vec<OsString> = vec![bins().attack.clone().into(), name.into()];
        if self.backend == Backend::Bwrap {
            argv.extend(["--backend".into(), "bwrap".into()]);
        }
        argv.extend(extra.iter().map(OsString::from));
        let out = self.netrun(&[], &argv).output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Servers on the host's loopback (the test's own network namespace): TCP and UDP on
/// 127.0.0.1 and [::1], each on a free port. Non-blocking, so that "nothing arrived" is
/// read without waiting: the runs that could have sent something are over by then, and
/// loopback delivers synchronously.
struct HostServers {
    tcp4: TcpListener,
    tcp6: TcpListener,
    udp4: UdpSocket,
    udp6: UdpSocket,
}

impl HostServers {
    fn new() -> HostServers {
        let s = HostServers {
            tcp4: TcpListener::bind("127.0.0.1:0").unwrap(),
            tcp6: TcpListener::bind("[::1]:0").unwrap(),
            udp4: UdpSocket::bind("127.0.0.1:0").unwrap(),
            udp6: UdpSocket::bind("[::1]:0").unwrap(),
        };
        s.tcp4.set_nonblocking(true).unwrap();
        s.tcp6.set_nonblocking(true).unwrap();
        s.udp4.set_nonblocking(true).unwrap();
        s.udp6.set_nonblocking(true).unwrap();
        s
    }

    fn addr(&self, which: &str) -> String {
        match which {
            "tcp4" => self.tcp4.local_addr(),
            "tcp6" => self.tcp6.local_addr(),
            "udp4" => self.udp4.local_addr(),
            _ => self.udp6.local_addr(),
        }
        .unwrap()
        .to_string()
    }

    /// What reached the servers since the last call (answering each datagram, so that an
    /// attack that reaches one sees the answer as well).
    fn arrived(&self) -> Vec<String> {
        let mut got = Vec::new();
        for (name, l) in [("tcp4", &self.tcp4), ("tcp6", &self.tcp6)] {
            loop {
                match l.accept() {
                    Ok((_, from)) => got.push(format!("{name}: a connection from {from}")),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("accept on {name}: {e}"),
                }
            }
        }
        for (name, u) in [("udp4", &self.udp4), ("udp6", &self.udp6)] {
            let mut buf = [0u8; 64];
            loop {
                match u.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        let _ = u.send_to(b"answer", from);
                        got.push(format!("{name}: {n} bytes from {from}"))
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("recv on {name}: {e}"),
                }
            }
        }
        got
    }
}

fn blocked(f: &Fixture, name: &str, extra: &[&str]) {
    let (out, err) = f.attack(name, extra);
    assert!(
        out.starts_with("BLOCKED: "),
        "[{:?} {:?}] {name} {extra:?}: {out}{err}",
        f.ids,
        f.backend
    );
}

macro_rules! matrix {
    ($($f:ident),* $(,)?) => {
        mod landlock_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Landlock); } )* }
        mod landlock_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Landlock); } )* }
        mod bwrap_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Bwrap); } )* }
        mod bwrap_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Bwrap); } )* }
    };
}

matrix!(
    the_first_connect_reaches_the_proxy,
    direct_tcp_reaches_nothing,
    udp_and_dns_reach_nothing,
    binds_and_other_socket_families_are_refused,
    a_proxy_that_is_gone_refuses_the_run,
    curl_reaches_a_listed_loopback_service_through_the_proxy,
    curl_through_a_tunnel_reaches_only_the_tunnels_host,
    a_python_front_end_is_not_fronted_through_a_tunnel,
);

/// A plain HTTP server on the host's 127.0.0.1 that answers every request with `body`; its
/// port.
fn host_web_server(body: &'static str) -> u16 {
    use std::io::{Read, Write};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if s.read_exact(&mut b).is_err() {
                        return;
                    }
                    head.push(b[0]);
                }
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

/// issue 24, round 3: docs/network.md's own example, `allow = ["localhost", "127.0.0.1:PORT"]`,
/// reaches the host's loopback service with real curl under `cordon exec` — through the proxy,
/// even when the operator's environment has a `NO_PROXY` for loopback and the policy passes it
/// (`sandbox.env`): inside the sandbox, loopback is the sandbox's own and empty. A port not
/// listed is refused with the reason in the answer's body, and the run ends with one stderr
/// line that names it, why, and the `[network]` line that would allow it.
fn curl_reaches_a_listed_loopback_service_through_the_proxy(mode: Mode, backend: Backend) {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let f = Fixture::new(mode, backend);
    let port = host_web_server("the host's loopback service");
    let unlisted = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = unlisted.local_addr().unwrap().port();
    let state = f.root.join("state");
    fs::create_dir(&state).unwrap();
    if let Some((uid, gid)) = f.ids {
        std::os::unix::fs::lchown(&state, Some(uid), Some(gid)).unwrap();
    }
    let policy = f.root.join("curl.toml");
    fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox]\nrequire_os_sandbox = true\nnetwork = \"proxy\"\n\
             env = [\"NO_PROXY\", \"no_proxy\", \"npm_config_noproxy\"]\n\
             [sandbox.paths.workspace]\nroot = \"ws\"\nmode = \"rw\"\n\
             [shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = \"{}\"\n\
             [network]\nallow = [\"localhost\", \"127.0.0.1:{port}\"]\n",
            state.join("audit.jsonl").display()
        ),
    )
    .unwrap();
    let run = |url: &str| -> Output {
        f.cordon_exec(
            &policy,
            &state,
            &["/usr/bin/curl", "-sS", "--max-time", "60", url],
        )
    };
    let text = |o: &Output| {
        format!(
            "[{mode:?} {backend:?}] status {:?}\nstdout: {}\nstderr: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    for url in [
        format!("http://localhost:{port}/"),
        format!("http://127.0.0.1:{port}/"),
    ] {
        let o = run(&url);
        assert_eq!(o.status.code(), Some(0), "{url}: {}", text(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "the host's loopback service",
            "{url}: {}",
            text(&o)
        );
    }
    let o = run(&format!("http://127.0.0.1:{other}/"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!(
            "cordon: the connection to 127.0.0.1:{other} is refused by the policy: "
        )),
        "{}",
        text(&o)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| {
            l.starts_with(&format!(
                "cordon: 127.0.0.1:{other}: refused by the policy: "
            ))
        })
        .unwrap_or_else(|| panic!("no end-of-run line: {}", text(&o)));
    assert!(
        line.ends_with(&format!(
            "; to allow it: [network] allow = [\"127.0.0.1:{other}\"]"
        )),
        "{line}"
    );
    // Nothing reached the unlisted port.
    unlisted.set_nonblocking(true).unwrap();
    assert!(unlisted.accept().is_err(), "{}", text(&o));
}

/// A front end on the host's 127.0.0.1 shared by sites: answers each request (keep-alive)
/// with `site HOST` for the Host it names, and counts the requests it was asked for a host
/// other than `front.test`.
fn host_front_end() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let others = std::sync::Arc::new(AtomicUsize::new(0));
    let count = others.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let count = count.clone();
            std::thread::spawn(move || {
                let mut w = s.try_clone().unwrap();
                let mut r = BufReader::new(s);
                loop {
                    let mut host = String::new();
                    loop {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some(h) = line.to_ascii_lowercase().strip_prefix("host:") {
                            host = h.trim().to_string();
                        }
                    }
                    if !host.starts_with("front.test") {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    let body = format!("site {host}");
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if w.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, others)
}

/// Round 9 of issue 21: plain HTTP fronting through a tunnel, with real curl under `cordon
/// exec`. `curl -p` (a CONNECT tunnel for http://) to the listed `front.test` with
/// `Host: other.test` reached the front end's site for other.test, which the policy does not
/// list; now the request is refused before its head ends (403 naming why), and the run ends
/// with a line naming it. The tunnel's own host still goes.
fn curl_through_a_tunnel_reaches_only_the_tunnels_host(mode: Mode, backend: Backend) {
    assert!(
        Path::new("/usr/bin/curl").exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let f = Fixture::new(mode, backend);
    let (port, others) = host_front_end();
    let state = f.root.join("state");
    fs::create_dir(&state).unwrap();
    if let Some((uid, gid)) = f.ids {
        std::os::unix::fs::lchown(&state, Some(uid), Some(gid)).unwrap();
    }
    let policy = f.root.join("front.toml");
    fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox]\nrequire_os_sandbox = true\nnetwork = \"proxy\"\n\
             [sandbox.paths.workspace]\nroot = \"ws\"\nmode = \"rw\"\n\
             [shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = \"{}\"\n\
             [network]\nallow = [\"front.test:{port}\"]\n\
             [network.hosts]\n\"front.test\" = \"127.0.0.1\"\n",
            state.join("audit.jsonl").display()
        ),
    )
    .unwrap();
    let url = format!("http://front.test:{port}/");
    let curl = |extra: &[&str]| {
        let mut argv = vec!["/usr/bin/curl", "-sS", "-p", "--max-time", "60"];
        argv.extend_from_slice(extra);
        argv.push(&url);
        let o = f.cordon_exec(&policy, &state, &argv);
        let text = format!(
            "[{mode:?} {backend:?}] status {:?}\nstdout: {}\nstderr: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            text,
        )
    };
    let (out, _, text) = curl(&[]);
    assert_eq!(out, format!("site front.test:{port}"), "{text}");
    let (out, err, text) = curl(&["-H", "Host: other.test"]);
    assert!(!out.contains("site other.test"), "ESCAPED: {text}");
    assert!(
        out.starts_with("cordon: the request is refused: the request's Host `other.test` is not the tunnel's host"),
        "{text}"
    );
    assert!(
        err.lines().any(|l| l.starts_with(&format!(
            "cordon: front.test:{port}: the request's Host `other.test`"
        ))),
        "no end-of-run line: {text}"
    );
    assert_eq!(
        others.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a request for another host reached the front end: {text}"
    );
}

/// Python's `http.server` on the host's 127.0.0.1 as a front end shared by sites: answers
/// `site HOST` for the Host each request names. It reads the request line as Latin-1 and
/// splits it with `str.split()`, at white space no HTTP grammar has. Killed on drop.
struct PythonFrontEnd {
    child: std::process::Child,
    port: u16,
}

impl PythonFrontEnd {
    fn start() -> PythonFrontEnd {
        use std::io::BufRead;
        let mut child = Command::new("/usr/bin/python3")
            .args([
                "-c",
                "import http.server\n\
                 class H(http.server.BaseHTTPRequestHandler):\n\
                 \x20   protocol_version = 'HTTP/1.1'\n\
                 \x20   def do_GET(self):\n\
                 \x20       b = ('site %s' % self.headers.get('Host')).encode()\n\
                 \x20       self.send_response(200)\n\
                 \x20       self.send_header('content-length', str(len(b)))\n\
                 \x20       self.end_headers()\n\
                 \x20       self.wfile.write(b)\n\
                 \x20   def log_message(self, *a): pass\n\
                 s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n\
                 print(s.server_address[1], flush=True)\n\
                 s.serve_forever()\n",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("/usr/bin/python3 runs (this test needs it)");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the server's port");
        PythonFrontEnd { child, port }
    }
}

impl Drop for PythonFrontEnd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Round 9 of issue 21: through a CONNECT tunnel to the listed `front.test`, a request whose
/// line is split at `\x1c` or NEL, or starts with a space, and that names `Host: other.test`,
/// reached Python's http.server's site for other.test: the proxy took the line for another
/// protocol and let the rest through unread. The command is Python too, as root and as a user, on both backends.
fn a_python_front_end_is_not_fronted_through_a_tunnel(mode: Mode, backend: Backend) {
    let f = Fixture::new(mode, backend);
    let front = PythonFrontEnd::start();
    let port = front.port;
    let state = f.root.join("state");
    fs::create_dir(&state).unwrap();
    if let Some((uid, gid)) = f.ids {
        std::os::unix::fs::lchown(&state, Some(uid), Some(gid)).unwrap();
    }
    let policy = f.root.join("front.toml");
    fs::write(
        &policy,
        format!(
            "version = 1\n[sandbox]\nrequire_os_sandbox = true\nnetwork = \"proxy\"\n\
             [sandbox.paths.workspace]\nroot = \"ws\"\nmode = \"rw\"\n\
             [shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = \"{}\"\n\
             [network]\nallow = [\"front.test:{port}\"]\n\
             [network.hosts]\n\"front.test\" = \"127.0.0.1\"\n",
            state.join("audit.jsonl").display()
        ),
    )
    .unwrap();
    // One tunnel per separator; each answer (or what ended it) on a line of its own.
    let client = format!(
        "import os, socket\n\
         h, p = os.environ['http_proxy'].split('//')[1].rstrip('/').rsplit(':', 1)\n\
         for line in (b'GET / ', b'GET\\x1c/\\x1c', b'GET\\x1f/\\x1f', b'GET\\x85/\\x85', b'GET\\xa0/\\xa0', b'GET\\x0b/\\x0b', b' GET / '):\n\
         \x20   s = socket.create_connection((h.strip('[]'), int(p)))\n\
         \x20   s.sendall(b'CONNECT front.test:{port} HTTP/1.1\\r\\nHost: front.test:{port}\\r\\n\\r\\n')\n\
         \x20   r = b''\n\
         \x20   while b'\\r\\n\\r\\n' not in r:\n\
         \x20       r += s.recv(1)\n\
         \x20   s.sendall(line + b'HTTP/1.1\\r\\nHost: other.test\\r\\n\\r\\n')\n\
         \x20   out = b''\n\
         \x20   while True:\n\
         \x20       d = s.recv(4096)\n\
         \x20       if not d or b'site' in out + d:\n\
         \x20           out += d\n\
         \x20           break\n\
         \x20       out += d\n\
         \x20   print(repr(line), out.split(b'\\r\\n\\r\\n')[-1].decode('latin-1').strip())\n"
    );
    // In a script in the workspace: what the analysis cannot see is what the proxy must stop.
    let script = f.ws.join("front.py");
    fs::write(&script, client).unwrap();
    if let Some((uid, gid)) = f.ids {
        std::os::unix::fs::lchown(&script, Some(uid), Some(gid)).unwrap();
    }
    let o = f.cordon_exec(&policy, &state, &["/usr/bin/python3", "front.py"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let text = format!(
        "[{mode:?} {backend:?}] status {:?}\nstdout: {out}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.contains("site other.test"), "ESCAPED: {text}");
    assert_eq!(out.lines().count(), 7, "{text}");
    assert!(
        out.lines()
            .all(|l| l.contains("cordon: the request is refused: the request's Host `other.test`")),
        "{text}"
    );
}

/// The command's first action, a connect to the proxy's port on 127.0.0.1 and on [::1],
/// reaches the stand-in that holds the handed-over listener: no race with its creation.
fn the_first_connect_reaches_the_proxy(mode: Mode, backend: Backend) {
    let f = Fixture::new(mode, backend);
    let port = PROXY_PORT.to_string();
    for family in ["4", "6"] {
        let (out, err) = f.attack(
            "legit-proxy-connect",
            &["--port", &port, "--family", family],
        );
        assert!(
            out.starts_with("OK: ") && out.contains(BANNER),
            "[{mode:?} {backend:?}] IPv{family}: {out}{err}"
        );
        assert!(
            err.contains("proxy-connections: 1"),
            "[{mode:?} {backend:?}] IPv{family}: {err}"
        );
    }
}

/// TCP to the host's loopback servers and to raw addresses fails; nothing arrives.
fn direct_tcp_reaches_nothing(mode: Mode, backend: Backend) {
    let f = Fixture::new(mode, backend);
    let host = HostServers::new();
    for target in [
        host.addr("tcp4"),
        host.addr("tcp6"),
        "8.8.8.8:53".into(),
        "1.1.1.1:443".into(),
        "10.0.0.1:80".into(),
        "192.168.1.1:80".into(),
        "169.254.169.254:80".into(),
        "[2001:4860:4860::8888]:443".into(),
        "[fd00::1]:80".into(),
    ] {
        blocked(&f, "net-tcp-connect", &["--addr", &target]);
    }
    assert_eq!(
        host.arrived(),
        Vec::<String>::new(),
        "[{mode:?} {backend:?}]"
    );
}

/// UDP, DNS included, to the host's loopback servers and to resolvers never arrives (sending
/// may fail for want of a route, or go to the namespace's own empty loopback).
fn udp_and_dns_reach_nothing(mode: Mode, backend: Backend) {
    let f = Fixture::new(mode, backend);
    let host = HostServers::new();
    for target in [
        host.addr("udp4"),
        host.addr("udp6"),
        "127.0.0.53:53".into(),
        "127.0.0.1:53".into(),
        "8.8.8.8:53".into(),
        "[2001:4860:4860::8888]:53".into(),
        "[::1]:53".into(),
    ] {
        blocked(&f, "net-udp-send", &["--addr", &target]);
    }
    assert_eq!(
        host.arrived(),
        Vec::<String>::new(),
        "[{mode:?} {backend:?}]"
    );
}

/// Landlock (ABI 4) refuses binding any TCP port, and seccomp every socket family but IPv4
/// and IPv6.
fn binds_and_other_socket_families_are_refused(mode: Mode, backend: Backend) {
    let f = Fixture::new(mode, backend);
    assert!(
        cordon_ossandbox::Machine::probe().landlock_abi >= 4,
        "this kernel's Landlock cannot restrict TCP (needs ABI 4)"
    );
    for port in ["8080", "0", &PROXY_PORT.to_string()] {
        blocked(&f, "net-bind", &["--port", port]);
    }
    blocked(&f, "tcp-loopback", &[]);
    for attack in [
        "socket-netlink",
        "socket-packet",
        "socket-vsock",
        "socket-raw",
    ] {
        blocked(&f, attack, &[]);
    }
}

/// A proxy that never takes its listener: the run is refused (125) before the command starts.
fn a_proxy_that_is_gone_refuses_the_run(mode: Mode, backend: Backend) {
    let f = Fixture::new(mode, backend);
    let out = f
        .netrun(
            &["--proxy-gone"],
            &["/usr/bin/touch".into(), "started".into()],
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "[{mode:?} {backend:?}] {err}");
    assert!(
        err.contains("cordon: ") && err.contains("proxy"),
        "[{mode:?} {backend:?}] {err}"
    );
    assert!(
        !f.ws.join("started").exists(),
        "[{mode:?} {backend:?}] the command ran"
    );
}

/// `cordon doctor` proves with a live probe that `network = "proxy"` can be enforced, as this
/// user, and says it is refused where no network namespace can be made.
fn doctor_reports_the_proxy(mode: Mode) {
    let f = Fixture::new(mode, Backend::Landlock);
    let doctor = |no_namespaces: bool| -> String {
        let mut c = Command::new(&bins().cordon);
        c.arg("doctor").current_dir(&f.ws).stdin(Stdio::null());
        if let Some((uid, gid)) = f.ids {
            c.uid(uid).gid(gid);
        }
        if no_namespaces {
            cordon_e2e::without_namespaces(&mut c);
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    };
    let line = |text: &str, start: &str| -> String {
        let after = text
            .split("\nnetwork = \"proxy\"")
            .nth(1)
            .unwrap_or_else(|| panic!("[{mode:?}] no proxy section: {text}"));
        after
            .lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("[{mode:?}] no {start} line: {text}"))
            .to_string()
    };
    let text = doctor(false);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("proxy netns") && l.contains(" ok ")),
        "[{mode:?}] {text}"
    );
    for backend in ["landlock", "bwrap"] {
        assert!(
            line(&text, backend).contains("enforced"),
            "[{mode:?}] {text}"
        );
    }
    let text = doctor(true);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("proxy netns") && l.contains(" no ")),
        "[{mode:?}] {text}"
    );
    for backend in ["landlock", "bwrap"] {
        assert!(
            line(&text, backend).contains("refused"),
            "[{mode:?}] {text}"
        );
    }
}

mod doctor {
    #[test]
    fn reports_the_proxy_as_root() {
        super::doctor_reports_the_proxy(super::Mode::Root);
    }
    #[test]
    fn reports_the_proxy_as_user() {
        super::doctor_reports_the_proxy(super::Mode::User);
    }
}

/// Without namespaces the Landlock backend falls back to seccomp for `network = "deny"`, but
/// a proxy there could be gone around: `network = "proxy"` is refused, and the command never
/// starts.
fn without_namespaces_proxy_is_refused(mode: Mode) {
    let f = Fixture::new(mode, Backend::Landlock);
    let mut c = f.netrun(&[], &["/usr/bin/touch".into(), "started".into()]);
    cordon_e2e::without_namespaces(&mut c);
    let out: Output = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "[{mode:?}] {err}");
    assert!(
        err.contains("sandbox.network = \"proxy\" needs a network namespace"),
        "[{mode:?}] {err}"
    );
    assert!(!f.ws.join("started").exists(), "[{mode:?}] the command ran");
}

mod without_namespaces {
    #[test]
    fn proxy_is_refused_as_root() {
        super::without_namespaces_proxy_is_refused(super::Mode::Root);
    }
    #[test]
    fn proxy_is_refused_as_user() {
        super::without_namespaces_proxy_is_refused(super::Mode::User);
    }
}

/// The controls: the same attacks, unconfined, reach the host's servers, so each check above
/// can fail.
#[test]
fn controls_unconfined_attacks_reach_the_host() {
    let host = HostServers::new();
    let run = |name: &str, addr: String| -> String {
        let out = Command::new(&bins().attack)
            .args([name, "--addr", &addr])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for which in ["tcp4", "tcp6"] {
        let out = run("net-tcp-connect", host.addr(which));
        assert!(out.starts_with("ESCAPED: "), "{which}: {out}");
    }
    let arrived = host.arrived();
    assert_eq!(arrived.len(), 2, "{arrived:?}");
    // The UDP attack waits for an answer, which the host answers once it read the datagram:
    // a thread answers while the attack waits.
    for which in ["udp4", "udp6"] {
        let addr = host.addr(which);
        let sock = match which {
            "udp4" => host.udp4.try_clone().unwrap(),
            _ => host.udp6.try_clone().unwrap(),
        };
        sock.set_nonblocking(false).unwrap();
        let answer = std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            let (_, from) = sock.recv_from(&mut buf).unwrap();
            sock.send_to(b"answer", from).unwrap();
            sock.set_nonblocking(true).unwrap();
        });
        let out = run("net-udp-send", addr);
        answer.join().unwrap();
        assert!(out.starts_with("ESCAPED: "), "{which}: {out}");
    }
    // Binding works unconfined too.
    let out = Command::new(&bins().attack)
        .args(["net-bind", "--port", "0"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("ESCAPED: "),
        "{out:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// issue 25: sandbox.network = "deny" without a network namespace

macro_rules! deny_matrix {
    ($($f:ident),* $(,)?) => {
        mod deny_landlock_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Landlock); } )* }
        mod deny_landlock_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Landlock); } )* }
        mod deny_bwrap_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Bwrap); } )* }
        mod deny_bwrap_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Bwrap); } )* }
    };
}

deny_matrix!(
    deny_runs_in_the_hosts_network_namespace_and_says_so,
    deny_reaches_nothing_on_the_hosts_network,
);

/// This kernel has what "deny" without a namespace needs (else cordon keeps the namespace,
/// which `network.rs`'s unit tests cover, and these tests would prove nothing new).
fn assert_filters_suffice() {
    let abi = cordon_ossandbox::Machine::probe().landlock_abi;
    assert!(
        abi >= cordon_ossandbox::NETWORK_FILTERS_MIN_ABI,
        "this kernel's Landlock ABI {abi} is older than {}: cordon keeps the network namespace here, so the deny_* tests cannot run",
        cordon_ossandbox::NETWORK_FILTERS_MIN_ABI
    );
}

/// On the Landlock backend the command's network namespace is the host's (the one this test
/// runs in), the run names what isolates it instead, and — the documented price, a view its
/// /proc (the host's: /proc/1/net) always gave — /proc/net shows the host's sockets. The bwrap
/// backend keeps a namespace of the command's own: its sandbox has a /proc of its own, which
/// would otherwise show the host's sockets for the first time. Fails on the code before issue
/// 25 (Landlock), and on netless's first version (bwrap shared the host's namespace).
fn deny_runs_in_the_hosts_network_namespace_and_says_so(mode: Mode, backend: Backend) {
    assert_filters_suffice();
    let f = Fixture::with_network(mode, backend, "deny");
    let host_ns = fs::read_link("/proc/self/ns/net").unwrap();
    let out = f
        .netrun(
            &[],
            &["/usr/bin/readlink".into(), "/proc/self/ns/net".into()],
        )
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "[{mode:?} {backend:?}] {stdout}{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("network: "))
        .unwrap_or_else(|| panic!("[{mode:?} {backend:?}] no network line: {stderr}"));
    let own = backend == Backend::Bwrap;
    if own {
        assert_ne!(
            stdout.trim(),
            host_ns.to_string_lossy(),
            "[{mode:?} {backend:?}] bwrap's command ran in the host's network namespace: {stderr}"
        );
        assert!(
            line.starts_with(
                "network: denied in an empty network namespace of the command's own (bwrap"
            ) && line.contains("seccomp refuses every socket()"),
            "[{mode:?} {backend:?}] {line}"
        );
    } else {
        assert_eq!(
            stdout.trim(),
            host_ns.to_string_lossy(),
            "[{mode:?} {backend:?}] the command ran in a network namespace of its own: {stderr}"
        );
        assert!(
            line.starts_with(
                "network: denied without a network namespace: seccomp refuses every socket()"
            ) && line.contains("abstract unix sockets outside the sandbox"),
            "[{mode:?} {backend:?}] {line}"
        );
    }
    // What the namespace hid: the host's sockets, read-only (docs/network-enforcement.md).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = format!(":{:04X} ", listener.local_addr().unwrap().port());
    let out = f
        .netrun(&[], &["/usr/bin/cat".into(), "/proc/net/tcp".into()])
        .output()
        .unwrap();
    let tcp = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "[{mode:?} {backend:?}] {tcp}");
    let shown = tcp.lines().any(|l| l.contains(&format!("0100007F{port}")));
    assert_eq!(
        shown,
        !own,
        "[{mode:?} {backend:?}] /proc/net/tcp {} the host's listener on 127.0.0.1{port}: {tcp}{}",
        if shown { "shows" } else { "does not show" },
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One attack under "deny": refused by seccomp (EPERM) at the socket, not merely unanswered.
fn refused(f: &Fixture, name: &str, extra: &[&str]) {
    let (out, err) = f.attack(name, extra);
    assert!(
        out.starts_with("BLOCKED: ") && out.contains("EPERM"),
        "[{:?} {:?}] {name} {extra:?}: {out}{err}",
        f.ids,
        f.backend
    );
}

/// A unique abstract name for a listener of the host.
fn abstract_name() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "cordon-e2e-net-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Listeners of the host the sandbox could reach without a network namespace: an abstract
/// unix socket, and a pathname unix socket inside the workspace (visible on both backends,
/// connectable by the mode's user when unconfined).
struct UnixListeners {
    name: String,
    path: PathBuf,
    abstract_: std::os::unix::net::UnixListener,
    pathname: std::os::unix::net::UnixListener,
}

impl UnixListeners {
    fn new(f: &Fixture) -> UnixListeners {
        use std::os::linux::net::SocketAddrExt;
        let name = abstract_name();
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let abstract_ = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        let path = f.ws.join("host.sock");
        let pathname = std::os::unix::net::UnixListener::bind(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o777)).unwrap();
        abstract_.set_nonblocking(true).unwrap();
        pathname.set_nonblocking(true).unwrap();
        UnixListeners {
            name,
            path,
            abstract_,
            pathname,
        }
    }

    fn arrived(&self) -> Vec<&'static str> {
        let mut got = Vec::new();
        if self.abstract_.accept().is_ok() {
            got.push("abstract");
        }
        if self.pathname.accept().is_ok() {
            got.push("pathname");
        }
        got
    }
}

/// Everything a namespace used to keep from the host's network, refused with EPERM by
/// seccomp on both backends, and nothing arrives at the host's listeners. socketpair(AF_UNIX)
/// still works (it reaches nothing outside).
fn deny_reaches_nothing_on_the_hosts_network(mode: Mode, backend: Backend) {
    assert_filters_suffice();
    let f = Fixture::with_network(mode, backend, "deny");
    let host = HostServers::new();
    let unix = UnixListeners::new(&f);
    for which in ["tcp4", "tcp6"] {
        refused(&f, "net-tcp-connect", &["--addr", &host.addr(which)]);
    }
    for which in ["udp4", "udp6"] {
        refused(&f, "net-udp-send", &["--addr", &host.addr(which)]);
    }
    refused(&f, "net-udp-send", &["--addr", "127.0.0.53:53"]);
    refused(&f, "net-icmp-echo", &["--addr", "127.0.0.1"]);
    refused(&f, "net-bind", &["--port", "0"]);
    for attack in [
        "netlink-route-dump",
        "socket-netlink",
        "socket-packet",
        "socket-raw",
        "socket-vsock",
        "socket-mptcp",
        "io-uring-socket",
        "ia32-socketcall",
        "ia32-socket",
        "x32-socket",
    ] {
        refused(&f, attack, &[]);
    }
    refused(&f, "abstract-connect", &["--abstract", &unix.name]);
    refused(
        &f,
        "unix-connect-outside",
        &["--socket", unix.path.to_str().unwrap()],
    );
    let (out, err) = f.attack("legit-socketpair", &[]);
    assert!(out.starts_with("OK: "), "[{mode:?} {backend:?}] {out}{err}");
    // A socket connected to the host's listener, inherited by cordon (fd 60, not
    // close-on-exec): cordon closes it before the command starts.
    let inherited = std::net::TcpStream::connect(host.addr("tcp4")).unwrap();
    assert_eq!(host.arrived().len(), 1, "the inherited socket's connection");
    let raw = std::os::fd::AsRawFd::as_raw_fd(&inherited);
    let mut argv: Vec<OsString> = vec![bins().attack.clone().into(), "fd-scan".into()];
    if backend == Backend::Bwrap {
        argv.extend(["--backend".into(), "bwrap".into()]);
    }
    let mut c = f.netrun(&[], &argv);
    // SAFETY: the closure runs in the forked child before exec and only duplicates a
    // descriptor (dup2 clears close-on-exec on the copy).
    unsafe {
        c.pre_exec(move || {
            if libc::dup2(raw, 60) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("BLOCKED: no file descriptor beyond stdio"),
        "[{mode:?} {backend:?}] {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(inherited);
    assert_eq!(
        host.arrived(),
        Vec::<String>::new(),
        "[{mode:?} {backend:?}]"
    );
    assert_eq!(unix.arrived(), Vec::<&str>::new(), "[{mode:?} {backend:?}]");
}

/// The controls for the deny matrix: each attack, run without cordon as root, reaches the
/// host's network (so each check above can fail).
#[test]
fn controls_deny_attacks_escape_unconfined() {
    assert!(
        is_root(),
        "the controls run the attacks as root (raw ICMP): CI runs as root"
    );
    let f = Fixture::with_network(Mode::Root, Backend::Landlock, "deny");
    let host = HostServers::new();
    let unix = UnixListeners::new(&f);
    let run = |name: &str, extra: &[&str]| -> String {
        let out = Command::new(&bins().attack)
            .arg(name)
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    for (name, extra) in [
        (
            "net-tcp-connect",
            vec!["--addr".to_string(), host.addr("tcp4")],
        ),
        ("net-icmp-echo", vec!["--addr".into(), "127.0.0.1".into()]),
        ("netlink-route-dump", vec![]),
        ("io-uring-socket", vec![]),
        ("ia32-socketcall", vec![]),
        (
            "abstract-connect",
            vec!["--abstract".into(), unix.name.clone()],
        ),
        (
            "unix-connect-outside",
            vec!["--socket".into(), unix.path.display().to_string()],
        ),
    ] {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let out = run(name, &extra);
        assert!(out.starts_with("ESCAPED: "), "{name}: {out}");
    }
    assert_eq!(host.arrived().len(), 1);
    assert_eq!(unix.arrived(), vec!["abstract", "pathname"]);
    // An inherited socket is found when nothing closes it.
    let inherited = std::net::TcpStream::connect(host.addr("tcp4")).unwrap();
    let raw = std::os::fd::AsRawFd::as_raw_fd(&inherited);
    let mut c = Command::new(&bins().attack);
    c.arg("fd-scan").stdin(Stdio::null());
    // SAFETY: as in the deny matrix: only dup2 in the child before exec.
    unsafe {
        c.pre_exec(move || {
            if libc::dup2(raw, 60) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned();
    assert!(
        out.starts_with("ESCAPED: ") && out.contains("60"),
        "fd-scan: {out}"
    );
}

// ---------------------------------------------------------------------------------------------
// Round 8 (issue 21): sandbox.network = "allow" and the host's unix socket files

macro_rules! allow_matrix {
    ($($f:ident),* $(,)?) => {
        mod allow_landlock_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Landlock); } )* }
        mod allow_landlock_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Landlock); } )* }
        mod allow_bwrap_as_root { $( #[test] fn $f() { super::$f(super::Mode::Root, super::Backend::Bwrap); } )* }
        mod allow_bwrap_as_user { $( #[test] fn $f() { super::$f(super::Mode::User, super::Backend::Bwrap); } )* }
    };
}

allow_matrix!(allow_reaches_no_host_unix_socket_file);

/// A listening socket file of the host outside every root, where the operator's session
/// keeps its buses and daemons (`/run/user/UID/bus`, whose systemd runs `systemd-run --user`
/// commands outside any sandbox; `/run/docker.sock`, root on the host): a directory of its own
/// under /run, the socket connectable by anyone unconfined.
struct RunSocket {
    dir: PathBuf,
    path: PathBuf,
    listener: std::os::unix::net::UnixListener,
}

impl RunSocket {
    fn new() -> RunSocket {
        let dir = PathBuf::from(format!("/run/{}", abstract_name()));
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.join("bus");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o777)).unwrap();
        listener.set_nonblocking(true).unwrap();
        RunSocket {
            dir,
            path,
            listener,
        }
    }

    fn arrived(&self) -> bool {
        self.listener.accept().is_ok()
    }
}

impl Drop for RunSocket {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Under `network = "allow"` the command has the network, not the host's other processes: a
/// socket file of the host's session outside the roots is not reached on either backend (the
/// Landlock backend reached it before round 8: Landlock before ABI 9 does not check
/// `connect()` to a socket file, and seccomp let `socket(AF_UNIX)` through under "allow";
/// bwrap's view has no host /run). socketpair(AF_UNIX) still works; TCP to the host's loopback
/// does too (the network is allowed).
fn allow_reaches_no_host_unix_socket_file(mode: Mode, backend: Backend) {
    assert!(
        is_root(),
        "the socket goes under /run: run as root (CI does)"
    );
    let f = Fixture::with_network(mode, backend, "allow");
    let sock = RunSocket::new();
    let (out, err) = f.attack(
        "unix-connect-outside",
        &["--socket", sock.path.to_str().unwrap()],
    );
    assert!(
        out.starts_with("BLOCKED: "),
        "[{mode:?} {backend:?}] {out}{err}"
    );
    assert!(
        !sock.arrived(),
        "[{mode:?} {backend:?}] the host's socket got a connection"
    );
    let (out, err) = f.attack("legit-socketpair", &[]);
    assert!(out.starts_with("OK: "), "[{mode:?} {backend:?}] {out}{err}");
    let host = HostServers::new();
    let (out, err) = f.attack("net-tcp-connect", &["--addr", &host.addr("tcp4")]);
    assert!(
        out.starts_with("ESCAPED: "),
        "[{mode:?} {backend:?}] under \"allow\" the host's loopback is reachable: {out}{err}"
    );
}

/// The control: unconfined, as the test user too, the attack reaches the socket file.
#[test]
fn control_a_host_unix_socket_file_is_reached_unconfined() {
    assert!(
        is_root(),
        "the socket goes under /run: run as root (CI does)"
    );
    let sock = RunSocket::new();
    let mut c = Command::new(&bins().attack);
    c.args([
        "unix-connect-outside",
        "--socket",
        sock.path.to_str().unwrap(),
    ])
    .stdin(Stdio::null());
    let (uid, gid) = cordon_e2e::test_user();
    c.uid(uid).gid(gid);
    let out = String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned();
    assert!(out.starts_with("ESCAPED: "), "{out}");
    assert!(sock.arrived());
}
