//! The scenarios every real host goes through, written once: a host's test file implements
//! [`Host`] (how one headless turn is run, what its tool results say) and [`Install`] (how
//! cordon is wired into it), and lists the scenarios it passes, each a `#[test]` calling one
//! function here.
//!
//! The assertions are the hosts' own, unchanged: what differs between hosts (the text a host
//! puts around an exit status, whether a tool result keeps the command's lines, what cordon's
//! deny says besides the policy's reason) is a constant of the host, not a looser check.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::{audit_lock_held, host_bin, wait_deadline, Mock, Turn, POLICY};

/// How long one headless turn of a host may take on a loaded 2-core machine.
const TURN_LIMIT: Duration = Duration::from_secs(240);

/// A project (the policy is its `cordon.toml`) and a HOME of its own; with `user` set (the
/// tests run as root), the host runs as that unprivileged user and owns both.
pub struct Env {
    pub project: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub user: Option<(u32, u32)>,
}

impl Env {
    /// A fresh project holding [`POLICY`] and a fresh HOME under the system's temp directory.
    pub fn new(user: Option<(u32, u32)>) -> Env {
        Env::with_home(user, tempfile::tempdir().unwrap())
    }

    /// As [`Env::new`] with `home` as HOME.
    pub fn with_home(user: Option<(u32, u32)>, home: tempfile::TempDir) -> Env {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("cordon.toml"), POLICY).unwrap();
        Env {
            project,
            home,
            user,
        }
    }

    pub fn dir(&self) -> &Path {
        self.project.path()
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The project's policy file.
    pub fn policy(&self) -> PathBuf {
        self.dir().join("cordon.toml")
    }

    /// The uid the host (and so the rewritten command) runs as.
    pub fn uid(&self) -> u32 {
        self.user
            .map_or_else(|| rustix::process::geteuid().as_raw(), |u| u.0)
    }

    /// Hands everything in the project and HOME to the unprivileged user, if any (links
    /// themselves, never what they point at).
    pub fn give(&self) {
        fn chown_all(p: &Path, uid: u32, gid: u32) {
            std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
            if p.is_dir() && !p.is_symlink() {
                for e in std::fs::read_dir(p).unwrap() {
                    chown_all(&e.unwrap().path(), uid, gid);
                }
            }
        }
        if let Some((uid, gid)) = self.user {
            chown_all(self.dir(), uid, gid);
            chown_all(self.home(), uid, gid);
        }
    }

    /// `bin install HOST ARGS --policy cordon.toml` in the project with this HOME and the
    /// variables in `unset` removed (each host's own override of where its settings live).
    pub fn install(&self, bin: &Path, host: &str, args: &[&str], unset: &[&str]) -> Output {
        let mut c = self.cordon(bin);
        for v in unset {
            c.env_remove(v);
        }
        c.args(["install", host])
            .args(args)
            .arg("--policy")
            .arg(self.policy())
            .output()
            .unwrap()
    }

    /// The cordon binary `bin` in the project with this HOME.
    pub fn cordon(&self, bin: &Path) -> Command {
        let mut c = Command::new(bin);
        c.current_dir(self.dir()).env("HOME", self.home());
        c
    }

    /// The host program `name` (from `scripts/test-deps.sh`) in the project, as the user,
    /// with nothing of the test's environment but PATH; HOME, the XDG directories (in HOME,
    /// the host's user's own: cordon's state, trust store and host grants live there) and
    /// the probe variable the policy passes into the sandbox. Everything is handed to the
    /// user first, so the host-specific files must be written before this is called.
    pub fn host(&self, name: &str) -> Command {
        let home = self.home();
        for d in [".state", ".config", ".runtime", ".cache"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        self.give();
        let mut c = Command::new(host_bin(name));
        if let Some((uid, gid)) = self.user {
            c.uid(uid).gid(gid);
        }
        c.current_dir(self.dir())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home)
            .env("CORDON_HOSTS_PROBE", "probe-value")
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_RUNTIME_DIR", home.join(".runtime"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }
}

/// A fresh [`Env`] for `user` with cordon wired into a host by a file of cordon's own
/// (Copilot CLI's hook file, opencode's plugin): `bin install HOST SCOPE EXTRA` with `unset`
/// removed from its environment must succeed and leave the file at `files.0` (in HOME) for
/// `--user`, `files.1` (in the project) for `--project`.
pub fn install_file(
    user: Option<(u32, u32)>,
    bin: &Path,
    (host, scope, extra): (&str, &str, &[&str]),
    unset: &str,
    files: (&str, &str),
) -> Env {
    let e = Env::new(user);
    installed_ok(e.install(bin, host, &[&[scope], extra].concat(), &[unset]));
    let file = match scope {
        "--user" => e.home().join(files.0),
        _ => e.dir().join(files.1),
    };
    assert!(file.is_file(), "no {}", file.display());
    e
}

/// `o`, the output of a `cordon install` that must have succeeded.
pub fn installed_ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "install: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The host's run of one turn, killed (and the test failed) past [`TURN_LIMIT`].
pub fn finish(mut c: Command) -> Output {
    wait_deadline(c.spawn().unwrap(), TURN_LIMIT)
}

/// One agent host as the scenarios drive it.
pub trait Host {
    /// How failures name the host.
    const NAME: &'static str;
    /// A short name for the probe files the allowed scenario tries to write.
    const SLUG: &'static str;
    /// The variable holding the host's model key: the sandbox must not pass it on.
    const KEY: &'static str;
    /// What the host tells the model of a command's exit status 3; None: it does not.
    const EXIT_3: Option<&'static str>;
    /// Whether a tool result keeps the command's output lines as lines (Gemini CLI's is a
    /// JSON encoding of them).
    const LINES: bool = true;
    /// What cordon's deny says to the model through this host besides the policy's reason.
    const DENY_SAYS: &'static [&'static str] = &[];
    /// What an `ask` becomes through this host's hook, besides the policy's reason.
    const ASK_SAYS: &'static [&'static str] = &[];
    /// Whether the allowed scenario also proves cordon's private /tmp (a write there does
    /// not reach the host's /tmp): where an outer sandbox alone would leave /tmp writable.
    const PRIVATE_TMP: bool = false;

    /// The project and HOME.
    fn env(&self) -> &Env;

    /// The host run headless for one turn against `mock`.
    fn run(&self, mock: &Mock) -> Output;

    /// The name of the host's shell tool.
    const SHELL: &'static str;

    /// The host's shell tool called with `line`.
    fn shell(line: &str) -> Turn {
        Turn {
            tool: Self::SHELL.into(),
            input: json!({ "command": line, "description": "scripted" }),
        }
    }
}

/// How a host's suite wires cordon into a fresh [`Env`].
pub trait Install: Host + Sized {
    /// A fresh [`Env`] for `user`, cordon wired into the host by the cordon binary `bin`
    /// (`cordon install HOST SCOPE EXTRA --policy cordon.toml`, the scope the host's suite
    /// tests; it must succeed).
    fn installed(user: Option<(u32, u32)>, bin: &Path, extra: &[&str]) -> Self;

    /// Installed by the binary under test, no extra arguments.
    fn new(user: Option<(u32, u32)>) -> Self {
        Self::installed(user, Path::new(env!("CARGO_BIN_EXE_cordon")), &[])
    }
}

/// One scripted turn of `t`: the one tool result that came back to the model.
pub fn turn<H: Host>(s: &H, t: Turn) -> String {
    let mock = Mock::start(t.clone());
    let o = s.run(&mock);
    mock.the_one_result(H::NAME, &t.tool, &o)
}

/// A denied shell call never runs, not even the part before the denied command, and the
/// policy's reason reaches the model.
pub fn deny<H: Host>(s: &H) {
    let dir = s.env().dir();
    std::fs::create_dir(dir.join("keep")).unwrap();
    let r = turn(s, H::shell("touch ran-before-deny; rm -rf keep"));
    for says in ["destroys files"].iter().chain(H::DENY_SAYS) {
        assert!(r.contains(says), "{r}");
    }
    assert!(dir.join("keep").is_dir());
    assert!(!dir.join("ran-before-deny").exists(), "{r}");
}

/// An allowed shell call is rewritten and runs kernel-confined (writes to /etc and to HOME
/// outside the project refused) as the host's user, with its output, exit status, cwd and
/// environment intact: the policy's `env` passes, the host's model key does not.
pub fn allow<H: Host>(s: &H) {
    let (dir, pid) = (s.env().dir(), std::process::id());
    let probe = format!("/etc/cordon-hosts-{}-probe-{pid}", H::SLUG);
    let tmp = format!("/tmp/cordon-hosts-{}-probe-{pid}", H::SLUG);
    // Outside the project but the host's user's own: only the sandbox stops a write there.
    let outside = s.env().home().join("outside-probe");
    // The writes sit in a script, out of the line's static analysis: only the kernel sandbox
    // can stop them (as root nothing else would stop the /etc one).
    let mut script = format!(
        "echo x > {probe} || echo etc-refused\necho x > {} || echo home-refused\n",
        outside.display()
    );
    if H::PRIVATE_TMP {
        script.push_str(&format!("echo x > {tmp} || echo tmp-refused\n"));
    }
    script.push_str("echo uid=$(id -u)\n");
    std::fs::write(dir.join("probe.sh"), script).unwrap();
    let r = turn(
        s,
        H::shell(&format!(
            "pwd; echo \"env=$CORDON_HOSTS_PROBE key=${}.\"; sh ./probe.sh; \
             echo out > made.txt; exit 3",
            H::KEY
        )),
    );
    let canon = dir.canonicalize().unwrap();
    assert!(r.contains(canon.to_str().unwrap()), "{r}");
    assert!(r.contains("env=probe-value key=."), "{r}");
    assert!(
        r.contains("etc-refused") && r.contains("home-refused"),
        "{r}"
    );
    let uid = format!("uid={}", s.env().uid());
    if H::LINES {
        assert!(r.lines().any(|l| l == uid), "{r}");
    } else {
        assert!(r.contains(&uid), "{r}");
    }
    if let Some(exit) = H::EXIT_3 {
        assert!(r.contains(exit), "{r}");
    }
    assert!(
        !Path::new(&probe).exists(),
        "{probe} was written: unconfined"
    );
    assert!(
        !outside.exists(),
        "{} was written: unconfined",
        outside.display()
    );
    assert!(
        !(H::PRIVATE_TMP && Path::new(&tmp).exists()),
        "{tmp} was written: not cordon's /tmp"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("made.txt")).unwrap(),
        "out\n"
    );
}

/// An asked call does not run headless (no person to ask through the hook); the policy's
/// reason reaches the model.
pub fn ask<H: Host>(s: &H) {
    let r = turn(s, H::shell("touch ran-before-ask && git push"));
    assert!(!s.env().dir().join("ran-before-ask").exists(), "{r}");
    for says in ["publishes commits"].iter().chain(H::ASK_SAYS) {
        assert!(r.contains(says), "{r}");
    }
}

/// With the cordon binary gone after install, the call is blocked, and the model reads why.
pub fn missing_binary<H: Install>() {
    let bin = tempfile::tempdir().unwrap();
    let copy = bin.path().join("cordon");
    // Written by a `cp` of its own: a child another test thread forked while this process
    // held the copy open for writing keeps that descriptor until its exec, and the copy's
    // first run (the install just below) would fail with ETXTBSY (as cordon-e2e's
    // `BinDir::copy` did in credentials_escape).
    let st = Command::new("cp")
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(st.success(), "cp cordon {}: {st}", copy.display());
    let s = H::installed(None, &copy, &[]);
    std::fs::remove_file(&copy).unwrap();
    let r = turn(&s, H::shell("touch ran-without-cordon"));
    assert!(!s.env().dir().join("ran-without-cordon").exists(), "{r}");
    assert!(r.contains("the call is blocked"), "{r}");
}

/// A decision that cannot be made in time (the audit log's lock held): the hook blocks the
/// call when its deadline passes, with a reason saying so, long before the host's own hook
/// timeout (after which the host would run it).
pub fn deadline<H: Install>() {
    let cordon = Path::new(env!("CARGO_BIN_EXE_cordon"));
    let s = H::installed(None, cordon, &["--deadline", "2s"]);
    let (_log, _lock) = audit_lock_held(&s.env().policy());
    let r = turn(&s, H::shell("touch ran-after-deadline"));
    assert!(!s.env().dir().join("ran-after-deadline").exists(), "{r}");
    assert!(
        r.contains("no decision within the hook's 2 s deadline") && r.contains("audit log's lock"),
        "{r}"
    );
}

/// The host's own file-writing tool (`write`: the tool call writing `content` to a path) is
/// decided too: a new file in the project is written; one at `refused` (relative to the
/// project: a file cordon protects) is not, and the model reads cordon's refusal, which
/// says `says`.
pub fn file_write<H: Host>(
    s: &H,
    write: impl Fn(&Path, &str) -> Turn,
    refused: &str,
    content: &str,
    says: &str,
) {
    let ok = s.env().dir().join("notes.txt");
    let r = turn(s, write(&ok, "hello\n"));
    assert_eq!(std::fs::read_to_string(&ok).unwrap(), "hello\n", "{r}");
    let refused = s.env().dir().join(refused);
    let r = turn(s, write(&refused, content));
    assert!(
        !refused.exists(),
        "{} wrote {}: {r}",
        H::NAME,
        refused.display()
    );
    assert!(r.contains(says), "not cordon's refusal: {r}");
}

/// `cordon doctor`'s line for `host` (its first column) and `scope`, run as the test's user
/// in the project with this HOME and `env` set (None: removed).
pub fn doctor_line(e: &Env, host: &str, scope: &str, env: &[(&str, Option<&Path>)]) -> String {
    let mut c = e.cordon(Path::new(env!("CARGO_BIN_EXE_cordon")));
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let o = c.arg("doctor").output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq([host, scope]))
        .unwrap_or_else(|| panic!("no {host} {scope} line in:\n{out}"))
        .to_string()
}

/// A definition file a host runs commands from with no hook and no sandbox: a skill's
/// ``!`cmd` `` lines, the hooks or MCP servers a sub-agent's definition names.
pub struct Definition<'a> {
    /// Where the host reads it, relative to the project.
    pub rel: &'a str,
    /// Its text; `{dir}` stands for the project (canonical), where `ran` and `keep` are.
    pub text: &'a str,
    /// The calls that make the host run it (the model's `Skill`, `Agent`, `task`).
    pub load: Vec<Turn>,
    /// What the first of them returns once the file is gone.
    pub missing: &'a str,
}

/// Issue 21 class 5 (round 9): a session writes `d` with the host's shell tool, on the line
/// (the analysis must not allow it: it asks) and, in a fresh project, from a script (the
/// after-run scan must move it aside); `acknowledge` then does what the operator does for the
/// host to take it (Gemini CLI asks for a project's agent); the next session makes the calls
/// that run it. Nothing of it may run: `keep` stays and `ran` is not made. The host runs as
/// `user` (None: as the tests); `session` runs it for one turn.
pub fn definition_an_earlier_run_wrote<H: Install>(
    d: Definition,
    user: Option<(u32, u32)>,
    session: impl Fn(&H, &Mock) -> Output,
    acknowledge: impl Fn(&H, &Path),
) {
    for script in [false, true] {
        let s = H::new(user);
        let dir = s.env().dir().canonicalize().unwrap();
        std::fs::create_dir(dir.join("keep")).unwrap();
        let text = d.text.replace("{dir}", &dir.display().to_string());
        let parent = Path::new(d.rel).parent().unwrap().display().to_string();
        let write = format!("mkdir -p {parent} && printf '%s' '{text}' > {}", d.rel);
        std::fs::write(dir.join("mk.sh"), &write).unwrap();
        let line = if script { "sh mk.sh" } else { write.as_str() };
        let mock = Mock::start(H::shell(line));
        let o = session(&s, &mock);
        let wrote = mock.the_one_result(H::NAME, H::SHELL, &o);
        acknowledge(&s, &dir.join(d.rel));
        let mock = Mock::script(d.load.clone());
        let o = session(&s, &mock);
        let results = mock.tool_results();
        let shown = format!(
            "{line}: {wrote}\nthen: {results:?}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        stopped_where_seen(
            &dir,
            &wrote,
            script,
            &format!("what {} names", d.rel),
            &shown,
        );
        assert!(
            results.first().is_some_and(|r| r.contains(d.missing)),
            "{shown}"
        );
    }
}

/// Nothing a plant named ran (`dir/keep` stands, no `dir/ran`), and the layer that sees the
/// plant stopped it: the analysis for a line that writes it ("on the persistence surface"),
/// the after-run scan for a script ("moved aside"). `what` names what would have run.
pub fn stopped_where_seen(dir: &Path, wrote: &str, script: bool, what: &str, shown: &str) {
    assert!(
        dir.join("keep").is_dir() && !dir.join("ran").exists(),
        "{what} ran: {shown}"
    );
    let by = if script {
        "moved aside"
    } else {
        "on the persistence surface"
    };
    assert!(wrote.contains(by), "{shown}");
}

/// Every tool the host offers its model (one turn that asks for none, `run`) is one of
/// `known`: the tools whose input cordon's hook reads (docs/hooks.md, by host) or leaves to
/// the host for a reason written there. A release that adds a tool fails here until the tool
/// has been read: one that writes or runs and that the hook does not decide is a hole
/// (issue 21 class 5).
pub fn offers_only_known_tools<H: Host>(s: &H, run: impl Fn(&H, &Mock) -> Output, known: &[&str]) {
    let mock = Mock::start(Turn {
        tool: "cordon-asks-for-no-tool".into(),
        input: json!({}),
    });
    let o = run(s, &mock);
    let offered = mock.offered_tools();
    assert!(
        !offered.is_empty(),
        "{} offered no tool: {}",
        H::NAME,
        String::from_utf8_lossy(&o.stderr)
    );
    let unread: Vec<&String> = offered
        .iter()
        .filter(|t| !known.contains(&t.as_str()))
        .collect();
    assert!(
        unread.is_empty(),
        "{} offers tools cordon has not read: {unread:?} (read each one's input schema and \
         code, then decide it in crates/cli/src/hook or say in docs/hooks.md why it is left)",
        H::NAME
    );
}

/// A directory marketplace `m` at `root` with one plugin `x` (in `root/plug`) whose hooks are
/// `hooks`, in Claude Code's layout (`.claude-plugin/`), which Codex reads too: what
/// `claude plugin marketplace add DIR` and `codex plugin marketplace add DIR` take.
pub fn marketplace(root: &Path, hooks: &Value) {
    let plug = root.join("plug");
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plug.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plug.join("hooks")).unwrap();
    let m = json!({ "name": "m", "owner": { "name": "o" },
        "plugins": [{ "name": "x", "source": "./plug", "description": "d" }] });
    std::fs::write(root.join(".claude-plugin/marketplace.json"), m.to_string()).unwrap();
    let x = json!({ "name": "x", "version": "1.0.0", "description": "d" });
    std::fs::write(plug.join(".claude-plugin/plugin.json"), x.to_string()).unwrap();
    std::fs::write(plug.join("hooks/hooks.json"), hooks.to_string()).unwrap();
}
