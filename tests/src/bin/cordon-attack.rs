//! `cordon-attack <name> [--key value]…`: one sandbox-escape attempt per subcommand.
//!
//! Every attack prints exactly one line and exits:
//!
//! * exit 0, `BLOCKED: <detail>` — the attempt was refused (the detail names the errno);
//! * exit 1, `ESCAPED: <detail>` — the attempt worked;
//! * exit 2, `ERROR: <detail>` — the attack could not be set up, or the kernel answered in a
//!   way that says neither (e.g. a missing precondition).
//!
//! `legit-*` subcommands do ordinary work that must succeed in a sandboxed workspace: exit 0
//! with `OK: <detail>`, exit 1 with `FAILED: <detail>`.
//!
//! Attacks are precise about what counts as blocked. File attacks accept only the errnos a
//! sandbox produces (EACCES, EPERM, EXDEV for cross-directory links, EROFS for read-only
//! system files); anything else is an error. Syscall-filter attacks accept EPERM (what
//! cordon's seccomp filter returns; clone3 also ENOSYS); any other answer means the call
//! reached the kernel, i.e. was not filtered, and counts as escaped. A connect that fails
//! with ECONNREFUSED is an error, never "blocked".
//!
//! Context comes from the harness as `--key value` pairs: `--outside DIR` (a directory
//! outside every root, holding `secret.txt`, `victim.txt`, `emptydir/`, `prog.sh`), `--fd N`
//! (an inherited read-only fd of `secret.txt`), `--abstract NAME`, `--socket PATH`,
//! `--port N`, `--victim PID`, `--suid PATH`, `--handle TYPE:HEX` (a file handle of
//! `secret.txt`).

use std::collections::HashMap;
use std::ffi::{CStr, CString, OsStr};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

enum Out {
    Blocked(String),
    Escaped(String),
    Ok(String),
    Failed(String),
}

type Res = Result<Out, String>;

struct Ctx {
    args: HashMap<String, String>,
}

impl Ctx {
    fn parse(raw: &[String]) -> Result<Ctx, String> {
        let mut args = HashMap::new();
        let mut it = raw.iter();
        while let Some(k) = it.next() {
            let key = k
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {k:?}"))?;
            let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
            args.insert(key.to_string(), v.clone());
        }
        Ok(Ctx { args })
    }

    fn get(&self, key: &str) -> Result<&str, String> {
        self.args
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| format!("this attack needs --{key}"))
    }

    fn outside(&self) -> Result<PathBuf, String> {
        Ok(PathBuf::from(self.get("outside")?))
    }

    /// A path inside the outside directory that the harness created; checked with lstat,
    /// which no sandbox here restricts, so a missing file is a harness error.
    fn outside_existing(&self, name: &str) -> Result<PathBuf, String> {
        let p = self.outside()?.join(name);
        fs::symlink_metadata(&p)
            .map_err(|e| hidden_or(format!("precondition: {} missing: {e}", p.display())))?;
        Ok(p)
    }

    fn num<T: std::str::FromStr>(&self, key: &str) -> Result<T, String> {
        self.get(key)?
            .parse()
            .map_err(|_| format!("--{key} is not a number"))
    }
}

// ---------------------------------------------------------------------------------------------
// helpers

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn ename(e: i32) -> String {
    let name = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::ECHILD => "ECHILD",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENOTTY => "ENOTTY",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::ENOSYS => "ENOSYS",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ELOOP => "ELOOP",
        libc::ENOTSOCK => "ENOTSOCK",
        libc::EPROTONOSUPPORT => "EPROTONOSUPPORT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ESTALE => "ESTALE",
        libc::ENOKEY => "ENOKEY",
        _ => "",
    };
    let text = std::io::Error::from_raw_os_error(e);
    if name.is_empty() {
        format!("errno {e} ({text})")
    } else {
        format!("{name} ({text})")
    }
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(-1)
}

fn cstr(p: impl AsRef<OsStr>) -> CString {
    CString::new(p.as_ref().as_bytes()).expect("path with NUL")
}

fn preview(d: &[u8]) -> String {
    let s = String::from_utf8_lossy(&d[..d.len().min(40)]);
    format!("{:?}", s.trim_end())
}

const FS: &[i32] = &[libc::EACCES, libc::EPERM];
const FS_LINK: &[i32] = &[libc::EACCES, libc::EPERM, libc::EXDEV];
const FS_RO: &[i32] = &[libc::EACCES, libc::EPERM, libc::EROFS];
const SECCOMP: &[i32] = &[libc::EPERM];
const PERM: &[i32] = &[libc::EPERM, libc::EACCES];

/// A refusal with one of `blocked` is BLOCKED; any other errno is a harness error.
/// Set by `--backend bwrap`: the attack runs in bwrap's namespaces, where paths outside the
/// roots and other processes do not exist and system mounts are read-only.
static NAMESPACED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What a namespaced sandbox answers for what it hides: the target is not there.
const HIDDEN_BY_NAMESPACE: &[i32] = &[libc::ENOENT, libc::EROFS, libc::ESRCH];

fn fs_err(what: &str, e: i32, blocked: &[i32]) -> Res {
    let namespaced = NAMESPACED.load(std::sync::atomic::Ordering::Relaxed);
    if namespaced && HIDDEN_BY_NAMESPACE.contains(&e) && !blocked.contains(&e) {
        Ok(Out::Blocked(format!(
            "{what}: {} (not visible in the sandbox's namespaces)",
            ename(e)
        )))
    } else if blocked.contains(&e) {
        Ok(Out::Blocked(format!("{what}: {}", ename(e))))
    } else {
        Err(format!("{what}: unexpected {}", ename(e)))
    }
}

/// For syscalls a filter must stop: success escapes, one of `blocked` is BLOCKED, and any
/// other errno means the call reached the kernel unfiltered, which also escapes.
fn filtered(what: &str, rc: i64, blocked: &[i32]) -> Res {
    if rc >= 0 {
        return Ok(Out::Escaped(format!("{what} succeeded (returned {rc})")));
    }
    let e = errno();
    if blocked.contains(&e) {
        Ok(Out::Blocked(format!("{what}: {}", ename(e))))
    } else {
        Ok(Out::Escaped(format!(
            "{what} reached the kernel unfiltered: {}",
            ename(e)
        )))
    }
}

/// Success escapes, one of `blocked` is BLOCKED, anything else is an error.
fn strict(what: &str, rc: i64, blocked: &[i32], on_ok: impl FnOnce(i64) -> String) -> Res {
    if rc >= 0 {
        Ok(Out::Escaped(format!("{what}: {}", on_ok(rc))))
    } else {
        fs_err(what, errno(), blocked)
    }
}

fn read_attack(what: &str, path: &Path, blocked: &[i32]) -> Res {
    match fs::read(path) {
        Ok(d) => Ok(Out::Escaped(format!(
            "{what}: read {} bytes of {}: {}",
            d.len(),
            path.display(),
            preview(&d)
        ))),
        Err(e) => fs_err(what, io_errno(&e), blocked),
    }
}

fn open_write_attack(what: &str, path: &Path, blocked: &[i32]) -> Res {
    match fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(Out::Escaped(format!(
            "{what}: opened {} for writing (nothing written)",
            path.display()
        ))),
        Err(e) => fs_err(what, io_errno(&e), blocked),
    }
}

fn close(fd: i64) {
    if fd >= 0 {
        unsafe { libc::close(fd as i32) };
    }
}

fn pid() -> i32 {
    unsafe { libc::getpid() }
}

/// A `..` path from the current directory to `abs` (every component of the cwd climbed).
fn dotdot_path(abs: &Path) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("getcwd: {e}"))?;
    let depth = cwd.components().count().saturating_sub(1);
    let rel = abs
        .strip_prefix("/")
        .map_err(|_| "not absolute".to_string())?;
    Ok(PathBuf::from("../".repeat(depth)).join(rel))
}

/// The Landlock backend's namespace init (pid 1) when this runs in its namespace: the parent
/// is init (whose thread 2 is the inotify supervisor, `run/inotify.rs`, in the command's own
/// Landlock domain; init's main thread is outside it).
fn landlock_namespace_init() -> Option<i32> {
    let ppid = unsafe { libc::getppid() };
    (ppid == 1).then_some(1)
}

/// The parent process, which must be `cordon` (attacks on it are meaningless otherwise, and
/// must never hit the test harness). In the Landlock backend's namespace that is init, pid 1.
fn cordon_parent() -> Result<i32, String> {
    let ppid = landlock_namespace_init().unwrap_or_else(|| unsafe { libc::getppid() });
    let comm = fs::read_to_string(format!("/proc/{ppid}/comm"))
        .map_err(|e| format!("cannot read /proc/{ppid}/comm: {e}"))?;
    // In bwrap's PID namespace cordon is invisible; the parent is bwrap's init, which is
    // outside the Landlock domain just like cordon.
    let namespaced = NAMESPACED.load(std::sync::atomic::Ordering::Relaxed);
    if comm.trim_end() != "cordon" && !(namespaced && comm.trim_end() == "bwrap") {
        return Err(format!(
            "parent {ppid} is {:?}, not cordon: refusing to attack it",
            comm.trim_end()
        ));
    }
    Ok(ppid)
}

fn status_field(name: &str) -> Result<String, String> {
    let s = fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("read /proc/self/status: {e}"))?;
    s.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .map(|v| v.trim().to_string())
        .ok_or_else(|| format!("no {name} in /proc/self/status"))
}

fn cap_field(name: &str) -> Result<u64, String> {
    let v = status_field(name)?;
    u64::from_str_radix(&v, 16).map_err(|_| format!("bad {name}: {v}"))
}

/// Runs `f` in a forked child; the child's result is its exit status (0 = success).
fn wait_child(child: i64) -> Result<i32, String> {
    let mut st = 0;
    let r = unsafe { libc::waitpid(child as i32, &mut st, libc::__WALL) };
    if r < 0 {
        return Err(format!("waitpid: {}", ename(errno())));
    }
    Ok(st)
}

// ---------------------------------------------------------------------------------------------
// reading outside the roots

fn read_abs(c: &Ctx) -> Res {
    let p = c.outside_existing("secret.txt")?;
    read_attack("open(outside file, O_RDONLY)", &p, FS)
}

fn read_dotdot(c: &Ctx) -> Res {
    let p = c.outside_existing("secret.txt")?;
    let rel = dotdot_path(&p)?;
    read_attack(&format!("open({})", rel.display()), &rel, FS)
}

fn read_symlink(c: &Ctx) -> Res {
    let p = c.outside_existing("secret.txt")?;
    let link = PathBuf::from(format!("link-out-{}", pid()));
    std::os::unix::fs::symlink(&p, &link)
        .map_err(|e| format!("creating a symlink in the workspace failed: {e}"))?;
    read_attack("read through workspace symlink to outside file", &link, FS)
}

fn symlink_dir_write(c: &Ctx) -> Res {
    let out = c.outside()?;
    let link = PathBuf::from(format!("dirlink-{}", pid()));
    std::os::unix::fs::symlink(&out, &link)
        .map_err(|e| format!("creating a symlink in the workspace failed: {e}"))?;
    let target = link.join(format!("planted-{}", pid()));
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
    {
        Ok(_) => Ok(Out::Escaped(format!(
            "created {} through a workspace symlink",
            target.display()
        ))),
        Err(e) => fs_err(
            "create file through workspace symlink to outside dir",
            io_errno(&e),
            FS,
        ),
    }
}

fn hardlink_out(c: &Ctx) -> Res {
    let p = c.outside_existing("secret.txt")?;
    let link = PathBuf::from(format!("hardlink-{}", pid()));
    let rc = unsafe { libc::link(cstr(&p).as_ptr(), cstr(&link).as_ptr()) };
    if rc == 0 {
        let d = fs::read(&link).unwrap_or_default();
        return Ok(Out::Escaped(format!(
            "hard link to outside file created in the workspace; reads {}",
            preview(&d)
        )));
    }
    fs_err("link(outside file, workspace)", errno(), FS_LINK)
}

/// Round 8 (issue 21): the same link made from an `O_PATH` descriptor of the outside file,
/// through its `/proc/self/fd` magic link (`linkat` with `AT_SYMLINK_FOLLOW`, which needs no
/// capability), and with `AT_EMPTY_PATH`.
fn hardlink_procfd(c: &Ctx) -> Res {
    let p = c.outside_existing("secret.txt")?;
    let fd = unsafe { libc::open(cstr(&p).as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return fs_err("open(outside file, O_PATH)", errno(), FS);
    }
    let link = PathBuf::from(format!("procfd-link-{}", pid()));
    let magic = cstr(format!("/proc/self/fd/{fd}"));
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            magic.as_ptr(),
            libc::AT_FDCWD,
            cstr(&link).as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    let e = errno();
    let rc = if rc == 0 {
        rc
    } else if FS_LINK.contains(&e) {
        // AT_EMPTY_PATH (CAP_DAC_READ_SEARCH, root's): one refusal each is needed.
        let r = unsafe {
            libc::linkat(
                fd,
                c"".as_ptr(),
                libc::AT_FDCWD,
                cstr(&link).as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        if r != 0 && !FS_LINK.contains(&errno()) && errno() != libc::ENOENT {
            close(fd as i64);
            return fs_err("linkat(O_PATH fd, AT_EMPTY_PATH)", errno(), FS_LINK);
        }
        r
    } else {
        close(fd as i64);
        return fs_err("linkat(/proc/self/fd/N, AT_SYMLINK_FOLLOW)", e, FS_LINK);
    };
    close(fd as i64);
    if rc == 0 {
        let d = fs::read(&link).unwrap_or_default();
        return Ok(Out::Escaped(format!(
            "hard link to the outside file made from its O_PATH descriptor; reads {}",
            preview(&d)
        )));
    }
    fs_err("linkat(outside file's O_PATH fd, workspace)", e, FS_LINK)
}

fn rename_in(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let dst = PathBuf::from(format!("stolen-{}", pid()));
    match fs::rename(&p, &dst) {
        Ok(()) => Ok(Out::Escaped(
            "renamed an outside file into the workspace".into(),
        )),
        Err(e) => fs_err("rename(outside file, workspace)", io_errno(&e), FS_LINK),
    }
}

fn rename_out(c: &Ctx) -> Res {
    let src = PathBuf::from(format!("exfil-{}", pid()));
    fs::write(&src, "data").map_err(|e| format!("write in workspace failed: {e}"))?;
    let dst = c.outside()?.join(format!("exfil-{}", pid()));
    match fs::rename(&src, &dst) {
        Ok(()) => Ok(Out::Escaped(format!(
            "renamed a workspace file to {}",
            dst.display()
        ))),
        Err(e) => fs_err("rename(workspace file, outside)", io_errno(&e), FS_LINK),
    }
}

fn readdir_outside(c: &Ctx) -> Res {
    let out = c.outside()?;
    match fs::read_dir(&out) {
        Ok(rd) => {
            let names: Vec<String> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            Ok(Out::Escaped(format!("listed outside dir: {names:?}")))
        }
        Err(e) => fs_err("opendir(outside dir)", io_errno(&e), FS),
    }
}

fn exec_outside(c: &Ctx) -> Res {
    // prog.sh prints "ESCAPED: …" itself and exits 1 if it ever runs.
    let p = c.outside_existing("prog.sh")?;
    let cp = cstr(&p);
    let argv = [cp.as_ptr(), std::ptr::null()];
    unsafe { libc::execv(cp.as_ptr(), argv.as_ptr()) };
    fs_err("execve(outside program)", errno(), FS)
}

fn read_proc_self_root(c: &Ctx) -> Res {
    let p = c.outside_existing("secret.txt")?;
    let via = PathBuf::from(format!("/proc/self/root{}", p.display()));
    read_attack("read via /proc/self/root", &via, FS)
}

fn read_etc_shadow(_: &Ctx) -> Res {
    fs::symlink_metadata("/etc/shadow").map_err(|e| hidden_or(format!("no /etc/shadow: {e}")))?;
    read_attack("open(/etc/shadow)", Path::new("/etc/shadow"), FS)
}

// ---------------------------------------------------------------------------------------------
// writing outside the roots

fn create_outside(c: &Ctx) -> Res {
    let p = c.outside()?.join(format!("created-{}", pid()));
    match fs::OpenOptions::new().write(true).create_new(true).open(&p) {
        Ok(_) => Ok(Out::Escaped(format!("created {}", p.display()))),
        Err(e) => fs_err("create file in outside dir", io_errno(&e), FS),
    }
}

fn overwrite_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    match fs::OpenOptions::new().write(true).open(&p) {
        Ok(mut f) => {
            let _ = f.write_all(b"pwned");
            Ok(Out::Escaped(format!("overwrote {}", p.display())))
        }
        Err(e) => fs_err("open(outside file, O_WRONLY)", io_errno(&e), FS),
    }
}

fn truncate_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let rc = unsafe { libc::truncate(cstr(&p).as_ptr(), 0) };
    strict("truncate(outside file)", rc as i64, FS, |_| {
        "truncated to 0 bytes".into()
    })
}

fn chmod_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let rc = unsafe { libc::chmod(cstr(&p).as_ptr(), 0o777) };
    strict("chmod(outside file, 0777)", rc as i64, FS_RO, |_| {
        "mode changed".into()
    })
}

fn chmod_etc_passwd(_: &Ctx) -> Res {
    // The file's own mode again: success proves any mode could be set (e.g. setuid bits on
    // a root-owned binary), while changing nothing.
    let m = fs::metadata("/etc/passwd").map_err(|e| format!("stat /etc/passwd: {e}"))?;
    let rc = unsafe { libc::chmod(c"/etc/passwd".as_ptr(), m.mode() & 0o7777) };
    strict("chmod(/etc/passwd, its own mode)", rc as i64, FS_RO, |_| {
        "a system file's mode may be changed".into()
    })
}

fn chmod_dev_null(_: &Ctx) -> Res {
    // Its own mode again, as for /etc/passwd: success proves a device node of the host (root's)
    // could be made world-readable or -writable.
    let m = fs::metadata("/dev/null").map_err(|e| format!("stat /dev/null: {e}"))?;
    let rc = unsafe { libc::chmod(c"/dev/null".as_ptr(), m.mode() & 0o7777) };
    // The host's nodes live on its devtmpfs; bwrap as root makes nodes of its own on a
    // plain tmpfs (mknod), whose mode is the sandbox's alone.
    let dev = format!(
        " {}:{} ",
        libc::major(m.dev() as libc::dev_t),
        libc::minor(m.dev() as libc::dev_t)
    );
    let own_node = fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&dev))
        .any(|l| {
            l.split(" - ")
                .nth(1)
                .is_some_and(|t| t.starts_with("tmpfs "))
        });
    if rc == 0 && own_node {
        return Ok(Out::Blocked(
            "chmod(/dev/null) changed only the sandbox's own node (on a tmpfs of its own, not the host's devtmpfs)".into(),
        ));
    }
    strict("chmod(/dev/null, its own mode)", rc as i64, FS_RO, |_| {
        "a device node's mode may be changed".into()
    })
}

fn chmod_proc_kallsyms(_: &Ctx) -> Res {
    // A /proc entry that is not a process's keeps its mode in the kernel, shared by every
    // /proc mount of the host: root, its owner, needs no capability to chmod it (0666 on
    // irq/*/smp_affinity or acpi/wakeup hands their writes to every user). Its own mode
    // again, so success proves reach while changing nothing.
    let p = c"/proc/kallsyms";
    let m = fs::metadata("/proc/kallsyms").map_err(|e| format!("stat /proc/kallsyms: {e}"))?;
    let rc = unsafe { libc::chmod(p.as_ptr(), m.mode() & 0o7777) };
    strict(
        "chmod(/proc/kallsyms, its own mode)",
        rc as i64,
        FS_RO,
        |_| "a kernel /proc entry's mode, shared by the whole host, may be changed".into(),
    )
}

fn chown_etc_passwd(_: &Ctx) -> Res {
    // Its own owner and group again: the owner needs no capability for that, so success
    // proves the system file's ownership is within reach (changing nothing).
    let m = fs::metadata("/etc/passwd").map_err(|e| format!("stat /etc/passwd: {e}"))?;
    let rc = unsafe { libc::chown(c"/etc/passwd".as_ptr(), m.uid(), m.gid()) };
    strict(
        "chown(/etc/passwd, its own owner)",
        rc as i64,
        FS_RO,
        |_| "a system file's owner may be changed".into(),
    )
}

fn utime_usr_bin(_: &Ctx) -> Res {
    // A system program's own times again (only its ctime moves): success proves its times
    // could be forged.
    let p = c"/usr/bin/true";
    let m = fs::metadata("/usr/bin/true").map_err(|e| format!("stat /usr/bin/true: {e}"))?;
    let times = [
        libc::timespec {
            tv_sec: m.atime(),
            tv_nsec: m.atime_nsec(),
        },
        libc::timespec {
            tv_sec: m.mtime(),
            tv_nsec: m.mtime_nsec(),
        },
    ];
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, p.as_ptr(), times.as_ptr(), 0) };
    strict(
        "utimensat(/usr/bin/true, its own times)",
        rc as i64,
        FS_RO,
        |_| "a system program's times may be changed".into(),
    )
}

fn setuid_chmod_workspace(_: &Ctx) -> Res {
    // A setuid file left in the workspace runs as its owner (root, when cordon runs as root)
    // for whoever starts it later, outside the sandbox.
    fs::write("suid-chmod", b"#!/bin/sh\n").map_err(|e| format!("create in workspace: {e}"))?;
    let rc = unsafe { libc::chmod(c"suid-chmod".as_ptr(), 0o4755) };
    strict("chmod(workspace file, 04755)", rc as i64, SECCOMP, |_| {
        "a setuid file was made in the workspace".into()
    })
}

fn setgid_fchmod_workspace(_: &Ctx) -> Res {
    let f = fs::File::create("sgid-fchmod").map_err(|e| format!("create in workspace: {e}"))?;
    let rc = unsafe { libc::fchmod(std::os::fd::AsRawFd::as_raw_fd(&f), 0o2755) };
    strict("fchmod(workspace file, 02755)", rc as i64, SECCOMP, |_| {
        "a setgid file was made in the workspace".into()
    })
}

fn setuid_create_workspace(_: &Ctx) -> Res {
    let fd = unsafe {
        libc::open(
            c"suid-create".as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_EXCL,
            0o4755 as libc::c_uint,
        )
    };
    if fd >= 0 {
        let mode = fs::metadata("suid-create").map(|m| m.mode()).unwrap_or(0);
        unsafe { libc::close(fd) };
        if mode & 0o4000 == 0 {
            return Err("created, but the kernel dropped the setuid bit: inconclusive".into());
        }
    }
    strict(
        "open(O_CREAT, 04755) in the workspace",
        fd as i64,
        SECCOMP,
        |_| "a setuid file was created in the workspace".into(),
    )
}

fn utime_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let times = [libc::timespec {
        tv_sec: 946_684_800,
        tv_nsec: 0,
    }; 2];
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, cstr(&p).as_ptr(), times.as_ptr(), 0) };
    strict(
        "utimensat(outside file, 2000-01-01)",
        rc as i64,
        FS_RO,
        |_| "timestamps changed".into(),
    )
}

fn setxattr_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let rc = unsafe {
        libc::setxattr(
            cstr(&p).as_ptr(),
            c"user.cordon-e2e".as_ptr(),
            b"x".as_ptr().cast(),
            1,
            0,
        )
    };
    if rc < 0 && errno() == libc::EOPNOTSUPP {
        return Err("the file system has no user xattrs".into());
    }
    strict(
        "setxattr(outside file, user.cordon-e2e)",
        rc as i64,
        FS_RO,
        |_| "extended attribute set".into(),
    )
}

fn chown_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let rc = unsafe { libc::chown(cstr(&p).as_ptr(), 65534, 65534) };
    // In a user namespace that maps only the caller, 65534 does not exist: nothing to give.
    if rc < 0 && errno() == libc::EINVAL && NAMESPACED.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(Out::Blocked(
            "chown(outside file, 65534:65534): EINVAL (not mapped in the sandbox's user namespace)"
                .into(),
        ));
    }
    strict("chown(outside file, 65534:65534)", rc as i64, FS_RO, |_| {
        "owner changed".into()
    })
}

fn mkdir_outside(c: &Ctx) -> Res {
    let p = c.outside()?.join(format!("newdir-{}", pid()));
    let rc = unsafe { libc::mkdir(cstr(&p).as_ptr(), 0o755) };
    strict("mkdir(outside)", rc as i64, FS, |_| {
        "directory created".into()
    })
}

fn rmdir_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("emptydir")?;
    let rc = unsafe { libc::rmdir(cstr(&p).as_ptr()) };
    strict("rmdir(outside dir)", rc as i64, FS, |_| {
        "directory removed".into()
    })
}

fn unlink_outside(c: &Ctx) -> Res {
    let p = c.outside_existing("victim.txt")?;
    let rc = unlink_raw(&p);
    strict("unlink(outside file)", rc as i64, FS, |_| {
        "file removed".into()
    })
}

fn unlink_raw(p: &Path) -> i32 {
    unsafe { libc::unlink(cstr(p).as_ptr()) }
}

fn write_etc_passwd(_: &Ctx) -> Res {
    // Opening for append is the escape; nothing is ever written.
    match fs::OpenOptions::new().append(true).open("/etc/passwd") {
        Ok(_) => Ok(Out::Escaped(
            "opened /etc/passwd for appending (nothing written)".into(),
        )),
        Err(e) => fs_err("open(/etc/passwd, O_APPEND)", io_errno(&e), FS_RO),
    }
}

fn create_usr_bin(_: &Ctx) -> Res {
    let p = PathBuf::from(format!("/usr/bin/cordon-escape-{}", pid()));
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&p)
    {
        Ok(_) => {
            let _ = fs::remove_file(&p);
            Ok(Out::Escaped(format!(
                "created {} (removed again)",
                p.display()
            )))
        }
        Err(e) => fs_err("create file in /usr/bin", io_errno(&e), FS_RO),
    }
}

fn mknod_dev(kind: libc::mode_t, major: u32, minor: u32, what: &str) -> Res {
    let p = PathBuf::from(format!("{what}-{}", pid()));
    let rc = unsafe { libc::mknod(cstr(&p).as_ptr(), kind | 0o666, libc::makedev(major, minor)) };
    if rc == 0 {
        let _ = fs::remove_file(&p);
        return Ok(Out::Escaped(format!(
            "mknod {what} {major}:{minor} in the workspace (removed again)"
        )));
    }
    fs_err(&format!("mknod({what} device in workspace)"), errno(), FS)
}

fn mknod_char(_: &Ctx) -> Res {
    mknod_dev(libc::S_IFCHR, 1, 3, "char")
}

fn mknod_block(_: &Ctx) -> Res {
    mknod_dev(libc::S_IFBLK, 7, 0, "block")
}

fn proc_sys_write(_: &Ctx) -> Res {
    open_write_attack(
        "open(/proc/sys/kernel/core_pattern, O_WRONLY)",
        Path::new("/proc/sys/kernel/core_pattern"),
        FS_RO,
    )
}

fn sys_write(_: &Ctx) -> Res {
    const CANDIDATES: &[&str] = &[
        "/sys/kernel/uevent_helper",
        "/sys/kernel/rcu_expedited",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/power/state",
    ];
    let p = CANDIDATES
        .iter()
        .map(Path::new)
        .find(|p| {
            fs::metadata(p)
                .map(|m| m.is_file() && m.mode() & 0o200 != 0)
                .unwrap_or(false)
        })
        .ok_or_else(|| hidden_or("no root-writable sysfs file found".into()))?;
    open_write_attack(&format!("open({}, O_WRONLY)", p.display()), p, FS_RO)
}

// ---------------------------------------------------------------------------------------------
// inherited file descriptors

fn fd_scan(_: &Ctx) -> Res {
    let mut open = Vec::new();
    for fd in 3..64 {
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 {
            open.push(fd);
        }
    }
    // /proc/self/fd is authoritative for higher numbers; the fd read_dir itself uses is
    // closed again before we look at the result, so drop it by checking each with fcntl.
    if let Ok(rd) = fs::read_dir("/proc/self/fd") {
        let names: Vec<i32> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
            .collect();
        for fd in names {
            if fd >= 64 && unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 && !open.contains(&fd) {
                open.push(fd);
            }
        }
    }
    if open.is_empty() {
        return Ok(Out::Blocked(
            "no file descriptor beyond stdio is open (3..64 probed, /proc/self/fd listed)".into(),
        ));
    }
    let mut desc = Vec::new();
    for fd in &open {
        let target = fs::read_link(format!("/proc/self/fd/{fd}"))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|e| format!("? ({e})"));
        let mut buf = [0u8; 40];
        let n = unsafe { libc::pread(*fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        let content = if n > 0 {
            format!(" reads {}", preview(&buf[..n as usize]))
        } else {
            String::new()
        };
        desc.push(format!("fd {fd} -> {target}{content}"));
    }
    Ok(Out::Escaped(format!("inherited fds: {}", desc.join("; "))))
}

fn fd_reopen(c: &Ctx) -> Res {
    // The harness handed cordon fd N, an outside file opened read-only. Reopening it O_RDWR
    // through /proc/self/fd would upgrade it; ENOENT means the fd was closed (blocked).
    let n: i32 = c.num("fd")?;
    let p = format!("/proc/self/fd/{n}");
    match fs::OpenOptions::new().read(true).write(true).open(&p) {
        Ok(_) => Ok(Out::Escaped(format!(
            "reopened inherited fd {n} O_RDWR via {p}"
        ))),
        Err(e) => fs_err(
            &format!("open({p}, O_RDWR)"),
            io_errno(&e),
            &[libc::ENOENT, libc::EACCES, libc::EPERM],
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// other processes

fn proc_parent_environ(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    match fs::read(format!("/proc/{ppid}/environ")) {
        Ok(d) => {
            let secret = d
                .split(|b| *b == 0)
                .any(|v| v.starts_with(b"CORDON_TEST_SECRET="));
            Ok(Out::Escaped(format!(
                "read {} bytes of cordon's environment (secret present: {secret})",
                d.len()
            )))
        }
        Err(e) => fs_err("read /proc/<cordon>/environ", io_errno(&e), PERM),
    }
}

fn proc_parent_mem(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    match fs::File::open(format!("/proc/{ppid}/mem")) {
        Ok(_) => Ok(Out::Escaped("opened /proc/<cordon>/mem".into())),
        Err(e) => fs_err("open /proc/<cordon>/mem", io_errno(&e), PERM),
    }
}

fn proc_init_environ(_: &Ctx) -> Res {
    match fs::read("/proc/1/environ") {
        Ok(d) => Ok(Out::Escaped(format!(
            "read {} bytes of /proc/1/environ",
            d.len()
        ))),
        Err(e) => fs_err("read /proc/1/environ", io_errno(&e), PERM),
    }
}

fn proc_victim_environ(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    match fs::read(format!("/proc/{victim}/environ")) {
        Ok(d) => Ok(Out::Escaped(format!(
            "read {} bytes of the environment of process {victim} outside the sandbox",
            d.len()
        ))),
        Err(e) => fs_err("read /proc/<outside process>/environ", io_errno(&e), PERM),
    }
}

fn proc_parent_root(c: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    let p = c.outside_existing("secret.txt")?;
    let via = PathBuf::from(format!("/proc/{ppid}/root{}", p.display()));
    read_attack("read via /proc/<cordon>/root", &via, PERM)
}

fn proc_parent_cwd(c: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    let p = c.outside_existing("secret.txt")?;
    let rel = p.strip_prefix("/").map_err(|_| "not absolute")?;
    // Enough `..` to reach / from any cwd (extra `..` at / stay at /).
    let via = PathBuf::from(format!("/proc/{ppid}/cwd"))
        .join("../".repeat(64))
        .join(rel);
    read_attack("read via /proc/<cordon>/cwd/..", &via, PERM)
}

fn proc_parent_fd(_: &Ctx) -> Res {
    fds_of(cordon_parent()?)
}

/// The supervisor's /proc directory: on the Landlock backend with its namespaces, the inotify
/// supervisor is init's thread 2 (`run/inotify.rs`: the first task made in the namespace after
/// init), which holds the seccomp listener in init's descriptor table. It is in the command's
/// own Landlock domain with its credentials, so only its being not dumpable keeps its memory
/// and descriptors (the listener: answering its own calls) from the command. Elsewhere the
/// parent, cordon or bwrap's init, as for `proc-parent-*`.
fn supervisor_dir(c: &Ctx) -> Result<String, String> {
    let bwrap = c.args.get("backend").is_some_and(|b| b == "bwrap");
    if !bwrap && landlock_namespace_init().is_some() {
        let dir = "/proc/1/task/2".to_string();
        // A stat only (Landlock does not check it): the thread is there.
        if let Err(e) = fs::metadata(&dir) {
            return Err(format!("no inotify supervisor thread at {dir}: {e}"));
        }
        // Attacked once it serves: it has answered a watch, so it holds the listener and has
        // dropped its capabilities (before that, the kernel refuses the command for those).
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        let wd = unsafe { libc::inotify_add_watch(fd, c".".as_ptr(), libc::IN_CREATE) };
        if fd < 0 || wd < 0 {
            return Err(format!(
                "a watch in the workspace was not answered: {}",
                ename(errno())
            ));
        }
        close(fd as i64);
        return Ok(dir);
    }
    Ok(format!("/proc/{}", cordon_parent()?))
}

fn proc_supervisor_fd(c: &Ctx) -> Res {
    fds_in(&supervisor_dir(c)?)
}

fn proc_supervisor_mem(c: &Ctx) -> Res {
    let mem = format!("{}/mem", supervisor_dir(c)?);
    match fs::File::open(&mem) {
        Ok(_) => Ok(Out::Escaped(format!("opened {mem}"))),
        Err(e) => fs_err("open /proc/<supervisor>/mem", io_errno(&e), PERM),
    }
}

/// Resolving or opening `ppid`'s descriptors through /proc.
fn fds_of(ppid: i32) -> Res {
    fds_in(&format!("/proc/{ppid}"))
}

/// Resolving or opening the descriptors of the process or thread whose /proc directory is
/// `proc`.
fn fds_in(proc: &str) -> Res {
    // Listing the fd numbers needs only the directory's permission bits; what matters is
    // resolving or opening cordon's fds through the magic links.
    let dir = format!("{proc}/fd");
    let fds: Vec<String> = match fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => return fs_err("opendir /proc/<cordon>/fd", io_errno(&e), PERM),
    };
    if fds.is_empty() {
        return Err("cordon has no open fds?".into());
    }
    let mut refused = Vec::new();
    for fd in &fds {
        let link = format!("{dir}/{fd}");
        match fs::read_link(&link) {
            Ok(t) => {
                return Ok(Out::Escaped(format!(
                    "resolved cordon's fd {fd} -> {}",
                    t.display()
                )))
            }
            Err(e) if PERM.contains(&io_errno(&e)) => refused.push(ename(io_errno(&e))),
            Err(e) => return Err(format!("readlink {link}: {e}")),
        }
        let cl = cstr(&link);
        let r = unsafe { libc::open(cl.as_ptr(), libc::O_RDONLY | libc::O_NONBLOCK) };
        if r >= 0 {
            close(r as i64);
            return Ok(Out::Escaped(format!("opened cordon's fd {fd} via {link}")));
        }
        let e = errno();
        if !PERM.contains(&e) && e != libc::ENXIO {
            return Err(format!("open {link}: {}", ename(e)));
        }
    }
    refused.dedup();
    Ok(Out::Blocked(format!(
        "cordon's {} fds can be listed but neither resolved nor opened: {}",
        fds.len(),
        refused.join(", ")
    )))
}

/// Runs `f` in a forked child that prints its own report; a child killed by a signal is
/// reported here (a seccomp filter that kills instead of answering EPERM shows up so).
fn in_child(what: &str, f: fn() -> Res) -> Res {
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(format!("fork: {}", ename(errno())));
    }
    if child == 0 {
        finish(f());
    }
    let st = wait_child(child as i64)?;
    if libc::WIFEXITED(st) {
        std::process::exit(libc::WEXITSTATUS(st));
    }
    let sig = libc::WTERMSIG(st);
    if sig == libc::SIGSYS {
        return Err(format!(
            "{what}: the process was killed by SIGSYS: the seccomp filter kills instead of \
             returning EPERM"
        ));
    }
    Err(format!("{what}: the process died of signal {sig}"))
}

/// Sends `sig` to `target` from a forked grandchild that reports the result itself, so the
/// report survives the parent (or us) being killed by the signal.
fn kill_report(target: i32, sig: i32, what: &str) -> Res {
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(format!("fork: {}", ename(errno())));
    }
    if child == 0 {
        let rc = unsafe { libc::kill(target, sig) };
        let res = filtered(what, rc as i64, PERM);
        finish(res); // exits
    }
    let st = wait_child(child as i64)?;
    if libc::WIFEXITED(st) {
        std::process::exit(libc::WEXITSTATUS(st));
    }
    Err(format!("reporter died: status {st}"))
}

fn kill_parent_term(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    kill_report(ppid, libc::SIGTERM, "kill(cordon, SIGTERM)")
}

fn kill_parent_kill(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    kill_report(ppid, libc::SIGKILL, "kill(cordon, SIGKILL)")
}

fn kill_parent_probe(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    let rc = unsafe { libc::kill(ppid, 0) };
    filtered("kill(cordon, 0) permission probe", rc as i64, PERM)
}

fn kill_init_probe(_: &Ctx) -> Res {
    // Signal 0: the permission check without delivering anything to pid 1.
    let rc = unsafe { libc::kill(1, 0) };
    filtered("kill(1, 0) permission probe", rc as i64, PERM)
}

fn kill_outside_process(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    let rc = unsafe { libc::kill(victim, libc::SIGTERM) };
    if rc < 0 && errno() == libc::ESRCH {
        return Err(hidden_or(format!("victim {victim} does not exist")));
    }
    filtered(
        "kill(process outside the sandbox, SIGTERM)",
        rc as i64,
        PERM,
    )
}

fn ptrace_attach(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    let rc = unsafe { libc::syscall(libc::SYS_ptrace, libc::PTRACE_ATTACH, ppid, 0, 0) };
    if rc == 0 {
        // Collect the attach stop and let cordon go again.
        let mut st = 0;
        unsafe {
            libc::waitpid(ppid, &mut st, libc::__WALL);
            libc::syscall(libc::SYS_ptrace, libc::PTRACE_DETACH, ppid, 0, 0);
        }
        return Ok(Out::Escaped("PTRACE_ATTACH to cordon succeeded".into()));
    }
    filtered("ptrace(PTRACE_ATTACH, cordon)", rc, PERM)
}

fn ptrace_seize(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    // A seized tracee is not stopped; it is detached automatically when we exit.
    let rc = unsafe { libc::syscall(libc::SYS_ptrace, libc::PTRACE_SEIZE, ppid, 0, 0) };
    filtered("ptrace(PTRACE_SEIZE, cordon)", rc, PERM)
}

fn process_vm_readv(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    let addr = fs::read_to_string(format!("/proc/{ppid}/maps"))
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .is_some_and(|p| p.starts_with('r'))
                })
                .and_then(|l| l.split('-').next())
                .and_then(|a| usize::from_str_radix(a, 16).ok())
        })
        .unwrap_or(0x10000);
    let mut buf = [0u8; 16];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let rc = unsafe { libc::process_vm_readv(ppid, &local, 1, &remote, 1, 0) };
    filtered("process_vm_readv(cordon)", rc as i64, PERM)
}

fn pidfd_getfd(_: &Ctx) -> Res {
    let ppid = cordon_parent()?;
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, ppid, 0) };
    if pidfd < 0 {
        return fs_err("pidfd_open(cordon)", errno(), PERM);
    }
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd, 0, 0) };
    filtered("pidfd_getfd(cordon, fd 0)", rc, SECCOMP)
}

// ---------------------------------------------------------------------------------------------
// terminal

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;
const HIGH_BITS: u64 = 0xdead_0000_0000;

fn ioctl_raw(fd: i32, req: u64, arg: *const libc::c_void) -> i64 {
    unsafe { libc::syscall(libc::SYS_ioctl, fd, req, arg) }
}

fn tiocsti_stdin(req: u64) -> Res {
    if unsafe { libc::isatty(0) } != 1 {
        return Err("stdin is not a terminal (the harness passes a pty)".into());
    }
    let ch = b'#';
    let rc = ioctl_raw(0, req, (&ch as *const u8).cast());
    strict(
        &format!("ioctl(0, {req:#x}) (TIOCSTI on the terminal)"),
        rc,
        &[libc::EPERM, libc::EACCES, libc::EIO],
        |_| "pushed a character into the terminal's input".into(),
    )
}

fn tiocsti(_: &Ctx) -> Res {
    tiocsti_stdin(TIOCSTI)
}

fn tiocsti_highbits(_: &Ctx) -> Res {
    tiocsti_stdin(HIGH_BITS | TIOCSTI)
}

/// Filter probes: on an invalid fd the kernel answers EBADF, so anything but EPERM means the
/// ioctl was not filtered.
fn ioctl_probe(req: u64, name: &str) -> Res {
    let ch = b'#';
    let rc = ioctl_raw(-1, req, (&ch as *const u8).cast());
    filtered(&format!("ioctl(-1, {name} = {req:#x})"), rc, SECCOMP)
}

fn tiocsti_probe(_: &Ctx) -> Res {
    ioctl_probe(TIOCSTI, "TIOCSTI")
}

fn tiocsti_highbits_probe(_: &Ctx) -> Res {
    ioctl_probe(HIGH_BITS | TIOCSTI, "TIOCSTI|high bits")
}

fn tioclinux_probe(_: &Ctx) -> Res {
    ioctl_probe(TIOCLINUX, "TIOCLINUX")
}

fn tioclinux_highbits_probe(_: &Ctx) -> Res {
    ioctl_probe(HIGH_BITS | TIOCLINUX, "TIOCLINUX|high bits")
}

// ---------------------------------------------------------------------------------------------
// network

fn socket_attack(domain: i32, ty: i32, proto: i32, what: &str) -> Res {
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    close(fd as i64);
    filtered(what, fd as i64, PERM)
}

fn socket_inet_stream(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_INET,
        libc::SOCK_STREAM,
        0,
        "socket(AF_INET, SOCK_STREAM)",
    )
}

fn socket_inet_dgram(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_INET,
        libc::SOCK_DGRAM,
        0,
        "socket(AF_INET, SOCK_DGRAM)",
    )
}

fn socket_inet6(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_INET6,
        libc::SOCK_STREAM,
        0,
        "socket(AF_INET6, SOCK_STREAM)",
    )
}

fn socket_netlink(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_NETLINK,
        libc::SOCK_RAW,
        libc::NETLINK_ROUTE,
        "socket(AF_NETLINK, NETLINK_ROUTE)",
    )
}

fn socket_packet(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_PACKET,
        libc::SOCK_RAW,
        (libc::ETH_P_ALL as u16).to_be() as i32,
        "socket(AF_PACKET, SOCK_RAW)",
    )
}

fn socket_mptcp(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_INET,
        libc::SOCK_STREAM,
        262,
        "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)",
    )
}

fn socket_raw(_: &Ctx) -> Res {
    socket_attack(
        libc::AF_INET,
        libc::SOCK_RAW,
        libc::IPPROTO_ICMP,
        "socket(AF_INET, SOCK_RAW, ICMP)",
    )
}

fn socket_vsock(_: &Ctx) -> Res {
    socket_attack(libc::AF_VSOCK, libc::SOCK_STREAM, 0, "socket(AF_VSOCK)")
}

fn net_err(what: &str, e: &std::io::Error) -> Res {
    // ECONNREFUSED and friends say nothing about a sandbox: harness error.
    fs_err(what, io_errno(e), PERM)
}

fn tcp_loopback(_: &Ctx) -> Res {
    let l = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => return net_err("socket+bind(127.0.0.1:0)", &e),
    };
    let addr = l.local_addr().map_err(|e| format!("getsockname: {e}"))?;
    match std::net::TcpStream::connect(addr) {
        Ok(_) => Ok(Out::Escaped(format!(
            "TCP listen and connect on {addr} worked"
        ))),
        Err(e) => net_err(&format!("connect({addr})"), &e),
    }
}

fn udp_loopback(_: &Ctx) -> Res {
    let s = match std::net::UdpSocket::bind("127.0.0.1:0") {
        Ok(s) => s,
        Err(e) => return net_err("socket+bind(udp 127.0.0.1:0)", &e),
    };
    let addr = s.local_addr().map_err(|e| format!("getsockname: {e}"))?;
    if let Err(e) = s.send_to(b"ping", addr) {
        return net_err(&format!("sendto({addr})"), &e);
    }
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .map_err(|e| e.to_string())?;
    let mut buf = [0u8; 8];
    match s.recv_from(&mut buf) {
        Ok((n, _)) => Ok(Out::Escaped(format!(
            "UDP datagram of {n} bytes sent and received on {addr}"
        ))),
        Err(e) => Err(format!("recv on {addr}: {e}")),
    }
}

fn tcp_connect_harness(c: &Ctx) -> Res {
    let port: u16 = c.num("port")?;
    match std::net::TcpStream::connect(("127.0.0.1", port)) {
        Ok(_) => Ok(Out::Escaped(format!(
            "connected to the harness's listener on 127.0.0.1:{port}"
        ))),
        Err(e) => net_err(&format!("connect(127.0.0.1:{port})"), &e),
    }
}

fn abstract_connect(c: &Ctx) -> Res {
    use std::os::linux::net::SocketAddrExt;
    let name = c.get("abstract")?;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
        .map_err(|e| format!("abstract address: {e}"))?;
    match std::os::unix::net::UnixStream::connect_addr(&addr) {
        Ok(_) => Ok(Out::Escaped(format!(
            "connected to the harness's abstract socket @{name}"
        ))),
        Err(e) => net_err(&format!("connect(@{name})"), &e),
    }
}

fn unix_connect_outside(c: &Ctx) -> Res {
    let p = c.get("socket")?;
    fs::symlink_metadata(p).map_err(|e| hidden_or(format!("precondition: {p}: {e}")))?;
    match std::os::unix::net::UnixStream::connect(p) {
        Ok(_) => Ok(Out::Escaped(format!(
            "connected to the unix socket {p} outside the roots"
        ))),
        Err(e) => net_err(&format!("connect({p})"), &e),
    }
}

// ---------------------------------------------------------------------------------------------
// mounts and namespaces

fn mount_tmpfs(_: &Ctx) -> Res {
    let dir = PathBuf::from(format!("mnt-{}", pid()));
    fs::create_dir(&dir).map_err(|e| format!("mkdir in workspace: {e}"))?;
    let rc = unsafe {
        libc::mount(
            c"cordon".as_ptr(),
            cstr(&dir).as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            c"size=64k".as_ptr().cast(),
        )
    };
    if rc == 0 {
        unsafe { libc::umount2(cstr(&dir).as_ptr(), libc::MNT_DETACH) };
        return Ok(Out::Escaped("mounted a tmpfs (unmounted again)".into()));
    }
    filtered("mount(tmpfs)", rc as i64, SECCOMP)
}

fn remount_root_rw(_: &Ctx) -> Res {
    // The sandbox's read-only root made writable again (never run unconfined: it would change
    // the host's mount).
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        return Ok(Out::Escaped("remounted / writable".into()));
    }
    filtered("mount(/, MS_REMOUNT|MS_BIND, writable)", rc as i64, SECCOMP)
}

fn mount_setattr_rw(_: &Ctx) -> Res {
    // The same with the new mount API: clear MOUNT_ATTR_RDONLY on every mount (never run
    // unconfined, as above).
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set: 0,
        attr_clr: libc::MOUNT_ATTR_RDONLY,
        propagation: 0,
        userns_fd: 0,
    };
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            libc::AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        return Ok(Out::Escaped("cleared read-only on every mount".into()));
    }
    filtered("mount_setattr(/, AT_RECURSIVE, clear RDONLY)", rc, SECCOMP)
}

fn mount_bind_outside(c: &Ctx) -> Res {
    let out = c.outside()?;
    let dir = PathBuf::from(format!("bind-{}", pid()));
    fs::create_dir(&dir).map_err(|e| format!("mkdir in workspace: {e}"))?;
    let rc = unsafe {
        libc::mount(
            cstr(&out).as_ptr(),
            cstr(&dir).as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        let d = fs::read(dir.join("secret.txt")).unwrap_or_default();
        unsafe { libc::umount2(cstr(&dir).as_ptr(), libc::MNT_DETACH) };
        return Ok(Out::Escaped(format!(
            "bind-mounted the outside dir into the workspace; secret reads {}",
            preview(&d)
        )));
    }
    filtered("mount(outside, workspace, MS_BIND)", rc as i64, SECCOMP)
}

fn umount_probe(_: &Ctx) -> Res {
    // Not a mount point: past the permission check the kernel says EINVAL.
    let dir = PathBuf::from(format!("notmounted-{}", pid()));
    fs::create_dir(&dir).map_err(|e| format!("mkdir in workspace: {e}"))?;
    let rc = unsafe { libc::umount2(cstr(&dir).as_ptr(), 0) };
    filtered("umount2(workspace dir)", rc as i64, SECCOMP)
}

fn unshare_user(_: &Ctx) -> Res {
    let rc = unsafe { libc::unshare(libc::CLONE_NEWUSER) };
    filtered("unshare(CLONE_NEWUSER)", rc as i64, SECCOMP)
}

fn unshare_mount(_: &Ctx) -> Res {
    let rc = unsafe { libc::unshare(libc::CLONE_NEWNS) };
    filtered("unshare(CLONE_NEWNS)", rc as i64, SECCOMP)
}

fn unshare_net(_: &Ctx) -> Res {
    let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    filtered("unshare(CLONE_NEWNET)", rc as i64, SECCOMP)
}

fn clone_newuser(_: &Ctx) -> Res {
    let flags = (libc::CLONE_NEWUSER | libc::SIGCHLD) as libc::c_long;
    let rc = unsafe { libc::syscall(libc::SYS_clone, flags, 0, 0, 0, 0) };
    if rc == 0 {
        unsafe { libc::_exit(0) };
    }
    if rc > 0 {
        wait_child(rc)?;
    }
    filtered("clone(CLONE_NEWUSER)", rc, SECCOMP)
}

fn clone3(_: &Ctx) -> Res {
    // struct clone_args, CLONE_ARGS_SIZE_VER0 = 64 bytes: flags, pidfd, child_tid,
    // parent_tid, exit_signal, stack, stack_size, tls.
    let args: [u64; 8] = [0, 0, 0, 0, libc::SIGCHLD as u64, 0, 0, 0];
    let rc = unsafe { libc::syscall(libc::SYS_clone3, args.as_ptr(), 64usize) };
    if rc == 0 {
        unsafe { libc::_exit(0) };
    }
    if rc > 0 {
        wait_child(rc)?;
    }
    filtered("clone3()", rc, &[libc::ENOSYS, libc::EPERM])
}

fn setns(_: &Ctx) -> Res {
    let fd = unsafe { libc::open(c"/proc/self/ns/uts".as_ptr(), libc::O_RDONLY) };
    if fd < 0 {
        return Err(format!("open /proc/self/ns/uts: {}", ename(errno())));
    }
    let rc = unsafe { libc::setns(fd, libc::CLONE_NEWUTS) };
    filtered("setns(own uts namespace)", rc as i64, SECCOMP)
}

fn chroot(_: &Ctx) -> Res {
    let rc = unsafe { libc::chroot(c".".as_ptr()) };
    filtered("chroot(workspace)", rc as i64, SECCOMP)
}

fn pivot_root_probe(_: &Ctx) -> Res {
    // "." is not a mount point: past the permission check the kernel says EINVAL.
    let rc = unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) };
    filtered("pivot_root(., .)", rc, SECCOMP)
}

fn fsopen(_: &Ctx) -> Res {
    let rc = unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), 1) };
    close(rc);
    filtered("fsopen(tmpfs)", rc, SECCOMP)
}

fn open_tree(_: &Ctx) -> Res {
    // OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC: a detached copy of the root mount.
    let flags = 1 | libc::O_CLOEXEC;
    let rc = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, c"/".as_ptr(), flags) };
    close(rc);
    filtered("open_tree(/, OPEN_TREE_CLONE)", rc, SECCOMP)
}

// ---------------------------------------------------------------------------------------------
// kernel interfaces

fn io_uring_setup(_: &Ctx) -> Res {
    let mut params = [0u8; 120];
    let rc = unsafe { libc::syscall(libc::SYS_io_uring_setup, 4, params.as_mut_ptr()) };
    close(rc);
    filtered("io_uring_setup()", rc, SECCOMP)
}

fn bpf_prog_load(_: &Ctx) -> Res {
    // BPF_PROG_TYPE_SOCKET_FILTER: r0 = 0; exit.
    let insns: [u64; 2] = [0xb7, 0x95];
    let license = c"GPL";
    let mut attr = [0u64; 16];
    attr[0] = 1 | (2u64 << 32); // prog_type, insn_cnt
    attr[1] = insns.as_ptr() as u64;
    attr[2] = license.as_ptr() as u64;
    let rc = unsafe { libc::syscall(libc::SYS_bpf, 5, attr.as_ptr(), 128usize) };
    close(rc);
    filtered("bpf(BPF_PROG_LOAD)", rc, SECCOMP)
}

fn add_key(_: &Ctx) -> Res {
    let rc = unsafe {
        libc::syscall(
            libc::SYS_add_key,
            c"user".as_ptr(),
            c"cordon-e2e".as_ptr(),
            b"x".as_ptr(),
            1usize,
            -2i32, // KEY_SPEC_PROCESS_KEYRING
        )
    };
    filtered("add_key(user, process keyring)", rc, SECCOMP)
}

fn keyctl(_: &Ctx) -> Res {
    // KEYCTL_GET_KEYRING_ID of KEY_SPEC_USER_KEYRING (created if missing).
    let rc = unsafe { libc::syscall(libc::SYS_keyctl, 0, -4i32, 1) };
    filtered("keyctl(KEYCTL_GET_KEYRING_ID, user keyring)", rc, SECCOMP)
}

fn perf_event_open(_: &Ctx) -> Res {
    let mut attr = [0u64; 16];
    attr[0] = 1 | (128u64 << 32); // PERF_TYPE_SOFTWARE, size
    attr[1] = 1; // PERF_COUNT_SW_TASK_CLOCK
    attr[5] = 1 | (1 << 5) | (1 << 6); // disabled, exclude_kernel, exclude_hv
    let rc = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 8) };
    close(rc);
    filtered("perf_event_open(task clock, self)", rc, SECCOMP)
}

fn userfaultfd(_: &Ctx) -> Res {
    // UFFD_USER_MODE_ONLY (1) keeps it available to unprivileged users.
    let rc = unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | 1) };
    close(rc);
    filtered("userfaultfd(UFFD_USER_MODE_ONLY)", rc, SECCOMP)
}

fn init_module(_: &Ctx) -> Res {
    let rc = unsafe {
        libc::syscall(
            libc::SYS_init_module,
            std::ptr::null::<u8>(),
            0usize,
            c"".as_ptr(),
        )
    };
    filtered("init_module(empty image)", rc, SECCOMP)
}

fn finit_module(_: &Ctx) -> Res {
    let rc = unsafe { libc::syscall(libc::SYS_finit_module, -1, c"".as_ptr(), 0) };
    filtered("finit_module(-1)", rc, SECCOMP)
}

fn kexec_load(_: &Ctx) -> Res {
    // Invalid flags: past the permission check the kernel says EINVAL; nothing is loaded.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_kexec_load,
            0usize,
            0usize,
            std::ptr::null::<u8>(),
            0x100usize,
        )
    };
    filtered("kexec_load(invalid flags)", rc, SECCOMP)
}

fn reboot_probe(_: &Ctx) -> Res {
    // Wrong magic numbers: past the permission check the kernel says EINVAL.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_reboot,
            0xdead_i64,
            0xbeef_i64,
            0,
            std::ptr::null::<u8>(),
        )
    };
    filtered("reboot(bad magic)", rc, SECCOMP)
}

fn swapon_probe(_: &Ctx) -> Res {
    let rc = unsafe { libc::syscall(libc::SYS_swapon, c"/nonexistent-cordon-swap".as_ptr(), 0) };
    filtered("swapon(nonexistent)", rc, SECCOMP)
}

fn syslog_read(_: &Ctx) -> Res {
    // SYSLOG_ACTION_SIZE_BUFFER
    let rc = unsafe { libc::klogctl(10, std::ptr::null_mut(), 0) };
    filtered("syslog(SIZE_BUFFER)", rc as i64, SECCOMP)
}

fn sethostname(_: &Ctx) -> Res {
    let mut buf = [0u8; 256];
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return Err(format!("gethostname: {}", ename(errno())));
    }
    let name = CStr::from_bytes_until_nul(&buf).map_err(|e| e.to_string())?;
    // The same name again: a successful call changes nothing.
    let rc = unsafe { libc::sethostname(name.as_ptr(), name.to_bytes().len()) };
    filtered("sethostname(unchanged name)", rc as i64, SECCOMP)
}

fn fanotify_init(_: &Ctx) -> Res {
    let rc = unsafe { libc::fanotify_init(libc::FAN_CLASS_NOTIF, libc::O_RDONLY as u32) };
    close(rc as i64);
    filtered("fanotify_init()", rc as i64, SECCOMP)
}

fn open_by_handle_at(c: &Ctx) -> Res {
    #[repr(C)]
    struct FileHandle {
        handle_bytes: u32,
        handle_type: i32,
        f_handle: [u8; 128],
    }
    let p = c.outside_existing("secret.txt")?;
    let mut fh = FileHandle {
        handle_bytes: 128,
        handle_type: 0,
        f_handle: [0; 128],
    };
    if let Ok(h) = c.get("handle") {
        // The harness encoded the handle outside the sandbox ("TYPE:HEX"), so that
        // open_by_handle_at itself is what gets tested.
        let (ty, hex) = h.split_once(':').ok_or("--handle is TYPE:HEX")?;
        fh.handle_type = ty.parse().map_err(|_| "bad handle type")?;
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<_, _>>()
            .map_err(|_| "bad handle hex")?;
        fh.handle_bytes = bytes.len() as u32;
        fh.f_handle[..bytes.len()].copy_from_slice(&bytes);
    } else {
        let mut mount_id = 0i32;
        let rc = unsafe {
            libc::syscall(
                libc::SYS_name_to_handle_at,
                libc::AT_FDCWD,
                cstr(&p).as_ptr(),
                &mut fh as *mut FileHandle,
                &mut mount_id as *mut i32,
                0,
            )
        };
        if rc < 0 {
            let e = errno();
            if e == libc::EPERM {
                return Ok(Out::Blocked(format!("name_to_handle_at: {}", ename(e))));
            }
            return Err(format!("name_to_handle_at(outside file): {}", ename(e)));
        }
    }
    // AT_FDCWD names the mount of the workspace, which shares the file system with the
    // outside directory (both live under one temporary directory).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_by_handle_at,
            libc::AT_FDCWD,
            &fh as *const FileHandle,
            libc::O_RDONLY,
        )
    };
    if fd >= 0 {
        let mut f = unsafe { <fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) };
        let mut d = Vec::new();
        let _ = f.read_to_end(&mut d);
        return Ok(Out::Escaped(format!(
            "open_by_handle_at opened the outside file: {}",
            preview(&d)
        )));
    }
    filtered("open_by_handle_at(outside file)", fd, PERM)
}

// ---------------------------------------------------------------------------------------------
// foreign syscall ABIs (x86_64 only)

#[cfg(target_arch = "x86_64")]
const X32_BIT: i64 = 0x4000_0000;

#[cfg(target_arch = "x86_64")]
fn x32_getpid(_: &Ctx) -> Res {
    in_child("x32 getpid", || {
        let rc = unsafe { libc::syscall(X32_BIT | libc::SYS_getpid) };
        filtered("x32 getpid", rc, SECCOMP)
    })
}

#[cfg(target_arch = "x86_64")]
fn x32_socket(_: &Ctx) -> Res {
    in_child("x32 socket(AF_INET)", || {
        let rc = unsafe {
            libc::syscall(
                X32_BIT | libc::SYS_socket,
                libc::AF_INET,
                libc::SOCK_STREAM,
                0,
            )
        };
        close(rc);
        filtered("x32 socket(AF_INET)", rc, SECCOMP)
    })
}

/// A 32-bit (i386 ABI) system call through `int 0x80`; returns the raw kernel result.
#[cfg(target_arch = "x86_64")]
fn int80(nr: i32, a: u32, b: u32, c: u32) -> i64 {
    let ret: i32;
    // rbx cannot be named as an operand: swap it in and out around the call.
    unsafe {
        std::arch::asm!(
            "xchg {a:r}, rbx",
            "int 0x80",
            "xchg {a:r}, rbx",
            a = inout(reg) a as u64 => _,
            inlateout("eax") nr => ret,
            in("ecx") b,
            in("edx") c,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
        );
    }
    ret as i64
}

#[cfg(target_arch = "x86_64")]
fn ia32_result(what: &str, raw: i64) -> Res {
    if raw >= 0 {
        return Ok(Out::Escaped(format!("{what} succeeded (returned {raw})")));
    }
    let e = (-raw) as i32;
    if e == libc::EPERM {
        Ok(Out::Blocked(format!("{what}: {}", ename(e))))
    } else {
        Ok(Out::Escaped(format!(
            "{what} reached the kernel unfiltered: {}",
            ename(e)
        )))
    }
}

#[cfg(target_arch = "x86_64")]
fn ia32_getpid(_: &Ctx) -> Res {
    in_child("i386 getpid via int 0x80", || {
        ia32_result("i386 getpid via int 0x80", int80(20, 0, 0, 0))
    })
}

#[cfg(target_arch = "x86_64")]
fn ia32_socket(_: &Ctx) -> Res {
    in_child("i386 socket(AF_INET) via int 0x80", || {
        let r = int80(359, libc::AF_INET as u32, libc::SOCK_STREAM as u32, 0);
        close(r);
        ia32_result("i386 socket(AF_INET) via int 0x80", r)
    })
}

// ---------------------------------------------------------------------------------------------
// environment and privileges

fn env_secret(_: &Ctx) -> Res {
    let mut found = Vec::new();
    if std::env::var_os("CORDON_TEST_SECRET").is_some() {
        found.push("std::env");
    }
    let raw = fs::read("/proc/self/environ").map_err(|e| format!("/proc/self/environ: {e}"))?;
    if raw
        .split(|b| *b == 0)
        .any(|v| v.starts_with(b"CORDON_TEST_SECRET="))
    {
        found.push("/proc/self/environ");
    }
    if found.is_empty() {
        Ok(Out::Blocked(
            "CORDON_TEST_SECRET is in neither std::env nor /proc/self/environ".into(),
        ))
    } else {
        Ok(Out::Escaped(format!(
            "parent's CORDON_TEST_SECRET visible in {}",
            found.join(" and ")
        )))
    }
}

fn env_ld_preload(_: &Ctx) -> Res {
    let raw = fs::read("/proc/self/environ").map_err(|e| format!("/proc/self/environ: {e}"))?;
    let mut leaked: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|v| v.starts_with(b"LD_"))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    leaked.extend(
        std::env::vars_os()
            .filter(|(k, _)| k.as_bytes().starts_with(b"LD_"))
            .map(|(k, _)| k.to_string_lossy().into_owned()),
    );
    if leaked.is_empty() {
        Ok(Out::Blocked("no LD_* variable reached the child".into()))
    } else {
        Ok(Out::Escaped(format!("LD_* variables passed: {leaked:?}")))
    }
}

fn no_new_privs(_: &Ctx) -> Res {
    let v = status_field("NoNewPrivs")?;
    if v == "1" {
        Ok(Out::Blocked("NoNewPrivs: 1".into()))
    } else {
        Ok(Out::Escaped(format!(
            "NoNewPrivs: {v} (setuid binaries would gain privileges)"
        )))
    }
}

fn caps(_: &Ctx) -> Res {
    let mut held = Vec::new();
    for f in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        let v = cap_field(f)?;
        if v != 0 {
            held.push(format!("{f}={v:016x}"));
        }
    }
    if held.is_empty() {
        Ok(Out::Blocked(
            "CapInh, CapPrm, CapEff and CapAmb are all 0".into(),
        ))
    } else {
        Ok(Out::Escaped(format!(
            "capabilities held: {}",
            held.join(" ")
        )))
    }
}

fn cap_bounding(_: &Ctx) -> Res {
    let bnd = cap_field("CapBnd")?;
    if bnd == 0 {
        return Ok(Out::Blocked("CapBnd is 0".into()));
    }
    // Only root can empty the bounding set; for others no_new_privs is what keeps exec from
    // regaining anything in it.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 && status_field("NoNewPrivs")? == "1" {
        return Ok(Out::Blocked(format!(
            "CapBnd={bnd:016x} but not root and NoNewPrivs: 1"
        )));
    }
    Ok(Out::Escaped(format!(
        "CapBnd={bnd:016x} (euid {euid}) can be regained"
    )))
}

fn suid_exec(c: &Ctx) -> Res {
    // The harness made `--suid` a setuid-root copy of this binary; exec it and let it
    // report whether it gained anything.
    let p = c.get("suid")?;
    let m = fs::metadata(p).map_err(|e| format!("precondition: {p}: {e}"))?;
    if m.uid() != 0 || m.permissions().mode() & 0o4000 == 0 {
        // In bwrap's user namespace root's files belong to an unmapped user: no setuid-root.
        return Err(hidden_or(format!(
            "{p} is not setuid root (owner uid {})",
            m.uid()
        )));
    }
    let cp = cstr(p);
    let argv = [cp.as_ptr(), c"suid-report".as_ptr(), std::ptr::null()];
    unsafe { libc::execv(cp.as_ptr(), argv.as_ptr()) };
    fs_err("execve(setuid binary)", errno(), FS)
}

fn suid_report(_: &Ctx) -> Res {
    let (mut r, mut e) = (0, 0);
    unsafe {
        let mut s = 0;
        libc::getresuid(&mut r, &mut e, &mut s);
    }
    let eff = cap_field("CapEff")?;
    if e != r || eff != 0 {
        Ok(Out::Escaped(format!(
            "setuid exec raised privileges: ruid {r} euid {e} CapEff {eff:016x}"
        )))
    } else {
        Ok(Out::Blocked(format!(
            "setuid exec gained nothing: ruid {r} euid {e} CapEff 0"
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// legitimate work that must keep working

fn ok(msg: impl Into<String>) -> Res {
    Ok(Out::Ok(msg.into()))
}

fn check(cond: bool, msg: &str) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(msg.to_string())
    }
}

fn fail(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn legit_files(_: &Ctx) -> Res {
    let base = PathBuf::from(format!("legit-{}", pid()));
    fs::create_dir_all(base.join("a/b")).map_err(fail)?;
    fs::create_dir(base.join("c")).map_err(fail)?;
    let f = base.join("a/b/file.txt");
    fs::write(&f, "hello").map_err(fail)?;
    fs::OpenOptions::new()
        .append(true)
        .open(&f)
        .and_then(|mut h| h.write_all(b" world"))
        .map_err(fail)?;
    check(
        fs::read_to_string(&f).map_err(fail)? == "hello world",
        "content mismatch",
    )?;
    let same_dir = base.join("a/b/renamed.txt");
    fs::rename(&f, &same_dir).map_err(fail)?;
    let other_dir = base.join("c/moved.txt");
    fs::rename(&same_dir, &other_dir).map_err(|e| format!("rename across dirs: {e}"))?;
    fs::rename(base.join("a/b"), base.join("c/b")).map_err(|e| format!("rename dir: {e}"))?;
    fs::OpenOptions::new()
        .write(true)
        .open(&other_dir)
        .and_then(|h| h.set_len(5))
        .map_err(|e| format!("truncate: {e}"))?;
    check(
        fs::read_to_string(&other_dir).map_err(fail)? == "hello",
        "truncate mismatch",
    )?;
    fs::set_permissions(&other_dir, fs::Permissions::from_mode(0o600)).map_err(fail)?;
    let n = fs::read_dir(base.join("c")).map_err(fail)?.count();
    check(n == 2, "readdir count")?;
    fs::remove_file(&other_dir).map_err(fail)?;
    fs::remove_dir(base.join("c/b")).map_err(fail)?;
    fs::remove_dir_all(&base).map_err(fail)?;
    ok("created, wrote, appended, renamed (also across dirs), truncated, chmod, listed, deleted")
}

/// An inotify watch in the workspace works (on Landlock through cordon's supervisor, which
/// adds only watches the command could read): a directory named relatively (the caller's
/// working directory) and absolutely, with IN_ONLYDIR and IN_DONT_FOLLOW, one from another
/// thread, and a regular file; the events name what was made and show the write.
fn legit_inotify(_: &Ctx) -> Res {
    let base = PathBuf::from(format!("inotify-{}", pid()));
    fs::create_dir(&base).map_err(fail)?;
    let abs = fs::canonicalize(&base).map_err(fail)?;
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    check(fd >= 0, &format!("inotify_init1: {}", ename(errno())))?;
    let watch = |p: &std::path::Path, mask: u32| {
        let wd = unsafe { libc::inotify_add_watch(fd, cstr(p).as_ptr(), mask) };
        if wd < 0 {
            Err(format!(
                "inotify_add_watch({}): {}",
                p.display(),
                ename(errno())
            ))
        } else {
            Ok(wd)
        }
    };
    let long = CString::new(vec![b'a'; 5000]).expect("no NUL");
    let rel = watch(&base, libc::IN_CREATE)?;
    let again = watch(
        &abs,
        libc::IN_CREATE | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW,
    )?;
    check(
        rel == again,
        &format!("the same directory gave watches {rel} and {again}"),
    )?;
    // From another thread (file watchers often run in one): the kernel names the thread,
    // not the process, to the supervisor.
    let sub = base.join("sub");
    fs::create_dir(&sub).map_err(fail)?;
    let from_thread = {
        let sub = sub.clone();
        std::thread::spawn(move || {
            let wd = unsafe { libc::inotify_add_watch(fd, cstr(&sub).as_ptr(), libc::IN_CREATE) };
            (wd, errno())
        })
        .join()
        .map_err(|_| "the watching thread panicked".to_string())?
    };
    check(
        from_thread.0 >= 0,
        &format!("inotify_add_watch from a thread: {}", ename(from_thread.1)),
    )?;
    // The kernel's errors, as the program would see them unsupervised.
    let errs = [
        (std::ptr::null(), fd, libc::EFAULT, "a null path"),
        (
            long.as_ptr(),
            fd,
            libc::ENAMETOOLONG,
            "a path longer than PATH_MAX",
        ),
        (
            c".".as_ptr(),
            9999,
            libc::EBADF,
            "a descriptor that is not open",
        ),
    ];
    for (path, on, want, what) in errs {
        let wd = unsafe { libc::inotify_add_watch(on, path, libc::IN_CREATE) };
        let e = errno();
        check(
            wd == -1 && e == want,
            &format!("{what}: {wd} ({}), not {}", ename(e), ename(want)),
        )?;
    }
    let file = base.join("watched.txt");
    fs::write(&file, "").map_err(fail)?;
    let on_file = watch(&file, libc::IN_MODIFY)?;
    check(on_file != rel, "the file's watch is the directory's")?;
    fs::write(&file, "changed").map_err(fail)?;
    // The events are queued by the time the writes return.
    let mut buf = [0u8; 4096];
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    close(fd as i64);
    check(n > 0, &format!("no inotify event: {}", ename(errno())))?;
    let mut created = false;
    let mut modified = false;
    let mut at = 0usize;
    let size = std::mem::size_of::<libc::inotify_event>();
    while at + size <= n as usize {
        let ev: libc::inotify_event =
            unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
        let name = &buf[at + size..at + size + ev.len as usize];
        let name = name.split(|&b| b == 0).next().unwrap_or_default();
        if ev.wd == rel && ev.mask & libc::IN_CREATE != 0 && name == b"watched.txt" {
            created = true;
        }
        if ev.wd == on_file && ev.mask & libc::IN_MODIFY != 0 {
            modified = true;
        }
        at += size + ev.len as usize;
    }
    fs::remove_dir_all(&base).map_err(fail)?;
    check(created, "no IN_CREATE event naming watched.txt")?;
    check(modified, "no IN_MODIFY event on the watched file")?;
    ok("watches in the workspace (relative, absolute, from a thread, a file) see their events")
}

fn run_capture(prog: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(prog)
        .args(args)
        .output()
        .map_err(|e| format!("spawn {prog}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{prog} {args:?}: {} stderr {:?}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

fn legit_script(_: &Ctx) -> Res {
    let p = PathBuf::from(format!("script-{}.sh", pid()));
    fs::write(&p, "#!/bin/sh\necho script-ran \"$1\"\n").map_err(fail)?;
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).map_err(fail)?;
    let out = run_capture(&format!("./{}", p.display()), &["arg"])?;
    check(out.trim() == "script-ran arg", &format!("output {out:?}"))?;
    fs::remove_file(&p).map_err(fail)?;
    ok("wrote, chmod +x and ran a shell script in the workspace")
}

fn legit_pipe(_: &Ctx) -> Res {
    let out = run_capture("/bin/sh", &["-c", "echo hi | cat"])?;
    check(out == "hi\n", &format!("output {out:?}"))?;
    ok("sh -c 'echo hi | cat' printed hi")
}

fn legit_socketpair(_: &Ctx) -> Res {
    let (mut a, mut b) = std::os::unix::net::UnixStream::pair().map_err(fail)?;
    a.write_all(b"ping").map_err(fail)?;
    let mut buf = [0u8; 4];
    b.read_exact(&mut buf).map_err(fail)?;
    check(&buf == b"ping", "payload")?;
    ok("socketpair(AF_UNIX) carried data")
}

fn legit_tmpdir(_: &Ctx) -> Res {
    let tmp = std::env::var("TMPDIR").map_err(|_| "TMPDIR is not set".to_string())?;
    let f = run_capture("mktemp", &[])?;
    let f = f.trim();
    check(
        f.starts_with(&tmp),
        &format!("mktemp gave {f}, not in {tmp}"),
    )?;
    fs::write(f, "tmp").map_err(|e| format!("write {f}: {e}"))?;
    check(fs::read_to_string(f).map_err(fail)? == "tmp", "content")?;
    fs::remove_file(f).map_err(fail)?;
    ok(format!("mktemp in TMPDIR={tmp} works"))
}

fn legit_etc_passwd(_: &Ctx) -> Res {
    let s = fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    check(s.contains("root:"), "no root entry")?;
    ok("read /etc/passwd")
}

fn legit_ls_usr(_: &Ctx) -> Res {
    let out = run_capture("/bin/ls", &["/usr"])?;
    check(
        out.lines().any(|l| l == "bin"),
        &format!("ls /usr printed {out:?}"),
    )?;
    ok("/bin/ls /usr listed bin")
}

fn legit_mkfifo(_: &Ctx) -> Res {
    let p = PathBuf::from(format!("fifo-{}", pid()));
    let rc = unsafe { libc::mkfifo(cstr(&p).as_ptr(), 0o600) };
    if rc != 0 {
        return Err(format!("mkfifo: {}", ename(errno())));
    }
    fs::remove_file(&p).map_err(fail)?;
    ok("mkfifo in the workspace")
}

fn legit_links(_: &Ctx) -> Res {
    let f = PathBuf::from(format!("target-{}", pid()));
    fs::write(&f, "linked").map_err(fail)?;
    let s = PathBuf::from(format!("sym-{}", pid()));
    let h = PathBuf::from(format!("hard-{}", pid()));
    std::os::unix::fs::symlink(&f, &s).map_err(|e| format!("symlink: {e}"))?;
    fs::hard_link(&f, &h).map_err(|e| format!("hard link: {e}"))?;
    check(fs::read_to_string(&s).map_err(fail)? == "linked", "symlink")?;
    check(
        fs::read_to_string(&h).map_err(fail)? == "linked",
        "hardlink",
    )?;
    for p in [&s, &h, &f] {
        fs::remove_file(p).map_err(fail)?;
    }
    ok("symlink and hard link inside the workspace")
}

fn legit_dev(_: &Ctx) -> Res {
    fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .and_then(|mut f| f.write_all(b"x"))
        .map_err(|e| format!("/dev/null: {e}"))?;
    let mut buf = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    fs::File::open("/dev/zero")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| format!("/dev/zero: {e}"))?;
    check(buf == [0; 16], "/dev/zero")?;
    ok("/dev/null, /dev/urandom, /dev/zero")
}

fn legit_signal_child(_: &Ctx) -> Res {
    let mut child = Command::new("/bin/sleep")
        .arg("60")
        .spawn()
        .map_err(|e| format!("spawn sleep: {e}"))?;
    let rc = unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    if rc != 0 {
        let e = errno();
        let _ = child.kill();
        return Err(format!("kill(own child): {}", ename(e)));
    }
    let st = child.wait().map_err(fail)?;
    use std::os::unix::process::ExitStatusExt;
    check(st.signal() == Some(libc::SIGTERM), &format!("status {st}"))?;
    ok("signalled own child process")
}

fn legit_proc_self(_: &Ctx) -> Res {
    let s = fs::read_to_string("/proc/self/status").map_err(fail)?;
    check(s.contains("Pid:"), "status")?;
    fs::read_to_string("/proc/self/maps").map_err(fail)?;
    ok("read /proc/self/status and maps")
}

// ---------------------------------------------------------------------------------------------
// issue 12 classes 6/9/10/11: what the sandbox leaves of the host's devices
//
// Run by `tests/roots_escape.rs`, which passes what the sandbox cannot see: the identity of
// the host's device nodes (`--host-nodes null=DEV:INO,zero=DEV:INO,…`).

/// The device nodes every sandbox gets.
const DEVICE_NODES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// chmod to its own mode and utimensat to its own times on every device node: allowed on the
/// host's inode (a read-write bind, or Landlock, as root), either changes the host's node
/// (its ctime; any other mode or times just as well). A sandbox's own nodes may be changed.
fn dev_node_metadata(c: &Ctx) -> Res {
    let host: HashMap<&str, (u64, u64)> = c
        .get("host-nodes")?
        .split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let (d, i) = v.split_once(':')?;
            Some((k, (d.parse().ok()?, i.parse().ok()?)))
        })
        .collect();
    let (mut reached, mut own, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for name in DEVICE_NODES {
        let p = PathBuf::from(format!("/dev/{name}"));
        let Ok(m) = fs::metadata(&p) else { continue };
        let path = cstr(&p);
        let chmod = unsafe { libc::chmod(path.as_ptr(), m.mode() & 0o7777) };
        let chmod_err = errno();
        let times = [
            libc::timespec {
                tv_sec: m.atime(),
                tv_nsec: m.atime_nsec(),
            },
            libc::timespec {
                tv_sec: m.mtime(),
                tv_nsec: m.mtime_nsec(),
            },
        ];
        let utime = unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), times.as_ptr(), 0) };
        let utime_err = errno();
        if chmod != 0 && utime != 0 {
            for e in [chmod_err, utime_err] {
                if !FS_RO.contains(&e) {
                    return Err(format!(
                        "chmod/utimensat({}): unexpected {}",
                        p.display(),
                        ename(e)
                    ));
                }
            }
            refused.push(format!("{name}: {}", ename(chmod_err)));
        } else if host.get(name) == Some(&(m.dev(), m.ino())) {
            reached.push(format!(
                "{}{}",
                name,
                if chmod == 0 {
                    " (chmod)"
                } else {
                    " (utimensat)"
                }
            ));
        } else {
            own.push(name.to_string());
        }
    }
    if !reached.is_empty() {
        return Ok(Out::Escaped(format!(
            "changed the metadata of the host's device nodes: {}",
            reached.join(", ")
        )));
    }
    if refused.is_empty() && own.is_empty() {
        return Err("no device node found in /dev".into());
    }
    Ok(Out::Blocked(format!(
        "the host's device nodes are out of reach (refused: {}; the sandbox's own: {})",
        refused.join(", "),
        own.join(", ")
    )))
}

/// Attacks `tests/roots_escape.rs` runs with arguments of its own.
const ISSUE_12_HIDDEN: &[(&str, Attack)] = &[("dev-node-metadata", dev_node_metadata)];

// ---------------------------------------------------------------------------------------------
// issue 12 classes 3/5/8: host processes reached without a signal, SysV IPC, /proc views,
// leftovers. Each attack writes back the value it read, so a success changes nothing.

/// What a process-targeting call answers when the sandbox stops it: seccomp's EPERM, or
/// ESRCH when the target is outside the sandbox's PID namespace.
const OTHER_PROCESS: &[i32] = &[libc::EPERM, libc::ESRCH];

fn other_process(what: &str, rc: i64) -> Res {
    if rc >= 0 {
        return Ok(Out::Escaped(format!("{what} succeeded")));
    }
    let e = errno();
    if OTHER_PROCESS.contains(&e) {
        Ok(Out::Blocked(format!("{what}: {}", ename(e))))
    } else {
        Err(format!("{what}: unexpected {}", ename(e)))
    }
}

/// prlimit64 on `target`: read RLIMIT_NOFILE, then write the same value back.
fn prlimit_same(target: i32, what: &str) -> Res {
    let mut old = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let rc = unsafe { libc::prlimit64(target, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old) };
    if rc != 0 {
        return other_process(&format!("prlimit64({what}) read"), rc as i64);
    }
    let rc = unsafe { libc::prlimit64(target, libc::RLIMIT_NOFILE, &old, std::ptr::null_mut()) };
    other_process(
        &format!("prlimit64({what}, RLIMIT_NOFILE) write"),
        rc as i64,
    )
}

fn prlimit_parent(_: &Ctx) -> Res {
    prlimit_same(cordon_parent()?, "cordon")
}

fn prlimit_victim(c: &Ctx) -> Res {
    prlimit_same(c.num("victim")?, "process outside")
}

fn setpriority_victim(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    unsafe { *libc::__errno_location() = 0 };
    let prio = unsafe { libc::getpriority(libc::PRIO_PROCESS, victim as libc::id_t) };
    if prio == -1 && errno() != 0 {
        return other_process("getpriority(process outside)", -1);
    }
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, victim as libc::id_t, prio) };
    other_process(
        "setpriority(process outside, its own nice value)",
        rc as i64,
    )
}

fn sched_setaffinity_victim(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    let rc = unsafe { libc::sched_getaffinity(victim, size, &mut set) };
    if rc != 0 {
        return other_process("sched_getaffinity(process outside)", rc as i64);
    }
    let rc = unsafe { libc::sched_setaffinity(victim, size, &set) };
    other_process(
        "sched_setaffinity(process outside, its own mask)",
        rc as i64,
    )
}

fn sched_setscheduler_victim(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    let param = libc::sched_param { sched_priority: 0 };
    let rc = unsafe { libc::sched_setscheduler(victim, libc::SCHED_OTHER, &param) };
    other_process(
        "sched_setscheduler(process outside, SCHED_OTHER)",
        rc as i64,
    )
}

fn ioprio_set_victim(c: &Ctx) -> Res {
    const IOPRIO_WHO_PROCESS: i64 = 1;
    let victim: i32 = c.num("victim")?;
    let prio = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, victim) };
    if prio < 0 {
        return other_process("ioprio_get(process outside)", prio);
    }
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, victim, prio) };
    other_process("ioprio_set(process outside, its own priority)", rc)
}

fn oom_score_adj_victim(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    let p = PathBuf::from(format!("/proc/{victim}/oom_score_adj"));
    let value = match fs::read_to_string(&p) {
        Ok(v) => v,
        Err(e) => {
            return fs_err(
                "read /proc/<outside process>/oom_score_adj",
                io_errno(&e),
                PERM,
            )
        }
    };
    match fs::OpenOptions::new().write(true).open(&p) {
        Ok(mut f) => match f.write_all(value.as_bytes()) {
            Ok(()) => Ok(Out::Escaped(format!(
                "wrote oom_score_adj {} of process {victim} outside the sandbox",
                value.trim()
            ))),
            Err(e) => fs_err(
                "write /proc/<outside process>/oom_score_adj",
                io_errno(&e),
                PERM,
            ),
        },
        Err(e) => fs_err(
            "open /proc/<outside process>/oom_score_adj",
            io_errno(&e),
            PERM,
        ),
    }
}

/// What a SysV call answers when the sandbox stops it: seccomp's EPERM, or (in a private IPC
/// namespace) EINVAL for an id and ENOENT for a key that do not exist there.
const SYSV: &[i32] = &[libc::EPERM, libc::EINVAL, libc::ENOENT];

fn sysv(what: &str, rc: i64) -> Res {
    if rc >= 0 {
        return Ok(Out::Escaped(format!("{what} succeeded")));
    }
    let e = errno();
    if SYSV.contains(&e) {
        Ok(Out::Blocked(format!("{what}: {}", ename(e))))
    } else {
        Err(format!("{what}: unexpected {}", ename(e)))
    }
}

/// Attaches the harness's segment and reads the marker it wrote.
fn shm_read(id: i32, what: &str) -> Res {
    let p = unsafe { libc::shmat(id, std::ptr::null(), 0) };
    if p as isize == -1 {
        return sysv(what, -1);
    }
    let data = unsafe { std::slice::from_raw_parts(p as *const u8, 32) }.to_vec();
    unsafe { libc::shmdt(p) };
    Ok(Out::Escaped(format!(
        "{what}: attached the host's segment: {}",
        preview(&data)
    )))
}

fn sysv_shm_id(c: &Ctx) -> Res {
    shm_read(c.num("shm-id")?, "shmat(host segment id)")
}

fn sysv_shm_key(c: &Ctx) -> Res {
    let key: i32 = c.num("shm-key")?;
    let id = unsafe { libc::shmget(key, 0, 0) };
    if id < 0 {
        return sysv("shmget(host segment key)", -1);
    }
    shm_read(id, "shmat(host segment by key)")
}

fn sysv_msgq(c: &Ctx) -> Res {
    let key: i32 = c.num("msq-key")?;
    let id = unsafe { libc::msgget(key, 0) };
    if id < 0 {
        return sysv("msgget(host queue key)", -1);
    }
    #[repr(C)]
    struct Msg {
        mtype: libc::c_long,
        text: [u8; 8],
    }
    let m = Msg {
        mtype: 1,
        text: *b"planted\0",
    };
    let rc = unsafe {
        libc::msgsnd(
            id,
            &m as *const Msg as *const libc::c_void,
            8,
            libc::IPC_NOWAIT,
        )
    };
    sysv("msgsnd(host queue)", rc as i64)
}

fn sysv_msgq_id(c: &Ctx) -> Res {
    let id: i32 = c.num("msq-id")?;
    let mut ds: libc::msqid_ds = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::msgctl(id, libc::IPC_STAT, &mut ds) };
    sysv("msgctl(host queue id, IPC_STAT)", rc as i64)
}

/// Round 8 (issue 21): the value of an extended attribute of a file outside the roots (the
/// harness set `user.cordon-e2e` on `secret.txt`), which Landlock does not check: by path, by
/// the link-following and not-following calls, and listed.
fn getxattr_outside(c: &Ctx) -> Res {
    let p = cstr(c.outside_existing("secret.txt")?);
    let name = c"user.cordon-e2e";
    let mut buf = [0u8; 256];
    let blocked: &[i32] = &[libc::EOPNOTSUPP, libc::EPERM, libc::EACCES];
    for (what, rc) in [
        ("getxattr(outside file)", unsafe {
            libc::getxattr(
                p.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        }),
        ("lgetxattr(outside file)", unsafe {
            libc::lgetxattr(
                p.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        }),
        ("listxattr(outside file)", unsafe {
            libc::listxattr(p.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
        }),
        // getxattrat (Linux 6.13, 464): path, no flags, and `struct xattr_args` {value, size,
        // flags}.
        ("getxattrat(outside file)", unsafe {
            let args: [u64; 2] = [buf.as_mut_ptr() as u64, buf.len() as u64];
            libc::syscall(
                464,
                libc::AT_FDCWD,
                p.as_ptr(),
                0,
                name.as_ptr(),
                args.as_ptr(),
                16usize,
            ) as isize
        }),
    ] {
        if rc >= 0 {
            return Ok(Out::Escaped(format!(
                "{what}: read {}",
                preview(&buf[..(rc as usize).min(buf.len())])
            )));
        }
        let e = errno();
        // A kernel before 6.13 has no getxattrat: nothing to read it with there.
        if what.starts_with("getxattrat") && e == libc::ENOSYS {
            continue;
        }
        if !blocked.contains(&e) {
            return fs_err(what, e, blocked);
        }
    }
    Ok(Out::Blocked(
        "every read of the outside file's extended attributes was refused".into(),
    ))
}

/// Round 8 (issue 21): an inotify watch on a directory outside the roots, which the command
/// may not list: its events would name every file made, opened or changed there.
fn inotify_outside(c: &Ctx) -> Res {
    let dir = c.outside()?;
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
    if fd < 0 {
        return Err(format!("inotify_init1: {}", ename(errno())));
    }
    let mask = libc::IN_CREATE | libc::IN_OPEN | libc::IN_MODIFY | libc::IN_ACCESS;
    let wd = unsafe { libc::inotify_add_watch(fd, cstr(&dir).as_ptr(), mask) };
    let e = errno();
    close(fd as i64);
    if wd >= 0 {
        return Ok(Out::Escaped(format!(
            "inotify_add_watch({}): the names of files made or opened there show in its events",
            dir.display()
        )));
    }
    fs_err("inotify_add_watch(outside dir)", e, FS)
}

/// The inotify supervisor resolves a path as the caller does: from its working directory,
/// which Landlock lets it move outside the roots (chdir is not checked), so "." there names
/// the outside directory.
fn inotify_outside_cwd(c: &Ctx) -> Res {
    let dir = c.outside()?;
    if let Err(e) = std::env::set_current_dir(&dir) {
        return fs_err("chdir(outside dir)", e.raw_os_error().unwrap_or(0), FS);
    }
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
    if fd < 0 {
        return Err(format!("inotify_init1: {}", ename(errno())));
    }
    let wd = unsafe { libc::inotify_add_watch(fd, c".".as_ptr(), libc::IN_CREATE) };
    let e = errno();
    close(fd as i64);
    if wd >= 0 {
        return Ok(Out::Escaped(format!(
            "inotify_add_watch(\".\") in {}: its names show in the events",
            dir.display()
        )));
    }
    fs_err("inotify_add_watch(\".\" outside)", e, FS)
}

/// A link in the workspace to the outside directory, followed by the watch (the supervisor
/// checks the object it opened, not the name).
fn inotify_outside_link(c: &Ctx) -> Res {
    let dir = c.outside()?;
    let link = PathBuf::from(format!("inotify-link-{}", pid()));
    std::os::unix::fs::symlink(&dir, &link).map_err(fail)?;
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
    if fd < 0 {
        return Err(format!("inotify_init1: {}", ename(errno())));
    }
    let wd = unsafe { libc::inotify_add_watch(fd, cstr(&link).as_ptr(), libc::IN_CREATE) };
    let e = errno();
    close(fd as i64);
    let _ = fs::remove_file(&link);
    if wd >= 0 {
        return Ok(Out::Escaped(format!(
            "inotify_add_watch through a link to {}: its names show in the events",
            dir.display()
        )));
    }
    fs_err("inotify_add_watch(link to outside dir)", e, FS)
}

/// Round 8 (issue 21): a POSIX shared memory object of the host (a file in /dev/shm, 0666).
fn posix_shm_read(c: &Ctx) -> Res {
    let p = PathBuf::from(c.get("posix-shm")?);
    read_attack("open(the host's /dev/shm object, O_RDONLY)", &p, FS)
}

fn posix_shm_write(c: &Ctx) -> Res {
    let p = PathBuf::from(c.get("posix-shm")?);
    open_write_attack("open(the host's /dev/shm object, O_WRONLY)", &p, FS_RO)
}

/// A POSIX message queue of the host (0666): another IPC namespace does not have it.
fn posix_mq_open(c: &Ctx) -> Res {
    let name = CString::new(c.get("mq")?).map_err(|e| e.to_string())?;
    let q = unsafe { libc::mq_open(name.as_ptr(), libc::O_WRONLY) };
    if q >= 0 {
        unsafe { libc::mq_close(q) };
        return Ok(Out::Escaped("mq_open(the host's queue) succeeded".into()));
    }
    sysv("mq_open(the host's queue)", -1)
}

fn sysv_sem(c: &Ctx) -> Res {
    let key: i32 = c.num("sem-key")?;
    let id = unsafe { libc::semget(key, 0, 0) };
    if id < 0 {
        return sysv("semget(host semaphore set key)", -1);
    }
    let rc = unsafe { libc::semctl(id, 0, libc::GETVAL) };
    sysv("semctl(host semaphore set, GETVAL)", rc as i64)
}

fn proc_list_host(c: &Ctx) -> Res {
    let victim: i32 = c.num("victim")?;
    // Only the victim's own command line counts: its pid may exist in another namespace.
    match fs::read(format!("/proc/{victim}/cmdline")) {
        Ok(d) if d.starts_with(b"/bin/sleep\x003600") => Ok(Out::Escaped(format!(
            "/proc shows process {victim} outside the sandbox: {}",
            preview(&d)
        ))),
        Ok(d) => Ok(Out::Blocked(format!(
            "/proc/{victim} is another process here: {}",
            preview(&d)
        ))),
        Err(e) if io_errno(&e) == libc::ENOENT => Ok(Out::Blocked(format!(
            "/proc/{victim} does not exist in the sandbox's /proc"
        ))),
        Err(e) => fs_err("read /proc/<outside process>/cmdline", io_errno(&e), PERM),
    }
}

fn proc_net_tcp(c: &Ctx) -> Res {
    let port: u16 = c.num("port")?;
    let needle = format!(":{port:04X} 00000000:0000 0A");
    let mut seen = Vec::new();
    for table in ["/proc/net/tcp", "/proc/self/net/tcp", "/proc/1/net/tcp"] {
        match fs::read_to_string(table) {
            Ok(t) if t.contains(&needle) => {
                return Ok(Out::Escaped(format!(
                    "{table} shows the harness's listener on 127.0.0.1:{port}"
                )))
            }
            Ok(_) => seen.push(format!("{table}: no listener")),
            Err(e) if PERM.contains(&io_errno(&e)) || io_errno(&e) == libc::ENOENT => {
                seen.push(format!("{table}: {}", ename(io_errno(&e))))
            }
            Err(e) => return Err(format!("read {table}: {e}")),
        }
    }
    Ok(Out::Blocked(seen.join("; ")))
}

/// Helper for the leftovers tests: starts `n` orphans that exit at once, waits, and prints how
/// many zombies have our parent as their parent (`OK:` none, `FAILED:` some).
fn zombie_orphans(c: &Ctx) -> Res {
    let n: usize = c.num("count").unwrap_or(20);
    for _ in 0..n {
        let mid = unsafe { libc::fork() };
        if mid < 0 {
            return Err(format!("fork: {}", ename(errno())));
        }
        if mid == 0 {
            // The middle child forks the orphan and exits; the orphan exits at once.
            if unsafe { libc::fork() } == 0 {
                unsafe { libc::_exit(0) };
            }
            unsafe { libc::_exit(0) };
        }
        wait_child(mid as i64)?;
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let ppid = unsafe { libc::getppid() };
    let mut zombies = 0;
    for e in fs::read_dir("/proc").map_err(fail)?.flatten() {
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        if f.next() == Some("Z") && f.next().and_then(|p| p.parse::<i32>().ok()) == Some(ppid) {
            zombies += 1;
        }
    }
    if zombies == 0 {
        ok(format!("{n} orphans exited and none is left a zombie"))
    } else {
        Ok(Out::Failed(format!(
            "{zombies} zombies wait for process {ppid}"
        )))
    }
}

/// Helper for the leftovers tests: tries to hold `count` live processes at once (each blocked
/// in pause(), killed when we exit) and prints how many it got: `OK:` when fork stopped it.
fn task_hopper(c: &Ctx) -> Res {
    let want: usize = c.num("count")?;
    let mut got = 0;
    let mut err = 0;
    for _ in 0..want {
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            err = errno();
            break;
        }
        if pid == 0 {
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                libc::pause();
                libc::_exit(0);
            }
        }
        got += 1;
    }
    // Our children die with us (parent-death signal) whatever the sandbox does.
    if got < want {
        ok(format!(
            "fork refused after {got} live processes: {}",
            ename(err)
        ))
    } else {
        Ok(Out::Failed(format!("held {got} live processes")))
    }
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// issue 12 class 4: what the command inherits. `--other-pty PATH`: another terminal of the
// same user, with typed input pending, whose master the harness holds; `--tty-id DEV:RDEV`:
// the operator's terminal (the harness's pty), passed to cordon as stdin. stdout appends to a
// file the harness opened outside the roots (`>> log`), stdin reads one: the harness checks
// those objects after the run. The attacks on stdio act only when they hold the operator's
// object itself (a regular file, the operator's terminal); a stand-in (pipe, own pty) is the
// block.

fn other_pty(c: &Ctx) -> Result<PathBuf, String> {
    Ok(PathBuf::from(c.get("other-pty")?))
}

/// Writes a line into another terminal through `fd` (already open).
fn write_other_pty(what: &str, fd: i32) -> Res {
    let msg = b"\r\nESCAPED: cordon-attack wrote to another terminal\r\n";
    let n = unsafe { libc::write(fd, msg.as_ptr().cast(), msg.len()) };
    let e = errno();
    close(fd as i64);
    if n > 0 {
        Ok(Out::Escaped(format!("{what}: wrote {n} bytes to it")))
    } else {
        Err(format!("{what}: opened but write failed: {}", ename(e)))
    }
}

fn open_flags(path: &Path, flags: i32) -> Result<i32, i32> {
    let p = cstr(path);
    let fd = unsafe { libc::open(p.as_ptr(), flags | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd)
    }
}

fn pty_other_write(c: &Ctx) -> Res {
    let p = other_pty(c)?;
    let what = format!("open({}, O_WRONLY)", p.display());
    match open_flags(&p, libc::O_WRONLY) {
        Ok(fd) => write_other_pty(&what, fd),
        Err(e) => fs_err(&what, e, FS),
    }
}

fn pty_other_read(c: &Ctx) -> Res {
    let p = other_pty(c)?;
    let what = format!("open({}, O_RDONLY)", p.display());
    let fd = match open_flags(&p, libc::O_RDONLY | libc::O_NONBLOCK) {
        Ok(fd) => fd,
        Err(e) => return fs_err(&what, e, FS),
    };
    let mut buf = [0u8; 256];
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    let e = errno();
    close(fd as i64);
    if n > 0 {
        Ok(Out::Escaped(format!(
            "{what}: read its pending input: {}",
            preview(&buf[..n as usize])
        )))
    } else {
        Err(format!(
            "{what}: opened, but no pending input: {}",
            ename(e)
        ))
    }
}

fn pty_other_dirfd(c: &Ctx) -> Res {
    let p = other_pty(c)?;
    let name = p.file_name().ok_or("--other-pty has no file name")?;
    let dir = cstr("/dev/pts");
    let dfd = unsafe {
        libc::open(
            dir.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dfd < 0 {
        return fs_err("open(/dev/pts, O_PATH)", errno(), FS);
    }
    let n = cstr(name);
    let fd = unsafe {
        libc::openat(
            dfd,
            n.as_ptr(),
            libc::O_WRONLY | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    let e = errno();
    close(dfd as i64);
    let what = format!("openat(/dev/pts, {}, O_WRONLY)", name.to_string_lossy());
    if fd < 0 {
        return fs_err(&what, e, FS);
    }
    write_other_pty(&what, fd)
}

fn pty_other_dotdot(c: &Ctx) -> Res {
    let p = other_pty(c)?;
    let name = p.file_name().ok_or("--other-pty has no file name")?;
    let path = Path::new("/dev/pts/../pts").join(name);
    let what = format!("open({}, O_RDWR)", path.display());
    match open_flags(&path, libc::O_RDWR) {
        Ok(fd) => write_other_pty(&what, fd),
        Err(e) => fs_err(&what, e, FS),
    }
}

/// `(st_dev, st_rdev)` of `fd`.
fn fd_id(fd: i32) -> Result<(u64, u64), String> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(format!("fstat({fd}): {}", ename(errno())));
    }
    Ok((st.st_dev, st.st_rdev))
}

/// Is stdin the operator's terminal (`--tty-id`)? Err when stdin is no terminal at all.
fn stdin_is_operators_tty(c: &Ctx) -> Result<bool, String> {
    if unsafe { libc::isatty(0) } != 1 {
        return Err("stdin is not a terminal (the harness passes a pty)".into());
    }
    let (dev, rdev) = c
        .get("tty-id")?
        .split_once(':')
        .and_then(|(d, r)| Some((d.parse::<u64>().ok()?, r.parse::<u64>().ok()?)))
        .ok_or("--tty-id wants DEV:RDEV")?;
    Ok(fd_id(0)? == (dev, rdev))
}

fn own_terminal(what: &str) -> Res {
    Ok(Out::Blocked(format!(
        "{what}: stdin is a terminal of the command's own, not the operator's"
    )))
}

fn tty_fchmod(c: &Ctx) -> Res {
    if !stdin_is_operators_tty(c)? {
        return own_terminal("fchmod(0, 0666)");
    }
    let rc = unsafe { libc::fchmod(0, 0o666) } as i64;
    strict("fchmod(0, 0666) on the operator's terminal", rc, FS, |_| {
        "the operator's terminal is now world-writable".into()
    })
}

fn tty_termios(c: &Ctx) -> Res {
    if !stdin_is_operators_tty(c)? {
        return own_terminal("tcsetattr(0, -ECHO)");
    }
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(0, &mut t) } != 0 {
        return Err(format!("tcgetattr(0): {}", ename(errno())));
    }
    t.c_lflag &= !(libc::ECHO | libc::ICANON);
    let rc = unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) } as i64;
    strict("tcsetattr(0) on the operator's terminal", rc, FS, |_| {
        "the operator's terminal keeps echo off after the run".into()
    })
}

/// Is `fd` a regular file (the operator's redirection target) rather than a stand-in?
fn is_regular(fd: i32) -> Result<bool, String> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(format!("fstat({fd}): {}", ename(errno())));
    }
    Ok(st.st_mode & libc::S_IFMT == libc::S_IFREG)
}

/// Runs `op` on `fd` when it is the operator's regular file; on a stand-in the attack is
/// blocked whatever `op` does there.
fn on_redirected(fd: i32, what: &str, op: impl FnOnce() -> i64) -> Res {
    if !is_regular(fd)? {
        let rc = op();
        let e = if rc < 0 { ename(errno()) } else { "ok".into() };
        return Ok(Out::Blocked(format!(
            "{what}: fd {fd} is a pipe of the command's own, not the operator's file ({e} on the pipe)"
        )));
    }
    let rc = op();
    strict(&format!("{what} on the operator's file"), rc, FS_RO, |_| {
        "changed the file the operator redirected to".into()
    })
}

fn stdout_ftruncate(_: &Ctx) -> Res {
    on_redirected(1, "ftruncate(1, 0)", || unsafe { libc::ftruncate(1, 0) }
        as i64)
}

fn stdout_fchmod(_: &Ctx) -> Res {
    on_redirected(1, "fchmod(1, 0666)", || unsafe { libc::fchmod(1, 0o666) }
        as i64)
}

fn stdout_fsetxattr(_: &Ctx) -> Res {
    let name = cstr("user.cordon-e2e");
    on_redirected(1, "fsetxattr(1, user.cordon-e2e)", || unsafe {
        libc::fsetxattr(1, name.as_ptr(), b"x".as_ptr().cast(), 1, 0) as i64
    })
}

fn stdout_punch_hole(_: &Ctx) -> Res {
    on_redirected(1, "fallocate(1, PUNCH_HOLE)", || unsafe {
        libc::fallocate(
            1,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            0,
            4096,
        ) as i64
    })
}

fn stdout_reopen_trunc(_: &Ctx) -> Res {
    let what = "open(/proc/self/fd/1, O_WRONLY|O_TRUNC)";
    match open_flags(Path::new("/proc/self/fd/1"), libc::O_WRONLY | libc::O_TRUNC) {
        Ok(fd) => {
            let regular = is_regular(fd);
            close(fd as i64);
            if regular? {
                Ok(Out::Escaped(format!(
                    "{what}: truncated the file the operator redirected to"
                )))
            } else {
                Ok(Out::Blocked(format!(
                    "{what}: reopened a pipe of the command's own, not the operator's file"
                )))
            }
        }
        Err(e) => fs_err(what, e, FS),
    }
}

fn stdin_fchmod(_: &Ctx) -> Res {
    on_redirected(0, "fchmod(0, 0666)", || unsafe { libc::fchmod(0, 0o666) }
        as i64)
}

fn stdin_fsetxattr(_: &Ctx) -> Res {
    let name = cstr("user.cordon-e2e");
    on_redirected(0, "fsetxattr(0, user.cordon-e2e)", || unsafe {
        libc::fsetxattr(0, name.as_ptr(), b"x".as_ptr().cast(), 1, 0) as i64
    })
}

/// A terminal works for the command: modes, window size, and (Landlock) /dev/tty, its
/// controlling terminal.
fn legit_tty(_: &Ctx) -> Res {
    check(unsafe { libc::isatty(0) } == 1, "stdin is a terminal")?;
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    check(unsafe { libc::tcgetattr(0, &mut t) } == 0, "tcgetattr(0)")?;
    let mut quiet = t;
    quiet.c_lflag &= !libc::ECHO;
    check(
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &quiet) } == 0,
        "tcsetattr(0, -ECHO) (a password prompt)",
    )?;
    check(
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) } == 0,
        "tcsetattr(0) back",
    )?;
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    check(
        unsafe { libc::ioctl(0, libc::TIOCGWINSZ, &mut ws) } == 0,
        "TIOCGWINSZ",
    )?;
    // bwrap's new session leaves the command without a controlling terminal.
    if !NAMESPACED.load(std::sync::atomic::Ordering::Relaxed) {
        fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(|e| format!("/dev/tty: {e}"))?;
    }
    ok("terminal modes, window size, /dev/tty")
}

/// A program can make a pty of its own (`script`, `ssh -t`, `expect` do): openpty's steps,
/// the slave opened by its name and a line through it. Where the command has namespaces of
/// its own, the pty is in a devpts instance of the command's own: `/dev/pts` holds only its
/// `ptmx` and the ptys the command made (the harness's terminal, in the host's devpts, is not
/// there), and the slave lies on that very instance.
fn legit_own_pty(_: &Ctx) -> Res {
    let last = || std::io::Error::last_os_error();
    let m = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    check(m >= 0, &format!("posix_openpt: {}", last()))?;
    check(
        unsafe { libc::grantpt(m) } == 0,
        &format!("grantpt: {}", last()),
    )?;
    check(
        unsafe { libc::unlockpt(m) } == 0,
        &format!("unlockpt: {}", last()),
    )?;
    let mut name = [0 as libc::c_char; 64];
    check(
        unsafe { libc::ptsname_r(m, name.as_mut_ptr(), name.len()) } == 0,
        &format!("ptsname_r: {}", last()),
    )?;
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let slave = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&name)
        .map_err(|e| format!("open the new pty's slave {name}: {e}"))?;
    (&slave)
        .write_all(b"own-pty\n")
        .map_err(|e| format!("write {name}: {e}"))?;
    let mut buf = [0u8; 64];
    let n = unsafe { libc::read(m, buf.as_mut_ptr().cast(), buf.len()) };
    check(
        n > 0 && buf[..n as usize].starts_with(b"own-pty"),
        &format!("read the line back from the master: {n} bytes ({})", last()),
    )?;
    if NAMESPACED.load(std::sync::atomic::Ordering::Relaxed) {
        let pts = fs::metadata("/dev/pts").map_err(|e| format!("stat /dev/pts: {e}"))?;
        let own = slave.metadata().map_err(|e| format!("fstat {name}: {e}"))?;
        check(
            own.dev() == pts.dev(),
            &format!("{name} is not on the /dev/pts the command sees"),
        )?;
        let mine = Path::new(&name).file_name().map(|n| n.to_os_string());
        for e in fs::read_dir("/dev/pts").map_err(|e| format!("list /dev/pts: {e}"))? {
            let e = e.map_err(|e| format!("list /dev/pts: {e}"))?.file_name();
            check(
                e == "ptmx" || Some(&e) == mine.as_ref(),
                &format!("/dev/pts holds {e:?}, a pty the command did not make (the host's?)"),
            )?;
        }
    }
    unsafe { libc::close(m) };
    ok(format!(
        "a pty of its own ({name}), in its own devpts where namespaced"
    ))
}

/// What the harness puts in the stdin file: the command reads all of it.
const STDIN_FILE_LINE: &str = "cordon-e2e stdin line\n";

fn legit_stdin_file(_: &Ctx) -> Res {
    let mut got = Vec::new();
    std::io::stdin()
        .read_to_end(&mut got)
        .map_err(|e| format!("read stdin: {e}"))?;
    let want = STDIN_FILE_LINE.repeat(10_000);
    check(
        got == want.as_bytes(),
        &format!("stdin: {} bytes, want {}", got.len(), want.len()),
    )?;
    ok(format!("read {} bytes of the redirected file", got.len()))
}

// ---------------------------------------------------------------------------------------------
// issue 15: network proxy. Under `sandbox.network = "proxy"` the command's one way out is the
// proxy's listener on 127.0.0.1/[::1] port `--port` in its own network namespace (a stand-in
// proxy answers with one line). `--addr IP:PORT` names a target: a server the harness runs on
// the host's loopback, or a raw address. Any refusal counts as blocked (EACCES from Landlock,
// ENETUNREACH from the namespace's missing routes, ECONNREFUSED from its empty loopback); the
// harness checks on the host side that nothing arrived.

const ISSUE_15: &[(&str, Attack)] = &[
    ("legit-proxy-connect", legit_proxy_connect),
    ("net-tcp-connect", net_tcp_connect),
    ("net-udp-send", net_udp_send),
    ("net-bind", net_bind),
];

/// What the namespace and Landlock answer for a target other than the proxy.
const NET_BLOCKED: &[i32] = &[
    libc::EACCES,
    libc::EPERM,
    libc::ENETUNREACH,
    libc::EHOSTUNREACH,
    libc::ECONNREFUSED,
    libc::EADDRNOTAVAIL,
    libc::ETIMEDOUT,
];

fn net_addr(c: &Ctx) -> Result<std::net::SocketAddr, String> {
    c.get("addr")?
        .parse()
        .map_err(|e| format!("--addr is not IP:PORT: {e}"))
}

/// The command's very first connection: the listener must already be there (no retry).
fn legit_proxy_connect(c: &Ctx) -> Res {
    let port: u16 = c.num("port")?;
    let ip: std::net::IpAddr = match c.get("family")? {
        "6" => std::net::Ipv6Addr::LOCALHOST.into(),
        _ => std::net::Ipv4Addr::LOCALHOST.into(),
    };
    let mut s = std::net::TcpStream::connect((ip, port))
        .map_err(|e| format!("connect({ip}:{port}): {}", ename(io_errno(&e))))?;
    let mut line = String::new();
    s.read_to_string(&mut line)
        .map_err(|e| format!("read from the proxy: {e}"))?;
    Ok(Out::Ok(format!("{ip}:{port} answered {}", line.trim_end())))
}

fn net_tcp_connect(c: &Ctx) -> Res {
    let addr = net_addr(c)?;
    match std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(10)) {
        Ok(_) => Ok(Out::Escaped(format!("TCP connect to {addr} worked"))),
        Err(e) => fs_err(&format!("connect({addr})"), io_errno(&e), NET_BLOCKED),
    }
}

/// A datagram to `--addr`; the harness's server answers, so an answer is an escape. Sending
/// may fail (no route) or go unanswered (nothing there in the namespace).
fn net_udp_send(c: &Ctx) -> Res {
    let addr = net_addr(c)?;
    let any: std::net::SocketAddr = if addr.is_ipv6() {
        "[::]:0".parse().unwrap()
    } else {
        "0.0.0.0:0".parse().unwrap()
    };
    let s = match std::net::UdpSocket::bind(any) {
        Ok(s) => s,
        Err(e) => return fs_err("socket+bind(udp)", io_errno(&e), NET_BLOCKED),
    };
    if let Err(e) = s.send_to(b"cordon-udp-probe", addr) {
        return fs_err(&format!("sendto({addr})"), io_errno(&e), NET_BLOCKED);
    }
    s.set_read_timeout(Some(std::time::Duration::from_secs(1)))
        .map_err(|e| e.to_string())?;
    let mut buf = [0u8; 64];
    match s.recv_from(&mut buf) {
        Ok((n, from)) => Ok(Out::Escaped(format!(
            "UDP to {addr}: {n} bytes answered from {from}"
        ))),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Ok(Out::Blocked(format!("UDP to {addr}: sent, never answered")))
        }
        Err(e) => fs_err(
            &format!("recv after sendto({addr})"),
            io_errno(&e),
            NET_BLOCKED,
        ),
    }
}

fn net_bind(c: &Ctx) -> Res {
    let port: u16 = c.num("port")?;
    for ip in ["127.0.0.1", "::1"] {
        let ip: std::net::IpAddr = ip.parse().unwrap();
        match std::net::TcpListener::bind((ip, port)) {
            Ok(_) => return Ok(Out::Escaped(format!("TCP bind to {ip}:{port} worked"))),
            Err(e) if !PERM.contains(&io_errno(&e)) => {
                return Err(format!(
                    "bind({ip}:{port}): unexpected {}",
                    ename(io_errno(&e))
                ))
            }
            Err(_) => {}
        }
    }
    Ok(Out::Blocked(format!(
        "TCP bind to 127.0.0.1:{port} and [::1]:{port}: EACCES/EPERM"
    )))
}

// ---------------------------------------------------------------------------------------------
// issue 25: under `sandbox.network = "deny"` the command shares the host's network namespace
// where seccomp and Landlock (ABI 6) keep it off the network; these reach for the host's own
// network in the ways a namespace used to hide. Each escapes when run unconfined (as root).

const ISSUE_25: &[(&str, Attack)] = &[
    ("net-icmp-echo", net_icmp_echo),
    ("netlink-route-dump", netlink_route_dump),
    ("io-uring-socket", io_uring_socket),
    #[cfg(target_arch = "x86_64")]
    ("ia32-socketcall", ia32_socketcall),
];

/// The internet checksum of `data` (ICMP's).
fn inet_checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An ICMP echo request to `--addr` (an IPv4 address), over a ping socket
/// (`net.ipv4.ping_group_range`) or else a raw one (CAP_NET_RAW); an echo reply is an escape.
fn net_icmp_echo(c: &Ctx) -> Res {
    let ip: std::net::Ipv4Addr = c
        .get("addr")?
        .parse()
        .map_err(|e| format!("--addr is not an IPv4 address: {e}"))?;
    let mut refusals = Vec::new();
    for (ty, name) in [(libc::SOCK_DGRAM, "ping"), (libc::SOCK_RAW, "raw")] {
        let fd =
            unsafe { libc::socket(libc::AF_INET, ty | libc::SOCK_CLOEXEC, libc::IPPROTO_ICMP) };
        if fd < 0 {
            refusals.push((name, errno()));
            continue;
        }
        let mut pkt = [0u8; 16];
        pkt[0] = 8; // echo request
        pkt[4..6].copy_from_slice(&(pid() as u16).to_be_bytes());
        pkt[6..8].copy_from_slice(&1u16.to_be_bytes());
        pkt[8..16].copy_from_slice(b"cordon25");
        let sum = inet_checksum(&pkt);
        pkt[2..4].copy_from_slice(&sum.to_be_bytes());
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from(ip).to_be(),
            },
            sin_zero: [0; 8],
        };
        let sent = unsafe {
            libc::sendto(
                fd,
                pkt.as_ptr().cast(),
                pkt.len(),
                0,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            let e = errno();
            close(fd as i64);
            return fs_err(
                &format!("sendto({ip}) over a {name} ICMP socket"),
                e,
                NET_BLOCKED,
            );
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut buf = [0u8; 512];
        while std::time::Instant::now() < deadline {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            if unsafe { libc::poll(&mut pfd, 1, 500) } <= 0 {
                continue;
            }
            let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n <= 0 {
                continue;
            }
            let n = n as usize;
            // A raw socket reads the IP header too (and our own request on loopback).
            let icmp = if ty == libc::SOCK_RAW {
                &buf[usize::from(buf[0] & 0x0f) * 4..n]
            } else {
                &buf[..n]
            };
            if icmp.first() == Some(&0) {
                close(fd as i64);
                return Ok(Out::Escaped(format!(
                    "ICMP echo reply from {ip} over a {name} socket"
                )));
            }
        }
        close(fd as i64);
        return Ok(Out::Blocked(format!(
            "ICMP echo to {ip} over a {name} socket: sent, never answered"
        )));
    }
    // ping_group_range answers EACCES for a group outside it, a missing CAP_NET_RAW EPERM.
    let text: Vec<String> = refusals
        .iter()
        .map(|(name, e)| format!("{name}: {}", ename(*e)))
        .collect();
    if refusals.iter().all(|(_, e)| PERM.contains(e)) {
        Ok(Out::Blocked(format!(
            "socket(AF_INET, ICMP): {}",
            text.join(", ")
        )))
    } else {
        Err(format!(
            "socket(AF_INET, ICMP): unexpected {}",
            text.join(", ")
        ))
    }
}

/// A dump of the network interfaces over rtnetlink (RTM_GETLINK): the host's, without a
/// namespace of the command's own.
fn netlink_route_dump(_: &Ctx) -> Res {
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        return filtered("socket(AF_NETLINK, NETLINK_ROUTE)", fd as i64, PERM);
    }
    // struct nlmsghdr + struct rtgenmsg (padded): a dump of every link.
    let mut req = [0u8; 20];
    req[0..4].copy_from_slice(&20u32.to_ne_bytes());
    req[4..6].copy_from_slice(&libc::RTM_GETLINK.to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    req[6..8].copy_from_slice(&flags.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    req[16] = libc::AF_UNSPEC as u8;
    if unsafe { libc::send(fd, req.as_ptr().cast(), req.len(), 0) } < 0 {
        let e = errno();
        close(fd as i64);
        return fs_err("send(RTM_GETLINK dump)", e, PERM);
    }
    let mut links = 0;
    let mut buf = vec![0u8; 32 * 1024];
    'read: for _ in 0..64 {
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        while at + 16 <= n as usize {
            let len = u32::from_ne_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
            let ty = u16::from_ne_bytes(buf[at + 4..at + 6].try_into().unwrap());
            if ty == libc::NLMSG_DONE as u16 || ty == libc::NLMSG_ERROR as u16 || len < 16 {
                break 'read;
            }
            if ty == libc::RTM_NEWLINK {
                links += 1;
            }
            at += (len + 3) & !3;
        }
    }
    close(fd as i64);
    Ok(Out::Escaped(format!(
        "dumped {links} network interfaces over rtnetlink"
    )))
}

/// A socket made by io_uring (IORING_OP_SOCKET, Linux 5.19), which no seccomp rule on
/// `socket()` sees.
fn io_uring_socket(_: &Ctx) -> Res {
    const IORING_OP_SOCKET: u8 = 45;
    const IORING_OFF_SQ_RING: i64 = 0;
    const IORING_OFF_CQ_RING: i64 = 0x0800_0000;
    const IORING_OFF_SQES: i64 = 0x1000_0000;
    let mut params = [0u32; 30]; // struct io_uring_params: 120 bytes
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 4u32, params.as_mut_ptr()) };
    if fd < 0 {
        return filtered("io_uring_setup", fd, SECCOMP);
    }
    let fd = fd as i32;
    let sq_entries = params[0] as usize;
    let cq_entries = params[1] as usize;
    // io_sqring_offsets at byte 40, io_cqring_offsets at byte 80.
    let sq = |i: usize| params[10 + i] as usize;
    let cq = |i: usize| params[20 + i] as usize;
    let (sq_tail, sq_mask, sq_array) = (sq(1), sq(2), sq(6));
    let (cq_head, cq_tail, cq_mask, cq_cqes) = (cq(0), cq(1), cq(2), cq(5));
    let map = |len: usize, off: i64| unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_POPULATE,
            fd,
            off,
        )
    };
    let sq_ring = map(sq_array + sq_entries * 4, IORING_OFF_SQ_RING);
    let cq_ring = map(cq_cqes + cq_entries * 16, IORING_OFF_CQ_RING);
    let sqes = map(sq_entries * 64, IORING_OFF_SQES);
    if [sq_ring, cq_ring, sqes].contains(&libc::MAP_FAILED) {
        return Err(format!("mmap of the io_uring rings: {}", ename(errno())));
    }
    unsafe {
        let sqe = sqes.cast::<u8>();
        std::ptr::write_bytes(sqe, 0, 64);
        *sqe = IORING_OP_SOCKET;
        *sqe.add(4).cast::<i32>() = libc::AF_INET; // fd: the domain
        *sqe.add(8).cast::<u64>() = libc::SOCK_STREAM as u64; // off: the type
        let tail = sq_ring
            .cast::<u8>()
            .add(sq_tail)
            .cast::<std::sync::atomic::AtomicU32>();
        let t = (*tail).load(std::sync::atomic::Ordering::Acquire);
        let mask = *sq_ring.cast::<u8>().add(sq_mask).cast::<u32>();
        *sq_ring
            .cast::<u8>()
            .add(sq_array)
            .cast::<u32>()
            .add((t & mask) as usize) = 0;
        (*tail).store(t + 1, std::sync::atomic::Ordering::Release);
    }
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            1u32,
            1u32,
            1u32, // IORING_ENTER_GETEVENTS
            std::ptr::null::<u8>(),
            0usize,
        )
    };
    if rc < 0 {
        return filtered("io_uring_enter(IORING_OP_SOCKET)", rc, SECCOMP);
    }
    let res = unsafe {
        let ring = cq_ring.cast::<u8>();
        let head = (*ring.add(cq_head).cast::<std::sync::atomic::AtomicU32>())
            .load(std::sync::atomic::Ordering::Acquire);
        let tail = (*ring.add(cq_tail).cast::<std::sync::atomic::AtomicU32>())
            .load(std::sync::atomic::Ordering::Acquire);
        if head == tail {
            return Err("io_uring: no completion for IORING_OP_SOCKET".into());
        }
        let mask = *ring.add(cq_mask).cast::<u32>();
        let cqe = ring.add(cq_cqes + ((head & mask) as usize) * 16);
        *cqe.add(8).cast::<i32>()
    };
    if res >= 0 {
        close(res as i64);
        return Ok(Out::Escaped(format!(
            "io_uring made an AF_INET socket (fd {res})"
        )));
    }
    let e = -res;
    if PERM.contains(&e) {
        Ok(Out::Blocked(format!("IORING_OP_SOCKET: {}", ename(e))))
    } else {
        Ok(Out::Escaped(format!(
            "IORING_OP_SOCKET reached the kernel: {}",
            ename(e)
        )))
    }
}

/// socket(AF_INET) through the i386 `socketcall` multiplexer (`int 0x80`, call 1), as a
/// 32-bit program's libc makes it; its argument block must lie below 4 GiB.
#[cfg(target_arch = "x86_64")]
fn ia32_socketcall(_: &Ctx) -> Res {
    in_child("i386 socketcall(SYS_SOCKET, AF_INET) via int 0x80", || {
        let what = "i386 socketcall(SYS_SOCKET, AF_INET) via int 0x80";
        let block = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_32BIT,
                -1,
                0,
            )
        };
        if block == libc::MAP_FAILED {
            return Err(format!("mmap(MAP_32BIT): {}", ename(errno())));
        }
        let args = block.cast::<u32>();
        unsafe {
            *args = libc::AF_INET as u32;
            *args.add(1) = libc::SOCK_STREAM as u32;
            *args.add(2) = 0;
        }
        let r = int80(102, 1, block as u64 as u32, 0);
        close(r);
        ia32_result(what, r)
    })
}

type Attack = fn(&Ctx) -> Res;

const ATTACKS: &[(&str, Attack)] = &[
    ("read-abs", read_abs),
    ("read-dotdot", read_dotdot),
    ("read-symlink", read_symlink),
    ("read-proc-self-root", read_proc_self_root),
    ("read-etc-shadow", read_etc_shadow),
    ("readdir-outside", readdir_outside),
    ("exec-outside", exec_outside),
    ("symlink-dir-write", symlink_dir_write),
    ("hardlink-out", hardlink_out),
    ("rename-in", rename_in),
    ("rename-out", rename_out),
    ("create-outside", create_outside),
    ("overwrite-outside", overwrite_outside),
    ("truncate-outside", truncate_outside),
    ("chmod-outside", chmod_outside),
    ("chmod-etc-passwd", chmod_etc_passwd),
    ("chmod-proc-kallsyms", chmod_proc_kallsyms),
    ("chmod-dev-null", chmod_dev_null),
    ("chown-etc-passwd", chown_etc_passwd),
    ("utime-usr-bin", utime_usr_bin),
    ("utime-outside", utime_outside),
    ("setuid-chmod-workspace", setuid_chmod_workspace),
    ("setgid-fchmod-workspace", setgid_fchmod_workspace),
    ("setuid-create-workspace", setuid_create_workspace),
    ("setxattr-outside", setxattr_outside),
    ("chown-outside", chown_outside),
    ("mkdir-outside", mkdir_outside),
    ("rmdir-outside", rmdir_outside),
    ("unlink-outside", unlink_outside),
    ("write-etc-passwd", write_etc_passwd),
    ("create-usr-bin", create_usr_bin),
    ("mknod-char", mknod_char),
    ("mknod-block", mknod_block),
    ("proc-sys-write", proc_sys_write),
    ("sys-write", sys_write),
    ("fd-scan", fd_scan),
    ("fd-reopen", fd_reopen),
    ("proc-parent-environ", proc_parent_environ),
    ("proc-parent-mem", proc_parent_mem),
    ("proc-init-environ", proc_init_environ),
    ("proc-victim-environ", proc_victim_environ),
    ("proc-parent-root", proc_parent_root),
    ("proc-parent-cwd", proc_parent_cwd),
    ("proc-parent-fd", proc_parent_fd),
    ("proc-supervisor-fd", proc_supervisor_fd),
    ("proc-supervisor-mem", proc_supervisor_mem),
    ("kill-parent-term", kill_parent_term),
    ("kill-parent-kill", kill_parent_kill),
    ("kill-parent-probe", kill_parent_probe),
    ("kill-init-probe", kill_init_probe),
    ("kill-outside-process", kill_outside_process),
    ("ptrace-attach", ptrace_attach),
    ("ptrace-seize", ptrace_seize),
    ("process-vm-readv", process_vm_readv),
    ("pidfd-getfd", pidfd_getfd),
    ("tiocsti", tiocsti),
    ("tiocsti-highbits", tiocsti_highbits),
    ("tiocsti-probe", tiocsti_probe),
    ("tiocsti-highbits-probe", tiocsti_highbits_probe),
    ("tioclinux-probe", tioclinux_probe),
    ("tioclinux-highbits-probe", tioclinux_highbits_probe),
    ("socket-inet-stream", socket_inet_stream),
    ("socket-inet-dgram", socket_inet_dgram),
    ("socket-inet6", socket_inet6),
    ("socket-netlink", socket_netlink),
    ("socket-packet", socket_packet),
    ("socket-mptcp", socket_mptcp),
    ("socket-raw", socket_raw),
    ("socket-vsock", socket_vsock),
    ("tcp-loopback", tcp_loopback),
    ("udp-loopback", udp_loopback),
    ("tcp-connect-harness", tcp_connect_harness),
    ("abstract-connect", abstract_connect),
    ("unix-connect-outside", unix_connect_outside),
    ("mount-tmpfs", mount_tmpfs),
    ("remount-root-rw", remount_root_rw),
    ("mount-setattr-rw", mount_setattr_rw),
    ("mount-bind-outside", mount_bind_outside),
    ("umount-probe", umount_probe),
    ("unshare-user", unshare_user),
    ("unshare-mount", unshare_mount),
    ("unshare-net", unshare_net),
    ("clone-newuser", clone_newuser),
    ("clone3", clone3),
    ("setns", setns),
    ("chroot", chroot),
    ("pivot-root-probe", pivot_root_probe),
    ("fsopen", fsopen),
    ("open-tree", open_tree),
    ("io-uring-setup", io_uring_setup),
    ("bpf-prog-load", bpf_prog_load),
    ("add-key", add_key),
    ("keyctl", keyctl),
    ("perf-event-open", perf_event_open),
    ("userfaultfd", userfaultfd),
    ("init-module", init_module),
    ("finit-module", finit_module),
    ("kexec-load", kexec_load),
    ("reboot-probe", reboot_probe),
    ("swapon-probe", swapon_probe),
    ("syslog-read", syslog_read),
    ("sethostname", sethostname),
    ("fanotify-init", fanotify_init),
    ("open-by-handle-at", open_by_handle_at),
    #[cfg(target_arch = "x86_64")]
    ("x32-getpid", x32_getpid),
    #[cfg(target_arch = "x86_64")]
    ("x32-socket", x32_socket),
    #[cfg(target_arch = "x86_64")]
    ("ia32-getpid", ia32_getpid),
    #[cfg(target_arch = "x86_64")]
    ("ia32-socket", ia32_socket),
    ("env-secret", env_secret),
    ("env-ld-preload", env_ld_preload),
    ("no-new-privs", no_new_privs),
    ("caps", caps),
    ("cap-bounding", cap_bounding),
    ("suid-exec", suid_exec),
    ("legit-files", legit_files),
    ("legit-inotify", legit_inotify),
    ("legit-script", legit_script),
    ("legit-pipe", legit_pipe),
    ("legit-socketpair", legit_socketpair),
    ("legit-tmpdir", legit_tmpdir),
    ("legit-etc-passwd", legit_etc_passwd),
    ("legit-ls-usr", legit_ls_usr),
    ("legit-mkfifo", legit_mkfifo),
    ("legit-links", legit_links),
    ("legit-dev", legit_dev),
    ("legit-signal-child", legit_signal_child),
    ("legit-proc-self", legit_proc_self),
    // issue 12 classes 3/5/8
    ("prlimit-parent", prlimit_parent),
    ("prlimit-victim", prlimit_victim),
    ("setpriority-victim", setpriority_victim),
    ("sched-setaffinity-victim", sched_setaffinity_victim),
    ("sched-setscheduler-victim", sched_setscheduler_victim),
    ("ioprio-set-victim", ioprio_set_victim),
    ("oom-score-adj-victim", oom_score_adj_victim),
    ("sysv-shm-id", sysv_shm_id),
    ("sysv-shm-key", sysv_shm_key),
    ("sysv-msgq", sysv_msgq),
    ("sysv-msgq-id", sysv_msgq_id),
    ("sysv-sem", sysv_sem),
    ("inotify-outside", inotify_outside),
    ("inotify-outside-cwd", inotify_outside_cwd),
    ("inotify-outside-link", inotify_outside_link),
    ("getxattr-outside", getxattr_outside),
    ("hardlink-procfd", hardlink_procfd),
    ("posix-shm-read", posix_shm_read),
    ("posix-shm-write", posix_shm_write),
    ("posix-mq-open", posix_mq_open),
    ("proc-list-host", proc_list_host),
    ("proc-net-tcp", proc_net_tcp),
    // issue 12 class 4: what the command inherits.
    ("pty-other-write", pty_other_write),
    ("pty-other-read", pty_other_read),
    ("pty-other-dirfd", pty_other_dirfd),
    ("pty-other-dotdot", pty_other_dotdot),
    ("tty-fchmod", tty_fchmod),
    ("tty-termios", tty_termios),
    ("stdout-ftruncate", stdout_ftruncate),
    ("stdout-fchmod", stdout_fchmod),
    ("stdout-fsetxattr", stdout_fsetxattr),
    ("stdout-punch-hole", stdout_punch_hole),
    ("stdout-reopen-trunc", stdout_reopen_trunc),
    ("stdin-fchmod", stdin_fchmod),
    ("stdin-fsetxattr", stdin_fsetxattr),
    ("legit-tty", legit_tty),
    ("legit-own-pty", legit_own_pty),
    ("legit-stdin-file", legit_stdin_file),
];

/// Helpers the harness does not call directly.
const HIDDEN: &[(&str, Attack)] = &[
    ("suid-report", suid_report),
    // issue 12 class 8: helpers of tests/tests/leftovers.rs
    ("zombie-orphans", zombie_orphans),
    ("task-hopper", task_hopper),
];

/// Prefix of an error that means "the target does not exist in the sandbox's namespaces".
const NOT_VISIBLE: &str = "\u{1}not-visible:";

/// Under bwrap, a target that cannot be found is hidden by the sandbox: that is the block.
/// Elsewhere it stays a harness error.
fn hidden_or(err: String) -> String {
    if NAMESPACED.load(std::sync::atomic::Ordering::Relaxed) {
        format!("{NOT_VISIBLE}{err}")
    } else {
        err
    }
}

fn finish(res: Res) -> ! {
    let res = match res {
        Err(e) if e.starts_with(NOT_VISIBLE) => Ok(Out::Blocked(format!(
            "{} (not visible in the sandbox's namespaces)",
            &e[NOT_VISIBLE.len()..]
        ))),
        r => r,
    };
    let (code, line) = match res {
        Ok(Out::Blocked(d)) => (0, format!("BLOCKED: {d}")),
        Ok(Out::Escaped(d)) => (1, format!("ESCAPED: {d}")),
        Ok(Out::Ok(d)) => (0, format!("OK: {d}")),
        Ok(Out::Failed(d)) => (1, format!("FAILED: {d}")),
        Err(d) => (2, format!("ERROR: {d}")),
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    unsafe { libc::_exit(code) }
}

pub fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprintln!("usage: cordon-attack <name> [--key value]…  |  cordon-attack list");
        std::process::exit(2);
    };
    if name == "list" {
        for (n, _) in ATTACKS {
            println!("{n}");
        }
        return;
    }
    let Some((_, f)) = ATTACKS
        .iter()
        .chain(HIDDEN)
        .chain(ISSUE_12_HIDDEN)
        .chain(ISSUE_15)
        .chain(ISSUE_25)
        .find(|(n, _)| n == name)
    else {
        finish(Err(format!(
            "unknown attack {name:?} (see `cordon-attack list`)"
        )));
    };
    let res = Ctx::parse(&args[1..]).and_then(|c| {
        // bwrap, and the Landlock backend where it has its own namespaces (our parent is then
        // the namespace's init, pid 1):
        // outside processes and paths are not there.
        if c.args.get("backend").is_some_and(|b| b == "bwrap")
            || landlock_namespace_init().is_some()
        {
            NAMESPACED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        f(&c)
    });
    // A legit check that returns an error failed; it is not a harness error.
    let res = match (name.starts_with("legit-"), res) {
        (true, Err(e)) => Ok(Out::Failed(e)),
        (_, r) => r,
    };
    finish(res)
}
