//! issue 24, round 3: a command that opens a thousand tunnels at once through cordon's proxy
//! gets an answer on every one — served, or refused with `503` and the reason — and every one
//! is in the audit log, whatever cordon's open-file limit; none is wrongly refused by policy
//! (cordon out of descriptors for its own audit log) and none is lost.

mod common;
use common::{stderr, stdout, web_server};

/// Opens N tunnels at once through the proxy the command was given (`HTTP_PROXY`), keeps them
/// all open, then reads each one's status line.
const TUNNELS: &str = r#"
n=$1; target=$2
hp=${HTTP_PROXY#http://}
fds=()
for ((i = 0; i < n; i++)); do
  exec {fd}<>"/dev/tcp/${hp%:*}/${hp##*:}" || { echo "connect $i failed"; exit 3; }
  printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$target" "$target" >&"$fd"
  fds+=("$fd")
done
ok=0; busy=0; other=0
for fd in "${fds[@]}"; do
  IFS= read -r -t 300 line <&"$fd" || line="(no answer)"
  case $line in
    "HTTP/1.1 200"*) ok=$((ok + 1)) ;;
    "HTTP/1.1 503"*) busy=$((busy + 1)) ;;
    *) other=$((other + 1)); echo "other: $line" ;;
  esac
done
echo "ok=$ok busy=$busy other=$other"
"#;

/// Runs the thousand tunnels under `cordon exec` started with `ulimit` set as `limits` says;
/// (ok, busy) and the audit log.
fn thousand_tunnels(limits: &str) -> (usize, usize, String) {
    assert!(
        std::path::Path::new("/bin/bash").exists()
            || std::path::Path::new("/usr/bin/bash").exists(),
        "this test runs bash in the sandbox: install it"
    );
    let port = web_server();
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("audit.jsonl");
    std::fs::write(d.path().join("tunnels.sh"), TUNNELS).unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n\
             [shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = \"{}\"\n\
             [network]\nallow = [\"web.test:{port}\"]\n[network.hosts]\n\"web.test\" = \"127.0.0.1\"\n",
            log.display()
        ),
    )
    .unwrap();
    common::trust(d.path());
    let o = std::process::Command::new("bash")
        .current_dir(d.path())
        .args([
            "-c",
            &format!("{limits} && exec \"$0\" exec -- bash tunnels.sh 1000 web.test:{port}"),
        ])
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("XDG_STATE_HOME", common::state_home())
        .env("XDG_CONFIG_HOME", common::config_home())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    let last = out.lines().last().unwrap_or_default().to_string();
    let counts: Vec<usize> = last
        .split(' ')
        .filter_map(|kv| kv.split_once('=')?.1.parse().ok())
        .collect();
    assert_eq!(counts.len(), 3, "{out}");
    assert_eq!(
        counts[2], 0,
        "every tunnel is served or refused as too many: {out}"
    );
    assert_eq!(counts[0] + counts[1], 1000, "{out}");
    let o = common::cordon(d.path(), &["audit", "verify", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    (counts[0], counts[1], std::fs::read_to_string(&log).unwrap())
}

/// The connection records that close a tunnel to web.test (every tunnel ends with one).
fn closes(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains(r#""event":"close""#) && l.contains(r#""host":"web.test""#))
        .collect()
}

/// cordon's open-file limit stuck at 1024 (soft and hard): the proxy serves what fits and
/// refuses the rest with 503, and records all of them.
#[test]
fn at_a_1024_file_limit_every_tunnel_is_answered_and_recorded() {
    let (ok, busy, log) = thousand_tunnels("ulimit -n 1024");
    assert!(ok > 0 && busy > 0, "ok={ok} busy={busy}");
    let closes = closes(&log);
    assert_eq!(closes.len(), 1000, "{log}");
    assert_eq!(
        closes
            .iter()
            .filter(|l| l.contains("too many connections at once"))
            .count(),
        busy
    );
    // No allowed connection was refused for want of a descriptor.
    assert!(!log.contains("Too many open files"), "{log}");
}

/// A soft limit of 1024 under a higher hard one: cordon raises it at start, and all thousand
/// are served.
#[test]
fn cordon_raises_its_soft_file_limit_and_serves_all_thousand() {
    let (ok, busy, log) = thousand_tunnels("ulimit -Sn 1024 && ulimit -Hn 8192");
    assert_eq!((ok, busy), (1000, 0));
    assert_eq!(closes(&log).len(), 1000, "{log}");
}
