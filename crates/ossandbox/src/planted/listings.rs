//! The walk's listings, kept between runs over the same roots, so that the "before" snapshot
//! of a run reads again only the directories whose names changed since the last scan that
//! completed: the rest cost one `statx` each instead of `open`, `fstat`, `getdents` and
//! `close` (what a project's size costs each `cordon exec`, see docs/benchmarks.md).
//!
//! Nothing here decides what the scan finds; it only saves reading a directory again. Each
//! kept listing is reused under [`Snapshot::take_with`]'s rule — the directory's (dev, ino,
//! ctime) unchanged and its ctime older than the snapshot that read it by [`SETTLED`] — which
//! a command cannot defeat: ctime moves with every name created, removed or renamed in a
//! directory and cannot be set back. What the operator changed between runs changed ctimes
//! too, so the "before" snapshot reads those directories again and attribution stays: only
//! what changed *during* the run is a finding. Files of the persistence surface are statted
//! one by one in every snapshot, as ever (a file rewritten in place leaves its directory's
//! ctime alone).
//!
//! The file lies beside the after-run scan's markers (`LOGDIR/scans/listings-HASH`), a
//! directory the profile keeps from every run (as it keeps the audit log). It is used only
//! when everything about it holds, else ignored (every directory read again, as without it):
//! - written by this user (root with a state directory another user owns takes none of that
//!   user's making);
//! - its checksum (a torn write: it is replaced without a sync, as losing it costs only time);
//! - the same roots (a file per set of roots, named by their hash, which the file repeats);
//! - the same boot (`/proc/sys/kernel/random/boot_id`): device numbers, inode numbers and the
//!   clock do not carry over a reboot;
//! - the same cordon binary (its device, inode, size, mtime and ctime): a build that keeps
//!   other names ([`super::kept`]) does not take listings filtered by another.
//!
//! It is written only after a scan that completed.

use std::ffi::{OsStr, OsString};
use std::hash::Hasher;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cordon_policy::surface::EnvKind;

use super::{git_state, Listing, Snapshot, StartupRead, SETTLED};

const HEAD: &[u8] = b"cordon walk listings v3\n";
/// A larger file is neither written nor read (about 300,000 directories).
const MAX_FILE: u64 = 64 << 20;

/// Where the listings of runs over one set of roots are kept (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Listings {
    dir: PathBuf,
    name: OsString,
    /// Whether what is on file is read ([`Listings::unread`]).
    read: bool,
}

impl Listings {
    /// The listings of runs over `roots` (canonical), kept in `dir`: a directory no run can
    /// write (beside the audit log).
    pub fn beside(dir: &Path, roots: &[PathBuf]) -> Listings {
        Listings {
            dir: dir.to_path_buf(),
            name: format!("listings-{:016x}", fnv(&roots_bytes(roots))).into(),
            read: true,
        }
    }

    /// These listings never read (every directory read again), still written, and their
    /// journal kept: for a directory a process outside cordon may write (Codex's state apart,
    /// `LOGDIR/codex`), where a forged file that left a name out of a directory's listing hid
    /// that name from both snapshots of a run outside that process's reach (an in-place
    /// rewrite of `.envrc` by an escalated Codex call went unreported).
    pub fn unread(self) -> Listings {
        Listings {
            read: false,
            ..self
        }
    }

    /// The journal of the scan's moves over `roots` ([`super::Journal`]), kept in the same
    /// directory.
    pub fn journal(&self, roots: &[PathBuf]) -> super::Journal {
        super::Journal::beside(&self.dir).of(roots)
    }

    /// The file's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    /// The kept listings of `roots` as an earlier snapshot ([`Snapshot::take_with`]); `None`
    /// when there are none, or they are not to be used (see the module's documentation).
    pub(crate) fn load(&self, roots: &[PathBuf]) -> Option<Snapshot> {
        use std::io::Read;
        if !self.read || self.in_a_root(roots) {
            return None;
        }
        let dir = cordon_fs::safe::Dir::anchor(&self.dir).ok()?;
        let file = dir.open_file(Path::new(&self.name)).ok()??;
        // Only one this user wrote: root running with a state directory another user owns
        // (`sudo -E`) does not take listings that user could have forged. (A listing cordon
        // wrote, however old, is harmless: each is checked against the directory.)
        let m = file.metadata().ok()?;
        if m.uid() != rustix::process::geteuid().as_raw() || m.len() > MAX_FILE {
            return None;
        }
        let mut bytes = Vec::with_capacity(m.len() as usize);
        file.take(MAX_FILE).read_to_end(&mut bytes).ok()?;
        decode(&bytes, &context(roots)?)
    }

    /// Whether the directory lies in one of `roots` (canonical), or cannot be resolved: what
    /// is there the run could have written (the profile keeps the audit log's directory from
    /// every run, so this is the second line), and a forged file would hide names from the
    /// walk and keep a startup file's reading that no longer holds.
    fn in_a_root(&self, roots: &[PathBuf]) -> bool {
        std::fs::canonicalize(&self.dir).map_or(true, |d| roots.iter().any(|r| d.starts_with(r)))
    }

    /// Keeps `snapshot`'s listings (of a scan that completed) for the next run over `roots`.
    /// Best effort: without them the next run reads every directory.
    pub(crate) fn store(&self, snapshot: &Snapshot, roots: &[PathBuf]) {
        if self.in_a_root(roots) {
            return;
        }
        let Some(ctx) = context(roots) else {
            return;
        };
        let Some(bytes) = encode(snapshot, &ctx).filter(|b| b.len() as u64 <= MAX_FILE) else {
            return;
        };
        // Not written (a full disk, say): the next run reads every directory, as without.
        let _ = cordon_fs::safe::Dir::anchor(&self.dir)
            .and_then(|d| d.write_unsynced(Path::new(&self.name), &bytes, 0o600));
    }
}

/// What a file must repeat to be used: this boot, this binary, these roots.
fn context(roots: &[PathBuf]) -> Option<Vec<u8>> {
    let boot = std::fs::read("/proc/sys/kernel/random/boot_id").ok()?;
    let exe = std::fs::metadata("/proc/self/exe").ok()?;
    let mut c = Vec::new();
    put_bytes(&mut c, &boot);
    for n in [
        exe.dev(),
        exe.ino(),
        exe.size(),
        exe.mtime() as u64,
        exe.mtime_nsec() as u64,
        exe.ctime() as u64,
        exe.ctime_nsec() as u64,
    ] {
        c.extend_from_slice(&n.to_le_bytes());
    }
    put_bytes(&mut c, &roots_bytes(roots));
    Some(c)
}

fn roots_bytes(roots: &[PathBuf]) -> Vec<u8> {
    let mut b = Vec::new();
    for r in roots {
        b.extend_from_slice(r.as_os_str().as_bytes());
        b.push(0);
    }
    b
}

/// FNV-1a, 64 bits: tells a torn or damaged file apart (the directory's protection, not this,
/// keeps a run from forging one).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn encode(s: &Snapshot, ctx: &[u8]) -> Option<Vec<u8>> {
    let started = s.started?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    let mut out = Vec::with_capacity(64 * 1024);
    out.extend_from_slice(HEAD);
    put_bytes(&mut out, ctx);
    out.extend_from_slice(&started.as_secs().to_le_bytes());
    out.extend_from_slice(&started.subsec_nanos().to_le_bytes());
    // Only what a later snapshot may reuse: a listing whose ctime is not older than this
    // snapshot by SETTLED never will be.
    let settled = |l: &&Listing| {
        let (secs, nsec) = (l.state.2, l.state.3);
        secs >= 0
            && (0..1_000_000_000).contains(&nsec)
            && Duration::new(secs as u64, nsec as u32) + SETTLED < started
    };
    let kept: Vec<(&PathBuf, &Listing)> = s.listings.iter().filter(|(_, l)| settled(l)).collect();
    out.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    for (path, l) in kept {
        put_bytes(&mut out, path.as_os_str().as_bytes());
        let (dev, ino, secs, nsec) = l.state;
        for n in [dev, ino, secs as u64, nsec as u64, l.count as u64] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&(l.names.len() as u32).to_le_bytes());
        for (name, is_dir) in l.names.iter() {
            out.push(u8::from(*is_dir));
            put_bytes(&mut out, name.as_bytes());
        }
    }
    // Then what was read of each git directory's refs and reflogs, settled as the listings
    // are: the next "before" snapshot `stat`s each and reads only what changed.
    out.extend_from_slice(&(s.git.len() as u32).to_le_bytes());
    for (dir, g) in &s.git {
        put_bytes(&mut out, dir.as_os_str().as_bytes());
        let reads: Vec<_> = g
            .reads()
            .iter()
            .filter(|(_, (st, _))| {
                st.5 >= 0
                    && (0..1_000_000_000).contains(&st.6)
                    && Duration::new(st.5 as u64, st.6 as u32) + SETTLED < started
            })
            .collect();
        out.extend_from_slice(&(reads.len() as u32).to_le_bytes());
        for (path, (st, v)) in reads {
            put_bytes(&mut out, path.as_os_str().as_bytes());
            put_stamp(&mut out, st);
            match &**v {
                Ok(b) => {
                    out.push(0);
                    put_bytes(&mut out, b);
                }
                Err(e) => {
                    out.push(1);
                    put_bytes(&mut out, e.as_bytes());
                }
            }
        }
    }
    // Then the reading of the shell startup files (already kept only where every stamp was
    // settled, see `Snapshot::startup_places`): the next snapshot `stat`s each file it
    // consulted and parses none of them while all are as they were.
    match s.startup.as_deref() {
        None => out.push(0),
        Some(st) => {
            out.push(1);
            put_bytes(&mut out, st.home.as_os_str().as_bytes());
            out.extend_from_slice(&(st.files.len() as u32).to_le_bytes());
            for (path, stamp) in &st.files {
                put_bytes(&mut out, path.as_os_str().as_bytes());
                match stamp {
                    None => out.push(0),
                    Some(m) => {
                        out.push(1);
                        put_stamp(&mut out, m);
                    }
                }
            }
            out.extend_from_slice(&(st.places.len() as u32).to_le_bytes());
            for p in &st.places {
                put_bytes(&mut out, p.path.as_os_str().as_bytes());
                out.push(match p.kind {
                    EnvKind::PathDir => 0,
                    EnvKind::LoadDir => 1,
                    EnvKind::File => 2,
                });
                put_bytes(&mut out, p.why.as_bytes());
            }
        }
    }
    let sum = fnv(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Some(out)
}

/// The startup files' reading of a listings file ([`encode`]); `None` when it does not parse,
/// or names a reason [`startup::WHYS`] does not hold (a build that reads the files otherwise).
fn decode_startup(r: &mut Reader<'_>) -> Option<Option<Box<StartupRead>>> {
    use cordon_policy::surface::{startup, EnvPlace};
    if r.u8()? == 0 {
        return Some(None);
    }
    let home = PathBuf::from(OsStr::from_bytes(r.bytes()?));
    let n = r.u32()? as usize;
    let mut files = Vec::with_capacity(n.min(r.0.len() / 8));
    for _ in 0..n {
        let path = PathBuf::from(OsStr::from_bytes(r.bytes()?));
        let stamp = match r.u8()? {
            0 => None,
            1 => Some(r.stamp()?),
            _ => return None,
        };
        files.push((path, stamp));
    }
    let n = r.u32()? as usize;
    let mut places = Vec::with_capacity(n.min(r.0.len() / 8));
    for _ in 0..n {
        let path = PathBuf::from(OsStr::from_bytes(r.bytes()?));
        let kind = match r.u8()? {
            0 => EnvKind::PathDir,
            1 => EnvKind::LoadDir,
            2 => EnvKind::File,
            _ => return None,
        };
        let why = r.bytes()?;
        let why = startup::WHYS.iter().find(|w| w.as_bytes() == why)?;
        places.push(EnvPlace { path, kind, why });
    }
    Some(Some(Box::new(StartupRead {
        home,
        files,
        places,
    })))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// A file's stamp as [`put_stamp`] wrote it.
    fn stamp(&mut self) -> Option<git_state::Stamp> {
        Some((
            self.u64()?,
            self.u64()?,
            self.u64()?,
            self.u64()? as i64,
            self.u64()? as i64,
            self.u64()? as i64,
            self.u64()? as i64,
        ))
    }
}

/// A file's stamp (dev, ino, size, mtime and ctime as seconds and nanoseconds), seven
/// little-endian u64s: one encoding for the git state's reads and the startup files'.
fn put_stamp(out: &mut Vec<u8>, st: &git_state::Stamp) {
    for n in [
        st.0,
        st.1,
        st.2,
        st.3 as u64,
        st.4 as u64,
        st.5 as u64,
        st.6 as u64,
    ] {
        out.extend_from_slice(&n.to_le_bytes());
    }
}

fn decode(bytes: &[u8], ctx: &[u8]) -> Option<Snapshot> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if fnv(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader(body);
    if r.take(HEAD.len())? != HEAD || r.bytes()? != ctx {
        return None;
    }
    let secs = r.u64()?;
    let nanos = r.u32()?;
    if nanos >= 1_000_000_000 {
        return None;
    }
    let mut s = Snapshot {
        started: Some(SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))?),
        ..Snapshot::default()
    };
    let n = r.u32()? as usize;
    // Bounded by the file's size: every listing takes more than 8 bytes.
    s.listings.reserve(n.min(body.len() / 8));
    for _ in 0..n {
        let path = PathBuf::from(OsStr::from_bytes(r.bytes()?));
        let state = (r.u64()?, r.u64()?, r.u64()? as i64, r.u64()? as i64);
        let count = usize::try_from(r.u64()?).ok()?;
        let k = r.u32()? as usize;
        let mut names = Vec::with_capacity(k.min(body.len()));
        for _ in 0..k {
            let is_dir = match r.u8()? {
                0 => false,
                1 => true,
                _ => return None,
            };
            names.push((OsString::from_vec(r.bytes()?.to_vec()), is_dir));
        }
        s.listings.insert(
            path,
            Listing {
                state,
                names: names.into(),
                count,
            },
        );
    }
    let n = r.u32()? as usize;
    for _ in 0..n {
        let dir = PathBuf::from(OsStr::from_bytes(r.bytes()?));
        let k = r.u32()? as usize;
        let mut reads = std::collections::HashMap::with_capacity(k.min(body.len() / 64));
        for _ in 0..k {
            let path = PathBuf::from(OsStr::from_bytes(r.bytes()?));
            let st = r.stamp()?;
            let v = match r.u8()? {
                0 => Ok(r.bytes()?.to_vec()),
                1 => Err(String::from_utf8_lossy(r.bytes()?).into_owned()),
                _ => return None,
            };
            reads.insert(path, (st, std::sync::Arc::new(v)));
        }
        s.git
            .insert(dir, super::git_state::GitState::from_reads(reads));
    }
    s.startup = decode_startup(&mut r)?;
    r.0.is_empty().then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots_of(d: &Path) -> Vec<PathBuf> {
        vec![d.canonicalize().unwrap()]
    }

    /// The file's name and checksum are FNV-1a, 64 bits: pinned here so that a change of the
    /// hash (or of its implementation) is seen, as listings kept by the last build would no
    /// longer be found.
    #[test]
    fn listings_name_is_fnv1a_of_the_roots() {
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
        let l = Listings::beside(Path::new("/state"), &[PathBuf::from("/work/a")]);
        assert_eq!(l.name, "listings-abea2c5021a5624d");
    }

    /// What is written reads back as it was, for the same roots only; a damaged, truncated or
    /// foreign file is not used.
    #[test]
    fn kept_listings_read_back_only_for_their_roots_and_intact() {
        let d = tempfile::tempdir().unwrap();
        let roots = roots_of(d.path());
        std::fs::create_dir_all(roots[0].join("a/b")).unwrap();
        std::fs::write(roots[0].join("a/.envrc"), "").unwrap();
        std::fs::write(roots[0].join("a/plain.rs"), "").unwrap();
        let mut snap = Snapshot::take(&roots);
        // As if taken later: every directory settled.
        snap.started = snap.started.map(|t| t + Duration::from_secs(60));
        let store = tempfile::tempdir().unwrap();
        let l = Listings::beside(store.path(), &roots);
        l.store(&snap, &roots);
        let back = l.load(&roots).expect("read back");
        assert_eq!(back.started, snap.started);
        assert_eq!(back.listings.len(), snap.listings.len());
        for (p, want) in &snap.listings {
            let got = &back.listings[p];
            assert_eq!(got.state, want.state);
            assert_eq!(got.count, want.count);
            assert_eq!(got.names[..], want.names[..]);
        }
        let a = &back.listings[&roots[0].join("a")];
        assert_eq!(a.count, 3, "b, .envrc and plain.rs");
        assert_eq!(a.names.len(), 2, "plain.rs is counted, not kept");

        // Another set of roots: another file, and this one would not be taken for it.
        let other = vec![roots[0].join("a")];
        assert!(Listings::beside(store.path(), &other)
            .load(&other)
            .is_none());
        let bytes = std::fs::read(l.path()).unwrap();
        std::fs::write(Listings::beside(store.path(), &other).path(), &bytes).unwrap();
        assert!(Listings::beside(store.path(), &other)
            .load(&other)
            .is_none());
        // One byte changed anywhere, or the file cut short: not used.
        for at in [0, HEAD.len() + 10, bytes.len() / 2, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[at] ^= 1;
            std::fs::write(l.path(), &b).unwrap();
            assert!(l.load(&roots).is_none(), "byte {at} changed");
        }
        for len in [0, 8, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(l.path(), &bytes[..len]).unwrap();
            assert!(l.load(&roots).is_none(), "cut to {len}");
        }
        std::fs::write(l.path(), &bytes).unwrap();
        assert!(l.load(&roots).is_some());
        // Another user's: not used (as root, the test can make one).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(l.path(), Some(65534), None).unwrap();
            assert!(l.load(&roots).is_none(), "another user's file was used");
            std::os::unix::fs::chown(l.path(), Some(0), None).unwrap();
            assert!(l.load(&roots).is_some());
        }
        // A link in its place is not followed.
        std::fs::remove_file(l.path()).unwrap();
        let elsewhere = store.path().join("elsewhere");
        std::fs::write(&elsewhere, &bytes).unwrap();
        std::os::unix::fs::symlink(&elsewhere, l.path()).unwrap();
        assert!(l.load(&roots).is_none());
    }

    /// The reading of the shell startup files is kept with the listings and read back whole;
    /// one that names a reason this build does not give is not used.
    #[test]
    fn a_startup_reading_is_kept_with_the_listings() {
        let d = tempfile::tempdir().unwrap();
        let roots = roots_of(d.path());
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        std::fs::write(home.join(".profile"), ". \"$HOME/.cargo/env\"\n").unwrap();
        std::fs::write(
            home.join(".cargo/env"),
            "export PATH=\"$HOME/.cargo/bin:$PATH\"\n",
        )
        .unwrap();
        let mut snap = Snapshot::take(&roots);
        snap.started = snap.started.map(|t| t + Duration::from_secs(60));
        let later = SystemTime::now() + Duration::from_secs(60);
        let places = snap.startup_places_at(&home, None, later);
        assert_eq!(places.len(), 2, "{places:?}");
        let kept = snap.startup.clone().expect("a settled reading is kept");
        assert!(kept
            .files
            .iter()
            .any(|(f, st)| f == &home.join(".cargo/env") && st.is_some()));
        assert!(kept
            .files
            .iter()
            .any(|(f, st)| f == &home.join(".zshrc") && st.is_none()));
        let store = tempfile::tempdir().unwrap();
        let l = Listings::beside(store.path(), &roots);
        l.store(&snap, &roots);
        assert_eq!(l.load(&roots).unwrap().startup, Some(kept.clone()));
        // A reason no reader of this build gives: the file is not used.
        let mut odd = snap.clone();
        odd.startup.as_mut().unwrap().places[0].why = "another build's reason";
        l.store(&odd, &roots);
        assert!(l.load(&roots).is_none());
    }

    /// Listings kept in one of the roots (a directory the run could write) are neither read
    /// nor written: a forged file would hide names from the walk and keep a startup file's
    /// reading that no longer holds. (Before, a file there was read like any other.)
    #[test]
    fn listings_in_a_root_are_not_used() {
        let d = tempfile::tempdir().unwrap();
        let roots = roots_of(d.path());
        std::fs::create_dir_all(roots[0].join("a")).unwrap();
        let mut snap = Snapshot::take(&roots);
        snap.started = snap.started.map(|t| t + Duration::from_secs(60));
        let outside = tempfile::tempdir().unwrap();
        let l = Listings::beside(outside.path(), &roots);
        l.store(&snap, &roots);
        let bytes = std::fs::read(l.path()).unwrap();
        assert!(l.load(&roots).is_some());
        // The same file, in a root (as a run there would forge it): not read.
        let inside = roots[0].join("state/scans");
        std::fs::create_dir_all(&inside).unwrap();
        let l = Listings::beside(&inside, &roots);
        std::fs::write(l.path(), &bytes).unwrap();
        assert!(l.load(&roots).is_none(), "listings in a root were used");
        // Nor written there.
        std::fs::remove_file(l.path()).unwrap();
        l.store(&snap, &roots);
        assert!(!l.path().exists());
        // Reached through a link to the root: the same.
        let link = outside.path().join("link");
        std::os::unix::fs::symlink(&roots[0], &link).unwrap();
        std::fs::write(l.path(), &bytes).unwrap();
        let l = Listings::beside(&link.join("state/scans"), &roots);
        assert!(
            l.load(&roots).is_none(),
            "listings through a link into a root were used"
        );
    }

    /// Listings not yet settled when the snapshot was taken are not kept (no later snapshot
    /// could reuse them).
    #[test]
    fn unsettled_listings_are_not_kept() {
        let d = tempfile::tempdir().unwrap();
        let roots = roots_of(d.path());
        std::fs::create_dir_all(roots[0].join("fresh")).unwrap();
        let snap = Snapshot::take(&roots);
        let store = tempfile::tempdir().unwrap();
        let l = Listings::beside(store.path(), &roots);
        l.store(&snap, &roots);
        assert!(l.load(&roots).unwrap().listings.is_empty());
    }
}
