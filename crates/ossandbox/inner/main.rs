//! cordon's inner stage for the bubblewrap backend: a small, statically linked program that
//! bwrap runs inside the new namespaces, where it applies Landlock and execs the command.
//!
//! Landlock forbids mounts to a restricted process, so the ruleset cannot be applied before
//! bwrap builds the view; something must run between bwrap's setup and the command. cordon's
//! full binary did that job but cost a second start of a 5 MB dynamically linked program
//! (~1.1 ms); this program starts in ~0.3 ms (docs/benchmarks.md).
//!
//! cordon builds the Landlock ruleset in the parent from host paths: bwrap's binds show the
//! same inodes, and Landlock rules belong to inodes. Only what bwrap creates fresh (`/proc`,
//! `/dev`) must be opened here, in the sandbox's view. cordon embeds this binary and passes
//! it in a sealed memfd, so nothing on the host's filesystem is trusted to be it.
//!
//! Usage (cordon writes it; nobody else should):
//!
//! ```text
//! cordon-inner RULESET_FD COUNT [PATH DIR_RIGHTS FILE_RIGHTS]{COUNT} -- PROG ARGS...
//! ```
//!
//! Each PATH that exists gets a path-beneath rule with DIR_RIGHTS when it is a directory,
//! FILE_RIGHTS otherwise (a missing one is skipped, as on the host). Then no_new_privs,
//! `landlock_restrict_self`, every descriptor above stdio close-on-exec, and exec of PROG
//! (searched on `PATH`). Any failure before exec exits 125 with one `cordon: ` line; exec
//! failures exit 127 (not found) or 126, like cordon itself.
//!
//! Built by `build.rs` with rustc alone (std only, no crates), `crt-static`.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::AsRawFd;
use std::os::raw::{c_int, c_long};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;

// The generic syscall numbers (shared by x86_64 and the asm-generic architectures since 5.1).
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "powerpc64",
    target_arch = "s390x",
    target_arch = "loongarch64"
)))]
compile_error!(
    "the inner stage knows the syscall numbers of 64-bit generic-ABI architectures only"
);
const SYS_CLOSE_RANGE: c_long = 436;
const SYS_LANDLOCK_ADD_RULE: c_long = 445;
const SYS_LANDLOCK_RESTRICT_SELF: c_long = 446;
const LANDLOCK_RULE_PATH_BENEATH: c_int = 1;
const PR_SET_NO_NEW_PRIVS: c_int = 38;
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
const O_PATH: i32 = 0o10000000;

unsafe extern "C" {
    fn syscall(num: c_long, ...) -> c_long;
    fn prctl(option: c_int, ...) -> c_int;
}

// struct landlock_path_beneath_attr is packed in the kernel's UAPI.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let err = match run(&args) {
        Ok(never) => match never {},
        Err(e) => e,
    };
    eprintln!("cordon: {}", err.message);
    std::process::exit(err.code);
}

struct Failure {
    code: i32,
    message: String,
}

fn setup(message: String) -> Failure {
    Failure { code: 125, message }
}

enum Never {}

fn number<T: std::str::FromStr>(arg: Option<&OsString>, what: &str) -> Result<T, Failure> {
    arg.and_then(|a| a.to_str())
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| setup(format!("inner stage: expected {what}")))
}

fn run(args: &[OsString]) -> Result<Never, Failure> {
    let mut it = args.iter();
    let ruleset: c_int = number(it.next(), "the ruleset descriptor")?;
    let count: usize = number(it.next(), "the number of rules")?;
    for _ in 0..count {
        let path = it
            .next()
            .ok_or_else(|| setup("inner stage: expected a path".into()))?;
        let dir_rights: u64 = number(it.next(), "directory rights")?;
        let file_rights: u64 = number(it.next(), "file rights")?;
        add_rule(ruleset, path, dir_rights, file_rights)?;
    }
    if it.next().map(|a| a.as_bytes()) != Some(b"--") {
        return Err(setup(
            "inner stage: expected `--` before the command".into(),
        ));
    }
    let Some(program) = it.next() else {
        return Err(setup("inner stage: no command".into()));
    };
    let last_os = |what: &str| {
        setup(format!(
            "inner stage: {what}: {}",
            io::Error::last_os_error()
        ))
    };
    unsafe {
        if prctl(
            PR_SET_NO_NEW_PRIVS,
            1 as c_long,
            0 as c_long,
            0 as c_long,
            0 as c_long,
        ) != 0
        {
            return Err(last_os("no_new_privs"));
        }
        if syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset as c_long, 0 as c_long) != 0 {
            return Err(last_os("landlock_restrict_self"));
        }
        // Nothing of cordon's (the ruleset, this program's memfd) reaches the command.
        if syscall(
            SYS_CLOSE_RANGE,
            3 as c_long,
            u32::MAX as c_long,
            CLOSE_RANGE_CLOEXEC as c_long,
        ) != 0
        {
            return Err(last_os("close_range"));
        }
    }
    let e = std::process::Command::new(program).args(it).exec();
    let name = program.to_string_lossy();
    Err(if e.kind() == io::ErrorKind::NotFound {
        Failure {
            code: 127,
            message: format!("{name}: command not found"),
        }
    } else {
        Failure {
            code: 126,
            message: format!("{name}: cannot execute: {e}"),
        }
    })
}

fn add_rule(
    ruleset: c_int,
    path: &OsStr,
    dir_rights: u64,
    file_rights: u64,
) -> Result<(), Failure> {
    let shown = path.to_string_lossy();
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_PATH)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(setup(format!("inner stage: opening {shown}: {e}"))),
    };
    let is_dir = file
        .metadata()
        .map_err(|e| setup(format!("inner stage: {shown}: {e}")))?
        .is_dir();
    let attr = PathBeneath {
        allowed_access: if is_dir { dir_rights } else { file_rights },
        parent_fd: file.as_raw_fd(),
    };
    let r = unsafe {
        syscall(
            SYS_LANDLOCK_ADD_RULE,
            ruleset as c_long,
            LANDLOCK_RULE_PATH_BENEATH as c_long,
            &attr as *const PathBeneath,
            0 as c_long,
        )
    };
    if r != 0 {
        return Err(setup(format!(
            "inner stage: adding {shown}: {}",
            io::Error::last_os_error()
        )));
    }
    Ok(())
}
