//! Property: whatever relative path an agent sends — `..`, `.`, symlinks in, out, up and
//! absolute — a descriptor the resolver opens lies inside its root, as the kernel reports it
//! (`/proc/self/fd/N`), and every allowed assessment names a location inside the root.

use std::os::fd::AsFd;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_policy::Policy;
use cordon_tools::files::resolve::{fd_path, ResolveError, INSPECT};
use cordon_tools::files::{FileOp, FileTools, Limits};
use cordon_tools::tool::Tool;
use proptest::prelude::*;
use rustix::fs::OFlags;
use serde_json::json;

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    tools: Arc<FileTools>,
}

/// `base/ws` (the root) with directories, files and symlinks of every kind; `base/outside`.
fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    for d in ["ws/a/c", "ws/b", "outside/a"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    for f in [
        "ws/f.txt",
        "ws/a/g.txt",
        "ws/a/c/h.txt",
        "outside/f.txt",
        "outside/a/g.txt",
    ] {
        std::fs::write(base.join(f), f).unwrap();
    }
    let links: [(&str, PathBuf); 9] = [
        ("ws/l_in", "a".into()),
        ("ws/l_file", "f.txt".into()),
        ("ws/l_up", "..".into()),
        ("ws/l_abs", "/etc".into()),
        ("ws/l_out", "../outside".into()),
        ("ws/a/l_rel", "../b".into()),
        ("ws/a/l_esc", "../../outside".into()),
        ("ws/a/c/l_deep", "../../a/c/../..".into()),
        ("ws/b/l_root_abs", base.join("outside")),
    ];
    for (at, to) in links {
        symlink(to, base.join(at)).unwrap();
    }
    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "p.toml",
        &base,
    )
    .unwrap();
    let tools = FileTools::new(&policy, Limits::default()).unwrap();
    Tree {
        _dir: dir,
        root,
        tools,
    }
}

fn component() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a",
        "b",
        "c",
        "f.txt",
        "g.txt",
        "h.txt",
        "l_in",
        "l_file",
        "l_up",
        "l_abs",
        "l_out",
        "l_rel",
        "l_esc",
        "l_deep",
        "l_root_abs",
        "..",
        ".",
        "outside",
        "ws",
    ])
}

fn inside(root: &Path, real: &Path) -> bool {
    real.starts_with(root)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn an_opened_path_is_never_outside_its_root(comps in prop::collection::vec(component(), 0..7)) {
        thread_local!(static T: Tree = tree());
        T.with(|t| {
            let rel = comps.join("/");
            let path = if rel.is_empty() { "ws".to_string() } else { format!("ws/{rel}") };
            let roots = t.tools.roots();
            let Ok(target) = roots.parse(&path) else { return Ok(()) };
            // Every way the tools open things: follow (reads), directories, no-follow.
            for flags in [INSPECT, INSPECT | OFlags::DIRECTORY, INSPECT | OFlags::NOFOLLOW] {
                match roots.open(&target, flags) {
                    Ok(fd) => {
                        let real = fd_path(fd.as_fd()).unwrap();
                        prop_assert!(inside(&t.root, &real), "{path} opened {}", real.display());
                    }
                    Err(ResolveError::Refused(_) | ResolveError::NotFound | ResolveError::NotDir) => {}
                    Err(ResolveError::Io(e)) => prop_assert!(false, "{path}: {e}"),
                }
            }
            // The parent a write would use.
            if let Ok(parent) = roots.parent(&target) {
                let real = fd_path(parent.dir.as_fd()).unwrap();
                prop_assert!(inside(&t.root, &real), "{path}: parent {}", real.display());
            }
            // Assessments that are not denied name a place inside the root.
            let read = t.tools.tool(FileOp::Read).assess(&json!({"path": path}));
            if let Ok(a) = &read {
                if a.refusal().is_none() {
                    prop_assert!(a.keys[1] == "ws" || a.keys[1].starts_with("ws/"), "{path}: {:?}", a.keys);
                    let out = t.tools.tool(FileOp::Read).execute(a).unwrap();
                    let content = out["content"].as_str().unwrap_or("");
                    prop_assert!(!content.starts_with("outside/"), "{path} read {content}");
                }
            }
            let write = t.tools.tool(FileOp::Write).assess(&json!({"path": path, "content": "x"}));
            if let Ok(a) = &write {
                if a.refusal().is_none() {
                    prop_assert!(a.keys[1].starts_with("ws/"), "{path}: {:?}", a.keys);
                }
            }
            Ok(())
        })?;
    }
}
