//! cordon refuses to run a command when it cannot become a child subreaper: without that, a
//! descendant that left the command's process group would be re-parented past cordon and
//! outlive the run. The refusal is forced with a seccomp filter on the test's own thread that
//! makes `prctl(PR_SET_CHILD_SUBREAPER)` fail.

use crate::run;
use crate::seccomp::{self, Instruction};

/// A filter that fails `prctl(PR_SET_CHILD_SUBREAPER, …)` with EPERM and allows everything
/// else (written out: cordon's own rule table names only the calls it denies commands).
fn no_subreaper() -> Vec<Instruction> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    let i = |code, jt, jf, k| Instruction { code, jt, jf, k };
    vec![
        i(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        i(JEQ_K, 0, 3, libc::SYS_prctl as u32),
        i(LD_W_ABS, 0, 0, 16), // args[0], low word (little-endian)
        i(JEQ_K, 0, 1, libc::PR_SET_CHILD_SUBREAPER as u32),
        i(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        i(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

#[test]
fn a_run_that_cannot_become_a_subreaper_never_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let spec = run::Spec {
        program: "/bin/touch".into(),
        args: vec![marker.clone().into()],
        cwd: dir.path().to_path_buf(),
        env: vec![],
        timeout: None,
        stdio: Default::default(),
        proxy: None,
        release: None,
        cancel: None,
    };
    // A thread of its own: a filter binds the thread that installs it (and what it starts),
    // never the rest of the test process.
    let result = std::thread::spawn(move || {
        // SAFETY: PR_SET_NO_NEW_PRIVS takes an integer flag, no pointers; it binds this
        // thread only, which ends with the test.
        let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        assert_eq!(r, 0, "no_new_privs: {}", std::io::Error::last_os_error());
        // SAFETY: no_new_privs is set on this thread just above.
        unsafe { seccomp::install(&[no_subreaper()]) }.expect("the filter installs");
        // The filter does what the test needs.
        // SAFETY: takes an integer flag; refused by the filter, so nothing changes.
        let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        assert_eq!(r, -1, "the filter let PR_SET_CHILD_SUBREAPER through");
        run::run(run::Confinement::default(), &spec)
    })
    .join()
    .expect("the run's thread");
    match result {
        Err(e) if e.kind() == crate::ErrorKind::Failed => {
            let e = e.to_string();
            assert!(e.contains("cannot become a child subreaper"), "{e}");
            assert!(e.contains("Operation not permitted"), "{e}");
        }
        other => panic!("expected a refusal before the command starts, got {other:?}"),
    }
    assert!(!marker.exists(), "the command ran");
}
