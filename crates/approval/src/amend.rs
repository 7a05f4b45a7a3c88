//! "Approve always": rules persisted to a rules file beside the policy.
//!
//! An [`Amendment`] is never broader than the request it comes from: its pattern is the
//! request's key, word for word, with every glob character escaped, written as an **exact**
//! rule (`exact = true`), so it matches that command and nothing else — not the same line
//! with more words after it (`git push origin main --force`), and not another program of the
//! same name (`./git`). (A key is a simple command's words: environment assignments before
//! it, and redirections, are not part of it; the shell tool asks about any assignment that may
//! change what runs, whatever the rules say.) It is refused for interpreters and wrappers
//! (`sh`, `python`, `java`, `sudo`, `xargs`, `bwrap`, `ld-linux-x86-64.so.2`, …), whose first
//! words say nothing about what would run; for programs named by a path (`./build.sh`,
//! `bin/tool`, `/tmp/x`), whose file can change after approval; and for keys a rule cannot
//! state exactly (a word with whitespace, an empty word).
//!
//! A connection (tool `network`, key `network HOST:PORT`) is remembered as that host and
//! port exactly (a `[[network.rules]]` table, `host = "api.example.org:443"`), never as the
//! host's subdomains or other ports. It is a rule, not an address exception: a name that
//! resolves to a loopback, private or metadata address is still refused by the proxy unless
//! the policy's `[network]` lists that address.
//!
//! The rules file is checked with the policy's own parser ([`cordon_policy::RulesFile`]:
//! `version = 1`, `[[shell.rules]]` and `[[network.rules]]` tables, nothing else); its rules
//! are added after the policy's, as persisted grants: they relax an ask, never an explicit
//! deny.
//!
//! The file lies beside the policy, maybe in a directory a sandboxed command could write (a
//! run under another policy, or from a parent directory, reaches it). So its content is
//! pinned in the operator's trust store ([`cordon_policy::trust`]): [`append`] and
//! [`retract`] re-pin what they wrote, `cordon policy trust FILE` pins an edit by hand, and
//! [`load`] refuses rules whose content is not pinned. A file that grants nothing (empty, or
//! [`RULES_FILE_HEADER`] alone) needs no pin.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use cordon_policy::network::{self, Host, Target, NETWORK_TOOL};
use cordon_policy::trust::{self, FileText, Follow, Pinned, TrustStore};
use cordon_policy::{basename, Action, HostPattern, PolicyError, RulesFile};

use crate::request::{Key, Request};
use crate::Error;

/// The header a new rules file starts with.
pub const RULES_FILE_HEADER: &str =
    "# Rules remembered by cordon (\"approve always\"). Each one allows exactly the command\n\
     # (word for word, exact = true) or the host and port it was approved for. Edit or delete\n\
     # them freely.\nversion = 1\n";

/// Programs whose arguments are code or another command line, or that run another program
/// given in their arguments: never persisted. Matched on the basename, with a version suffix
/// dropped (`python3.12`, `ksh93`, `node18`).
const REFUSED: &[&[&str]] = &[
    SHELLS,
    INTERPRETERS,
    PACKAGE_RUNNERS,
    PRIVILEGE,
    WRAPPERS,
    SANDBOXES,
    DEBUGGERS,
    BUILTINS,
];

const SHELLS: &[&str] = &[
    "ash",
    "bash",
    "bosh",
    "csh",
    "dash",
    "elvish",
    "es",
    "fish",
    "ksh",
    "lksh",
    "loksh",
    "mksh",
    "nu",
    "oksh",
    "pdksh",
    "posh",
    "powershell",
    "pwsh",
    "rbash",
    "rc",
    "sh",
    "tcsh",
    "xonsh",
    "yash",
    "zsh",
];

/// Interpreters and REPLs: their arguments (or input) are code (`sqlite3` runs `.shell`).
const INTERPRETERS: &[&str] = &[
    "awk",
    "bun",
    "deno",
    "dotnet",
    "gawk",
    "groovy",
    "ipython",
    "irb",
    "java",
    "jshell",
    "julia",
    "lua",
    "luajit",
    "mawk",
    "mono",
    "nawk",
    "node",
    "nodejs",
    "osascript",
    "perl",
    "php",
    "pypy",
    "python",
    "R",
    "Rscript",
    "ruby",
    "sqlite3",
    "swift",
    "tclsh",
    "wish",
];

/// Runners of packages fetched by name.
const PACKAGE_RUNNERS: &[&str] = &["bunx", "npx", "pipx", "uvx"];

/// Privilege and identity: run the command they are given (or a shell).
const PRIVILEGE: &[&str] = &[
    "doas", "newgrp", "pkexec", "runuser", "setpriv", "sg", "su", "sudo",
];

/// Wrappers and runners: run the command (or command string) they are given.
const WRAPPERS: &[&str] = &[
    "builtin",
    "busybox",
    "caffeinate",
    "catchsegv",
    "chroot",
    "chronic",
    "chrt",
    "command",
    "coproc",
    "dbus-run-session",
    "entr",
    "env",
    "exec",
    "expect",
    "fakechroot",
    "fakeroot",
    "faketime",
    "find",
    "flock",
    "gtimeout",
    "hyperfine",
    "ionice",
    "nice",
    "nohup",
    "numactl",
    "parallel",
    "prlimit",
    "proxychains",
    "rlwrap",
    "script",
    "setarch",
    "setsid",
    "ssh",
    "stdbuf",
    "systemd-run",
    "taskset",
    "time",
    "timeout",
    "torsocks",
    "unbuffer",
    "valgrind",
    "watch",
    "xargs",
    "xvfb-run",
];

/// Sandboxes and namespaces: run the command they are given.
const SANDBOXES: &[&str] = &["bwrap", "firejail", "nsenter", "proot", "unshare"];

/// Debuggers and tracers: run (and can change) the program they are given.
const DEBUGGERS: &[&str] = &["gdb", "lldb", "ltrace", "strace"];

/// Builtins that run code given as text or read from a file.
const BUILTINS: &[&str] = &[".", "eval", "source", "trap"];

/// Dynamic loaders, run as programs (`ld-linux-x86-64.so.2 PROG`, `/lib/ld-musl-x86_64.so.1
/// PROG`): they run the program they are given. Matched as prefixes of the basename.
const REFUSED_PREFIXES: &[&str] = &["ld-linux", "ld-musl", "ld.so", "ld64.so"];

/// A rule to persist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amendment {
    /// `shell` or `network`.
    pub tool: String,
    /// The key it was made from.
    pub key: Key,
    /// `shell`: the key's words, glob characters escaped, as an exact rule's pattern.
    /// `network`: the key's `HOST:PORT`, as a `[[network.rules]]` host.
    pub pattern: String,
    /// Always [`Action::Allow`].
    pub action: Action,
}

impl Amendment {
    /// The amendment for one key of `tool`.
    pub fn for_key(tool: &str, key: &Key) -> Result<Amendment, Error> {
        if tool == NETWORK_TOOL {
            return Amendment::for_connection(key);
        }
        if tool != "shell" {
            return Err(Error::UnsupportedTool {
                tool: tool.to_string(),
            });
        }
        let words = key.words();
        let Some(first) = words.first() else {
            return Err(Error::NoKeys);
        };
        if let Some(program) = refused_program(first) {
            return Err(Error::Interpreter { program });
        }
        // `./build.sh`, `bin/tool`, `/tmp/x`: a rule would keep allowing whatever the file
        // holds later (an agent can rewrite a script in its workspace).
        if first.contains('/') {
            return Err(Error::PathProgram {
                program: first.clone(),
            });
        }
        let mut pattern = String::new();
        for w in words {
            if w.is_empty() || w.contains(char::is_whitespace) {
                return Err(Error::Inexpressible { word: w.clone() });
            }
            if !pattern.is_empty() {
                pattern.push(' ');
            }
            pattern.push_str(&escape_word(w));
        }
        Ok(Amendment {
            tool: tool.to_string(),
            key: key.clone(),
            pattern,
            action: Action::Allow,
        })
    }

    /// A connection's key, `["network", "HOST:PORT"]` (normalised by the `network` tool): that
    /// host and port, exactly.
    fn for_connection(key: &Key) -> Result<Amendment, Error> {
        let [tool, target] = key.words() else {
            return Err(Error::NoKeys);
        };
        if tool != NETWORK_TOOL || target.contains('*') {
            return Err(Error::Inexpressible {
                word: target.clone(),
            });
        }
        // The key is a normalised target; as an entry it must name that host and port and
        // nothing else (no subdomains, no other port).
        let inexpressible = || Error::Inexpressible {
            word: target.clone(),
        };
        let parsed = Target::parse(target).map_err(|_| inexpressible())?;
        let rule = network::parse_rule(target, unlocated()).map_err(|_| inexpressible())?;
        let same_host = match (&rule.host, &parsed.host) {
            (HostPattern::Name(a), Host::Name(b)) => a == b,
            (HostPattern::Addr(a), Host::Addr(b)) => a == b,
            _ => false,
        };
        if !same_host || rule.port != Some(parsed.port) || !rule.pattern.matches(key.words()) {
            return Err(inexpressible());
        }
        Ok(Amendment {
            tool: NETWORK_TOOL.to_string(),
            key: key.clone(),
            pattern: rule.written,
            action: Action::Allow,
        })
    }

    /// One amendment per key of the request; refused as a whole if any key is refused.
    pub fn for_request(req: &Request) -> Result<Vec<Amendment>, Error> {
        if req.keys.is_empty() {
            return Err(Error::NoKeys);
        }
        req.keys
            .iter()
            .map(|k| Amendment::for_key(&req.tool, k))
            .collect()
    }

    /// The exact TOML [`append`] writes for it (show it verbatim before saving).
    pub fn to_toml(&self) -> String {
        if self.tool == NETWORK_TOOL {
            return format!(
                "\n[[network.rules]]\nhost = {}\naction = \"{}\"\n",
                toml_string(&self.pattern),
                self.action.as_str()
            );
        }
        format!(
            "\n[[shell.rules]]\npattern = {}\nexact = true\naction = \"{}\"\n",
            toml_string(&self.pattern),
            self.action.as_str()
        )
    }
}

/// A location for an entry parsed outside any file.
fn unlocated() -> cordon_policy::Location {
    cordon_policy::Location {
        file: String::new(),
        line: 0,
        col: 0,
    }
}

/// The refused program a command name stands for (basename; `python3.12` is `python3`).
fn refused_program(first: &str) -> Option<String> {
    let name = basename(first);
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let stem = if stem.is_empty() { name } else { stem };
    let refused = REFUSED
        .iter()
        .flat_map(|g| g.iter())
        .any(|r| *r == name || *r == stem)
        || REFUSED_PREFIXES.iter().any(|p| name.starts_with(p));
    refused.then(|| name.to_string())
}

/// A word as a literal pattern token: glob characters (and `\` where globs apply) escaped.
fn escape_word(w: &str) -> String {
    const SPECIAL: [char; 6] = ['*', '?', '[', ']', '{', '}'];
    if !w.contains(SPECIAL) {
        return w.to_string(); // a literal token: matched as is, `\` included
    }
    let mut out = String::with_capacity(w.len() + 4);
    for c in w.chars() {
        if SPECIAL.contains(&c) || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The rules file beside a policy file: `cordon.rules.toml` in the same directory.
pub fn rules_file_for(policy_path: &Path) -> PathBuf {
    policy_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(cordon_policy::RULES_FILE_NAME)
}

/// The rules of a rules file (none when it does not exist), checked by the policy parser.
/// Rules whose content the trust `store` does not pin are refused
/// ([`PolicyError::Untrusted`]); the file is read as [`trust::read_file`] reads (no symlink,
/// regular file, bounded size).
pub fn load(path: &Path, store: &TrustStore) -> Result<RulesFile, Error> {
    let file = match trust::read_file(path, Follow::Never) {
        Err(PolicyError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(RulesFile::default())
        }
        other => other?,
    };
    if grants_nothing(&file.text) {
        return Ok(RulesFile::default());
    }
    store.check(&file, Pinned::Rules)?;
    let base = file.path.parent().unwrap_or(Path::new("/"));
    Ok(RulesFile::parse(
        &file.text,
        &path.display().to_string(),
        base,
    )?)
}

/// Empty, whitespace only (just created, or a placeholder) or the header alone: no rules.
fn grants_nothing(text: &str) -> bool {
    text.trim().is_empty() || text == RULES_FILE_HEADER
}

/// Refuses to build on rules the trust store does not pin: cordon must never re-pin, and so
/// bless, what a command planted.
fn check_pinned(
    file: &File,
    path: &Path,
    text: &str,
    store: &TrustStore,
) -> Result<FileText, Error> {
    let pinned = FileText {
        path: trust::real_path_of(file, path),
        text: text.to_string(),
    };
    if !grants_nothing(text) {
        store.check(&pinned, Pinned::Rules)?;
    }
    Ok(pinned)
}

/// Pins the rules file's new content.
fn pin(pinned: FileText, store: &TrustStore, path: &Path) -> Result<(), Error> {
    store
        .trust(&pinned)
        .map(|_| ())
        .map_err(|e| Error::RulesFile {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("cannot record the rules' trust: {e}")),
        })
}

/// Creates the rules file with [`RULES_FILE_HEADER`] when it is missing (so that it can be
/// protected as an existing file while a sandboxed command runs). `true` when it was created.
/// Whole or not at all (`create_whole`): a cordon killed between creating it and writing the
/// header left a rules file without it, which every later `ensure` took for the operator's.
pub fn ensure(path: &Path) -> Result<bool, Error> {
    let (dir, name) = rules_dir(path)?;
    match dir.create_whole(Path::new(name), RULES_FILE_HEADER.as_bytes(), 0o644) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(rules_error(path, e)),
    }
}

/// Appends `amendment` to the rules file at `path` (created with [`RULES_FILE_HEADER`] when
/// missing), under an exclusive lock, and returns the exact text it wrote — `None` when the
/// file already has a rule with the same pattern and action. The file with the new rule must
/// still parse as a policy, or nothing is written. The data is synced before returning, and
/// the new content pinned in `store`; rules there that the store does not pin are refused.
pub fn append(
    path: &Path,
    store: &TrustStore,
    amendment: &Amendment,
) -> Result<Option<String>, Error> {
    let io = |source| Error::RulesFile {
        path: path.to_path_buf(),
        source,
    };
    let file = open_rules_file(path, true)?;
    let _lock = cordon_fs::lock::exclusive(&file, RULES_LOCK_DEADLINE).map_err(|e| io(e.into()))?;
    let mut text = String::new();
    (&file).seek(SeekFrom::Start(0)).map_err(io)?;
    (&file).read_to_string(&mut text).map_err(io)?;
    let pinned = check_pinned(&file, path, &text, store)?;
    let base = std::path::absolute(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("/"));
    let name = path.display().to_string();
    let mut add = String::new();
    if text.trim().is_empty() {
        add.push_str(RULES_FILE_HEADER);
    } else {
        let existing = RulesFile::parse(&text, &name, &base)?;
        // The same rule, not a broader one that happens to cover it: a hand-written
        // `*.example.org` may be edited away later, and the record would claim a rule saved.
        let already = if amendment.tool == NETWORK_TOOL {
            let wanted = network::parse_rule(&amendment.pattern, unlocated()).map_err(|_| {
                Error::Inexpressible {
                    word: amendment.pattern.clone(),
                }
            })?;
            existing.network.iter().any(|r| {
                r.pattern.as_str() == wanted.pattern.as_str() && r.action == amendment.action
            })
        } else {
            existing.shell.iter().any(|r| {
                r.pattern.as_str() == amendment.pattern
                    && r.pattern.is_exact()
                    && r.action == amendment.action
            })
        };
        if already {
            return Ok(None);
        }
        if !text.ends_with('\n') {
            add.push('\n');
        }
    }
    add.push_str(&amendment.to_toml());
    let full = if text.trim().is_empty() {
        add.clone()
    } else {
        format!("{text}{add}")
    };
    RulesFile::parse(&full, &name, &base)?;
    let mut kept = text.len() as u64;
    if text.trim().is_empty() && !text.is_empty() {
        file.set_len(0).map_err(io)?; // whitespace only: start clean
        kept = 0;
    }
    if let Err(e) = (&file)
        .write_all(add.as_bytes())
        .and_then(|()| file.sync_data())
    {
        // A full disk cut the rule short: a torn tail is neither the pinned content nor valid
        // rules, and would refuse every later run until edited by hand. Still under the lock.
        let _ = file.set_len(kept);
        return Err(io(e));
    }
    pin(
        FileText {
            text: full,
            ..pinned
        },
        store,
        path,
    )?;
    Ok(Some(add))
}

/// Opens the rules file to read and append (creating it when `create`), never through a
/// symlink at any component of its path: cordon (maybe as root) would otherwise write a rule
/// to whatever a link planted at its name, or at a directory on the way, points at. The path
/// is the policy's directory (canonical when the policy was loaded) and the file name, so a
/// link found there now was put there since. Only a regular file with one name is accepted:
/// it is appended to and truncated in place, which would change a second name's file too (a
/// hard link a command made to a file of its choice, written behind the after-run scan).
fn open_rules_file(path: &Path, create: bool) -> Result<File, Error> {
    let (dir, name) = rules_dir(path)?;
    let file = dir
        .open_read_append(Path::new(name), 0o644, create)
        .map_err(|e| rules_error(path, e))?;
    let io = |source| Error::RulesFile {
        path: path.to_path_buf(),
        source,
    };
    let names = std::os::unix::fs::MetadataExt::nlink(&file.metadata().map_err(io)?);
    if names != 1 {
        return Err(io(std::io::Error::other(format!(
            "it has {names} names (hard links), and cordon changes it in place, which would change the file under the other names too (a sandboxed command could have linked it); find the other names with `find / -xdev -samefile {}` and remove those you did not make",
            path.display()
        ))));
    }
    Ok(file)
}

/// The rules file's directory, walked from `/` without following a link, and its name.
fn rules_dir(path: &Path) -> Result<(cordon_fs::safe::Dir, &std::ffi::OsStr), Error> {
    let io = |source| Error::RulesFile {
        path: path.to_path_buf(),
        source,
    };
    let abs = std::path::absolute(path).map_err(io)?;
    let (Some(parent), Some(name)) = (abs.parent(), path.file_name()) else {
        return Err(io(std::io::Error::other("not a file name")));
    };
    let dir = cordon_fs::safe::Dir::open_absolute(parent).map_err(|e| rules_error(path, e))?;
    Ok((dir, name))
}

/// A link-safe walk's refusal (naming the link) as the rules file's error.
fn rules_error(path: &Path, e: cordon_fs::safe::SafeError) -> Error {
    Error::RulesFile {
        path: path.to_path_buf(),
        source: std::io::Error::new(e.kind(), e.to_string()),
    }
}

/// Takes back a rule [`append`] wrote: removes `written` (the text `append` returned) from
/// the end of the rules file, under the same lock. For a decision that could not be recorded
/// after its rule was saved: nothing may stay granted that the audit log does not show.
/// Returns whether it was removed (`false`: the file no longer ends with it, e.g. another
/// writer appended since; it is then left as it is). The shorter content is pinned in `store`;
/// a file whose content the store does not pin is left as it is (and refused when loaded).
pub fn retract(path: &Path, store: &TrustStore, written: &str) -> Result<bool, Error> {
    let io = |source| Error::RulesFile {
        path: path.to_path_buf(),
        source,
    };
    let file = open_rules_file(path, false)?;
    let _lock = cordon_fs::lock::exclusive(&file, RULES_LOCK_DEADLINE).map_err(|e| io(e.into()))?;
    let mut text = String::new();
    (&file).read_to_string(&mut text).map_err(io)?;
    if written.is_empty() || !text.ends_with(written) {
        return Ok(false);
    }
    let pinned = check_pinned(&file, path, &text, store)?;
    let kept = text[..text.len() - written.len()].to_string();
    file.set_len(kept.len() as u64).map_err(io)?;
    file.sync_data().map_err(io)?;
    pin(
        FileText {
            text: kept,
            ..pinned
        },
        store,
        path,
    )?;
    Ok(true)
}

/// How long a rules-file change waits for another one: each holds the lock for one read, a
/// parse and one synced write.
const RULES_LOCK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::Pattern;

    fn am(line: &str) -> Result<Amendment, Error> {
        Amendment::for_key("shell", &Key::split(line))
    }

    #[test]
    fn pattern_is_the_key_with_globs_escaped() {
        assert_eq!(
            am("git push origin main").unwrap().pattern,
            "git push origin main"
        );
        let a = am("rm *.txt").unwrap();
        assert_eq!(a.pattern, r"rm \*.txt");
        let p = Pattern::exact(&a.pattern).unwrap();
        assert!(p.matches(&["rm", "*.txt"]));
        assert!(
            !p.matches(&["rm", "a.txt"]),
            "never broader than the request"
        );
        let a = am(r"echo a\*[b]").unwrap();
        let p = Pattern::exact(&a.pattern).unwrap();
        assert!(p.matches(&["echo", r"a\*[b]"]));
        assert!(!p.matches(&["echo", r"a\xb"]));
    }

    #[test]
    fn interpreters_and_wrappers_are_refused() {
        for line in [
            "sh -c ls",
            "bash x.sh",
            "/usr/bin/python3 -c 1",
            "python3.12 x.py",
            "sudo ls",
            "xargs rm",
            "env X=1 ls",
            "find . -delete",
            "node x.js",
            "timeout 5 ls",
        ] {
            let e = am(line).unwrap_err();
            assert!(matches!(e, Error::Interpreter { .. }), "{line}: {e}");
            assert!(e.to_string().contains("runs other code"), "{e}");
        }
        assert!(am("git status").is_ok());
        assert!(matches!(
            Amendment::for_key("write_file", &Key::split("write_file a")),
            Err(Error::UnsupportedTool { .. })
        ));
        assert!(matches!(
            Amendment::for_key("shell", &Key::new(["git", "commit", "-m", "a b"])),
            Err(Error::Inexpressible { .. })
        ));
    }

    #[test]
    fn saved_rules_are_exact_and_never_broader_than_the_request() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cordon.rules.toml");
        let store = TrustStore::at(dir.path().join("config/cordon"));
        let a = am("git push origin main").unwrap();
        let wrote = append(&file, &store, &a).unwrap().unwrap();
        assert!(wrote.contains("exact = true"), "{wrote}");
        assert!(
            append(&file, &store, &a).unwrap().is_none(),
            "de-duplicated"
        );
        let rules = load(&file, &store).unwrap().shell;
        assert_eq!(rules.len(), 1);
        let p = &rules[0].pattern;
        assert!(p.is_exact());
        assert!(p.matches(&["git", "push", "origin", "main"]));
        for broader in [
            &["git", "push", "origin", "main", "--force"][..],
            &["./git", "push", "origin", "main"],
            &["/tmp/x/git", "push", "origin", "main"],
        ] {
            assert!(!p.matches(broader), "{broader:?}");
        }
        // A hand-written prefix rule with the same pattern is not the same rule.
        let prefix = dir.path().join("prefix.toml");
        std::fs::write(
            &prefix,
            "version = 1\n[[shell.rules]]\npattern = \"git push origin main\"\naction = \"allow\"\n",
        )
        .unwrap();
        let written = trust::read_file(&prefix, Follow::Never).unwrap();
        store.trust(&written).unwrap();
        assert!(append(&prefix, &store, &a).unwrap().is_some());
    }

    fn connection(target: &str) -> Key {
        let t = Target::parse(target).unwrap();
        Key::new(t.key())
    }

    #[test]
    fn a_connection_is_remembered_as_exactly_its_host_and_port() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cordon.rules.toml");
        let store = TrustStore::at(dir.path().join("config/cordon"));
        for (target, host) in [
            ("API.Example.org:443", "api.example.org:443"),
            ("10.0.0.5:5432", "10.0.0.5:5432"),
            ("[::1]:8080", "[::1]:8080"),
            ("bücher.example:80", "xn--bcher-kva.example:80"),
        ] {
            let a = Amendment::for_key(NETWORK_TOOL, &connection(target)).unwrap();
            assert_eq!(a.pattern, host);
            let wrote = append(&file, &store, &a).unwrap().unwrap();
            assert_eq!(
                wrote.trim_start_matches(RULES_FILE_HEADER),
                format!("\n[[network.rules]]\nhost = \"{host}\"\naction = \"allow\"\n")
            );
            assert!(
                append(&file, &store, &a).unwrap().is_none(),
                "de-duplicated"
            );
        }
        let rules = load(&file, &store).unwrap();
        assert!(rules.shell.is_empty());
        assert_eq!(rules.network.len(), 4);
        let p = &rules.network[0].pattern;
        assert!(p.matches(connection("api.example.org:443").words()));
        // Not another port, not a subdomain, not the parent domain.
        for other in [
            "api.example.org:80",
            "x.api.example.org:443",
            "example.org:443",
            "api.example.org.evil:443",
        ] {
            assert!(
                !rules
                    .network
                    .iter()
                    .any(|r| r.pattern.matches(connection(other).words())),
                "{other}"
            );
        }
        // A broader rule already there is not this one: the exact host and port is written.
        let broad = dir.path().join("broad.toml");
        std::fs::write(
            &broad,
            "version = 1\n[[network.rules]]\nhost = \"*.example.org\"\naction = \"allow\"\n",
        )
        .unwrap();
        store
            .trust(&trust::read_file(&broad, Follow::Never).unwrap())
            .unwrap();
        let a = Amendment::for_key(NETWORK_TOOL, &connection("api.example.org:443")).unwrap();
        assert!(append(&broad, &store, &a).unwrap().is_some());
        assert!(
            append(&broad, &store, &a).unwrap().is_none(),
            "now it is there"
        );
        // What is not a normalised target is never written.
        for key in [
            Key::new(["network", "*.example.org:443"]),
            Key::new(["network", "example.org"]),
            Key::new(["network"]),
            Key::new(["network", "a:1", "b:2"]),
            Key::new(["shell", "example.org:443"]),
        ] {
            assert!(Amendment::for_key(NETWORK_TOOL, &key).is_err(), "{key:?}");
        }
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(toml_string("x\u{7}"), r#""x\u0007""#);
    }
}
