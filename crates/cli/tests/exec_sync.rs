//! `cordon exec` makes its decision's record durable while it builds the sandbox, and the
//! command starts only once the record is durable (issue 25, "one sync on the hot path"):
//! with the audit log on a file system whose fsync is slow, the command starts after the sync
//! returned; with one whose fsync fails, the command never runs, and cordon says why.
//!
//! The file system is real: a FUSE pass-through (`exec_sync/syncfs.py`, on mfusepy from
//! `scripts/test-deps.sh`) whose fsync sleeps or answers EIO as its control file says. Mounting
//! it needs root (the suite runs as root; the unprivileged side of the mechanism is
//! `crates/ossandbox/tests/release.rs`, run as `nobody` too).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The FUSE file system, mounted for the test's life; unmounted on drop.
struct SyncFs {
    _dir: tempfile::TempDir,
    mount: PathBuf,
    control: PathBuf,
    server: std::process::Child,
}

impl SyncFs {
    fn mount() -> SyncFs {
        assert!(
            rustix::process::geteuid().is_root(),
            "this test mounts a FUSE file system and must run as root"
        );
        let deps = std::env::var_os("CORDON_TEST_DEPS").unwrap_or("/opt/cordon-test".into());
        let python = Path::new(&deps).join("venv/bin/python");
        let has_mfusepy = std::process::Command::new(&python)
            .args(["-c", "import mfusepy"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            has_mfusepy,
            "{} cannot import mfusepy: run scripts/test-deps.sh",
            python.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("backing");
        let mount = dir.path().join("mnt");
        let control = dir.path().join("control");
        std::fs::create_dir(&backing).unwrap();
        std::fs::create_dir(&mount).unwrap();
        std::fs::write(&control, "").unwrap();
        std::fs::write(dir.path().join("control.log"), "").unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/exec_sync/syncfs.py");
        let server = std::process::Command::new(&python)
            .arg(&script)
            .args([&backing, &mount, &control])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let fs = SyncFs {
            _dir: dir,
            mount,
            control,
            server,
        };
        // Mounted once the mount point's device differs from its parent's.
        let until = Instant::now() + Duration::from_secs(60);
        let dev = |p: &Path| std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(p).unwrap());
        while dev(&fs.mount) == dev(fs.mount.parent().unwrap()) {
            assert!(Instant::now() < until, "the FUSE file system did not mount");
            std::thread::sleep(Duration::from_millis(20));
        }
        fs
    }

    /// `fail`, `slow SECONDS [NAME]`, or "" (sync at once), for the fsyncs from now on.
    fn set(&self, mode: &str) {
        std::fs::write(&self.control, mode).unwrap();
        // Emptied, not removed: the policy names it for the command to read.
        std::fs::write(self.log_path(), "").unwrap();
    }

    fn log_path(&self) -> PathBuf {
        let mut p = self.control.clone().into_os_string();
        p.push(".log");
        p.into()
    }

    /// The fsyncs made since the last `set`: `fsync NAME START END RESULT` each.
    fn syncs(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}

impl Drop for SyncFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.mount)
            .status();
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn workspace(fs: &SyncFs) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("w")).unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        format!(
            "version = 1\n[sandbox.paths.w]\nroot = \"w\"\nmode = \"rw\"\n\
             [sandbox]\nextra_read = [\"{control}.log\"]\n\
             [[shell.rules]]\npattern = \"sh *\"\naction = \"allow\"\n\
             [approval]\naudit_log = \"{log}\"\n",
            control = fs.control.display(),
            log = fs.mount.join("audit.jsonl").display()
        ),
    )
    .unwrap();
    common::trust(d.path());
    d
}

fn exec(d: &Path, backend: &str, line: &str) -> std::process::Output {
    common::command(d)
        .args([
            "exec",
            "--approve-all",
            "--backend",
            backend,
            "--",
            "sh",
            "-c",
            line,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_command_starts_only_once_its_record_is_durable() {
    let fs = SyncFs::mount();
    let d = workspace(&fs);
    let log = format!("{}.log", fs.control.display());
    for backend in ["landlock", "bwrap"] {
        let ran = d.path().join("w/ran");
        // A first call makes the log (and whatever it repairs or starts with).
        fs.set("");
        let o = exec(d.path(), backend, "true");
        assert!(o.status.success(), "{backend}: {}", common::stderr(&o));

        // Slow (the log's syncs only, not the after-run scan's marker beside it): the command
        // finds the decision's sync finished when it starts.
        fs.set("slow 2 audit.jsonl");
        let _ = std::fs::remove_file(&ran);
        let o = exec(d.path(), backend, &format!("cat {log} > w/ran"));
        assert!(o.status.success(), "{backend}: {}", common::stderr(&o));
        // Every sync of the call happened before the command: the decision's record is the
        // last thing the call syncs (a clean, fully confined run records nothing after).
        let seen = std::fs::read_to_string(&ran).unwrap();
        let syncs = fs.syncs();
        assert!(
            syncs.lines().any(|l| l.starts_with("fsync audit.jsonl "))
                && syncs.lines().all(|l| l.ends_with(" ok")),
            "{backend}: {syncs:?}"
        );
        assert_eq!(
            seen, syncs,
            "{backend}: the command started before its record's sync returned"
        );
        // One sync on the hot path (issue 25): only the log's; the after-run scan's marker
        // beside it (LOGDIR/scans/run-*) is written, not synced.
        assert!(
            syncs.lines().all(|l| l.starts_with("fsync audit.jsonl ")),
            "{backend}: a sync beside the log's: {syncs:?}"
        );

        // Failing: nothing runs, and cordon says the record could not be made durable.
        fs.set("fail");
        let _ = std::fs::remove_file(&ran);
        let o = exec(d.path(), backend, "echo ran > w/ran");
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(125), "{backend}: {err}");
        assert!(!ran.exists(), "{backend}: the command ran: {err}");
        assert!(
            fs.syncs().contains(" EIO"),
            "{backend}: no sync failed: {:?}",
            fs.syncs()
        );
        assert!(err.contains("durable"), "{backend}: {err}");
    }
}
