//! Issue 12, classes 6, 9, 10 and 11, end to end (the real `cordon` binary on the real kernel,
//! bwrap and files): what a sandbox hands over when it is started in the wrong place, what it
//! leaves of the host's devices and of the audit log, what happens as root without
//! bubblewrap, and which locale names pass.
//!
//! * Dangerous roots (class 6): the embedded default policy makes the current directory
//!   writable; run from `/proc`, `/etc`, `/usr/share`, `/run`, `/home`, … (also through a
//!   symlink or a bind mount) it must be refused (125) before anything runs; a `/var/tmp`
//!   workspace stays allowed. In bwrap `/proc/sys` and `/proc/sysrq-trigger` are read-only
//!   mounts.
//! * Devices (class 9): the host's `/dev/null`, `zero`, … keep their mode and times whatever
//!   the command does on bwrap (Landlock as root cannot: pinned as its documented gap).
//! * The audit log (class 9): a log kept in the workspace is invisible to the command, which
//!   cannot hold its lock either; a lock held elsewhere makes cordon give up with 125, never
//!   hang.
//! * Root without bubblewrap (class 10): `auto` refuses, `--backend landlock` accepts. bwrap
//!   is hidden in a private mount namespace (`unshare -m`, `/dev/null` bound over
//!   `/usr/bin/bwrap`): the host's `/usr/bin` is never touched.
//! * Locale variables (class 11): only valid locale names reach the command, and `TZ` only
//!   as a zone name, never a file.
//!
//! Each test runs as root and as the unprivileged `cordon-test` user (created when missing),
//! on the backends it concerns.

// Landlock, bubblewrap and mount namespaces are Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{cordon_beside, describe, is_root, test_user, BinDir};
use std::ffi::OsString;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Root,
    User,
}

fn ids(mode: Mode) -> Option<(u32, u32)> {
    assert!(
        is_root(),
        "these tests switch users and mount namespaces: run them as root (CI does)"
    );
    match mode {
        Mode::Root => None,
        Mode::User => Some(test_user()),
    }
}

struct Bins {
    dir: PathBuf,
    cordon: PathBuf,
    attack: PathBuf,
}

static BINS: OnceLock<Bins> = OnceLock::new();

/// `cordon` and `cordon-attack`, copied where the unprivileged user can run them.
fn bins() -> &'static Bins {
    BINS.get_or_init(|| {
        let attack_src = PathBuf::from(env!("CARGO_BIN_EXE_cordon-attack"));
        let dir = BinDir::new("roots-bin");
        Bins {
            cordon: dir.copy(&cordon_beside(&attack_src), "cordon", 0o755),
            attack: dir.copy(&attack_src, "cordon-attack", 0o755),
            dir: dir.path().to_path_buf(),
        }
    })
}

/// A scratch directory under /tmp: `ws/` (a workspace), `state/` (XDG_STATE_HOME and HOME:
/// the default audit log goes there) and `tmp/` (TMPDIR), owned by the mode's user.
struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    state: PathBuf,
    ids: Option<(u32, u32)>,
}

impl Fixture {
    fn new(mode: Mode) -> Fixture {
        Fixture::new_in(mode, Path::new("/tmp"))
    }

    fn new_in(mode: Mode, parent: &Path) -> Fixture {
        let ids = ids(mode);
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-roots-")
            .tempdir_in(parent)
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        for d in ["ws", "state", "tmp", "policies"] {
            fs::create_dir(root.join(d)).unwrap();
        }
        let fx = Fixture {
            ws: root.join("ws"),
            state: root.join("state"),
            root,
            _tmp: tmp,
            ids,
        };
        fx.chown();
        fx
    }

    fn chown(&self) {
        fn walk(p: &Path, uid: u32, gid: u32) {
            std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
            if fs::symlink_metadata(p).unwrap().is_dir() {
                for e in fs::read_dir(p).unwrap() {
                    walk(&e.unwrap().path(), uid, gid);
                }
            }
        }
        if let Some((uid, gid)) = self.ids {
            for d in ["ws", "state", "tmp"] {
                walk(&self.root.join(d), uid, gid);
            }
        }
    }

    /// The environment a caller of cordon would have, and nothing else.
    fn env(&self, c: &mut Command) {
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .env("HOME", &self.state)
            .env("XDG_STATE_HOME", &self.state)
            .env("TMPDIR", self.root.join("tmp"))
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null());
        let name = if self.ids.is_some() {
            "cordon-test"
        } else {
            "root"
        };
        c.env("USER", name).env("LOGNAME", name);
    }

    /// `cordon ARGS…` in `cwd`, as the mode's user.
    fn cordon(&self, cwd: &Path, args: &[OsString]) -> Command {
        let mut c = Command::new(&bins().cordon);
        c.args(args).current_dir(cwd);
        self.env(&mut c);
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        c
    }

    /// `cordon ARGS…` in `cwd`, in a private mount namespace prepared by the shell commands
    /// `setup` (run as root), then as the mode's user. The host's mounts never change.
    fn cordon_in_mount_ns(&self, setup: &str, cwd: &Path, args: &[OsString]) -> Command {
        let drop = match self.ids {
            Some((uid, gid)) => {
                format!("/usr/bin/setpriv --reuid={uid} --regid={gid} --clear-groups --")
            }
            None => String::new(),
        };
        let mut c = Command::new("/usr/bin/unshare");
        c.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
            .arg(format!("set -e; {setup}; cd \"$0\"; exec {drop} \"$@\""))
            .arg(cwd)
            .arg(&bins().cordon)
            .args(args);
        self.env(&mut c);
        c
    }

    fn policy(&self, name: &str, text: &str) -> PathBuf {
        let p = self.root.join("policies").join(name);
        fs::write(&p, text).unwrap();
        p
    }
}

/// A policy with `root` writable, the test binaries read-only, on `backend`.
fn policy_text(backend: &str, root: &Path) -> String {
    format!(
        "version = 1\n[sandbox]\nbackend = \"{backend}\"\nrequire_os_sandbox = {}\n\
         [sandbox.paths.ws]\nroot = \"{}\"\nmode = \"rw\"\n\
         [sandbox.paths.bin]\nroot = \"{}\"\n[shell]\ndefault = \"allow\"\n",
        backend != "none",
        root.display(),
        bins().dir.display()
    )
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// `exec [--backend B] [--policy P] -- ARGV…`.
fn exec_args(backend: Option<&str>, policy: Option<&Path>, argv: &[&str]) -> Vec<OsString> {
    let mut v = os(&["exec"]);
    if let Some(b) = backend {
        v.extend(os(&["--backend", b]));
    }
    if let Some(p) = policy {
        v.push("--policy".into());
        v.push(p.into());
    }
    v.push("--".into());
    v.extend(os(argv));
    v
}

/// Spawns, waits (killing the process after a generous bound, so a hang fails instead of
/// blocking the suite) and collects output.
fn run(mut c: Command) -> Output {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", c.get_program()));
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(120)).is_err() {
            // SAFETY: kill takes integers only. The watchdog fires only while the main thread
            // still waits on the child, so `pid` is our own unreaped child and cannot have been
            // reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let out = child.wait_with_output().expect("wait");
    let _ = tx.send(());
    watchdog.join().unwrap();
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Refused by cordon itself: exit 125, one `cordon: ` line on stderr containing every `want`,
/// and nothing from the command.
fn assert_refused(out: &Output, want: &[&str], what: &str) {
    let err = stderr(out);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("cordon: ")).collect();
    assert!(
        out.status.code() == Some(125) && lines.len() == 1 && out.stdout.is_empty(),
        "{what}: must be refused with 125 and one `cordon: ` line\n{}",
        describe(out)
    );
    for w in want {
        assert!(
            lines[0].contains(w),
            "{what}: {w:?} missing\n{}",
            describe(out)
        );
    }
}

macro_rules! modes {
    ($($f:ident,)*) => {
        /// With cordon running as root.
        mod as_root {
            $( #[test] fn $f() { super::$f(super::Mode::Root); } )*
        }
        /// With cordon running as the unprivileged `cordon-test` user.
        mod as_user {
            $( #[test] fn $f() { super::$f(super::Mode::User); } )*
        }
    };
}

modes! {
    dangerous_roots_are_refused,
    dangerous_roots_are_refused_through_a_bind_mount,
    var_tmp_workspace_is_allowed,
    proc_sys_is_read_only_in_bwrap,
    device_nodes_keep_the_host_metadata,
    audit_log_in_the_workspace_is_invisible,
    audit_lock_cannot_be_held_by_the_command,
    audit_lock_held_elsewhere_is_a_refusal_not_a_hang,
    root_without_bwrap,
    only_valid_locale_names_pass,
    tz_naming_a_file_does_not_pass,
    a_sessions_directory_is_not_an_audit_log_place,
}

// ---------------------------------------------------------------------------------------------
// class 6: dangerous roots

/// Writes (and removes) a file in the current directory: proof the directory was writable.
const WRITE_CWD: &str =
    "d=.cordon-e2e-probe-$$; mkdir \"$d\" && rmdir \"$d\" && echo \"ESCAPED: wrote in $PWD\"";

fn dangerous_roots_are_refused(mode: Mode) {
    let fx = Fixture::new(mode);
    let attack = bins().attack.to_str().unwrap().to_string();
    // (cwd, the system directory the refusal must name)
    let mut places = vec![
        ("/proc", "/proc"),
        ("/proc/sys/kernel", "/proc"),
        ("/etc", "/etc"),
        ("/usr/share", "/usr"),
        ("/run", "/run"),
        ("/var/run", "/run"), // a symlink to /run
        ("/var/lib", "/var"),
        ("/home", "/home"),
        ("/sys/kernel", "/sys"),
        ("/dev/shm", "/dev"),
    ];
    if mode == Mode::Root {
        places.push(("/root", "/root")); // mode 0700: the user cannot even enter it
    }
    for backend in [None, Some("landlock"), Some("bwrap")] {
        for (cwd, system) in &places {
            // /proc: the attack itself, under a policy naming the directory (and the test
            // binaries); elsewhere the embedded default policy run from there.
            let named = fx.policy(
                "named.toml",
                &policy_text(backend.unwrap_or("auto"), Path::new(cwd)),
            );
            let (policy, argv): (Option<&Path>, Vec<&str>) = if cwd.starts_with("/proc") {
                (Some(&named), vec![&attack, "proc-sys-write"])
            } else {
                (None, vec!["/bin/sh", "-c", WRITE_CWD])
            };
            let out = run(fx.cordon(Path::new(cwd), &exec_args(backend, policy, &argv)));
            let real = fs::canonicalize(cwd).unwrap();
            assert_refused(
                &out,
                &[
                    &format!("writable root {}", real.display()),
                    &format!("system directory {system}"),
                    "run cordon from a project directory",
                ],
                &format!("[{mode:?}] cordon exec from {cwd} (backend {backend:?})"),
            );
        }
    }
    // `/` holds them all: the policy itself refuses it.
    let out = run(fx.cordon(Path::new("/"), &exec_args(None, None, &["/bin/true"])));
    assert_refused(&out, &["root `/` is read-write"], "cordon exec from /");
    // `cordon profile` describes no sandbox that hands over the system either.
    for format in ["bwrap", "landlock"] {
        let out = run(fx.cordon(Path::new("/proc"), &os(&["profile", "--format", format])));
        assert_refused(
            &out,
            &["writable root /proc"],
            &format!("cordon profile --format {format} from /proc"),
        );
    }
}

fn dangerous_roots_are_refused_through_a_bind_mount(mode: Mode) {
    let fx = Fixture::new(mode);
    // /etc shown at a harmless-looking path; /usr/share mounted inside a workspace.
    let shown = fx.root.join("etc-view");
    fs::create_dir(&shown).unwrap();
    fs::create_dir(fx.ws.join("share")).unwrap();
    fx.chown();
    for backend in ["landlock", "bwrap"] {
        let setup = format!("mount --bind /etc '{}'", shown.display());
        let out = run(fx.cordon_in_mount_ns(
            &setup,
            &shown,
            &exec_args(Some(backend), None, &["/bin/sh", "-c", WRITE_CWD]),
        ));
        assert_refused(
            &out,
            &[
                &format!("writable root {}", shown.display()),
                "system directory /etc",
                "bind mount",
            ],
            &format!("[{mode:?}] from a bind mount of /etc ({backend})"),
        );
        let setup = format!("mount --bind /usr/share '{}/share'", fx.ws.display());
        let out = run(fx.cordon_in_mount_ns(
            &setup,
            &fx.ws,
            &exec_args(
                Some(backend),
                None,
                &[
                    "/bin/sh",
                    "-c",
                    "cd share && d=.cordon-e2e-$$ && mkdir $d && rmdir $d && echo ESCAPED",
                ],
            ),
        ));
        assert_refused(
            &out,
            &["system directory /usr", "holds the mount"],
            &format!("[{mode:?}] a workspace holding a bind mount of /usr/share ({backend})"),
        );
    }
}

fn var_tmp_workspace_is_allowed(mode: Mode) {
    let fx = Fixture::new_in(mode, Path::new("/var/tmp"));
    for backend in ["landlock", "bwrap"] {
        let out = run(fx.cordon(
            &fx.ws,
            &exec_args(
                Some(backend),
                None,
                &["/bin/sh", "-c", "echo ok > made.txt"],
            ),
        ));
        assert_eq!(out.status.code(), Some(0), "{backend}: {}", describe(&out));
        assert_eq!(fs::read_to_string(fx.ws.join("made.txt")).unwrap(), "ok\n");
        fs::remove_file(fx.ws.join("made.txt")).unwrap();
    }
}

/// bwrap as root covers only what its own check thinks writable (`/proc/sys` escapes that
/// check); cordon binds the kernel's writable /proc entries read-only itself.
fn proc_sys_is_read_only_in_bwrap(mode: Mode) {
    let fx = Fixture::new(mode);
    let out = run(fx.cordon(
        &fx.ws,
        &exec_args(Some("bwrap"), None, &["/bin/cat", "/proc/self/mountinfo"]),
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    let mut want = vec!["/proc/sys"];
    if Path::new("/proc/sysrq-trigger").exists() {
        want.push("/proc/sysrq-trigger");
    }
    for point in want {
        let read_only = text.lines().any(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            f.len() > 5 && f[4] == point && f[5].split(',').any(|o| o == "ro")
        });
        assert!(
            read_only,
            "[{mode:?}] {point} is not a read-only mount inside bwrap\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// class 9: devices

const DEVICE_NODES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// `name=DEV:INO,…` of the host's device nodes, and their ctimes.
fn host_nodes() -> (String, Vec<(i64, i64)>) {
    let mut ids = Vec::new();
    let mut ctimes = Vec::new();
    for n in DEVICE_NODES {
        let m = fs::metadata(format!("/dev/{n}")).unwrap();
        ids.push(format!("{n}={}:{}", m.dev(), m.ino()));
        ctimes.push((m.ctime(), m.ctime_nsec()));
    }
    (ids.join(","), ctimes)
}

/// The root variant changes the host's nodes on purpose (its Landlock and unconfined controls);
/// the user variant, run in parallel, would see that change as its own escape. One at a time.
static HOST_NODES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn device_nodes_keep_the_host_metadata(mode: Mode) {
    let _one_at_a_time = HOST_NODES.lock().unwrap_or_else(|e| e.into_inner());
    let fx = Fixture::new(mode);
    let attack = bins().attack.to_str().unwrap().to_string();
    let dev_attack = |backend: &str| {
        let (ids, before) = host_nodes();
        let policy = fx.policy(&format!("{backend}.toml"), &policy_text(backend, &fx.ws));
        let mut argv = vec![attack.as_str(), "dev-node-metadata", "--host-nodes", &ids];
        if backend == "bwrap" {
            argv.extend(["--backend", "bwrap"]);
        }
        let out = run(fx.cordon(&fx.ws, &exec_args(None, Some(&policy), &argv)));
        let (_, after) = host_nodes();
        (out, before != after)
    };
    let (out, changed) = dev_attack("bwrap");
    assert!(
        stdout(&out).starts_with("BLOCKED: ") && !changed,
        "[{mode:?}] bwrap: the host's device nodes were reached (ctime changed: {changed})\n{}",
        describe(&out)
    );
    // The devices still work.
    let policy = fx.policy("legit.toml", &policy_text("bwrap", &fx.ws));
    let out = run(fx.cordon(
        &fx.ws,
        &exec_args(
            None,
            Some(&policy),
            &[&attack, "legit-dev", "--backend", "bwrap"],
        ),
    ));
    assert!(stdout(&out).starts_with("OK: "), "{}", describe(&out));
    match mode {
        Mode::Root => {
            // Landlock has no right for metadata, but its init makes the command's mount
            // tree read-only (the nodes work, their modes, owners and times cannot change).
            let (out, changed) = dev_attack("landlock");
            assert!(
                stdout(&out).starts_with("BLOCKED: ") && !changed,
                "[{mode:?}] landlock: the host's device nodes were reached (ctime changed: {changed})\n{}",
                describe(&out)
            );
            // The control: unconfined, the attack reaches the host's nodes (the ctime check
            // above can fail).
            let (out, changed) = dev_attack("none");
            assert!(
                stdout(&out).starts_with("ESCAPED: ") && changed,
                "{}",
                describe(&out)
            );
        }
        Mode::User => {
            // Not the owner: the kernel refuses, on any backend.
            let (out, changed) = dev_attack("landlock");
            assert!(
                stdout(&out).starts_with("BLOCKED: ") && !changed,
                "{}",
                describe(&out)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// class 9: the audit log

/// A bwrap policy whose audit log is `ws/LOG`.
fn audited(fx: &Fixture, log: &str) -> PathBuf {
    fx.policy(
        &format!("audited-{}.toml", log.replace('/', "-")),
        &format!(
            "version = 1\n[sandbox]\nbackend = \"bwrap\"\nrequire_os_sandbox = true\n\
             [sandbox.paths.ws]\nroot = \"../ws\"\nmode = \"rw\"\n[shell]\ndefault = \"allow\"\n\
             [approval]\naudit_log = \"../ws/{log}\"\n"
        ),
    )
}

fn audit_log_in_the_workspace_is_invisible(mode: Mode) {
    for log in [".cordon/audit.jsonl", "audit.jsonl"] {
        let fx = Fixture::new(mode);
        let policy = audited(&fx, log);
        let marker = "cordon-e2e-earlier-command-marker";
        let out = run(fx.cordon(
            &fx.ws,
            &exec_args(None, Some(&policy), &["/bin/echo", marker]),
        ));
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let script = format!(
            "cat {log} {log}.head {log}.lock; ls -A $(dirname {log}); grep -r {marker} . ; true"
        );
        let out = run(fx.cordon(
            &fx.ws,
            &exec_args(None, Some(&policy), &["/bin/sh", "-c", &script]),
        ));
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let seen = stdout(&out);
        assert!(
            !seen.contains(marker) && !seen.contains("\"seq\""),
            "[{mode:?}] the command read the audit log {log}\n{}",
            describe(&out)
        );
        if log.contains('/') {
            assert!(
                !seen.contains("audit.jsonl"),
                "[{mode:?}] the log's directory is visible\n{}",
                describe(&out)
            );
        }
    }
}

/// A command that takes a shared lock on every file of the log it can open and keeps it
/// (`locked NAME` for each, in a background `sleep` that holds the descriptor), says `done`,
/// and stays alive (the sandbox ends with it).
const HOLD_LOCKS: &str =
    "for f in .cordon/audit.jsonl .cordon/audit.jsonl.head .cordon/audit.jsonl.lock; do \
    ( flock -s -n 3 && echo \"locked $f\" && { sleep 600 & } ) 3<\"$f\" 2>/dev/null; done; \
    echo done; sleep 600";

fn audit_lock_cannot_be_held_by_the_command(mode: Mode) {
    let fx = Fixture::new(mode);
    let policy = audited(&fx, ".cordon/audit.jsonl");
    let out = run(fx.cordon(&fx.ws, &exec_args(None, Some(&policy), &["/bin/true"])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let mut holder = fx.cordon(
        &fx.ws,
        &exec_args(None, Some(&policy), &["/bin/sh", "-c", HOLD_LOCKS]),
    );
    holder.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut holder = holder.spawn().unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    let mut locked = Vec::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        if l == "done" {
            break;
        }
        locked.push(l);
    }
    // Whatever the command holds, the next run records its decision and runs.
    let out = run(fx.cordon(&fx.ws, &exec_args(None, Some(&policy), &["/bin/true"])));
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(
        locked.is_empty(),
        "[{mode:?}] the command could lock the audit log's files: {locked:?}"
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

fn audit_lock_held_elsewhere_is_a_refusal_not_a_hang(mode: Mode) {
    let fx = Fixture::new(mode);
    let policy = audited(&fx, ".cordon/audit.jsonl");
    let out = run(fx.cordon(&fx.ws, &exec_args(None, Some(&policy), &["/bin/true"])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let lock = fs::File::open(fx.ws.join(".cordon/audit.jsonl.lock"))
        .expect("the writer keeps its lock in FILE.lock");
    // SAFETY: flock takes integers only; `lock` stays open while the lock is needed.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = run(fx.cordon(
        &fx.ws,
        &exec_args(None, Some(&policy), &["/bin/sh", "-c", "echo ran"]),
    ));
    drop(lock);
    assert_refused(
        &out,
        &["audit log", "lock"],
        &format!("[{mode:?}] a run while the log's lock is held"),
    );
    // A lock on the log itself (what a command could take, where it can open the log) no
    // longer stops anyone.
    let log = fs::File::open(fx.ws.join(".cordon/audit.jsonl")).unwrap();
    // SAFETY: flock takes integers only; `log` stays open while the lock is needed.
    assert_eq!(unsafe { libc::flock(log.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = run(fx.cordon(&fx.ws, &exec_args(None, Some(&policy), &["/bin/true"])));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

// ---------------------------------------------------------------------------------------------
// class 10: root without bubblewrap

fn root_without_bwrap(mode: Mode) {
    let fx = Fixture::new(mode);
    let hide = "mount --bind /dev/null /usr/bin/bwrap";
    let marker = fx.ws.join("ran");
    // In a script: the write is what the kernel must stop, not the analyser.
    fs::write(
        fx.ws.join("try.sh"),
        "touch ran\nchmod 755 /usr/bin || true\n",
    )
    .unwrap();
    let touch = ["/bin/sh", "try.sh"];
    // Where the command's own mount namespace can be made, root's auto is Landlock with its
    // init's read-only mount tree: it runs, and a system directory's mode stays out of reach.
    let out = run(fx.cordon_in_mount_ns(hide, &fx.ws, &exec_args(None, None, &touch)));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(marker.exists());
    if mode == Mode::Root {
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("Read-only file system"),
            "{}",
            describe(&out)
        );
    }
    fs::remove_file(&marker).unwrap();
    // Where it cannot (user.max_mnt_namespaces reads 0 here, as cordon's cheap probe sees
    // it), root's auto has nothing to keep the system's files with.
    let hide = format!(
        "{hide}; echo 0 > {zero}; mount --bind {zero} /proc/sys/user/max_mnt_namespaces",
        zero = fx.root.join("zero").display()
    );
    let hide = hide.as_str();
    let out = run(fx.cordon_in_mount_ns(hide, &fx.ws, &exec_args(None, None, &touch)));
    match mode {
        Mode::Root => {
            assert_refused(
                &out,
                &["running as root", "`bubblewrap`", "--backend landlock"],
                "auto as root without bwrap",
            );
            assert!(!marker.exists());
            // Named, the weaker backend runs.
            let out = run(fx.cordon_in_mount_ns(
                hide,
                &fx.ws,
                &exec_args(Some("landlock"), None, &touch),
            ));
            assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
            assert!(marker.exists());
            // doctor says what auto does.
            let out = run(fx.cordon_in_mount_ns(hide, &fx.ws, &os(&["doctor"])));
            let auto = stdout(&out)
                .lines()
                .find(|l| l.trim_start().starts_with("auto"))
                .unwrap_or_default()
                .to_string();
            assert!(
                auto.contains("refused") && auto.contains("--backend landlock"),
                "{}",
                describe(&out)
            );
        }
        Mode::User => {
            // A user's auto is Landlock, with or without bwrap (or its own namespace).
            assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
            assert!(marker.exists());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// class 11: locale names

fn only_valid_locale_names_pass(mode: Mode) {
    let fx = Fixture::new(mode);
    for backend in ["landlock", "bwrap"] {
        let mut c = fx.cordon(&fx.ws, &exec_args(Some(backend), None, &["/usr/bin/env"]));
        c.env("LANG", "C.UTF-8")
            .env("LC_ALL", "/tmp/cordon-e2e-locale")
            .env("LC_MESSAGES", "../../ws/locale")
            .env("LC_TIME", "en_US.UTF-8/x")
            .env("LC_CTYPE", "C.UTF-8")
            .env("LANGUAGE", "de_DE:/tmp/x");
        let out = run(c);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let env = stdout(&out);
        let locale: Vec<&str> = env
            .lines()
            .filter(|l| l.starts_with("LC_") || l.starts_with("LANG"))
            .collect();
        assert_eq!(
            locale,
            ["LANG=C.UTF-8", "LC_CTYPE=C.UTF-8"],
            "[{mode:?}] {backend}\n{}",
            describe(&out)
        );
    }
}

/// `TZ` naming a file makes libc read that file in every program the command starts (glibc
/// loads `TZ`, less a leading `:`, as a tzfile: absolute as written, relative under the zone
/// directory): only zone names and POSIX TZ strings reach the command.
fn tz_naming_a_file_does_not_pass(mode: Mode) {
    let fx = Fixture::new(mode);
    for backend in ["landlock", "bwrap"] {
        for (tz, kept) in [
            ("/etc/shadow", false),
            (":/tmp/cordon-e2e-zone", false),
            ("../../../../tmp/cordon-e2e-zone", false),
            (":Europe/../../../../tmp/x", false),
            ("Europe/Paris", true),
            (":UTC", true),
            ("EST5EDT,M3.2.0/2,M11.1.0", true),
        ] {
            let mut c = fx.cordon(&fx.ws, &exec_args(Some(backend), None, &["/usr/bin/env"]));
            c.env("TZ", tz);
            let out = run(c);
            assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
            let seen: Vec<String> = stdout(&out)
                .lines()
                .filter(|l| l.starts_with("TZ="))
                .map(str::to_string)
                .collect();
            let want: Vec<String> = if kept {
                vec![format!("TZ={tz}")]
            } else {
                Vec::new()
            };
            assert_eq!(
                seen,
                want,
                "[{mode:?}] {backend} TZ={tz}\n{}",
                describe(&out)
            );
        }
    }
}

/// Red-team F4: with HOME in the workspace (and the state and configuration elsewhere), `cordon exec --session`
/// refuses the session store there (the command could forge its grants), and must not leave
/// `~/.local/state/cordon/sessions` behind; nor may a directory holding only sessions, which
/// a sandboxed command can create as well, count as a place of another audit log (whose
/// protection a Landlock run cannot give inside a writable root, so it refuses): either would
/// make every later Landlock run there fail.
fn a_sessions_directory_is_not_an_audit_log_place(mode: Mode) {
    let fx = Fixture::new(mode);
    // `~/.config` (the other default trust-store place) leads out of the workspace, as a
    // dotfiles link would: a trust-store place in a writable root refuses Landlock by itself.
    let dotconfig = fx.root.join("dotconfig");
    fs::create_dir(&dotconfig).unwrap();
    std::os::unix::fs::symlink(&dotconfig, fx.ws.join(".config")).unwrap();
    if let Some((uid, gid)) = fx.ids {
        std::os::unix::fs::chown(&dotconfig, Some(uid), Some(gid)).unwrap();
        std::os::unix::fs::lchown(fx.ws.join(".config"), Some(uid), Some(gid)).unwrap();
    }
    let with_home = |args: &[OsString]| {
        let mut c = fx.cordon(&fx.ws, args);
        c.env("HOME", &fx.ws)
            .env("XDG_CONFIG_HOME", fx.state.join("config"));
        run(c)
    };
    let state = fx.ws.join(".local");
    let mut argv = os(&["exec", "--backend", "landlock", "--session", "s1", "--"]);
    argv.extend(os(&["/bin/true"]));
    let out = with_home(&argv);
    assert_refused(
        &out,
        &["session directory", "writable root"],
        "session store in the workspace",
    );
    assert!(
        !state.exists(),
        "[{mode:?}] the refused session left {} behind\n{}",
        state.display(),
        describe(&out)
    );
    // The sandboxed command makes the directory itself, from a script (on the line the
    // analysis refuses a write to cordon's own place; a script is what it cannot see).
    fs::write(
        fx.ws.join("mk.sh"),
        "/bin/mkdir -p .local/state/cordon/sessions\n",
    )
    .unwrap();
    let out = with_home(&exec_args(Some("landlock"), None, &["/bin/sh", "mk.sh"]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join(".local/state/cordon/sessions").is_dir());
    for backend in ["landlock", "bwrap"] {
        let out = with_home(&exec_args(
            Some(backend),
            None,
            &["/bin/echo", "still-runs"],
        ));
        assert_eq!(
            (out.status.code(), stdout(&out).trim()),
            (Some(0), "still-runs"),
            "[{mode:?}] {backend}: a sessions-only directory refused the next run\n{}",
            describe(&out)
        );
    }
}
