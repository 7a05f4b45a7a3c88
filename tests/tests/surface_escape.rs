//! Issue 21, class 2, red team: the file tools' decision (`cordon check`, the same as
//! `cordon mcp`'s tools and `cordon hook`'s Write/Edit) on the persistence surface reached
//! through links the operator keeps in a root. With the home as the writable root and
//! `~/.config` a link into a dotfiles checkout, a write to `~/.config/git/config` (git's global
//! configuration: its fsmonitor runs in every repository) or to
//! `~/.config/opencode/plugin/x.js`, by either name, and a write through a project's
//! `.claude -> ../cfg` link, are never allowed by the root's mode alone: each is asked.
//! Ordinary files beside them stay allowed. As root and as the unprivileged `cordon-test`
//! user (the decision does not depend on the backend).

#![cfg(target_os = "linux")]

use cordon_e2e::{chown_tree, cordon_copied, is_root, test_user};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// `cordon`, copied once per test process where the unprivileged user can run it.
fn cordon() -> &'static Path {
    cordon_copied(Path::new(env!("CARGO_BIN_EXE_cordon-attack")))
}

#[test]
fn surface_writes_through_the_operators_links_are_asked() {
    assert!(is_root(), "run the escape suite as root (CI does)");
    for ids in [None, Some(test_user())] {
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-surface-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        for d in [
            "dotfiles/config/git",
            "dotfiles/config/opencode/plugin",
            "cfg",
            "proj",
        ] {
            fs::create_dir_all(ws.join(d)).unwrap();
        }
        std::os::unix::fs::symlink("dotfiles/config", ws.join(".config")).unwrap();
        std::os::unix::fs::symlink("../cfg", ws.join("proj/.claude")).unwrap();
        fs::create_dir(root.join("state")).unwrap();
        let policy = root.join("cordon.toml");
        fs::write(
            &policy,
            format!(
                "version = 1\n[sandbox.paths.ws]\nroot = {:?}\nmode = \"rw\"\n\
                 [approval]\naudit_log = \"state/audit.jsonl\"\n",
                ws.to_str().unwrap()
            ),
        )
        .unwrap();
        if let Some((uid, gid)) = ids {
            chown_tree(&ws, uid, gid);
            chown_tree(&root.join("state"), uid, gid);
        }
        let decide = |path: &str| {
            let mut c = Command::new(cordon());
            c.args(["check", "--json", "--policy"])
                .arg(&policy)
                .args(["write_file", &format!("path=ws/{path}"), "content=x"])
                .current_dir(&root)
                .env_clear()
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("HOME", &ws)
                .env("XDG_CONFIG_HOME", root.join("config"))
                .env("XDG_STATE_HOME", root.join("state"));
            if let Some((uid, gid)) = ids {
                c.uid(uid).gid(gid);
            }
            let o = c.output().unwrap();
            let v: serde_json::Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
            (
                v["decision"].as_str().unwrap_or_default().to_string(),
                v["rule"].as_str().unwrap_or_default().to_string(),
            )
        };
        let who = if ids.is_some() { "user" } else { "root" };
        for path in [
            ".config/git/config",
            "dotfiles/config/git/config",
            ".config/opencode/plugin/x.js",
            "dotfiles/config/opencode/plugin/y.js",
            "proj/.claude/settings.json",
        ] {
            assert_eq!(
                decide(path),
                ("ask".to_string(), "builtin:surface".to_string()),
                "[{who}] {path}"
            );
        }
        for path in ["notes.txt", "dotfiles/other.txt", "cfg/other.json"] {
            assert_eq!(decide(path).0, "allow", "[{who}] {path}");
        }
    }
}

/// Round 6 (surface21): what the surface points at, decided as root and as `cordon-test`:
/// the directory `core.hooksPath` names (set by the real git, through an included file kept
/// in the tree), that included file, the target of the operator's `.envrc -> envrc.shared`,
/// a name a case-insensitive file system folds to the surface (`.ENVRC`), and JetBrains'
/// `.idea/`. An include the deciding user cannot read makes every write in that repository
/// ask (as `cordon-test`: a mode-000 include; as root it is read, and the write allowed).
#[test]
fn what_the_surface_points_at_is_asked() {
    assert!(is_root(), "run the escape suite as root (CI does)");
    for ids in [None, Some(test_user())] {
        let tmp = tempfile::Builder::new()
            .prefix("cordon-e2e-pointed-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        let git = |dir: &Path, args: &[&str]| {
            let o = Command::new("git")
                .args(args)
                .current_dir(dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(o.status.success(), "git {args:?}: {o:?}");
        };
        fs::create_dir_all(ws.join("repo")).unwrap();
        git(&ws.join("repo"), &["init", "-q"]);
        git(
            &ws.join("repo"),
            &["config", "include.path", "../gitconfig.shared"],
        );
        fs::write(
            ws.join("repo/gitconfig.shared"),
            "[core]\n\thooksPath = tools/hooks\n",
        )
        .unwrap();
        fs::create_dir_all(ws.join("locked")).unwrap();
        git(&ws.join("locked"), &["init", "-q"]);
        git(
            &ws.join("locked"),
            &["config", "include.path", "../secret.cfg"],
        );
        fs::write(ws.join("envrc.shared"), "use nix\n").unwrap();
        std::os::unix::fs::symlink("envrc.shared", ws.join(".envrc")).unwrap();
        fs::create_dir(root.join("state")).unwrap();
        let policy = root.join("cordon.toml");
        fs::write(
            &policy,
            format!(
                "version = 1\n[sandbox.paths.ws]\nroot = {:?}\nmode = \"rw\"\n\
                 [approval]\naudit_log = \"state/audit.jsonl\"\n",
                ws.to_str().unwrap()
            ),
        )
        .unwrap();
        if let Some((uid, gid)) = ids {
            chown_tree(&ws, uid, gid);
            chown_tree(&root.join("state"), uid, gid);
        }
        // An include no one but root reads, in the `locked` repository.
        let secret = ws.join("locked/secret.cfg");
        fs::write(&secret, "[core]\n\thooksPath = h\n").unwrap();
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
        let decide = |path: &str| {
            let mut c = Command::new(cordon());
            c.args(["check", "--json", "--policy"])
                .arg(&policy)
                .args(["write_file", &format!("path=ws/{path}"), "content=x"])
                .current_dir(&root)
                .env_clear()
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("HOME", root.join("home"))
                .env("XDG_CONFIG_HOME", root.join("config"))
                .env("XDG_STATE_HOME", root.join("state"));
            if let Some((uid, gid)) = ids {
                c.uid(uid).gid(gid);
            }
            let o = c.output().unwrap();
            let v: serde_json::Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
            (
                v["decision"].as_str().unwrap_or_default().to_string(),
                v["rule"].as_str().unwrap_or_default().to_string(),
            )
        };
        let who = if ids.is_some() { "user" } else { "root" };
        let ask = ("ask".to_string(), "builtin:surface".to_string());
        for path in [
            "repo/tools/hooks/pre-commit",
            "repo/gitconfig.shared",
            "envrc.shared",
            ".ENVRC",
            "repo/.idea/workspace.xml",
        ] {
            assert_eq!(decide(path), ask, "[{who}] {path}");
        }
        for path in ["notes.txt", "repo/src.rs", "repo/tools/other"] {
            assert_eq!(decide(path).0, "allow", "[{who}] {path}");
        }
        let locked = decide("locked/src.rs");
        if ids.is_some() {
            assert_eq!(locked, ask, "[{who}] an include it cannot read");
        } else {
            assert_eq!(locked.0, "allow", "[{who}] root reads the include");
        }
    }
}
