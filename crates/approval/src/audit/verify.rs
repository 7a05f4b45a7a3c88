//! Checking a log: the hash chain, `seq` continuity, the head file and a torn tail.
//!
//! The checker rebuilds the chain backwards from its end (the record the head file names,
//! else the last line), following each record's `prev` to the line with that hash. Lines the
//! walk never reaches were inserted (or duplicated); a `prev` that matches no line is a
//! break, blamed on the line before it when that line sits where the missing record should
//! (it was changed), else on missing records (deleted); lines reached in a different order
//! than the file's were moved.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::record::{Record, FORMAT_VERSION, ZERO_HASH};
use super::util::{is_hash, sha256_hex};
use super::writer::{get_head_xattr, head_path, lock_path, read_head_file, LOCK_DEADLINE};
use crate::Error;

/// The result of [`verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The log checked.
    pub path: PathBuf,
    /// Complete (newline-terminated) lines.
    pub lines: usize,
    /// Complete lines that are valid records.
    pub records: usize,
    /// `time` of the first and last valid records, in file order.
    pub first_time: Option<String>,
    pub last_time: Option<String>,
    /// `seq` of the first and last valid records, in file order.
    pub first_seq: Option<u64>,
    pub last_seq: Option<u64>,
    /// What is wrong, by line (1-based; `lines + 1` means "after the last line").
    pub problems: Vec<Problem>,
    /// Things worth knowing that are not problems (no head file, a repaired torn tail).
    pub notes: Vec<String>,
}

impl Report {
    /// No problem at all.
    pub fn is_intact(&self) -> bool {
        self.problems.is_empty()
    }

    /// Whether any problem is something other than a torn tail, i.e. what a crash cannot
    /// explain.
    pub fn tampered(&self) -> bool {
        self.problems
            .iter()
            .any(|p| p.kind != ProblemKind::TornTail)
    }
}

/// One problem, at a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line; `lines + 1` for problems at the end of the file.
    pub line: usize,
    pub kind: ProblemKind,
    /// What and why, in words.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// What kind of problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// Not a valid record: bad JSON, an unknown or missing field, another format version.
    BadRecord,
    /// Changed after it was written: the next record (or the head file) recorded another hash.
    Modified,
    /// Records are missing before this line (or at the end): deleted.
    Missing,
    /// Not part of the chain: inserted, duplicated, or appended without the writer.
    Inserted,
    /// Part of the chain, but not where the chain puts it: moved.
    Reordered,
    /// `seq` does not follow the record it links to.
    Seq,
    /// The head file is unreadable or disagrees with the log.
    Head,
    /// The last line has no newline: the remains of an interrupted write (a crash), not
    /// tampering. The decision it was recording never took effect: the writer returns only
    /// after the whole line is durable. The next append moves it aside.
    TornTail,
}

/// Reads and checks the log at `path` (under a shared lock, so a concurrent append is never
/// seen half-written). Fails only when the file cannot be read; everything wrong with its
/// content is in the [`Report`].
pub fn verify(path: impl AsRef<Path>) -> Result<Report, Error> {
    let path = path.as_ref();
    let io = |what: &'static str| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, what, source }
    };
    let file = File::open(path).map_err(io("cannot open"))?;
    // The writer's lock file, where there is one (a copy of a log may come without it).
    let lock_file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(lock_path(path))
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()));
    let lock = lock_file
        .as_ref()
        .map(|f| cordon_fs::lock::shared(f, LOCK_DEADLINE))
        .transpose()
        .map_err(|e| io("cannot lock (FILE.lock)")(e.into()))?;
    let mut bytes = Vec::new();
    (&file).read_to_end(&mut bytes).map_err(io("cannot read"))?;
    // The head: the log's own attribute, else the head file of a log from before.
    let head = match get_head_xattr(&file) {
        Ok(Some(h)) => Some(Ok(h)),
        Ok(None) => read_head(&head_path(path)),
        Err(e) => Some(Err(io::Error::new(
            e.kind(),
            format!("its attribute is unreadable: {e}"),
        ))),
    };
    drop(lock);
    Ok(check(path, &bytes, head))
}

/// The head file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub seq: u64,
    pub hash: String,
}

/// `None` when there is no head file. A symlink is not followed: cordon's writer never
/// makes one, and a link there may have redirected its writes (the head would then read
/// fine while cordon overwrote the file it points to).
pub(crate) fn read_head(path: &Path) -> Option<io::Result<Head>> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    match opened {
        Ok(f) => Some(read_head_file(f)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Some(Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "it is a symlink, which cordon's writer never makes: something replaced it (and \
             may have redirected cordon's writes to what it points to)",
        ))),
        Err(e) => Some(Err(e)),
    }
}

/// Parses a head file's text (`InvalidData`, saying what a head looks like, when it is not one).
pub(crate) fn parse_head(text: &str) -> io::Result<Head> {
    let parsed = || -> Option<Head> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        if v.get("v")?.as_u64()? != u64::from(FORMAT_VERSION) {
            return None;
        }
        let hash = v.get("hash")?.as_str()?.to_string();
        is_hash(&hash).then_some(Head {
            seq: v.get("seq")?.as_u64()?,
            hash,
        })
    };
    parsed().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "not {\"v\":1,\"seq\":N,\"hash\":\"…\"}",
        )
    })
}

struct Line {
    hash: String,
    rec: Option<Lite>,
}

struct Lite {
    seq: u64,
    prev: String,
    time: String,
}

#[derive(Default)]
struct Problems(BTreeMap<usize, Problem>);

impl Problems {
    /// Records a problem at 1-based `line` unless that line already has one.
    fn add(&mut self, line: usize, kind: ProblemKind, message: impl Into<String>) {
        self.0.entry(line).or_insert_with(|| Problem {
            line,
            kind,
            message: message.into(),
        });
    }
}

/// Checks the log's bytes (and its head file, when there is one).
pub(crate) fn check(path: &Path, bytes: &[u8], head: Option<io::Result<Head>>) -> Report {
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or_default();
    let mut problems = Problems::default();
    let mut notes = Vec::new();

    let lines: Vec<Line> = parts
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let rec = match parse(bytes) {
                Ok((lite, repair)) => {
                    if let Some(r) = repair {
                        notes.push(format!("line {}: {r}", i + 1));
                    }
                    Some(lite)
                }
                Err(why) => {
                    problems.add(
                        i + 1,
                        ProblemKind::BadRecord,
                        format!("not a valid audit record ({why}): changed or corrupted"),
                    );
                    None
                }
            };
            Line {
                hash: sha256_hex(bytes),
                rec,
            }
        })
        .collect();
    let n = lines.len();
    if !tail.is_empty() {
        problems.add(
            n + 1,
            ProblemKind::TornTail,
            format!(
                "torn tail: {} bytes without a newline, the remains of an interrupted write \
                 (a crash), not tampering; the decision it was recording never took effect, and \
                 the next append moves it aside",
                tail.len()
            ),
        );
    }
    let seq = |i: usize| lines[i].rec.as_ref().map(|r| r.seq);
    let mut by_hash: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        by_hash.entry(l.hash.as_str()).or_default().push(i);
    }

    // Where the chain ends: the record the head file names, else the last line.
    let mut start = n.checked_sub(1);
    let head_file = head_path(path);
    match (head, start) {
        (None, Some(_)) => notes.push(format!(
            "no head (neither the log's attribute user.cordon.head nor a head file {}): \
             deleting the last records cannot be detected",
            head_file.display()
        )),
        (None, None) => {}
        (Some(Err(why)), _) => problems.add(
            n + 1,
            ProblemKind::Head,
            format!("the head file {} is unreadable: {why}", head_file.display()),
        ),
        (Some(Ok(h)), None) => problems.add(
            1,
            ProblemKind::Missing,
            format!(
                "the log is empty, but its head file records seq {}: records were deleted",
                h.seq
            ),
        ),
        (Some(Ok(h)), Some(last)) => {
            let behind = behind_by(&lines, &h);
            if lines[last].hash == h.hash {
                if seq(last) != Some(h.seq) {
                    problems.add(
                        n + 1,
                        ProblemKind::Head,
                        format!(
                            "the head file records seq {} for the last record, which has another",
                            h.seq
                        ),
                    );
                }
            } else if let Some(k) = behind {
                notes.push(format!(
                    "the head is {k} record(s) behind the log: cordon was killed between \
                     writing a record and updating the head, so the last {k} record(s) are \
                     covered by the chain only; the next append repairs it"
                ));
            } else if let Some(&m) = by_hash.get(h.hash.as_str()).and_then(|v| v.iter().max()) {
                start = Some(m);
            } else {
                match seq(last) {
                    Some(ls) if h.seq == ls + 1 => problems.add(
                        n + 1,
                        ProblemKind::Missing,
                        format!(
                            "the last record is missing: the head records seq {}, the log ends \
                             at seq {ls}: deleted, or lost to a power failure before its sync \
                             returned (its decision was then never handed out; the next append \
                             says so)",
                            h.seq
                        ),
                    ),
                    Some(ls) if h.seq > ls => problems.add(
                        n + 1,
                        ProblemKind::Missing,
                        format!(
                            "{} record(s) missing at the end: the head file records seq {}, \
                             the log ends at seq {ls}: deleted",
                            h.seq - ls,
                            h.seq
                        ),
                    ),
                    Some(ls) if h.seq == ls => problems.add(
                        n,
                        ProblemKind::Modified,
                        "changed after it was written: it does not match the head file",
                    ),
                    _ => problems.add(
                        n + 1,
                        ProblemKind::Head,
                        format!(
                            "the head file (seq {}) matches no record: a record or the head \
                             file was changed",
                            h.seq
                        ),
                    ),
                }
            }
        }
    }

    // Walk back from the end. `chain` holds (line index, reached by following the `prev` of
    // the entry pushed before it).
    let mut visited = vec![false; n];
    let mut chain: Vec<(usize, bool)> = Vec::new();
    let below = |visited: &[bool], cur: usize| (0..cur).rev().find(|&i| !visited[i]);
    if let Some(s) = start {
        visited[s] = true;
        chain.push((s, false));
        let mut cur = s;
        loop {
            let Some(rec) = &lines[cur].rec else {
                // An unreadable record: its link cannot be followed; go on below it.
                match below(&visited, cur) {
                    Some(b) => {
                        visited[b] = true;
                        chain.push((b, false));
                        cur = b;
                        continue;
                    }
                    None => break,
                }
            };
            if rec.prev == ZERO_HASH {
                break; // the start of the chain
            }
            let found = by_hash.get(rec.prev.as_str()).and_then(|cands| {
                let free = cands.iter().copied().filter(|&i| !visited[i]);
                free.clone()
                    .filter(|&i| i < cur)
                    .max()
                    .or_else(|| free.filter(|&i| i > cur).min())
            });
            if let Some(m) = found {
                visited[m] = true;
                chain.push((m, true));
                cur = m;
                continue;
            }
            // A break: the record `cur` follows is not in the file as it was written.
            let Some(b) = below(&visited, cur) else {
                problems.add(
                    cur + 1,
                    ProblemKind::Missing,
                    format!(
                        "the record before this one (seq {}) is missing: records before this \
                         line were deleted",
                        rec.seq.wrapping_sub(1)
                    ),
                );
                break;
            };
            let fits = match &lines[b].rec {
                None => true,
                Some(br) => {
                    br.seq.checked_add(1) == Some(rec.seq)
                        || (br.prev == ZERO_HASH && rec.seq == 1)
                        || by_hash.get(br.prev.as_str()).is_some_and(|ks| {
                            ks.iter()
                                .any(|&k| seq(k).and_then(|s| s.checked_add(2)) == Some(rec.seq))
                        })
                }
            };
            // When `cur` itself was found changed (by the record after it), that one change
            // explains this break too: its `prev` was edited. Otherwise blame `b` if it sits
            // where the missing record should.
            let cur_changed = problems
                .0
                .get(&(cur + 1))
                .is_some_and(|p| p.kind == ProblemKind::Modified);
            if cur_changed {
            } else if fits {
                problems.add(
                    b + 1,
                    ProblemKind::Modified,
                    format!(
                        "changed after it was written: line {} recorded another hash for the \
                         record before it",
                        cur + 1
                    ),
                );
            } else {
                match seq(b) {
                    Some(bs) if bs.checked_add(1).is_some_and(|e| e < rec.seq) => problems.add(
                        cur + 1,
                        ProblemKind::Missing,
                        format!(
                            "{} record(s) missing before this line (seq {}..={}): deleted",
                            rec.seq - bs - 1,
                            bs + 1,
                            rec.seq - 1
                        ),
                    ),
                    _ => problems.add(
                        cur + 1,
                        ProblemKind::Missing,
                        format!(
                            "the chain is broken here: the record this one follows (seq {}) is \
                             not in the file",
                            rec.seq.wrapping_sub(1)
                        ),
                    ),
                }
            }
            visited[b] = true;
            chain.push((b, false));
            cur = b;
        }
    }
    chain.reverse();

    // The chain's own consistency: its start, `seq` along each link.
    if let Some(&(first, _)) = chain.first() {
        if let Some(r) = &lines[first].rec {
            if r.prev == ZERO_HASH && r.seq != 0 {
                problems.add(
                    first + 1,
                    ProblemKind::Seq,
                    format!("the chain starts here, but with seq {} instead of 0", r.seq),
                );
            }
        }
    }
    for pair in chain.windows(2) {
        let ((a, linked), (b, _)) = (pair[0], pair[1]);
        if !linked {
            continue;
        }
        if let (Some(sa), Some(sb)) = (seq(a), seq(b)) {
            if sa.checked_add(1) != Some(sb) {
                problems.add(
                    b + 1,
                    ProblemKind::Seq,
                    format!(
                        "seq {sb} does not follow the record it links to (line {}, seq {sa})",
                        a + 1
                    ),
                );
            }
        }
    }
    // Moved lines: those off the longest run of the chain that is in file order.
    let positions: Vec<usize> = chain.iter().map(|&(i, _)| i).collect();
    let in_order = longest_increasing(&positions);
    for (k, &(i, _)) in chain.iter().enumerate() {
        if !in_order[k] {
            let after = match k {
                0 => "at the start of the chain".to_string(),
                _ => format!("right after line {}", chain[k - 1].0 + 1),
            };
            problems.add(
                i + 1,
                ProblemKind::Reordered,
                format!("out of order: it was written {after}: records were moved"),
            );
        }
    }
    for (i, seen) in visited.iter().enumerate() {
        if !seen {
            problems.add(
                i + 1,
                ProblemKind::Inserted,
                "not part of the hash chain: inserted, duplicated, or appended without \
                 cordon's writer",
            );
        }
    }

    let valid: Vec<&Lite> = lines.iter().filter_map(|l| l.rec.as_ref()).collect();
    Report {
        path: path.to_path_buf(),
        lines: n,
        records: valid.len(),
        first_time: valid.first().map(|r| r.time.clone()),
        last_time: valid.last().map(|r| r.time.clone()),
        first_seq: valid.first().map(|r| r.seq),
        last_seq: valid.last().map(|r| r.seq),
        problems: problems.0.into_values().collect(),
        notes,
    }
}

/// How many records the head is behind the last line, when the lines after the one it names
/// chain to it (each `prev` the line before's hash); `None` when it is not behind that way.
fn behind_by(lines: &[Line], h: &Head) -> Option<u64> {
    let mut i = lines.len().checked_sub(1)?;
    let mut k = 0;
    loop {
        if i == 0 {
            return None;
        }
        let prev = &lines[i].rec.as_ref()?.prev;
        if *prev != lines[i - 1].hash {
            return None;
        }
        k += 1;
        i -= 1;
        if lines[i].hash == h.hash {
            return (lines[i].rec.as_ref()?.seq == h.seq && k > 0).then_some(k);
        }
    }
}

/// Parses one line strictly: a [`Record`] of this format version with a well-formed `prev`.
fn parse(bytes: &[u8]) -> Result<(Lite, Option<String>), String> {
    let r: Record = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if r.v != FORMAT_VERSION {
        return Err(format!("format version {}", r.v));
    }
    if !is_hash(&r.prev) {
        return Err("`prev` is not a SHA-256".into());
    }
    Ok((
        Lite {
            seq: r.seq,
            prev: r.prev,
            time: r.time,
        },
        r.repair,
    ))
}

/// Marks the members of one longest strictly increasing subsequence of `xs`.
fn longest_increasing(xs: &[usize]) -> Vec<bool> {
    // tails[k]: index in xs of the smallest tail of an increasing run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut parent: Vec<Option<usize>> = vec![None; xs.len()];
    for (i, &x) in xs.iter().enumerate() {
        let k = tails.partition_point(|&t| xs[t] < x);
        parent[i] = k.checked_sub(1).map(|p| tails[p]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut member = vec![false; xs.len()];
    let mut cur = tails.last().copied();
    while let Some(i) = cur {
        member[i] = true;
        cur = parent[i];
    }
    member
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_increasing_keeps_the_ordered_run() {
        assert_eq!(longest_increasing(&[0, 1, 2]), [true, true, true]);
        let m = longest_increasing(&[0, 1, 3, 2, 4]);
        assert_eq!(m.iter().filter(|b| !**b).count(), 1);
        assert!(m[0] && m[1] && m[4]);
        assert!(longest_increasing(&[]).is_empty());
    }
}
