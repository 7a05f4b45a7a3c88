//! Code the operator runs next (issue 12, class 7): a run must not leave anything in the
//! workspace that makes the operator's next `git status` — outside the sandbox — run code the
//! command chose, and what it leaves that makes the operator's tools run code is reported on
//! stderr, moved aside and recorded in the audit log.
//!
//! Each case plants one thing under `cordon exec` (the real binary), then runs the operator's
//! `git status` outside cordon, in a repository whose planted `core.fsmonitor` would touch a
//! marker file. Every case runs as root and as an unprivileged user (`cordon-test` when the
//! suite runs as root), with `sandbox.git = "protect"` (the `.git` configuration surface is
//! read-only: bwrap's mounts, or the Landlock backend's init's) on bwrap and on Landlock, and on
//! Landlock with the `.git` directory writable (the after-run scan is the only guard). Controls run the same plant without cordon and must touch the marker:
//! they prove each attack works.

// bubblewrap and Landlock are Linux.
#![cfg(target_os = "linux")]

use cordon_e2e::{chown_tree, cordon_copied, describe, is_root, test_user};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `cordon`, copied once per test process where the unprivileged user can run it.
fn cordon() -> &'static Path {
    cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    Root,
    User,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sandbox {
    /// bwrap, `sandbox.git = "protect"`.
    BwrapProtect,
    /// Landlock, `sandbox.git = "protect"` (the mounts are made by the backend's own init).
    LandlockProtect,
    /// Landlock, the `.git` directory writable like the rest of the workspace.
    LandlockWritable,
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    marker: PathBuf,
    ids: Option<(u32, u32)>,
}

impl Fixture {
    /// `ROOT/ws`: a git repository with one commit (the policy's only writable root);
    /// `ROOT/policies/cordon.toml`; `ROOT/state` (the audit log); `ROOT/home` (HOME).
    fn new(who: Who, sandbox: Sandbox) -> Fixture {
        let ids = match who {
            Who::Root => {
                assert!(is_root(), "run the git escape suite as root (CI does)");
                None
            }
            Who::User if is_root() => Some(test_user()),
            Who::User => None,
        };
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-git-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        for d in ["ws", "policies", "state", "home", "tmp", "marks"] {
            fs::create_dir(root.join(d)).unwrap();
        }
        let (backend, git) = match sandbox {
            Sandbox::BwrapProtect => ("bwrap", "git = \"protect\"\n"),
            Sandbox::LandlockProtect => ("landlock", "git = \"protect\"\n"),
            Sandbox::LandlockWritable => ("landlock", ""),
        };
        fs::write(
            root.join("policies/cordon.toml"),
            format!(
                "version = 1\n\
                 [sandbox]\nbackend = \"{backend}\"\nrequire_os_sandbox = true\nnetwork = \"deny\"\n{git}\
                 [sandbox.paths.workspace]\nroot = \"../ws\"\nmode = \"rw\"\n\
                 [shell]\ndefault = \"allow\"\n\
                 [approval]\naudit_log = \"../state/audit.jsonl\"\n"
            ),
        )
        .unwrap();
        let fx = Fixture {
            _tmp: tmp,
            marker: root.join("marks/MARK"),
            root,
            ws,
            ids,
        };
        if let Some((uid, gid)) = ids {
            for d in ["ws", "state", "home", "tmp", "marks"] {
                chown_tree(&fx.root.join(d), uid, gid);
            }
        }
        let out = fx.operator_sh(
            "git init -q . && echo one > one.txt && git add one.txt && git commit -q -m one",
        );
        assert!(out.status.success(), "{}", describe(&out));
        fx
    }

    fn as_user(&self, c: &mut Command) {
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.root.join("home"))
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", self.root.join("tmp"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "op")
            .env("GIT_AUTHOR_EMAIL", "op@example.org")
            .env("GIT_COMMITTER_NAME", "op")
            .env("GIT_COMMITTER_EMAIL", "op@example.org")
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            c.uid(uid).gid(gid);
        }
    }

    /// The operator, outside cordon, in `ws/DIR`.
    fn operator_in(&self, dir: &str, script: &str) -> Output {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script]).current_dir(self.ws.join(dir));
        self.as_user(&mut c);
        c.output().unwrap()
    }

    fn operator_sh(&self, script: &str) -> Output {
        self.operator_in(".", script)
    }

    /// `cordon exec --policy P -- /bin/sh -c SCRIPT` in the workspace. `MARK` in the
    /// environment names the marker file.
    fn exec(&self, script: &str) -> Output {
        self.exec_cmd(script).output().unwrap()
    }

    /// [`Fixture::exec`]'s command, to spawn.
    fn exec_cmd(&self, script: &str) -> Command {
        self.exec_cmd_in(&self.ws, script)
    }

    /// [`Fixture::exec_cmd`] in `dir`.
    fn exec_cmd_in(&self, dir: &Path, script: &str) -> Command {
        let mut c = Command::new(cordon());
        // --approve-all: what is tested is what an approved run can leave behind, not whether
        // the shell tool asks about it first (a plant's `git -c sequence.editor=…` or a helper
        // function's `"$@"` does).
        c.arg("exec")
            .arg("--policy")
            .arg(self.root.join("policies/cordon.toml"))
            .arg("--approve-all")
            .args(["--", "/bin/sh", "-c", script])
            .current_dir(dir);
        self.as_user(&mut c);
        c
    }

    fn audit(&self, verb: &str) -> Output {
        let mut c = Command::new(cordon());
        c.args(["audit", verb])
            .arg(self.root.join("state/audit.jsonl"));
        c.output().unwrap()
    }

    fn marked(&self) -> bool {
        self.marker.exists()
    }
}

/// The planted configuration: `core.fsmonitor` touches the marker (and fails, so git goes on).
fn fsmonitor(marker: &Path) -> String {
    format!(
        "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {}; false\"\\n'",
        marker.display()
    )
}

/// A directory `DIR` that git accepts as a common directory, with the planted configuration.
fn evil_common_dir(dir: &str, marker: &Path) -> String {
    format!(
        "mkdir -p {dir} && cp -r .git/objects .git/refs .git/HEAD {dir}/ && {} > {dir}/config",
        fsmonitor(marker)
    )
}

/// The operator's next command, in most cases.
const STATUS: &str = "git status; git diff HEAD; true";

const GITLINK: &str = "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub";

/// One way to plant code for the operator's git.
struct Plant {
    /// The script run inside the sandbox (and, as the control, outside it).
    script: fn(&Path) -> String,
    /// Where the operator runs git afterwards (relative to the workspace).
    operator_dir: &'static str,
    /// What the operator runs there.
    operator: &'static str,
    /// Paths (relative to the workspace) the after-run scan must name on each sandbox; empty
    /// where the sandbox refuses the plant.
    reported_writable: &'static [&'static str],
    reported_protect: &'static [&'static str],
    /// The plant, unconfined, makes the operator's git run the planted code.
    runs_code: bool,
}

fn plant_commondir(m: &Path) -> String {
    format!(
        "{} && echo \"$PWD/evil\" > .git/commondir",
        evil_common_dir("evil", m)
    )
}
fn plant_config(m: &Path) -> String {
    format!("{} >> .git/config", fsmonitor(m))
}
fn plant_config_worktree(m: &Path) -> String {
    format!(
        "git config extensions.worktreeConfig true; {} > .git/config.worktree",
        fsmonitor(m)
    )
}
fn plant_nested_repo_gitlink(m: &Path) -> String {
    format!(
        "git init -q sub && {} >> sub/.git/config && {GITLINK}",
        fsmonitor(m)
    )
}
fn plant_gitdir_file_gitlink(m: &Path) -> String {
    format!(
        "{} && mkdir -p sub && echo 'gitdir: ../evil' > sub/.git && {GITLINK}",
        evil_common_dir("evil", m)
    )
}
fn plant_gitdir_symlink_gitlink(m: &Path) -> String {
    format!(
        "{} && mkdir -p sub && ln -s ../evil sub/.git && {GITLINK}",
        evil_common_dir("evil", m)
    )
}
fn plant_root_git_replaced(m: &Path) -> String {
    format!(
        "{}; mv .git real-git-dir; echo 'gitdir: evil' > .git",
        evil_common_dir("evil", m)
    )
}
fn plant_modules(m: &Path) -> String {
    format!(
        "{}; mkdir -p sub && echo 'gitdir: ../.git/modules/x' > sub/.git; {GITLINK}",
        evil_common_dir(".git/modules/x", m)
    )
}
fn plant_modules_only(m: &Path) -> String {
    format!(
        "{} && mkdir -p sub && {GITLINK}",
        evil_common_dir(".git/modules/sub", m)
    )
}
fn plant_worktrees(m: &Path) -> String {
    format!(
        "{}; mkdir -p .git/worktrees/x wt; cp .git/HEAD .git/worktrees/x/; \
         echo \"$PWD/evil\" > .git/worktrees/x/commondir; \
         echo \"$PWD/wt/.git\" > .git/worktrees/x/gitdir; \
         echo \"gitdir: $PWD/.git/worktrees/x\" > wt/.git",
        evil_common_dir("evil", m)
    )
}
/// An interactive rebase that stops (`break`) before its `exec` lines: the operator's
/// `git rebase --continue` runs them.
fn plant_rebase_exec(m: &Path) -> String {
    format!(
        "echo two > two.txt && git add two.txt && git -c user.name=a -c user.email=a@b commit -q -m two && \
         git -c user.name=a -c user.email=a@b -c sequence.editor='sed -i 1ibreak' rebase -q -i -x 'touch {}' HEAD~1",
        m.display()
    )
}
fn plant_info_attributes(_: &Path) -> String {
    "mkdir -p .git/info && echo '* filter=planted' > .git/info/attributes".into()
}
fn plant_hook(m: &Path) -> String {
    format!(
        "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch {}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        m.display()
    )
}
fn plant_envrc(m: &Path) -> String {
    format!("echo 'touch {}' > .envrc", m.display())
}
fn plant_vscode_tasks(m: &Path) -> String {
    format!(
        "mkdir -p .vscode && printf '{{\"version\":\"2.0.0\",\"tasks\":[{{\"label\":\"x\",\"type\":\"shell\",\"command\":\"touch {}\",\"runOptions\":{{\"runOn\":\"folderOpen\"}}}}]}}' > .vscode/tasks.json",
        m.display()
    )
}
/// A Claude Code hook that runs on the operator's next tool call, outside any sandbox.
fn plant_claude_hook(m: &Path) -> String {
    format!(
        "mkdir -p .claude && printf '{{\"hooks\":{{\"PreToolUse\":[{{\"matcher\":\"*\",\"hooks\":[{{\"type\":\"command\",\"command\":\"touch {}\"}}]}}]}}}}' > .claude/settings.json",
        m.display()
    )
}
fn plant_mcp_json(m: &Path) -> String {
    format!(
        "printf '{{\"mcpServers\":{{\"x\":{{\"command\":\"touch\",\"args\":[\"{}\"]}}}}}}' > .mcp.json",
        m.display()
    )
}
fn plant_nested_envrc(m: &Path) -> String {
    format!("mkdir -p a/b && echo 'touch {}' > a/b/.envrc", m.display())
}

/// Runs one plant under cordon and checks the operator's next `git status`, the warnings and
/// the audit record.
fn run_plant(who: Who, sandbox: Sandbox, plant: &Plant) {
    let fx = Fixture::new(who, sandbox);
    let script = (plant.script)(&fx.marker);
    let out = fx.exec(&format!("{script}; true"));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !fx.marked(),
        "the planted code ran inside the sandbox?\n{}",
        describe(&out)
    );
    let status = fx.operator_in(plant.operator_dir, plant.operator);
    assert!(
        !fx.marked(),
        "the operator's next `git status` ran the planted code\nrun: {}\noperator: {}",
        describe(&out),
        describe(&status)
    );
    let reported = match sandbox {
        Sandbox::BwrapProtect | Sandbox::LandlockProtect => plant.reported_protect,
        Sandbox::LandlockWritable => plant.reported_writable,
    };
    for path in reported {
        let full = fx.ws.join(path);
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("cordon: warning: ")
                    && l.contains(&full.display().to_string())),
            "no warning names {}\n{}",
            full.display(),
            describe(&out)
        );
    }
    let log = fs::read_to_string(fx.root.join("state/audit.jsonl")).unwrap();
    let after: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""by":{"kind":"after-run"}"#))
        .collect();
    if reported.is_empty() {
        assert!(after.is_empty(), "{log}");
    } else {
        assert_eq!(after.len(), 1, "one after-run record\n{log}");
        for path in reported {
            assert!(
                after[0].contains(&fx.ws.join(path).display().to_string()),
                "the record names {path}\n{log}"
            );
        }
    }
    let verify = fx.audit("verify");
    assert_eq!(verify.status.code(), Some(0), "{}", describe(&verify));
    let show = fx.audit("show");
    assert_eq!(show.status.code(), Some(0), "{}", describe(&show));
    if !reported.is_empty() {
        assert!(
            String::from_utf8_lossy(&show.stdout).contains("by after-run"),
            "{}",
            describe(&show)
        );
    }
}

/// The plant without cordon: the operator's next `git status` runs the planted code.
fn control(who: Who, plant: &Plant) {
    let fx = Fixture::new(who, Sandbox::LandlockWritable);
    let out = fx.operator_sh(&(plant.script)(&fx.marker));
    assert!(out.status.success(), "{}", describe(&out));
    let status = fx.operator_in(plant.operator_dir, plant.operator);
    assert!(
        fx.marked(),
        "the attack does not work even unconfined, so its test proves nothing\n{}\n{}",
        describe(&out),
        describe(&status)
    );
}

macro_rules! plants {
    ($($id:ident: $plant:expr,)*) => {
        mod bwrap_protect_as_root {
            use super::*;
            $( #[test] fn $id() { run_plant(Who::Root, Sandbox::BwrapProtect, &$plant); } )*
        }
        mod bwrap_protect_as_user {
            use super::*;
            $( #[test] fn $id() { run_plant(Who::User, Sandbox::BwrapProtect, &$plant); } )*
        }
        mod landlock_protect_as_root {
            use super::*;
            $( #[test] fn $id() { run_plant(Who::Root, Sandbox::LandlockProtect, &$plant); } )*
        }
        mod landlock_protect_as_user {
            use super::*;
            $( #[test] fn $id() { run_plant(Who::User, Sandbox::LandlockProtect, &$plant); } )*
        }
        mod landlock_writable_as_root {
            use super::*;
            $( #[test] fn $id() { run_plant(Who::Root, Sandbox::LandlockWritable, &$plant); } )*
        }
        mod landlock_writable_as_user {
            use super::*;
            $( #[test] fn $id() { run_plant(Who::User, Sandbox::LandlockWritable, &$plant); } )*
        }
        mod control_as_root {
            use super::*;
            $( #[test] fn $id() { if $plant.runs_code { control(Who::Root, &$plant); } } )*
        }
        mod control_as_user {
            use super::*;
            $( #[test] fn $id() { if $plant.runs_code { control(Who::User, &$plant); } } )*
        }
    };
}

plants! {
    commondir: Plant {
        script: plant_commondir,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/commondir", "evil"],
        reported_protect: &["evil"],
        runs_code: true,
    },
    config: Plant {
        script: plant_config,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/config"],
        reported_protect: &[],
        runs_code: true,
    },
    config_worktree: Plant {
        script: plant_config_worktree,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/config", ".git/config.worktree"],
        reported_protect: &[],
        runs_code: true,
    },
    nested_repo_and_gitlink: Plant {
        script: plant_nested_repo_gitlink,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &["sub/.git", "sub"],
        reported_protect: &["sub/.git", "sub"],
        runs_code: true,
    },
    gitdir_file_and_gitlink: Plant {
        script: plant_gitdir_file_gitlink,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &["sub/.git", "evil"],
        reported_protect: &["sub/.git", "evil"],
        runs_code: true,
    },
    gitdir_symlink_and_gitlink: Plant {
        script: plant_gitdir_symlink_gitlink,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &["sub/.git", "evil"],
        reported_protect: &["sub/.git", "evil"],
        runs_code: true,
    },
    root_git_replaced_by_a_gitdir_file: Plant {
        script: plant_root_git_replaced,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git", "evil", "real-git-dir"],
        reported_protect: &["evil"],
        runs_code: true,
    },
    modules_and_gitdir_file: Plant {
        script: plant_modules,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/modules", "sub/.git"],
        reported_protect: &["sub/.git", "sub"],
        runs_code: true,
    },
    modules_and_gitlink: Plant {
        script: plant_modules_only,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/modules"],
        reported_protect: &[],
        runs_code: false,
    },
    worktrees: Plant {
        script: plant_worktrees,
        operator_dir: "wt",
        operator: STATUS,
        reported_writable: &[".git/worktrees", "wt/.git", "evil"],
        reported_protect: &["wt/.git", "evil"],
        runs_code: true,
    },
    rebase_todo_with_exec: Plant {
        script: plant_rebase_exec,
        operator_dir: ".",
        operator: "git -c user.name=o -c user.email=o@o rebase --continue; true",
        reported_writable: &[".git/rebase-merge/git-rebase-todo"],
        reported_protect: &[".git/rebase-merge/git-rebase-todo"],
        runs_code: true,
    },
    info_attributes: Plant {
        script: plant_info_attributes,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/info/attributes"],
        reported_protect: &[],
        runs_code: false,
    },
    hook: Plant {
        script: plant_hook,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".git/hooks/pre-commit"],
        reported_protect: &[],
        runs_code: false,
    },
    envrc: Plant {
        script: plant_envrc,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".envrc"],
        reported_protect: &[".envrc"],
        runs_code: false,
    },
    nested_envrc: Plant {
        script: plant_nested_envrc,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &["a/b/.envrc"],
        reported_protect: &["a/b/.envrc"],
        runs_code: false,
    },
    vscode_tasks: Plant {
        script: plant_vscode_tasks,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".vscode/tasks.json"],
        reported_protect: &[".vscode/tasks.json"],
        runs_code: false,
    },
    claude_hook: Plant {
        script: plant_claude_hook,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".claude/settings.json"],
        reported_protect: &[".claude/settings.json"],
        runs_code: false,
    },
    mcp_json: Plant {
        script: plant_mcp_json,
        operator_dir: ".",
        operator: STATUS,
        reported_writable: &[".mcp.json"],
        reported_protect: &[".mcp.json"],
        runs_code: false,
    },
}

/// Ordinary git work inside the sandbox: a new repository in the private /tmp; in the
/// workspace's repository add, commit, branch, stash, tag, a fetch from a local remote, merge,
/// rebase, gc. It must succeed and leave nothing to report.
const GIT_WORK: &str = r#"set -e
g() { git -c user.name=a -c user.email=a@b "$@"; }
g init -q /tmp/scratch && g -C /tmp/scratch commit -q --allow-empty -m s
echo x >> f && g add f && g commit -q -m f
g checkout -q -b feature
echo y >> f && g stash -q && g stash pop -q && g commit -q -am y
g tag -a -m t v1
g fetch -q ./remote.git master:from-remote
g merge -q --no-edit from-remote
g checkout -q master && g merge -q --ff-only feature
g checkout -q -b topic HEAD~1 && echo z > z && g add z && g commit -q -m z && g rebase -q master
g gc -q
g worktree list > /dev/null
g status --short
echo GIT-WORK-OK"#;

fn git_work(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh("git clone -q --bare . remote.git");
    assert!(out.status.success(), "{}", describe(&out));
    let out = fx.exec(GIT_WORK);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("GIT-WORK-OK"),
        "{}",
        describe(&out)
    );
    assert!(!stderr.contains("cordon: warning:"), "{}", describe(&out));
    let log = fs::read_to_string(fx.root.join("state/audit.jsonl")).unwrap();
    assert!(!log.contains("after-run"), "{log}");
    let out = fx.operator_sh("git log --oneline topic | wc -l");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "4",
        "{}",
        describe(&out)
    );
}

mod git_work {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        git_work(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        git_work(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        git_work(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        git_work(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        git_work(Who::Root, Sandbox::LandlockWritable);
    }
    #[test]
    fn landlock_writable_as_user() {
        git_work(Who::User, Sandbox::LandlockWritable);
    }
}

/// `sandbox.git = "protect"` on the Landlock backend: its init keeps the surface read-only
/// with mounts in the command's own mount namespace (as bwrap does), so the run goes ahead and
/// a missing `commondir` cannot be created (its placeholder is gone after the run). `auto`
/// picks Landlock for a user and for root (about half bwrap's start-up cost; root's system
/// files are kept by the init's read-only mount tree): pid 1 tells the backends apart (bwrap's
/// own init, or cordon's).
fn landlock_protects(who: Who) {
    let fx = Fixture::new(who, Sandbox::LandlockProtect);
    let policy = fx.root.join("policies/cordon.toml");
    let text = fs::read_to_string(&policy).unwrap();
    let root_fs = "echo PID1-$(cat /proc/1/comm)";
    let out = fx.exec(&format!(
        "echo planted > .git/commondir; echo ran > ran.txt; {root_fs}"
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran.txt").exists(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Read-only file system"),
        "{}",
        describe(&out)
    );
    assert!(!fx.ws.join(".git/commondir").exists(), "{}", describe(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("PID1-bwrap"),
        "not the Landlock backend's view\n{}",
        describe(&out)
    );

    fs::write(&policy, text.replace("\"landlock\"", "\"auto\"")).unwrap();
    fs::remove_file(fx.ws.join("ran.txt")).unwrap();
    let out = fx.exec(&format!(
        "echo planted > .git/commondir; echo ran > ran.txt; {root_fs}"
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(fx.ws.join("ran.txt").exists(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Read-only file system"),
        "{}",
        describe(&out)
    );
    assert!(!fx.ws.join(".git/commondir").exists());
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("PID1-bwrap"),
        "auto: Landlock for root and for a user where the mount namespace can be made\n{}",
        describe(&out)
    );
}

mod landlock_protects_git {
    use super::*;
    #[test]
    fn as_root() {
        landlock_protects(Who::Root);
    }
    #[test]
    fn as_user() {
        landlock_protects(Who::User);
    }
}

/// The operator's own git configuration in HOME, outside every rule: on the Landlock backend
/// git must work (its init covers the files with `/dev/null`; unreadable, git would die with
/// exit 128), and the command must not read their content. `~/.config/git/config` is a link
/// to a file beside it: its name is covered, never followed.
fn operators_git_config(who: Who) {
    let fx = Fixture::new(who, Sandbox::LandlockProtect);
    let out = fx.operator_sh(
        "mkdir -p \"$HOME/.config/git\" && \
         printf '[user]\\n\\tname = SECRET-GLOBAL\\n' > \"$HOME/.gitconfig\" && \
         printf '[user]\\n\\temail = SECRET-XDG@example.org\\n' > \"$HOME/xdg-config\" && \
         ln -s ../../xdg-config \"$HOME/.config/git/config\" && \
         echo SECRET-IGNORE > \"$HOME/.config/git/ignore\" && \
         echo '* SECRET-ATTR' > \"$HOME/.config/git/attributes\" && \
         git config --global user.name",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "SECRET-GLOBAL",
        "{}",
        describe(&out)
    );
    let out = fx.exec(
        "set -e; echo two > two.txt; git status --short; git add two.txt; git -c user.name=a -c user.email=a@b commit -q -m two; \
         git log --oneline | wc -l; git check-attr -a one.txt; \
         cat \"$HOME/.gitconfig\" \"$HOME/.config/git/config\" \"$HOME/.config/git/ignore\" \"$HOME/.config/git/attributes\"; \
         echo GIT-CONFIG-OK",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout.contains("GIT-CONFIG-OK"), "{}", describe(&out));
    assert!(stdout.contains("?? two.txt"), "{}", describe(&out));
    assert!(
        !describe(&out).contains("SECRET") && !describe(&out).contains("unable to access"),
        "the operator's configuration read, or git warned\n{}",
        describe(&out)
    );
    let out = fx.operator_sh("git log --oneline | wc -l; cat \"$HOME/.gitconfig\"");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "2\n[user]\n\tname = SECRET-GLOBAL\n",
        "{}",
        describe(&out)
    );
}

mod operators_git_config {
    use super::*;
    #[test]
    fn as_root() {
        operators_git_config(Who::Root);
    }
    #[test]
    fn as_user() {
        operators_git_config(Who::User);
    }
}

/// The scan after the run reuses the listings of directories unchanged since the snapshot
/// before it (when they were last changed well before it). Plants in directories that were
/// settled before the run are still found: creating a name changes its directory.
fn plants_in_settled_directories(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh("mkdir -p old/deep/dir vendor/lib && echo keep > vendor/lib/x");
    assert!(out.status.success(), "{}", describe(&out));
    // Older than the scan's settling time (a precondition, not a timed assertion).
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let out = fx.exec(&format!(
        "echo 'touch {m}' > old/deep/dir/.envrc; git init -q vendor/lib/sub && {cfg} >> vendor/lib/sub/.git/config; true",
        m = fx.marker.display(),
        cfg = fsmonitor(&fx.marker)
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for path in ["old/deep/dir/.envrc", "vendor/lib/sub/.git"] {
        let full = fx.ws.join(path).display().to_string();
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("cordon: warning: ") && l.contains(&full)),
            "no warning names {full}\n{}",
            describe(&out)
        );
    }
    let status = fx.operator_in("vendor/lib/sub", "git status; true");
    assert!(!fx.marked(), "{}\n{}", describe(&out), describe(&status));
}

mod settled_directories {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        plants_in_settled_directories(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        plants_in_settled_directories(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        plants_in_settled_directories(Who::Root, Sandbox::LandlockWritable);
    }
    #[test]
    fn landlock_writable_as_user() {
        plants_in_settled_directories(Who::User, Sandbox::LandlockWritable);
    }
}

/// A project that shares its hooks by links (`.git/hooks/pre-commit ->
/// ../../scripts/pre-commit`, and one whose script does not exist yet): under `git =
/// "protect"` the targets are kept read-only too, with the directories to them, so the run
/// cannot change what the operator's next `git commit` runs — neither the script, nor a new
/// one where the link dangles, nor by moving `scripts` away. Before, such a project's runs
/// were refused whole (125: "a sandboxed run could change what it points at"). Without
/// `protect`, the scan restores the script (redsurf21, round 8).
fn linked_hooks(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh(
        "mkdir -p scripts && printf '#!/bin/sh\\nexit 0\\n' > scripts/pre-commit && chmod +x scripts/pre-commit \
         && ln -s ../../scripts/pre-commit .git/hooks/pre-commit \
         && ln -s ../../scripts/post-commit .git/hooks/post-commit",
    );
    assert!(out.status.success(), "{}", describe(&out));
    let m = fx.marker.display().to_string();
    let out = fx.exec(&format!(
        "printf '#!/bin/sh\\ntouch {m}\\n' > scripts/pre-commit; \
         printf '#!/bin/sh\\ntouch {m}\\n' > scripts/post-commit; chmod +x scripts/post-commit; \
         mv scripts scripts.old && mkdir scripts && printf '#!/bin/sh\\ntouch {m}\\n' > scripts/pre-commit; true"
    ));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let commit = fx.operator_sh("git commit -q --allow-empty -m two");
    assert!(commit.status.success(), "{}", describe(&commit));
    assert!(
        !fx.marked(),
        "the operator's git commit ran what the run wrote\nrun: {}\ncommit: {}",
        describe(&out),
        describe(&commit)
    );
    if sandbox != Sandbox::LandlockWritable {
        // Kept by the kernel: nothing for the scan to put back.
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("cordon: warning:"),
            "{}",
            describe(&out)
        );
    }
}

mod linked_hooks {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        linked_hooks(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        linked_hooks(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        linked_hooks(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        linked_hooks(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        linked_hooks(Who::Root, Sandbox::LandlockWritable);
    }
    #[test]
    fn landlock_writable_as_user() {
        linked_hooks(Who::User, Sandbox::LandlockWritable);
    }
    /// Without cordon, the same writes make the operator's next commit run them.
    #[test]
    fn control() {
        let fx = Fixture::new(Who::Root, Sandbox::LandlockWritable);
        let m = fx.marker.display().to_string();
        let out = fx.operator_sh(&format!(
            "mkdir -p scripts && ln -s ../../scripts/pre-commit .git/hooks/pre-commit \
             && printf '#!/bin/sh\\ntouch {m}\\n' > scripts/pre-commit && chmod +x scripts/pre-commit \
             && git commit -q --allow-empty -m two"
        ));
        assert!(out.status.success(), "{}", describe(&out));
        assert!(
            fx.marked(),
            "the linked hook did not run\n{}",
            describe(&out)
        );
    }
}

/// A blob of a hook for direnv, written into the object store only.
const BLOB: &str = "id=$(printf 'touch /tmp/cordon-never\\n' | git hash-object -w --stdin)";
/// Git's plumbing with an identity (the run's environment has none).
const G: &str = "git -c user.name=run -c user.email=run@example.org";

/// How a run puts `.envrc` into git's state and none in the worktree, and what of the
/// operator's writes it out.
fn staged_plant(how: &str) -> (String, &'static str) {
    match how {
        "index" => (
            format!("{BLOB} && git update-index --add --cacheinfo 100644,$id,.envrc"),
            "git checkout -- .envrc",
        ),
        "head" => (
            format!(
                "{BLOB} && git update-index --add --cacheinfo 100644,$id,.envrc && t=$(git write-tree) \
                 && git update-index --force-remove .envrc && c=$({G} commit-tree $t -p HEAD -m c) \
                 && git update-ref HEAD $c"
            ),
            "git reset -q --hard",
        ),
        "stash" => (
            format!(
                "{BLOB} && git update-index --add --cacheinfo 100644,$id,.envrc && t=$(git write-tree) \
                 && git update-index --force-remove .envrc && i=$({G} commit-tree $t -p HEAD -m i) \
                 && c=$({G} commit-tree $t -p HEAD -p $i -m s) && {G} stash store -m s $c"
            ),
            "git stash pop -q",
        ),
        _ => unreachable!(),
    }
}

/// A run that stages, commits or stashes a surface file without leaving it in the worktree is
/// reported (on stderr and in the audit log); the operator's git would write it out. An
/// ordinary commit of ordinary files next to a committed surface file reports nothing.
fn staged_surface(who: Who, sandbox: Sandbox) {
    let mut missed = Vec::new();
    for how in ["index", "head", "stash"] {
        let fx = Fixture::new(who, sandbox);
        let (script, operator) = staged_plant(how);
        let out = fx.exec(&format!("{script} && echo PLANTED"));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("PLANTED"),
            "{how}: {}",
            describe(&out)
        );
        assert!(!fx.ws.join(".envrc").exists(), "{how}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let log = fs::read_to_string(fx.root.join("state/audit.jsonl")).unwrap();
        // Each way checked (not the first failure only): the three are separate holes.
        if !(stderr.contains("git-state") && stderr.contains(".envrc") && log.contains("git-state"))
        {
            missed.push(format!("{how}: {}\naudit: {log}", describe(&out)));
        }
        // The operator's git writes it out: the plant works.
        let out = fx.operator_sh(operator);
        assert!(out.status.success(), "{how}: {}", describe(&out));
        assert!(fx.ws.join(".envrc").exists(), "{how}: {}", describe(&out));
    }
    assert!(missed.is_empty(), "not reported:\n{}", missed.join("\n"));
    // No false alarm: a surface file the operator committed stays; the run commits others.
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh("echo 'use nix' > .envrc && git add .envrc && git commit -q -m envrc");
    assert!(out.status.success(), "{}", describe(&out));
    let out = fx.exec(&format!(
        "echo two > two.txt && git add two.txt && {G} commit -q -m two && echo 3 >> one.txt && {G} stash -q && echo DONE"
    ));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("DONE"),
        "{}",
        describe(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("cordon: warning:"), "{}", describe(&out));
}

mod staged_surface {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        staged_surface(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        staged_surface(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        staged_surface(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        staged_surface(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        staged_surface(Who::Root, Sandbox::LandlockWritable);
    }
    #[test]
    fn landlock_writable_as_user() {
        staged_surface(Who::User, Sandbox::LandlockWritable);
    }
}

/// `mk DIR`: a commit on top of HEAD that adds `DIR/.envrc`, made with plumbing alone (the
/// index and the worktree untouched); it prints the commit's id. `top`: the same with
/// `.envrc` at the top (run in another repository: a submodule's, a bare one).
const MK: &str = "blob() { printf 'touch /tmp/cordon-never\\n' | git hash-object -w --stdin; }; \
     mk() { t=$(printf '100644 blob %s\\t.envrc\\n' $(blob) | git mktree) \
     && r=$({ git ls-tree HEAD; printf '040000 tree %s\\t%s\\n' $t $1; } | git mktree) \
     && git -c user.name=run -c user.email=run@example.org commit-tree $r -p HEAD -m $1; }; \
     top() { t=$({ git ls-tree HEAD; printf '100644 blob %s\\t.envrc\\n' $(blob); } | git mktree) \
     && git -c user.name=run -c user.email=run@example.org commit-tree $t -p HEAD -m top; }";

/// One way to hide a surface file (`PATH` = `NAME/.envrc`) in git's state other than the index,
/// HEAD and `refs/stash`, and the operator's ordinary git that writes it out.
struct Hidden {
    name: &'static str,
    /// What the operator did before the run (in the workspace).
    setup: &'static str,
    /// What the run does (in the workspace, [`MK`] defined).
    run: &'static str,
    /// Where (relative to the workspace) and what the operator runs after it.
    operator_dir: &'static str,
    operator: &'static str,
}

const HIDDEN: &[Hidden] = &[
    Hidden {
        name: "branch",
        setup: "",
        run: "git branch feat $(mk branch)",
        operator_dir: ".",
        operator: "git checkout -q feat",
    },
    Hidden {
        name: "tag",
        setup: "",
        run: "git -c user.name=run -c user.email=run@example.org tag -a -m t v1 $(mk tag)",
        operator_dir: ".",
        operator: "git checkout -q v1",
    },
    Hidden {
        name: "remote",
        setup: "",
        run: "git update-ref refs/remotes/origin/main $(mk remote)",
        operator_dir: ".",
        operator: "git merge -q --ff-only origin/main",
    },
    Hidden {
        name: "packed",
        setup: "",
        run: "printf '%s refs/heads/packed\\n' $(mk packed) >> .git/packed-refs",
        operator_dir: ".",
        operator: "git checkout -q packed",
    },
    Hidden {
        name: "orig",
        setup: "",
        run: "git update-ref ORIG_HEAD $(mk orig)",
        operator_dir: ".",
        operator: "git reset -q --hard ORIG_HEAD",
    },
    Hidden {
        name: "fetch",
        setup: "",
        run: "printf '%s\\t\\tbranch main of ../up\\n' $(mk fetch) > .git/FETCH_HEAD",
        operator_dir: ".",
        operator: "git merge -q --ff-only FETCH_HEAD",
    },
    Hidden {
        name: "reflog",
        setup: "",
        // HEAD moved there and back: only HEAD's and its branch's reflogs name the commit.
        run: "o=$(git rev-parse HEAD) && git update-ref HEAD $(mk reflog) && git update-ref HEAD $o",
        operator_dir: ".",
        operator: "git reset -q --hard 'HEAD@{1}'",
    },
    Hidden {
        name: "sparse",
        // The operator works in a sparse checkout with a sparse index: `sparse/` is one entry
        // of the index (a directory's tree), not in the worktree.
        setup: "mkdir src sparse && echo a > src/a && echo b > sparse/b && git add src sparse \
                && git commit -q -m s && git sparse-checkout set --cone src \
                && git config index.sparse true",
        run: "s=$({ git ls-tree HEAD:sparse; printf '100644 blob %s\\t.envrc\\n' $(blob); } | git mktree) \
              && r=$({ git ls-tree HEAD | grep -v sparse; printf '040000 tree %s\\tsparse\\n' $s; } | git mktree) \
              && git reset -q $r -- sparse",
        operator_dir: ".",
        operator: "git sparse-checkout disable",
    },
    Hidden {
        name: "skip",
        setup: "",
        run: "git update-index --add --cacheinfo 100644,$(blob),skip/.envrc \
              && git update-index --skip-worktree skip/.envrc",
        operator_dir: ".",
        operator: "git sparse-checkout disable",
    },
    Hidden {
        name: "gitfile",
        // A repository whose `.git` is a file naming its git directory elsewhere in the root
        // (`git init --separate-git-dir`, a submodule's layout).
        setup: "git init -q --separate-git-dir=.gitfile-git gitfile \
                && echo a > gitfile/a && git -C gitfile add a && git -C gitfile commit -q -m a",
        run: "cd gitfile && git update-index --add --cacheinfo 100644,$(blob),.envrc",
        operator_dir: "gitfile",
        operator: "git checkout -- .envrc",
    },
    Hidden {
        name: "worktree",
        // A linked worktree: its git directory is the root's `.git/worktrees/worktree`.
        setup: "git worktree add -q worktree",
        run: "cd worktree && git update-index --add --cacheinfo 100644,$(blob),.envrc",
        operator_dir: "worktree",
        operator: "git checkout -- .envrc",
    },
    Hidden {
        name: "bare",
        // A bare repository in the root (a mirror the operator clones or adds worktrees from).
        setup: "git clone -q --bare . bare.git",
        run: "cd bare.git && git branch feat $(top)",
        operator_dir: ".",
        operator: "git clone -q -b feat bare.git bare",
    },
    Hidden {
        name: "modgl",
        // A submodule the operator deinitialized: its git directory `.git/modules/modgl`
        // stays, its worktree is empty (no `.git` file there leads to it). Cloned through
        // `file://`: a local path's clone hard-links the objects, which protect refuses.
        setup: "git init -q modgl-up && echo a > modgl-up/a && git -C modgl-up add a \
                && git -C modgl-up commit -q -m a \
                && git -c protocol.file.allow=always submodule add -q \"file://$PWD/modgl-up\" modgl \
                && git commit -q -m m && git submodule deinit -q modgl",
        run: "cd .git/modules/modgl && git update-ref refs/heads/feat $(top)",
        operator_dir: ".",
        operator: "git submodule update -q --init modgl && git -C modgl checkout -q feat",
    },
    Hidden {
        name: "gitlink",
        // A submodule whose git directory is its own `gitlink/.git` (an existing repository
        // added as one).
        setup: "git init -q gitlink && echo a > gitlink/a && git -C gitlink add a \
                && git -C gitlink commit -q -m a && git submodule add -q ./gitlink gitlink \
                && git commit -q -m gl",
        // The superproject's gitlink moved (in the index) to a commit that no ref holds: a
        // ref holds its child, which drops the file again (`git submodule update` checks
        // out a commit only when a ref reaches it).
        run: "cd gitlink && c=$(top) \
              && git update-ref refs/heads/keep $(git -c user.name=run -c user.email=run@example.org commit-tree HEAD^{tree} -p $c -m keep) \
              && cd .. && git update-index --cacheinfo 160000,$c,gitlink",
        operator_dir: ".",
        operator: "git submodule update -q",
    },
    Hidden {
        name: "glbranch",
        // The same submodule layout, the gitlink moved in a branch's commit instead.
        setup: "git init -q glbranch && echo a > glbranch/a && git -C glbranch add a \
                && git -C glbranch commit -q -m a && git submodule add -q ./glbranch glbranch \
                && git commit -q -m glb",
        run: "cd glbranch && c=$(top) \
              && git update-ref refs/heads/keep $(git -c user.name=run -c user.email=run@example.org commit-tree HEAD^{tree} -p $c -m keep) \
              && cd .. && r=$(git ls-tree HEAD | awk -v c=$c -F '\\t' '$2 == \"glbranch\" { print \"160000 commit \" c \"\\tglbranch\"; next } { print }' | git mktree) \
              && git branch glb $(git -c user.name=run -c user.email=run@example.org commit-tree $r -p HEAD -m glb)",
        operator_dir: ".",
        operator: "git checkout -q glb && git submodule update -q",
    },
    Hidden {
        name: "nest/in",
        // A submodule `nest` (its git directory `nest/.git`) that holds a submodule of its
        // own, `nest/in` (`nest/in/.git`): the superproject's gitlink moved to a commit of
        // `nest` whose gitlink `in` moved to a commit with the file (each kept reachable by a
        // child that drops the change again); `git submodule update --recursive` writes it.
        setup: "git init -q nest && echo a > nest/a && git -C nest add a && git -C nest commit -q -m a \
                && git init -q nest/in && echo a > nest/in/a && git -C nest/in add a \
                && git -C nest/in commit -q -m a && git -C nest submodule add -q ./in in \
                && git -C nest commit -q -m in && git submodule add -q ./nest nest \
                && git commit -q -m nest",
        run: "k() { git -c user.name=run -c user.email=run@example.org commit-tree HEAD^{tree} -p $1 -m keep; } \
              && cd nest/in && c=$(top) && git update-ref refs/heads/keep $(k $c) \
              && cd .. && r=$(git ls-tree HEAD | awk -v c=$c -F '\\t' '$2 == \"in\" { print \"160000 commit \" c \"\\tin\"; next } { print }' | git mktree) \
              && n=$(git -c user.name=run -c user.email=run@example.org commit-tree $r -p HEAD -m n) \
              && git update-ref refs/heads/keep $(k $n) \
              && cd .. && git update-index --cacheinfo 160000,$n,nest",
        operator_dir: ".",
        operator: "git submodule update -q --recursive",
    },
];

/// The plants of [`HIDDEN`] that write into `.git/worktrees` or `.git/modules`, read-only under
/// `sandbox.git = "protect"`.
const REFUSED_UNDER_PROTECT: &[&str] = &["worktree", "modgl"];

/// Each of [`HIDDEN`], without cordon: the operator's git writes the file out (the attack
/// works, so its test proves something).
#[test]
fn hidden_git_state_control() {
    for h in HIDDEN {
        let fx = Fixture::new(Who::Root, Sandbox::LandlockWritable);
        let setup = if h.setup.is_empty() { ":" } else { h.setup };
        let out = fx.operator_sh(&format!("set -e; {setup}; {MK}; {}", h.run));
        assert!(out.status.success(), "{}: {}", h.name, describe(&out));
        let path = fx.ws.join(h.name).join(".envrc");
        assert!(!path.exists(), "{}", h.name);
        let out = fx.operator_in(h.operator_dir, h.operator);
        assert!(out.status.success(), "{}: {}", h.name, describe(&out));
        assert!(
            path.exists(),
            "{}: not written out\n{}",
            h.name,
            describe(&out)
        );
    }
}

/// The operator's setups of [`HIDDEN`], in one workspace (the sparse checkout last: it takes
/// `branch/` and the others' directories out of the worktree, which the plants do not need).
fn hidden_setup(fx: &Fixture) {
    let mut setups: Vec<&str> = HIDDEN
        .iter()
        .map(|h| h.setup)
        .filter(|s| !s.is_empty())
        .collect();
    setups.sort_by_key(|s| s.contains("sparse-checkout"));
    let out = fx.operator_sh(&format!("set -e; {}", setups.join("; ")));
    assert!(out.status.success(), "{}", describe(&out));
}

/// The run of all of [`HIDDEN`] (each in a subshell, `OK-NAME` printed when it took).
fn hidden_script() -> String {
    let mut script = format!("{MK}; ");
    for h in HIDDEN {
        script.push_str(&format!("( {} ) && echo OK-{}; ", h.run, h.name));
    }
    script
}

/// The plants of [`HIDDEN`] that took (stdout), and those of them `text` does not name.
fn hidden_missed(stdout: &str, text: &str) -> (usize, Vec<&'static str>) {
    let took: Vec<&Hidden> = HIDDEN
        .iter()
        .filter(|h| stdout.contains(&format!("OK-{}\n", h.name)))
        .collect();
    let missed = took
        .iter()
        // A bare repository `NAME.git` has no worktree: the finding names the file in it.
        .filter(|h| {
            !text.contains(&format!("{}/.envrc", h.name))
                && !text.contains(&format!("{}.git/.envrc", h.name))
        })
        .map(|h| h.name)
        .collect();
    (took.len(), missed)
}

/// A run that hides a surface file in a branch, a tag, a remote-tracking ref, packed-refs,
/// ORIG_HEAD, FETCH_HEAD, a reflog entry, a sparse index's directory, a skip-worktree entry,
/// a separate git directory's index or a linked worktree's index is reported (stderr and the
/// audit log), each by its path.
fn hidden_git_state(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    hidden_setup(&fx);
    let out = fx.exec(&hidden_script());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (took, missed) = hidden_missed(&stdout, &stderr);
    // Under `protect` the git directories of a linked worktree (`.git/worktrees/`) and of a
    // submodule (`.git/modules/`) are read-only: those plants are refused there; every other
    // one takes everywhere.
    let refused = if sandbox == Sandbox::LandlockWritable {
        0
    } else {
        REFUSED_UNDER_PROTECT.len()
    };
    assert_eq!(took, HIDDEN.len() - refused, "{}", describe(&out));
    assert!(
        missed.is_empty(),
        "not reported: {missed:?}\n{}",
        describe(&out)
    );
    let log = fs::read_to_string(fx.root.join("state/audit.jsonl")).unwrap();
    assert!(log.contains("git-state"), "{log}");
}

mod hidden_git_state {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        hidden_git_state(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        hidden_git_state(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        hidden_git_state(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        hidden_git_state(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        hidden_git_state(Who::Root, Sandbox::LandlockWritable);
    }
    #[test]
    fn landlock_writable_as_user() {
        hidden_git_state(Who::User, Sandbox::LandlockWritable);
    }
}

/// Class 4: the run that hides them is SIGKILLed with its cordon before its scan; the next
/// run's scan of the dead run reports each, from the git state the dead run kept.
fn hidden_git_state_killed(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    hidden_setup(&fx);
    let out = killed_then_next(&fx, &format!("{{ {} }} > took.txt", hidden_script()));
    let stdout = fs::read_to_string(fx.ws.join("took.txt")).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ended before its after-run scan"),
        "{}",
        describe(&out)
    );
    let (took, missed) = hidden_missed(&stdout, &stderr);
    assert!(
        took >= HIDDEN.len() - REFUSED_UNDER_PROTECT.len(),
        "{stdout}"
    );
    assert!(
        missed.is_empty(),
        "not reported: {missed:?}\n{}",
        describe(&out)
    );
}

/// Runs `script` under cordon and SIGKILLs that cordon once the script is done (before its
/// after-run scan); the next run's output, whose scan is of the dead run too (what it reports
/// says "an earlier run's cordon ended before its after-run scan").
fn killed_then_next(fx: &Fixture, script: &str) -> Output {
    let mut c = fx.exec_cmd(&format!("{script}; touch planted.txt; exec sleep 300"));
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !fx.ws.join("planted.txt").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the plants never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    fx.exec("true")
}

/// Class 4 without the dead run's git state (past what a run keeps: 20,000 packed tags): a
/// branch the killed run made, its index untouched, is reported as not checked (by the ctime
/// of what holds the refs), not passed.
fn unkept_git_state_killed(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh(
        "h=$(git rev-parse HEAD) && seq 1 20000 | sed \"s|.*|$h refs/tags/t&|\" >> .git/packed-refs",
    );
    assert!(out.status.success(), "{}", describe(&out));
    let out = killed_then_next(&fx, &format!("{MK}; git branch feat $(mk branch)"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{} (changed, git-state): the dead run changed this repository's refs or reflogs, and cordon could not check",
            fx.ws.join(".git").display()
        )),
        "{}",
        describe(&out)
    );
}

/// The comparison of new commits is bounded in objects read and in time, and both ends are the
/// same "could not check", which says how many of how many it compared: a run that names 30
/// new commits (each a branch whose commit adds a `.envrc`), scanned with the bounds lowered
/// (`CORDON_GIT_SCAN_OBJECTS`, `CORDON_GIT_SCAN_MS`: a real run reaches them with 100,000
/// commits), is reported as not checked, never passed.
fn git_scan_bounds(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let script = format!("{MK}; for i in $(seq 1 30); do git branch b$i $(mk b$i) || exit 1; done");
    for (var, value, bounds) in [
        (
            "CORDON_GIT_SCAN_OBJECTS",
            "10",
            "(10 objects read per git directory, 5000 ms for the scan)",
        ),
        (
            "CORDON_GIT_SCAN_MS",
            "0",
            "(1000000 objects read per git directory, 0 ms for the scan)",
        ),
    ] {
        let out = fx.operator_sh("git for-each-ref --format='%(refname)' refs/heads/b* | xargs -r -n1 git update-ref -d && rm -rf .git/logs/refs/heads/b*");
        assert!(out.status.success(), "{}", describe(&out));
        let out = fx.exec_cmd(&script).env(var, value).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = stderr
            .lines()
            .find(|l| l.contains("the run made refs and reflogs name 30 new commits"))
            .unwrap_or_else(|| panic!("{var}: no bound reached\n{}", describe(&out)));
        assert!(
            line.contains(&format!(
                "{} (changed, git-state)",
                fx.ws.join(".git").display()
            )) && line.contains("could not check")
                && line.contains(&format!("within its bounds {bounds}")),
            "{var}: {line}"
        );
        // Fewer than all were compared: the rest is what the line is about.
        assert!(!line.contains("compared 30 of them"), "{var}: {line}");
    }
}

mod git_scan_bounds {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        git_scan_bounds(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        git_scan_bounds(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        git_scan_bounds(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        git_scan_bounds(Who::Root, Sandbox::LandlockWritable);
    }
}

mod unkept_git_state_killed {
    use super::*;
    #[test]
    fn bwrap_protect_as_user() {
        unkept_git_state_killed(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        unkept_git_state_killed(Who::Root, Sandbox::LandlockWritable);
    }
}

mod hidden_git_state_killed {
    use super::*;
    #[test]
    fn bwrap_protect_as_user() {
        hidden_git_state_killed(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        hidden_git_state_killed(Who::Root, Sandbox::LandlockWritable);
    }
}

/// The operator's two branches whose `.envrc` conflict.
const CONFLICTING: &str = "echo 'use nix' > .envrc && git add .envrc && git commit -q -m e \
     && git checkout -q -b feat && echo 'use flake' > .envrc && git commit -q -am f \
     && git checkout -q - && echo 'use guix' > .envrc && git commit -q -am m";

/// A recorded resolution of that conflict (`.git/rr-cache/ID/postimage`) that touches the
/// marker: the run learns the conflict's id from the same merge in a scratch clone with rerere
/// on. The directory alone turns rerere on for the operator.
fn rr_plant(marker: &Path) -> String {
    format!(
        "git clone -q . \"$TMPDIR/rr\" && cd \"$TMPDIR/rr\" && git checkout -q feat && git checkout -q - \
         && {{ {G} -c rerere.enabled=true merge -q feat >/dev/null 2>&1; true; }} \
         && id=$(ls .git/rr-cache) && cd - >/dev/null && mkdir -p .git/rr-cache/$id \
         && cp \"$TMPDIR/rr/.git/rr-cache/$id/preimage\" .git/rr-cache/$id/ \
         && printf 'touch {}\\n' > .git/rr-cache/$id/postimage && echo PLANTED",
        marker.display()
    )
}

/// What the operator does next: the merge (rerere writes its resolution into `.envrc`),
/// then what direnv would do with `.envrc`.
const MERGE_THEN_ENVRC: &str = "git merge feat >/dev/null 2>&1; sh .envrc >/dev/null 2>&1; true";

/// A run that records a conflict resolution for the operator's next merge (`.git/rr-cache`)
/// is refused under `protect`, and where `.git` is writable the scan moves it aside: the
/// operator's merge does not write the run's content into `.envrc`.
fn rr_cache(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh(CONFLICTING);
    assert!(out.status.success(), "{}", describe(&out));
    let out = fx.exec(&rr_plant(&fx.marker));
    let planted = String::from_utf8_lossy(&out.stdout).contains("PLANTED");
    assert_eq!(
        planted,
        sandbox == Sandbox::LandlockWritable,
        "{}",
        describe(&out)
    );
    if planted {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(".git/rr-cache"), "{}", describe(&out));
    }
    let merged = fx.operator_sh(MERGE_THEN_ENVRC);
    assert!(!fx.marked(), "{}\n{}", describe(&out), describe(&merged));
}

mod rr_cache {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        rr_cache(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        rr_cache(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        rr_cache(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        rr_cache(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_root() {
        rr_cache(Who::Root, Sandbox::LandlockWritable);
    }
    #[test]
    fn landlock_writable_as_user() {
        rr_cache(Who::User, Sandbox::LandlockWritable);
    }
    /// Without cordon the plant works: the merge writes it into `.envrc`.
    #[test]
    fn control() {
        let fx = Fixture::new(Who::Root, Sandbox::LandlockWritable);
        let out = fx.operator_sh(CONFLICTING);
        assert!(out.status.success(), "{}", describe(&out));
        let out = fx.operator_sh(&rr_plant(&fx.marker));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("PLANTED"),
            "{}",
            describe(&out)
        );
        let merged = fx.operator_sh(MERGE_THEN_ENVRC);
        assert!(fx.marked(), "{}", describe(&merged));
    }
}

/// A root that is a git directory itself under `sandbox.git = "protect"`: a bare repository
/// (`ws/bare.git` as the root) or a repository's `.git` given as the root. Its configuration
/// surface is read-only in the kernel (bwrap's mounts, the Landlock init's), as a root's own
/// `.git` is, not only refused by the file tools and undone by the scan: a command's write
/// to its config, a hook or `info/attributes` fails; git itself works there.
fn git_dir_root(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh("git clone -q --bare . bare.git");
    assert!(out.status.success(), "{}", describe(&out));
    let policy = fx.root.join("policies/cordon.toml");
    let text = fs::read_to_string(&policy).unwrap();
    for root in ["bare.git", ".git"] {
        fs::write(
            &policy,
            text.replace("root = \"../ws\"", &format!("root = \"../ws/{root}\"")),
        )
        .unwrap();
        let dir = fx.ws.join(root);
        let out = fx
            .exec_cmd_in(
                &dir,
                "git branch probe && echo GIT-OK; echo ran; \
                 for f in config hooks/post-checkout info/attributes; do \
                 ( printf '#x\\n' >> $f ) 2>/dev/null && echo WROTE-$f; done; true",
            )
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("ran"), "{root}: {}", describe(&out));
        // git works there meanwhile (what is missing of the surface reads as git's empty
        // files, not as a file it may not read).
        assert!(stdout.contains("GIT-OK"), "{root}: {}", describe(&out));
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("unable to access"),
            "{root}: {}",
            describe(&out)
        );
        assert!(!stdout.contains("WROTE"), "{root}: {}", describe(&out));
        for f in ["config", "info/attributes"] {
            let body = fs::read_to_string(dir.join(f)).unwrap_or_default();
            assert!(!body.contains("#x"), "{root}/{f}: {body}");
        }
        assert!(!dir.join("hooks/post-checkout").exists(), "{root}");
    }
}

mod git_dir_root {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        git_dir_root(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        git_dir_root(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        git_dir_root(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        git_dir_root(Who::User, Sandbox::LandlockProtect);
    }
}

/// A root that lies inside a git directory's configuration surface under `sandbox.git =
/// "protect"` (`proj/.git/hooks`, `proj/.git/info`, a bare repository's `hooks`): the
/// kernel keeps it read-only whole (bwrap's mounts, the Landlock init's), as that surface is
/// in a root that holds the `.git`; before, only the file tools refused and the scan undid the
/// command's write of a hook. Under `sandbox.git` writable the same write takes (the test can
/// fail).
fn root_inside_git_dir(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh("git clone -q --bare . bare.git");
    assert!(out.status.success(), "{}", describe(&out));
    let policy = fx.root.join("policies/cordon.toml");
    let text = fs::read_to_string(&policy).unwrap();
    for (root, file) in [
        (".git/hooks", "post-checkout"),
        (".git/info", "attributes"),
        ("bare.git/hooks", "pre-receive"),
    ] {
        fs::write(
            &policy,
            text.replace("root = \"../ws\"", &format!("root = \"../ws/{root}\"")),
        )
        .unwrap();
        let dir = fx.ws.join(root);
        let out = fx
            .exec_cmd_in(
                &dir,
                &format!("echo ran; ( printf '#x\\n' >> {file} ) 2>/dev/null && echo WROTE; true"),
            )
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("ran"), "{root}: {}", describe(&out));
        let wrote = stdout.contains("WROTE");
        assert_eq!(
            wrote,
            sandbox == Sandbox::LandlockWritable,
            "{root}: {}",
            describe(&out)
        );
        let _ = fs::remove_file(dir.join(file));
    }
}

mod root_inside_git_dir {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        root_inside_git_dir(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        root_inside_git_dir(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        root_inside_git_dir(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        root_inside_git_dir(Who::User, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_writable_as_user() {
        root_inside_git_dir(Who::User, Sandbox::LandlockWritable);
    }
}

/// A submodule the operator added from a local path under `sandbox.git = "protect"`: git's
/// local clone hard-links the objects into `.git/modules/sub/objects`, which is protected
/// whole (for the submodule's config and hooks). Every run in such a repository was refused
/// (125: "has 2 names (a hard link)"); now a git directory's objects are not walked for hard
/// links (git's content-addressed data, writable in the root's own `.git/objects` under
/// `protect` too), and the submodule's config stays read-only.
fn submodule_added_locally(who: Who, sandbox: Sandbox) {
    let fx = Fixture::new(who, sandbox);
    let out = fx.operator_sh(
        "git init -q up && echo a > up/a && git -C up add a && git -C up commit -q -m a \
         && git -c protocol.file.allow=always submodule add -q \"$PWD/up\" sub && git commit -q -m sub \
         && find .git/modules/sub/objects -type f -links +1 | grep -q .",
    );
    assert!(
        out.status.success(),
        "the local clone made no hard links: {}",
        describe(&out)
    );
    let out = fx.exec(
        "git -C sub log --oneline | grep -q ' a$' && echo GIT-OK; \
         ( echo '[core]' >> .git/modules/sub/config ) 2>/dev/null && echo WROTE; true",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("GIT-OK"),
        "{}",
        describe(&out)
    );
    assert!(!stdout.contains("WROTE"), "{}", describe(&out));
}

mod submodule_added_locally {
    use super::*;
    #[test]
    fn bwrap_protect_as_root() {
        submodule_added_locally(Who::Root, Sandbox::BwrapProtect);
    }
    #[test]
    fn bwrap_protect_as_user() {
        submodule_added_locally(Who::User, Sandbox::BwrapProtect);
    }
    #[test]
    fn landlock_protect_as_root() {
        submodule_added_locally(Who::Root, Sandbox::LandlockProtect);
    }
    #[test]
    fn landlock_protect_as_user() {
        submodule_added_locally(Who::User, Sandbox::LandlockProtect);
    }
}
