//! A real pseudo-terminal for driving `cordon` the way a person would: the child gets the
//! pty as its controlling terminal and as stdin, stdout and stderr; the test reads the screen
//! and types keys.
#![allow(dead_code)] // each test file uses a different subset

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a step may take before the test calls it a hang: far above what a step takes on
/// a 2-core machine at load 10 (a cordon start and a few system calls: seconds at worst
/// there), so that only a real hang fails. A passing test never waits it out.
pub const DEADLINE: Duration = Duration::from_secs(180);

pub struct Pty {
    child: Child,
    master: File,
    screen: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Pty {
    /// Starts `cordon ARGS` in `dir` on a new pty of 100×40, with `env` added.
    pub fn cordon(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Pty {
        Pty::cordon_with_stdout(dir, args, env, None)
    }

    /// `cordon exec ARGS` on a new pty (see [`Pty::cordon`]), in `dir`, with sessions kept in
    /// a directory of their own beside `dir` (`XDG_RUNTIME_DIR`) and `env` added.
    pub fn exec(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Pty {
        Pty::exec_with_stdout(dir, args, env, None)
    }

    /// [`Pty::exec`] with stdout redirected to `stdout` (a file, a pipe) instead of the pty.
    pub fn exec_with_stdout(
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        stdout: Option<Stdio>,
    ) -> Pty {
        let mut all = vec!["exec"];
        all.extend_from_slice(args);
        let run = dir.join("..").join(format!(
            "{}-run",
            dir.file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&run).unwrap();
        let mut env = env.to_vec();
        env.push(("XDG_RUNTIME_DIR", run.to_str().unwrap()));
        Pty::cordon_with_stdout(dir, &all, &env, stdout)
    }

    /// [`Pty::cordon`] with stdout redirected to `stdout` (a file, a pipe) instead of the pty.
    pub fn cordon_with_stdout(
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        stdout: Option<Stdio>,
    ) -> Pty {
        Pty::cordon_as(dir, args, env, stdout, None)
    }

    /// [`Pty::cordon_with_stdout`] as the user and group `ids` (`None`: the test's own).
    pub fn cordon_as(
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        stdout: Option<Stdio>,
        ids: Option<(u32, u32)>,
    ) -> Pty {
        let mut cmd = crate::common::command(dir);
        // The locale is a UTF-8 one (`common::command`): outside one, cordon takes the bytes
        // 0x80-0x9F out of what the command prints and escapes what it shows itself.
        cmd.args(args)
            .env("TERM", "xterm")
            .envs(env.iter().copied());
        if let Some((uid, gid)) = ids {
            use std::os::unix::process::CommandExt;
            cmd.uid(uid).gid(gid);
        }
        Pty::spawn(cmd, stdout)
    }

    /// Starts `cmd` (any program: an agent host, say) on a new pty of 100×40 as its
    /// controlling terminal, stdin and stderr, and stdout unless `stdout` is given.
    pub fn spawn(mut cmd: std::process::Command, stdout: Option<Stdio>) -> Pty {
        // Both ends close-on-exec from the start: the tests of a binary run in parallel, and
        // openpty's descriptors are inheritable, so every child another test spawned while
        // this one lived got a copy of its master (and, while this spawn ran, of its slave)
        // and kept this terminal open past its test. The child gets the slave as 0-2 (dup2
        // leaves those inheritable).
        use rustix::pty::OpenptFlags;
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = rustix::pty::openpt(flags).unwrap();
        rustix::pty::grantpt(&master).unwrap();
        rustix::pty::unlockpt(&master).unwrap();
        let slave = rustix::pty::ioctl_tiocgptpeer(&master, flags).unwrap();
        let ws = rustix::termios::Winsize {
            ws_row: 40,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&master, ws).unwrap();
        let master = File::from(master);
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(stdout.unwrap_or_else(|| Stdio::from(slave.try_clone().unwrap())))
            .stderr(Stdio::from(slave));
        // SAFETY: the closure runs in the forked child before exec, where only
        // async-signal-safe functions may be called: setsid, ioctl and signal are plain system
        // calls (POSIX lists all three as async-signal-safe), it allocates nothing and takes
        // no lock, and `last_os_error` only reads errno. fd 0 is the pty slave set as stdin
        // above.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // A person's new terminal session starts with every signal's default action.
                // The test runner may not have: a background job of a non-interactive shell
                // ignores SIGINT and SIGQUIT, an ignored action survives exec, and Ctrl-C on
                // this terminal then reached a command that ignored it (stdio's Ctrl-C tests
                // failed every time when the test binary was started with `&`).
                for sig in [
                    libc::SIGINT,
                    libc::SIGQUIT,
                    libc::SIGHUP,
                    libc::SIGTSTP,
                    libc::SIGTTIN,
                    libc::SIGTTOU,
                ] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        drop(cmd); // close our copies of the slave, so the master sees EOF when the child ends
        let screen = Arc::new(Mutex::new(Vec::new()));
        let mut rd = master.try_clone().unwrap();
        let sc = screen.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                match rd.read(&mut buf) {
                    Ok(0) | Err(_) => break, // EIO once the child side is closed
                    Ok(n) => sc.lock().unwrap().extend_from_slice(&buf[..n]),
                }
            }
        });
        Pty {
            child,
            master,
            screen,
            reader: Some(reader),
        }
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The child's pid, for signalling it (not yet reaped while `self` lives).
    pub fn child_pid(&self) -> rustix::process::Pid {
        rustix::process::Pid::from_child(&self.child)
    }

    /// The terminal's local mode flags (ICANON, ECHO, ISIG, …) as the child left them.
    pub fn lflag(&self) -> libc::tcflag_t {
        rustix::termios::tcgetattr(&self.master)
            .unwrap()
            .local_modes
            .bits()
    }

    /// Resizes the terminal (the foreground process gets SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) {
        let ws = rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&self.master, ws).unwrap();
    }

    /// The path of the terminal's slave side (`/dev/pts/N`).
    pub fn slave_name(&self) -> String {
        rustix::pty::ptsname(&self.master, Vec::new())
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// Everything printed so far.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until the screen shows `text` (panics after [`DEADLINE`], printing the screen).
    pub fn expect(&self, text: &str) {
        let end = Instant::now() + DEADLINE;
        while Instant::now() < end {
            if self.screen().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("never saw {text:?} on the screen:\n{}", self.screen());
    }

    /// Whether the child reads keys itself: it has switched the terminal's line editing and
    /// echo off (raw mode), as a full-screen program does once its input handler is attached.
    pub fn reads_keys(&self) -> bool {
        self.lflag() & (libc::ICANON | libc::ECHO) == 0
    }

    /// Types `text` into a full-screen program's input box and presses Enter, each only when
    /// the program is ready for it: once it reads keys itself ([`Pty::reads_keys`]), `text` is
    /// typed; once the screen shows `shown` (a word of `text`) drawn after that, the text has
    /// reached the box, and Enter is pressed. The tests used to type after fixed sleeps,
    /// guessing when the program would be ready; a host drawing its prompt late under load is
    /// now waited for (up to [`DEADLINE`]), and a quick one is not waited for at all.
    pub fn submit(&mut self, text: &str, shown: &str) {
        let end = Instant::now() + DEADLINE;
        self.await_raw();
        let from = self.screen.lock().unwrap().len();
        self.send(text.as_bytes());
        let drawn = || {
            let s = self.screen.lock().unwrap();
            String::from_utf8_lossy(&s[from..]).contains(shown)
        };
        while !drawn() {
            assert!(
                Instant::now() < end,
                "the program never drew the typed {text:?} ({shown:?} not on the screen):\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.send(b"\r");
    }

    /// Presses `key` (Enter: `b"\r"`) in a full-screen program once it reads keys itself. A
    /// key typed before, while the terminal still edits lines, is held by the kernel and
    /// reaches the program translated (ICRNL makes Enter a `\n`).
    pub fn press(&mut self, key: &[u8]) {
        self.await_raw();
        self.send(key);
    }

    /// Waits (up to [`DEADLINE`]) until [`Pty::reads_keys`].
    fn await_raw(&self) {
        let end = Instant::now() + DEADLINE;
        while !self.reads_keys() {
            assert!(
                Instant::now() < end,
                "the program never switched the terminal to raw mode:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `bytes`.
    pub fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    /// Kills the child (a program that does not end on its own) with every process of its
    /// group, waits until none of them is left, then returns the screen. The child alone is
    /// not enough: Copilot CLI's npm loader runs the native program as its child, which
    /// outlived a kill of the loader and went on writing its session into HOME while the
    /// test's next step walked HOME (a file gone under `Env::give`'s chown).
    pub fn kill(mut self) -> String {
        // The child leads its own session and process group (setsid in `spawn`).
        let group = self.child_pid();
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        let _ = self.child.wait();
        let end = Instant::now() + DEADLINE;
        while let Some(pid) = live_in_group(group.as_raw_nonzero().get()) {
            assert!(
                Instant::now() < end,
                "process {pid} of the killed program's group is still running:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.screen()
    }

    /// Whether the child exits within `limit` (it is reaped; [`Pty::finish`] still returns
    /// its code).
    pub fn exits_within(&mut self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The child's process tree as `/proc` shows it, one line per process: state, process
    /// group, session, the foreground group of its terminal (tpgid) and its signal masks
    /// (pending, blocked, ignored, caught): what a lost signal is told by.
    pub fn tree(&self) -> String {
        let mut ppid = Vec::new();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            if let Some((_, rest)) = stat.rsplit_once(") ") {
                let f: Vec<&str> = rest.split_whitespace().collect();
                if let Some(pp) = f.get(1).and_then(|v| v.parse::<i32>().ok()) {
                    ppid.push((pid, pp, stat.clone()));
                }
            }
        }
        let mut tree = vec![self.pid()];
        let mut i = 0;
        while i < tree.len() {
            let parent = tree[i];
            tree.extend(
                ppid.iter()
                    .filter(|(_, pp, _)| *pp == parent)
                    .map(|(p, _, _)| *p),
            );
            i += 1;
        }
        let mut out = String::new();
        for pid in tree {
            let Some((_, _, stat)) = ppid.iter().find(|(p, _, _)| *p == pid) else {
                continue;
            };
            let (head, rest) = stat.rsplit_once(") ").unwrap_or((stat, ""));
            let f: Vec<&str> = rest.split_whitespace().collect();
            let masks: Vec<String> = std::fs::read_to_string(format!("/proc/{pid}/status"))
                .unwrap_or_default()
                .lines()
                .filter(|l| {
                    ["SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "NSpid"]
                        .iter()
                        .any(|k| l.starts_with(k))
                })
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
            out.push_str(&format!(
                "{head}) state {} pgrp {} session {} tpgid {} | {}\n",
                f.first().unwrap_or(&"?"),
                f.get(2).unwrap_or(&"?"),
                f.get(3).unwrap_or(&"?"),
                f.get(5).unwrap_or(&"?"),
                masks.join(", ")
            ));
        }
        out
    }

    /// Waits for the exit code, and returns it with the whole screen.
    pub fn finish(self) -> (i32, String) {
        let (code, screen, _) = self.finish_with_lflag();
        (code, screen)
    }

    /// [`Pty::finish`], plus the terminal's local mode flags after the child exited.
    pub fn finish_with_lflag(mut self) -> (i32, String, libc::tcflag_t) {
        let end = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("cordon did not exit:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader ends when the pty's last slave descriptor closes.
        let _ = self.master.as_raw_fd();
        if let Some(r) = self.reader.take() {
            let end = Instant::now() + DEADLINE;
            while !r.is_finished() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let lflag = self.lflag();
        (status.code().unwrap_or(-1), self.screen(), lflag)
    }
}

/// A process of group `pgid` that is not yet dead (a zombie waiting for its parent's wait is
/// dead: it runs nothing and writes nothing), from `/proc`.
fn live_in_group(pgid: i32) -> Option<i32> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // `PID (COMM) STATE PPID PGRP …`: COMM may hold spaces and parentheses, so the
        // fields are counted from its last `)`.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue; // gone meanwhile
        };
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 2 && f[2].parse() == Ok(pgid) && f[0] != "Z" && f[0] != "X" {
            return Some(pid);
        }
    }
    None
}
