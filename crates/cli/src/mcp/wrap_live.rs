//! The live watch of a wrapped server's writable roots: a server can write between its tool
//! calls (a timer, a background thread), and the operator's tools act on what it plants
//! meanwhile (direnv on `cd`, the editor's `git status`, the agent host re-reading its
//! settings). So every write under a root triggers the after-run check
//! ([`cordon_gate::Watch::check`]) within a short debounce, while the server is idle too.
//!
//! ```text
//!  place(roots)          an inotify watch on every directory under each root (no link followed)
//!     │  server starts
//!  run(scan, degraded)   a thread: poll(inotify, stop)
//!     ├─ an event ─▶ new directory (created, moved in, chmod'ed): watch its whole tree
//!     │              queue overflow: watch every directory again
//!     │              the check DEBOUNCE..MAX_DELAY after the first event
//!     └─ no watch possible (no inotify, the watch limit) ─▶ a full check every second,
//!                    said once on stderr and in the audit log
//! ```
//!
//! The watch only says *when* to look; the check is the whole after-run scan, which walks
//! every root as it is then. So a directory created with a plant inside before its watch is
//! added is covered by the check its creation triggers, and a check never relies on which
//! names an event carried. Order matters: new directories are watched *before* the check, so
//! a write after the check's walk passed a place produces an event (and another check).

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The least time from the first write to the check: writes that come together (a tool
/// writing a tree) are checked once.
const DEBOUNCE: Duration = Duration::from_millis(100);
/// The most: the debounce grows with the check's own cost (a large tree written to without
/// pause is not walked back to back), up to this.
const MAX_DELAY: Duration = Duration::from_millis(250);
/// Without inotify: a full check this often.
const PERIOD: Duration = Duration::from_secs(1);

/// The watches, placed (before the server starts), not yet read.
pub struct Placed {
    roots: Vec<PathBuf>,
    tree: Option<tree::Tree>,
    /// Why the watch is not complete (said once when it runs).
    trouble: Option<String>,
}

/// The running watch; stopped (and its thread joined) when dropped.
pub struct Live {
    stop: Option<std::os::fd::OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Places a watch on every directory under each of `roots`. What cannot be watched is said
/// when the watch runs ([`Placed::run`]), which then checks every [`PERIOD`] instead.
pub fn place(roots: &[PathBuf]) -> Placed {
    let (tree, trouble) = match tree::Tree::new() {
        Ok(mut t) => {
            let trouble = roots.iter().find_map(|r| t.add_tree(r).err());
            (Some(t), trouble)
        }
        Err(e) => (None, Some(e)),
    };
    Placed {
        roots: roots.to_vec(),
        tree,
        trouble,
    }
}

impl Placed {
    /// Runs the watch on a thread of its own: `scan` after writes (or every [`PERIOD`] where
    /// the watch is incomplete), `degraded(why)` once when it is.
    pub fn run(
        self,
        scan: impl FnMut() + Send + 'static,
        degraded: impl FnMut(&str) + Send + 'static,
    ) -> std::io::Result<Live> {
        let (stop_rx, stop_tx) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let thread = std::thread::Builder::new()
            .name("mcp-live-watch".into())
            .spawn(move || self.serve(stop_rx, scan, degraded))?;
        Ok(Live {
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    fn serve(
        mut self,
        stop: std::os::fd::OwnedFd,
        mut scan: impl FnMut(),
        mut degraded: impl FnMut(&str),
    ) {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let mut periodic = false;
        let mut degrade = |why: String, periodic: &mut bool| {
            if !*periodic {
                *periodic = true;
                degraded(&format!(
                    "{why}; its writable roots ({}) are scanned every second instead",
                    self.roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        // Something may have been missed already: check at once.
        let mut due = None;
        if let Some(why) = self.trouble.take() {
            degrade(why, &mut periodic);
            due = Some(Instant::now());
        }
        let mut delay = DEBOUNCE;
        let mut next_period = Instant::now() + PERIOD;
        loop {
            let now = Instant::now();
            let until = match (due, periodic) {
                (Some(d), true) => Some(d.min(next_period)),
                (Some(d), false) => Some(d),
                (None, true) => Some(next_period),
                (None, false) => None,
            };
            let timeout = until
                .map(|u| u.saturating_duration_since(now))
                .and_then(|w| Timespec::try_from(w).ok());
            let (stopped, readable) = {
                let mut fds = vec![PollFd::new(&stop, PollFlags::IN)];
                if let Some(t) = &self.tree {
                    fds.push(PollFd::new(t.fd(), PollFlags::IN));
                }
                match rustix::event::poll(&mut fds, timeout.as_ref()) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => {
                        // Not expected; never spin, never stop watching.
                        degrade(
                            format!("cannot wait for inotify events: {e}"),
                            &mut periodic,
                        );
                        std::thread::sleep(PERIOD);
                    }
                }
                (
                    !fds[0].revents().is_empty(),
                    fds.get(1).is_some_and(|f| !f.revents().is_empty()),
                )
            };
            if stopped {
                return;
            }
            if readable {
                if let Some(tree) = &mut self.tree {
                    match tree.read() {
                        Ok(true) => {
                            due.get_or_insert_with(|| Instant::now() + delay);
                        }
                        Ok(false) => {}
                        Err(why) => {
                            degrade(why, &mut periodic);
                            due = Some(Instant::now());
                        }
                    }
                }
            }
            let now = Instant::now();
            let period_over = periodic && now >= next_period;
            if due.is_some_and(|d| now >= d) || period_over {
                due = None;
                let began = Instant::now();
                scan();
                let took = began.elapsed();
                delay = (took * 2).clamp(DEBOUNCE, MAX_DELAY);
                next_period = Instant::now() + PERIOD;
            }
        }
    }
}

impl Live {
    /// Stops the watch; a check under way finishes first.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        // The write end closed: the thread's poll sees the pipe hung up.
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(target_os = "linux")]
mod tree {
    use std::collections::HashMap;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    /// Everything that changes what a directory holds or what a file says. Not reads or
    /// opens: the check's own walk would trigger the next check.
    fn mask() -> WatchFlags {
        WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::MODIFY
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::ATTRIB
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW
    }

    /// An inotify instance with a watch on every directory of the trees added.
    pub struct Tree {
        fd: OwnedFd,
        /// Each watch's directory, as last placed (a directory moved keeps its watch, and is
        /// placed again at its new path when the move is read).
        dirs: HashMap<i32, PathBuf>,
        roots: Vec<PathBuf>,
    }

    impl Tree {
        pub fn new() -> Result<Tree, String> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).map_err(|e| {
                format!(
                    "the live watch of the MCP server's roots cannot start inotify ({e}; \
                     fs.inotify.max_user_instances is per user)"
                )
            })?;
            Ok(Tree {
                fd,
                dirs: HashMap::new(),
                roots: Vec::new(),
            })
        }

        pub fn fd(&self) -> &OwnedFd {
            &self.fd
        }

        /// Watches `top` and every directory below it (no link followed). Err: the watch is
        /// incomplete (the watch limit, most likely), with why.
        pub fn add_tree(&mut self, top: &Path) -> Result<(), String> {
            if !self.roots.iter().any(|r| top.starts_with(r)) {
                self.roots.push(top.to_path_buf());
            }
            let mut stack = vec![top.to_path_buf()];
            while let Some(dir) = stack.pop() {
                match inotify::add_watch(&self.fd, &dir, mask()) {
                    Ok(wd) => {
                        self.dirs.insert(wd, dir.clone());
                    }
                    // Gone or replaced by a non-directory since it was seen (its event is
                    // queued); unreadable to this user (as is it to the check's walk; a chmod
                    // that opens it is an event).
                    Err(Errno::NOENT | Errno::NOTDIR | Errno::ACCESS | Errno::LOOP) => continue,
                    Err(e) => {
                        return Err(format!(
                            "the live watch of the MCP server's roots cannot watch {} ({e}; \
                             with ENOSPC the limit is fs.inotify.max_user_watches, per user)",
                            dir.display()
                        ))
                    }
                }
                // Listed after the watch is in place: what appears later is an event.
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                }
            }
            Ok(())
        }

        /// Reads every queued event; whether any came. New directories are watched before
        /// this returns; a queue overflow places every watch again. Err: the watch became
        /// incomplete.
        pub fn read(&mut self) -> Result<bool, String> {
            let mut buf = [MaybeUninit::<u8>::uninit(); 64 * 1024];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            let mut any = false;
            let mut again = false;
            let mut new_dirs = Vec::new();
            loop {
                let event = match reader.next() {
                    Ok(e) => e,
                    Err(Errno::AGAIN | Errno::INTR) => break,
                    Err(e) => {
                        return Err(format!(
                            "the live watch of the MCP server's roots cannot read inotify ({e})"
                        ))
                    }
                };
                any = true;
                let flags = event.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    again = true;
                    continue;
                }
                if flags.contains(ReadFlags::IGNORED) {
                    self.dirs.remove(&event.wd());
                    continue;
                }
                // A directory that appeared (made, moved in) or whose mode changed (it may
                // have become readable): its whole tree, at its path now.
                if flags.contains(ReadFlags::ISDIR)
                    && flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO | ReadFlags::ATTRIB)
                {
                    if let (Some(parent), Some(name)) =
                        (self.dirs.get(&event.wd()), event.file_name())
                    {
                        use std::os::unix::ffi::OsStrExt;
                        new_dirs.push(parent.join(std::ffi::OsStr::from_bytes(name.to_bytes())));
                    }
                }
            }
            for d in new_dirs {
                self.add_tree(&d)?;
            }
            if again {
                for r in self.roots.clone() {
                    self.add_tree(&r)?;
                }
            }
            Ok(any)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod tree {
    use std::path::Path;

    /// No inotify here: the watch is periodic (never made).
    pub struct Tree {
        never: std::convert::Infallible,
    }

    impl Tree {
        pub fn new() -> Result<Tree, String> {
            Err("the live watch of the MCP server's roots needs inotify (Linux)".into())
        }
        pub fn fd(&self) -> &std::os::fd::OwnedFd {
            match self.never {}
        }
        pub fn add_tree(&mut self, _: &Path) -> Result<(), String> {
            match self.never {}
        }
        pub fn read(&mut self) -> Result<bool, String> {
            match self.never {}
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// Waits (generously: a loaded machine) until `n` reaches `want`.
    /// `placed` run with a check that counts and a degraded-mode report that is kept.
    fn counted(placed: Placed) -> (Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>, Live) {
        let n = Arc::new(AtomicUsize::new(0));
        let said = Arc::new(Mutex::new(Vec::<String>::new()));
        let (n2, s2) = (n.clone(), said.clone());
        let live = placed
            .run(
                move || {
                    n2.fetch_add(1, Ordering::SeqCst);
                },
                move |why| s2.lock().unwrap().push(why.to_string()),
            )
            .unwrap();
        (n, said, live)
    }

    fn reaches(n: &AtomicUsize, want: usize) -> bool {
        let end = Instant::now() + Duration::from_secs(30);
        while Instant::now() < end {
            if n.load(Ordering::SeqCst) >= want {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// A write anywhere in the tree triggers a check — in a directory that existed, in one
    /// made after the watch started (and in one made inside that), in one moved in — and
    /// nothing triggers one while nothing is written.
    #[test]
    fn every_write_under_a_root_triggers_a_check_and_idle_triggers_none() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("m/n")).unwrap();
        let placed = place(std::slice::from_ref(&root));
        assert!(placed.trouble.is_none(), "{:?}", placed.trouble);
        let (n, said, live) = counted(placed);
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(n.load(Ordering::SeqCst), 0, "a check without a write");
        // Each action triggers a check of its own: the last one's debounce is over first.
        let triggers = |what: &str, act: &dyn Fn()| {
            std::thread::sleep(MAX_DELAY * 2);
            let before = n.load(Ordering::SeqCst);
            act();
            assert!(reaches(&n, before + 1), "no check after {what}");
        };
        triggers("a write in a directory that existed", &|| {
            std::fs::write(root.join("a/b/.envrc"), "x").unwrap()
        });
        triggers("mkdir -p", &|| {
            std::fs::create_dir_all(root.join("new/deeper")).unwrap()
        });
        triggers("a write in a new directory", &|| {
            std::fs::write(root.join("new/deeper/.envrc"), "x").unwrap()
        });
        triggers("a tree moved in", &|| {
            std::fs::rename(outside.path().join("m"), root.join("a/m")).unwrap()
        });
        triggers("a write in a tree moved in", &|| {
            std::fs::write(root.join("a/m/n/.envrc"), "x").unwrap()
        });
        // Moved within the roots: watched at its new path.
        triggers("a move within", &|| {
            std::fs::rename(root.join("a/m"), root.join("moved")).unwrap()
        });
        triggers("mkdir in a directory moved within", &|| {
            std::fs::create_dir(root.join("moved/fresh")).unwrap()
        });
        triggers("a write there", &|| {
            std::fs::write(root.join("moved/fresh/.envrc"), "x").unwrap()
        });
        // A directory made unlistable (its plant then hidden from a listing) is a change too.
        triggers("a chmod of a directory", &|| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(root.join("a/b"), std::fs::Permissions::from_mode(0o300))
                .unwrap()
        });
        // Settled: no check for twice the debounce (a check the last writes triggered may
        // come late on a loaded machine); checks that never stop, writes or not, fail here.
        let settled = {
            let end = Instant::now() + Duration::from_secs(30);
            let mut seen = n.load(Ordering::SeqCst);
            loop {
                std::thread::sleep(MAX_DELAY * 2);
                let now = n.load(Ordering::SeqCst);
                if now == seen {
                    break now;
                }
                assert!(
                    Instant::now() < end,
                    "the checks never stopped after the writes"
                );
                seen = now;
            }
        };
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(n.load(Ordering::SeqCst), settled, "checks without writes");
        live.stop();
        // Listable again, so that the temporary directory can be removed by any user.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join("a/b"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            said.lock().unwrap().is_empty(),
            "{:?}",
            said.lock().unwrap()
        );
    }

    /// The watch limit met for real: in a user namespace of its own whose
    /// `max_inotify_watches` is 3 (this test runs itself again there under `unshare -U -r`),
    /// a tree of 6 directories cannot be watched whole; that is said, naming the limit, and
    /// the roots are checked every second, with no write at all.
    #[test]
    fn the_watch_limit_falls_back_to_a_check_every_second_and_says_so() {
        const NAME: &str =
            "mcp::wrap_live::tests::the_watch_limit_falls_back_to_a_check_every_second_and_says_so";
        if std::env::var_os("CORDON_TEST_IN_LIMITED_NS").is_none() {
            let out = std::process::Command::new("unshare")
                .args(["-U", "-r", "--"])
                .arg(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env("CORDON_TEST_IN_LIMITED_NS", "1")
                .output()
                .expect("unshare (util-linux) runs");
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "in the limited namespace: {text}"
            );
            return;
        }
        std::fs::write("/proc/sys/user/max_inotify_watches", "3").expect("set the ns's limit");
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/c/d/e")).unwrap();
        let placed = place(std::slice::from_ref(&root));
        let trouble = placed.trouble.clone().expect("the limit is met");
        assert!(trouble.contains("max_user_watches"), "{trouble}");
        let (n, said, live) = counted(placed);
        assert!(reaches(&n, 3), "not checked every second");
        live.stop();
        let said = said.lock().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("scanned every second"), "{said:?}");
    }

    /// Without inotify watches (the placement failed), the roots are checked every second and
    /// that is said once.
    #[test]
    fn without_watches_the_roots_are_checked_every_second_and_that_is_said() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let placed = Placed {
            roots: vec![root],
            tree: None,
            trouble: Some("no inotify (a test)".into()),
        };
        let (n, said, live) = counted(placed);
        assert!(reaches(&n, 3), "not checked every second");
        live.stop();
        let said = said.lock().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("no inotify (a test)"), "{said:?}");
        assert!(said[0].contains("scanned every second"), "{said:?}");
    }
}
