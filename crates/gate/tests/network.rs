//! Connections through the proxy, decided by a gate from a real policy file and recorded in
//! its audit log: the decision (`tool: network`) before the connection, then the proxy's
//! connection records, one chain. The client speaks SOCKS5 and HTTP CONNECT by hand (the
//! proxy crate's own tests use full client libraries).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use cordon_approval::audit;
use cordon_gate::network::start_proxy;
use cordon_gate::{
    Answer, AskError, AsyncAsker, Command, Gate, Options, Output, Pending, Request, RunOptions,
};
use cordon_netproxy::ProxyHandle;
use cordon_policy::Action;
use std::path::Path;

/// Answers asks from a script, and notes what it was asked.
#[derive(Clone, Default)]
struct Script(Arc<Mutex<(VecDeque<Answer>, Vec<String>)>>);

impl AsyncAsker for Script {
    fn ask(
        &mut self,
        request: &Request,
        _: &Pending,
    ) -> impl std::future::Future<Output = Result<Answer, AskError>> + Send {
        let mut s = self.0.lock().unwrap();
        s.1.push(request.presentation.summary.clone());
        let a =
            s.0.pop_front()
                .ok_or(AskError::Lost("no more answers".into()));
        async move { a }
    }
}

fn echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut r = s.try_clone().unwrap();
                let _ = std::io::copy(&mut r, &mut s);
            });
        }
    });
    addr
}

/// SOCKS5 CONNECT to `name:port`: the reply code.
fn socks(proxy: SocketAddr, name: &str, port: u16) -> (u8, TcpStream) {
    let mut s = TcpStream::connect(proxy).unwrap();
    s.write_all(&[5, 1, 0]).unwrap();
    let mut r = [0u8; 2];
    s.read_exact(&mut r).unwrap();
    assert_eq!(r, [5, 0]);
    let mut req = vec![5, 1, 0, 3, name.len() as u8];
    req.extend_from_slice(name.as_bytes());
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut r = [0u8; 10];
    s.read_exact(&mut r).unwrap();
    (r[1], s)
}

#[test]
fn the_gate_decides_asks_and_records_connections() {
    let state = tempfile::tempdir().unwrap();
    let echo = echo_server();
    std::fs::write(
        state.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"ro\"\n\
             [approval]\naudit_log = \"{}/audit.jsonl\"\n\
             [network]\ndefault = \"ask\"\nallow = [\"echo.test\"]\ndeny = [\"bad.test\"]\n\
             [network.hosts]\n\"echo.test\" = \"127.0.0.1\"\n\"ask.test\" = \"127.0.0.1\"\n\"bad.test\" = \"127.0.0.1\"\n",
            state.path().display()
        ),
    )
    .unwrap();
    let mut o = Options::new(state.path().to_path_buf());
    o.policy = Some(state.path().join("cordon.toml"));
    let gate = Arc::new(Gate::open(o).unwrap());

    // What `cordon check` would say.
    let call = gate.network("Echo.Test", echo.port()).unwrap();
    assert_eq!(
        call.request().keys[0].words(),
        ["network", &format!("echo.test:{}", echo.port())]
    );
    assert_eq!(gate.explain(&call).unwrap().action(), Action::Allow);
    assert_eq!(
        gate.explain(&gate.network("bad.test", 1).unwrap())
            .unwrap()
            .action(),
        Action::Deny
    );
    assert_eq!(
        gate.explain(&gate.network("other.test", 1).unwrap())
            .unwrap()
            .action(),
        Action::Ask
    );
    assert_eq!(gate.network("0x7f.1", 80).err().unwrap().exit_code(), 126);

    let script = Script::default();
    script
        .0
        .lock()
        .unwrap()
        .0
        .extend([Answer::Once, Answer::Deny]);
    let proxy = start_proxy(gate.clone(), script.clone()).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    proxy.serve(l).unwrap();

    let (code, mut s) = socks(addr, "echo.test", echo.port());
    assert_eq!(code, 0);
    s.write_all(b"hello").unwrap();
    let mut back = [0u8; 5];
    s.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"hello");
    drop(s);
    assert_eq!(socks(addr, "bad.test", echo.port()).0, 2);
    let (code, mut s) = socks(addr, "ask.test", echo.port());
    assert_eq!(code, 0, "the person approved once");
    s.write_all(b"x").unwrap();
    s.read_exact(&mut back[..1]).unwrap();
    drop(s);
    // HTTP CONNECT, the person says no this time.
    let mut c = TcpStream::connect(addr).unwrap();
    write!(
        c,
        "CONNECT ask.test:{0} HTTP/1.1\r\nhost: ask.test:{0}\r\n\r\n",
        echo.port()
    )
    .unwrap();
    let mut reply = String::new();
    c.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    assert!(reply.contains("ask.test"), "{reply}");
    proxy.shutdown();

    assert_eq!(script.0.lock().unwrap().1.len(), 2);
    let log = state.path().join("audit.jsonl");
    assert!(audit::verify(&log).unwrap().is_intact());
    let records: Vec<audit::Record> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let decisions: Vec<_> = records
        .iter()
        .filter(|r| r.by != audit::By::Connection)
        .collect();
    let shown: Vec<_> = decisions
        .iter()
        .map(|r| (r.decision, r.by.to_string()))
        .collect();
    assert_eq!(decisions.len(), 4, "{shown:?}");
    assert!(decisions.iter().all(|r| r.tool == "network"));
    assert_eq!(decisions[1].decision, Action::Deny);
    assert_eq!(decisions[2].by, audit::By::User);
    assert_eq!(decisions[3].by, audit::By::User);
    assert_eq!(decisions[3].decision, Action::Deny);
    let closes: Vec<_> = records
        .iter()
        .filter_map(|r| r.connection.as_ref())
        .filter(|c| c.event == "close")
        .collect();
    assert_eq!(closes.len(), 4);
    // Close records come in the order connections end, not the order they began.
    let echo_close = closes.iter().find(|c| c.host == "echo.test").unwrap();
    assert_eq!((echo_close.bytes_up, echo_close.bytes_down), (5, 5));
}

/// A plain HTTP server on 127.0.0.1 that answers each request with its request line.
fn web_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
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
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{line}",
                    line.len()
                );
            });
        }
    });
    addr
}

#[test]
fn a_sandboxed_command_reaches_the_allowed_host_through_the_proxy_on_landlock() {
    through_the_proxy("landlock");
}

#[test]
fn a_sandboxed_command_reaches_the_allowed_host_through_the_proxy_on_bwrap() {
    through_the_proxy("bwrap");
}

/// On `backend`: curl in the sandbox reaches the allowed name through HTTP_PROXY and SOCKS5,
/// gets the proxy's 403 for another, and cannot go around the proxy to the host's loopback.
fn through_the_proxy(backend: &str) {
    let curl = "/usr/bin/curl";
    assert!(
        Path::new(curl).exists(),
        "this test runs curl in the sandbox: install it (apt-get install curl)"
    );
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let web = web_server();
    std::fs::write(
        state.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nbackend = \"{backend}\"\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \"{}\"\nmode = \"rw\"\n\
             [shell]\ndefault = \"deny\"\n[[shell.rules]]\npattern = \"curl\"\naction = \"allow\"\n\
             [approval]\naudit_log = \"{}/audit.jsonl\"\n\
             [network]\nallow = [\"web.test\"]\n\
             [network.hosts]\n\"web.test\" = \"127.0.0.1\"\n\"other.test\" = \"127.0.0.1\"\n",
            ws.path().display(),
            state.path().display()
        ),
    )
    .unwrap();
    let mut o = Options::new(ws.path().to_path_buf());
    o.policy = Some(state.path().join("cordon.toml"));
    let gate = Gate::open(o).unwrap_or_else(|e| panic!("{e}"));
    let run = |line: String| {
        let call = gate.shell(Command::Line(line), None).unwrap();
        let d = gate.decide(&call, &mut cordon_gate::nobody());
        assert!(d.is_allowed(), "{}", d.message());
        gate.run(
            &call,
            &d,
            RunOptions {
                timeout: None,
                output: Output::Capture { limit: 1 << 16 },
                cancel: None,
                ask: None,
                ..RunOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let p = web.port();
    // Through HTTP_PROXY, which cordon set: allowed, and the request arrives.
    let ran = run(format!("{curl} -sS http://web.test:{p}/hello"));
    let out = String::from_utf8_lossy(&ran.stdout);
    assert_eq!(
        ran.exit_code,
        0,
        "{out} {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(out, "GET /hello HTTP/1.1");
    // 100 connections at once, each decided and recorded (more than the gate decides at
    // once: the rest wait their turn), and every one served.
    let ran = run(format!(
        "{curl} -sS --parallel --parallel-immediate --parallel-max 100 'http://web.test:{p}/many[1-100]'"
    ));
    let out = String::from_utf8_lossy(&ran.stdout);
    for n in 1..=100 {
        assert!(
            out.contains(&format!("GET /many{n} HTTP/1.1")),
            "{n}: {out} {}",
            String::from_utf8_lossy(&ran.stderr)
        );
    }
    // Through ALL_PROXY (SOCKS5, the name resolved by the proxy).
    let ran = run(format!(
        "{curl} -sS --noproxy '' -x '' --socks5-hostname 127.0.0.1:{} http://web.test:{p}/socks",
        cordon_ossandbox::PROXY_PORT
    ));
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "GET /socks HTTP/1.1",
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    // Not allowed: the proxy's 403, which names the host.
    let ran = run(format!("{curl} -sS http://other.test:{p}/"));
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(
        out.starts_with(&format!(
            "cordon: the connection to other.test:{p} is refused by the policy"
        )),
        "{out}"
    );
    // Around the proxy: the host's loopback is not the sandbox's.
    let ran = run(format!(
        "{curl} -sS --noproxy '*' --max-time 5 http://127.0.0.1:{p}/"
    ));
    assert_ne!(
        ran.exit_code,
        0,
        "a direct connection went through: {}",
        String::from_utf8_lossy(&ran.stdout)
    );

    let log = state.path().join("audit.jsonl");
    assert!(audit::verify(&log).unwrap().is_intact());
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<audit::Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let conns: Vec<_> = records
        .iter()
        .filter_map(|r| r.connection.as_ref())
        .filter(|c| c.event == "close")
        .collect();
    assert_eq!(conns.len(), 103, "{text}");
    // Each of the 100 parallel connections has its decision (below) and its close, with the
    // bytes it moved; so do the first and the SOCKS one.
    let served = conns
        .iter()
        .filter(|c| c.host == "web.test" && c.bytes_down > 0)
        .count();
    assert_eq!(served, 102, "{text}");
    let decided = records
        .iter()
        .filter(|r| r.tool == "network" && r.connection.is_none() && r.decision == Action::Allow)
        .count();
    assert_eq!(
        decided, 102,
        "the first, 100 in parallel, the SOCKS one: {text}"
    );
    assert!(conns
        .iter()
        .any(|c| c.host == "web.test" && c.protocol == "http" && c.bytes_down > 0));
    assert!(conns
        .iter()
        .any(|c| c.host == "web.test" && c.protocol == "socks5" && c.bytes_down > 0));
    assert!(records.iter().any(|r| r.tool == "network"
        && r.decision == Action::Deny
        && r.keys[0][1] == format!("other.test:{p}")));
}

/// The end of a run's lines: one per refused destination, with what it resolved to, how
/// often, why and the `[network]` line that would allow it (none after a deny entry); control
/// characters a client sent in a host are made visible; a warning when records were lost.
#[test]
fn the_end_of_a_run_names_each_refused_destination() {
    use cordon_gate::network::report_lines;
    use cordon_netproxy::{Refused, Report};
    let lines = report_lines(&Report {
        refused: vec![
            Refused {
                host: "index.example.org".into(),
                port: 443,
                addr: None,
                reason: "refused by the policy: no [network] entry names this host and port".into(),
                allow: "[network] allow = [\"index.example.org:443\"]".into(),
                count: 5,
            },
            Refused {
                host: "db.example.org".into(),
                port: 5432,
                addr: Some("10.0.0.7".parse().unwrap()),
                reason: "address 10.0.0.7 refused: it is an internal address".into(),
                allow: "[network.hosts] \"db.example.org\" = \"10.0.0.7\"".into(),
                count: 1,
            },
            Refused {
                host: "bad\u{1b}[2J.example".into(),
                port: 80,
                addr: None,
                reason: "refused by the policy: denied".into(),
                allow: String::new(),
                count: 1,
            },
        ],
        unrecorded: 2,
    });
    assert_eq!(
        lines[0],
        "cordon: index.example.org:443, 5 connections: refused by the policy: no [network] entry \
         names this host and port; to allow it: [network] allow = [\"index.example.org:443\"]"
    );
    assert_eq!(
        lines[1],
        "cordon: db.example.org:5432 (10.0.0.7): address 10.0.0.7 refused: it is an internal \
         address; to allow it: [network.hosts] \"db.example.org\" = \"10.0.0.7\""
    );
    assert!(!lines[2].contains('\u{1b}'), "{}", lines[2]);
    assert!(
        lines[2].ends_with(": refused by the policy: denied"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("cordon: warning: 2 connection records"),
        "{}",
        lines[3]
    );
    assert_eq!(lines.len(), 4);
}

/// Every variable the proxy sets for the command is one the run removes from what the command
/// inherits: none of the operator's (a `NO_PROXY` for loopback, an old proxy) is left beside
/// cordon's, and there is no `NO_PROXY` among cordon's.
#[test]
fn the_proxy_variables_the_command_gets_replace_every_inherited_one() {
    for (k, _) in cordon_netproxy::child_env(3128) {
        assert!(cordon_ossandbox::is_proxy_variable(&k), "{k}");
        assert!(!k.to_ascii_lowercase().contains("no"), "{k}");
    }
}

/// A connection the policy allows: its decision's record and its open record are made durable
/// by ONE sync, before the client hears of the connection (two in a row would double the time
/// to its first byte). The log is on the real disk (a tmpfs may keep no attributes, and then
/// every record is synced alone).
/// A gate in `state` whose policy allows only `echo.test` (at 127.0.0.1) and keeps its audit
/// log at `log`, and its proxy serving on a loopback port: the gate, the proxy, its address.
fn echo_only_proxy(state: &Path, log: &Path) -> (Arc<Gate>, ProxyHandle, SocketAddr) {
    std::fs::write(
        state.join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"ro\"\n\
             [approval]\naudit_log = \"{}\"\n\
             [network]\ndefault = \"deny\"\nallow = [\"echo.test\"]\n\
             [network.hosts]\n\"echo.test\" = \"127.0.0.1\"\n",
            log.display()
        ),
    )
    .unwrap();
    let mut o = Options::new(state.to_path_buf());
    o.policy = Some(state.join("cordon.toml"));
    let gate = Arc::new(Gate::open(o).unwrap());
    let proxy = start_proxy(gate.clone(), Script::default()).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    proxy.serve(l).unwrap();
    (gate, proxy, addr)
}

#[test]
fn a_connection_the_policy_allows_costs_one_sync_before_its_first_byte() {
    let state =
        tempfile::tempdir_in(std::env::var_os("BENCH_DIR").unwrap_or("/var/tmp".into())).unwrap();
    let echo = echo_server();
    let (gate, proxy, addr) = echo_only_proxy(state.path(), &state.path().join("audit.jsonl"));
    let log = state.path().join("audit.jsonl");
    let lines = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };

    // Both connections stay open until the end: no close record syncs meanwhile.
    let s0 = gate.audit_syncs().unwrap();
    let (code, mut socks5) = socks(addr, "echo.test", echo.port());
    assert_eq!(code, 0);
    let s1 = gate.audit_syncs().unwrap();
    assert_eq!(lines(), 2, "the decision and the open record");
    assert_eq!(
        s1 - s0,
        1,
        "SOCKS5: syncs before the client heard of the connection"
    );

    let mut c = TcpStream::connect(addr).unwrap();
    write!(
        c,
        "CONNECT echo.test:{0} HTTP/1.1\r\nhost: echo.test:{0}\r\n\r\n",
        echo.port()
    )
    .unwrap();
    let mut reply = [0u8; 12];
    c.read_exact(&mut reply).unwrap();
    assert_eq!(
        &reply,
        b"HTTP/1.1 200",
        "{}",
        String::from_utf8_lossy(&reply)
    );
    let s2 = gate.audit_syncs().unwrap();
    assert_eq!(lines(), 4);
    assert_eq!(
        s2 - s1,
        1,
        "HTTP CONNECT: syncs before the client heard of it"
    );

    socks5.write_all(b"ping").unwrap();
    let mut back = [0u8; 4];
    socks5.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"ping");
    drop((socks5, c));
    proxy.shutdown();
    assert!(audit::verify(&log).unwrap().is_intact());
    let records: Vec<audit::Record> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 6, "2 decisions, 2 opens, 2 closes");
    assert!(records[0].by != audit::By::Connection && records[0].decision == Action::Allow);
    assert_eq!(records[1].connection.as_ref().unwrap().event, "open");
}

/// The audit log deleted under a live proxy (`rm audit.jsonl*`): the next connection's
/// decision and open record go into a new log at the name, which says what happened; the
/// connection is served, and nothing is recorded into the deleted file only.
#[test]
fn a_log_deleted_under_a_live_proxy_is_followed_and_said() {
    let state = tempfile::tempdir().unwrap();
    let echo = echo_server();
    std::fs::create_dir(state.path().join("log")).unwrap();
    let (_gate, proxy, addr) = echo_only_proxy(state.path(), &state.path().join("log/audit.jsonl"));
    let log = state.path().join("log/audit.jsonl");
    let ping = |s: &mut TcpStream| {
        s.write_all(b"x").unwrap();
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
    };

    let (code, mut first) = socks(addr, "echo.test", echo.port());
    assert_eq!(code, 0);
    ping(&mut first);
    for f in std::fs::read_dir(state.path().join("log")).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let (code, mut second) = socks(addr, "echo.test", echo.port());
    assert_eq!(code, 0, "served, recorded in the new log");
    ping(&mut second);
    drop((first, second));
    proxy.shutdown();

    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<audit::Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        records[0]
            .repair
            .as_deref()
            .is_some_and(|r| r.contains("had been deleted while a writer")),
        "{text}"
    );
    assert_eq!(records[0].seq, 0, "{text}");
    assert_eq!(
        records[0].tool, "network",
        "the second decision first: {text}"
    );
    assert_eq!(
        records[1].connection.as_ref().unwrap().event,
        "open",
        "{text}"
    );
    // Both connections' closes follow (the first one's decision and open went with the old file).
    let closes = records
        .iter()
        .filter(|r| r.connection.as_ref().is_some_and(|c| c.event == "close"))
        .count();
    assert_eq!(closes, 2, "{text}");
    assert!(audit::verify(&log).unwrap().is_intact());
}

/// A full disk under a live proxy (a 1 MiB tmpfs mounted by the test; needs root, as CI
/// runs): a connection whose decision cannot be made durable is refused as the audit log's
/// failure — 503, "could not be recorded in the audit log (… No space left on device) …;
/// free space or fix the log, then retry", SOCKS5 "general failure" — never as the policy's
/// ("refused by the policy", 403, "not allowed by ruleset"), with no `[network]` line offered
/// that would not help. The log holds no allow for it and verifies intact.
#[test]
fn a_connection_refused_on_a_full_disk_is_the_audit_logs_refusal_not_the_policys() {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test mounts a small tmpfs and needs root (CI runs as root)"
    );
    let state = tempfile::tempdir().unwrap();
    let mnt = state.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "cordon-proxy-full-test"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(ok.success(), "mount tmpfs");
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(mnt.clone());
    let echo = echo_server();
    let (_gate, proxy, addr) = echo_only_proxy(state.path(), &mnt.join("audit.jsonl"));
    let log = mnt.join("audit.jsonl");
    // One connection while there is room: the log exists, with its chain.
    let (code, first) = socks(addr, "echo.test", echo.port());
    assert_eq!(code, 0);
    drop(first);

    // Fill the disk to the last byte.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.write_all(&[0u8; 512]);
    let _ = f.sync_all();
    drop(f);

    let connect = || {
        let mut c = TcpStream::connect(addr).unwrap();
        write!(
            c,
            "CONNECT echo.test:{0} HTTP/1.1\r\nhost: echo.test:{0}\r\n\r\n",
            echo.port()
        )
        .unwrap();
        // The head of the answer only: a tunnel that opened stays open.
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && c.read(&mut b).unwrap() == 1 {
            head.push(b[0]);
        }
        let mut text = String::from_utf8_lossy(&head).into_owned();
        if !text.starts_with("HTTP/1.1 200") {
            let mut body = String::new();
            let _ = c.read_to_string(&mut body);
            text.push_str(&body);
        }
        text
    };
    // What little room the log's last page had is used up within a few records.
    let refused = (0..40)
        .map(|_| connect())
        .find(|t| !t.starts_with("HTTP/1.1 200"))
        .expect("the disk never refused a record: the test tested nothing");
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.contains("could not be recorded in the audit log")
            && refused.contains("No space left on device")
            && refused.contains("free space or fix the log, then retry"),
        "{refused}"
    );
    assert!(!refused.contains("refused by the policy"), "{refused}");
    assert!(!refused.contains("[network] allow"), "{refused}");
    // SOCKS5: a general failure (1), not "not allowed by ruleset" (2).
    assert_eq!(socks(addr, "echo.test", echo.port()).0, 1);
    // The run's end names it as the log's failure too, with no `[network]` line to add.
    let report = proxy.shutdown();
    let lines = cordon_gate::network::report_lines(&report).join("\n");
    assert!(
        lines.contains("could not be recorded in the audit log")
            && !lines.contains("refused by the policy")
            && !lines.contains("to allow it"),
        "{lines}"
    );

    std::fs::remove_file(&filler).unwrap();
    assert!(audit::verify(&log).unwrap().is_intact());
}

/// The proxy's records have one opening of the audit log: the engine's, made with the gate.
/// A gate that records nothing (`cordon check`'s, which only decides) starts no proxy,
/// saying why (before: the proxy opened the log a second way, by its path — not beneath the
/// writable root, without the gate's client — and for this gate, whose log path is empty,
/// failed with an error that named no cause).
#[test]
fn a_gate_that_records_nothing_starts_no_proxy() {
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        state.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"ro\"\n\
             [approval]\naudit_log = \"{}/audit.jsonl\"\n\
             [network]\ndefault = \"deny\"\n",
            state.path().display()
        ),
    )
    .unwrap();
    let mut o = Options::new(state.path().to_path_buf());
    o.policy = Some(state.path().join("cordon.toml"));
    o.front_end = cordon_gate::FrontEnd::Check;
    let gate = Arc::new(Gate::open(o).unwrap());
    let e = match start_proxy(gate, Script::default()) {
        Ok(_) => panic!("a proxy started for a gate that records nothing"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("records nothing"), "{e}");
    assert!(
        !state.path().join("audit.jsonl").exists(),
        "the log was opened beside the gate's"
    );
}
