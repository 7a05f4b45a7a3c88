//! `cordon-netrun BACKEND POLICY [--proxy-gone] -- PROG ARGS…`: runs one command under the policy's profile
//! through cordon's OS sandbox API, standing in for cordon's network proxy (issue 15).
//!
//! Under `sandbox.network = "proxy"` the backend (`landlock` or `bwrap`) makes
//! the proxy's listener inside the command's network namespace and hands it over; this
//! program then accepts on it from outside and answers every connection with one line,
//! [`BANNER`], before closing it. That proves the handoff (the command's connection to
//! `127.0.0.1:3128` or `[::1]:3128` arrives here) without a real proxy. When the command is
//! done it prints `proxy-connections: N` to stderr and exits with the command's status (125
//! with one `cordon: ` line when the run could not start). `tests/net_escape.rs` runs it as
//! root and as the unprivileged test user. `--proxy-gone`: the stand-in is gone before the
//! run starts (it never takes the listener), which must refuse the run.
//!
//! Under any other `sandbox.network` no proxy is started; either way the run's network
//! isolation ([`cordon_ossandbox::Ran::network`]) is printed to stderr as `network: …`
//! (issue 25: "deny" without a network namespace where seccomp and Landlock suffice).

#[cfg(target_os = "linux")]
mod netrun {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use cordon_ossandbox::{prepare, Command, Io, Machine, ProxyHandoff, PROXY_PORT};
    use cordon_policy::{Backend, Policy};

    /// What the stand-in proxy answers.
    pub const BANNER: &str = "CORDON-STANDIN-PROXY";

    fn fail(msg: String) -> ! {
        eprintln!("cordon: {msg}");
        std::process::exit(125)
    }

    pub fn main() {
        let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        let proxy_gone = args.get(2).is_some_and(|a| a == "--proxy-gone");
        if proxy_gone {
            args.remove(2);
        }
        if args.len() < 4 || args[2] != "--" {
            fail("usage: cordon-netrun landlock|bwrap POLICY [--proxy-gone] -- PROG ARGS…".into());
        }
        let backend = match args[0].to_str() {
            Some("landlock") => Backend::Landlock,
            Some("bwrap") => Backend::Bwrap,
            _ => fail("the backend is landlock or bwrap".into()),
        };
        let cwd = std::env::current_dir().unwrap_or_else(|e| fail(format!("cwd: {e}")));
        let policy_path = std::path::PathBuf::from(&args[1]);
        let text = std::fs::read_to_string(&policy_path)
            .unwrap_or_else(|e| fail(format!("{}: {e}", policy_path.display())));
        let base = policy_path.parent().unwrap_or(std::path::Path::new("/"));
        let policy = Policy::parse(&text, &policy_path.display().to_string(), base)
            .unwrap_or_else(|e| fail(e.to_string()));
        let prepared =
            prepare(&policy, &Machine::probe(), backend).unwrap_or_else(|e| fail(e.to_string()));
        let proxied = policy.sandbox.network == cordon_policy::Network::Proxy;

        let (tx, rx) = std::sync::mpsc::channel::<std::net::TcpListener>();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        if proxy_gone {
            drop(rx);
        } else {
            std::thread::spawn(move || {
                let Ok(listener) = rx.recv() else { return };
                for conn in listener.incoming() {
                    let Ok(mut conn) = conn else { continue };
                    count.fetch_add(1, Ordering::SeqCst);
                    let _ = writeln!(conn, "{BANNER}");
                }
            });
        }

        let command = Command {
            program: args[3].clone(),
            args: args[4..].to_vec(),
            cwd,
            timeout: Some(std::time::Duration::from_secs(120)),
        };
        let io = Io {
            proxy: proxied.then(|| {
                (
                    ProxyHandoff {
                        port: PROXY_PORT,
                        listener: tx,
                        forwards: Vec::new(),
                    },
                    Vec::new(),
                )
            }),
            ..Io::default()
        };
        // The environment is the sandbox's scrub of this process's (PATH, HOME, a private
        // TMPDIR, …).
        let outcome = prepared.run(command, io).and_then(|ran| {
            eprintln!("network: {}", ran.network);
            ran.exit
        });
        eprintln!("proxy-connections: {}", accepted.load(Ordering::SeqCst));
        match outcome {
            Ok(o) => std::process::exit(o.exit_code()),
            Err(e) => fail(e.to_string()),
        }
    }
}

fn main() {
    #[cfg(target_os = "linux")]
    netrun::main();
    #[cfg(not(target_os = "linux"))]
    {
        eprintln!("cordon: cordon-netrun runs cordon's Linux backends only");
        std::process::exit(125);
    }
}
