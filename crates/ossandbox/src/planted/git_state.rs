//! What a run put into git's own state without leaving it in the worktree: a surface file
//! (`.claude/settings.json` with a hook, `.envrc`, `.husky/pre-commit`) staged into the index
//! (`git update-index --add --cacheinfo`, a skip-worktree entry, a sparse index's directory),
//! or in a commit that a name the operator's git takes points at: HEAD, a branch, a tag, a
//! remote-tracking ref, a `packed-refs` line, `ORIG_HEAD`, `FETCH_HEAD` and the other
//! pseudo-refs ([`PSEUDO_REFS`]), a reflog entry (`HEAD@{1}`), the stash. The tree scan sees
//! no such file after the run, yet the operator's own `git checkout .`, `git checkout
//! BRANCH`, `git merge`, `git reset --hard ORIG_HEAD`, `git stash pop` or `git
//! sparse-checkout disable` writes it out later, outside any sandbox, for the next tool to run.
//! The same for a gitlink (in an index or a commit) moved to a submodule commit that holds one
//! (`git submodule update` checks it out; compared in the submodule's own objects), and for
//! the git directories without a worktree in a root: a bare repository (`git clone`, `git
//! worktree add` from it) and a submodule's `modules/NAME` (its findings name the file in it).
//!
//! Git is never run for this (the repository's configuration may be the run's): the index is
//! read by [`super::visit_index`], refs, reflogs and objects (loose and packed, deltas
//! applied) here. Each commit a name was created or moved to is compared with what the name
//! held before (a new name: with HEAD then); trees only where they differ (a subtree with the
//! same id is skipped). A run that leaves git alone costs a `stat` of the index and of each
//! ref, reflog and directory holding them: what did not change is taken from the earlier
//! snapshot ([`Reads`]).
//!
//! Fail closed: what cannot be read (an index that is no index, a missing or corrupt object, a
//! ref that holds no id, a reftable whose tables changed) or lies past a bound is reported as
//! not checked, never passed.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Objects larger than this (inflated) are not read: a tree or commit never is.
const MAX_OBJECT: u64 = 64 * 1024 * 1024;
/// Trees kept parsed per comparison, at most (past it they are read again when needed).
const MAX_CACHED_TREES: usize = 1 << 16;
/// Bytes of delta bases kept per comparison, at most ([`Odb::delta_base`]; git's own
/// `core.deltaBaseCacheLimit` is 96 MiB).
const MAX_BASE_BYTES: usize = 32 << 20;
/// A pack index larger than this is not read.
const MAX_PACK_INDEX: u64 = 1 << 30;
/// Objects read per comparison, at most (a tree walk of a huge repository whose every tree
/// changed, or a run that names millions of new commits, says so rather than running on): the
/// cost budget of the whole comparison of one git directory. Each tree is read once (a long
/// rebase's commits share all but a few trees with each other and the base).
const MAX_OBJECTS: usize = 1_000_000;
/// Time the comparison of every git directory of one scan may take, at most (a run that names
/// 100,000 commits, each with trees of its own, must not make the operator wait on its scan):
/// past it, what is left is "not checked", the way the object budget's rest is.
const MAX_COMPARE: Duration = Duration::from_secs(5);

/// The bounds of one scan's comparisons: [`MAX_OBJECTS`] per git directory and [`MAX_COMPARE`]
/// for all of them. `CORDON_GIT_SCAN_OBJECTS` and `CORDON_GIT_SCAN_MS` lower them (tests make
/// them reachable with a small repository); they never raise them, so all a value set there
/// can do is make more of git's state "not checked".
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    objects: usize,
    time: Duration,
    until: Instant,
}

impl Bounds {
    /// The bounds of a scan that begins now.
    pub(super) fn now() -> Bounds {
        let lowered = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        let objects =
            lowered("CORDON_GIT_SCAN_OBJECTS").map_or(MAX_OBJECTS, |n| MAX_OBJECTS.min(n as usize));
        let time = lowered("CORDON_GIT_SCAN_MS")
            .map_or(MAX_COMPARE, |ms| MAX_COMPARE.min(Duration::from_millis(ms)));
        Bounds {
            objects,
            time,
            until: Instant::now() + time,
        }
    }

    /// What they are, for a message.
    fn say(&self) -> String {
        format!(
            "{} objects read per git directory, {} ms for the scan",
            self.objects,
            self.time.as_millis()
        )
    }
}
/// Submodules nested deeper than this are not followed (git sets no limit; a path does).
const MAX_SUBMODULE_DEPTH: usize = 16;
/// Delta chains longer than this are not followed (git's own default depth is 50; each link
/// is a frame of a recursion on the scanning thread's stack).
const MAX_DELTA_DEPTH: usize = 1_000;

const TREE: u32 = 0o040000;
const GITLINK: u32 = 0o160000;

/// A path's entry: mode and object id.
type Entry = (u32, Vec<u8>);

/// A commit's tree and parents.
type Commit = (Vec<u8>, Vec<Vec<u8>>);

/// A tree's entries as read: name, mode and id.
type Tree = Arc<Vec<(Vec<u8>, Entry)>>;

/// A gitlink found moved: its path, the commit it names now, and before (none: added).
type MovedLink = (Vec<u8>, Vec<u8>, Option<Vec<u8>>);

/// What a moved gitlink checks out: the surface paths found (the nested submodules' too),
/// and the nested gitlinks that could not be checked, with why.
type LinkChanges = (Vec<(Vec<u8>, Entry)>, Vec<String>);

/// Surface paths found in git's state, each with where (the index, a ref, a reflog) and the
/// entry there.
pub(super) type Found = BTreeMap<Vec<u8>, Vec<(String, Entry)>>;

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

/// What a name resolves to: the object ids it holds (one for a ref; one per line for
/// `FETCH_HEAD` and `MERGE_HEAD`; none when unborn or absent), or why it could not be read
/// (the text changes when what it was read from does).
type Ref = Result<Vec<Vec<u8>>, String>;

/// A reflog as read: its length and the SHA-1 of its bytes, so that an append (git's only
/// way of writing one) is told from a rewrite; or why it could not be read.
type Log = Result<(u64, Vec<u8>), String>;

/// The files of a git directory, besides the refs, that name a commit the operator's git
/// checks out, resets to or merges later: `git reset --hard ORIG_HEAD`, `git merge
/// FETCH_HEAD`, `git merge --continue` (MERGE_HEAD), `git rebase --abort` (the rebase's
/// `orig-head`), `git cherry-pick --abort` (`sequencer/head`), `git bisect reset`.
const PSEUDO_REFS: &[&str] = &[
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "AUTO_MERGE",
    "BISECT_HEAD",
    "BISECT_EXPECTED_REV",
    "rebase-merge/orig-head",
    "rebase-merge/onto",
    "rebase-apply/orig-head",
    "rebase-apply/onto",
    "sequencer/head",
    "sequencer/abort-safety",
];

/// Loose refs and reflogs listed per git directory, at most: past it the refs are "not
/// checked" (a run that fills `refs/` with names does not make the scan run on).
const MAX_REFS: usize = 100_000;
/// A reflog larger than this is not read ("not checked" when it changed).
const MAX_LOG: u64 = 64 << 20;

/// One git directory's state, as far as the operator's git could write it out later.
#[derive(Debug, Clone)]
pub(super) struct GitState {
    /// The worktree git writes into for this git directory (its parent for a `.git`; what a
    /// linked worktree's `gitdir` or a submodule's `.git` file says, as it was before the run).
    worktree: PathBuf,
    /// The index file's identity (dev, ino, size, mtime, ctime): unchanged means not rewritten
    /// (git writes a new index and renames it in; ctime cannot be set back).
    index_id: Option<super::Id>,
    /// The index's entries (all of them: which are on the surface is worked out only for
    /// those that changed, when the index did); `None` when it exists and cannot be read.
    index: Option<Vec<Arc<Vec<u8>>>>,
    /// In place of `index`, the entries a dead run kept of it ([`GitState::kept`]): only
    /// those the comparison looks at.
    kept_entries: Option<BTreeMap<Vec<u8>, Entry>>,
    /// The object id length (20 for SHA-1, 32 for SHA-256).
    hash: usize,
    /// Every name the operator's git resolves to a commit here: the pseudo-refs
    /// ([`PSEUDO_REFS`]), and for a repository's own git directory (not a linked worktree's,
    /// whose refs are its repository's) every loose and packed ref, the replace refs too
    /// (through which git reads objects, and which cordon does not follow).
    refs: BTreeMap<String, Ref>,
    /// Every reflog (`logs/HEAD`, `logs/refs/...`): `HEAD@{1}`, `@{-1}` (`git checkout -`),
    /// `stash@{1}` name the commits in it.
    logs: BTreeMap<String, Log>,
    /// What was read for `refs` and `logs`, for a later snapshot to take what did not change.
    reads: Reads,
    /// How many of `reads` were read, not taken from an earlier snapshot.
    fresh: usize,
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

/// A commit the run made a name point at (a ref moved or created, a reflog entry appended),
/// to be compared with what the name held before.
struct Tip {
    /// Where the operator's git finds it: "NAME's commit" (a ref), or "the reflog of NAME".
    place: String,
    id: Vec<u8>,
    /// What it is compared with: what the name held before the run, else HEAD then (what a
    /// `git checkout` of it would change).
    base: Option<Vec<u8>>,
    /// A stash (`refs/stash` or its reflog): applied against its own base by `git stash pop`.
    stash: bool,
}

impl GitState {
    /// The length of the repository's object ids.
    pub(super) fn hash(&self) -> usize {
        self.hash
    }

    /// Whether the index was written at or after `since` (by its ctime, which a run cannot
    /// set back).
    pub(super) fn index_changed_since(&self, since: super::Began) -> bool {
        self.index_id
            .is_some_and(|i| super::stamped_at_or_after((i.6, i.7), since))
    }

    /// Whether a ref or reflog file (what [`read_refs`] read: loose refs, `packed-refs`, the
    /// pseudo-refs, the reflogs) was written at or after `since`, by ctime: the dead-run
    /// scan's check when the run's git state was not kept. Directories are passed over (git
    /// and cordon's own quarantine create and rename files in the git directory in ordinary
    /// work); a ref or reflog created or rewritten is a file of a new ctime itself, and one
    /// removed writes nothing out.
    pub(super) fn refs_changed_since(&self, since: super::Began) -> bool {
        self.reads.iter().any(|(path, (st, _))| {
            super::stamped_at_or_after((st.5, st.6), since)
                && !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        })
    }

    /// The worktree git writes this git directory's files into.
    pub(super) fn worktree(&self) -> &Path {
        &self.worktree
    }

    /// A state of which only what was read is known (kept listings, `listings.rs`): an
    /// earlier snapshot's, never compared with.
    pub(super) fn from_reads(reads: Reads) -> GitState {
        GitState {
            worktree: PathBuf::new(),
            index_id: None,
            index: None,
            kept_entries: None,
            hash: 20,
            refs: BTreeMap::new(),
            logs: BTreeMap::new(),
            reads,
            fresh: 0,
        }
    }

    /// How many refs, reflogs and their directories were read (not taken from an earlier
    /// snapshot): what is on file for the next run is stale when any was.
    pub(super) fn fresh(&self) -> usize {
        self.fresh
    }

    /// What was read for its refs and reflogs ([`Reads`]).
    pub(super) fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Reads `git_dir`'s state (its worktree at `worktree`): `files` are its index's bytes
    /// (with the id length), `None` when the index exists but is no index cordon can read.
    /// Its refs and reflogs unchanged since `earlier` (an earlier snapshot's reads, and when
    /// it began) are taken from there.
    pub(super) fn read(
        git_dir: &Path,
        worktree: &Path,
        files: Option<(Vec<Arc<Vec<u8>>>, usize)>,
        index_exists: bool,
        earlier: Option<(&Reads, std::time::SystemTime)>,
    ) -> GitState {
        let index_id = std::fs::metadata(git_dir.join("index"))
            .ok()
            .map(|m| super::identity(&m));
        let mut reader = Reader {
            earlier,
            now: HashMap::new(),
            fresh: 0,
        };
        let (refs, logs) = read_refs(git_dir, &mut reader);
        // The index's id length, else (no index) HEAD's.
        let head_len = refs
            .get("HEAD")
            .and_then(|r| r.as_ref().ok())
            .and_then(|ids| ids.first())
            .map(Vec::len);
        let hash = match &files {
            Some((f, h)) if !f.is_empty() => *h,
            _ => head_len.filter(|&l| l == 32).unwrap_or(20),
        };
        let index = match files {
            Some((files, _)) => Some(files),
            None if !index_exists => Some(Vec::new()),
            None => None,
        };
        GitState {
            worktree: worktree.to_path_buf(),
            index_id,
            index,
            kept_entries: None,
            hash,
            refs,
            logs,
            reads: reader.now,
            fresh: reader.fresh,
        }
    }

    /// The index entries the comparison looks at: surface paths, a sparse index's
    /// directories and gitlinks (name → mode and id); `None` when the index cannot be read.
    fn relevant_entries(&self) -> Option<BTreeMap<Vec<u8>, Entry>> {
        if let Some(kept) = &self.kept_entries {
            return Some(kept.clone());
        }
        let mut out = BTreeMap::new();
        for f in self.index.as_ref()? {
            // Filtered as read: most entries of a large index are not kept at all.
            let (kept, _) = super::visit_index(f, |out, name, mode, id| {
                if mode == GITLINK || mode == TREE || on_surface(name).is_some() {
                    out.push((name.to_vec(), (mode, id.to_vec())));
                }
            })?;
            out.extend(kept);
        }
        Some(out)
    }

    /// The surface paths the run put into git's state (relative to the worktree): into the
    /// index (a sparse index's directory entries included), or into a commit a ref, a
    /// pseudo-ref or a reflog entry names that it created or moved; each with where it is.
    /// And what could not be checked, with why.
    /// Within `bounds`: past them, what is left is not checked, said once.
    pub(super) fn changes_since(
        &self,
        git_dir: &Path,
        before: &GitState,
        bounds: Bounds,
    ) -> (Found, Vec<String>) {
        let mut found: Found = BTreeMap::new();
        let mut unchecked = Vec::new();
        if self.index_id == before.index_id && self.refs == before.refs && self.logs == before.logs
        {
            return (found, unchecked);
        }
        // What the index held before the run is the operator's (committed or staged by them):
        // the same entry later in the index or a commit is not the run's.
        let was = before.relevant_entries().unwrap_or_default();
        let known = |path: &[u8], e: &Entry| was.get(path) == Some(e);
        let common = common_dir(git_dir);
        let mut odb = Odb::new(common.join("objects"), self.hash, bounds);
        let add = |found: &mut Found, place: &str, paths: Vec<(Vec<u8>, Entry)>| {
            for (path, e) in paths {
                if !known(&path, &e) {
                    found.entry(path).or_default().push((place.to_string(), e));
                }
            }
        };
        // The gitlinks the last comparison found moved (in the index or a commit `places`
        // name): what `git submodule update` then checks out in each submodule.
        let gitlinks =
            |odb: &mut Odb, found: &mut Found, unchecked: &mut Vec<String>, places: &[String]| {
                for link in std::mem::take(&mut odb.links) {
                    let p = String::from_utf8_lossy(&link.0).into_owned();
                    match self.gitlink_changed(git_dir, &common, &link, bounds) {
                        Ok((paths, nested)) => {
                            for place in places {
                                let at = format!("the gitlink {p} in {place}");
                                add(found, &at, paths.clone());
                            }
                            for why in nested {
                                unchecked.push(format!(
                                    "the gitlink {p} in {}: {why}",
                                    places.join(", ")
                                ));
                            }
                        }
                        Err(why) => unchecked
                            .push(format!("the gitlink {p} in {}: {why}", places.join(", "))),
                    }
                }
            };
        if self.index_id != before.index_id {
            match self.relevant_entries() {
                None => unchecked.push(format!(
                    "{} is no index cordon can read",
                    git_dir.join("index").display()
                )),
                Some(now) => {
                    for (name, e) in now {
                        if was.get(&name) == Some(&e) {
                            continue;
                        }
                        if e.0 == GITLINK {
                            let old = was.get(&name).filter(|o| o.0 == GITLINK);
                            odb.links
                                .push((name.clone(), e.1, old.map(|o| o.1.clone())));
                            continue;
                        }
                        if e.0 != TREE {
                            found
                                .entry(name)
                                .or_default()
                                .push(("the index".to_string(), e));
                            continue;
                        }
                        // A sparse index's directory entry: its tree is what `git
                        // sparse-checkout disable` (or a wider cone) writes out.
                        let dir = name.strip_suffix(b"/").unwrap_or(&name);
                        let old = was.get(&name).filter(|o| o.0 == TREE).map(|o| o.1.clone());
                        match odb.changed(&e.1, old.as_deref(), dir) {
                            Ok(paths) => add(&mut found, "the index", paths),
                            Err(why) => unchecked.push(format!(
                                "the index's sparse directory {}: {why}",
                                String::from_utf8_lossy(dir)
                            )),
                        }
                    }
                }
            }
        }
        gitlinks(
            &mut odb,
            &mut found,
            &mut unchecked,
            &["the index".to_string()],
        );
        // What a name held before the run (its first id), else what HEAD held: what the
        // operator's git compares a tip of that name with.
        let held_then = |name: &str| {
            before
                .refs
                .get(name)
                .and_then(|r| r.as_ref().ok())
                .and_then(|ids| ids.first())
                .cloned()
        };
        let head_then = held_then("HEAD");
        let base_of = |name: &str| held_then(name).or_else(|| head_then.clone());
        // A commit some name held before the run is the operator's: a name moved to it by the
        // run (a branch reset to another branch) writes out nothing the operator did not have.
        let had: std::collections::HashSet<&[u8]> = before
            .refs
            .values()
            .filter_map(|r| r.as_ref().ok())
            .flatten()
            .map(Vec::as_slice)
            .collect();
        let mut tips: Vec<Tip> = Vec::new();
        // The ids a name (or its reflog) newly holds that no name held before the run.
        let mut new_tips = |place: String, name: &str, ids: Vec<Vec<u8>>| {
            let base = base_of(name);
            for id in ids {
                if !had.contains(id.as_slice()) {
                    tips.push(Tip {
                        place: place.clone(),
                        id,
                        base: base.clone(),
                        stash: name == "refs/stash",
                    });
                }
            }
        };
        let mut replaced = false;
        let names: std::collections::BTreeSet<&String> =
            self.refs.keys().chain(before.refs.keys()).collect();
        for name in names {
            let (now, then) = (self.refs.get(name), before.refs.get(name));
            if now == then {
                continue;
            }
            if name.starts_with("refs/replace/") {
                replaced = true;
                continue;
            }
            let ids = match now {
                None => continue, // removed: nothing to write out
                Some(Err(why)) => {
                    unchecked.push(format!("{name}: {why}"));
                    continue;
                }
                Some(Ok(ids)) => ids,
            };
            new_tips(format!("{name}'s commit"), name, ids.clone());
        }
        if replaced {
            unchecked.push(
                "its replace refs (refs/replace/) changed: git reads objects through them, cordon does not follow them; check `git replace -l`".into(),
            );
        }
        for (name, now) in &self.logs {
            let then = before.logs.get(name);
            if then == Some(now) {
                continue;
            }
            let path = log_path(git_dir, &common, name);
            let ids = match now.clone().and_then(|_| appended(&path, then)) {
                Ok(ids) => ids,
                Err(why) => {
                    unchecked.push(format!("the reflog of {name}: {why}"));
                    continue;
                }
            };
            new_tips(format!("the reflog of {name}"), name, ids);
        }
        // The same commit against the same base is compared once (a commit moves HEAD, its
        // branch and both their reflogs to it), and what it holds is reported at each place
        // that names it: the operator must undo every one of them.
        let mut groups: Vec<(Tip, Vec<String>)> = Vec::new();
        let mut group_of: HashMap<_, usize> = HashMap::new();
        for t in tips {
            match group_of.entry((t.id.clone(), t.base.clone(), t.stash)) {
                std::collections::hash_map::Entry::Occupied(g) => {
                    groups[*g.get()].1.push(t.place);
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(groups.len());
                    let place = t.place.clone();
                    groups.push((t, vec![place]));
                }
            }
        }
        // Every commit is compared, within the bounds (objects read, time); past either the
        // rest are "not checked", said once with how many were compared.
        let total = groups.len();
        for (done, (tip, places)) in groups.into_iter().enumerate() {
            if odb.spent() {
                unchecked.push(format!(
                    "the run made refs and reflogs name {total} new commits; cordon compared {done} of them within its bounds ({})",
                    bounds.say()
                ));
                break;
            }
            let res = if tip.stash {
                odb.stash_changed(&tip.id)
            } else {
                odb.tip_changed(&tip.id, tip.base.as_deref())
            };
            match res {
                Ok(paths) => {
                    for place in &places {
                        add(&mut found, place, paths.clone());
                    }
                }
                Err(why) => unchecked.push(format!("{}: {why}", places.join(", "))),
            }
            gitlinks(&mut odb, &mut found, &mut unchecked, &places);
        }
        (found, unchecked)
    }
}

impl GitState {
    /// What `git submodule update --recursive` writes for the gitlink `link` (its path, the
    /// commit it names now, before: none when added): the surface paths (below its path)
    /// whose entry in the new commit's tree is not the one in the old one's, read from the
    /// submodule's own objects, and so on down the submodules it holds whose gitlinks moved.
    /// And the nested gitlinks that could not be checked, with why. The gitlink's own commit
    /// not found is its error.
    fn gitlink_changed(
        &self,
        git_dir: &Path,
        common: &Path,
        link: &MovedLink,
        bounds: Bounds,
    ) -> Result<LinkChanges, String> {
        self.gitlink_in(git_dir, common, link, &link.0, bounds, 0)
    }

    /// [`GitState::gitlink_changed`] of `link` at `depth` (0: a gitlink of the scanned
    /// repository), `at` its path in the repository of `git_dir` (the full path less the
    /// submodules above it). The submodule's git directory is git's: `modules/AT` of the
    /// repository's git directory (git's `modules/NAME`, NAME the path unless `.gitmodules`
    /// says otherwise; a nested one is `modules/SUB/modules/AT`), of its common one, or a
    /// `.git` directory in the worktree. A commit in none of them cannot be checked: git would
    /// fetch it, from a repository the run may have written.
    fn gitlink_in(
        &self,
        git_dir: &Path,
        common: &Path,
        link: &MovedLink,
        at: &[u8],
        bounds: Bounds,
        depth: usize,
    ) -> Result<LinkChanges, String> {
        let (path, new, old) = link;
        let plain = |p: &[u8]| {
            Path::new(OsStr::from_bytes(p))
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        // A path git checks out is plain names; an index the run wrote byte by byte may hold
        // `../..` or `/`, which must not send the scan reading another repository.
        if !plain(path) || !plain(at) {
            return Err(format!(
                "its path {} is no path git checks out",
                String::from_utf8_lossy(path)
            ));
        }
        if depth >= MAX_SUBMODULE_DEPTH {
            return Err(format!(
                "it is nested {depth} submodules deep; cordon follows {MAX_SUBMODULE_DEPTH}"
            ));
        }
        let at_os = OsStr::from_bytes(at);
        let mut dirs = vec![git_dir.join("modules").join(at_os)];
        if common != git_dir {
            dirs.push(common.join("modules").join(at_os));
        }
        let dot = self.worktree.join(OsStr::from_bytes(path)).join(".git");
        if std::fs::symlink_metadata(&dot).is_ok_and(|m| m.is_dir()) {
            dirs.push(dot);
        }
        for dir in dirs {
            let mut sub = Odb::new(dir.join("objects"), self.hash, bounds);
            let Ok(Some((tree, _))) = sub.peel(new) else {
                continue;
            };
            let old = old
                .as_deref()
                .and_then(|o| sub.peel(o).ok().flatten())
                .map(|t| t.0);
            let mut found = sub.changed(&tree, old.as_deref(), path)?;
            // The submodules this commit moved, each in its own git directory below this one.
            let mut unchecked = Vec::new();
            let sub_common = common_dir(&dir);
            for nested in std::mem::take(&mut sub.links) {
                let mut prefix = path.to_vec();
                prefix.push(b'/');
                let Some(nested_at) = nested.0.strip_prefix(prefix.as_slice()) else {
                    continue; // `changed` prefixes every path with `path/`
                };
                let p = String::from_utf8_lossy(&nested.0).into_owned();
                match self.gitlink_in(&dir, &sub_common, &nested, nested_at, bounds, depth + 1) {
                    Ok((more, deeper)) => {
                        found.extend(more);
                        unchecked.extend(deeper);
                    }
                    Err(why) => unchecked.push(format!("its gitlink {p}: {why}")),
                }
            }
            return Ok((found, unchecked));
        }
        Err(format!(
            "it names commit {}, in no submodule git directory cordon read (`git submodule update` would fetch it)",
            hex::encode(new)
        ))
    }

    /// This state as a run keeps it for its dead-run scan (beside its after-run marker, see
    /// `Snapshot::kept`): everything but the index's bytes, of which only the entries the
    /// comparison looks at are kept. Read back by [`GitState::from_kept`].
    pub(super) fn kept(&self, git_dir: &Path) -> String {
        let h = |b: &[u8]| hex::encode(b);
        let mut t = format!(
            "git {} {} {}\n",
            h(git_dir.as_os_str().as_bytes()),
            h(self.worktree.as_os_str().as_bytes()),
            self.hash
        );
        if let Some(i) = self.index_id {
            t.push_str(&format!(
                "index {} {} {} {} {} {} {} {} {}\n",
                i.0, i.1, i.2, i.3, i.4, i.5, i.6, i.7, i.8
            ));
        }
        match self.relevant_entries() {
            Some(entries) => {
                for (name, (mode, id)) in entries {
                    t.push_str(&format!("entry {} {mode:o} {}\n", h(&name), h(&id)));
                }
            }
            None => t.push_str("unreadable\n"),
        }
        for (name, r) in &self.refs {
            match r {
                Ok(ids) => {
                    t.push_str(&format!("ref {} ok", h(name.as_bytes())));
                    for id in ids {
                        t.push_str(&format!(" {}", h(id)));
                    }
                    t.push('\n');
                }
                Err(why) => t.push_str(&format!(
                    "ref {} err {}\n",
                    h(name.as_bytes()),
                    h(why.as_bytes())
                )),
            }
        }
        for (name, l) in &self.logs {
            match l {
                Ok((len, digest)) => t.push_str(&format!(
                    "log {} ok {len} {}\n",
                    h(name.as_bytes()),
                    h(digest)
                )),
                Err(why) => t.push_str(&format!(
                    "log {} err {}\n",
                    h(name.as_bytes()),
                    h(why.as_bytes())
                )),
            }
        }
        t.push_str("end\n");
        t
    }

    /// The states [`GitState::kept`] wrote, one after another, by git directory; `None` when
    /// any does not parse.
    pub(super) fn from_kept(text: &[u8]) -> Option<BTreeMap<PathBuf, GitState>> {
        let text = std::str::from_utf8(text).ok()?;
        let path = |w: &str| -> Option<PathBuf> {
            Some(PathBuf::from(std::ffi::OsString::from_vec(
                hex::decode(w).ok()?,
            )))
        };
        let string = |w: &str| -> Option<String> { String::from_utf8(hex::decode(w).ok()?).ok() };
        let mut out = BTreeMap::new();
        let mut cur: Option<(PathBuf, GitState)> = None;
        for line in text.lines() {
            let w: Vec<&str> = line.split(' ').collect();
            match (w[0], cur.as_mut()) {
                ("git", None) if w.len() == 4 => {
                    cur = Some((
                        path(w[1])?,
                        GitState {
                            worktree: path(w[2])?,
                            index_id: None,
                            index: None,
                            kept_entries: Some(BTreeMap::new()),
                            hash: w[3].parse().ok()?,
                            refs: BTreeMap::new(),
                            logs: BTreeMap::new(),
                            reads: HashMap::new(),
                            fresh: 0,
                        },
                    ));
                }
                ("index", Some((_, s))) if w.len() == 10 => {
                    s.index_id = Some((
                        w[1].parse().ok()?,
                        w[2].parse().ok()?,
                        w[3].parse().ok()?,
                        w[4].parse().ok()?,
                        w[5].parse().ok()?,
                        w[6].parse().ok()?,
                        w[7].parse().ok()?,
                        w[8].parse().ok()?,
                        w[9].parse().ok()?,
                    ));
                }
                ("entry", Some((_, s))) if w.len() == 4 => {
                    let mode = u32::from_str_radix(w[2], 8).ok()?;
                    let id = hex::decode(w[3]).ok()?;
                    s.kept_entries
                        .as_mut()?
                        .insert(hex::decode(w[1]).ok()?, (mode, id));
                }
                ("unreadable", Some((_, s))) => s.kept_entries = None,
                ("ref", Some((_, s))) if w.len() >= 3 => {
                    let r = match w[2] {
                        "ok" => Ok(w[3..]
                            .iter()
                            .map(|i| oid(i.as_bytes()).ok())
                            .collect::<Option<Vec<_>>>()?),
                        "err" => Err(string(w.get(3)?)?),
                        _ => return None,
                    };
                    s.refs.insert(string(w[1])?, r);
                }
                ("log", Some((_, s))) if w.len() >= 4 => {
                    let l = match w[2] {
                        "ok" => Ok((w[3].parse().ok()?, hex::decode(w.get(4)?).ok()?)),
                        "err" => Err(string(w[3])?),
                        _ => return None,
                    };
                    s.logs.insert(string(w[1])?, l);
                }
                ("end", Some(_)) => {
                    let (d, s) = cur.take()?;
                    out.insert(d, s);
                }
                _ => return None,
            }
        }
        cur.is_none().then_some(out)
    }
}

/// An object id written in hex (SHA-1's 40 digits or SHA-256's 64); anything else is none.
fn oid(text: impl AsRef<[u8]>) -> Result<Vec<u8>, ()> {
    let text = text.as_ref();
    if text.len() != 40 && text.len() != 64 {
        return Err(());
    }
    hex::decode(text).map_err(|_| ())
}

/// Where reflog `name` is: `HEAD`'s in the git directory, the others in the common one.
fn log_path(git_dir: &Path, common: &Path, name: &str) -> PathBuf {
    let dir = if name == "HEAD" { git_dir } else { common };
    dir.join("logs").join(name)
}

/// The commits named by the entries of the reflog at `path` that were not in it before (all
/// of them when it was rewritten, not appended to): each entry's old and new ids, and the
/// commit `git checkout -` (`@{-1}`) takes from a `checkout: moving from ID to …` message.
fn appended(path: &Path, then: Option<&Log>) -> Result<Vec<Vec<u8>>, String> {
    use sha1::Digest as _;
    let bytes = cordon_fs::safe::read_followed(path, MAX_LOG)
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let from = match then {
        Some(Ok((len, digest)))
            if bytes.len() as u64 >= *len
                && sha1::Sha1::digest(&bytes[..*len as usize]).as_slice() == digest.as_slice() =>
        {
            *len as usize
        }
        _ => 0,
    };
    let mut out = Vec::new();
    for line in bytes[from..].split(|&b| b == b'\n') {
        let (head, msg) = line.split_once_byte(b'\t').unwrap_or((line, b""));
        for w in head.split(|&b| b == b' ').take(2) {
            if let Ok(id) = oid(w) {
                if id.iter().any(|&b| b != 0) {
                    out.push(id);
                }
            }
        }
        if let Some(rest) = msg.strip_prefix(b"checkout: moving from ") {
            let from = rest.split(|&b| b == b' ').next().unwrap_or(b"");
            if let Ok(id) = oid(from) {
                out.push(id);
            }
        }
    }
    Ok(out)
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

/// The ids a ref file or pseudo-ref that is no symbolic ref holds: the first word of each
/// line that is an object id (`FETCH_HEAD`'s lines carry more).
fn held(text: &[u8]) -> Vec<Vec<u8>> {
    let mut ids = Vec::new();
    for line in text.trim_ascii().split(|&b| b == b'\n') {
        let w = line
            .split(|&b| b == b'\t' || b == b' ')
            .next()
            .unwrap_or(b"");
        if let Ok(id) = oid(w) {
            ids.push(id);
        }
    }
    ids
}

/// When a file or directory was last changed, as far as reading it again goes: (dev, ino,
/// size, mtime, mtime_nsec, ctime, ctime_nsec). A write moves ctime, which a run cannot set
/// back.
pub(super) type Stamp = (u64, u64, u64, i64, i64, i64, i64);

/// What a snapshot read of a git directory's refs and reflogs, by path, each with its stamp
/// then: a ref's text, a reflog's length and digest, a directory's names (or why it could not
/// be read). The "after" snapshot takes what did not change from the "before" one's.
pub(super) type Reads = HashMap<PathBuf, (Stamp, Arc<Result<Vec<u8>, String>>)>;

pub(super) fn stamp(m: &std::fs::Metadata) -> Stamp {
    (
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// Reads files and directories, or takes them from an earlier snapshot's [`Reads`] where
/// their stamp is the same (one `stat` instead of an open, reads and a close) and older than
/// that snapshot by [`super::SETTLED`] (a change in the same tick of the kernel's coarse
/// clock as that snapshot's read would carry the same stamp).
struct Reader<'a> {
    earlier: Option<(&'a Reads, std::time::SystemTime)>,
    now: Reads,
    /// How many were read, not taken.
    fresh: usize,
}

impl Reader<'_> {
    fn take(
        &mut self,
        path: &Path,
        read: impl FnOnce(&Path) -> Result<Vec<u8>, String>,
    ) -> Arc<Result<Vec<u8>, String>> {
        // Stamped first, read after: a change in between leaves a newer stamp than the
        // stamp kept, never an older one.
        let Ok(m) = std::fs::metadata(path) else {
            return Arc::new(read(path));
        };
        let st = stamp(&m);
        let settled = |(secs, nsec): (i64, i64), before: std::time::SystemTime| {
            u64::try_from(secs).is_ok_and(|secs| {
                std::time::UNIX_EPOCH + std::time::Duration::new(secs, nsec as u32) + super::SETTLED
                    < before
            })
        };
        let value = match self.earlier.and_then(|(r, t)| Some((r.get(path)?, t))) {
            Some(((was, v), t)) if *was == st && settled((st.5, st.6), t) => v.clone(),
            _ => {
                self.fresh += 1;
                Arc::new(read(path))
            }
        };
        self.now.insert(path.to_path_buf(), (st, value.clone()));
        value
    }

    /// A file's bytes (links followed, as git does; never blocking), empty when missing.
    fn file(&mut self, path: &Path, max: u64) -> Arc<Result<Vec<u8>, String>> {
        self.take(path, |p| {
            cordon_fs::safe::read_followed(p, max)
                .map(Option::unwrap_or_default)
                .map_err(|e| e.to_string())
        })
    }

    /// A directory's entries: each name, with `/` after a directory's.
    fn dir(&mut self, path: &Path) -> Vec<(String, bool)> {
        let v = self.take(path, |p| {
            let rd = std::fs::read_dir(p).map_err(|e| e.to_string())?;
            let mut out = Vec::new();
            for e in rd.flatten() {
                out.extend_from_slice(e.file_name().as_bytes());
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    out.push(b'/');
                }
                out.push(0);
            }
            Ok(out)
        });
        let Ok(names) = v.as_ref() else {
            return Vec::new();
        };
        names
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| match n.strip_suffix(b"/") {
                Some(d) => (String::from_utf8_lossy(d).into_owned(), true),
                None => (String::from_utf8_lossy(n).into_owned(), false),
            })
            .collect()
    }
}

/// Every ref and reflog of `git_dir` (see [`GitState`]'s `refs` and `logs`), and what was read
/// for them. A repository that leaves git alone costs, in the "after" snapshot, a `stat` of
/// each ref and reflog and of the directories that hold them; the "before" snapshot reads
/// them.
fn read_refs(
    git_dir: &Path,
    reader: &mut Reader,
) -> (BTreeMap<String, Ref>, BTreeMap<String, Log>) {
    let common = common_dir(git_dir);
    let mut refs = BTreeMap::new();
    let mut logs = BTreeMap::new();
    let reftable = common.join("reftable");
    if reftable.is_dir() {
        // Not read here: the tables' list is what changes when a ref does.
        let list = cordon_fs::safe::read_followed(&reftable.join("tables.list"), 1 << 20)
            .ok()
            .flatten()
            .unwrap_or_default();
        refs.insert(
            "HEAD".to_string(),
            Err(format!(
                "a reftable repository, whose refs cordon does not read (tables {})",
                String::from_utf8_lossy(&list).trim()
            )),
        );
        return (refs, logs);
    }
    // The loose refs' texts and the pseudo-refs', resolved once all are read.
    let mut texts: BTreeMap<String, Result<Vec<u8>, String>> = BTreeMap::new();
    // The pseudo-refs present (one listing of the git directory, not a failed open each).
    let present: std::collections::HashSet<String> =
        reader.dir(git_dir).into_iter().map(|(n, _)| n).collect();
    for name in PSEUDO_REFS {
        let first = name.split('/').next().unwrap_or(name);
        if present.contains(first) {
            texts.insert(
                name.to_string(),
                (*reader.file(&git_dir.join(name), 1 << 20)).clone(),
            );
        }
    }
    // A linked worktree's refs (but for its HEAD and pseudo-refs) and reflogs (but for HEAD's)
    // are its repository's, read there.
    let linked = common != git_dir;
    let mut packed = BTreeMap::new();
    if !linked {
        // Packed first: a loose ref of the same name is what git reads.
        match &*reader.file(&common.join("packed-refs"), 256 << 20) {
            Ok(text) => {
                for line in text.split(|&b| b == b'\n') {
                    if line.starts_with(b"#") || line.starts_with(b"^") {
                        continue;
                    }
                    if let Some((id, n)) = line.split_once_byte(b' ') {
                        let n = String::from_utf8_lossy(n).into_owned();
                        let id = oid(id)
                            .map(|i| vec![i])
                            .map_err(|_| format!("packed-refs: {n} holds no object id"));
                        packed.insert(n, id);
                    }
                }
            }
            Err(e) => {
                refs.insert("packed-refs".into(), Err(e.clone()));
            }
        }
        let mut stack = vec![(common.join("refs"), "refs".to_string())];
        let mut count = 0;
        while let Some((dir, name)) = stack.pop() {
            for (file, is_dir) in reader.dir(&dir) {
                count += 1;
                if count > MAX_REFS {
                    refs.insert(
                        "refs/".into(),
                        Err(format!("more than {MAX_REFS} loose refs")),
                    );
                    return (refs, logs);
                }
                let n = format!("{name}/{file}");
                if is_dir {
                    stack.push((dir.join(&file), n));
                } else {
                    texts.insert(n, (*reader.file(&dir.join(&file), 1 << 20)).clone());
                }
            }
        }
    }
    // Each name's ids: a symbolic ref resolved through what was read (or, for a linked
    // worktree's, its repository's refs on disk).
    let lookup = |name: &str| -> Result<Option<Vec<u8>>, String> {
        let mut name = name.to_string();
        for _ in 0..8 {
            match texts.get(&name) {
                Some(Ok(t)) => {
                    let t = t.trim_ascii();
                    if let Some(to) = t.strip_prefix(b"ref: ") {
                        name = String::from_utf8_lossy(to.trim_ascii()).into_owned();
                        continue;
                    }
                    return oid(t)
                        .map(Some)
                        .map_err(|_| format!("{name} holds no object id"));
                }
                Some(Err(e)) => return Err(format!("{name}: {e}")),
                None if linked => return resolve(git_dir, &common, &name),
                None => {
                    return packed
                        .get(&name)
                        .cloned()
                        .map_or(Ok(None), |r| r.map(|ids| ids.into_iter().next()))
                }
            }
        }
        Err(format!("{name}: symbolic refs nest too deep"))
    };
    for (name, text) in &texts {
        let value = match text {
            Err(e) => Err(e.clone()),
            Ok(t) if t.trim_ascii().starts_with(b"ref: ") => {
                lookup(name).map(|id| id.into_iter().collect())
            }
            Ok(t) => Ok(held(t)),
        };
        refs.insert(name.clone(), value);
    }
    for (name, r) in packed {
        refs.entry(name).or_insert(r);
    }
    if present.contains("logs") {
        list_logs(&git_dir.join("logs"), "", &mut logs, linked, reader);
    }
    (refs, logs)
}

/// Each reflog under `dir` (named as its ref: `HEAD`, `refs/heads/main`), with its length and
/// digest; only `HEAD`'s when `head_only` (a linked worktree's).
fn list_logs(
    dir: &Path,
    prefix: &str,
    logs: &mut BTreeMap<String, Log>,
    head_only: bool,
    reader: &mut Reader,
) {
    use sha1::Digest as _;
    for (file, is_dir) in reader.dir(dir) {
        if logs.len() > MAX_REFS {
            logs.insert("logs/".into(), Err(format!("more than {MAX_REFS} reflogs")));
            return;
        }
        let name = if prefix.is_empty() {
            file.clone()
        } else {
            format!("{prefix}/{file}")
        };
        if head_only && name != "HEAD" {
            continue;
        }
        if is_dir {
            list_logs(&dir.join(&file), &name, logs, head_only, reader);
            continue;
        }
        let v = reader.take(&dir.join(&file), |p| {
            let b = cordon_fs::safe::read_followed(p, MAX_LOG)
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            let mut out = (b.len() as u64).to_le_bytes().to_vec();
            out.extend_from_slice(&sha1::Sha1::digest(&b));
            Ok(out)
        });
        let log = match &*v {
            Ok(b) if b.len() == 28 => Ok((
                u64::from_le_bytes(b[..8].try_into().unwrap()),
                b[8..].to_vec(),
            )),
            Ok(_) => Err("unreadable".into()),
            Err(e) => Err(e.clone()),
        };
        logs.insert(name, log);
    }
}

/// The object id `name` (a full ref name) points at, following symbolic refs, from loose ref
/// files or `packed-refs`.
fn resolve(git_dir: &Path, common: &Path, name: &str) -> Result<Option<Vec<u8>>, String> {
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
        return oid(text)
            .map(Some)
            .map_err(|_| format!("{name} holds no object id"));
    }
    Err(format!("{name}: symbolic refs nest too deep"))
}

fn packed_ref(common: &Path, name: &str) -> Result<Option<Vec<u8>>, String> {
    let text = match cordon_fs::safe::read_followed(&common.join("packed-refs"), 256 << 20) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("packed-refs: {e}")),
    };
    for line in text.split(|&b| b == b'\n') {
        if let Some((id, n)) = line.split_once_byte(b' ') {
            if n == name.as_bytes() {
                return oid(id)
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

/// A packed object's type and content (see [`Odb::object`]).
type PackedObject = (u8, Arc<Vec<u8>>);

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
    bounds: Bounds,
    /// Each tree read, by id: read once, however many commits share it.
    trees: HashMap<Vec<u8>, Tree>,
    /// Packed objects that were a delta's base, by pack and offset, and their bytes in all
    /// (git's own delta base cache): the trees of successive commits are deltas of each
    /// other, chains of up to 50, and would otherwise be inflated again for each.
    bases: HashMap<(usize, u64), PackedObject>,
    base_bytes: usize,
    /// The gitlinks [`Odb::changed`] found moved (path, new commit, old commit), for the
    /// caller to compare in the submodule's own objects ([`GitState::gitlink_changed`]).
    links: Vec<MovedLink>,
}

impl Odb {
    fn new(dir: PathBuf, hash: usize, bounds: Bounds) -> Odb {
        Odb {
            dir,
            hash,
            packs: None,
            read: 0,
            bounds,
            trees: HashMap::new(),
            bases: HashMap::new(),
            base_bytes: 0,
            links: Vec::new(),
        }
    }

    /// A commit's tree and parents.
    fn commit(&mut self, id: &[u8]) -> Result<Commit, String> {
        let (kind, body) = self.object(id, 0)?;
        if kind != 1 {
            return Err(format!("{} is not a commit", hex::encode(id)));
        }
        parse_commit(&body)
    }

    /// The tree a name holds, with the parents when it is a commit: a commit, a tag of one
    /// (peeled), or a tree (`git checkout TREE -- .` writes one out); `None` for a blob.
    fn peel(&mut self, id: &[u8]) -> Result<Option<Commit>, String> {
        let mut id = id.to_vec();
        for _ in 0..8 {
            let (kind, body) = self.object(&id, 0)?;
            match kind {
                1 => return parse_commit(&body).map(Some),
                2 => return Ok(Some((id, Vec::new()))),
                4 => {
                    id = body
                        .split(|&b| b == b'\n')
                        .find_map(|l| l.strip_prefix(b"object "))
                        .and_then(|h| oid(h).ok())
                        .ok_or("a tag without an object")?;
                }
                _ => return Ok(None),
            }
        }
        Err("tags nest too deep".into())
    }

    /// The surface paths whose entry in `id`'s tree is not the one in `base`'s (every one
    /// when there is no base, or it cannot be read).
    fn tip_changed(
        &mut self,
        id: &[u8],
        base: Option<&[u8]>,
    ) -> Result<Vec<(Vec<u8>, Entry)>, String> {
        let Some((tree, _)) = self.peel(id)? else {
            return Ok(Vec::new());
        };
        let old = base.and_then(|b| self.peel(b).ok().flatten()).map(|t| t.0);
        self.changed(&tree, old.as_deref(), b"")
    }

    /// What `git stash pop` of stash commit `id` writes: its worktree tree and its index tree
    /// (the second parent) against its base (the first), and the untracked files of the third
    /// parent whole.
    fn stash_changed(&mut self, id: &[u8]) -> Result<Vec<(Vec<u8>, Entry)>, String> {
        let (tree, parents) = self.commit(id)?;
        let base = match parents.first() {
            Some(p) => Some(self.commit(p)?.0),
            None => None,
        };
        let mut all = self.changed(&tree, base.as_deref(), b"")?;
        if let Some(p) = parents.get(1) {
            let t = self.commit(p)?.0;
            all.extend(self.changed(&t, base.as_deref(), b"")?);
        }
        for p in parents.iter().skip(2) {
            let t = self.commit(p)?.0;
            all.extend(self.changed(&t, None, b"")?);
        }
        Ok(all)
    }

    /// Whether the bounds are spent (the objects this comparison may read, or the scan's
    /// time): what is compared next fails.
    fn spent(&self) -> bool {
        self.read >= self.bounds.objects || Instant::now() >= self.bounds.until
    }

    /// A tree's entries: name, mode, id (read once per id).
    fn tree(&mut self, id: &[u8]) -> Result<Tree, String> {
        if let Some(t) = self.trees.get(id) {
            return Ok(t.clone());
        }
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
        let out = Arc::new(out);
        if self.trees.len() < MAX_CACHED_TREES {
            self.trees.insert(id.to_vec(), out.clone());
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
                .map(|t| t.iter().cloned().collect())
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        for (name, e) in now.iter() {
            let before = was.get(name);
            if before == Some(e) {
                continue;
            }
            let mut path = prefix.to_vec();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(name);
            if e.0 == GITLINK {
                let old = before.filter(|b| b.0 == GITLINK).map(|b| b.1.clone());
                self.links.push((path, e.1.clone(), old));
                continue;
            }
            if e.0 == TREE {
                let old_sub = before.filter(|b| b.0 == TREE).map(|b| b.1.clone());
                out.extend(self.changed(&e.1, old_sub.as_deref(), &path)?);
            } else if on_surface(&path).is_some() {
                out.push((path, e.clone()));
            }
        }
        Ok(out)
    }

    /// An object's type (1 commit, 2 tree, 3 blob, 4 tag) and content.
    fn object(&mut self, id: &[u8], depth: usize) -> Result<(u8, Vec<u8>), String> {
        if self.spent() {
            return Err(format!("past cordon's bounds ({})", self.bounds.say()));
        }
        self.read += 1;
        if depth > MAX_DELTA_DEPTH {
            return Err("too many objects to read".into());
        }
        let hex = hex::encode(id);
        if id.len() != self.hash {
            return Err(format!("{hex} is no object id of this repository"));
        }
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
                let (k, base) = self.delta_base(i, base_off, depth + 1)?;
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

    /// The object at `off` in pack `i` as a delta's base: from the cache, else read and kept
    /// (up to [`MAX_BASE_BYTES`] in all).
    fn delta_base(&mut self, i: usize, off: u64, depth: usize) -> Result<PackedObject, String> {
        if let Some((k, b)) = self.bases.get(&(i, off)) {
            return Ok((*k, b.clone()));
        }
        let (k, b) = self.packed(i, off, depth)?;
        let b = Arc::new(b);
        if self.base_bytes + b.len() <= MAX_BASE_BYTES {
            self.base_bytes += b.len();
            self.bases.insert((i, off), (k, b.clone()));
        }
        Ok((k, b))
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

/// A commit's tree and parents, from its text.
fn parse_commit(body: &[u8]) -> Result<Commit, String> {
    let mut tree = None;
    let mut parents = Vec::new();
    for line in body.split(|&b| b == b'\n') {
        if line.is_empty() {
            break;
        }
        if let Some(t) = line.strip_prefix(b"tree ") {
            tree = oid(t).ok();
        } else if let Some(p) = line.strip_prefix(b"parent ") {
            parents.push(oid(p).map_err(|_| "a commit's parent is no id")?);
        }
    }
    Ok((tree.ok_or("a commit without a tree")?, parents))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A gitlink whose path climbs out (`../../../outside`, which only an index written byte
    /// by byte holds) is not looked up there: "could not check", not a comparison in another
    /// repository's objects.
    #[test]
    fn a_gitlink_path_that_climbs_out_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let t = std::fs::canonicalize(d.path()).unwrap();
        let outside = t.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(t.join("root/.git/modules")).unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&outside)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &outside)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q", "--separate-git-dir", "objects-here"]);
        std::fs::write(outside.join(".envrc"), "x").unwrap();
        git(&["add", ".envrc"]);
        git(&["commit", "-q", "-m", "e"]);
        let id = hex::decode(git(&["rev-parse", "HEAD"])).unwrap();
        // `modules/../../../outside/objects-here` is that repository's git directory.
        let git_dir = t.join("root/.git");
        let state = GitState::from_reads(HashMap::new());
        let climbs = b"../../../outside/objects-here";
        assert!(std::fs::metadata(
            git_dir
                .join("modules")
                .join(OsStr::from_bytes(climbs))
                .join("objects")
        )
        .is_ok());
        let link = (climbs.to_vec(), id, None);
        let res = state.gitlink_changed(&git_dir, &git_dir, &link, Bounds::now());
        assert!(
            res.as_ref()
                .is_err_and(|e| e.contains("no path git checks out")),
            "{res:?}"
        );
    }
}
