//! One bwrap sandbox for many runs: the bwrap backend's "zygote", for a long-lived front end
//! (`cordon mcp`) that runs command after command under one prepared policy.
//!
//! A one-shot bwrap run pays for bwrap's start every time (its namespaces, the mounts of the
//! whole view, ~10 ms). The zygote is started once, with the very invocation a one-shot run
//! gets ([`crate::bwrap::invocation`], the same seccomp programs, bwrap as pid 2 of a PID
//! namespace of cordon's own, `run/pid1.rs`), but its command is the inner stage in its
//! `zygote SOCK` form, which waits on a unix socket. Each run sends the command's argv,
//! environment, working directory and stdio descriptors (`SCM_RIGHTS`); the zygote forks, and
//! the child execs the one-shot inner stage with the one-shot argument list, so every
//! per-run layer is the one-shot run's own code, fresh in each run's process: the inside
//! Landlock rules, no_new_privs, `landlock_restrict_self`, no descriptor beyond stdio, then
//! the command in a session of its own. The seccomp programs are bwrap's
//! `--add-seccomp-fd`, installed on the zygote and inherited by every run.
//!
//! What a run leaves is ended with it: when the run's process has exited (or was killed on a
//! timeout or a cancel), the zygote kills every other process of the sandbox's PID namespace
//! (`kill(-1, SIGKILL)` until none is left) before it answers, so the next run starts in a
//! sandbox with nothing of the last one running, as a one-shot run's namespace dies with it.
//! Runs are served one at a time; a call that finds the zygote busy runs one-shot instead
//! (and says so, [`crate::RunPath`]).
//!
//! The sandbox's `/tmp` is one private directory for the zygote's life, emptied by cordon
//! after each run (once nothing of the run is left to write to it): the next run finds it
//! empty, as a fresh private TMPDIR. Shared between runs, as they are shared by every run of
//! the policy anyway: the writable roots, and the sandbox's IPC and UTS namespaces (SysV IPC
//! objects and `/dev/shm` a run leaves are reachable by later runs of the same policy only;
//! nothing outside the sandbox sees them, and they go with the zygote).
//!
//! Fail closed: a zygote that is gone, a socket that breaks, a malformed answer refuse the
//! call (exit 125, one line) and mark the zygote broken; the next call starts a new one. A
//! timeout or cancel that the zygote does not carry out within [`GRACE`] ends the whole
//! sandbox (pid 1 SIGKILLed, which takes its PID namespace with it). kill -9 of cordon: pid 1
//! has a parent-death signal tied to the zygote's keeper thread, which lives as long as the
//! zygote, so the sandbox dies with cordon.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{pid1, ChildStdio, Outcome, Spec};
use crate::{Error, PathRule, Profile};

/// How long a killed run (timeout, cancel) may take to be confirmed by the zygote, and how
/// long the zygote may take to start, before the sandbox is ended instead. Generous: a loaded
/// 2-core machine starts bwrap in tens of milliseconds, not seconds.
pub(crate) const GRACE: Duration = Duration::from_secs(30);

/// The largest request sent (the inner stage reads up to 256 KiB; a seqpacket message must also
/// fit the socket's send buffer). A larger command line or environment runs one-shot.
const REQUEST_MAX: usize = 160 * 1024;

/// A running zygote.
pub(crate) struct Zygote {
    /// cordon's end of the request socket (SOCK_SEQPACKET).
    sock: OwnedFd,
    /// pid 1 of the PID namespace bwrap runs in (cordon's child), its pidfd and status pipe.
    pid: libc::pid_t,
    pidfd: OwnedFd,
    _pid1_status: OwnedFd,
    /// bwrap's stderr: kept open so that bwrap never writes into a closed pipe; read for the
    /// reason when the start fails.
    stderr: OwnedFd,
    /// Holds pid 1's parent-death signal: dropped (the thread ends) after pid 1 was killed.
    keeper: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
    /// The sandbox's `/tmp`, on the host.
    tmp: crate::tmp::PrivateTmp,
    /// What bwrap made in the sandbox's `/tmp` to mount on (a root under `/tmp` is mounted
    /// there, at its own path): kept when `/tmp` is emptied.
    mount_points: Keep,
    /// Released once bwrap is gone (`protect::Placeholders`).
    placeholders: crate::protect::Placeholders,
    /// The inner stage's program and the Landlock ruleset, as the zygote numbers them.
    inner_fd: RawFd,
    ruleset_fd: RawFd,
    /// The rules the inner stage opens inside (/proc, /dev) and the Landlock ABI.
    inside: Vec<PathRule>,
    abi: i32,
    /// A call failed in a way that leaves the zygote unusable: the next call starts another.
    broken: bool,
}

/// What a run through the zygote came to.
pub(crate) enum Served {
    /// The run went through the zygote (or failed there: the call is refused).
    Ran(Result<Outcome, Error>),
    /// The request could not be sent as it is (too large, a NUL byte): run it one-shot.
    NotSent(Box<Spec>, String),
}

impl Zygote {
    /// Starts bwrap for `profile` (the policy's, without a TMPDIR) with `bwrap`; its `/tmp` is
    /// a new private directory in `tmp_base`. The caller has made the re-point check.
    pub(crate) fn start(
        choice: &crate::Choice,
        built: &crate::Built,
        profile: &Profile,
        tmp_base: &Path,
    ) -> Result<Zygote, Error> {
        let crate::Chosen::Bwrap { bwrap, abi } = &choice.backend else {
            return Err(Error::other("the zygote serves the bwrap backend only"));
        };
        let abi = *abi;
        let tmp = crate::tmp::PrivateTmp::create(tmp_base)?;
        let profile = profile.clone().with_private_tmp(tmp.path());
        let mut pass: Vec<OwnedFd> = Vec::new();
        let (seccomp_fds, seccomp_nos) = crate::seccomp_memfds(&built.seccomp(profile.network)?)?;
        pass.extend(seccomp_fds);
        let cx = crate::bwrap::Context {
            cwd: Path::new("/"),
            tmp: tmp.path(),
            root: rustix::process::geteuid().is_root(),
            seccomp_fds: &seccomp_nos,
            dry_run: false,
            outer_network: choice.outer_network,
            outer_devices: choice.outer_devices,
        };
        let mut inv = crate::bwrap::invocation(&profile, &cx)?;
        // Dropped on every early return below (bwrap is not running then, or has been joined):
        // released as at the end of a run (`protect::Placeholders`).
        let placeholders = std::mem::take(&mut inv.placeholders);
        let mut mount_points = Keep::default();
        for a in &inv.args {
            let a = Path::new(a);
            // The paths below /tmp that bwrap mounts on (the private directory's own paths
            // are sources, the device nodes', not places in the sandbox).
            if let Ok(rel) = a.strip_prefix("/tmp") {
                if !a.starts_with(tmp.path()) && !rel.as_os_str().is_empty() {
                    mount_points.add(rel);
                }
            }
        }
        let held = crate::bwrap::hold_sources(&mut inv, &crate::resolve::writable_roots(&profile))?;
        pass.extend(held);
        let args = crate::memfd(
            "cordon-bwrap-args",
            &crate::bwrap::args_bytes(&inv.args),
            crate::MemfdKind::Data,
        )?;
        let args_no = args.as_raw_fd();
        pass.push(args);
        let (host, inside) = crate::bwrap::split_rules(&profile);
        let ruleset = crate::landlock::prepare(&host, abi)?.fd;
        let ruleset_fd = ruleset.as_raw_fd();
        pass.push(ruleset);
        let inner = crate::bwrap::inner_stage()?;
        let inner_fd = inner.as_raw_fd();
        pass.push(inner);
        let (mine, theirs) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| Error::Io(e.into()))?;
        let sock_no = theirs.as_raw_fd();
        pass.push(theirs);
        let (err_r, err_w) = crate::pipe()?;
        let null = std::fs::File::open("/dev/null").map_err(Error::Io)?;
        let null = std::sync::Arc::new(OwnedFd::from(null));
        let spec = Spec {
            program: bwrap.clone().into_os_string(),
            args: vec![
                "--args".into(),
                args_no.to_string().into(),
                "--".into(),
                format!("/proc/self/fd/{inner_fd}").into(),
                "zygote".into(),
                sock_no.to_string().into(),
            ],
            cwd: PathBuf::from("/"),
            env: Vec::new(),
            timeout: None,
            stdio: ChildStdio {
                fds: [
                    Some(null.clone()),
                    Some(null),
                    Some(std::sync::Arc::new(err_w)),
                ],
                ..Default::default()
            },
            cancel: None,
            proxy: None,
            release: None,
        };
        let rlimits = crate::rlimits(&profile);
        // As root, the sandbox's own device nodes: made by pid 1 on a tmpfs of its mount
        // namespace, as for a one-shot run (`run::Confinement::device_nodes`).
        let devices = inv.devices.clone();
        let raw: Vec<RawFd> = pass.iter().map(|f| f.as_raw_fd()).collect();
        // pid 1's parent-death signal belongs to the thread that cloned it: a thread of the
        // zygote's own, which lives as long as the zygote (a caller's thread may end first,
        // as a runtime's blocking threads do when idle).
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let thread = {
            let _mask = super::block_forwarded_signals();
            std::thread::Builder::new()
                .name("cordon-zygote".into())
                .spawn(move || {
                    let started = pid1::spawn(&spec, &raw, &rlimits, devices.as_deref());
                    let ok = started.is_ok();
                    let _ = started_tx.send(started);
                    drop(spec);
                    if ok {
                        // Until the zygote is dropped (its sender goes).
                        let _ = stop_rx.recv();
                    }
                })
                .map_err(Error::Io)?
        };
        let started = started_rx
            .recv()
            .map_err(|_| Error::other("the zygote's keeper thread ended before starting bwrap"))?;
        drop(pass);
        let started = match started {
            Ok(s) => s,
            Err(pid1::Attempt::Failed(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(pid1::Attempt::Unavailable(e)) => {
                let _ = thread.join();
                return Err(Error::other(format!(
                    "no PID namespace of cordon's own for the zygote ({e})"
                )));
            }
        };
        let mut z = Zygote {
            sock: mine,
            pid: started.pid,
            pidfd: started.pidfd,
            _pid1_status: started.status,
            stderr: err_r,
            keeper: Some((stop_tx, thread)),
            tmp,
            mount_points,
            placeholders,
            inner_fd,
            ruleset_fd,
            inside,
            abi,
            broken: false,
        };
        // The zygote says b"R" once bwrap has built the sandbox and started it.
        match z.wait_readable(Some(Instant::now() + GRACE), None) {
            Ok(Readable::Sock) => {
                let mut b = [0u8; 8];
                match rustix::io::read(&z.sock, &mut b) {
                    Ok(1) if b[0] == b'R' => {
                        // What bwrap did not make (a `-try` mount whose source is missing) is
                        // not looked for after each run.
                        if let Ok(dir) = cordon_fs::safe::Dir::anchor(z.tmp.path()) {
                            z.mount_points.prune(&dir);
                        }
                        Ok(z)
                    }
                    _ => Err(z.start_failed("it did not say it was ready")),
                }
            }
            Ok(Readable::Pid1) => Err(z.start_failed("bwrap exited")),
            Ok(_) => Err(z.start_failed("it did not start in time")),
            Err(e) => Err(z.start_failed(&e.to_string())),
        }
    }

    /// The error for a zygote that did not start, with bwrap's own words when it said any.
    fn start_failed(&mut self, what: &str) -> Error {
        self.broken = true;
        let _ = rustix::fs::fcntl_setfl(&self.stderr, rustix::fs::OFlags::NONBLOCK);
        let mut b = [0u8; 4096];
        let n = rustix::io::read(&self.stderr, &mut b).unwrap_or(0);
        let said = String::from_utf8_lossy(&b[..n]);
        let said = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        Error::other(format!(
            "the bwrap sandbox for this session's runs did not start: {what}{}{said}",
            if said.is_empty() { "" } else { ": " }
        ))
    }

    /// Whether this zygote can serve another run (not broken, pid 1 alive).
    pub(crate) fn usable(&self) -> bool {
        if self.broken {
            return false;
        }
        let mut p = [rustix::event::PollFd::new(
            &self.pidfd,
            rustix::event::PollFlags::IN,
        )];
        !matches!(rustix::event::poll(&mut p, Some(&rustix::event::Timespec::default())), Ok(n) if n > 0)
    }

    /// The sandbox's `/tmp` on the host (the runs' TMPDIR is `/tmp` inside).
    pub(crate) fn tmp(&self) -> &Path {
        self.tmp.path()
    }

    /// Empties the sandbox's `/tmp` after a run, but for what bwrap mounts on (a root under
    /// `/tmp`, the device nodes cordon made there as root): the next run finds it as a fresh
    /// TMPDIR. Never through a link (`cordon_fs::safe`). Anything unexpected (a mount point
    /// gone, a link in its place, a removal that fails) breaks the zygote: the next call
    /// starts another, with a new directory.
    pub(crate) fn empty_tmp(&mut self) {
        let emptied = cordon_fs::safe::Dir::anchor(self.tmp.path())
            .map_err(|e| e.to_string())
            .and_then(|dir| empty(&dir, &self.mount_points, true));
        if emptied.is_err() {
            self.broken = true;
        }
    }

    /// Runs `spec` (its stdio already the run's own, see [`crate::stdio::Relay`]) in the
    /// zygote; `tmp` in its environment is the host's name of the zygote's `/tmp`.
    pub(crate) fn run(&mut self, mut spec: Spec) -> Served {
        let command = std::iter::once(spec.program.clone()).chain(spec.args.iter().cloned());
        let mut argv: Vec<OsString> = vec![format!("/proc/self/fd/{}", self.inner_fd).into()];
        argv.extend(crate::bwrap::inner_args(
            self.ruleset_fd,
            &self.inside,
            self.abi,
            &spec.cwd,
            command,
        ));
        let tmp = self.tmp.path().to_path_buf();
        let env: Vec<OsString> = spec
            .env
            .iter()
            .map(|(k, v)| {
                let v = if k == "TMPDIR" {
                    OsString::from("/tmp")
                } else if let Ok(rest) = Path::new(v).strip_prefix(&tmp) {
                    // A file handed in the private TMPDIR (`Io::files`): where bwrap binds it.
                    Path::new("/tmp").join(rest).into_os_string()
                } else {
                    v.clone()
                };
                let mut kv = k.clone();
                kv.push("=");
                kv.push(v);
                kv
            })
            .collect();
        let request = match encode(&spec.cwd, &argv, &env) {
            Ok(r) => r,
            Err(why) => return Served::NotSent(Box::new(spec), why),
        };
        if let Some(r) = spec.release.take() {
            if let Err(e) = r.wait() {
                return Served::Ran(Err(e));
            }
        }
        Served::Ran(self.serve(&request, &spec.stdio, spec.timeout, spec.cancel.as_deref()))
    }

    fn serve(
        &mut self,
        request: &[u8],
        stdio: &ChildStdio,
        timeout: Option<Duration>,
        cancel: Option<&OwnedFd>,
    ) -> Result<Outcome, Error> {
        // The command's stdio: the run's own, or cordon's where it has none (as a one-shot
        // run inherits them).
        let fds: [BorrowedFd<'_>; 3] = std::array::from_fn(|n| match &stdio.fds[n] {
            Some(fd) => fd.as_fd(),
            // SAFETY: 0, 1 and 2 are this process's standard streams, open for its life
            // (borrowed only for the send below).
            None => unsafe { BorrowedFd::borrow_raw(n as RawFd) },
        });
        let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
        let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
        control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds));
        let sent = rustix::net::sendmsg(
            &self.sock,
            &[io::IoSlice::new(request)],
            &mut control,
            rustix::net::SendFlags::NOSIGNAL,
        );
        if let Err(e) = sent {
            return Err(self.refused(&format!("the request could not be sent ({e})")));
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut killed: Option<(Outcome, Instant)> = None;
        loop {
            let until = match killed {
                Some((_, by)) => Some(by),
                None => deadline,
            };
            let cancel_fd = if killed.is_none() { cancel } else { None };
            match self.wait_readable(until, cancel_fd) {
                Ok(Readable::Sock) => {
                    let mut b = [0u8; 16];
                    let n = match rustix::io::read(&self.sock, &mut b) {
                        Ok(n) => n,
                        Err(rustix::io::Errno::INTR) => continue,
                        Err(e) => return Err(self.refused(&format!("its answer: {e}"))),
                    };
                    return match (n, b[0]) {
                        (5, b'S') => {
                            let st = i32::from_ne_bytes([b[1], b[2], b[3], b[4]]);
                            Ok(match killed {
                                Some((o, _)) => o,
                                None if libc::WIFSIGNALED(st) => {
                                    Outcome::Signaled(libc::WTERMSIG(st))
                                }
                                None => Outcome::Exited(libc::WEXITSTATUS(st)),
                            })
                        }
                        (5, b'F') => {
                            let e = i32::from_ne_bytes([b[1], b[2], b[3], b[4]]);
                            Err(Error::other(format!(
                                "the sandbox could not start the command: fork: {}",
                                io::Error::from_raw_os_error(e)
                            )))
                        }
                        (0, _) => Err(self.refused("it ended during the run")),
                        _ => Err(self.refused("it answered something else")),
                    };
                }
                Ok(Readable::Pid1) => return Err(self.refused("it ended during the run")),
                Ok(Readable::Cancel) => {
                    let _ = rustix::io::write(&self.sock, b"K");
                    killed = Some((Outcome::Cancelled, Instant::now() + GRACE));
                }
                Ok(Readable::Deadline) => match killed {
                    None => {
                        let _ = rustix::io::write(&self.sock, b"K");
                        killed = Some((Outcome::TimedOut, Instant::now() + GRACE));
                    }
                    Some((o, _)) => {
                        // The zygote did not end the run: the whole sandbox goes.
                        self.broken = true;
                        self.end();
                        return Ok(o);
                    }
                },
                Err(e) => return Err(self.refused(&format!("waiting for it: {e}"))),
            }
        }
    }

    /// Marks the zygote broken and says why the call is refused.
    fn refused(&mut self, what: &str) -> Error {
        self.broken = true;
        self.end();
        Error::other(format!(
            "the bwrap sandbox this session runs commands in failed: {what}; the call is refused (the next call starts a new sandbox)"
        ))
    }

    /// Waits until the socket, pid 1's pidfd or `cancel` is readable, or `until`.
    fn wait_readable(
        &self,
        until: Option<Instant>,
        cancel: Option<&OwnedFd>,
    ) -> io::Result<Readable> {
        use rustix::event::{PollFd, PollFlags};
        loop {
            let left = until.map(|u| u.saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO) {
                return Ok(Readable::Deadline);
            }
            let mut fds = vec![
                PollFd::new(&self.sock, PollFlags::IN),
                PollFd::new(&self.pidfd, PollFlags::IN),
            ];
            if let Some(c) = cancel {
                fds.push(PollFd::new(c, PollFlags::IN));
            }
            let ts = left.map(|d| rustix::event::Timespec {
                tv_sec: d.as_secs() as _,
                tv_nsec: d.subsec_nanos() as _,
            });
            match rustix::event::poll(&mut fds, ts.as_ref()) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            // The answer first: a zygote that answered and then ended still answered.
            if !fds[0].revents().is_empty() {
                return Ok(Readable::Sock);
            }
            if !fds[1].revents().is_empty() {
                return Ok(Readable::Pid1);
            }
            if fds.len() > 2 && !fds[2].revents().is_empty() {
                return Ok(Readable::Cancel);
            }
        }
    }

    /// Ends the sandbox: pid 1 SIGKILLed (its PID namespace, bwrap and every run with it) and
    /// reaped; idempotent.
    fn end(&mut self) {
        if self.pid == 0 {
            return;
        }
        let _ = rustix::process::pidfd_send_signal(&self.pidfd, rustix::process::Signal::KILL);
        // SAFETY: `pid` is our child, not reaped yet (this is the only place that reaps it,
        // and it runs once); a null status pointer is allowed.
        unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), libc::__WALL) };
        self.pid = 0;
        if let Some((stop, thread)) = self.keeper.take() {
            drop(stop);
            let _ = thread.join();
        }
        // bwrap is gone: its placeholders go if no other run uses them.
        drop(std::mem::take(&mut self.placeholders));
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        self.end();
    }
}

impl std::fmt::Debug for Zygote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zygote")
            .field("pid", &self.pid)
            .field("broken", &self.broken)
            .finish()
    }
}

/// Paths below the sandbox's `/tmp` that emptying it keeps: each name either a place
/// mounted on (kept whole) or a directory on the way to one (emptied of everything else).
#[derive(Debug, Default)]
struct Keep(std::collections::BTreeMap<OsString, Option<Keep>>);

impl Keep {
    fn add(&mut self, rel: &Path) {
        let mut names = rel.iter();
        let Some(first) = names.next() else { return };
        let rest: PathBuf = names.collect();
        let entry = self
            .0
            .entry(first.to_owned())
            .or_insert(Some(Keep::default()));
        match entry {
            // Already kept whole.
            None => {}
            Some(_) if rest.as_os_str().is_empty() => *entry = None,
            Some(below) => below.add(&rest),
        }
    }
}

impl Keep {
    /// Forgets what is not in `dir`.
    fn prune(&mut self, dir: &cordon_fs::safe::Dir) {
        let names: Vec<OsString> = dir
            .entries()
            .map(|e| e.into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default();
        self.0.retain(|k, _| names.contains(k));
        for (name, below) in self.0.iter_mut() {
            if let Some(below) = below {
                match dir.dir(Path::new(name)) {
                    Ok(sub) => below.prune(&sub),
                    Err(_) => below.0.clear(),
                }
            }
        }
    }
}

/// Removes everything in `dir` but what `keep` names (see [`Keep`]); `top`: the device nodes'
/// directory stays too.
fn empty(dir: &cordon_fs::safe::Dir, keep: &Keep, top: bool) -> Result<(), String> {
    let entries = dir.entries().map_err(|e| e.to_string())?;
    for (name, _) in &entries {
        if top && name == crate::bwrap::DEVICE_DIR {
            continue;
        }
        match keep.0.get(name) {
            Some(None) => {}
            Some(Some(below)) => {
                let sub = dir.dir(Path::new(name)).map_err(|e| e.to_string())?;
                empty(&sub, below, false)?;
            }
            None => dir
                .remove_tree(Path::new(name))
                .map_err(|e| e.to_string())?,
        }
    }
    // A place mounted on that is gone was moved or removed by a run: the sandbox's view no
    // longer is the policy's.
    if keep.0.keys().any(|k| !entries.iter().any(|(n, _)| n == k)) {
        return Err("a mount point in the sandbox's /tmp is gone".into());
    }
    Ok(())
}

enum Readable {
    Sock,
    Pid1,
    Cancel,
    Deadline,
}

/// The request the inner stage's zygote reads (see `inner/main.rs`); `Err` when it cannot
/// carry it (a NUL byte, too large).
fn encode(cwd: &Path, argv: &[OsString], env: &[OsString]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(4096);
    out.push(b'X');
    out.extend_from_slice(&(argv.len() as u32).to_ne_bytes());
    out.extend_from_slice(&(env.len() as u32).to_ne_bytes());
    for s in std::iter::once(cwd.as_os_str())
        .chain(argv.iter().map(|a| a.as_os_str()))
        .chain(env.iter().map(|e| e.as_os_str()))
    {
        if s.as_bytes().contains(&0) {
            return Err("an argument or variable holds a NUL byte".into());
        }
        out.extend_from_slice(s.as_bytes());
        out.push(0);
        if out.len() > REQUEST_MAX {
            return Err(format!(
                "the command line and environment are larger than the {} KiB a warm sandbox takes",
                REQUEST_MAX / 1024
            ));
        }
    }
    Ok(out)
}
