//! A tree a command made as deep as it liked (its private TMPDIR, `mkdirat` from the last
//! directory's descriptor, so no path length limit applies) is removed by
//! [`Dir::remove_tree`] with a small open-file limit and a small thread stack: a walk that
//! held one descriptor and one stack frame per level ran out of descriptors (EMFILE; the
//! TMPDIR stayed, silently) or overflowed the sweep thread's stack (cordon died of SIGSEGV on
//! every later run). Its own binary: it lowers the whole process's `RLIMIT_NOFILE`.

use std::os::fd::OwnedFd;
use std::path::Path;

use cordon_fs::safe::Dir;
use rustix::fs::{Mode, OFlags};

/// Deeper than the open-file limit below, and than a 256 KiB stack holds frames of a
/// recursive walk.
const DEPTH: usize = 3000;

fn open_dir(at: &OwnedFd, name: &str) -> OwnedFd {
    rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap()
}

#[test]
fn a_tree_deeper_than_the_open_file_limit_is_removed_from_a_small_stack() {
    let t = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), "keep").unwrap();
    let top = t.path().join("top");
    std::fs::create_dir(&top).unwrap();
    let mut cur = rustix::fs::open(
        &top,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    for level in 0..DEPTH {
        rustix::fs::mkdirat(&cur, "d", Mode::from_raw_mode(0o700)).unwrap();
        // Files, a FIFO and a link out at each level; every 97th level left mode 000 (the
        // command's way to make a sweep give up), once its child is open.
        std::fs::write(format!("/proc/self/fd/{}/f", fd_num(&cur)), "x").unwrap();
        rustix::fs::mknodat(
            &cur,
            "fifo",
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        rustix::fs::symlinkat(outside.path(), &cur, "out").unwrap();
        let next = open_dir(&cur, "d");
        if level % 97 == 0 {
            rustix::fs::fchmod(&cur, Mode::from_raw_mode(0o000)).unwrap();
        }
        cur = next;
    }
    drop(cur);
    let limit = rustix::process::Rlimit {
        current: Some(256),
        maximum: rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum,
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    let anchor = t.path().to_path_buf();
    let removed = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || Dir::anchor(&anchor).and_then(|d| d.remove_tree(Path::new("top"))))
        .unwrap()
        .join()
        .expect("the removal's thread did not panic");
    removed.unwrap();
    assert!(!top.exists(), "{} is still there", top.display());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("keep")).unwrap(),
        "keep"
    );
}

fn fd_num(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}
