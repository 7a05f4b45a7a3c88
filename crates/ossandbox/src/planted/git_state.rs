//! What a run put into git's own state without leaving it in the worktree: a surface file
//! (`.claude/settings.json` with a hook, `.envrc`, `.husky/pre-commit`) staged into the index
//! (`git update-index --add --cacheinfo`), committed to HEAD (`git commit-tree` + `git
//! update-ref`, the worktree file deleted) or stored in `refs/stash` (`git stash store`). The
//! tree scan sees no such file after the run, yet the operator's own `git checkout .` /
//! `git restore .` (from the index), `git reset --hard` (HEAD) or `git stash pop` writes it
//! out later, outside any sandbox, for the next tool to run.
//!
//! Git is never run for this (the repository's configuration may be the run's): the index is
//! read by [`super::index_entries`], objects (loose and packed, deltas applied) here. The cost
//! of a run that did not touch git's state is one `stat` of the index and the reads of `HEAD`,
//! its ref and `refs/stash` (a few small files): the index is parsed anyway for its gitlinks.
//! Trees are read only when HEAD or the stash moved, and only where they differ from what
//! they were before the run (a subtree with the same id is skipped).
//!
//! Fail closed: what cannot be read (an index that is no index, a missing or corrupt object, a
//! reftable whose tables changed) is reported as not checked, never passed.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Objects larger than this (inflated) are not read: a tree or commit never is.
const MAX_OBJECT: u64 = 64 * 1024 * 1024;
/// A pack index larger than this is not read.
const MAX_PACK_INDEX: u64 = 1 << 30;
/// Objects read per comparison, at most (a tree walk of a huge repository whose every tree
/// changed says so rather than running on).
const MAX_OBJECTS: usize = 1_000_000;
/// Delta chains longer than this are not followed (git's own default depth is 50; each link
/// is a frame of a recursion on the scanning thread's stack).
const MAX_DELTA_DEPTH: usize = 1_000;

const TREE: u32 = 0o040000;
const GITLINK: u32 = 0o160000;

/// A path's entry: mode and object id.
type Entry = (u32, Vec<u8>);

/// Surface paths found in git's state, each with where (the index, HEAD's commit, the stash)
/// and the entry there.
pub(super) type Found = BTreeMap<Vec<u8>, Vec<(&'static str, Entry)>>;

/// Worktree files larger than this are not hashed (their staged entry is reported).
const MAX_HASHED: u64 = 16 * 1024 * 1024;

/// Whether the worktree already holds `entry` at `path`: what the operator's checkout would
/// write is there (a regular file of that content and executable bit, or a link to that
/// target), read without following a link. Anything else, or what cannot be read, is not.
pub(super) fn in_worktree(path: &Path, entry: &Entry, hash: usize) -> bool {
    use std::io::Read as _;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let content = match entry.0 {
        0o120000 if m.file_type().is_symlink() => match std::fs::read_link(path) {
            Ok(t) => t.into_os_string().into_encoded_bytes(),
            Err(_) => return false,
        },
        0o100644 | 0o100755 if m.is_file() && m.len() <= MAX_HASHED => {
            if (m.mode() & 0o100 != 0) != (entry.0 == 0o100755) {
                return false;
            }
            let Ok(f) = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(path)
            else {
                return false;
            };
            let mut buf = Vec::new();
            if f.take(MAX_HASHED + 1).read_to_end(&mut buf).is_err() {
                return false;
            }
            buf
        }
        _ => return false,
    };
    blob_id(&content, hash) == entry.1
}

/// Git's id of a blob: the hash of `blob SIZE\0CONTENT`.
fn blob_id(content: &[u8], hash: usize) -> Vec<u8> {
    use sha1::Digest as _;
    let head = format!("blob {}\0", content.len());
    if hash == 32 {
        let mut h = sha2::Sha256::new();
        h.update(head.as_bytes());
        h.update(content);
        h.finalize().to_vec()
    } else {
        let mut h = sha1::Sha1::new();
        h.update(head.as_bytes());
        h.update(content);
        h.finalize().to_vec()
    }
}

/// A resolved ref: its object id, none (unborn, absent), or why it could not be read (the
/// text changes when what it was read from does).
type Ref = Result<Option<Vec<u8>>, String>;

/// One git directory's state, as far as the operator's git could write it out later.
#[derive(Debug, Clone)]
pub(super) struct GitState {
    /// The index file's identity (dev, ino, size, mtime, ctime): unchanged means not rewritten
    /// (git writes a new index and renames it in; ctime cannot be set back).
    index_id: Option<super::Id>,
    /// The index's entries (all of them: which are on the surface is worked out only for
    /// those that changed, when the index did); `None` when it exists and cannot be read.
    index: Option<Vec<Arc<Vec<u8>>>>,
    /// The object id length (20 for SHA-1, 32 for SHA-256).
    hash: usize,
    head: Ref,
    stash: Ref,
    /// The replace refs (`refs/replace/ID`, loose and packed) with what they hold: git reads
    /// an object through one (`git reset --hard` writes out the replacement's tree), which
    /// this module does not follow.
    replace: Vec<(Vec<u8>, Vec<u8>)>,
}

impl super::IndexEntry {
    fn id(&self) -> &[u8] {
        &self.oid[..usize::from(self.hash)]
    }
}

/// Whether `rel` (a path in a worktree, as git stores it) is on the persistence surface. Most
/// paths of a large index are not, and are told apart cheaply first: a surface path has a
/// component the tree walk looks at ([`super::watched`], the walk's own filter: a dot-name, a
/// tool file's name or an entry's first name), and `classify` runs only on those.
fn on_surface(rel: &[u8]) -> Option<&'static str> {
    if !rel.split(|&b| b == b'/').any(super::watched) {
        return None;
    }
    cordon_policy::surface::classify(Path::new(OsStr::from_bytes(rel)), &|_| false).map(|h| h.why)
}

impl GitState {
    /// Reads `git_dir`'s state: `entries` are its index's (with the id length), `None` when
    /// the index exists but is no index cordon can read.
    /// The length of the repository's object ids.
    pub(super) fn hash(&self) -> usize {
        self.hash
    }

    pub(super) fn read(
        git_dir: &Path,
        files: Option<(Vec<Arc<Vec<u8>>>, usize)>,
        index_exists: bool,
    ) -> GitState {
        let index_id = std::fs::metadata(git_dir.join("index"))
            .ok()
            .map(|m| super::identity(&m));
        let hash = files.as_ref().map_or(20, |(_, h)| *h);
        let index = match files {
            Some((files, _)) => Some(files),
            None if !index_exists => Some(Vec::new()),
            None => None,
        };
        let common = common_dir(git_dir);
        GitState {
            index_id,
            index,
            hash,
            head: resolve(git_dir, &common, "HEAD"),
            stash: resolve(git_dir, &common, "refs/stash"),
            replace: replace_refs(&common),
        }
    }

    /// The surface paths the run put into the index, HEAD's commit or `refs/stash` (relative
    /// to the worktree), each with where it is and why it matters; and what could not be
    /// checked, with why.
    pub(super) fn changes_since(&self, git_dir: &Path, before: &GitState) -> (Found, Vec<String>) {
        let mut found: Found = BTreeMap::new();
        let mut unchecked = Vec::new();
        if self.replace != before.replace {
            unchecked.push(
                "its replace refs (refs/replace/) changed: git reads objects through them, cordon does not follow them; check `git replace -l`".into(),
            );
        }
        if self.index_id == before.index_id
            && self.head == before.head
            && self.stash == before.stash
        {
            return (found, unchecked);
        }
        // What the index held before the run is the operator's (committed or staged by them):
        // the same entry later in the index, HEAD or the stash is not the run's.
        let entries = |s: &GitState| -> Option<Vec<super::IndexEntry>> {
            let mut all = Vec::new();
            for f in s.index.as_ref()? {
                all.extend(super::index_entries(f)?.0);
            }
            Some(all)
        };
        let before_entries = entries(before).unwrap_or_default();
        let was: HashMap<&[u8], (u32, &[u8])> = before_entries
            .iter()
            .map(|e| (e.name.as_slice(), (e.mode, e.id())))
            .collect();
        let known = |path: &[u8], e: &Entry| was.get(path) == Some(&(e.0, e.1.as_slice()));
        if self.index_id != before.index_id {
            match entries(self) {
                None => unchecked.push(format!(
                    "{} is no index cordon can read",
                    git_dir.join("index").display()
                )),
                Some(now) => {
                    for e in &now {
                        if e.mode != GITLINK
                            && was.get(e.name.as_slice()) != Some(&(e.mode, e.id()))
                            && on_surface(&e.name).is_some()
                        {
                            found
                                .entry(e.name.clone())
                                .or_default()
                                .push(("the index", (e.mode, e.id().to_vec())));
                        }
                    }
                }
            }
        }
        let common = common_dir(git_dir);
        let mut odb = Odb::new(common.join("objects"), self.hash);
        if self.head != before.head {
            match &self.head {
                Err(why) => unchecked.push(format!("HEAD: {why}")),
                Ok(None) => {}
                Ok(Some(commit)) => {
                    let old = before
                        .head
                        .as_ref()
                        .ok()
                        .cloned()
                        .flatten()
                        .and_then(|c| odb.commit(&c).ok())
                        .map(|c| c.0);
                    let res = odb
                        .commit(commit)
                        .and_then(|(tree, _)| odb.changed(&tree, old.as_deref(), b""));
                    match res {
                        Ok(paths) => {
                            for (path, e) in paths {
                                if !known(&path, &e) {
                                    found.entry(path).or_default().push(("HEAD's commit", e));
                                }
                            }
                        }
                        Err(why) => unchecked.push(format!("HEAD's commit: {why}")),
                    }
                }
            }
        }
        if self.stash != before.stash {
            match &self.stash {
                Err(why) => unchecked.push(format!("refs/stash: {why}")),
                Ok(None) => {}
                Ok(Some(commit)) => {
                    // `git stash pop` applies the stash's worktree tree and its index tree (the
                    // second parent) against its base (the first), and adds the untracked
                    // files of the third parent whole.
                    let res = (|| {
                        let (tree, parents) = odb.commit(commit)?;
                        let base = match parents.first() {
                            Some(p) => Some(odb.commit(p)?.0),
                            None => None,
                        };
                        let mut all = odb.changed(&tree, base.as_deref(), b"")?;
                        if let Some(p) = parents.get(1) {
                            let t = odb.commit(p)?.0;
                            all.extend(odb.changed(&t, base.as_deref(), b"")?);
                        }
                        for p in parents.iter().skip(2) {
                            let t = odb.commit(p)?.0;
                            all.extend(odb.changed(&t, None, b"")?);
                        }
                        Ok::<_, String>(all)
                    })();
                    match res {
                        Ok(paths) => {
                            for (path, e) in paths {
                                if !known(&path, &e) {
                                    found.entry(path).or_default().push(("refs/stash", e));
                                }
                            }
                        }
                        Err(why) => unchecked.push(format!("refs/stash: {why}")),
                    }
                }
            }
        }
        (found, unchecked)
    }
}

/// Where a git directory's refs and objects are: its `commondir` (a linked worktree's), or
/// itself.
fn common_dir(git_dir: &Path) -> PathBuf {
    match cordon_fs::safe::read_followed(&git_dir.join("commondir"), 4096) {
        Ok(Some(text)) => {
            let rel = Path::new(OsStr::from_bytes(text.trim_ascii_end()));
            git_dir.join(rel)
        }
        _ => git_dir.to_path_buf(),
    }
}

/// The object id `name` (`HEAD` or a full ref name) points at, following symbolic refs, from
/// loose ref files or `packed-refs`.
fn resolve(git_dir: &Path, common: &Path, name: &str) -> Ref {
    let reftable = common.join("reftable");
    if reftable.is_dir() {
        // Not read here: the tables' list is what changes when a ref does.
        let list = cordon_fs::safe::read_followed(&reftable.join("tables.list"), 1 << 20)
            .ok()
            .flatten()
            .unwrap_or_default();
        return Err(format!(
            "a reftable repository, whose refs cordon does not read (tables {})",
            String::from_utf8_lossy(&list).trim()
        ));
    }
    let mut name = name.to_string();
    for _ in 0..8 {
        // HEAD and the per-worktree refs are the worktree's own; the rest are shared.
        let dir = if name == "HEAD" { git_dir } else { common };
        let text = match cordon_fs::safe::read_followed(&dir.join(&name), 4096) {
            Ok(Some(t)) => Some(t),
            Ok(None) => None,
            Err(e) => return Err(format!("{name}: {e}")),
        };
        let Some(text) = text else {
            return packed_ref(common, &name);
        };
        let text = text.trim_ascii();
        if let Some(to) = text.strip_prefix(b"ref: ") {
            name = String::from_utf8_lossy(to.trim_ascii()).into_owned();
            continue;
        }
        return hex::decode(text)
            .map(Some)
            .map_err(|_| format!("{name} holds no object id"));
    }
    Err(format!("{name}: symbolic refs nest too deep"))
}

/// The replace refs: loose ones (`refs/replace/ID`, what each holds) and packed ones; when
/// there are none, one failed `open` of the directory and the packed refs' lines.
fn replace_refs(common: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(common.join("refs/replace")) {
        for e in rd.flatten() {
            let held = cordon_fs::safe::read_followed(&e.path(), 4096)
                .map(Option::unwrap_or_default)
                .unwrap_or_else(|e| e.to_string().into_bytes());
            out.push((e.file_name().as_bytes().to_vec(), held));
        }
    }
    if let Ok(Some(text)) = cordon_fs::safe::read_followed(&common.join("packed-refs"), 256 << 20) {
        for line in text.split(|&b| b == b'\n') {
            if let Some((id, n)) = line.split_once_byte(b' ') {
                if n.starts_with(b"refs/replace/") {
                    out.push((n.to_vec(), id.to_vec()));
                }
            }
        }
    }
    out.sort();
    out
}

fn packed_ref(common: &Path, name: &str) -> Ref {
    let text = match cordon_fs::safe::read_followed(&common.join("packed-refs"), 256 << 20) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("packed-refs: {e}")),
    };
    for line in text.split(|&b| b == b'\n') {
        if let Some((id, n)) = line.split_once_byte(b' ') {
            if n == name.as_bytes() {
                return hex::decode(id)
                    .map(Some)
                    .map_err(|_| format!("packed-refs: {name} holds no object id"));
            }
        }
    }
    Ok(None)
}

trait SplitOnce {
    fn split_once_byte(&self, b: u8) -> Option<(&[u8], &[u8])>;
}

impl SplitOnce for [u8] {
    fn split_once_byte(&self, b: u8) -> Option<(&[u8], &[u8])> {
        let i = self.iter().position(|&c| c == b)?;
        Some((&self[..i], &self[i + 1..]))
    }
}

/// A pack: its index (read whole) and its file.
struct Pack {
    idx: Vec<u8>,
    pack: File,
    count: usize,
}

/// Git's object database, read-only: loose objects and packs (`objects/pack/*.idx`, version 2).
struct Odb {
    dir: PathBuf,
    hash: usize,
    packs: Option<Vec<Pack>>,
    read: usize,
}

impl Odb {
    fn new(dir: PathBuf, hash: usize) -> Odb {
        Odb {
            dir,
            hash,
            packs: None,
            read: 0,
        }
    }

    /// A commit's tree and parents.
    fn commit(&mut self, id: &[u8]) -> Result<(Vec<u8>, Vec<Vec<u8>>), String> {
        let (kind, body) = self.object(id, 0)?;
        if kind != 1 {
            return Err(format!("{} is not a commit", hex::encode(id)));
        }
        let mut tree = None;
        let mut parents = Vec::new();
        for line in body.split(|&b| b == b'\n') {
            if line.is_empty() {
                break;
            }
            if let Some(t) = line.strip_prefix(b"tree ") {
                tree = hex::decode(t).ok();
            } else if let Some(p) = line.strip_prefix(b"parent ") {
                parents.push(hex::decode(p).map_err(|_| "a commit's parent is no id")?);
            }
        }
        Ok((tree.ok_or("a commit without a tree")?, parents))
    }

    /// A tree's entries: name, mode, id.
    fn tree(&mut self, id: &[u8]) -> Result<Vec<(Vec<u8>, Entry)>, String> {
        let (kind, body) = self.object(id, 0)?;
        if kind != 2 {
            return Err(format!("{} is not a tree", hex::encode(id)));
        }
        let bad = || format!("tree {} does not parse", hex::encode(id));
        let mut out = Vec::new();
        let mut at = 0;
        while at < body.len() {
            let sp = at + body[at..].iter().position(|&b| b == b' ').ok_or_else(bad)?;
            let mode = std::str::from_utf8(&body[at..sp])
                .ok()
                .and_then(|m| u32::from_str_radix(m, 8).ok())
                .ok_or_else(bad)?;
            let nul = sp + body[sp..].iter().position(|&b| b == 0).ok_or_else(bad)?;
            let oid = body.get(nul + 1..nul + 1 + self.hash).ok_or_else(bad)?;
            out.push((body[sp + 1..nul].to_vec(), (mode, oid.to_vec())));
            at = nul + 1 + self.hash;
        }
        Ok(out)
    }

    /// The surface paths (below `prefix`) whose entry in tree `new` is not the one in tree
    /// `old`; subtrees with the same id are skipped.
    fn changed(
        &mut self,
        new: &[u8],
        old: Option<&[u8]>,
        prefix: &[u8],
    ) -> Result<Vec<(Vec<u8>, Entry)>, String> {
        let mut out = Vec::new();
        let now = self.tree(new)?;
        let was: BTreeMap<Vec<u8>, Entry> = match old {
            // An earlier tree cordon cannot read: everything counts as new.
            Some(o) => self
                .tree(o)
                .map(|t| t.into_iter().collect())
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        for (name, e) in now {
            let mut path = prefix.to_vec();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(&name);
            let before = was.get(&name);
            if before == Some(&e) || e.0 == GITLINK {
                continue;
            }
            if e.0 == TREE {
                let old_sub = before.filter(|b| b.0 == TREE).map(|b| b.1.as_slice());
                out.extend(self.changed(&e.1, old_sub, &path)?);
            } else if on_surface(&path).is_some() {
                out.push((path, e));
            }
        }
        Ok(out)
    }

    /// An object's type (1 commit, 2 tree, 3 blob, 4 tag) and content.
    fn object(&mut self, id: &[u8], depth: usize) -> Result<(u8, Vec<u8>), String> {
        self.read += 1;
        if self.read > MAX_OBJECTS || depth > MAX_DELTA_DEPTH {
            return Err("too many objects to read".into());
        }
        let hex = hex::encode(id);
        let loose = self.dir.join(&hex[..2]).join(&hex[2..]);
        match cordon_fs::safe::read_followed(&loose, MAX_OBJECT) {
            Ok(Some(raw)) => return loose_object(&raw).ok_or(format!("object {hex} is corrupt")),
            Ok(None) => {}
            Err(e) => return Err(format!("object {hex}: {e}")),
        }
        let hash = self.hash;
        let packs = self.packs()?;
        for (i, p) in packs.iter().enumerate() {
            if let Some(off) = p.find(id, hash) {
                return self.packed(i, off, depth);
            }
        }
        Err(format!("object {hex} is in no pack cordon can read"))
    }

    fn packs(&mut self) -> Result<&Vec<Pack>, String> {
        if self.packs.is_none() {
            let dir = self.dir.join("pack");
            let mut packs = Vec::new();
            if let Ok(rd) = std::fs::read_dir(&dir) {
                for e in rd.flatten() {
                    let name = e.file_name();
                    let Some(stem) = name.as_bytes().strip_suffix(b".idx") else {
                        continue;
                    };
                    let idx = cordon_fs::safe::read_followed(&e.path(), MAX_PACK_INDEX)
                        .map_err(|e| e.to_string())?
                        .unwrap_or_default();
                    let mut pack_name = stem.to_vec();
                    pack_name.extend_from_slice(b".pack");
                    let pack = std::fs::OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
                        .open(dir.join(OsStr::from_bytes(&pack_name)))
                        .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(&pack_name)))?;
                    if !pack.metadata().is_ok_and(|m| m.is_file()) {
                        return Err("a pack that is not a regular file".into());
                    }
                    if idx.len() < 8 + 1024 || idx[..8] != *b"\xfftOc\0\0\0\x02" {
                        return Err(format!(
                            "{}: no pack index (version 2) cordon can read",
                            e.path().display()
                        ));
                    }
                    let count = u32::from_be_bytes(idx[8 + 1020..8 + 1024].try_into().unwrap());
                    packs.push(Pack {
                        idx,
                        pack,
                        count: count as usize,
                    });
                }
            }
            self.packs = Some(packs);
        }
        Ok(self.packs.as_ref().unwrap())
    }

    /// The object at `off` in pack `i`, its deltas applied.
    fn packed(&mut self, i: usize, off: u64, depth: usize) -> Result<(u8, Vec<u8>), String> {
        let bad = || format!("a pack entry at {off} is corrupt");
        let mut head = [0u8; 64];
        let got = {
            let p = &self.packs.as_ref().unwrap()[i];
            p.pack.read_at(&mut head, off).map_err(|e| e.to_string())?
        };
        let head = &head[..got];
        let mut at = 0;
        let mut c = *head.first().ok_or_else(bad)?;
        let kind = (c >> 4) & 7;
        let mut size = u64::from(c & 15);
        let mut shift = 4;
        while c & 0x80 != 0 {
            at += 1;
            c = *head.get(at).ok_or_else(bad)?;
            size |= u64::from(c & 0x7f).checked_shl(shift).ok_or_else(bad)?;
            shift += 7;
        }
        at += 1;
        if size > MAX_OBJECT {
            return Err(format!("a packed object of {size} bytes"));
        }
        match kind {
            1..=4 => {
                let data = self.inflate(i, off + at as u64, size)?;
                Ok((kind, data))
            }
            6 => {
                let mut c = *head.get(at).ok_or_else(bad)?;
                at += 1;
                let mut back = u64::from(c & 0x7f);
                while c & 0x80 != 0 {
                    c = *head.get(at).ok_or_else(bad)?;
                    at += 1;
                    back = back
                        .checked_add(1)
                        .and_then(|b| b.checked_shl(7))
                        .ok_or_else(bad)?
                        | u64::from(c & 0x7f);
                }
                let base_off = off.checked_sub(back).filter(|&b| b < off).ok_or_else(bad)?;
                let delta = self.inflate(i, off + at as u64, size)?;
                self.read += 1;
                if depth > MAX_DELTA_DEPTH {
                    return Err("a delta chain too long".into());
                }
                let (k, base) = self.packed(i, base_off, depth + 1)?;
                Ok((k, apply_delta(&base, &delta).ok_or_else(bad)?))
            }
            7 => {
                let base_id = head.get(at..at + self.hash).ok_or_else(bad)?.to_vec();
                at += self.hash;
                let delta = self.inflate(i, off + at as u64, size)?;
                let (k, base) = self.object(&base_id, depth + 1)?;
                Ok((k, apply_delta(&base, &delta).ok_or_else(bad)?))
            }
            _ => Err(bad()),
        }
    }

    fn inflate(&self, i: usize, off: u64, size: u64) -> Result<Vec<u8>, String> {
        struct At<'a>(&'a File, u64);
        impl Read for At<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.read_at(buf, self.1)?;
                self.1 += n as u64;
                Ok(n)
            }
        }
        let p = &self.packs.as_ref().unwrap()[i];
        let mut out = Vec::with_capacity(size as usize);
        flate2::bufread::ZlibDecoder::new(std::io::BufReader::with_capacity(
            8192,
            At(&p.pack, off),
        ))
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("a pack entry at {off}: {e}"))?;
        if out.len() as u64 != size {
            return Err(format!("a pack entry at {off} has the wrong size"));
        }
        Ok(out)
    }
}

impl Pack {
    /// The offset of object `id` in the pack, from its index (version 2: fan-out, sorted
    /// ids, CRCs, 4-byte offsets, 8-byte offsets for the large ones).
    fn find(&self, id: &[u8], hash: usize) -> Option<u64> {
        let idx = &self.idx;
        let fan = |b: usize| -> Option<usize> {
            let at = 8 + b * 4;
            Some(u32::from_be_bytes(idx.get(at..at + 4)?.try_into().ok()?) as usize)
        };
        let first = *id.first()? as usize;
        let (mut lo, mut hi) = (if first == 0 { 0 } else { fan(first - 1)? }, fan(first)?);
        let ids = 8 + 1024;
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = ids + mid * hash;
            let cand = idx.get(at..at + hash)?;
            match cand.cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let offs = ids + self.count * (hash + 4);
                    let o = u32::from_be_bytes(
                        idx.get(offs + mid * 4..offs + mid * 4 + 4)?
                            .try_into()
                            .ok()?,
                    );
                    if o & 0x8000_0000 == 0 {
                        return Some(u64::from(o));
                    }
                    let large = offs + self.count * 4 + (o & 0x7fff_ffff) as usize * 8;
                    return Some(u64::from_be_bytes(
                        idx.get(large..large + 8)?.try_into().ok()?,
                    ));
                }
            }
        }
        None
    }
}

/// A loose object: zlib of "TYPE SIZE\0CONTENT".
fn loose_object(raw: &[u8]) -> Option<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    flate2::bufread::ZlibDecoder::new(raw)
        .take(MAX_OBJECT + 64)
        .read_to_end(&mut out)
        .ok()?;
    let nul = out.iter().position(|&b| b == 0)?;
    let (kind, size) = std::str::from_utf8(&out[..nul]).ok()?.split_once(' ')?;
    let kind = match kind {
        "commit" => 1,
        "tree" => 2,
        "blob" => 3,
        "tag" => 4,
        _ => return None,
    };
    let size: usize = size.parse().ok()?;
    (out.len() - nul - 1 == size).then_some(())?;
    out.drain(..=nul);
    Some((kind, out))
}

/// Git's delta: source and target sizes (7-bit little-endian varints), then copy (from the
/// base) and insert (literal) instructions.
fn apply_delta(base: &[u8], d: &[u8]) -> Option<Vec<u8>> {
    fn size(d: &[u8], at: &mut usize) -> Option<usize> {
        let mut v = 0usize;
        let mut shift = 0;
        loop {
            let c = *d.get(*at)?;
            *at += 1;
            v |= usize::from(c & 0x7f).checked_shl(shift)?;
            shift += 7;
            if c & 0x80 == 0 {
                return Some(v);
            }
        }
    }
    let mut at = 0;
    if size(d, &mut at)? != base.len() {
        return None;
    }
    let target = size(d, &mut at)?;
    if target as u64 > MAX_OBJECT {
        return None;
    }
    let mut out = Vec::with_capacity(target);
    while at < d.len() {
        let c = d[at];
        at += 1;
        if c & 0x80 != 0 {
            let mut off = 0usize;
            for k in 0..4 {
                if c & (1 << k) != 0 {
                    off |= usize::from(*d.get(at)?) << (8 * k);
                    at += 1;
                }
            }
            let mut len = 0usize;
            for k in 0..3 {
                if c & (0x10 << k) != 0 {
                    len |= usize::from(*d.get(at)?) << (8 * k);
                    at += 1;
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            out.extend_from_slice(base.get(off..off.checked_add(len)?)?);
        } else if c != 0 {
            let n = usize::from(c);
            out.extend_from_slice(d.get(at..at + n)?);
            at += n;
        } else {
            return None;
        }
    }
    (out.len() == target).then_some(out)
}
