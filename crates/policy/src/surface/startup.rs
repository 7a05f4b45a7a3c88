//! What the operator's shell startup files run besides themselves. `~/.bashrc`, `~/.profile`
//! and the rest are on the surface ([`super::HOME_FILES`]), but installers have them load
//! files of their own at every shell: rustup's `. "$HOME/.cargo/env"`, nvm's
//! `\. "$NVM_DIR/nvm.sh"`, sdkman's, ghcup's, deno's `env` scripts, conda's
//! `'/home/u/miniconda3/bin/conda' 'shell.bash' 'hook'`; and they put their own directories
//! first on the PATH (`export PATH="$HOME/.cargo/bin:$PATH"`). With `~/.nvm` a writable root
//! (where `nvm install` writes), a run's rewrite of `nvm.sh` ran at the operator's next shell,
//! and nothing asked or looked. These are read here, once, for the file tools' decision and the
//! after-run scan ([`super::EnvPlace`], as the environment's own PATH is).
//!
//! A startup file is shell, so it is not parsed: each command of a line (split at `;`, `&`,
//! `|`, and past `if`/`then`/`do`/`{`) is read for `.`/`source FILE` and for a program run by
//! its path, a `PATH=` assignment for its directories. `~`, `$HOME` and a variable the file
//! itself set before from literal text are expanded; a word with any other expansion is left
//! out (not seen: what a word computes at run time). A sourced file is read the same way, a few
//! levels deep.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{EnvKind, EnvPlace};

const SOURCED_WHY: &str = "the operator's shell startup files (`~/.bashrc`, `~/.profile`, …) source or run it at every shell start";
const PATH_WHY: &str = "a directory the operator's shell startup files put on the PATH: a program written here is taken by its name at the next shell's command";

/// The startup files every shell of the operator's reads, relative to the home.
const STARTUP: &[&str] = &[
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bashrc",
    ".bash_aliases",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
];

/// How deep sourced files are followed, and how many files are read in all.
const DEPTH: usize = 3;
const MAX_FILES: usize = 32;
/// Startup files are small; a larger one is read no further.
const MAX_BYTES: u64 = 1 << 20;

/// Every reason a place of [`places`] gives: a reading kept between runs names its places'
/// reasons by these (`cordon_ossandbox`'s listings file), and one it cannot name is read again.
pub const WHYS: &[&str] = &[SOURCED_WHY, PATH_WHY];

/// The files the operator's shell startup files under `home` source or run by path, and the
/// directories they put on the PATH: absolute, lexically normal, as written (links are the
/// caller's to resolve).
pub fn places(home: &Path) -> Vec<EnvPlace> {
    places_read(home).0
}

/// [`places`], with every file it consulted (a startup file, a file one sources, in the order
/// tried) and whether it read it: all the places depend on, for a caller that keeps the
/// reading while those files stay as they were (the after-run scan, `cordon_ossandbox`).
pub fn places_read(home: &Path) -> (Vec<EnvPlace>, Vec<(PathBuf, bool)>) {
    let mut out: Vec<EnvPlace> = Vec::new();
    let mut read_files: Vec<PathBuf> = Vec::new();
    let mut consulted: Vec<(PathBuf, bool)> = Vec::new();
    let mut todo: Vec<(PathBuf, usize)> = STARTUP.iter().map(|f| (home.join(f), 0)).collect();
    todo.reverse();
    while let Some((file, depth)) = todo.pop() {
        if read_files.len() >= MAX_FILES || read_files.contains(&file) {
            continue;
        }
        read_files.push(file.clone());
        // (Never blocking on a FIFO a run left at a startup file's name.)
        let text = cordon_fs::safe::read_followed(&file, MAX_BYTES)
            .ok()
            .flatten();
        consulted.push((file.clone(), text.is_some()));
        let Some(text) = text else {
            continue;
        };
        for place in read(&text, home) {
            if place.kind == EnvKind::File && depth < DEPTH {
                todo.push((place.path.clone(), depth + 1));
            }
            if !out.contains(&place) {
                out.push(place);
            }
        }
    }
    (out, consulted)
}

/// The places one startup file's text names ([`places`]).
pub fn read(text: &[u8], home: &Path) -> Vec<EnvPlace> {
    let mut vars: HashMap<String, String> = HashMap::new();
    vars.insert("HOME".into(), home.display().to_string());
    let mut out = Vec::new();
    let text = String::from_utf8_lossy(text)
        .replace("\\\r\n", " ")
        .replace("\\\n", " ");
    for line in text.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        // `$(` and backquotes start a command of their own (conda's hook).
        let line = line.replace("$(", ";").replace('`', ";");
        for command in line.split([';', '&', '|']) {
            let mut words: Vec<String> = command
                .split_whitespace()
                .map(|w| w.replace(['"', '\''], ""))
                .collect();
            while words.first().is_some_and(|w| {
                matches!(
                    w.as_str(),
                    "if" | "then"
                        | "do"
                        | "else"
                        | "elif"
                        | "while"
                        | "until"
                        | "{"
                        | "("
                        | "!"
                        | "eval"
                )
            }) {
                words.remove(0);
            }
            if matches!(
                words.first().map(String::as_str),
                Some("export" | "local" | "declare" | "typeset" | "readonly")
            ) {
                words.remove(0);
            }
            let Some(first) = words.first() else {
                continue;
            };
            // `NAME=VALUE` (one word, quotes gone): kept for the words after it; PATH's
            // directories named (`$PATH` itself, or another expansion, left out).
            if let Some((name, value)) = first.split_once('=').filter(|(n, _)| {
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            }) {
                if name == "PATH" {
                    for dir in value.split(':').filter_map(|d| expand(d, &vars, home)) {
                        if Path::new(&dir).is_absolute() {
                            out.push(EnvPlace {
                                path: normal(Path::new(&dir)),
                                kind: EnvKind::PathDir,
                                why: PATH_WHY,
                            });
                        }
                    }
                }
                match expand(value, &vars, home) {
                    Some(v) => vars.insert(name.to_string(), v),
                    None => vars.remove(name),
                };
                continue;
            }
            let file = match first.trim_start_matches('\\') {
                "." | "source" => words.get(1),
                w if w.contains('/') => Some(first),
                _ => None,
            };
            if let Some(p) = file
                .and_then(|w| expand(w, &vars, home))
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
            {
                out.push(EnvPlace {
                    path: normal(&p),
                    kind: EnvKind::File,
                    why: SOURCED_WHY,
                });
            }
        }
    }
    out
}

/// `word` with `~/`, `$NAME` and `${NAME}` expanded from `vars`; `None` where any other
/// expansion is left.
fn expand(word: &str, vars: &HashMap<String, String>, home: &Path) -> Option<String> {
    let word = match word.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", home.display()),
        None if word == "~" => home.display().to_string(),
        None => word.to_string(),
    };
    let mut out = String::new();
    let mut rest = word.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        out.push_str(vars.get(name)?);
        rest = tail;
    }
    out.push_str(rest);
    Some(out)
}

fn normal(p: &Path) -> PathBuf {
    cordon_fs::links::lexical(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str) -> Vec<(PathBuf, EnvKind)> {
        read(text.as_bytes(), Path::new("/h"))
            .into_iter()
            .map(|p| (p.path, p.kind))
            .collect()
    }

    /// What the installers write into the startup files, as they write it.
    #[test]
    fn the_installers_lines_are_read() {
        use EnvKind::{File, PathDir};
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            files(". \"$HOME/.cargo/env\"\n"),
            [(p("/h/.cargo/env"), File)]
        );
        assert_eq!(
            files("export NVM_DIR=\"$HOME/.nvm\"\n[ -s \"$NVM_DIR/nvm.sh\" ] && \\. \"$NVM_DIR/nvm.sh\"  # This loads nvm\n"),
            [(p("/h/.nvm/nvm.sh"), File)]
        );
        assert_eq!(
            files("[[ -s \"$HOME/.sdkman/bin/sdkman-init.sh\" ]] && source \"$HOME/.sdkman/bin/sdkman-init.sh\"\n"),
            [(p("/h/.sdkman/bin/sdkman-init.sh"), File)]
        );
        assert_eq!(
            files("if [ -f ~/.bash_local ]; then . ~/.bash_local; fi\n"),
            [(p("/h/.bash_local"), File)]
        );
        assert_eq!(
            files(
                "__conda_setup=\"$('/h/miniconda3/bin/conda' 'shell.bash' 'hook' 2> /dev/null)\"\n"
            ),
            [(p("/h/miniconda3/bin/conda"), File)]
        );
        assert_eq!(
            files("export PATH=\"$HOME/.cargo/bin:$PATH\"\nexport BUN_INSTALL=\"$HOME/.bun\"\nexport PATH=$BUN_INSTALL/bin:$PATH\n"),
            [(p("/h/.cargo/bin"), PathDir), (p("/h/.bun/bin"), PathDir)]
        );
        // Not seen, and not over-read: a computed name, a command found on the PATH, data.
        assert_eq!(
            files("source \"$(pyenv root)/completions/pyenv.bash\"\neval \"$(pyenv init -)\"\nHISTFILE=~/.hist\nalias ll='ls -l'\n# . ~/.commented\n"),
            []
        );
    }
}
