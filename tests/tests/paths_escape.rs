//! Paths that change between runs (issue 12, class 2), end to end with the real `cordon`
//! binary: one run replaces a name the policy uses — a root, an `extra_read` path, a protected
//! path or a directory on the way to one — with a symlink, or gives a protected file a second
//! name (a hard link), and the next run must not grant what the name now reaches. Each such
//! next run must refuse (exit 125) before anything runs, naming the link, and leave the target
//! outside untouched.
//!
//! Every case runs as root and as an unprivileged user (`cordon-test`, created when missing;
//! the current user when the suite does not run as root), on each backend the case concerns:
//! a read-only root exists only on bwrap, the others (protected paths and hard links to them
//! included: the Landlock backend's init keeps protected paths read-only with mounts) on both.
//!
//! The planting run is a real `cordon exec` under a policy that does not yet name (or
//! protect) the path, as a project's policy gains entries over time; the hard-link cases also
//! plant from a run under `backend = "none"`.

// Landlock and bubblewrap are Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{chown_tree, cordon_copied, describe, is_root};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Landlock => "landlock",
            Backend::Bwrap => "bwrap",
        }
    }
}

/// `cordon`, copied once per test process where the unprivileged user can run it.
fn cordon() -> &'static Path {
    cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")))
}

/// The unprivileged user's ids, `None` for the current user.
fn ids(mode: Mode) -> Option<(u32, u32)> {
    match mode {
        Mode::Root => {
            assert!(
                is_root(),
                "the root cases must run as root (CI runs as root)"
            );
            None
        }
        Mode::User if !is_root() => None,
        Mode::User => Some(cordon_e2e::test_user()),
    }
}

const SECRET: &str = "CORDON-OUTSIDE-SECRET\n";
const VICTIM: &str = "victim\n";

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
    ids: Option<(u32, u32)>,
    backend: Backend,
}

impl Fixture {
    /// `ws/` (the current directory and HOME), `outside/` (no root covers it: `secret.txt`,
    /// `victim.txt`, `dir/c/victim.txt`), and `policies/` beside them.
    fn new(mode: Mode, backend: Backend) -> Fixture {
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-paths-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        let outside = root.join("outside");
        for d in [
            &ws,
            &outside,
            &outside.join("dir/c"),
            &root.join("state"),
            &root.join("tmp"),
        ] {
            fs::create_dir_all(d).unwrap();
        }
        fs::create_dir(root.join("policies")).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        fs::set_permissions(
            outside.join("secret.txt"),
            fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        fs::write(outside.join("victim.txt"), VICTIM).unwrap();
        fs::write(outside.join("dir/c/victim.txt"), VICTIM).unwrap();
        let fx = Fixture {
            _tmp: tmp,
            root,
            ws,
            outside,
            ids: ids(mode),
            backend,
        };
        fx.chown();
        fx
    }

    fn chown(&self) {
        if let Some(ids) = self.ids {
            for d in [
                &self.ws,
                &self.outside,
                &self.root.join("state"),
                &self.root.join("tmp"),
            ] {
                chown_tree(d, ids.0, ids.1);
            }
        }
    }

    /// Writes `policies/NAME`: the workspace read-write, the backend, and `extra`.
    fn policy(&self, name: &str, backend: &str, extra: &str) -> PathBuf {
        let p = self.root.join("policies").join(name);
        let require = backend != "none";
        fs::write(
            &p,
            format!(
                "version = 1\n\
                 [sandbox]\nbackend = \"{backend}\"\nrequire_os_sandbox = {require}\nnetwork = \"deny\"\n{extra}\n\
                 [sandbox.paths.workspace]\nroot = \"../ws\"\nmode = \"rw\"\n\
                 [shell]\ndefault = \"allow\"\n"
            ),
        )
        .unwrap();
        p
    }

    /// A policy that names nothing but the workspace: the run that plants.
    fn plain(&self) -> PathBuf {
        self.policy("plain.toml", self.backend.name(), "")
    }

    /// `cordon exec --policy P -- /bin/sh -c SCRIPT` in the workspace, as the case's user.
    fn exec(&self, policy: &Path, script: &str) -> Output {
        self.command(policy, script).output().unwrap()
    }

    /// [`Fixture::exec`], started: for runs that overlap.
    fn spawn(&self, policy: &Path, script: &str) -> std::process::Child {
        self.command(policy, script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn command(&self, policy: &Path, script: &str) -> Command {
        let mut c = self.command_in(policy, script, "");
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        c
    }

    /// [`Fixture::command`] as root whatever the case's user, with its own TMPDIR, state and
    /// trust store (`root-tmp`, …, made here): a run of root's beside the user's.
    fn command_as_root(&self, policy: &Path, script: &str) -> Command {
        for d in ["tmp", "state", "config"] {
            fs::create_dir_all(self.root.join(format!("root-{d}"))).unwrap();
        }
        self.command_in(policy, script, "root-")
    }

    /// The command both build, its directories named with `prefix`.
    fn command_in(&self, policy: &Path, script: &str, prefix: &str) -> Command {
        let mut c = Command::new(cordon());
        c.arg("exec")
            .arg("--policy")
            .arg(policy)
            // The kernel layer is what is tested: the shell analysis asks for writes to the
            // persistence surface (`.git/hooks/…`), and --approve-all answers that ask.
            .arg("--approve-all")
            .args(["--", "/bin/sh", "-c", script])
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.ws)
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", self.root.join(format!("{prefix}tmp")))
            .env("XDG_STATE_HOME", self.root.join(format!("{prefix}state")))
            // The trust store outside the workspace too: under HOME it would be a protected
            // path in the writable root, which the Landlock backend refuses.
            .env("XDG_CONFIG_HOME", self.root.join(format!("{prefix}config")))
            .stdin(Stdio::null());
        c
    }

    /// Waits (generously: the machine is loaded) until the workspace holds `name`.
    fn wait_for(&self, name: &str, run: &mut std::process::Child) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !self.ws.join(name).exists() {
            if let Ok(Some(status)) = run.try_wait() {
                let mut err = String::new();
                if let Some(e) = run.stderr.as_mut() {
                    let _ = std::io::Read::read_to_string(e, &mut err);
                }
                panic!("the run ended ({status}) before it made {name}: {err}");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {name} after 120 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Runs the planting script, which must succeed.
    fn plant(&self, policy: &Path, script: &str) {
        let out = self.exec(policy, script);
        assert_eq!(
            out.status.code(),
            Some(0),
            "planting failed\n{}",
            describe(&out)
        );
    }

    /// Runs the planting script directly, as the case's user, without cordon: what an earlier
    /// run left behind. Used for plants in `.git`, where a cordon run's after-run scan would move
    /// the plant aside or restore the file itself (tests/git_escape.rs proves that); the refusal
    /// here must hold on its own, whatever left the link (a process of an older cordon, a tool
    /// outside it).
    fn plant_directly(&self, script: &str) {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script])
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "planting failed\n{}",
            describe(&out)
        );
    }

    /// The run after the plant: refused before anything ran, naming `link`, with the outside
    /// untouched.
    fn assert_refused(&self, policy: &Path, attack: &str, link: &Path) {
        let script = format!("touch ran; {attack}");
        let out = self.exec(policy, &script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(125),
            "the run after the plant was not refused\n{}",
            describe(&out)
        );
        assert!(
            stderr.starts_with("cordon: ") && stderr.contains(&link.display().to_string()),
            "the refusal does not name {}\n{}",
            link.display(),
            describe(&out)
        );
        assert!(
            !self.ws.join("ran").exists(),
            "the command ran\n{}",
            describe(&out)
        );
        assert!(!self.ws.join("leak").exists(), "{}", describe(&out));
        assert_eq!(
            fs::read_to_string(self.outside.join("victim.txt")).unwrap(),
            VICTIM
        );
        assert_eq!(
            fs::read_to_string(self.outside.join("dir/c/victim.txt")).unwrap(),
            VICTIM
        );
        assert_eq!(
            fs::read_to_string(self.outside.join("secret.txt")).unwrap(),
            SECRET
        );
    }
}

impl Fixture {
    /// `cordon profile` shows no profile built through the planted link: the same refusal.
    fn assert_profile_refused(&self, policy: &Path, format: &str, link: &Path) {
        let mut c = Command::new(cordon());
        c.args(["profile", "--format", format])
            .arg("--policy")
            .arg(policy)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.ws)
            .env("XDG_STATE_HOME", self.root.join("state"))
            // The trust store outside the workspace too: under HOME it would be a protected
            // path in the writable root, which the Landlock backend refuses.
            .env("XDG_CONFIG_HOME", self.root.join("config"));
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{}", describe(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&link.display().to_string()),
            "{}",
            describe(&out)
        );
        assert!(out.stdout.is_empty(), "{}", describe(&out));
    }
}

// ---------------------------------------------------------------------------------------------
// the cases

/// A read-only root inside the workspace (`docs`) replaced by a link to `/`: the next run
/// would grant reading the whole filesystem.
fn ro_root_replaced_by_a_link(mode: Mode, target: &str) {
    let fx = Fixture::new(mode, Backend::Bwrap);
    fs::create_dir(fx.ws.join("docs")).unwrap();
    fx.chown();
    let target = if target.is_empty() {
        fx.outside.display().to_string()
    } else {
        target.into()
    };
    fx.plant(&fx.plain(), &format!("rm -r docs && ln -s '{target}' docs"));
    let policy = fx.policy(
        "docs.toml",
        "bwrap",
        "[sandbox.paths.docs]\nroot = \"../ws/docs\"\nmode = \"ro\"\n",
    );
    // Through `/`, the host's /etc whole (the sandbox's /tmp is its own, hiding outside/).
    let attack = if target == "/" {
        "cat /etc/login.defs > leak".to_string()
    } else {
        format!("cat '{}/secret.txt' > leak", fx.outside.display())
    };
    fx.assert_refused(&policy, &attack, &fx.ws.join("docs"));
    fx.assert_profile_refused(&policy, "bwrap", &fx.ws.join("docs"));
}

/// An `extra_read` file in the workspace replaced by a link to a secret outside.
fn extra_read_replaced_by_a_link(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    fs::write(fx.ws.join("notes.txt"), "notes\n").unwrap();
    fx.chown();
    fx.plant(
        &fx.plain(),
        &format!(
            "rm notes.txt && ln -s '{}/secret.txt' notes.txt",
            fx.outside.display()
        ),
    );
    let policy = fx.policy(
        "notes.toml",
        backend.name(),
        "extra_read = [\"../ws/notes.txt\"]\n",
    );
    fx.assert_refused(&policy, "cat notes.txt > leak", &fx.ws.join("notes.txt"));
}

/// A read-write root nested in the workspace (`vendor`) replaced by a link outside, written
/// absolute or relative.
fn nested_rw_root_replaced_by_a_link(mode: Mode, backend: Backend, relative: bool) {
    let fx = Fixture::new(mode, backend);
    fs::create_dir(fx.ws.join("vendor")).unwrap();
    fx.chown();
    let target = if relative {
        "../outside".to_string()
    } else {
        fx.outside.display().to_string()
    };
    fx.plant(
        &fx.plain(),
        &format!("rm -r vendor && ln -s '{target}' vendor"),
    );
    let policy = fx.policy(
        "vendor.toml",
        backend.name(),
        "[sandbox.paths.vendor]\nroot = \"../ws/vendor\"\nmode = \"rw\"\n",
    );
    fx.assert_refused(
        &policy,
        &format!("echo pwned > '{}/victim.txt'", fx.outside.display()),
        &fx.ws.join("vendor"),
    );
    fx.assert_profile_refused(&policy, "landlock", &fx.ws.join("vendor"));
}

/// A root `a/b/c` whose middle directory `b` became a link outside.
fn link_in_the_middle_of_a_root(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    fs::create_dir_all(fx.ws.join("a/b/c")).unwrap();
    fx.chown();
    fx.plant(
        &fx.plain(),
        &format!("rm -r a/b && ln -s '{}/dir' a/b", fx.outside.display()),
    );
    let policy = fx.policy(
        "abc.toml",
        backend.name(),
        "[sandbox.paths.c]\nroot = \"../ws/a/b/c\"\nmode = \"rw\"\n",
    );
    fx.assert_refused(
        &policy,
        &format!("echo pwned > '{}/dir/c/victim.txt'", fx.outside.display()),
        &fx.ws.join("a/b"),
    );
}

fn git_workspace(fx: &Fixture) {
    fs::create_dir_all(fx.ws.join(".git/hooks")).unwrap();
    fs::write(fx.ws.join(".git/config"), "[core]\n").unwrap();
    fs::write(fx.ws.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    fx.chown();
}

const PROTECT_GIT: &str = "protected = [\".git/config\", \".git/hooks\"]\n";

/// `.git/config` replaced by a link to a file the command controls: the operator's next git
/// command reads the command's configuration.
fn protected_file_replaced_by_a_link(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fx.plant_directly(
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > mine && rm .git/config && ln -s ../mine .git/config",
    );
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    fx.assert_refused(&policy, "echo more >> mine", &fx.ws.join(".git/config"));
}

/// A file inside the protected `.git/hooks` replaced by a link to a workspace file the command
/// keeps writing: the operator's next commit runs it.
fn link_inside_a_protected_directory(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fx.plant(
        &fx.plain(),
        "rm .git/hooks/pre-commit && ln -s ../../evil .git/hooks/pre-commit",
    );
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    // The planting run's scan moved the link aside (dotted, round 12) and put the hook back:
    // the refusal names the link where it now is, still inside the protected directory.
    fx.assert_refused(
        &policy,
        "printf '#!/bin/sh\\ntouch pwned\\n' > evil",
        &fx.ws.join(".git/hooks/.pre-commit.cordon-quarantine"),
    );
}

/// `.git` renamed and replaced by a link to the renamed copy, whose hooks are then writable
/// under another name.
fn protected_parent_renamed_and_linked(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    // Directly: a cordon run's after-run scan moves the link aside (the run after it then
    // finds no `.git` and covers the missing name, which `protected_parent_removed` shows).
    fx.plant_directly("mv .git .git-old && ln -s .git-old .git");
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    fx.assert_refused(
        &policy,
        "echo 'touch pwned' > .git-old/hooks/pre-commit",
        &fx.ws.join(".git"),
    );
}

/// `.git` gone (renamed away), two protected paths under it: the first one's placeholder
/// (`.git`, an empty file) stands in the way of the second (`.git/hooks`), which is covered
/// by it too. The run happens (it was refused before: cordon tried to make a second
/// placeholder inside the first), the command cannot create `.git` nor anything in it, and
/// the placeholder is gone after the run.
fn protected_parent_removed(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fx.plant_directly("mv .git .git-old");
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    let out = fx.exec(
        &policy,
        "mkdir .git 2>/dev/null; echo \"MKDIR $?\"; \
         mkdir .git/hooks 2>/dev/null; echo \"HOOKS $?\"; \
         rm -f .git 2>/dev/null; echo \"RM $?\"; touch ran",
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran").exists());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for step in ["MKDIR", "HOOKS", "RM"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(step) && l != format!("{step} 0")),
            "{step} succeeded\n{}",
            describe(&out)
        );
    }
    assert!(
        fs::symlink_metadata(fx.ws.join(".git")).is_err(),
        "{}",
        describe(&out)
    );
}

/// `.git` renamed and replaced by a fresh directory: nothing to refuse, and the missing
/// protected paths stay unwritable (covered with a read-only empty file, by bwrap or by the
/// Landlock backend's init).
fn protected_parent_renamed_to_a_fresh_directory(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fx.plant_directly("mv .git .git-old && mkdir .git");
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    let out = fx.exec(
        &policy,
        "mkdir .git/hooks; echo x > .git/hooks/pre-commit; echo x > .git/config; touch ran",
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran").exists());
    for p in [".git/config", ".git/hooks"] {
        let m = fs::symlink_metadata(fx.ws.join(p));
        assert!(
            m.as_ref().map_or(true, |m| m.is_file() && m.len() == 0),
            "{p} was created or written: {m:?}\n{}",
            describe(&out)
        );
    }
}

/// A hard link to `.git/config` made by an earlier run that had no sandbox: writing the other
/// name writes the protected file.
fn hard_link_from_an_unconfined_run(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fx.plant_directly("ln .git/config x");
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    fx.assert_refused(
        &policy,
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > x",
        &fx.ws.join(".git/config"),
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// A hard link to a file inside a protected directory (`.git/hooks/pre-commit`), made by an
/// earlier sandboxed run under a policy that did not protect it yet.
fn hard_link_into_a_protected_directory(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fx.plant(&fx.plain(), "ln .git/hooks/pre-commit hook");
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    // The planting run's scan moved the linked hook aside (dotted, round 12: a glob loop
    // skips it) and wrote the hook back as a new file: the second name is the one moved aside.
    let linked = fx.ws.join(".git/hooks/.pre-commit.cordon-quarantine");
    fx.assert_refused(&policy, "echo 'touch pwned' >> hook", &linked);
    fx.assert_profile_refused(&policy, backend.name(), &linked);
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/hooks/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
}

/// What the command itself can try against the mounts that keep protected paths read-only
/// (bwrap's, or the Landlock backend's init's): unmount a cover or a bind, rename a protected
/// path or the directory above it, create a missing one (`.git/info/attributes` under
/// `.git/info`, missing: covered), give a protected file a second name, write, chmod or
/// truncate it. Each step prints its exit status; every one must fail and leave the files as
/// they were. Landlock forbids mount, umount and pivot_root to a restricted task, and the
/// command has no capability for them either.
fn the_command_cannot_undo_the_mounts(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    let protect = "protected = [\".git/config\", \".git/hooks\", \".git/info/attributes\"]\n";
    let policy = fx.policy("git.toml", backend.name(), protect);
    let steps = [
        "umount .git/config",
        "umount -l .git/config",
        "umount .git/hooks",
        "umount .git/info",
        "mv .git/config .git/config-old",
        "mv .git/hooks .git/hooks-old",
        "mv .git .git-old",
        "rm -f .git/config",
        "rmdir .git/info",
        "mkdir .git/info/x",
        "ln .git/config second",
        "ln .git/hooks/pre-commit second-hook",
        "echo '[core] fsmonitor = touch pwned' >> .git/config",
        "echo 'touch pwned' > .git/hooks/pre-commit",
        "echo 'touch pwned' > .git/hooks/post-checkout",
        "chmod 777 .git/config",
        "truncate -s 0 .git/config",
        "touch -d 2001-01-01 .git/config",
    ];
    let script: String = steps
        .iter()
        .map(|s| format!("{s} 2>/dev/null; echo \"STEP $? {s}\"\n"))
        .collect::<String>()
        + "touch ran\n";
    let out = fx.exec(&policy, &script);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran").exists(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for step in steps {
        let line = stdout
            .lines()
            .find(|l| l.ends_with(step))
            .unwrap_or_else(|| panic!("no status for {step}\n{}", describe(&out)));
        assert!(
            !line.starts_with("STEP 0 "),
            "{step} succeeded on {}\n{}",
            backend.name(),
            describe(&out)
        );
    }
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/hooks/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(!fx.ws.join(".git/hooks/post-checkout").exists());
    assert!(!fx.ws.join("second").exists() && !fx.ws.join("second-hook").exists());
    // The placeholder covering the missing `.git/info` is gone after the run.
    assert!(!fx.ws.join(".git/info").exists(), "{}", describe(&out));
    let meta = fs::metadata(fx.ws.join(".git/config")).unwrap();
    assert_ne!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o777
    );
}

/// Two runs over the same workspace, overlapping: run A makes the placeholder that covers a
/// missing protected path (`missing`, relative to the workspace: `.git/hooks`, or the missing
/// `.git/info` above `.git/info/attributes`), run B (started while A runs) finds it there, then
/// A ends. B must start (the placeholder in the way is no reason to refuse it), and A's removal
/// of its placeholder must not take B's cover away (an unlink in the host's mount namespace
/// detaches a mount on that name in every other namespace): B's command, after A ended, must
/// still be unable to create the directory and a file in it. The last run out removes the
/// placeholder.
fn overlapping_runs_keep_each_others_covers(mode: Mode, backend: Backend, missing: &str) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fs::remove_dir_all(fx.ws.join(".git/hooks")).unwrap();
    let protect = if missing == ".git/hooks" {
        PROTECT_GIT
    } else {
        "protected = [\".git/config\", \".git/info/attributes\"]\n"
    };
    let policy = fx.policy("git.toml", backend.name(), protect);
    let wait =
        |up: &str, go: &str| format!("touch {up}; while [ ! -e {go} ]; do sleep 0.05; done; ");
    let mut a = fx.spawn(&policy, &wait("a-up", "a-go"));
    fx.wait_for("a-up", &mut a);
    assert!(fx.ws.join(missing).is_file(), "no placeholder at {missing}");
    let script = wait("b-up", "b-go")
        + &format!(
            "mkdir {missing} 2>/dev/null; echo \"MKDIR $?\"; \
             echo 'touch pwned' > {missing}/x 2>/dev/null; echo \"WRITE $?\""
        );
    let mut b = fx.spawn(&policy, &script);
    fx.wait_for("b-up", &mut b);
    fs::write(fx.ws.join("a-go"), "").unwrap();
    let a = a.wait_with_output().unwrap();
    assert_eq!(a.status.code(), Some(0), "{}", describe(&a));
    fs::write(fx.ws.join("b-go"), "").unwrap();
    let b = b.wait_with_output().unwrap();
    assert_eq!(b.status.code(), Some(0), "{}", describe(&b));
    let stdout = String::from_utf8_lossy(&b.stdout);
    for step in ["MKDIR", "WRITE"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(step) && l != format!("{step} 0")),
            "{step} {missing} succeeded in the run that outlived the other on {}\n{}\nthe other:\n{}",
            backend.name(),
            describe(&b),
            describe(&a)
        );
    }
    // The last run out removed the placeholder.
    assert!(
        !fx.ws.join(missing).exists(),
        "{missing} is left\n{}",
        describe(&b)
    );
}

/// The name the lock of a directory that holds placeholders had in /run/lock (a file per
/// directory identity, 0644), which another user could make first or lock: see
/// [`placeholder_locks`] for where it is now.
fn placeholder_lock(dir: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(dir).unwrap();
    PathBuf::from(format!(
        "/run/lock/cordon-placeholders-{}-{}-{}",
        m.uid(),
        m.dev(),
        m.ino()
    ))
}

/// A command that `flock`s its own directory (exclusively, for 30 s) cannot make a run that
/// needs a placeholder there wait or refuse: the runs' locks are not on the directory, which a
/// command can open, but in /run/lock, which it cannot (on the directory, such a run waited
/// 10 s and was refused). The lock file is the directory owner's, 0600, in an area of its
/// own (see `another_users_lock_names_stop_no_run`).
fn a_commands_flock_on_its_directory_stops_no_run(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fs::remove_dir_all(fx.ws.join(".git/hooks")).unwrap();
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    // The command that holds the lock runs without protected paths: no lock of cordon's own.
    let mut holder = fx.spawn(
        &fx.plain(),
        "exec flock -x .git sh -c 'touch a-up; sleep 30'",
    );
    fx.wait_for("a-up", &mut holder);
    let out = fx.exec(
        &policy,
        "mkdir .git/hooks 2>/dev/null; echo \"MKDIR $?\"; touch ran",
    );
    let _ = holder.kill();
    let held = holder.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\nthe holder:\n{}",
        describe(&out),
        describe(&held)
    );
    assert!(fx.ws.join("ran").exists(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with("MKDIR ") && l != "MKDIR 0"),
        "{}",
        describe(&out)
    );
    use std::os::unix::fs::MetadataExt;
    let owner = fs::metadata(fx.ws.join(".git")).unwrap().uid();
    let locks = placeholder_locks(&fx.ws.join(".git"));
    assert!(!locks.is_empty(), "no lock file");
    for l in locks {
        let lock = fs::metadata(l).unwrap();
        assert_eq!((lock.uid(), lock.mode() & 0o7777), (owner, 0o600));
    }
}

/// What another local user (`nobody`: neither root nor the directory's owner) does to stop
/// the owner's runs, in `python3`: makes each name in its arguments but the last (a trailing
/// `/`: a directory, mode 0700), then takes an exclusive `flock` on every path in the last
/// argument (`:`-separated) it can open, prints `HELD` and the paths it holds, and holds them
/// until its stdin closes.
const SQUAT: &str = r#"
import os, fcntl, sys
names, paths = sys.argv[1:-1], sys.argv[-1].split(':')
for n in names:
    if n.endswith('/'):
        os.mkdir(n.rstrip('/'), 0o700)
    else:
        os.close(os.open(n, os.O_CREAT | os.O_WRONLY, 0o644))
held, fds = [], []
for p in paths:
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.append(p)
        fds.append(fd)
    except OSError:
        pass
print('HELD', ':'.join(held), flush=True)
sys.stdin.read()
"#;

/// `python3 -c SCRIPT ARGS` as `nobody`.
fn as_nobody(script: &str, args: &[String]) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "nobody", "--", "python3", "-c", script])
        .args(args);
    c
}

/// The owner's areas of placeholder locks (see `protect::lock_file`) in /run/lock, and the
/// lock file of `dir` in each.
fn placeholder_locks(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(dir).unwrap();
    let prefix = format!("cordon-locks-{}-", m.uid());
    fs::read_dir("/run/lock")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|e| {
            let a = fs::symlink_metadata(e.path()).unwrap();
            a.is_dir() && a.uid() == m.uid() && a.mode() & 0o077 == 0
        })
        .map(|e| e.path().join(format!("{}-{}", m.dev(), m.ino())))
        .filter(|p| p.exists())
        .collect()
}

/// Another local user works out the lock names of the owner's `.git` and gets there first: the
/// file `/run/lock/cordon-placeholders-OWNER-DEV-INO` (the name the lock had), directories
/// `cordon-locks-OWNER-…` of its own, and an exclusive `flock` on `.git` itself and on every
/// lock file of the owner's it can open. The owner's run that needs the `.git/hooks`
/// placeholder must still start, keep the cover, and leave a lock file that user cannot
/// open; the placeholder stays while that user holds `.git`, and the next run after removes
/// it. Before, the name made first refused every such run ("belongs to uid 65534"), and a
/// `flock` on the 0644 file that was there made them wait 10 s and refuse.
fn another_users_lock_names_stop_no_run(mode: Mode, backend: Backend) {
    use std::io::BufRead;
    use std::os::unix::fs::MetadataExt;
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fs::remove_dir_all(fx.ws.join(".git/hooks")).unwrap();
    let git = fx.ws.join(".git");
    let owner = fs::metadata(&git).unwrap().uid();
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    let old = placeholder_lock(&git);
    let tag = fx.root.file_name().unwrap().to_string_lossy().into_owned();
    let squats: Vec<PathBuf> = (0..3)
        .map(|n| PathBuf::from(format!("/run/lock/cordon-locks-{owner}-{n}-{tag}")))
        .collect();
    // What the other user made goes with the test, failed or not.
    struct Squats(Vec<PathBuf>);
    impl Drop for Squats {
        fn drop(&mut self) {
            for s in &self.0 {
                let _ = fs::remove_dir(s).or_else(|_| fs::remove_file(s));
            }
        }
    }
    let _squats = Squats(squats.iter().cloned().chain([old.clone()]).collect());
    let mut names = vec![old.display().to_string()];
    names.extend(squats.iter().map(|s| format!("{}/", s.display())));
    let mut held: Vec<String> = vec![old.display().to_string(), git.display().to_string()];
    held.extend(
        placeholder_locks(&git)
            .iter()
            .map(|p| p.display().to_string()),
    );
    names.push(held.join(":"));
    let mut squatter = as_nobody(SQUAT, &names)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(squatter.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("HELD ") && line.contains(&git.display().to_string()),
        "the other user holds neither its file nor .git: {line}"
    );
    let out = fx.exec(
        &policy,
        "mkdir .git/hooks 2>/dev/null; echo \"MKDIR $?\"; touch ran",
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran").exists(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with("MKDIR ") && l != "MKDIR 0"),
        "{}",
        describe(&out)
    );
    // The owner's lock file: in an area of its own, out of the other user's reach.
    let locks = placeholder_locks(&git);
    assert!(!locks.is_empty(), "no lock file in an area of uid {owner}");
    for l in &locks {
        let m = fs::metadata(l).unwrap();
        assert_eq!(
            (m.uid(), m.mode() & 0o7777),
            (owner, 0o600),
            "{}",
            l.display()
        );
    }
    let paths: Vec<String> = locks.iter().map(|p| p.display().to_string()).collect();
    let probe = as_nobody(SQUAT, &[paths.join(":")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&probe.stdout).trim_end(),
        "HELD",
        "the other user could lock the owner's lock file"
    );
    // Held by the other user, `.git` keeps the placeholder (the last run out cannot have
    // every lock); let go, the next run removes it.
    assert!(git.join("hooks").is_file(), "the placeholder is gone");
    drop(squatter.stdin.take());
    squatter.wait().unwrap();
    let again = fx.exec(&policy, "true");
    assert_eq!(again.status.code(), Some(0), "{}", describe(&again));
    assert!(!git.join("hooks").exists(), "{}", describe(&again));
}

/// Root's run and a user's over the user's workspace, where root made `.git` (root's `git
/// init` there): root's run makes the `.git/hooks` placeholder, the user's run (started while
/// root's runs) finds it and must hold it too: root's lock files are in root's own area, which
/// it cannot open, so it locks `.git` itself, and root's runs, last out, must get that lock as
/// well as theirs. The user's run must start and keep the cover; root's next run removes the
/// placeholder. (With root's lock file 0600 and nothing else, the user's run was refused.)
fn root_and_a_users_run_share_a_root_made_placeholder(backend: Backend) {
    let fx = Fixture::new(Mode::User, backend);
    git_workspace(&fx);
    fs::remove_dir_all(fx.ws.join(".git/hooks")).unwrap();
    for p in [".git", ".git/config"] {
        std::os::unix::fs::chown(fx.ws.join(p), Some(0), Some(0)).unwrap();
    }
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    let mut root_run = fx
        .command_as_root(&policy, "while [ ! -e a-go ]; do sleep 0.05; done")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Root's command cannot write in the user's workspace (no capabilities): its placeholder
    // says that it holds the lock and has its mounts.
    fx.wait_for(".git/hooks", &mut root_run);
    assert!(fx.ws.join(".git/hooks").is_file(), "no placeholder");
    let script = "touch b-up; while [ ! -e b-go ]; do sleep 0.05; done; \
                  mkdir .git/hooks 2>/dev/null; echo \"MKDIR $?\"";
    let mut user_run = fx.spawn(&policy, script);
    fx.wait_for("b-up", &mut user_run);
    fs::write(fx.ws.join("a-go"), "").unwrap();
    let root_out = root_run.wait_with_output().unwrap();
    assert_eq!(root_out.status.code(), Some(0), "{}", describe(&root_out));
    fs::write(fx.ws.join("b-go"), "").unwrap();
    let out = user_run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with("MKDIR ") && l != "MKDIR 0"),
        "{}",
        describe(&out)
    );
    // The user cannot remove a name in root's directory: root's next run, last out, does.
    let again = fx.command_as_root(&policy, "true").output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", describe(&again));
    assert!(!fx.ws.join(".git/hooks").exists(), "{}", describe(&again));
}

#[test]
fn landlock_root_and_a_users_run_share_a_root_made_placeholder() {
    root_and_a_users_run_share_a_root_made_placeholder(Backend::Landlock);
}

#[test]
fn bwrap_root_and_a_users_run_share_a_root_made_placeholder() {
    root_and_a_users_run_share_a_root_made_placeholder(Backend::Bwrap);
}

/// A run whose cordon is SIGKILLed leaves its placeholder (`.git/hooks`, the missing hooks
/// directory). The next run over the root is not refused for it, keeps it covered (its command
/// cannot create `.git/hooks`), and, last out, removes it; the dead run's scan (done by that
/// next run) leaves it in place rather than moving it aside as a plant.
fn a_killed_runs_placeholder_is_removed_by_the_next(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fs::remove_dir_all(fx.ws.join(".git/hooks")).unwrap();
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    let mut a = fx.spawn(&policy, "touch a-up; while :; do sleep 1; done");
    fx.wait_for("a-up", &mut a);
    assert!(fx.ws.join(".git/hooks").is_file(), "no placeholder");
    a.kill().unwrap();
    a.wait().unwrap();
    // Until the killed run's last process (its sandbox's init, or bwrap) is gone: nothing holds
    // the directory's lock then.
    let locks: Vec<fs::File> = placeholder_locks(&fx.ws.join(".git"))
        .iter()
        .map(|l| fs::File::open(l).unwrap())
        .collect();
    assert!(!locks.is_empty(), "no lock file");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let free = locks.iter().all(|l| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(l);
            // SAFETY: flock on a descriptor this function owns.
            let got = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0;
            // SAFETY: as above.
            unsafe { libc::flock(fd, libc::LOCK_UN) };
            got
        });
        if free {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the killed run still holds .git after 120 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        fx.ws.join(".git/hooks").is_file(),
        "the placeholder is gone"
    );
    let out = fx.exec(
        &policy,
        "mkdir .git/hooks 2>/dev/null; echo \"MKDIR $?\"; touch ran",
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran").exists(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("MKDIR ") && l != "MKDIR 0"),
        "{}",
        describe(&out)
    );
    let left: Vec<_> = fs::read_dir(fx.ws.join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("hooks"))
        .collect();
    assert!(left.is_empty(), "left: {left:?}\n{}", describe(&out));
}

/// `sandbox.git = "protect"` in a root whose `.git` is a gitdir file naming a git directory
/// inside the same writable root (`git init --separate-git-dir`, a worktree's or submodule's
/// git directory kept beside it): git reads that directory's config and runs its hooks, so
/// they are kept read-only as a `.git` directory's would be, and the `.git` file itself too.
fn a_gitdir_file_inside_the_root_is_protected(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    fs::create_dir_all(fx.ws.join("inner.git/hooks")).unwrap();
    fs::write(fx.ws.join("inner.git/config"), "[core]\n").unwrap();
    fs::write(fx.ws.join("inner.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(fx.ws.join(".git"), "gitdir: inner.git\n").unwrap();
    fx.chown();
    let policy = fx.policy("git.toml", backend.name(), "git = \"protect\"\n");
    let steps = [
        "echo 'touch pwned' > inner.git/hooks/pre-commit",
        "echo '[core] fsmonitor = touch pwned' >> inner.git/config",
        "echo x >> .git",
        "mv inner.git inner-old.git",
    ];
    let script: String = steps
        .iter()
        .map(|s| format!("{s} 2>/dev/null; echo \"STEP $? {s}\"\n"))
        .collect::<String>()
        + "touch ran\n";
    let out = fx.exec(&policy, &script);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran").exists(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for step in steps {
        let line = stdout
            .lines()
            .find(|l| l.ends_with(step))
            .unwrap_or_else(|| panic!("no status for {step}\n{}", describe(&out)));
        assert!(
            !line.starts_with("STEP 0 "),
            "{step} succeeded on {}\n{}",
            backend.name(),
            describe(&out)
        );
    }
    assert_eq!(
        fs::read_to_string(fx.ws.join("inner.git/config")).unwrap(),
        "[core]\n"
    );
}

/// A dead run's scan, done by a later run while another is still going, must not move aside
/// the going run's placeholder: renaming it in the host's mount namespace detaches that run's
/// cover. Run A (any policy) runs; run B covers the missing `.git/hooks` with a placeholder
/// made after A began; A is SIGKILLed, so its after-run scan is left to the next run; run C
/// then does A's scan (everything watched changed since A began). B's command, after that, must still be
/// unable to create `.git/hooks`.
fn a_dead_runs_scan_keeps_a_live_runs_cover(mode: Mode, backend: Backend) {
    let fx = Fixture::new(mode, backend);
    git_workspace(&fx);
    fs::remove_dir_all(fx.ws.join(".git/hooks")).unwrap();
    let mut a = fx.spawn(&fx.plain(), "touch a-up; while :; do sleep 1; done");
    fx.wait_for("a-up", &mut a);
    let policy = fx.policy("git.toml", backend.name(), PROTECT_GIT);
    let mut b = fx.spawn(
        &policy,
        "touch b-up; while [ ! -e b-go ]; do sleep 0.05; done; \
         mkdir .git/hooks 2>/dev/null; echo \"MKDIR $?\"",
    );
    fx.wait_for("b-up", &mut b);
    // Killed once B's placeholder exists: its scan is left to C, and B does not do it first.
    a.kill().unwrap();
    a.wait().unwrap();
    let c = fx.exec(&fx.plain(), "true");
    assert_eq!(c.status.code(), Some(0), "{}", describe(&c));
    fs::write(fx.ws.join("b-go"), "").unwrap();
    let b = b.wait_with_output().unwrap();
    assert_eq!(b.status.code(), Some(0), "{}", describe(&b));
    let stdout = String::from_utf8_lossy(&b.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("MKDIR ") && l != "MKDIR 0"),
        "the live run's command created .git/hooks after the dead run's scan\n{}\nthe scanning run:\n{}",
        describe(&b),
        describe(&c)
    );
}

macro_rules! cases {
    ($($name:ident => $body:expr;)*) => {
        mod as_root {
            use super::*;
            $( #[test] fn $name() { let mode = Mode::Root; $body(mode) } )*
        }
        mod as_user {
            use super::*;
            $( #[test] fn $name() { let mode = Mode::User; $body(mode) } )*
        }
    };
}

cases! {
    bwrap_ro_root_replaced_by_a_link_to_slash => |m| ro_root_replaced_by_a_link(m, "/");
    bwrap_ro_root_replaced_by_a_link_outside => |m| ro_root_replaced_by_a_link(m, "");
    landlock_extra_read_replaced_by_a_link => |m| extra_read_replaced_by_a_link(m, Backend::Landlock);
    bwrap_extra_read_replaced_by_a_link => |m| extra_read_replaced_by_a_link(m, Backend::Bwrap);
    landlock_nested_rw_root_replaced_by_a_link => |m| nested_rw_root_replaced_by_a_link(m, Backend::Landlock, false);
    bwrap_nested_rw_root_replaced_by_a_link => |m| nested_rw_root_replaced_by_a_link(m, Backend::Bwrap, false);
    landlock_nested_rw_root_replaced_by_a_relative_link => |m| nested_rw_root_replaced_by_a_link(m, Backend::Landlock, true);
    bwrap_nested_rw_root_replaced_by_a_relative_link => |m| nested_rw_root_replaced_by_a_link(m, Backend::Bwrap, true);
    landlock_link_in_the_middle_of_a_root => |m| link_in_the_middle_of_a_root(m, Backend::Landlock);
    bwrap_link_in_the_middle_of_a_root => |m| link_in_the_middle_of_a_root(m, Backend::Bwrap);
    bwrap_the_command_cannot_undo_the_mounts => |m| the_command_cannot_undo_the_mounts(m, Backend::Bwrap);
    landlock_the_command_cannot_undo_the_mounts => |m| the_command_cannot_undo_the_mounts(m, Backend::Landlock);
    bwrap_overlapping_runs_keep_each_others_covers => |m| overlapping_runs_keep_each_others_covers(m, Backend::Bwrap, ".git/hooks");
    landlock_overlapping_runs_keep_each_others_covers => |m| overlapping_runs_keep_each_others_covers(m, Backend::Landlock, ".git/hooks");
    bwrap_overlapping_runs_share_a_placeholder_above => |m| overlapping_runs_keep_each_others_covers(m, Backend::Bwrap, ".git/info");
    landlock_overlapping_runs_share_a_placeholder_above => |m| overlapping_runs_keep_each_others_covers(m, Backend::Landlock, ".git/info");
    bwrap_protected_file_replaced_by_a_link => |m| protected_file_replaced_by_a_link(m, Backend::Bwrap);
    landlock_protected_file_replaced_by_a_link => |m| protected_file_replaced_by_a_link(m, Backend::Landlock);
    bwrap_protected_parent_renamed_and_linked => |m| protected_parent_renamed_and_linked(m, Backend::Bwrap);
    landlock_protected_parent_renamed_and_linked => |m| protected_parent_renamed_and_linked(m, Backend::Landlock);
    bwrap_link_inside_a_protected_directory => |m| link_inside_a_protected_directory(m, Backend::Bwrap);
    landlock_link_inside_a_protected_directory => |m| link_inside_a_protected_directory(m, Backend::Landlock);
    bwrap_a_killed_runs_placeholder_is_removed_by_the_next => |m| a_killed_runs_placeholder_is_removed_by_the_next(m, Backend::Bwrap);
    landlock_a_killed_runs_placeholder_is_removed_by_the_next => |m| a_killed_runs_placeholder_is_removed_by_the_next(m, Backend::Landlock);
    bwrap_a_commands_flock_on_its_directory_stops_no_run => |m| a_commands_flock_on_its_directory_stops_no_run(m, Backend::Bwrap);
    landlock_a_commands_flock_on_its_directory_stops_no_run => |m| a_commands_flock_on_its_directory_stops_no_run(m, Backend::Landlock);
    bwrap_another_users_lock_names_stop_no_run => |m| another_users_lock_names_stop_no_run(m, Backend::Bwrap);
    landlock_another_users_lock_names_stop_no_run => |m| another_users_lock_names_stop_no_run(m, Backend::Landlock);
    bwrap_a_gitdir_file_inside_the_root_is_protected => |m| a_gitdir_file_inside_the_root_is_protected(m, Backend::Bwrap);
    landlock_a_gitdir_file_inside_the_root_is_protected => |m| a_gitdir_file_inside_the_root_is_protected(m, Backend::Landlock);
    bwrap_a_dead_runs_scan_keeps_a_live_runs_cover => |m| a_dead_runs_scan_keeps_a_live_runs_cover(m, Backend::Bwrap);
    landlock_a_dead_runs_scan_keeps_a_live_runs_cover => |m| a_dead_runs_scan_keeps_a_live_runs_cover(m, Backend::Landlock);
    bwrap_protected_parent_removed => |m| protected_parent_removed(m, Backend::Bwrap);
    landlock_protected_parent_removed => |m| protected_parent_removed(m, Backend::Landlock);
    bwrap_protected_parent_renamed_to_a_fresh_directory => |m| protected_parent_renamed_to_a_fresh_directory(m, Backend::Bwrap);
    landlock_protected_parent_renamed_to_a_fresh_directory => |m| protected_parent_renamed_to_a_fresh_directory(m, Backend::Landlock);
    bwrap_hard_link_from_an_unconfined_run => |m| hard_link_from_an_unconfined_run(m, Backend::Bwrap);
    landlock_hard_link_from_an_unconfined_run => |m| hard_link_from_an_unconfined_run(m, Backend::Landlock);
    bwrap_hard_link_into_a_protected_directory => |m| hard_link_into_a_protected_directory(m, Backend::Bwrap);
    landlock_hard_link_into_a_protected_directory => |m| hard_link_into_a_protected_directory(m, Backend::Landlock);
}
