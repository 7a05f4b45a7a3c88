//! What git's configuration puts on the surface outside a git directory: the directory
//! `core.hooksPath` names (git runs every hook there) and the files `include.path` and
//! `includeIf.*.path` name (git reads each as configuration). Read as git 2.47 reads it
//! (`config.c`'s parser, transcribed below): a value git would take is never missed; what
//! cannot be read with certainty is an error, which the callers take as "on the surface".

use std::path::{Path, PathBuf};

/// git's limit of nested includes (`MAX_INCLUDE_DEPTH`); deeper, git dies.
const MAX_INCLUDE_DEPTH: usize = 10;

/// What a set of configuration files names beyond a git directory.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Named {
    /// Every `core.hooksPath` value set (not only the last: one of them may be the effective
    /// one in another reading, a conditional include), `~/` taken at the home; a relative one
    /// is relative to the work tree's top (the git directory of a bare repository), where git
    /// runs hooks.
    pub hooks: Vec<PathBuf>,
    /// Every file an include names (existing or not: a file written there later is read as
    /// configuration), absolute. Conditional includes are taken whatever their condition.
    pub includes: Vec<PathBuf>,
    /// Every `core.worktree` value set, as written (relative to the git directory): git runs
    /// hooks at that work tree's top, so a relative `core.hooksPath` is taken from there too.
    pub worktrees: Vec<PathBuf>,
}

/// Why a configuration could not be read with certainty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// One `section.key = value` of a configuration file: the section lower-cased with its
/// subsection (`includeif.gitdir:x`), the key lower-cased, the value (`None`: a key with no
/// `=`, git's boolean true).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub section: String,
    pub key: String,
    /// As bytes: a path git takes byte for byte (a Latin-1 name) is compared as it is.
    pub value: Option<Vec<u8>>,
}

/// git's `isspace` (sane-ctype: space, `\t`, `\n`, `\r`; not `\v` or `\f`).
fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn keychar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// A configuration file's bytes as git reads them: a leading UTF-8 BOM skipped, `\r\n` taken
/// as `\n`, the end of the file as a last `\n`.
struct Source<'a> {
    text: &'a [u8],
    at: usize,
    eof: bool,
}

impl Source<'_> {
    fn next(&mut self) -> u8 {
        let Some(&c) = self.text.get(self.at) else {
            self.eof = true;
            return b'\n';
        };
        self.at += 1;
        if c == b'\r' && self.text.get(self.at) == Some(&b'\n') {
            self.at += 1;
            return b'\n';
        }
        c
    }
}

/// Every entry of a configuration file, as git's `git_parse_source` reads it; an error where
/// git stops with "bad config line".
pub(crate) fn parse(text: &[u8]) -> Result<Vec<Entry>, String> {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let mut s = Source {
        text,
        at: 0,
        eof: false,
    };
    let mut entries = Vec::new();
    // A key before any section is read by git as a name without one (`hooksPath` alone).
    let mut section = String::new();
    let mut comment = false;
    loop {
        let c = s.next();
        if s.eof {
            return Ok(entries);
        }
        if c == b'\n' {
            comment = false;
            continue;
        }
        if comment || space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            section = section_name(&mut s)?;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(format!("bad config line (byte {})", s.at));
        }
        let (key, value) = key_value(&mut s, c)?;
        entries.push(Entry {
            section: section.clone(),
            key,
            value,
        });
    }
}

/// `[name]`, `[name "sub"]` (the subsection as written, `\x` taken as `x`) or the old
/// `[name.sub]`: the name lower-cased, `.sub` after it.
fn section_name(s: &mut Source) -> Result<String, String> {
    let mut name = Vec::new();
    loop {
        let c = s.next();
        if s.eof {
            return Err("a section header without `]`".into());
        }
        if c == b']' {
            break;
        }
        if space(c) {
            // `[base "extension"]`
            let mut c = c;
            while space(c) {
                if c == b'\n' {
                    return Err("a section header broken by a new line".into());
                }
                c = s.next();
            }
            if c != b'"' {
                return Err("a subsection not in double quotes".into());
            }
            name.push(b'.');
            loop {
                let mut c = s.next();
                if c == b'\n' {
                    return Err("a subsection broken by a new line".into());
                }
                if c == b'"' {
                    break;
                }
                if c == b'\\' {
                    c = s.next();
                    if c == b'\n' {
                        return Err("a subsection broken by a new line".into());
                    }
                }
                name.push(c);
            }
            if s.next() != b']' {
                return Err("a section header without `]`".into());
            }
            break;
        }
        if !keychar(c) && c != b'.' {
            return Err("a section name with a character git refuses".into());
        }
        name.push(c.to_ascii_lowercase());
    }
    Ok(String::from_utf8_lossy(&name).into_owned())
}

/// A key starting with `first` and its value (git's `get_value` and `parse_value`).
fn key_value(s: &mut Source, first: u8) -> Result<(String, Option<Vec<u8>>), String> {
    let mut key = vec![first.to_ascii_lowercase()];
    let mut c;
    loop {
        c = s.next();
        if s.eof || !keychar(c) {
            break;
        }
        key.push(c.to_ascii_lowercase());
    }
    while c == b' ' || c == b'\t' {
        c = s.next();
    }
    let key = String::from_utf8_lossy(&key).into_owned();
    if c == b'\n' {
        return Ok((key, None));
    }
    if c != b'=' {
        return Err(format!("`{key}` not followed by `=`"));
    }
    let mut value = Vec::new();
    let (mut quote, mut comment) = (false, false);
    let mut trim: usize = 0;
    loop {
        let mut c = s.next();
        if c == b'\n' {
            if quote {
                return Err(format!("`{key}`: a value with an open double quote"));
            }
            if trim != 0 {
                value.truncate(trim);
            }
            return Ok((key, Some(value)));
        }
        if comment {
            continue;
        }
        if space(c) && !quote {
            if trim == 0 {
                trim = value.len();
            }
            if !value.is_empty() {
                value.push(c);
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        trim = 0;
        if c == b'\\' {
            c = s.next();
            c = match c {
                b'\n' => continue,
                b't' => b'\t',
                b'b' => 8,
                b'n' => b'\n',
                b'\\' | b'"' => c,
                _ => return Err(format!("`{key}`: an escape git refuses")),
            };
            value.push(c);
            continue;
        }
        if c == b'"' {
            quote = !quote;
            continue;
        }
        value.push(c);
    }
}

/// A path value as git's `interpolate_path` takes it: `~/` at the home; `~user/` and
/// `%(prefix)/` are not followed (an error: what they name is not known here).
fn interpolate(value: &[u8], home: Option<&Path>) -> Result<PathBuf, Unreadable> {
    use std::os::unix::ffi::OsStrExt;
    let shown = String::from_utf8_lossy(value);
    if value == b"~" || value.starts_with(b"~/") {
        let home = home.ok_or_else(|| Unreadable(format!("`{shown}` and no home is known")))?;
        let rest: &[u8] = &value[1..];
        let rest = &rest[rest.iter().take_while(|&&c| c == b'/').count()..];
        return Ok(home.join(std::ffi::OsStr::from_bytes(rest)));
    }
    if value.starts_with(b"~") || value.starts_with(b"%(prefix)/") {
        return Err(Unreadable(format!("`{shown}` is not followed here")));
    }
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(value)))
}

/// The largest configuration file read; a larger one is unreadable (every write asks).
const MAX_CONFIG: u64 = 16 << 20;

/// Reads `file` (and what it includes) into `named`. A file that does not exist is no error
/// (git skips it); one that exists and cannot be read is.
pub fn read(
    file: &Path,
    home: Option<&Path>,
    named: &mut Named,
    depth: usize,
) -> Result<(), Unreadable> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(Unreadable(format!(
            "includes nested deeper than git's {MAX_INCLUDE_DEPTH} at {}",
            file.display()
        )));
    }
    // Never blocking: a FIFO a run left there is unreadable, not waited on.
    let text = match cordon_fs::safe::read_followed(file, MAX_CONFIG) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(()),
        // A directory by that name: git says "is a directory" and skips it.
        Err(_) if file.is_dir() => return Ok(()),
        Err(e) => return Err(Unreadable(e.to_string())),
    };
    let entries = parse(&text).map_err(|e| Unreadable(format!("{}: {e}", file.display())))?;
    for e in entries {
        let include =
            e.key == "path" && (e.section == "include" || e.section.starts_with("includeif."));
        let hooks = e.section == "core" && e.key == "hookspath";
        if e.section == "core" && e.key == "worktree" {
            // Taken as written (git does not expand `~` there).
            if let Some(w) = e.value.as_deref().filter(|w| !w.is_empty()) {
                use std::os::unix::ffi::OsStrExt;
                named
                    .worktrees
                    .push(PathBuf::from(std::ffi::OsStr::from_bytes(w)));
            }
            continue;
        }
        if !include && !hooks {
            continue;
        }
        let Some(value) = e.value else {
            return Err(Unreadable(format!(
                "{}: `{}.{}` without a value",
                file.display(),
                e.section,
                e.key
            )));
        };
        if value.is_empty() {
            continue;
        }
        // Newer git reads `:(optional)PATH` as PATH, older git as it is: both.
        let mut values = vec![value.clone()];
        if let Some(rest) = value.strip_prefix(b":(optional)") {
            values.push(rest.to_vec());
        }
        for value in values {
            let path = interpolate(&value, home)?;
            if hooks {
                named.hooks.push(path);
                continue;
            }
            let path = match file.parent() {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            };
            if !named.includes.contains(&path) {
                named.includes.push(path.clone());
                read(&path, home, named, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// One `key = value` given to git outside a file, as `read` takes it from a file's entry:
/// `core.hooksPath` a hooks directory, an include a file (absolute only: git refuses a relative
/// include that does not come from a file, and stops).
fn entry_outside_a_file(
    key: &str,
    value: Option<&str>,
    home: Option<&Path>,
    named: &mut Named,
) -> Result<(), Unreadable> {
    let key = key.trim().to_ascii_lowercase();
    let include =
        key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"));
    if key != "core.hookspath" && !include {
        return Ok(());
    }
    let value = value.ok_or_else(|| Unreadable(format!("`{key}` without a value")))?;
    if value.is_empty() {
        return Ok(());
    }
    let path = interpolate(value.as_bytes(), home)?;
    if !include {
        named.hooks.push(path);
        return Ok(());
    }
    if path.is_relative() {
        return Err(Unreadable(format!("`{key}` relative outside a file")));
    }
    if !named.includes.contains(&path) {
        named.includes.push(path.clone());
        read(&path, home, named, 1)?;
    }
    Ok(())
}

/// git's `sq_dequote_step`: a shell single-quoted word (`'a'\''b'` is `a'b`) at the start of
/// `s`, and what follows it.
fn sq_word(s: &str) -> Option<(String, &str)> {
    let mut rest = s.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        // `'\''` and `'\!'` resume the quoted word with that character.
        match rest.as_bytes() {
            [b'\\', c @ (b'\'' | b'!'), b'\'', ..] => {
                word.push(*c as char);
                rest = &rest[3..];
            }
            _ => return Some((word, rest)),
        }
    }
}

/// What the environment gives git as configuration in every repository, read where git reads
/// it (`config.c`'s `git_config_from_parameters`): `GIT_CONFIG_PARAMETERS` (what `git -c`
/// passes to the programs it runs: `'key'='value'`, or the older `'key=value'`) and
/// `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`. A form git refuses is an
/// error here too.
pub fn environment(
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    named: &mut Named,
) -> Result<(), Unreadable> {
    let text = |name: &str| {
        var(name)
            .map(|v| {
                v.into_string()
                    .map_err(|_| Unreadable(format!("{name} is not UTF-8")))
            })
            .transpose()
    };
    if let Some(params) = text("GIT_CONFIG_PARAMETERS")? {
        let bogus = || Unreadable("GIT_CONFIG_PARAMETERS: a form git refuses".into());
        let mut rest = params.trim_start_matches(space_char);
        while !rest.is_empty() {
            let (key, after) = sq_word(rest).ok_or_else(bogus)?;
            rest = after;
            if let Some(after) = rest.strip_prefix('=') {
                // `'key'='value'`, or `'key'=` (a key with no value).
                let value = if after.starts_with('\'') {
                    let (value, after) = sq_word(after).ok_or_else(bogus)?;
                    rest = after;
                    Some(value)
                } else {
                    rest = after;
                    None
                };
                if !rest.is_empty() && !rest.starts_with(space_char) {
                    return Err(bogus());
                }
                entry_outside_a_file(&key, value.as_deref(), home, named)?;
            } else if rest.is_empty() || rest.starts_with(space_char) {
                let (key, value) = match key.split_once('=') {
                    Some((k, v)) => (k, Some(v)),
                    None => (key.as_str(), None),
                };
                entry_outside_a_file(key, value, home, named)?;
            } else {
                return Err(bogus());
            }
            rest = rest.trim_start_matches(space_char);
        }
    }
    if let Some(count) = text("GIT_CONFIG_COUNT")? {
        let count: usize = count
            .parse()
            .map_err(|_| Unreadable(format!("GIT_CONFIG_COUNT `{count}` is not a count")))?;
        for i in 0..count {
            // A pair missing: git stops with an error before running anything.
            let (Some(key), Some(value)) = (
                text(&format!("GIT_CONFIG_KEY_{i}"))?,
                text(&format!("GIT_CONFIG_VALUE_{i}"))?,
            ) else {
                break;
            };
            entry_outside_a_file(&key, Some(&value), home, named)?;
        }
    }
    Ok(())
}

fn space_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The operator's own configuration files git reads in every repository: the system's, the
/// global ones (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`), also where the environment
/// moves them (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`).
pub fn operator_files(
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("/etc/gitconfig")];
    for v in ["GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"] {
        files.extend(var(v).map(PathBuf::from).filter(|p| p.is_absolute()));
    }
    match var("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(x) if x.is_absolute() => files.push(x.join("git/config")),
        _ => files.extend(home.map(|h| h.join(".config/git/config"))),
    }
    files.extend(home.map(|h| h.join(".gitconfig")));
    files
}

/// The operator's configuration files git takes at the top of the repository it runs in:
/// where `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` or `XDG_CONFIG_HOME` is relative, git reads it
/// from there (checked with git 2.47's `config --show-origin` from a subdirectory), so each
/// repository's own file by that name is the operator's global configuration. Relative paths,
/// for the caller to take at each repository's top.
pub fn operator_files_at_top(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let relative = |v: &str| {
        var(v)
            .map(PathBuf::from)
            .filter(|p| !p.as_os_str().is_empty() && p.is_relative())
    };
    let mut files: Vec<PathBuf> = ["GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"]
        .into_iter()
        .filter_map(relative)
        .collect();
    files.extend(relative("XDG_CONFIG_HOME").map(|x| x.join("git/config")));
    files
}

/// The configuration files of the repository whose git directory is `git_dir`: its common
/// directory's `config` (where `commondir` points), and `config.worktree` in both.
pub fn repository_files(git_dir: &Path) -> Result<Vec<PathBuf>, Unreadable> {
    let common = match cordon_fs::safe::read_followed(&git_dir.join("commondir"), MAX_CONFIG) {
        Ok(Some(t)) => {
            let t = String::from_utf8_lossy(&t);
            let named = t.trim_end_matches(['\n', '\r']);
            git_dir.join(named)
        }
        Ok(None) => git_dir.to_path_buf(),
        Err(e) => return Err(Unreadable(e.to_string())),
    };
    let mut files = vec![common.join("config"), git_dir.join("config.worktree")];
    if common != git_dir {
        files.push(common.join("config.worktree"));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(text: &str) -> Result<Vec<String>, String> {
        Ok(parse(text.as_bytes())?
            .into_iter()
            .filter(|e| e.section == "core" && e.key == "hookspath")
            .map(|e| String::from_utf8_lossy(&e.value.unwrap_or_default()).into_owned())
            .collect())
    }

    /// What the real git reads from `text`: its `core.hooksPath` values, or an error where it
    /// refuses the file.
    fn git_reads(text: &str) -> Result<Vec<String>, ()> {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config");
        std::fs::write(&f, text).unwrap();
        let o = std::process::Command::new("git")
            .args(["config", "--file"])
            .arg(&f)
            .args(["--get-all", "core.hookspath"])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        match o.status.code() {
            Some(0) => Ok(String::from_utf8(o.stdout)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()),
            Some(1) => Ok(vec![]),
            _ => Err(()),
        }
    }

    /// Each case as the real git reads it, too: the transcription is checked against git.
    #[test]
    fn values_are_read_as_git_reads_them() {
        for (text, want) in [
            ("[core]\n\thooksPath = .githooks\n", vec![".githooks"]),
            ("[CORE]\nHOOKSPATH=\"a b\"\n", vec!["a b"]),
            ("[core]hooksPath=x", vec!["x"]),
            ("[core] hookspath = x ; comment\n", vec!["x"]),
            ("[core]\nhookspath = \"x;y\" # c\n", vec!["x;y"]),
            ("[core]\nhookspath = a\\\nb\n", vec!["ab"]),
            ("[core]\nhookspath = a\\\"b\n", vec!["a\"b"]),
            ("[core]\r\nhookspath = x\r\n", vec!["x"]),
            ("\u{feff}[core]\nhookspath = x\n", vec!["x"]),
            (
                "[core]\nhookspath = x\n[core]\nhookspath = y\n",
                vec!["x", "y"],
            ),
            (
                "[core \"x\"]\nhookspath = a\n[core.x]\nhookspath = b\n",
                vec![],
            ),
            ("[alias]\nhooksPath = x\n", vec![]),
            ("[core]\n# hooksPath = x\n", vec![]),
            ("hooksPath = x\n", vec![]),
        ] {
            assert_eq!(hooks(text).unwrap(), want, "{text:?}");
            assert_eq!(
                git_reads(text),
                Ok(want.iter().map(|w| w.to_string()).collect()),
                "git: {text:?}"
            );
        }
        for bad in [
            "core.hooksPath = x\n",
            "[core\nhookspath = x\n",
            "[core]\nhookspath = \"x\n",
            "[core]\nhookspath = \\q\n",
            "[core]\n1x = y\n",
            "[core]\nhookspath x\n",
        ] {
            assert!(hooks(bad).is_err(), "{bad:?}");
            assert_eq!(git_reads(bad), Err(()), "git: {bad:?}");
        }
    }

    /// The environment's configuration (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`) is read
    /// as the real git reads it: each case's `core.hooksPath` values are git's, and a form git
    /// refuses is refused here.
    #[test]
    fn the_environments_configuration_is_read_as_git_reads_it() {
        let home = tempfile::tempdir().unwrap();
        let git = |env: &[(&str, &str)]| {
            let o = std::process::Command::new("git")
                .current_dir(home.path())
                .env("HOME", home.path())
                .env("XDG_CONFIG_HOME", home.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env_remove("GIT_CONFIG_GLOBAL")
                .env_remove("GIT_CONFIG_PARAMETERS")
                .env_remove("GIT_CONFIG_COUNT")
                .envs(env.iter().copied())
                .args(["config", "--get-all", "core.hookspath"])
                .output()
                .expect("git runs");
            match o.status.code() {
                Some(0) => Ok(String::from_utf8(o.stdout)
                    .unwrap()
                    .lines()
                    .map(PathBuf::from)
                    .collect::<Vec<_>>()),
                Some(1) => Ok(vec![]),
                _ => Err(()),
            }
        };
        let ours = |env: &[(&str, &str)]| {
            let mut named = Named::default();
            let var = |k: &str| {
                env.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            };
            environment(None, &var, &mut named)
                .map(|()| named.hooks)
                .map_err(|_| ())
        };
        for env in [
            &[("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/a b'")][..],
            &[("GIT_CONFIG_PARAMETERS", "'core.hooksPath=/x'")],
            &[("GIT_CONFIG_PARAMETERS", "'Core.HooksPath'='/it'\\''s'")],
            &[(
                "GIT_CONFIG_PARAMETERS",
                "'a.b'='c'  'core.hookspath'='/y' 'x.y'=",
            )],
            &[("GIT_CONFIG_PARAMETERS", "'core.x.hookspath'='/n'")],
            &[
                ("GIT_CONFIG_COUNT", "2"),
                ("GIT_CONFIG_KEY_0", "alias.x"),
                ("GIT_CONFIG_VALUE_0", "y"),
                ("GIT_CONFIG_KEY_1", "CORE.hookspath"),
                ("GIT_CONFIG_VALUE_1", "/z"),
            ],
        ] {
            let want = git(env);
            assert!(want.is_ok(), "git refuses {env:?}");
            assert_eq!(ours(env), want, "{env:?}");
        }
        for bad in [
            &[("GIT_CONFIG_PARAMETERS", "core.hookspath=/x")][..],
            &[("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/x")],
            &[("GIT_CONFIG_PARAMETERS", "'core.hookspath'x")],
            &[("GIT_CONFIG_COUNT", "x")],
        ] {
            assert_eq!(git(bad), Err(()), "git takes {bad:?}");
            assert_eq!(ours(bad), Err(()), "{bad:?}");
        }
    }

    /// A path git takes byte for byte (a Latin-1 `h\xe9`) is named as it is, not as
    /// U+FFFD: the real git reads the same bytes, and the included file is found and read.
    #[test]
    fn values_that_are_not_utf8_are_kept_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let b = d.path();
        let name = std::ffi::OsStr::from_bytes(b"inc\xe9.cfg");
        std::fs::write(b.join("config"), b"[include]\n\tpath = inc\xe9.cfg\n").unwrap();
        std::fs::write(b.join(name), b"[core]\n\thooksPath = h\xe9\n").unwrap();
        let mut named = Named::default();
        read(&b.join("config"), None, &mut named, 0).unwrap();
        assert_eq!(named.includes, vec![b.join(name)]);
        let hooks = std::ffi::OsStr::from_bytes(b"h\xe9");
        assert_eq!(named.hooks, vec![PathBuf::from(hooks)]);
        let o = std::process::Command::new("git")
            .args(["config", "--includes", "--file"])
            .arg(b.join("config"))
            .args(["--get", "core.hookspath"])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert_eq!(o.stdout, b"h\xe9\n", "{o:?}");
    }

    #[test]
    fn includes_are_followed_and_named() {
        let d = tempfile::tempdir().unwrap();
        let b = d.path();
        std::fs::write(
            b.join("config"),
            "[include]\n\tpath = shared.cfg\n[includeIf \"gitdir:/nowhere/\"]\n\tpath = ~/cond.cfg\n",
        )
        .unwrap();
        std::fs::write(b.join("shared.cfg"), "[core]\n\thooksPath = hooks-here\n").unwrap();
        let mut named = Named::default();
        read(&b.join("config"), Some(Path::new("/h")), &mut named, 0).unwrap();
        assert_eq!(named.hooks, vec![PathBuf::from("hooks-here")]);
        assert_eq!(
            named.includes,
            vec![b.join("shared.cfg"), PathBuf::from("/h/cond.cfg")]
        );
        // An include loop ends here (each file is read once); git stops at its depth limit.
        std::fs::write(b.join("loop.cfg"), "[include]\npath = loop2.cfg\n").unwrap();
        std::fs::write(b.join("loop2.cfg"), "[include]\npath = loop.cfg\n").unwrap();
        let mut named = Named::default();
        assert!(read(&b.join("loop.cfg"), None, &mut named, 0).is_ok());
        for bad in ["[include]\npath\n", "[core]\nhooksPath = ~other/h\n"] {
            std::fs::write(b.join("bad.cfg"), bad).unwrap();
            let mut named = Named::default();
            assert!(
                read(&b.join("bad.cfg"), None, &mut named, 0).is_err(),
                "{bad}"
            );
        }
    }
}
