//! A directory component is swapped for a symlink to outside the root, over and over, while
//! the file tools read and write through it: no read may ever return the outside file and
//! no write may ever touch the outside directory.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_policy::Policy;
use cordon_tools::files::{FileOp, FileTools, Limits};
use cordon_tools::tool::{Tool, ToolError};
use rustix::fs::{renameat_with, RenameFlags, CWD};
use serde_json::json;

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn swapping_a_directory_for_a_symlink_never_leaks_outside() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (ws, outside) = (base.join("ws"), base.join("outside"));
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(ws.join("d/f.txt"), "INSIDE").unwrap();
    std::fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("alt")).unwrap();
    let before = snapshot(&outside);

    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "p.toml",
        &base,
    )
    .unwrap();
    let tools = FileTools::new(&policy, Limits::default()).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, ws) = (stop.clone(), swaps.clone(), ws.clone());
        std::thread::spawn(move || {
            let (d, alt) = (ws.join("d"), ws.join("alt"));
            while !stop.load(Ordering::Relaxed) {
                // Atomically exchange the real directory and the symlink to outside.
                renameat_with(CWD, &d, CWD, &alt, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let (read, write) = (tools.tool(FileOp::Read), tools.tool(FileOp::Write));
    let edit = tools.tool(FileOp::Edit);
    let (mut ok, mut refused) = (0usize, 0usize);
    let deadline = Instant::now() + Duration::from_millis(1500);
    let mut i = 0u64;
    while Instant::now() < deadline {
        i += 1;
        // Read.
        match read.assess(&json!({"path": "ws/d/f.txt"})) {
            Ok(a) => {
                if a.refusal().is_some() {
                    refused += 1;
                } else {
                    assert_ne!(
                        a.presentation.preview.to_string(),
                        "OUTSIDE",
                        "a preview showed the outside file"
                    );
                    match read.execute(&a) {
                        Ok(out) => {
                            assert_eq!(out["content"], "INSIDE", "read leaked: {out}");
                            ok += 1;
                        }
                        Err(
                            ToolError::Denied { .. }
                            | ToolError::Changed { .. }
                            | ToolError::Failed { .. },
                        ) => refused += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            Err(ToolError::Failed { .. }) => refused += 1,
            Err(e) => panic!("{e}"),
        }
        // Write a new file and overwrite an existing one, through the swapped component.
        for args in [
            json!({"path": format!("ws/d/new{i}.txt"), "content": "W"}),
            json!({"path": "ws/d/f.txt", "content": "INSIDE"}),
        ] {
            match write.assess(&args) {
                Ok(a) if a.refusal().is_some() => refused += 1,
                Ok(a) => match write.execute(&a) {
                    Ok(_) => ok += 1,
                    Err(
                        ToolError::Denied { .. }
                        | ToolError::Changed { .. }
                        | ToolError::Failed { .. }
                        | ToolError::Io { .. },
                    ) => refused += 1,
                    Err(e) => panic!("{e}"),
                },
                Err(ToolError::Failed { .. }) => refused += 1,
                Err(e) => panic!("{e}"),
            }
        }
        // An edit that would change the outside file if it ever reached it.
        if let Ok(a) = edit.assess(&json!({"path": "ws/d/f.txt", "old": "SIDE", "new": "SIDE"})) {
            if a.refusal().is_none() {
                let _ = edit.execute(&a);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert_eq!(
        snapshot(&outside),
        before,
        "the outside directory was touched"
    );
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(swaps > 1000, "the race was not exercised ({swaps} swaps)");
    assert!(
        ok > 0 && refused > 0,
        "both outcomes must occur for the test to mean anything (ok {ok}, refused {refused})"
    );
    eprintln!("{i} rounds, {swaps} swaps, {ok} completed, {refused} refused");
}
