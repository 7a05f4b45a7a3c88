//! A replacing write the disk cuts short (ENOSPC; here RLIMIT_FSIZE, which `write` reports the
//! same way) keeps the old content under the name and leaves no partial temporary file beside
//! it: on a full disk, cordon's own leftovers would hold space until a later write of the same
//! name swept them. Its own binary: it sets the whole process's `RLIMIT_FSIZE` and ignores
//! SIGXFSZ.

use std::path::Path;

use cordon_fs::safe::Dir;

#[test]
fn a_write_cut_short_keeps_the_old_content_and_leaves_nothing_beside_it() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("settings.json"), "old").unwrap();
    let d = Dir::anchor(t.path()).unwrap();
    // SAFETY: SIG_IGN installs no handler, so no code of ours runs in signal context; it only
    // turns the SIGXFSZ an oversized write would raise into EFBIG. This binary has this one
    // test.
    let old = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    assert_ne!(old, libc::SIG_ERR);
    let limit = |current| {
        rustix::process::setrlimit(
            rustix::process::Resource::Fsize,
            rustix::process::Rlimit {
                current,
                maximum: None,
            },
        )
        .unwrap()
    };
    limit(Some(100));
    let written = d.write(Path::new("settings.json"), &[b'x'; 1000], 0o600);
    // Lifted before anything else is written: the limit is the whole process's, and the test
    // harness's own output may go to a file (`cargo test > log`), which it would cut short.
    limit(None);
    let e = written.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge, "{e}");
    assert_eq!(
        std::fs::read_to_string(t.path().join("settings.json")).unwrap(),
        "old"
    );
    let names: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["settings.json"], "left beside it");
}
