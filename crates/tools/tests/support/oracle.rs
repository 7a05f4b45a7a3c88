//! bash as the oracle (issue 22): runs a line under real bash in a throw-away directory, under
//! `strace -f`, and reports what bash really did: every program it executed (the path and the
//! argv, argv[0] included), every path it wrote (opened for writing, created, removed,
//! renamed, linked) and every network connection it tried.
//!
//! The programs a line may name run from a `PATH` of their own: the read-only tools a line may
//! use are the real ones (`ls`, `cat`, `grep`, `find`, `xargs`, `env`, `sed`, `sh` is dash,
//! …), everything else is a stub that does nothing (`rm`, `curl`, `git`, `pytest`, `npm`):
//! what matters is that bash *executed* it, with which words. The line runs with an empty
//! environment but that `PATH` and a `HOME` inside the throw-away directory, standard input
//! from `/dev/null`, and a deadline.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The real programs a generated line may run (looked up once, on the machine's `PATH`).
pub const REAL: &[&str] = &[
    "ls", "cat", "echo", "grep", "find", "xargs", "env", "timeout", "nice", "sed", "sort", "head",
    "wc", "touch", "mkdir", "printf", "test", "true", "false", "bash", "dash", "tr",
    // Round 10: programs that run what their input or configuration names.
    "perl", "gpg", "apt-get",
    // Round 11: interpreters no table had, and writers outside the roots (scripts/test-deps.sh).
    "php", "lua5.4", "m4", "zstd", "wget",
];
/// Programs that are stubs: executed, recorded, harmless.
pub const STUBS: &[&str] = &[
    "rm", "curl", "git", "pytest", "npm", "sudo", "make", "python3", "zsh", "ksh",
];

/// What bash did.
#[derive(Debug, Default)]
pub struct Trace {
    /// Programs executed after bash itself: (path, argv).
    pub execs: Vec<(String, Vec<String>)>,
    /// Paths written (absolute, as the kernel resolved them where strace shows it).
    pub writes: Vec<PathBuf>,
    /// Network connections tried (`connect` on an `AF_INET`/`AF_INET6` socket).
    pub connects: Vec<String>,
}

/// A throw-away place to run lines in: `ws/` (the workspace, the line's directory and the
/// policy's writable root), `home/`, `bin/` (the `PATH`).
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub ws: PathBuf,
    bin: PathBuf,
    home: PathBuf,
}

/// Fails loudly when a tool the oracle needs is missing: a test that cannot run must not pass.
pub fn require_tools() {
    for tool in ["strace", "bash", "dash"] {
        let found = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "the bash oracle needs `{tool}` (installed by .ci/run: apt-get install strace dash)"
        );
    }
}

fn which(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!("the bash oracle needs `{name}` installed");
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (ws, bin, home) = (base.join("ws"), base.join("bin"), base.join("home"));
        for d in [&ws, &bin, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        for name in REAL {
            std::os::unix::fs::symlink(which(name), bin.join(name)).unwrap();
        }
        std::os::unix::fs::symlink(which("dash"), bin.join("sh")).unwrap();
        for name in STUBS {
            let p = bin.join(name);
            std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Sandbox { dir, ws, bin, home }
    }

    /// Fresh workspace content for a line: a few files and a `src/` directory.
    fn reset(&self) {
        let _ = std::fs::remove_dir_all(&self.ws);
        std::fs::create_dir_all(self.ws.join("src")).unwrap();
        std::fs::write(self.ws.join("x"), "a\nhi\n").unwrap();
        std::fs::write(self.ws.join("src/main.py"), "print('hi')\n").unwrap();
        std::fs::write(self.ws.join("src/x"), "x\n").unwrap();
    }

    /// Runs `line` with bash (`-c`) under strace and returns what it did.
    pub fn run(&self, line: &str) -> Trace {
        self.reset();
        let out = self.dir.path().join("trace");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let mut child = Command::new(which("strace"))
            .args(["-f", "-ff", "-qq", "-y", "-s", "65535", "-e"])
            .arg(
                "trace=execve,execveat,openat,open,creat,rename,renameat,renameat2,unlink,unlinkat,\
                 mkdir,mkdirat,symlink,symlinkat,link,linkat,truncate,connect",
            )
            .arg("-o")
            .arg(out.join("t"))
            .arg("--")
            // timeout kills bash's whole process group at the deadline (what a line left
            // running in the background included).
            .arg(which("timeout"))
            .args(["-s", "KILL", "20"])
            .arg(which("bash"))
            .args(["--norc", "--noprofile", "-c", line])
            .env_clear()
            .env("PATH", &self.bin)
            .env("HOME", &self.home)
            .current_dir(&self.ws)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("strace starts");
        // A backstop only: timeout ends the line first.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("strace did not end after its line was killed: {line:?}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut trace = Trace::default();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let mut cwd = self.ws.clone();
            for l in text.lines() {
                parse_line(l, &mut cwd, &mut trace);
            }
        }
        // timeout and bash themselves.
        trace.execs.retain(|(path, argv)| {
            let started = |prog: &str, first: &str| {
                Path::new(path) == which(prog) && argv.get(1).is_some_and(|a| a == first)
            };
            !(started("bash", "--norc") || started("timeout", "-s"))
        });
        trace
    }
}

/// One argument of a traced call.
#[derive(Debug)]
enum Arg {
    Str(String),
    List(Vec<String>),
    /// A descriptor with its path (`3</x>`, `AT_FDCWD</ws>`), or any other token.
    Other(String),
}

impl Arg {
    fn fd_path(&self) -> Option<PathBuf> {
        let Arg::Other(t) = self else { return None };
        let open = t.find('<')?;
        Some(PathBuf::from(t[open + 1..].strip_suffix('>')?))
    }
    fn text(&self) -> Option<&str> {
        match self {
            Arg::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn parse_string(b: &[u8], i: &mut usize) -> String {
    // At the opening quote.
    *i += 1;
    let mut out = Vec::new();
    while *i < b.len() {
        let c = b[*i];
        *i += 1;
        match c {
            b'"' => break,
            b'\\' => {
                let e = b.get(*i).copied().unwrap_or(b'\\');
                *i += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'v' => out.push(0x0b),
                    b'f' => out.push(0x0c),
                    b'x' => {
                        let h = std::str::from_utf8(&b[*i..*i + 2]).unwrap_or("0");
                        out.push(u8::from_str_radix(h, 16).unwrap_or(0));
                        *i += 2;
                    }
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        for _ in 0..2 {
                            match b.get(*i) {
                                Some(d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    *i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push(v as u8);
                    }
                    other => out.push(other),
                }
            }
            other => out.push(other),
        }
    }
    // strace marks a string it cut with `...` after the quote.
    if b.get(*i..*i + 3) == Some(b"...") {
        *i += 3;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The arguments of `name(args) = ret`, and the return value's leading integer.
fn parse_call(line: &str) -> Option<(&str, Vec<Arg>, i64)> {
    let open = line.find('(')?;
    let name = &line[..open];
    if !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    let b = line.as_bytes();
    let mut i = open + 1;
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut token = String::new();
    let mut list: Option<Vec<String>> = None;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let s = parse_string(b, &mut i);
                match &mut list {
                    Some(l) if depth == 1 => l.push(s),
                    _ if depth == 0 => args.push(Arg::Str(s)),
                    _ => {}
                }
                continue;
            }
            b'[' if depth == 0 && token.trim().is_empty() => {
                list = Some(Vec::new());
                depth = 1;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some(l) = list.take() {
                        args.push(Arg::List(l));
                    }
                }
            }
            b',' if depth == 0 => {
                if !token.trim().is_empty() {
                    args.push(Arg::Other(token.trim().to_string()));
                }
                token.clear();
            }
            b')' if depth == 0 => {
                if !token.trim().is_empty() {
                    args.push(Arg::Other(token.trim().to_string()));
                }
                let rest = line[i + 1..].trim_start().strip_prefix('=')?.trim_start();
                let end = rest
                    .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                    .unwrap_or(rest.len());
                let ret = rest[..end].parse().ok()?;
                return Some((name, args, ret));
            }
            _ if depth == 0 => token.push(c as char),
            _ => {}
        }
        i += 1;
    }
    None
}

fn parse_line(line: &str, cwd: &mut PathBuf, trace: &mut Trace) {
    let Some((name, args, ret)) = parse_call(line) else {
        return;
    };
    if ret < 0 {
        return;
    }
    let at = |dirfd: Option<&Arg>, path: Option<&Arg>, cwd: &Path| -> Option<PathBuf> {
        let p = Path::new(path?.text()?);
        if p.is_absolute() {
            return Some(p.to_path_buf());
        }
        Some(
            dirfd
                .and_then(Arg::fd_path)
                .unwrap_or(cwd.to_path_buf())
                .join(p),
        )
    };
    // The working directory, where strace shows it.
    if let Some(d) = args.first().and_then(Arg::fd_path) {
        if matches!(args.first(), Some(Arg::Other(t)) if t.starts_with("AT_FDCWD")) {
            *cwd = d;
        }
    }
    let mut write = |p: Option<PathBuf>| {
        if let Some(p) = p {
            trace.writes.push(p);
        }
    };
    let flags = |a: Option<&Arg>| match a {
        Some(Arg::Other(f)) => {
            f.contains("O_WRONLY")
                || f.contains("O_RDWR")
                || f.contains("O_CREAT")
                || f.contains("O_TRUNC")
        }
        _ => false,
    };
    match name {
        "execve" | "execveat" => {
            let (p, l) = if name == "execve" { (0, 1) } else { (1, 2) };
            let path = args.get(p).and_then(Arg::text).unwrap_or("").to_string();
            let argv = match args.get(l) {
                Some(Arg::List(l)) => l.clone(),
                _ => Vec::new(),
            };
            trace.execs.push((path, argv));
        }
        "openat" if flags(args.get(2)) => write(at(args.first(), args.get(1), cwd)),
        "open" if flags(args.get(1)) => write(at(None, args.first(), cwd)),
        "creat" | "truncate" | "mkdir" | "unlink" => write(at(None, args.first(), cwd)),
        "unlinkat" | "mkdirat" => write(at(args.first(), args.get(1), cwd)),
        "rename" | "link" => {
            if name == "rename" {
                write(at(None, args.first(), cwd));
            }
            write(at(None, args.get(1), cwd));
        }
        "symlink" => write(at(None, args.get(1), cwd)),
        "symlinkat" => write(at(args.get(1), args.get(2), cwd)),
        "renameat" | "renameat2" | "linkat" => {
            if name != "linkat" {
                write(at(args.first(), args.get(1), cwd));
            }
            write(at(args.get(2), args.get(3), cwd));
        }
        "connect" if line.contains("AF_INET") => trace.connects.push(line.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn strace_lines_are_read() {
        let (n, a, r) = parse_call(
            r#"execve("/b/rm", ["rm", "-rf", "a \"b\"\n", "]"], 0x55 /* 5 vars */) = 0"#,
        )
        .unwrap();
        assert_eq!((n, r), ("execve", 0));
        assert!(matches!(&a[1], Arg::List(l) if l == &["rm", "-rf", "a \"b\"\n", "]"]));
    }
}
