//! What an `.envrc` loads besides itself. direnv checks only the `.envrc` against its allow
//! list (checked with direnv 2.32: an allowed `.envrc` that says `source_env_if_exists
//! .envrc.local` ran a new `.envrc.local` at the next `cd`, and `dotenv` took a changed `.env`;
//! its stdlib says of `source_env` "the other .envrc is not checked by the security
//! framework"). So the files an allowed `.envrc` sources, reads as variables or runs, the
//! directories it puts first on the PATH, and the Nix files `use flake`/`use nix` evaluate (a
//! `shellHook` is bash direnv runs; its stdlib's `use_flake` watches `flake.nix` and
//! `flake.lock` to reload on their change) are the surface as much as the `.envrc` is.
//!
//! An `.envrc` is bash, so it is not parsed: every word of it is taken for a path relative to
//! its directory (direnv runs it there), which over-reads (`export MODE=dev` names `dev`) but
//! never under-reads a literal name. A word with a run-time expansion names what its literal
//! tail names (`$ROOT/scripts/env.sh` any `scripts/env.sh` below); `$PWD`, `${PWD}` and
//! `$(pwd)` are the directory itself. A bare directory (`PATH_add .`, `export
//! PATH=$PWD:$PATH`) names everything below it only on a line that loads (see [`LOADS`]), so
//! that `export ROOT=$PWD` does not. Not seen: what a word computes wholly at run time
//! (`source_env "$F"`).

use std::path::{Component, Path, PathBuf};

/// Words that make a line load what it names: direnv's stdlib functions that source, read
/// or put on a search path, and the variables that are search paths.
pub const LOADS: &[&str] = &[
    "source_env",
    "source_env_if_exists",
    "source_up",
    "source_up_if_exists",
    "source",
    ".",
    "dotenv",
    "dotenv_if_exists",
    "PATH_add",
    "path_add",
    "load_prefix",
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "NODE_PATH",
    "NODE_OPTIONS",
    "PERL5LIB",
    "RUBYLIB",
    "BASH_ENV",
];

/// The [`LOADS`] words whose argument is a file sourced or read as variables.
const SOURCES: &[&str] = &[
    "source_env",
    "source_env_if_exists",
    "source",
    ".",
    "dotenv",
    "dotenv_if_exists",
];

/// What one `.envrc` names.
#[derive(Debug, Default, PartialEq)]
pub struct Named {
    /// Absolute paths (lexically normal) its words name: a file at or below one is named.
    pub paths: Vec<PathBuf>,
    /// Literal tails of words with a run-time expansion: a file below the `.envrc`'s
    /// directory whose path ends so is named.
    pub tails: Vec<PathBuf>,
    /// Files it loads for certain: the arguments of a [`LOADS`] function, a command run by
    /// its path (`./scripts/setup.sh`), `.env` for `dotenv`, the Nix files for `use flake`/
    /// `use nix`. What the after-run scan watches (the rest of [`Named::paths`] is often a
    /// build's output or a database, which a run writes in normal work).
    pub loaded: Vec<PathBuf>,
    /// `use flake`, `use nix`: every `*.nix` file below and `flake.lock` are evaluated.
    pub nix: bool,
}

/// The names `.envrc` text at `dir` gives ([`Named`]); `home` for `~/`.
pub fn read(text: &[u8], dir: &Path, home: Option<&Path>) -> Named {
    let mut named = Named::default();
    // A `\`-newline continues the line (`source_env \` then `  .envrc.local`).
    let text = String::from_utf8_lossy(text)
        .replace("\\\r\n", " ")
        .replace("\\\n", " ");
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') {
            continue;
        }
        let line = here(line);
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || ";&|()<>'\"`=:,".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        // A search path's directory names every file in it; a sourced one (`source_env ..`)
        // names its `.envrc`.
        let loads = words
            .iter()
            .any(|w| LOADS.contains(w) && !SOURCES.contains(w));
        if words
            .windows(2)
            .any(|w| matches!(w, ["use", "flake" | "nix"]))
            || words.iter().any(|w| matches!(*w, "use_flake" | "use_nix"))
        {
            named.nix = true;
            for f in ["flake.nix", "flake.lock", "shell.nix", "default.nix"] {
                named.loaded.push(dir.join(f));
            }
        }
        if words.iter().any(|w| w.starts_with("dotenv")) {
            named.loaded.push(dir.join(".env"));
        }
        // direnv's `layout node` puts `node_modules/.bin` first on the PATH; `layout python`
        // (and pipenv, poetry, anaconda, pyenv) a virtual environment's `bin` in `.direnv/`
        // or the project's `.venv`.
        if words.iter().any(|w| w.starts_with("layout")) {
            for d in ["node_modules/.bin", ".direnv", ".venv"] {
                named.paths.push(dir.join(d));
            }
        }
        let mut command = true;
        for (i, w) in words.iter().enumerate() {
            // A command named without a `/` is found on the PATH, not here.
            if command && !w.contains('/') {
                command = false;
                continue;
            }
            let expanded = w.contains('$') || w.contains(['*', '?', '[']);
            let path = if let Some(rest) = w.strip_prefix("~/") {
                home.map(|h| normal(&h.join(rest)))
            } else if expanded || w.starts_with('~') {
                let tail: PathBuf = w
                    .rsplit('/')
                    .take_while(|c| !c.contains('$') && !c.contains(['*', '?', '[', '~']))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                if tail.components().any(|c| matches!(c, Component::Normal(_))) {
                    named.tails.push(tail);
                }
                None
            } else {
                // An absolute word may be the rest of a quoted expansion (`"$ROOT"/conf/x.sh`
                // splits at the quote): its tail too.
                if let Some(rest) = w.strip_prefix('/') {
                    named.tails.push(normal(Path::new(rest)));
                }
                Some(normal(&dir.join(w)))
            };
            if let Some(p) = path {
                // (`.` sources as the command only: `export ROOT=.` is no load.)
                let loader =
                    i > 0 && SOURCES.contains(&words[i - 1]) && (words[i - 1] != "." || i == 1);
                if dir.starts_with(&p) {
                    // A bare directory (or one above it) names everything below only where the
                    // line puts it on a search path.
                    if loader {
                        named.loaded.push(p.join(".envrc"));
                    }
                    if loads {
                        named.paths.push(p);
                    }
                } else {
                    if loader || (command && w.contains('/')) {
                        named.loaded.push(p.clone());
                    }
                    named.paths.push(p);
                }
            }
            command = false;
        }
    }
    named.paths.sort();
    named.paths.dedup();
    named.loaded.sort();
    named.loaded.dedup();
    named
}

/// Whether `real` (absolute, links resolved), below `dir`, the `.envrc`'s directory, is
/// what `named` names.
pub fn names(named: &Named, dir: &Path, real: &Path) -> bool {
    // Through a link the operator keeps (`lib -> shared` for `source_env lib/local.sh`):
    // direnv's shell follows it. Resolved only where the path's last name is one of `real`'s
    // (a few `lstat`s for those words alone).
    let through_link = |p: &PathBuf| {
        let last = p.file_name();
        last.is_some()
            && real.iter().any(|n| Some(n) == last)
            && real.starts_with(super::resolve(p))
    };
    named.paths.iter().any(|p| real.starts_with(p))
        || named.loaded.iter().any(|p| real == p)
        || named.paths.iter().chain(&named.loaded).any(through_link)
        || real.strip_prefix(dir).is_ok_and(|rel| {
            named.tails.iter().any(|t| rel.ends_with(t))
                || (named.nix
                    && (rel.extension().is_some_and(|e| e == "nix")
                        || rel.file_name().is_some_and(|n| n == "flake.lock")))
        })
}

/// The words of a configuration's text (JSON, TOML, YAML, git's, a script), as
/// [`literal`] and [`names_literally`] read them.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || ";&|()<>'\"`=:,[]{}!\\".contains(c))
        .filter(|w| !w.is_empty() && *w != "." && *w != "..")
}

/// Whether a word holds a run-time expansion (or a glob, a `~user`, an `@` form).
fn expanded(w: &str) -> bool {
    w.contains(['$', '*', '?', '~', '@'])
}

/// The literal tail of an expanded word: its components after the last one that expands
/// (`"$CLAUDE_PROJECT_DIR"/tools/guard.sh` → `tools/guard.sh`); empty when there is none.
fn tail_of(w: &str) -> &str {
    match w.rfind(['$', '*', '?', '~', '@']) {
        Some(i) => w[i..].find('/').map_or("", |j| &w[i + j + 1..]),
        None => w,
    }
}

/// The literal names in a configuration's `text`, each word taken for a path from each of
/// `dirs`, a word with a run-time expansion by its literal tail
/// (`"$CLAUDE_PROJECT_DIR"/tools/guard.sh`, `${workspaceFolder}/run.sh`), an absolute word
/// by its tail too (it may be the rest of a quoted expansion, `"$DIR"/tools/x.sh` splitting
/// at the quote). For an exact match, since such files name directories, globs and settings
/// as much as programs. [`Named::paths`] and [`Named::tails`] only. (The after-run scan's
/// form; a decision asks [`names_literally`], which allocates nothing for most words.)
pub fn literal(text: &[u8], dirs: &[&Path], home: Option<&Path>) -> Named {
    let mut named = Named::default();
    let text = String::from_utf8_lossy(text);
    for w in words(&text) {
        if let Some(rest) = w.strip_prefix("~/") {
            named.paths.extend(home.map(|h| normal(&h.join(rest))));
        } else if expanded(w) {
            let tail = normal(Path::new(tail_of(w)));
            if tail.components().any(|c| matches!(c, Component::Normal(_))) {
                named.tails.push(tail);
            }
        } else {
            named.paths.extend(dirs.iter().map(|d| normal(&d.join(w))));
            if let Some(rest) = w.strip_prefix('/') {
                named.tails.push(normal(Path::new(rest)));
            }
        }
    }
    named.paths.sort();
    named.paths.dedup();
    named.tails.sort();
    named.tails.dedup();
    named
}

/// Whether `real` below `dir` is exactly a path `named` names ([`literal`]).
pub fn names_exactly(named: &Named, dir: &Path, real: &Path) -> bool {
    named
        .paths
        .binary_search_by(|p| p.as_path().cmp(real))
        .is_ok()
        || real
            .strip_prefix(dir)
            .is_ok_and(|rel| named.tails.iter().any(|t| rel.ends_with(t)))
}

/// [`names_exactly`] of [`literal`]`(text, dirs, home)`, word by word, stopping at the first
/// match and allocating only for a word that needs normalising (`./`, `..`, `~/`): this runs
/// on every write, over every surface configuration above it (an IDE's `.idea/` files among
/// them).
pub fn names_literally(
    text: &[u8],
    dirs: &[&Path],
    home: Option<&Path>,
    dir: &Path,
    real: &Path,
) -> bool {
    let text = String::from_utf8_lossy(text);
    let rel = real.strip_prefix(dir).ok();
    let below = |tail: &str| {
        rel.is_some_and(|r| {
            let t = Path::new(tail);
            if tail.contains("..") || tail.starts_with("./") {
                r.ends_with(normal(t))
            } else {
                r.ends_with(t)
            }
        })
    };
    for w in words(&text) {
        if let Some(rest) = w.strip_prefix("~/") {
            if home.is_some_and(|h| normal(&h.join(rest)) == real) {
                return true;
            }
        } else if expanded(w) {
            let tail = tail_of(w);
            let tail_path = Path::new(tail);
            if tail_path
                .components()
                .any(|c| matches!(c, Component::Normal(_)))
                && (below(tail)
                    || (tail_path.file_name() == real.file_name()
                        && super::resolve(&normal(&dir.join(tail_path))) == real))
            {
                return true;
            }
        } else {
            let plain = !w.contains("..") && !w.starts_with("./");
            let named = |d: &&Path| {
                if !plain {
                    normal(&d.join(w)) == real
                } else if w.starts_with('/') {
                    Path::new(w) == real
                } else {
                    real.strip_prefix(d).is_ok_and(|r| r == Path::new(w))
                }
            };
            if dirs.iter().any(named) || w.strip_prefix('/').is_some_and(below) {
                return true;
            }
            // Through a link the operator keeps (`hk -> scripts` for `hk/fsmon.sh`): the
            // program follows it. Resolved only for a word ending in `real`'s name.
            if Path::new(w).file_name() == real.file_name()
                && dirs
                    .iter()
                    .any(|d| super::resolve(&normal(&d.join(w))) == real)
            {
                return true;
            }
        }
    }
    false
}

/// `$PWD`, `${PWD}`, `$(pwd)`, `$(pwd -P)` as `.`: direnv runs the `.envrc` in its directory.
fn here(line: &str) -> String {
    let mut out = line
        .replace("${PWD}", ".")
        .replace("$(pwd -P)", ".")
        .replace("$(pwd)", ".");
    let mut from = 0;
    while let Some(at) = out[from..].find("$PWD").map(|i| i + from) {
        let next = out[at + 4..].chars().next();
        if next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            from = at + 4;
            continue;
        }
        out.replace_range(at..at + 4, ".");
        from = at + 1;
    }
    out
}

/// `p` with `.` and `..` taken lexically, as direnv's shell takes a relative path from its
/// directory (a link on the way is resolved by the caller's comparison of real paths).
pub use cordon_fs::links::lexical as normal;

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> Named {
        read(text.as_bytes(), Path::new("/p"), Some(Path::new("/h")))
    }

    #[test]
    fn what_an_envrc_loads_is_named() {
        let n = named(
            "# PATH_add everything\nsource_env_if_exists .envrc.local\ndotenv\nuse flake\n\
             PATH_add bin\nexport PATH=$PWD/tools:$PATH\n. ./lib/setup.sh\n\
             ./scripts/init.sh --quiet\nsource_env \"$ROOT/conf/env.sh\"\nsource_env \"$TOP\"/etc/more.sh\nwatch_file ~/x\n\
             export ROOT=$PWD\nlayout node\nsource_env_if_exists \\\n  .envrc.private\n",
        );
        let at = |p: &str| names(&n, Path::new("/p"), Path::new(p));
        for p in [
            "/p/.envrc.local",
            "/p/.env",
            "/p/flake.nix",
            "/p/nix/dev.nix",
            "/p/flake.lock",
            "/p/bin/git",
            "/p/tools/ls",
            "/p/lib/setup.sh",
            "/p/scripts/init.sh",
            "/p/sub/conf/env.sh",
            "/p/etc/more.sh",
            "/h/x",
            "/p/node_modules/.bin/tsc",
            "/p/.envrc.private",
        ] {
            assert!(at(p), "{p}");
        }
        // `export ROOT=$PWD` names no file below; a comment names nothing.
        for p in ["/p/src/main.rs", "/p/README.md", "/p/everything"] {
            assert!(!at(p), "{p}");
        }
        let mut loaded = n.loaded.clone();
        loaded.sort();
        for p in [
            "/p/.env",
            "/p/.envrc.local",
            "/p/flake.nix",
            "/p/lib/setup.sh",
            "/p/scripts/init.sh",
        ] {
            assert!(loaded.contains(&PathBuf::from(p)), "{p}: {loaded:?}");
        }
        assert!(!loaded.contains(&PathBuf::from("/p/bin")));
    }

    #[test]
    fn a_configurations_literal_names_are_matched_exactly() {
        let text = br#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command",
            "command":"\"$CLAUDE_PROJECT_DIR\"/tools/guard.sh --strict"}]}]},
            "env":{"X":"scripts/lint.sh"},"permissions":{"allow":["Read(src/**)"]}}"#;
        let n = literal(text, &[Path::new("/p"), Path::new("/p/.claude")], None);
        let at = |p: &str| names_exactly(&n, Path::new("/p"), Path::new(p));
        for p in [
            "/p/tools/guard.sh",
            "/p/sub/tools/guard.sh",
            "/p/scripts/lint.sh",
        ] {
            assert!(at(p), "{p}");
        }
        for p in ["/p/src/main.rs", "/p/tools/other.sh", "/p/README.md"] {
            assert!(!at(p), "{p}");
        }
        // The streaming form agrees with the listing form.
        for p in [
            "/p/tools/guard.sh",
            "/p/sub/tools/guard.sh",
            "/p/scripts/lint.sh",
            "/p/src/main.rs",
            "/p/tools/other.sh",
            "/p/README.md",
        ] {
            let dirs = [Path::new("/p"), Path::new("/p/.claude")];
            let streamed = names_literally(text, &dirs, None, Path::new("/p"), Path::new(p));
            assert_eq!(streamed, at(p), "{p}");
        }
        let git = b"[core]\n\tfsmonitor = scripts/fsmon.sh\n[alias]\n\tx = !./bin/x.sh\n";
        let n = literal(git, &[Path::new("/r")], None);
        assert!(names_exactly(
            &n,
            Path::new("/r"),
            Path::new("/r/scripts/fsmon.sh")
        ));
        assert!(names_exactly(&n, Path::new("/r"), Path::new("/r/bin/x.sh")));
    }

    #[test]
    fn a_bare_directory_names_everything_only_where_the_line_loads() {
        let at = |text: &str, p: &str| names(&named(text), Path::new("/p"), Path::new(p));
        assert!(at("PATH_add .\n", "/p/ls"));
        assert!(at("export PATH=$PWD:$PATH\n", "/p/git"));
        assert!(at("export PATH=\"${PWD}:$PATH\"\n", "/p/git"));
        assert!(at("source_env ..\n", "/.envrc"));
        assert!(!at("source_env ..\n", "/p/x"));
        assert!(!at("export ROOT=$PWD\n", "/p/git"));
        assert!(!at("export PWDX=$PWDX\n", "/p/git"));
    }
}
