//! The file tools against real files: symlinks, hardlinks, `..`, absolute paths, NUL bytes,
//! devices, fifos, sockets, every policy knob, edits, previews, execution and a race.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_policy::verdict::{Decision, RuleRef};
use cordon_policy::{Action, Policy};
use cordon_tools::files::{FileOp, FileTools, Limits};
use cordon_tools::tool::{Assessment, Preview, Tool, ToolError, Toolbox};
use serde_json::{json, Value};

/// A temporary tree: `base/ws` (root `ws`) and `base/outside` (no root), plus whatever the
/// policy body adds. `base` is canonical.
struct Fx {
    _dir: tempfile::TempDir,
    base: PathBuf,
    tools: Arc<FileTools>,
    policy: Policy,
}

/// What the approval engine decides for an assessment, asked as the gate asks it (the keys,
/// the file access, the concerns): the tools hand facts, the engine decides.
fn decide(policy: &Policy, a: &Assessment) -> Decision {
    use cordon_approval::{By, Concern, Engine, Key, Request};
    let mut req = Request::new("t", a.tool.clone(), vec![Key::new(a.keys.clone())]);
    if let Some(access) = &a.access {
        req = req.with_file(access.clone());
    }
    for c in &a.concerns {
        req = req.with_concern(Concern::new(c.level.action(), c.check, c.reason.clone()));
    }
    let x = Engine::new(policy).explain(&req);
    let rule = match x.by().clone() {
        By::Tool(r) => r,
        By::Default { .. } => RuleRef::Default,
        By::ToolConfig { tool, location } => RuleRef::Rule {
            location,
            pattern: format!("[tools.{tool}]"),
        },
        other => panic!("decided by {other:?}"),
    };
    Decision {
        action: x.action(),
        reason: x.reason().to_string(),
        rule,
    }
}

impl Fx {
    fn new(body: &str) -> Fx {
        Fx::with(body, Limits::default(), |_| {})
    }

    fn with(body: &str, limits: Limits, setup: impl FnOnce(&Path)) -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["ws", "outside", "ro", "docs"] {
            std::fs::create_dir(base.join(d)).unwrap();
        }
        std::fs::write(base.join("outside/secret.txt"), "SECRET").unwrap();
        setup(&base);
        let text = format!("version = 1\n{body}");
        let policy = Policy::parse(&text, "p.toml", &base).unwrap();
        let tools = FileTools::new(&policy, limits).unwrap();
        Fx {
            _dir: dir,
            base,
            tools,
            policy,
        }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    fn tool(&self, op: FileOp) -> impl Tool {
        self.tools.tool(op)
    }

    fn assess(&self, op: FileOp, args: Value) -> Result<Assessment, ToolError> {
        self.tool(op).assess(&args)
    }

    fn ok(&self, op: FileOp, args: Value) -> Assessment {
        self.assess(op, args.clone())
            .unwrap_or_else(|e| panic!("{op:?} {args}: {e}"))
    }

    /// The engine's decision on the assessment.
    fn decide(&self, a: &Assessment) -> Decision {
        decide(&self.policy, a)
    }

    /// The engine's decision's action and rule.
    fn verdict(&self, op: FileOp, args: Value) -> (Action, String) {
        let d = self.decide(&self.ok(op, args));
        (d.action, d.rule.to_string())
    }

    fn run(&self, op: FileOp, args: Value) -> Result<Value, ToolError> {
        let t = self.tool(op);
        let a = t.assess(&args)?;
        t.execute(&a)
    }
}

const WS: &str = "[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n";
const RO: &str = "[sandbox.paths.ro]\nroot = \"ro\"\nmode = \"ro\"\n";

fn deny(tag: &str) -> (Action, String) {
    (Action::Deny, format!("builtin:{tag}"))
}

fn allow() -> (Action, String) {
    (Action::Allow, "default".into())
}

fn path(p: &str) -> Value {
    json!({ "path": p })
}

fn failed(r: Result<Assessment, ToolError>) -> String {
    match r {
        Err(ToolError::Failed { message, .. }) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

// ---------------------------------------------------------------- paths

#[test]
fn read_inside_a_root() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/a.txt"), "hello\n").unwrap();
    let a = fx.ok(FileOp::Read, path("ws/a.txt"));
    assert_eq!(
        (fx.decide(&a).action, fx.decide(&a).rule.to_string()),
        allow()
    );
    assert_eq!(a.keys, ["read_file", "ws/a.txt"]);
    assert_eq!(
        a.presentation.preview,
        Preview::Content {
            text: "hello\n".into(),
            truncated_bytes: 0
        }
    );
    let out = fx.tool(FileOp::Read).execute(&a).unwrap();
    assert_eq!(out["content"], "hello\n");
}

#[test]
fn dot_dot_inside_is_fine_and_escapes_are_denied() {
    let fx = Fx::new(WS);
    std::fs::create_dir(fx.p("ws/a")).unwrap();
    std::fs::write(fx.p("ws/b.txt"), "b").unwrap();
    let a = fx.ok(FileOp::Read, path("ws/a/../b.txt"));
    assert_eq!(fx.decide(&a).action, Action::Allow);
    assert_eq!(a.keys[1], "ws/b.txt", "keys name the real location");
    assert_eq!(a.args["path"], "ws/b.txt");
    for p in [
        "ws/../outside/secret.txt",
        "../outside/secret.txt",
        "ws/a/../../outside/secret.txt",
        "ws/./../outside/secret.txt",
        "./../ws/b.txt",
    ] {
        assert_eq!(fx.verdict(FileOp::Read, path(p)), deny("path"), "{p}");
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("path"),
            "{p}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(fx.p("outside/secret.txt")).unwrap(),
        "SECRET"
    );
}

#[test]
fn absolute_paths_inside_a_root_only() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/a.txt"), "a").unwrap();
    let abs = fx.p("ws/a.txt");
    let a = fx.ok(FileOp::Read, path(abs.to_str().unwrap()));
    assert_eq!(fx.decide(&a).action, Action::Allow);
    assert_eq!(a.keys[1], "ws/a.txt");
    for p in [
        fx.p("outside/secret.txt"),
        PathBuf::from("/etc/passwd"),
        fx.p("ws/../outside/secret.txt"),
        fx.p("ws2/a.txt"),
    ] {
        assert_eq!(
            fx.verdict(FileOp::Read, path(p.to_str().unwrap())),
            deny("path"),
            "{}",
            p.display()
        );
    }
}

#[test]
fn nul_bytes_empty_paths_and_unknown_roots_are_denied() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/a.txt"), "a").unwrap();
    for p in [
        "ws/a.txt\0.md",
        "",
        "nope/a.txt",
        "outside/secret.txt",
        "ws\0/a.txt",
    ] {
        let a = fx.ok(FileOp::Read, path(p));
        assert_eq!(
            (fx.decide(&a).action, fx.decide(&a).rule.to_string()),
            deny("path"),
            "{p:?}"
        );
        assert!(!fx.decide(&a).reason.is_empty());
    }
    let a = fx.ok(FileOp::Read, path("nope/a.txt"));
    assert!(
        fx.decide(&a).reason.contains("roots: ws"),
        "{}",
        fx.decide(&a).reason
    );
}

#[test]
fn symlink_inside_to_inside_is_followed_for_reads() {
    let fx = Fx::new(WS);
    std::fs::create_dir(fx.p("ws/real")).unwrap();
    std::fs::write(fx.p("ws/real/a.txt"), "real").unwrap();
    symlink("real/a.txt", fx.p("ws/link.txt")).unwrap();
    symlink("real", fx.p("ws/dirlink")).unwrap();
    symlink(fx.p("ws/real/a.txt"), fx.p("ws/abslink.txt")).unwrap();
    for p in ["ws/link.txt", "ws/dirlink/a.txt"] {
        let a = fx.ok(FileOp::Read, path(p));
        assert_eq!(fx.decide(&a).action, Action::Allow, "{p}");
        assert_eq!(a.keys[1], "ws/real/a.txt", "{p}");
    }
    // RESOLVE_BENEATH refuses every absolute symlink, even one that names a file inside.
    assert_eq!(
        fx.verdict(FileOp::Read, path("ws/abslink.txt")),
        deny("path")
    );
    // Writing through a directory symlink that stays inside is fine.
    fx.run(
        FileOp::Write,
        json!({"path": "ws/dirlink/b.txt", "content": "b"}),
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(fx.p("ws/real/b.txt")).unwrap(), "b");
}

#[test]
fn symlinks_leaving_the_root_are_denied() {
    let fx = Fx::new(WS);
    symlink(fx.p("outside/secret.txt"), fx.p("ws/abs.txt")).unwrap();
    symlink("../outside/secret.txt", fx.p("ws/rel.txt")).unwrap();
    symlink(fx.p("outside"), fx.p("ws/outdir")).unwrap();
    symlink("..", fx.p("ws/up")).unwrap();
    symlink("/etc", fx.p("ws/etc")).unwrap();
    std::fs::create_dir(fx.p("ws/sub")).unwrap();
    symlink("../../outside", fx.p("ws/sub/esc")).unwrap();
    for p in [
        "ws/outdir/secret.txt",
        "ws/up/outside/secret.txt",
        "ws/sub/esc/secret.txt",
    ] {
        assert_eq!(fx.verdict(FileOp::Read, path(p)), deny("path"), "{p}");
        assert_eq!(
            fx.verdict(
                FileOp::Edit,
                json!({"path": p, "old": "SECRET", "new": "x"})
            ),
            deny("path"),
            "{p}"
        );
        assert_eq!(fx.verdict(FileOp::Delete, path(p)), deny("path"), "{p}");
    }
    // A final symlink leading outside: never read, never written through.
    assert_eq!(fx.verdict(FileOp::Read, path("ws/rel.txt")), deny("path"));
    assert_eq!(
        fx.verdict(
            FileOp::Edit,
            json!({"path": "ws/rel.txt", "old": "SECRET", "new": "x"})
        ),
        deny("symlink")
    );
    // A symlinked directory component that leaves the root: denied for writes and lists too.
    for p in ["ws/outdir/new.txt", "ws/sub/esc/new.txt", "ws/up/x.txt"] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("path"),
            "{p}"
        );
    }
    assert_eq!(fx.verdict(FileOp::List, path("ws/outdir")), deny("path"));
    assert_eq!(fx.verdict(FileOp::List, path("ws/up")), deny("path"));
    assert_eq!(
        fx.verdict(FileOp::Read, path("ws/etc/passwd")),
        deny("path")
    );
    // A symlink as the last component is not written through, even inside the root.
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ws/abs.txt", "content": "x"})),
        deny("symlink")
    );
    assert_eq!(
        std::fs::read_to_string(fx.p("outside/secret.txt")).unwrap(),
        "SECRET"
    );
    assert_eq!(
        std::fs::read_dir(fx.p("outside")).unwrap().count(),
        1,
        "nothing created outside"
    );
}

#[test]
fn symlink_loops_are_denied() {
    let fx = Fx::new(WS);
    symlink("loop2", fx.p("ws/loop1")).unwrap();
    symlink("loop1", fx.p("ws/loop2")).unwrap();
    assert_eq!(fx.verdict(FileOp::Read, path("ws/loop1")), deny("path"));
}

#[test]
fn writing_or_editing_through_a_final_symlink_is_denied_deleting_removes_the_link() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/target.txt"), "t").unwrap();
    symlink("target.txt", fx.p("ws/link.txt")).unwrap();
    symlink(fx.p("outside/secret.txt"), fx.p("ws/out.txt")).unwrap();
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/link.txt", "content": "x"})
        ),
        deny("symlink")
    );
    assert_eq!(
        fx.verdict(
            FileOp::Edit,
            json!({"path": "ws/link.txt", "old": "t", "new": "x"})
        ),
        deny("symlink")
    );
    let a = fx.ok(FileOp::Delete, path("ws/out.txt"));
    assert_eq!(fx.decide(&a).action, Action::Allow);
    assert!(
        a.presentation.summary.contains("symlink"),
        "{}",
        a.presentation.summary
    );
    fx.tool(FileOp::Delete).execute(&a).unwrap();
    assert_eq!(
        fx.p("ws/out.txt").symlink_metadata().unwrap_err().kind(),
        std::io::ErrorKind::NotFound,
        "the link is gone"
    );
    assert_eq!(
        std::fs::read_to_string(fx.p("outside/secret.txt")).unwrap(),
        "SECRET",
        "its target is untouched"
    );
    assert_eq!(std::fs::read_to_string(fx.p("ws/target.txt")).unwrap(), "t");
}

#[test]
fn hardlinks_read_as_inside_and_writes_replace_the_link() {
    // Documented decision: a hardlink inside a root is inside by path (as Landlock sees it).
    let fx = Fx::new(WS);
    if std::fs::hard_link(fx.p("outside/secret.txt"), fx.p("ws/hard.txt")).is_err() {
        panic!("cannot create a hardlink in the temp dir");
    }
    let a = fx.ok(FileOp::Read, path("ws/hard.txt"));
    assert_eq!(fx.decide(&a).action, Action::Allow);
    // A write replaces the link with a new file: the other name keeps the old content.
    fx.run(
        FileOp::Write,
        json!({"path": "ws/hard.txt", "content": "new"}),
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(fx.p("ws/hard.txt")).unwrap(), "new");
    assert_eq!(
        std::fs::read_to_string(fx.p("outside/secret.txt")).unwrap(),
        "SECRET"
    );
    std::fs::hard_link(fx.p("outside/secret.txt"), fx.p("ws/hard2.txt")).unwrap();
    fx.run(
        FileOp::Edit,
        json!({"path": "ws/hard2.txt", "old": "SECRET", "new": "EDITED"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.p("outside/secret.txt")).unwrap(),
        "SECRET"
    );
}

#[test]
#[cfg(target_os = "linux")] // mknodat; macOS: walk.rs tests the same refusal
fn devices_are_denied() {
    let fx = Fx::new(WS);
    // Symlinked in: /dev/null is outside the root.
    symlink("/dev/null", fx.p("ws/null")).unwrap();
    assert_eq!(fx.verdict(FileOp::Read, path("ws/null")), deny("path"));
    // A real device node inside the root: creating one needs CAP_MKNOD, so the tests run as
    // root (CI does). Without it the case cannot be tested, and the test says so.
    if let Err(e) = rustix::fs::mknodat(
        rustix::fs::CWD,
        fx.p("ws/dev").as_path(),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    ) {
        panic!(
            "mknod of a device node failed ({e}): run the tests as root (CAP_MKNOD), as CI does"
        );
    }
    assert_eq!(fx.verdict(FileOp::Read, path("ws/dev")), deny("file_type"));
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ws/dev", "content": "x"})),
        deny("file_type")
    );
    assert_eq!(
        fx.verdict(FileOp::Delete, path("ws/dev")),
        deny("file_type")
    );
    let a = fx.ok(FileOp::Read, path("ws/dev"));
    assert!(
        fx.decide(&a).reason.contains("character device"),
        "{}",
        fx.decide(&a).reason
    );
}

#[test]
#[cfg(target_os = "linux")] // mknodat; macOS: walk.rs tests the same refusal
fn fifos_and_sockets_are_denied_without_blocking() {
    let fx = Fx::new(WS);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fx.p("ws/fifo").as_path(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o666),
        0,
    )
    .unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(fx.p("ws/sock")).unwrap();
    for p in ["ws/fifo", "ws/sock"] {
        // Opening a fifo for reading would block without a writer: the assessment must not.
        assert_eq!(fx.verdict(FileOp::Read, path(p)), deny("file_type"), "{p}");
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("file_type"),
            "{p}"
        );
        assert_eq!(
            fx.verdict(FileOp::Edit, json!({"path": p, "old": "a", "new": "b"})),
            deny("file_type"),
            "{p}"
        );
    }
    let a = fx.ok(FileOp::Read, path("ws/fifo"));
    assert!(
        fx.decide(&a).reason.contains("fifo"),
        "{}",
        fx.decide(&a).reason
    );
}

// ---------------------------------------------------------------- policy knobs

#[test]
fn mode_ro_denies_writes_but_not_reads() {
    let fx = Fx::new(&format!("{WS}{RO}"));
    std::fs::write(fx.p("ro/a.txt"), "a").unwrap();
    assert_eq!(fx.verdict(FileOp::Read, path("ro/a.txt")), allow());
    assert_eq!(fx.verdict(FileOp::List, path("ro")), allow());
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ro/a.txt", "content": "x"})),
        deny("mode")
    );
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ro/new/b.txt", "content": "x"})
        ),
        deny("mode")
    );
    assert_eq!(
        fx.verdict(
            FileOp::Edit,
            json!({"path": "ro/a.txt", "old": "a", "new": "b"})
        ),
        deny("mode")
    );
    assert_eq!(fx.verdict(FileOp::Delete, path("ro/a.txt")), deny("mode"));
    let a = fx.ok(FileOp::Delete, path("ro/a.txt"));
    assert!(
        fx.decide(&a).reason.contains("read-only root `ro`"),
        "{}",
        fx.decide(&a).reason
    );
    assert!(matches!(
        fx.tool(FileOp::Delete).execute(&a),
        Err(ToolError::Denied { .. })
    ));
    assert!(fx.p("ro/a.txt").exists());
}

#[test]
fn a_read_only_root_nested_in_a_writable_one_stays_read_only() {
    let fx = Fx::with(
        "[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n[sandbox.paths.inner]\nroot = \"ws/inner\"\nmode = \"ro\"\n",
        Limits::default(),
        |b| std::fs::create_dir(b.join("ws/inner")).unwrap(),
    );
    std::fs::create_dir(fx.p("ws/inner/d")).unwrap();
    symlink("inner/d", fx.p("ws/alias")).unwrap();
    for p in ["ws/inner/x.txt", "ws/alias/x.txt", "inner/x.txt"] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("mode"),
            "{p}"
        );
    }
    let a = fx.ok(FileOp::Write, json!({"path": "ws/y.txt", "content": "x"}));
    assert_eq!(fx.decide(&a).action, Action::Allow);
}

#[test]
fn protected_paths_stay_read_only_inside_writable_roots() {
    let fx = Fx::with(
        &format!("[sandbox]\nprotected = [\".git/hooks\", \".git/config\"]\n{WS}"),
        Limits::default(),
        |b| {
            std::fs::create_dir_all(b.join("ws/.git/hooks")).unwrap();
            std::fs::write(b.join("ws/.git/config"), "[core]\n").unwrap();
        },
    );
    symlink(".git/hooks", fx.p("ws/hooks")).unwrap();
    for p in [
        "ws/.git/hooks/pre-commit",
        "ws/hooks/pre-commit",
        "ws/.git/config",
    ] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("protected"),
            "{p}"
        );
    }
    assert_eq!(
        fx.verdict(FileOp::Delete, path("ws/.git/config")),
        deny("protected")
    );
    assert_eq!(fx.verdict(FileOp::Read, path("ws/.git/config")), allow());
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/.git/HEAD", "content": "x"})
        ),
        allow()
    );
}

#[test]
fn suffixes_limit_the_files_touched() {
    let fx = Fx::new(
        "[sandbox.paths.docs]\nroot = \"docs\"\nmode = \"rw\"\nsuffixes = [\".md\", \".txt\"]\n",
    );
    std::fs::write(fx.p("docs/a.md"), "a").unwrap();
    std::fs::write(fx.p("docs/key.pem"), "k").unwrap();
    symlink("key.pem", fx.p("docs/alias.md")).unwrap();
    std::fs::create_dir(fx.p("docs/sub")).unwrap();
    assert_eq!(fx.verdict(FileOp::Read, path("docs/a.md")), allow());
    assert_eq!(
        fx.verdict(FileOp::Read, path("docs/key.pem")),
        deny("suffix")
    );
    assert_eq!(
        fx.verdict(FileOp::Read, path("docs/missing.pem")),
        deny("suffix"),
        "policy first, existence second"
    );
    assert_eq!(
        fx.verdict(FileOp::Read, path("docs/alias.md")),
        deny("suffix"),
        "the file actually read counts"
    );
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "docs/b.sh", "content": "x"})),
        deny("suffix")
    );
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "docs/b.txt", "content": "x"})),
        allow()
    );
    assert_eq!(
        fx.verdict(FileOp::Delete, path("docs/key.pem")),
        deny("suffix")
    );
    let out = fx.run(FileOp::List, path("docs")).unwrap();
    let names: Vec<&str> = out["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a.md", "alias.md", "sub"]);
    assert_eq!(out["hidden_by_suffix"], 1);
}

#[test]
fn read_and_write_approval_ask() {
    let fx = Fx::new(
        "[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\nread_approval = true\n[sandbox.paths.docs]\nroot = \"docs\"\nmode = \"rw\"\nwrite_approval = true\n",
    );
    for r in ["ws", "docs"] {
        std::fs::write(fx.p(&format!("{r}/a.txt")), "a").unwrap();
    }
    let ask = |tag: &str| (Action::Ask, format!("builtin:{tag}"));
    assert_eq!(
        fx.verdict(FileOp::Read, path("ws/a.txt")),
        ask("read_approval")
    );
    assert_eq!(fx.verdict(FileOp::List, path("ws")), ask("read_approval"));
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ws/a.txt", "content": "b"})),
        allow()
    );
    assert_eq!(fx.verdict(FileOp::Read, path("docs/a.txt")), allow());
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "docs/a.txt", "content": "b"})),
        ask("write_approval")
    );
    assert_eq!(
        fx.verdict(
            FileOp::Edit,
            json!({"path": "docs/a.txt", "old": "a", "new": "b"})
        ),
        ask("write_approval")
    );
    assert_eq!(
        fx.verdict(FileOp::Delete, path("docs/a.txt")),
        ask("write_approval")
    );
    // Deny checks come before asks.
    assert_eq!(
        fx.verdict(FileOp::Read, path("ws/../outside/secret.txt")),
        deny("path")
    );
}

#[test]
fn size_limits() {
    let small = Limits {
        max_read: 100,
        max_write: 50,
        ..Limits::default()
    };
    let fx = Fx::with(WS, small, |_| {});
    std::fs::write(fx.p("ws/big.txt"), "x".repeat(101)).unwrap();
    std::fs::write(fx.p("ws/ok.txt"), "x".repeat(100)).unwrap();
    assert_eq!(fx.verdict(FileOp::Read, path("ws/big.txt")), deny("size"));
    assert_eq!(fx.verdict(FileOp::Read, path("ws/ok.txt")), allow());
    assert_eq!(
        fx.verdict(
            FileOp::Edit,
            json!({"path": "ws/big.txt", "old": "xx", "new": "y"})
        ),
        deny("size")
    );
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/n.txt", "content": "y".repeat(51)})
        ),
        deny("size")
    );
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/n.txt", "content": "y".repeat(50)})
        ),
        allow()
    );
    // Overwriting a file too large to diff is allowed; the summary says what is replaced.
    let a = fx.ok(FileOp::Write, json!({"path": "ws/big.txt", "content": "z"}));
    assert_eq!(fx.decide(&a).action, Action::Allow);
    assert!(
        a.presentation.summary.contains("replaces 101 bytes"),
        "{}",
        a.presentation.summary
    );

    // The default limit is 10 MiB (a sparse file: nothing is written).
    let fx = Fx::new(WS);
    let f = std::fs::File::create(fx.p("ws/huge.bin")).unwrap();
    f.set_len((10 << 20) + 1).unwrap();
    assert_eq!(fx.verdict(FileOp::Read, path("ws/huge.bin")), deny("size"));
    let a = fx.ok(FileOp::Read, path("ws/huge.bin"));
    assert!(
        fx.decide(&a).reason.contains("10485760"),
        "{}",
        fx.decide(&a).reason
    );
}

// ---------------------------------------------------------------- write, edit, previews

#[test]
fn write_new_file_previews_content_and_creates_directories() {
    let fx = Fx::new(WS);
    let a = fx.ok(
        FileOp::Write,
        json!({"path": "ws/new/dir/a.txt", "content": "hi\n"}),
    );
    assert_eq!(a.keys, ["write_file", "ws/new/dir/a.txt"]);
    assert_eq!(
        a.presentation.preview,
        Preview::Content {
            text: "hi\n".into(),
            truncated_bytes: 0
        }
    );
    assert!(a
        .presentation
        .summary
        .starts_with("create ws/new/dir/a.txt"));
    assert!(!fx.p("ws/new").exists(), "assessment changes nothing");
    let out = fx.tool(FileOp::Write).execute(&a).unwrap();
    assert_eq!(out["created"], true);
    assert_eq!(
        std::fs::read_to_string(fx.p("ws/new/dir/a.txt")).unwrap(),
        "hi\n"
    );
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(fx.p("ws/new/dir")).unwrap().count(), 1);
}

#[test]
fn overwrite_previews_a_diff_and_keeps_permissions() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/a.sh"), "one\ntwo\nthree\n").unwrap();
    std::fs::set_permissions(fx.p("ws/a.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let a = fx.ok(
        FileOp::Write,
        json!({"path": "ws/a.sh", "content": "one\n2\nthree\n"}),
    );
    assert_eq!(
        a.presentation.preview,
        Preview::Diff {
            unified: "--- a/ws/a.sh\n+++ b/ws/a.sh\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
                .into()
        }
    );
    assert_eq!(a.presentation.summary, "overwrite ws/a.sh (+1 -1 lines)");
    fx.tool(FileOp::Write).execute(&a).unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.p("ws/a.sh")).unwrap(),
        "one\n2\nthree\n"
    );
    let mode = std::fs::metadata(fx.p("ws/a.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
}

#[test]
fn large_new_content_is_truncated_with_the_full_text_kept() {
    let fx = Fx::new(WS);
    let text = "é".repeat(3000); // 6000 bytes, 2-byte characters
    let a = fx.ok(
        FileOp::Write,
        json!({"path": "ws/big.txt", "content": text}),
    );
    let Preview::Content {
        text: shown,
        truncated_bytes,
    } = &a.presentation.preview
    else {
        panic!("{:?}", a.presentation.preview)
    };
    assert_eq!(shown.len(), 4096);
    assert_eq!(*truncated_bytes, 6000 - 4096);
    assert_eq!(a.presentation.full.as_deref(), Some(text.as_str()));
    assert!(a
        .presentation
        .preview
        .to_string()
        .ends_with("… 1904 more bytes not shown"));
}

#[test]
fn binary_files_get_a_size_and_type_line() {
    let fx = Fx::new(WS);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend([0u8; 100]);
    std::fs::write(fx.p("ws/i.png"), &png).unwrap();
    let a = fx.ok(FileOp::Read, path("ws/i.png"));
    assert_eq!(
        a.presentation.preview,
        Preview::Binary {
            size: 108,
            kind: "PNG image".into()
        }
    );
    let out = fx.tool(FileOp::Read).execute(&a).unwrap();
    assert_eq!(out["binary"], true);
    std::fs::write(fx.p("ws/bad.txt"), b"ab\xffcd").unwrap();
    let a = fx.ok(FileOp::Read, path("ws/bad.txt"));
    assert_eq!(
        a.presentation.preview,
        Preview::Binary {
            size: 5,
            kind: "binary data".into()
        }
    );
    let a = fx.ok(
        FileOp::Write,
        json!({"path": "ws/n.bin", "content": "a\u{0}b"}),
    );
    assert!(matches!(
        a.presentation.preview,
        Preview::Binary { size: 3, .. }
    ));
    let a = fx.ok(
        FileOp::Write,
        json!({"path": "ws/i.png", "content": "text"}),
    );
    assert!(
        matches!(a.presentation.preview, Preview::Content { .. }),
        "replacing binary with text shows the new text: {:?}",
        a.presentation.preview
    );
}

#[test]
fn edit_requires_exactly_one_occurrence() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/a.txt"), "alpha\nbeta\nbeta\ngamma aaa\n").unwrap();
    let e = |old: &str| {
        fx.assess(
            FileOp::Edit,
            json!({"path": "ws/a.txt", "old": old, "new": "X"}),
        )
    };
    assert!(failed(e("delta")).contains("`old` does not occur in `ws/a.txt`"));
    assert!(failed(e("beta")).contains("`old` occurs 2 times in `ws/a.txt`"));
    assert!(
        failed(e("aa")).contains("occurs 2 times"),
        "overlapping occurrences are ambiguous too"
    );
    assert!(matches!(e(""), Err(ToolError::InvalidArguments { .. })));
    let a = e("alpha\nbeta\n").unwrap();
    assert_eq!(
        a.presentation.preview,
        Preview::Diff {
            unified: "--- a/ws/a.txt\n+++ b/ws/a.txt\n@@ -1,4 +1,2 @@\n-alpha\n-beta\n-beta\n+Xbeta\n gamma aaa\n"
                .into()
        }
    );
    fx.tool(FileOp::Edit).execute(&a).unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.p("ws/a.txt")).unwrap(),
        "Xbeta\ngamma aaa\n"
    );
    assert!(failed(fx.assess(
        FileOp::Edit,
        json!({"path": "ws/none.txt", "old": "a", "new": "b"})
    ))
    .contains("does not exist"));
    std::fs::write(fx.p("ws/bin"), b"\xff\xfe").unwrap();
    assert!(failed(fx.assess(
        FileOp::Edit,
        json!({"path": "ws/bin", "old": "a", "new": "b"})
    ))
    .contains("not UTF-8"));
}

#[test]
fn execute_refuses_when_the_file_changed_since_the_assessment() {
    let fx = Fx::new(WS);
    std::fs::write(fx.p("ws/a.txt"), "one\n").unwrap();
    let edit = fx.ok(
        FileOp::Edit,
        json!({"path": "ws/a.txt", "old": "one", "new": "two"}),
    );
    let write = fx.ok(FileOp::Write, json!({"path": "ws/a.txt", "content": "w"}));
    let create = fx.ok(FileOp::Write, json!({"path": "ws/b.txt", "content": "b"}));
    let read = fx.ok(FileOp::Read, path("ws/a.txt"));
    std::fs::write(fx.p("ws/a.txt"), "one\nmore\n").unwrap();
    std::fs::write(fx.p("ws/b.txt"), "someone else's").unwrap();
    for (op, a) in [
        (FileOp::Edit, &edit),
        (FileOp::Write, &write),
        (FileOp::Write, &create),
        (FileOp::Read, &read),
    ] {
        assert!(
            matches!(fx.tool(op).execute(a), Err(ToolError::Changed { .. })),
            "{op:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(fx.p("ws/a.txt")).unwrap(),
        "one\nmore\n"
    );
    assert_eq!(
        std::fs::read_to_string(fx.p("ws/b.txt")).unwrap(),
        "someone else's"
    );
}

#[test]
fn a_denied_assessment_never_executes_even_if_edited() {
    let fx = Fx::new(&format!("{WS}{RO}"));
    let mut a = fx.ok(FileOp::Write, json!({"path": "ro/x.txt", "content": "x"}));
    assert_eq!(fx.decide(&a).action, Action::Deny);
    assert!(matches!(
        fx.tool(FileOp::Write).execute(&a),
        Err(ToolError::Denied { .. })
    ));
    // A forged assessment (its refusal removed) does not help: execute assesses again.
    a.concerns.clear();
    assert_eq!(
        fx.decide(&a).action,
        Action::Ask,
        "the engine alone would only ask"
    );
    assert!(matches!(
        fx.tool(FileOp::Write).execute(&a),
        Err(ToolError::Denied { .. })
    ));
    assert!(!fx.p("ro/x.txt").exists());
}

#[test]
fn list_and_delete() {
    let fx = Fx::new(WS);
    std::fs::create_dir(fx.p("ws/d")).unwrap();
    std::fs::write(fx.p("ws/a.txt"), "abc").unwrap();
    symlink("a.txt", fx.p("ws/l")).unwrap();
    let out = fx.run(FileOp::List, path("ws")).unwrap();
    assert_eq!(
        out["entries"],
        json!([
            {"name": "a.txt", "type": "file", "size": 3},
            {"name": "d", "type": "dir"},
            {"name": "l", "type": "symlink"},
        ])
    );
    assert!(failed(fx.assess(FileOp::List, path("ws/a.txt"))).contains("not a directory"));
    assert!(failed(fx.assess(FileOp::Read, path("ws/d"))).contains("is a directory"));
    assert!(failed(fx.assess(FileOp::Delete, path("ws/d"))).contains("is a directory"));
    assert!(failed(fx.assess(FileOp::Delete, path("ws/zz"))).contains("does not exist"));
    let a = fx.ok(FileOp::Delete, path("ws/a.txt"));
    assert_eq!(a.presentation.summary, "delete ws/a.txt (3 bytes)");
    fx.tool(FileOp::Delete).execute(&a).unwrap();
    assert!(!fx.p("ws/a.txt").exists());
}

#[test]
fn arguments_are_validated() {
    let fx = Fx::new(WS);
    let bad = |op: FileOp, args: Value, want: &str| match fx.assess(op, args) {
        Err(ToolError::InvalidArguments { message, .. }) => {
            assert!(message.contains(want), "{message}")
        }
        other => panic!("{other:?}"),
    };
    bad(FileOp::Read, json!({}), "missing argument `path`");
    bad(
        FileOp::Write,
        json!({"path": "ws/a"}),
        "missing argument `content`",
    );
    bad(
        FileOp::Read,
        json!({"path": "ws/a", "mode": "x"}),
        "unknown argument `mode`; read_file takes: path",
    );
    bad(FileOp::Read, json!({"path": 3}), "`path` must be a string");
    bad(FileOp::Read, json!(["ws/a"]), "must be an object");
    let schema = fx.tool(FileOp::Edit).schema();
    assert_eq!(schema["required"], json!(["path", "old", "new"]));
    assert_eq!(schema["additionalProperties"], false);
}

// ---------------------------------------------------------------- toolbox

#[test]
fn toolbox_configured_tools_and_one_source_of_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let text = "version = 1\n[sandbox.paths.w]\nroot = \".\"\nmode = \"rw\"\n[tools.send_email]\napproval = \"deny\"\n[tools.ping]\napproval = \"allow\"\n";
    let policy = Policy::parse(text, "p.toml", dir.path()).unwrap();
    let mut tb = Toolbox::from_policy(&policy).unwrap();
    assert_eq!(
        tb.names(),
        [
            "attach_file",
            "delete_file",
            "edit_file",
            "list_dir",
            "ping",
            "read_file",
            "send_email",
            "write_file"
        ]
    );
    // The tool hands no verdict; the engine decides with `[tools.NAME] approval` as its default.
    let a = tb.assess("send_email", &json!({"to": "bob"})).unwrap();
    assert!(a.concerns.is_empty() && a.access.is_none());
    assert_eq!(decide(&policy, &a).action, Action::Deny);
    assert_eq!(
        decide(&policy, &a).rule.to_string(),
        "p.toml:5:1 ([tools.send_email])"
    );
    assert_eq!(a.keys, ["send_email", "{\"to\":\"bob\"}"]);
    assert!(matches!(
        tb.get("send_email").unwrap().execute(&a),
        Err(ToolError::Denied { .. })
    ));
    let a = tb.assess("ping", &json!({})).unwrap();
    assert_eq!(decide(&policy, &a).action, Action::Allow);
    assert!(matches!(
        tb.get("ping").unwrap().execute(&a),
        Err(ToolError::NotExecutable { .. })
    ));
    tb.replace_configured("ping", |_| Ok(json!("pong")))
        .unwrap();
    assert_eq!(tb.get("ping").unwrap().execute(&a).unwrap(), "pong");
    assert!(matches!(
        tb.assess("nope", &json!({})),
        Err(ToolError::UnknownTool { .. })
    ));
    // Registering code for a tool the policy configures is refused: one source of verdicts.
    let fx = Fx::new(WS);
    let e = tb
        .register(Box::new(fx.tools.tool(FileOp::Read)))
        .unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");

    let text = "version = 1\n[tools.write_file]\napproval = \"allow\"\n";
    let policy = Policy::parse(text, "p.toml", dir.path()).unwrap();
    let e = Toolbox::from_policy(&policy).err().unwrap();
    assert!(e.to_string().contains("configures a built-in tool"), "{e}");
}

/// A tool implemented in code hands facts too; with no rule and no default for it, the engine
/// asks (it used to be allowed by the tool's default verdict).
#[test]
fn a_plain_tool_with_no_opinion_is_decided_by_the_engine() {
    struct Echo;
    impl Tool for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn assess(&self, args: &Value) -> Result<Assessment, ToolError> {
            Ok(Assessment::new("echo", args.clone(), vec!["echo".into()]))
        }
        fn execute(&self, a: &Assessment) -> Result<Value, ToolError> {
            Ok(a.args.clone())
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::parse(
        "version = 1\n[tools.echo]\napproval = \"ask\"\n",
        "p.toml",
        dir.path(),
    )
    .unwrap();
    let mut tb = Toolbox::from_policy(&policy).unwrap();
    let e = tb.register(Box::new(Echo)).unwrap_err();
    assert!(
        e.to_string()
            .contains("declared in the policy (p.toml:2:1)"),
        "{e}"
    );
    let policy = Policy::parse("version = 1\n", "p.toml", dir.path()).unwrap();
    let mut tb = Toolbox::from_policy(&policy).unwrap();
    tb.register(Box::new(Echo)).unwrap();
    let a = tb.assess("echo", &json!({"x": 1})).unwrap();
    assert_eq!(decide(&policy, &a).action, Action::Ask);
    assert_eq!(decide(&policy, &a).rule.to_string(), "default");
    assert_eq!(a.presentation.preview, Preview::None);
}

// ---------------------------------------------------------------- attachments

/// A file shared with another agent is assessed, and carried out, as a read of that path.
#[test]
fn an_attachment_is_assessed_as_a_read() {
    let fx = Fx::new("[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\nsuffixes = [\".txt\"]\n[sandbox.paths.docs]\nroot = \"docs\"\nmode = \"ro\"\nread_approval = true\n");
    std::fs::write(fx.p("ws/a.txt"), "hello\n").unwrap();
    std::fs::write(fx.p("ws/b.sh"), "echo\n").unwrap();
    std::fs::write(fx.p("docs/d.txt"), "doc\n").unwrap();
    std::os::unix::fs::symlink(fx.p("outside/secret.txt"), fx.p("ws/leak.txt")).unwrap();
    let outside = fx.p("outside/secret.txt");
    for p in [
        "ws/a.txt",
        "ws/b.sh",
        "docs/d.txt",
        "ws/leak.txt",
        "ws/../outside/secret.txt",
        outside.to_str().unwrap(),
    ] {
        let read = fx
            .assess(FileOp::Read, path(p))
            .map(|a| (fx.decide(&a).action, fx.decide(&a).rule.to_string()));
        let attach = fx
            .assess(FileOp::Attach, path(p))
            .map(|a| (fx.decide(&a).action, fx.decide(&a).rule.to_string()));
        assert_eq!(format!("{attach:?}"), format!("{read:?}"), "{p}");
    }
    assert_eq!(
        fx.verdict(FileOp::Attach, path("docs/d.txt")).0,
        Action::Ask
    );
    assert_eq!(
        fx.verdict(FileOp::Attach, path("ws/leak.txt")).0,
        Action::Deny
    );
    let out = fx.run(FileOp::Attach, path("ws/a.txt")).unwrap();
    assert_eq!(out["content"], "hello\n");
}

/// The persistence surface (`cordon_policy::surface`): under a read-write root with no
/// approval set, a write, edit or delete there is asked, never allowed by the root's mode
/// alone; under `sandbox.git = "protect"` git's configuration is denied as the kernel denies
/// it; cordon's own files are denied.
#[test]
fn the_persistence_surface_is_never_allowed_by_the_roots_mode_alone() {
    let surface = [
        "ws/.git/config",
        "ws/.git/hooks/pre-commit",
        "ws/.git/commondir",
        "ws/.git/worktrees/w/config.worktree",
        "ws/sub/.git/config",
        "ws/ev/config",
        "ws/ev/hooks/post-checkout",
        "ws/.envrc",
        "ws/deep/er/.envrc",
        "ws/.claude/settings.json",
        "ws/.gemini/settings.json",
        "ws/.codex/hooks.json",
        "ws/.mcp.json",
        "ws/.cargo/config.toml",
        "ws/.vscode/tasks.json",
    ];
    let setup = |b: &Path| {
        std::fs::create_dir_all(b.join("ws/.git/hooks")).unwrap();
        std::fs::write(b.join("ws/.git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(b.join("ws/sub/.git")).unwrap();
        // A bare repository (`git init --bare ev`): git runs its config in `cd ev`.
        for d in ["ws/ev/objects", "ws/ev/refs"] {
            std::fs::create_dir_all(b.join(d)).unwrap();
        }
        std::fs::write(b.join("ws/ev/HEAD"), "ref: refs/heads/main\n").unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    for p in surface {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    assert_eq!(
        fx.verdict(FileOp::Delete, path("ws/.git/config")),
        (Action::Ask, "builtin:surface".into())
    );
    assert_eq!(
        fx.verdict(
            FileOp::Edit,
            json!({"path": "ws/.git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = x"})
        ),
        (Action::Ask, "builtin:surface".into())
    );
    // Not on the surface: as before.
    for p in ["ws/src.rs", "ws/.git/HEAD", "ws/envrc"] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            allow(),
            "{p}"
        );
    }
    // A planted cordon.toml (or rules file) in a root: cordon's, never the agent's.
    for p in ["ws/cordon.toml", "ws/sub/cordon.rules.toml"] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("policy_file"),
            "{p}"
        );
    }
    // sandbox.git = "protect": the kernel keeps git's configuration read-only; so do the tools.
    let fx = Fx::with(
        &format!("[sandbox]\ngit = \"protect\"\n{WS}"),
        Limits::default(),
        setup,
    );
    for p in [
        "ws/.git/config",
        "ws/.git/hooks/x",
        "ws/sub/.git/config",
        "ws/ev/config",
    ] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            deny("protected"),
            "{p}"
        );
    }
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ws/.envrc", "content": "x"})),
        (Action::Ask, "builtin:surface".into())
    );
    // Round 9 (redsurf22): the refusal claims the kernel's read-only binds only where the
    // kernel makes them, the root's own `.git` (`profile::git_protected`); a sandboxed
    // command writes a nested repository's configuration (the scan undoes it).
    let reason = |p: &str| {
        let a = fx.ok(FileOp::Write, json!({"path": p, "content": "x"}));
        fx.decide(&a).reason
    };
    assert!(reason("ws/.git/config").contains("keeps it read-only"));
    for p in ["ws/sub/.git/config", "ws/ev/config"] {
        let r = reason(p);
        assert!(!r.contains("keeps it read-only"), "{p}: {r}");
        assert!(r.contains("after-run scan"), "{p}: {r}");
    }
}

/// docs/mcp.md: the file tools refuse cordon's own files, reads and listings too.
#[test]
fn cordon_own_files_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(base.join("ws")).unwrap();
    let text = format!("version = 1\n{WS}");
    std::fs::write(base.join("ws/cordon.toml"), &text).unwrap();
    std::fs::write(base.join("ws/cordon.rules.toml"), "version = 1\n").unwrap();
    let mut policy = Policy::parse(&text, "cordon.toml", &base).unwrap();
    policy.path = Some(base.join("ws/cordon.toml"));
    // Round 8 (redsurf21): a hard link elsewhere in the root is the same file by another name
    // (read as `notes.txt` before); one to an unrelated file stays readable.
    std::fs::hard_link(base.join("ws/cordon.toml"), base.join("ws/notes.txt")).unwrap();
    std::fs::create_dir(base.join("ws/d")).unwrap();
    std::fs::hard_link(base.join("ws/cordon.rules.toml"), base.join("ws/d/r")).unwrap();
    std::fs::write(base.join("ws/a"), "x").unwrap();
    std::fs::hard_link(base.join("ws/a"), base.join("ws/b")).unwrap();
    let tools = FileTools::new(&policy, Limits::default()).unwrap();
    let a = tools.tool(FileOp::Read).assess(&path("ws/b")).unwrap();
    assert_eq!(decide(&policy, &a).action, Action::Allow);
    for p in [
        "ws/cordon.toml",
        "ws/cordon.rules.toml",
        "ws/notes.txt",
        "ws/d/r",
    ] {
        let a = tools.tool(FileOp::Read).assess(&path(p)).unwrap();
        assert_eq!(
            (
                decide(&policy, &a).action,
                decide(&policy, &a).rule.to_string()
            ),
            deny("policy_file"),
            "{p}"
        );
    }
}

/// Issue 21's red team: a repository made by writes in the order that no check sees — `config`
/// first (the directory is no repository yet), then `objects/…` and `refs/…`, then `HEAD` —
/// was allowed write by write, and git then ran its config (a `git status` in it ran the
/// planted `core.fsmonitor`, checked with the real git below). The write that completes the
/// repository around such a configuration is on the surface: denied under `sandbox.git =
/// "protect"`, asked otherwise.
#[test]
fn writes_that_complete_a_repository_around_a_written_config_are_on_the_surface() {
    let mark_dir = tempfile::tempdir().unwrap();
    let mark = mark_dir.path().join("fsmonitor-ran");
    let hook = mark_dir.path().join("fsmonitor.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for (policy, want) in [
        (
            format!("[sandbox]\ngit = \"protect\"\n{WS}"),
            deny("protected"),
        ),
        (WS.to_string(), (Action::Ask, "builtin:surface".into())),
    ] {
        let fx = Fx::new(&policy);
        let config = format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = {}\n\tfsmonitor = {}\n",
            fx.p("ws").display(),
            hook.display()
        );
        for (p, content) in [
            ("ws/ev/config", config.as_str()),
            ("ws/ev/objects/info/keep", ""),
            ("ws/ev/refs/heads/keep", ""),
        ] {
            let args = json!({"path": p, "content": content});
            assert_eq!(fx.verdict(FileOp::Write, args.clone()), allow(), "{p}");
            fx.run(FileOp::Write, args).unwrap();
        }
        for p in ["ws/ev/HEAD", "ws/ev/refs/x", "ws/ev/objects/x"] {
            // Each completes it where the other two are there.
            let (made, other) = match p {
                "ws/ev/HEAD" => ("ws/ev/HEAD", None),
                "ws/ev/refs/x" => ("ws/ev/refs/x", Some("refs")),
                _ => ("ws/ev/objects/x", Some("objects")),
            };
            let moved = other.map(|d| {
                let from = fx.p(&format!("ws/ev/{d}"));
                let to = fx.p(&format!("ws/ev/{d}.away"));
                std::fs::rename(&from, &to).unwrap();
                std::fs::write(fx.p("ws/ev/HEAD"), "ref: refs/heads/main\n").unwrap();
                (from, to)
            });
            let got = fx.verdict(
                FileOp::Write,
                json!({"path": made, "content": "ref: refs/heads/main\n"}),
            );
            assert_eq!(got, want, "{made} ({policy})");
            if let Some((from, to)) = moved {
                std::fs::rename(&to, &from).unwrap();
                std::fs::remove_file(fx.p("ws/ev/HEAD")).unwrap();
            }
        }
        // A directory without git's configuration is not one: HEAD there is a file.
        std::fs::create_dir_all(fx.p("ws/plain/objects")).unwrap();
        std::fs::create_dir_all(fx.p("ws/plain/refs")).unwrap();
        assert_eq!(
            fx.verdict(
                FileOp::Write,
                json!({"path": "ws/plain/HEAD", "content": "x"})
            ),
            allow()
        );
        // Why it matters: with HEAD there, the real git runs the planted fsmonitor.
        std::fs::write(fx.p("ws/ev/HEAD"), "ref: refs/heads/main\n").unwrap();
        let _ = std::fs::remove_file(&mark);
        let status = std::process::Command::new("git")
            .arg("status")
            .current_dir(fx.p("ws/ev"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", mark_dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git is needed for this test (Debian package `git`)");
        let _ = status;
        assert!(
            mark.exists(),
            "the real git did not run the repository's fsmonitor"
        );
    }
}

/// Round 5 of issue 21's red team (surface21): the files mise reads (`mise/config.toml`, a
/// `conf.d`'s, the `.local` variants), `.tool-versions` (a `path:` version goes first on the
/// PATH of a shell entering the directory, no trust asked: checked with mise 2026.9.15) and the
/// MCP and hook files of VS Code and Cursor are on the surface; so is each of them reached by
/// another spelling (`./`, `..` inside the root, a link to the file or to its directory).
#[test]
fn mise_tool_versions_and_editor_mcp_files_are_on_the_surface_by_any_spelling() {
    let setup = |b: &Path| {
        std::fs::create_dir_all(b.join("ws/sub/.config/mise")).unwrap();
        std::fs::create_dir_all(b.join("ws/m")).unwrap();
        std::fs::write(b.join("ws/.tool-versions"), "node 20\n").unwrap();
        std::os::unix::fs::symlink(".tool-versions", b.join("ws/tv")).unwrap();
        std::os::unix::fs::symlink("sub/.config/mise", b.join("ws/cfg")).unwrap();
        std::os::unix::fs::symlink("m", b.join("ws/mise")).unwrap();
        // The operator's link: Claude Code reads `.claude/settings.json` through it.
        std::fs::create_dir_all(b.join("ws/cc")).unwrap();
        std::os::unix::fs::symlink("cc", b.join("ws/.claude")).unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    for p in [
        "ws/.tool-versions",
        "ws/sub/.tool-versions",
        "ws/mise/config.toml",
        "ws/m/../mise/config.local.toml",
        "ws/.mise/config.local.toml",
        "ws/.config/mise/mise.toml",
        "ws/sub/.config/mise/conf.d/x.toml",
        "ws/mise/conf.d/y.toml",
        "ws/.vscode/mcp.json",
        "ws/.cursor/mcp.json",
        "ws/.cursor/hooks.json",
        "ws/./.tool-versions",
        "ws/sub/../.tool-versions",
        "ws/.tool-versions/",
        "ws/.tool-versions/.",
        "ws//.tool-versions",
        "ws/sub/./../.tool-versions",
        "ws/m/../.claude/settings.json",
        "ws/cfg/config.toml",
        "ws/cfg/conf.d/z.toml",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    assert_eq!(
        fx.verdict(FileOp::Delete, path("ws/.tool-versions")),
        (Action::Ask, "builtin:surface".into())
    );
    // A link at the end is refused whatever it names.
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ws/tv", "content": "x"})),
        deny("symlink")
    );
    for p in ["ws/versions", "ws/m/notes.txt", "ws/.cursor/rules.md"] {
        assert_eq!(
            fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})),
            allow(),
            "{p}"
        );
    }
}

/// Round 5 (surface21): git takes a directory holding `HEAD` and a `commondir` for a
/// repository (a linked worktree's git directory is one) and runs the config of the directory
/// `commondir` names. Written in the order no check saw — `c/config`, `c/objects/…`,
/// `c/refs/…` (no `HEAD` there: no repository), `g/HEAD` (no configuration there) — the write
/// of `g/commondir` makes the repository and is on the surface; so is `g/HEAD` where
/// `commondir` was written first, and any write into such a repository's configuration.
#[test]
fn a_commondir_that_makes_a_repository_is_on_the_surface() {
    for (policy, want) in [
        (
            format!("[sandbox]\ngit = \"protect\"\n{WS}"),
            deny("protected"),
        ),
        (WS.to_string(), (Action::Ask, "builtin:surface".into())),
    ] {
        let fx = Fx::new(&policy);
        for (p, content) in [
            ("ws/c/config", "[core]\n\tpager = x\n"),
            ("ws/c/objects/info/keep", ""),
            ("ws/c/refs/heads/keep", ""),
            ("ws/g/HEAD", "ref: refs/heads/main\n"),
            ("ws/h/commondir", "../c\n"),
        ] {
            let args = json!({"path": p, "content": content});
            assert_eq!(fx.verdict(FileOp::Write, args.clone()), allow(), "{p}");
            fx.run(FileOp::Write, args).unwrap();
        }
        for made in ["ws/g/commondir", "ws/h/HEAD"] {
            let got = fx.verdict(FileOp::Write, json!({"path": made, "content": "x"}));
            assert_eq!(got, want, "{made} ({policy})");
        }
        std::fs::write(fx.p("ws/g/commondir"), "../c\n").unwrap();
        let got = fx.verdict(
            FileOp::Write,
            json!({"path": "ws/g/config", "content": "x"}),
        );
        assert_eq!(got, want, "g/config ({policy})");
        // Why it matters: the real git takes `g` for a repository, its config from `c`.
        let out = std::process::Command::new("git")
            .args(["config", "--show-origin", "core.pager"])
            .current_dir(fx.p("ws/g"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("c/config") && shown.trim_end().ends_with('x'),
            "git did not read c/config from g: {shown} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    let o = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "safe.directory=*",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {o:?}");
    o
}

/// Round 6 (surface21): the directory a repository's `core.hooksPath` names is where git runs
/// hooks from, and a file its configuration includes is git configuration. Read as git reads
/// it — the repository's config and what it includes (`include.path`), relative values at the
/// work tree's top — a write there asks; the real git runs a hook written in either place.
/// A configuration that cannot be read with certainty (git's parser refuses it here) makes
/// every write in the repository ask.
#[test]
fn the_directory_core_hooks_path_names_and_included_config_are_on_the_surface() {
    let setup = |b: &Path| {
        let ws = b.join("ws");
        git(&ws, &["init", "-q"]);
        // The hooks directory named through an include (a shared config kept in the tree).
        git(&ws, &["config", "include.path", "../gitconfig.shared"]);
        std::fs::write(
            ws.join("gitconfig.shared"),
            "[core]\n\thooksPath = tools/hooks\n",
        )
        .unwrap();
        // A nested repository with its own.
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        git(&ws.join("sub"), &["init", "-q"]);
        git(&ws.join("sub"), &["config", "core.hooksPath", ".githooks"]);
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    let ask = (Action::Ask, "builtin:surface".into());
    for p in [
        "ws/tools/hooks/pre-commit",
        "ws/tools/hooks/deeper/x",
        "ws/sub/.githooks/pre-commit",
        "ws/gitconfig.shared",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    for p in [
        "ws/src.rs",
        "ws/.githooks/pre-commit",
        "ws/sub/tools/hooks/x",
        "ws/tools/x",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
    // Why: the real git runs what is written there, at the next commit.
    for (repo, hooks) in [("ws", "ws/tools/hooks"), ("ws/sub", "ws/sub/.githooks")] {
        let ran = fx.p(repo).join("ran");
        std::fs::create_dir_all(fx.p(hooks)).unwrap();
        let hook = fx.p(hooks).join("pre-commit");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        git(&fx.p(repo), &["commit", "-q", "--allow-empty", "-m", "x"]);
        assert!(ran.exists(), "git did not run {}", hook.display());
    }
    // A configuration git's parser refuses (here, the include): nothing can be ruled out in
    // that repository (and those inside it).
    std::fs::write(fx.p("ws/gitconfig.shared"), "[core\n\thooksPath = y\n").unwrap();
    for p in ["ws/src.rs", "ws/sub/src.rs"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
}

/// Round 6 (red21): a repository's `core.worktree` moves its work tree's top, and git runs
/// hooks there: a relative `core.hooksPath` is taken from it (`ws/.git` with `core.worktree =
/// ../sub` runs `ws/sub/.githooks/pre-commit`). cordon took it from the directory holding
/// `.git` only, and allowed the write. (A `core.worktree` outside the repository's own
/// ancestors stays unseen: docs/mcp.md.)
#[test]
fn a_relative_hooks_path_is_taken_from_the_core_worktree() {
    let setup = |b: &Path| {
        let ws = b.join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        git(&ws, &["init", "-q"]);
        git(&ws, &["config", "core.hooksPath", ".githooks"]);
        git(&ws, &["config", "core.worktree", "../sub"]);
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    let ask = (Action::Ask, "builtin:surface".into());
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/sub/.githooks/pre-commit", "content": "x"})
        ),
        ask
    );
    assert_eq!(
        fx.verdict(FileOp::Write, json!({"path": "ws/sub/x", "content": "x"})),
        allow()
    );
    // Why: the real git runs it, at a commit made from the work tree.
    let ran = fx.p("ran");
    let hooks = fx.p("ws/sub/.githooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("pre-commit");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = git(
        &fx.p("ws/sub"),
        &[
            "--git-dir",
            "../.git",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    assert!(ran.exists(), "git did not run {}", hook.display());
}

/// Round 6 (red21): a link of the surface that dangles on the way (`.claude -> cfg` before
/// `cfg` exists, `.husky -> hk/a` before `hk`): a write of `cfg/settings.json` makes the file
/// Claude Code reads as `.claude/settings.json`. Only a link dangling at its last name was
/// followed, and the write was allowed.
#[test]
fn a_write_through_a_surface_link_dangling_on_the_way_is_on_the_surface() {
    let setup = |b: &Path| {
        let ws = b.join("ws");
        symlink("cfg", ws.join(".claude")).unwrap();
        symlink("hk/a", ws.join(".husky")).unwrap();
        symlink("../gd", ws.join(".git")).unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    let ask = (Action::Ask, "builtin:surface".into());
    for p in ["ws/cfg/settings.json", "ws/hk/a/pre-commit"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/cfg/other", "content": "x"})
        ),
        allow()
    );
    // Why: written there, it is what the link's name reads.
    std::fs::create_dir_all(fx.p("ws/cfg")).unwrap();
    std::fs::write(fx.p("ws/cfg/settings.json"), "{\"hooks\":1}").unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.p("ws/.claude/settings.json")).unwrap(),
        "{\"hooks\":1}"
    );
}

/// Round 6 (red21): a link of the surface in a directory above the root (the operator's
/// `proj/.claude -> ws/cl` or `proj/.envrc -> ws/rc`, with the root `proj/ws`): Claude Code
/// started in `proj` reads `ws/cl/settings.json` as its settings. Links were looked up only
/// from the written file's directory up to the root, and the write was allowed.
#[test]
fn a_surface_link_above_the_root_pointing_into_it_is_followed() {
    let setup = |b: &Path| {
        symlink("ws/cl", b.join(".claude")).unwrap();
        symlink("ws/rc", b.join(".envrc")).unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    let ask = (Action::Ask, "builtin:surface".into());
    for p in ["ws/cl/settings.json", "ws/rc"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/cl/other", "content": "x"})
        ),
        allow()
    );
    // Why: written there, it is what the link's name reads.
    std::fs::create_dir_all(fx.p("ws/cl")).unwrap();
    std::fs::write(fx.p("ws/cl/settings.json"), "{}").unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.p(".claude/settings.json")).unwrap(),
        "{}"
    );
}

/// Round 6 (surface21): a link of the surface the operator keeps (`.envrc -> envrc.shared`,
/// `.claude -> cc`, `.husky -> hk`, a dangling `.envrc` whose target is not written yet) makes
/// its target what the tool runs: a write of the target asks like a write of the link's name.
/// Found from the links in the written file's directory and each one above it up to the root
/// (docs/backends.md says what is not: a link in another directory).
#[test]
fn a_write_to_what_a_surface_link_resolves_to_is_on_the_surface() {
    let setup = |b: &Path| {
        let ws = b.join("ws");
        std::fs::write(ws.join("envrc.shared"), "use nix\n").unwrap();
        symlink("envrc.shared", ws.join(".envrc")).unwrap();
        std::fs::create_dir_all(ws.join("cc")).unwrap();
        symlink("cc", ws.join(".claude")).unwrap();
        std::fs::create_dir_all(ws.join("tools/hk")).unwrap();
        symlink("tools/hk", ws.join(".husky")).unwrap();
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        symlink("b/later.sh", ws.join("a/.envrc")).unwrap();
        // Up from the written file's directory: `d/e/.envrc -> ../../shared/rc` is not.
        std::fs::create_dir_all(ws.join("d/e")).unwrap();
        std::fs::create_dir_all(ws.join("shared")).unwrap();
        symlink("../../shared/rc", ws.join("d/e/.envrc")).unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    let ask = (Action::Ask, "builtin:surface".into());
    for p in [
        "ws/envrc.shared",
        "ws/cc/settings.json",
        "ws/cc/settings.local.json",
        "ws/tools/hk/pre-commit",
        "ws/a/b/later.sh",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    assert_eq!(fx.verdict(FileOp::Delete, path("ws/envrc.shared")), ask);
    for p in [
        "ws/cc/notes.md",
        "ws/tools/other",
        "ws/a/b/other.sh",
        "ws/shared/rc",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 8 (redsurf21): a link *inside* a directory whose every file a program runs — the
/// usual way a project shares its hooks, `ln -s ../../scripts/pre-commit .git/hooks/` — makes
/// its target a hook, though the directory lies beside the written file, not above it: the
/// real git runs the linked script at `git commit`. Before, a write of `scripts/pre-commit`
/// (and of a husky hook's or a `core.hooksPath` hook's target) was allowed by the root's mode.
/// A script no hook links stays allowed.
#[test]
fn a_link_inside_a_surface_directory_beside_the_write_makes_its_target_the_surface() {
    let setup = |b: &Path| {
        let ws = b.join("ws");
        git(&ws, &["init", "-q"]);
        std::fs::create_dir_all(ws.join("scripts")).unwrap();
        std::fs::create_dir_all(ws.join("tools")).unwrap();
        std::fs::create_dir_all(ws.join(".husky")).unwrap();
        std::fs::create_dir_all(ws.join(".githooks")).unwrap();
        symlink("../../scripts/pre-commit", ws.join(".git/hooks/pre-commit")).unwrap();
        symlink("../scripts/hk.sh", ws.join(".husky/pre-push")).unwrap();
        symlink("../tools", ws.join(".githooks/lib")).unwrap();
        symlink("../tools/run.sh", ws.join(".githooks/post-checkout")).unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    let ws = fx.p("ws");
    // What git does with the operator's link: it runs the linked script at the next commit.
    let marker = fx.p("outside/ran");
    std::fs::write(
        ws.join("scripts/pre-commit"),
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        ws.join("scripts/pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    git(&ws, &["commit", "-q", "--allow-empty", "-m", "x"]);
    assert!(marker.exists(), "git ran no linked pre-commit hook");
    let ask = (Action::Ask, "builtin:surface".into());
    for p in ["ws/scripts/pre-commit", "ws/scripts/hk.sh"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    // The same inside the directory a repository's `core.hooksPath` names.
    git(&ws, &["config", "core.hooksPath", ".githooks"]);
    for p in ["ws/tools/run.sh", "ws/tools/any.sh"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    git(&ws, &["config", "--unset", "core.hooksPath"]);
    for p in ["ws/scripts/other.sh", "ws/src/main.rs", "ws/tools/any.sh"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 8 (redsurf21): the todo list of an interrupted rebase is git's working state, but the
/// real git runs an `exec` line added to it at the operator's `git rebase --continue`; the
/// after-run scan watched it, the file tools allowed writing it (under `sandbox.git =
/// "protect"` too). A write there now asks, in a bare repository too; `done` and the index,
/// which git runs nothing from, stay allowed.
#[test]
fn a_rebase_todo_list_is_on_the_surface() {
    let body = format!("[sandbox]\ngit = \"protect\"\n{WS}");
    let setup = |b: &Path| {
        let ws = b.join("ws");
        git(&ws, &["init", "-q"]);
        for i in 1..=3 {
            std::fs::write(ws.join(format!("f{i}")), "x").unwrap();
            git(&ws, &["add", "."]);
            git(&ws, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["rebase", "-q", "-i", "HEAD~2"])
            .current_dir(&ws)
            .env("GIT_SEQUENCE_EDITOR", "sed -i 1s/^pick/edit/")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        git(&ws, &["init", "-q", "--bare", "ev"]);
    };
    let fx = Fx::with(&body, Limits::default(), setup);
    let ws = fx.p("ws");
    let todo = ws.join(".git/rebase-merge/git-rebase-todo");
    assert!(todo.exists(), "no rebase stopped");
    // What git does with an `exec` line written there: it runs it at `--continue`.
    let marker = fx.p("outside/ran");
    let mut text = std::fs::read_to_string(&todo).unwrap();
    text.push_str(&format!("exec touch {}\n", marker.display()));
    std::fs::write(&todo, text).unwrap();
    git(&ws, &["rebase", "--continue"]);
    assert!(marker.exists(), "git ran no exec line");
    let ask = (Action::Ask, "builtin:surface".into());
    for p in [
        "ws/.git/rebase-merge/git-rebase-todo",
        "ws/.git/sequencer/todo",
        "ws/sub/.git/rebase-merge/git-rebase-todo",
        "ws/.GIT/sequencer/todo",
        "ws/ev/rebase-merge/git-rebase-todo",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, ask, "{p}");
    }
    for p in ["ws/.git/rebase-merge/done", "ws/.git/index", "ws/f1"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 8 (redsurf21): a VS Code workspace file (`*.code-workspace`) carries the settings,
/// tasks and launch configurations `.vscode/` does, applied when VS Code opens it; it was
/// allowed by the root's mode whatever it held.
#[test]
fn a_vs_code_workspace_file_is_on_the_surface() {
    let fx = Fx::new(WS);
    let ask = (Action::Ask, "builtin:surface".into());
    for p in ["ws/team.code-workspace", "ws/sub/x.code-workspace"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "{}"}));
        assert_eq!(got, ask, "{p}");
    }
    for p in ["ws/code-workspace.md", "ws/src/main.rs"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 6 (surface21): where the line is drawn for a virtual environment in a root
/// (`surface::NOT_ON_SURFACE`): a `.pth` file there runs at every start of its python (shown
/// with the real `python3 -m venv`), but its `bin/python` and `bin/activate` are the run's to
/// rewrite as much, and run when the operator chooses that environment — the project's
/// installed code, written by the root's mode like the rest of it. JetBrains' `.idea/` is on
/// the surface (its startup tasks and file watchers run without being asked).
#[test]
fn a_venv_in_a_root_is_the_projects_code_and_idea_is_the_surface() {
    let fx = Fx::new(WS);
    let venv = fx.p("ws/.venv");
    let o = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{o:?}");
    let site: PathBuf = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .expect("a site-packages");
    let ran = fx.p("ws/ran");
    std::fs::write(
        site.join("x.pth"),
        format!(
            "import pathlib; pathlib.Path('{}').touch()\n",
            ran.display()
        ),
    )
    .unwrap();
    let o = std::process::Command::new(venv.join("bin/python"))
        .args(["-c", "pass"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(ran.exists(), "the venv's python did not run its .pth file");
    let rel = |p: &Path| {
        Path::new("ws")
            .join(p.strip_prefix(fx.p("ws")).unwrap())
            .display()
            .to_string()
    };
    for p in [
        site.join("y.pth"),
        site.join("sitecustomize.py"),
        venv.join("bin/activate"),
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": rel(&p), "content": "x"}));
        assert_eq!(got, allow(), "{}", p.display());
    }
    for p in [
        "ws/.idea/workspace.xml",
        "ws/.idea/watcherTasks.xml",
        "ws/sub/.idea/misc.xml",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
}

/// Round 6 (surface21): on a file system that ignores case (macOS by default, an ext4 or
/// tmpfs casefold directory) `.ENVRC` is `.envrc`: the file tools take each name as such a
/// file system folds it too (`surface::folded`: case, Unicode's full folding into ASCII —
/// `ſ`, `ﬁ`, the Kelvin sign — and default-ignorable code points), as the shell analysis does.
/// (This kernel has no casefolding — `CONFIG_UNICODE` is off, an ext4 image made with
/// `mkfs.ext4 -O casefold` does not mount — so the fold is checked against Unicode's data.)
#[test]
fn names_a_case_insensitive_file_system_folds_to_the_surface_are_on_it() {
    let fx = Fx::new(WS);
    for p in [
        "ws/.ENVRC",
        "ws/.Claude/settings.json",
        "ws/.claude/\u{17f}ettings.json",
        "ws/.con\u{fb01}g/mise.toml",
        "ws/.env\u{200d}rc",
        "ws/sub/.GIT/hooks/pre-commit",
        "ws/.codex/hoo\u{212a}s.json",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    for p in ["ws/.envr\u{0107}", "ws/ENVRC"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 7 (issue 21, redsurf21): the candidates session 35 left undecided, each decided by
/// what the real program does (or, where it cannot be installed here, its source or
/// documentation, quoted at its entry in `surface::TOOL_FILES`/`TOOL_DIRS`): Jujutsu's
/// repository and workspace configuration, a dev container's configuration (the real
/// `devcontainer up` ran `initializeCommand` on the host), Zed's and Helix's project
/// settings (both trust a workspace by path). jj's working state is not on it.
#[test]
fn jujutsu_dev_container_zed_and_helix_settings_are_on_the_surface() {
    let fx = Fx::new(WS);
    for p in [
        "ws/.jj/repo/config.toml",
        "ws/.jj/repo/config-id",
        "ws/sub/.jj/workspace-config.toml",
        "ws/.jj/workspace-config-id",
        "ws/.jj/repo/store/git_target",
        "ws/.devcontainer.json",
        "ws/.devcontainer/devcontainer.json",
        "ws/.devcontainer/py/devcontainer.json",
        "ws/.devcontainer/Dockerfile",
        "ws/.zed/settings.json",
        "ws/sub/.zed/tasks.json",
        "ws/.helix/languages.toml",
        "ws/.helix/config.toml",
        "ws/.Helix/languages.toml",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    for p in [
        "ws/.jj/repo/op_heads/heads/x",
        "ws/.jj/working_copy/checkout",
        "ws/devcontainer.json",
        "ws/zed/settings.json",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Vim with 'exrc' set reads `.vimrc` and `.gvimrc` in the directory it starts in, as it
/// reads `.exrc` (`:help 'exrc'`): shown with the real vim (a project `.vimrc` wrote a file at
/// the next start), then the file tools ask for each. `write_file .vimrc` was allowed before
/// (redshell21's note: only `.exrc` and Neovim's files were on the project surface).
#[test]
fn vims_exrc_files_are_on_the_surface() {
    let fx = Fx::new(WS);
    let ws = fx.p("ws");
    let home = fx.p("outside");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".vimrc"), "set exrc\n").unwrap();
    let ran = fx.p("outside/ran");
    std::fs::write(
        ws.join(".vimrc"),
        format!("call writefile(['ran'], '{}')\n", ran.display()),
    )
    .unwrap();
    let status = std::process::Command::new("vim")
        .args(["-X", "-c", "qa!"])
        .current_dir(&ws)
        .env("HOME", &home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("vim (Debian package vim) is needed: this test runs the real program");
    assert!(status.success(), "{status:?}");
    assert!(ran.exists(), "vim did not run the project's .vimrc");
    for p in ["ws/.vimrc", "ws/sub/.gvimrc", "ws/.exrc"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
}

/// Round 9 (redsurf22): language shells run a startup file from the directory they start in,
/// besides the home's: shown with the real irb, pry and R (each wrote a file at its next
/// start from a project file), then the file tools ask for each. `write_file .irbrc`,
/// `.pryrc`, `.Rprofile` and `.Renviron` were allowed before.
#[test]
fn ruby_and_r_startup_files_are_on_the_surface() {
    let fx = Fx::new(WS);
    let ws = fx.p("ws");
    let home = fx.p("outside");
    std::fs::create_dir_all(&home).unwrap();
    let ran = |name: &str| fx.p("outside").join(name);
    let run = |program: &str, args: &[&str], input: &str| {
        use std::io::Write;
        let mut child = std::process::Command::new(program)
            .args(args)
            .current_dir(&ws)
            .env("HOME", &home)
            .env_remove("IRBRC")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("R_PROFILE_USER")
            .env_remove("R_ENVIRON_USER")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{program} (Debian packages ruby, pry, r-base-core) is needed: this test runs the real program: {e}")
            });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success(), "{program}");
    };
    let write = |name: &str, text: String| std::fs::write(ws.join(name), text).unwrap();
    write(
        ".irbrc",
        format!(
            "File.write({:?}, \"1\")\n",
            ran("irb").display().to_string()
        ),
    );
    run("irb", &["--noprompt"], "exit\n");
    assert!(ran("irb").exists(), "irb did not run the project's .irbrc");
    write(
        ".pryrc",
        format!(
            "File.write({:?}, \"1\")\n",
            ran("pry").display().to_string()
        ),
    );
    run("pry", &[], "exit\n");
    assert!(ran("pry").exists(), "pry did not run the project's .pryrc");
    write(
        ".Rprofile",
        format!("writeLines(\"1\", {:?})\n", ran("R").display().to_string()),
    );
    run("R", &["--no-save", "-q"], "q()\n");
    assert!(ran("R").exists(), "R did not run the project's .Rprofile");
    std::fs::remove_file(ws.join(".Rprofile")).unwrap();
    write(
        "other.R",
        format!(
            "writeLines(\"1\", {:?})\n",
            ran("Renviron").display().to_string()
        ),
    );
    write(
        ".Renviron",
        format!("R_PROFILE_USER={}\n", ws.join("other.R").display()),
    );
    run("R", &["--no-save", "-q"], "q()\n");
    assert!(
        ran("Renviron").exists(),
        "R did not take the profile the project's .Renviron names"
    );
    for p in [
        "ws/.irbrc",
        "ws/sub/_irbrc",
        "ws/irb.rc",
        "ws/.config/irb/irbrc",
        "ws/.pryrc",
        "ws/.Rprofile",
        "ws/sub/.Renviron",
        "ws/.ghci",
        "ws/.octaverc",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    // Decided off the surface (`surface::NOT_ON_SURFACE`), with the real gdb for its
    // `.gdbinit`: declined in the directory it starts in.
    let marker = ran("gdb");
    write(".gdbinit", format!("shell touch {}\n", marker.display()));
    let o = std::process::Command::new("gdb")
        .args(["-batch", "-ex", "quit"])
        .current_dir(&ws)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(!marker.exists(), "gdb ran the project's .gdbinit");
    for p in [
        "ws/.editorconfig",
        "ws/.dir-locals.el",
        "ws/.gdbinit",
        "ws/.pylintrc",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got.0, Action::Allow, "{p}");
    }
}

/// Round 7 (redsurf21): direnv checks only the `.envrc` against its allow list. What an
/// allowed `.envrc` sources (`source_env_if_exists .envrc.local`), reads as variables
/// (`dotenv`: an `LD_PRELOAD` or `PATH` there is the operator's next command), puts first on
/// the PATH (`PATH_add bin`: a `bin/ls` is their next `ls`) or evaluates (`use flake`) is
/// taken as it is at the next `cd`: shown here with the real direnv, then the file tools ask
/// for each (`surface::envrc`). They allowed all of it before.
#[test]
fn what_an_allowed_envrc_loads_is_on_the_surface() {
    let fx = Fx::new(WS);
    let ws = fx.p("ws");
    let direnv = |args: &[&str]| {
        let o = std::process::Command::new("direnv")
            .args(args)
            .current_dir(&ws)
            .env("HOME", fx.p("outside"))
            .env("XDG_DATA_HOME", fx.p("outside/data"))
            .env("XDG_CONFIG_HOME", fx.p("outside/config"))
            .env_remove("DIRENV_DIR")
            .env_remove("DIRENV_FILE")
            .output()
            .expect("direnv is needed for this test (Debian package `direnv`)");
        assert!(o.status.success(), "{o:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    std::fs::write(
        ws.join(".envrc"),
        "source_env_if_exists .envrc.local\ndotenv_if_exists\nPATH_add bin\nexport ROOT=$PWD\n",
    )
    .unwrap();
    direnv(&["allow", "."]);
    // Written after the allow, as a run would write them.
    std::fs::write(ws.join(".envrc.local"), "export RAN=$(echo sourced)\n").unwrap();
    std::fs::write(ws.join(".env"), "FROM_ENV=read\n").unwrap();
    std::fs::create_dir(ws.join("bin")).unwrap();
    std::fs::write(ws.join("bin/ls"), "#!/bin/sh\necho planted-ls\n").unwrap();
    std::fs::set_permissions(
        ws.join("bin/ls"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = direnv(&["exec", ".", "sh", "-c", "echo $RAN $FROM_ENV; ls"]);
    assert_eq!(
        out, "sourced read\nplanted-ls\n",
        "the allowed .envrc took them"
    );
    std::fs::write(
        ws.join(".envrc"),
        "source_env_if_exists .envrc.local\ndotenv_if_exists\nPATH_add bin\nuse flake\n\
         export ROOT=$PWD\n",
    )
    .unwrap();
    for p in [
        "ws/.envrc.local",
        "ws/.env",
        "ws/bin/ls",
        "ws/bin/new/x",
        "ws/flake.nix",
        "ws/nix/shell.nix",
        "ws/flake.lock",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    assert_eq!(
        fx.verdict(FileOp::Delete, path("ws/bin/ls")),
        (Action::Ask, "builtin:surface".into())
    );
    // The rest of the tree is the run's; so is every file where no `.envrc` is above.
    for p in ["ws/src/main.rs", "ws/README.md", "ws/binary", "ws/env"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
    std::fs::remove_file(ws.join(".envrc")).unwrap();
    assert_eq!(
        fx.verdict(
            FileOp::Write,
            json!({"path": "ws/.envrc.local", "content": "x"})
        ),
        allow()
    );
}

/// Round 7 (redsurf21): a program a configuration on the surface names by a relative path is
/// what that configuration's program runs, outside the sandbox: the real git ran a
/// repository's `core.fsmonitor = scripts/fsmon.sh` from the top at a `git status` in a
/// subdirectory, and Claude Code runs a hook's `"$CLAUDE_PROJECT_DIR"/tools/guard.sh` before
/// every tool call (its hooks documentation's own form), pre-commit a `repo: local` hook's
/// `entry`, yarn its `yarnPath` at any yarn command. The file tools allowed each write
/// (`surface::named_by_configuration`); the project's other files stay the run's.
#[test]
fn a_program_a_surface_configuration_names_is_on_the_surface() {
    let fx = Fx::new(WS);
    let ws = fx.p("ws");
    let git = |args: &[&str], dir: &Path| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", fx.p("outside"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git is needed for this test (Debian package `git`)")
    };
    assert!(git(&["init", "-q"], &ws).success());
    assert!(git(&["config", "core.fsmonitor", "scripts/fsmon.sh"], &ws).success());
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    let ran = fx.p("outside/ran");
    std::fs::write(
        ws.join("scripts/fsmon.sh"),
        format!("#!/bin/sh\ntouch '{}'\n", ran.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        ws.join("scripts/fsmon.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let _ = git(&["status"], &ws.join("sub"));
    assert!(
        ran.exists(),
        "the real git did not run the relative fsmonitor"
    );
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::write(
        ws.join(".claude/settings.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"\"$CLAUDE_PROJECT_DIR\"/tools/guard.sh"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        ws.join(".pre-commit-config.yaml"),
        "repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n    entry: ./ci/lint.sh\n    language: script\n",
    )
    .unwrap();
    std::fs::write(
        ws.join(".yarnrc.yml"),
        "yarnPath: .yarn/releases/yarn-4.5.0.cjs\n",
    )
    .unwrap();
    // A file of a settings directory naming a script: a Copilot CLI hook, a husky hook.
    std::fs::create_dir_all(ws.join(".github/hooks")).unwrap();
    std::fs::write(
        ws.join(".github/hooks/audit.json"),
        r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./scripts/audit.sh"}]}}"#,
    )
    .unwrap();
    // A directory put first on the PATH: everything below it is a command of the shell.
    std::fs::write(ws.join(".tool-versions"), "node path:./tools/node\n").unwrap();
    std::fs::write(
        ws.join("mise.toml"),
        "[tools]\npython = \"3.12\"\n[env]\n_.path = [\"./bin\", \"{{config_root}}/x\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join(".husky")).unwrap();
    std::fs::write(ws.join(".husky/pre-commit"), "sh tools/check.sh\n").unwrap();
    for p in [
        "ws/scripts/fsmon.sh",
        "ws/tools/guard.sh",
        "ws/ci/lint.sh",
        "ws/.yarn/releases/yarn-4.5.0.cjs",
        "ws/scripts/audit.sh",
        "ws/tools/check.sh",
        "ws/tools/node/bin/node",
        "ws/bin/ls",
        "ws/x/git",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    for p in [
        "ws/scripts/other.sh",
        "ws/tools/x.sh",
        "ws/tools/nodes/main.js",
        "ws/src/main.rs",
        "ws/sub/notes.md",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 7 (redsurf21): a FIFO a run leaves where the decision reads a configuration
/// (`mkfifo sub/.git`, `.envrc`, `.git/config`, a surface settings file) made the decision
/// block for good on its open: every write below `sub` hung, and behind `cordon hook` a host
/// that gives up on a slow hook may go on without it. Each is now answered at once: a `.git`
/// that is no regular file is no repository to git either; an `.envrc` or git configuration
/// that cannot be read makes the write ask.
#[test]
fn a_fifo_where_a_configuration_is_read_never_blocks_the_decision() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let fx = Fx::new(WS);
        let fifo = |rel: &str| {
            let p = fx.p(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let made = std::process::Command::new("mkfifo").arg(&p).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo {rel}");
        };
        fifo("ws/a/.git");
        fifo("ws/b/.envrc");
        fifo("ws/c/.claude/settings.json");
        std::fs::create_dir_all(fx.p("ws/d/.git/objects")).unwrap();
        std::fs::create_dir_all(fx.p("ws/d/.git/refs")).unwrap();
        std::fs::write(fx.p("ws/d/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        fifo("ws/d/.git/config");
        let got: Vec<_> = ["ws/a/x", "ws/b/x", "ws/c/x", "ws/d/x"]
            .iter()
            .map(|p| fx.verdict(FileOp::Write, json!({"path": p, "content": "x"})))
            .collect();
        let _ = tx.send(got);
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the decision blocked on a FIFO");
    let ask = (Action::Ask, "builtin:surface".to_string());
    assert_eq!(got, vec![allow(), ask.clone(), allow(), ask]);
}

/// Round 7 (redsurf21): a configuration that names a program through a link the operator
/// keeps (`core.fsmonitor = hk/fsmon.sh` with `hk -> scripts`; an `.envrc` sourcing
/// `lib/local.sh` with `lib -> shared`) names the file where the link leads: git and direnv
/// follow it. The readers compared names only, and allowed the write there.
#[test]
fn a_configuration_naming_a_program_through_a_link_names_its_target() {
    let setup = |b: &Path| {
        for d in ["ws/scripts", "ws/shared", "ws/.git/objects", "ws/.git/refs"] {
            std::fs::create_dir_all(b.join(d)).unwrap();
        }
        std::fs::write(b.join("ws/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            b.join("ws/.git/config"),
            "[core]\n\tfsmonitor = hk/fsmon.sh\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("scripts", b.join("ws/hk")).unwrap();
        std::fs::write(b.join("ws/.envrc"), "source_env_if_exists lib/local.sh\n").unwrap();
        std::os::unix::fs::symlink("shared", b.join("ws/lib")).unwrap();
    };
    let fx = Fx::with(WS, Limits::default(), setup);
    for p in ["ws/scripts/fsmon.sh", "ws/shared/local.sh"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    for p in ["ws/scripts/other.sh", "ws/shared/other.sh"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 10 (redsurf23): a writable root below a name of the surface. Classified by its path
/// below the root alone, `settings.json` in the root `ws/.claude` was a plain file to the file
/// tools, and so were `tasks.json` in the root `ws/.vscode`, `pre-commit` in the root
/// `ws/.git/hooks` and a plugin in the root `ws/.opencode`: each was allowed by the root's mode
/// (the real `cordon check` said `allow`). The names above the root count too.
#[test]
fn a_root_below_a_name_of_the_surface_is_on_it() {
    let roots = [
        ("cl", "ws/.claude"),
        ("vs", "ws/.vscode"),
        ("hk", "ws/.git/hooks"),
        ("oc", "ws/.opencode"),
        ("bare", "ws/r.git"),
    ];
    let body: String = roots
        .iter()
        .map(|(name, root)| format!("[sandbox.paths.{name}]\nroot = \"{root}\"\nmode = \"rw\"\n"))
        .collect();
    let fx = Fx::with(&body, Limits::default(), |b| {
        for (_, root) in roots {
            std::fs::create_dir_all(b.join(root)).unwrap();
        }
        for repo in ["ws/.git", "ws/r.git"] {
            for d in ["objects", "refs"] {
                std::fs::create_dir_all(b.join(repo).join(d)).unwrap();
            }
            std::fs::write(b.join(repo).join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
    });
    for p in [
        "cl/settings.json",
        "cl/skills/x/SKILL.md",
        "vs/tasks.json",
        "hk/pre-commit",
        "oc/plugin/x.js",
        "bare/hooks/post-update",
    ] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
    for p in ["cl/notes.md", "vs/extensions.json", "bare/description"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, allow(), "{p}");
    }
}

/// Round 10 (redsurf23): Perl's debugger runs `./.perldb` as Perl code at `perl -d` started
/// in that directory (before the home's), as pdb runs `./.pdbrc`: shown with the real perl,
/// which ran a project's `.perldb` (a file of the user's, as a run leaves it). The file tools
/// allowed `write_file ws/.perldb` by the root's mode before.
#[test]
fn perls_debugger_file_is_on_the_surface() {
    let fx = Fx::new(WS);
    let ws = fx.p("ws");
    let marker = fx.p("outside/perldb-ran");
    std::fs::write(
        ws.join(".perldb"),
        format!("system('touch', '{}');\n", marker.display()),
    )
    .unwrap();
    std::fs::write(ws.join("t.pl"), "1;\n").unwrap();
    let o = std::process::Command::new("perl")
        .args(["-d", "t.pl"])
        .current_dir(&ws)
        .env("HOME", fx.p("outside"))
        .env("PERLDB_OPTS", "NonStop")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("perl (Debian package perl, with its perl5db.pl) is needed: this test runs the real one: {e}")
        });
    assert!(o.status.success(), "{o:?}");
    assert!(
        marker.exists(),
        "perl -d did not run the project's .perldb: {o:?}"
    );
    for p in ["ws/.perldb", "ws/sub/.perldb"] {
        let got = fx.verdict(FileOp::Write, json!({"path": p, "content": "x"}));
        assert_eq!(got, (Action::Ask, "builtin:surface".into()), "{p}");
    }
}
