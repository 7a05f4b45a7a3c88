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
//! levels deep, with the variables its sourcer set (a sourced file runs in the same shell:
//! `ZSH="$HOME/.oh-my-zsh"` in `~/.zshrc` is what `oh-my-zsh.sh` loads its files from).
//!
//! A loop that sources what it names (`for rc in ~/.bashrc.d/*; do . "$rc"; done`, Fedora's
//! default `.bashrc`; zsh's `for f ("$ZSH_CUSTOM"/*.zsh(N)) source "$f"`, oh-my-zsh's) names
//! each of its words: a file as `source FILE` does, and a glob's directory as one whose every
//! file is sourced (kind [`EnvKind::PathDir`]: each file directly in it, as the PATH's).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{EnvKind, EnvPlace};

const SOURCED_WHY: &str = "the operator's shell startup files (`~/.bashrc`, `~/.profile`, …) source or run it at every shell start";
const LOOP_WHY: &str = "a directory whose every file the operator's shell startup files source at every shell start (a loop over `~/.bashrc.d/*`, oh-my-zsh's `custom/*.zsh`)";
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
    let mut todo: Vec<(PathBuf, usize, Vars)> = STARTUP
        .iter()
        .map(|f| (home.join(f), 0, Vars::new()))
        .collect();
    todo.reverse();
    while let Some((file, depth, vars)) = todo.pop() {
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
        let (places, vars) = read_with(&text, home, vars);
        for place in places {
            if place.kind == EnvKind::File && depth < DEPTH {
                todo.push((place.path.clone(), depth + 1, vars.clone()));
            }
            if !out.contains(&place) {
                out.push(place);
            }
        }
    }
    (out, consulted)
}

type Vars = HashMap<String, String>;

/// The places one startup file's text names ([`places`]).
pub fn read(text: &[u8], home: &Path) -> Vec<EnvPlace> {
    read_with(text, home, Vars::new()).0
}

/// [`read`], starting from the variables `vars` its sourcer set; also the variables as the
/// file leaves them.
fn read_with(text: &[u8], home: &Path, mut vars: Vars) -> (Vec<EnvPlace>, Vars) {
    vars.insert("HOME".into(), home.display().to_string());
    // A loop's variable: the words it takes, expanded (a `for` line's; `None` for a word
    // with an expansion not known here).
    let mut loops: HashMap<String, Vec<Option<String>>> = HashMap::new();
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
            // `for NAME in WORD…` (sh), `for NAME (WORD…)` (zsh): what `$NAME` stands for in
            // the loop's body.
            if first == "for" && words.len() > 2 {
                let list = if words[2] == "in" {
                    &words[3..]
                } else {
                    &words[2..]
                };
                let taken = list
                    .iter()
                    .map(|w| expand(unparen(w), &vars, home))
                    .collect();
                loops.insert(words[1].clone(), taken);
                continue;
            }
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
            if let Some(taken) = file
                .and_then(|w| w.strip_prefix('$'))
                .map(|v| v.trim_start_matches('{').trim_end_matches('}'))
                .and_then(|v| loops.get(v))
            {
                for word in taken.iter().flatten() {
                    out.extend(looped(word));
                }
                continue;
            }
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
    (out, vars)
}

/// A word of a `for` line without zsh's parentheses around the list and glob qualifiers
/// (`("$ZSH_CUSTOM"/*.zsh(N))`, its quotes gone, is `$ZSH_CUSTOM/*.zsh`).
fn unparen(word: &str) -> &str {
    let mut w = word.strip_prefix('(').unwrap_or(word);
    if w.ends_with(')') && w.matches(')').count() > w.matches('(').count() {
        w = &w[..w.len() - 1];
    }
    let name_at = w.rfind('/').map_or(0, |i| i + 1);
    match w[name_at..].find('(') {
        Some(q) if w.ends_with(')') => &w[..name_at + q],
        _ => w,
    }
}

/// The place a loop's expanded word names where its body sources it: a file as it is, the
/// directory of a glob (`*`, `?`, `[` in its last name only) as one whose every file is
/// sourced. A glob above the last name (`~/.config/*/rc.sh`) is left out.
fn looped(word: &str) -> Option<EnvPlace> {
    let glob = |s: &str| s.contains(['*', '?', '[']);
    let p = Path::new(word);
    if !p.is_absolute() {
        return None;
    }
    let (name, dir) = (p.file_name()?.to_str()?, p.parent()?);
    if glob(&dir.to_string_lossy()) {
        return None;
    }
    Some(if glob(name) {
        EnvPlace {
            path: normal(dir),
            kind: EnvKind::PathDir,
            why: LOOP_WHY,
        }
    } else {
        EnvPlace {
            path: normal(p),
            kind: EnvKind::File,
            why: SOURCED_WHY,
        }
    })
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

    /// Loops that source what they name, as the distributions' and frameworks' files write
    /// them: each glob's directory, each plain word's file.
    #[test]
    fn a_loop_that_sources_names_its_directory() {
        use EnvKind::{File, PathDir};
        let p = |s: &str| PathBuf::from(s);
        // Fedora's /etc/skel/.bashrc.
        assert_eq!(
            files("if [ -d ~/.bashrc.d ]; then\n\tfor rc in ~/.bashrc.d/*; do\n\t\tif [ -f \"$rc\" ]; then\n\t\t\t. \"$rc\"\n\t\tfi\n\tdone\nfi\nunset rc\n"),
            [(p("/h/.bashrc.d"), PathDir)]
        );
        // oh-my-zsh.sh's, with the variable its sourcer set; a plain list; zsh's short form.
        let vars = Vars::from([("ZSH".to_string(), "/h/.oh-my-zsh".to_string())]);
        let (places, _) = read_with(
            b"if [[ -z \"$ZSH_CUSTOM\" ]]; then\n    ZSH_CUSTOM=\"$ZSH/custom\"\nfi\nfor config_file (\"$ZSH\"/lib/*.zsh); do\n  custom_config_file=\"$ZSH_CUSTOM/lib/${config_file:t}\"\n  [[ -f \"$custom_config_file\" ]] && config_file=\"$custom_config_file\"\n  source \"$config_file\"\ndone\nfor config_file (\"$ZSH_CUSTOM\"/*.zsh(N)); do\n  source \"$config_file\"\ndone\nfor f in ~/.aliases ~/.functions; do source ${f}; done\nfor f in $(ls ~/x); do . $f; done\n",
            Path::new("/h"),
            vars,
        );
        assert_eq!(
            places
                .into_iter()
                .map(|p| (p.path, p.kind))
                .collect::<Vec<_>>(),
            [
                (p("/h/.oh-my-zsh/lib"), PathDir),
                (p("/h/.oh-my-zsh/custom"), PathDir),
                (p("/h/.aliases"), File),
                (p("/h/.functions"), File),
            ]
        );
        // Not over-read: a glob above the last name, a relative one, a loop not sourcing.
        assert_eq!(
            files("for f in ~/.config/*/rc.sh; do . $f; done\nfor f in rc.d/*; do . $f; done\nfor f in ~/.x/*; do echo $f; done\n"),
            []
        );
    }

    /// A file sourced from a startup file is read with the variables the sourcer set:
    /// `~/.zshrc`'s `ZSH` is where `oh-my-zsh.sh` loads `custom/*.zsh` from.
    #[test]
    fn a_sourced_file_reads_its_sourcers_variables() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::create_dir(h.join(".oh-my-zsh")).unwrap();
        std::fs::write(
            h.join(".zshrc"),
            "export ZSH=\"$HOME/.oh-my-zsh\"\nsource $ZSH/oh-my-zsh.sh\n",
        )
        .unwrap();
        std::fs::write(
            h.join(".oh-my-zsh/oh-my-zsh.sh"),
            "ZSH_CUSTOM=\"$ZSH/custom\"\nfor config_file (\"$ZSH_CUSTOM\"/*.zsh(N)); do\n  source \"$config_file\"\ndone\n",
        )
        .unwrap();
        let found = places(h);
        assert!(
            found
                .iter()
                .any(|p| p.path == h.join(".oh-my-zsh/custom") && p.kind == EnvKind::PathDir),
            "{found:?}"
        );
    }
}
