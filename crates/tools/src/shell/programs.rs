//! What the options of the programs agents run do beyond reading: the files they write, and
//! whether they delete, run code or reach the network. An allow rule for a program allows what
//! it does with its read-only options (`find . -name x`), not everything it can do
//! (`find . -delete`, `sort -o ~/.bashrc`, `rg --pre ./evil`, `git -c core.pager=… log`).
//!
//! Options are parsed as each program parses them ([`super::options`]): clustered short flags
//! (`sed -ni`), attached and separate arguments, `--opt=value`, GNU abbreviations of long
//! options (`sort --out=x`, `git reset --har`), options after operands (`git reset HEAD~1
//! --hard`) and `--`. A file an option writes is reported like an output redirection (and
//! judged like one: inside the writable roots the rule's decision stands); deleting, running
//! code and reaching the network are [`Effect`]s, which ask unless the rule that allowed the
//! command names the option.
//!
//! The same parse gives the words rules are matched against (the command's key): for `git`,
//! without the global options that only say where the repository is or how to page
//! (`git --no-pager log`, `git -C dir status`), and for the programs whose options may follow
//! their operands, with the options first and long options spelled in full, so that a deny
//! rule `git reset --hard` matches `git reset HEAD~1 --har` too.
//!
//! A program that is not in the table is judged by its rule alone.

use super::options::{step, Opt, Spec, Step, Stop};
use super::words::Word;
use consoles::{editor, openssl, psql, sqlite3, EDITORS};
use git::git;
pub(crate) use remove::normalise as lexical_path;
pub(super) use remove::{locale_text, rm_readings};
use special::{cargo, compressor, dd, find, go, lz4, npm, pip, runtime_verbs, tar, unzip, zip};
use table::PROGRAMS;
use toolchain::{ar, cc, is_cc, linker, rustc};

mod consoles;
mod git;
mod remove;
mod special;
mod table;
pub(super) mod toolchain;

/// What an option does, besides reading, that an allow rule on the program does not cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffectKind {
    /// Deletes files (`find -delete`, `rsync --delete`, `tar --remove-files`).
    Deletes,
    /// Runs code the line does not show (`rg --pre CMD`, `sed 'e …'`, `python -c`,
    /// `git -c core.pager=…`, `tar --to-command`).
    Runs,
    /// Reaches the network (`pytest --pastebin`, `rsync host:…`).
    Network,
    /// Writes a file whose name only the program knows when it runs (`find … -exec sed -i …
    /// {} +`, `… | xargs sed -i …`): it may be any file.
    Writes,
}

/// One option (or operand) of a command that deletes, runs code or reaches the network.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Effect {
    /// What it does.
    pub kind: EffectKind,
    /// The option as a rule names it (`-delete`, `--pre`, `-c`); an allow rule whose pattern
    /// has this word allows the effect.
    pub option: String,
    /// What it does, for the person asked (`find -delete deletes files`).
    pub detail: String,
    /// Where the effect is running code found at a path (`pytest /tmp/evil/test_x.py`, `git
    /// -C /elsewhere status`): the path as written, relative to the current directory. Such an
    /// effect holds only when the path lies outside the writable roots: code in the project
    /// is what an allow rule on the program means to run.
    pub path: Option<String>,
}

/// The option an effect names when it was found in a word only known when the line runs
/// (`tar -tf *`, `git log "$x"`): the word may turn out to be any option, so no rule names it.
/// A rule's pattern is split at spaces into tokens and this has spaces, so it is never one of
/// them: a rule `tar` or `sort *` (the program, a glob token) does not lift the effect of `tar
/// -tf *`, whose glob may expand to `--checkpoint-action=exec=…`.
pub(super) const UNKNOWN_OPTION: &str = "(a word only known when the line runs)";

/// The option an effect names when a program writes files whose names the line does not show
/// (an archive's members, the files a patch names, a tree copied from outside the roots): any
/// of them may be on the persistence surface (`.git/hooks/post-checkout`, `.envrc`), and no
/// rule names them (spaces: never a pattern token).
pub(super) const UNSHOWN_NAMES: &str = "(names the line does not show)";

/// What [`examine`] found in one command's options.
#[derive(Default)]
pub(super) struct Examined {
    /// The words rules are matched against, when they differ from the command's own.
    pub(super) key: Option<Vec<String>>,
    /// Files the command writes through its options or operands (the path as written; the
    /// word's text when it is not known before the line runs).
    pub(super) writes: Vec<String>,
    /// What else it does.
    pub(super) effects: Vec<Effect>,
    /// Other readings of the command for the rules only: a canonical spelling of its meaning
    /// (`git push -f` is also `git push --force`), as rm's readings are.
    pub(super) readings: Vec<Vec<String>>,
}

impl Examined {
    pub(super) fn effect(&mut self, kind: EffectKind, option: &str, detail: String) {
        self.effects.push(Effect {
            kind,
            option: option.to_string(),
            detail,
            path: None,
        });
    }

    /// The program runs code found at `w` (a test file, a repository): an effect unless the
    /// path lies in the writable roots (judged by the assessment, which knows them). A word
    /// only known when the line runs may be anywhere.
    pub(super) fn code_at(&mut self, w: &Word, what: &str) {
        let known = w.literal && !w.text.is_empty();
        self.effects.push(Effect {
            kind: EffectKind::Runs,
            option: if known {
                w.text.clone()
            } else {
                UNKNOWN_OPTION.to_string()
            },
            detail: format!("{what} `{}`, outside the writable roots", w.text),
            path: known.then(|| w.text.clone()),
        });
    }

    /// The program writes files whose names only it knows (an archive's members, a patch's
    /// files, a tree it copies, what git checks out): an effect no rule lifts, wherever they
    /// come from (a tree inside the roots moves its names to where they take effect).
    pub(super) fn unshown(&mut self, detail: String) {
        self.effects.push(Effect {
            kind: EffectKind::Writes,
            option: UNSHOWN_NAMES.to_string(),
            detail,
            path: None,
        });
    }

    /// A backup suffix (`cp -S SUFFIX`, `sed -i'SUFFIX'`) that is only known when the line
    /// runs: the backup's name cannot be judged.
    pub(super) fn unknown_suffix(&mut self, suffix: &Word) {
        self.unshown(format!(
            "the backup suffix `{}` is only known when the line runs",
            suffix.text
        ));
    }

    /// A copy, move or link of `src` into `dest`, which may be a directory, writes
    /// `dest/NAME` (`cp /tmp/e/.envrc .` writes `./.envrc`): that file is judged too. A name
    /// only known when the line runs (a glob, `"$f"`) is judged as each name on the
    /// persistence surface it could be.
    pub(super) fn copied_into(&mut self, dest: &Word, src: &Word) {
        if !dest.literal || dest.text.is_empty() {
            return; // judged on its own, outside the roots
        }
        let text = src.text.trim_end_matches('/');
        let base = text.rsplit('/').next().unwrap_or(text);
        if matches!(base, "" | "." | "..") {
            return; // a directory's contents: a recursive copy, judged as one
        }
        let dir = dest.text.trim_end_matches('/');
        let join = |name: &str| {
            if dir.is_empty() {
                format!("/{name}")
            } else {
                format!("{dir}/{name}")
            }
        };
        if src.literal {
            self.writes.push(join(base));
        } else if base.contains(['$', '`', '{', '(', '\\']) {
            self.unshown(format!(
                "`{}` into `{}` writes a name only known when the line runs",
                src.text, dest.text
            ));
        } else {
            for name in surface_names().filter(|n| glob_matches(base, n)) {
                self.writes.push(join(name));
            }
        }
    }

    /// `cp --parents`: the source's whole path under `dest` (a leading `/` dropped, `..` kept:
    /// the writes are judged lexically).
    pub(super) fn copied_with_path_into(&mut self, dest: &Word, src: &Word) {
        if !dest.literal || dest.text.is_empty() {
            return; // judged on its own, outside the roots
        }
        if !src.literal {
            return self.unshown(format!(
                "`{}` copied with its path into `{}` writes names only known when the line runs",
                src.text, dest.text
            ));
        }
        let dir = dest.text.trim_end_matches('/');
        let path = src.text.trim_start_matches('/');
        self.writes.push(format!("{dir}/{path}"));
    }

    pub(super) fn write(&mut self, w: &Word) {
        if w.literal || w.text.contains(['$', '`']) {
            // A dynamic target's text keeps its `$`: judged outside the roots, as a
            // redirection to `"$f"` is.
            self.writes.push(w.text.clone());
        } else if !(w.raw.starts_with(">(") || w.raw.starts_with("<(")) {
            // A name find or xargs gives (`{}`, the input) may be any file. (A process
            // substitution, `tee >(cmd)`, is a pipe to a command checked on its own.)
            self.effect(
                EffectKind::Writes,
                &w.text,
                format!("writes `{}`, a file only known when the line runs", w.text),
            );
        }
    }
}

/// The operands `xargs` adds to its command from its input: any number of words, only known
/// when the line runs.
pub(super) fn input_operands() -> Word {
    Word {
        text: "{xargs input}".into(),
        raw: "{xargs input}".into(),
        literal: false,
        single: false,
    }
}

/// What an option in a [`Program`]'s table does.
#[derive(Clone, Copy)]
pub(super) enum Does {
    /// Its argument is a file the program writes.
    WritesArg,
    /// Its optional argument is a file the program writes; without one, the file named here
    /// (`pytest --debug` writes `pytestdebug.log`).
    WritesArgOr(&'static str),
    Deletes,
    Runs,
    Network,
}

/// What a program does with its operands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Operands {
    /// Reads them (or they are not files).
    Read,
    /// Writes every one (`tee`).
    Written,
    /// Writes the last one, the destination (`cp`, `ln`, `install`), unless `-t DIR` names it.
    LastWritten,
    /// Writes every one: the destination, and the sources it moves away (`mv`).
    AllMoved,
}

/// A program's options and what the dangerous ones do.
pub(super) struct Program {
    pub(super) names: &'static [&'static str],
    /// Every option that takes an argument, and the long options the table needs spelled in
    /// full; any other option is a flag ([`Spec::lenient`]).
    pub(super) spec: Spec,
    /// Options may follow operands (GNU getopt, git's parse-options): the key puts them first.
    pub(super) permute: bool,
    /// Long options may be abbreviated to any unambiguous prefix (GNU getopt_long, argp,
    /// argparse, nopt, less): a long option that is not one the spec knows exactly is taken
    /// as every option of the table it abbreviates (an ambiguous one makes the program fail;
    /// judged as each, it is never less strict).
    pub(super) abbrev: bool,
    pub(super) options: &'static [(&'static str, Does)],
    pub(super) operands: Operands,
    /// What needs more than the table (a script to read, modes, `of=` operands).
    pub(super) special: Option<fn(&Parsed, &mut Examined)>,
}

/// One command's options and operands, as the program parses them.
pub(super) struct Parsed {
    pub(super) opts: Vec<Opt>,
    pub(super) operands: Vec<Word>,
    /// The option words, long names in full, in order (for the key).
    pub(super) option_words: Vec<String>,
    /// A word whose value is only known when the line runs sits where options are: it may be
    /// any option.
    pub(super) dynamic: Option<String>,
}

impl Parsed {
    pub(super) fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|o| names.contains(&o.name.as_str()))
    }

    pub(super) fn args<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a Word> {
        self.opts
            .iter()
            .filter(move |o| names.contains(&o.name.as_str()))
            .filter_map(|o| o.arg.as_ref())
    }
}

/// Parses `args` as the program does; `permute` lets options follow operands.
pub(super) fn parse(args: &[Word], spec: &Spec, permute: bool) -> Parsed {
    let mut p = Parsed {
        opts: Vec::new(),
        operands: Vec::new(),
        option_words: Vec::new(),
        dynamic: None,
    };
    let mut i = 0;
    let mut operands_only = false;
    while i < args.len() {
        if operands_only {
            p.operands.push(args[i].clone());
            i += 1;
            continue;
        }
        match step(args, i, spec) {
            Ok(Step::Opts(opts, next)) => {
                let long = args[i].text.starts_with("--");
                for o in &opts {
                    if long {
                        match (&o.arg, next - i) {
                            (Some(a), 1) => p.option_words.push(format!("{}={}", o.name, a.text)),
                            (Some(a), _) => {
                                p.option_words.push(o.name.clone());
                                p.option_words.push(a.text.clone());
                            }
                            (None, _) => p.option_words.push(o.name.clone()),
                        }
                    }
                }
                if !long {
                    p.option_words
                        .extend(args[i..next].iter().map(|w| w.text.clone()));
                }
                p.opts.extend(opts);
                i = next;
            }
            Ok(Step::End(next)) => {
                p.operands.extend(args[next..].iter().cloned());
                break;
            }
            Ok(Step::Operand) => {
                p.operands.push(args[i].clone());
                i += 1;
                operands_only = !permute;
            }
            Err(Stop::Dynamic(text)) => {
                p.dynamic.get_or_insert(text);
                p.operands.push(args[i].clone());
                i += 1;
            }
            Err(Stop::Unknown(_)) => {
                // Not with a lenient spec; taken as an operand to stay total.
                p.operands.push(args[i].clone());
                i += 1;
            }
        }
    }
    p
}

/// The basename a command is looked up by (`python3.12` is `python`).
fn family(base: &str) -> &str {
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match trimmed {
        "python" | "pypy" | "perl" | "ruby" | "node" | "tclsh" | "wish" | "php" | "lua"
        | "julia" | "guile" | "pip" => trimmed,
        _ => base,
    }
}

/// Examines one command (its name and arguments, wrappers already seen through).
pub(super) fn examine(name: &str, args: &[Word]) -> Examined {
    let base = name.rsplit('/').next().unwrap_or(name);
    let mut out = Examined::default();
    match family(base) {
        "git" => git(args, &mut out),
        "find" => find(args, &mut out),
        "npm" | "pnpm" | "yarn" | "npx" => npm(base, args, &mut out),
        "tar" | "gtar" | "bsdtar" => tar(args, &mut out),
        "dd" => dd(args, &mut out),
        "cargo" => cargo(args, &mut out),
        "go" => go(args, &mut out),
        "pip" => pip(name, args, &mut out),
        "zip" => zip(args, &mut out),
        "unzip" => unzip(args, &mut out),
        "rustc" => rustc(args, &mut out),
        // `gcc-ar`, `llvm-ar`, `x86_64-linux-gnu-ar`, `x86_64-linux-gnu-gcc-ar-12`.
        b if is_tool(
            b.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-'),
            "ar",
        ) =>
        {
            ar(args, &mut out)
        }
        "openssl" => openssl(args, &mut out),
        "sqlite3" | "sqlite" => sqlite3(args, &mut out),
        "psql" => psql(args, &mut out),
        b if EDITORS.contains(&b) => editor(b, args, &mut out),
        b if is_cc(b) || b == "cpp" || is_tool(b, "cpp") => cc(b, args, &mut out),
        b if ["ld", "as", "gold", "mold", "lld"]
            .iter()
            .any(|t| is_tool(b, t))
            || b.starts_with("ld.") =>
        {
            linker(b, args, &mut out)
        }
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "unlzma" | "zstd"
        | "unzstd" | "pigz" | "unpigz" | "uncompress" => compressor(base, args, &mut out),
        "lz4" | "unlz4" | "lz4c" => lz4(base, args, &mut out),
        b => {
            // binutils' cross spellings (`x86_64-linux-gnu-objcopy`) are the same programs.
            let b = ["objcopy", "strip"]
                .into_iter()
                .find(|t| is_tool(b, t))
                .unwrap_or(b);
            if let Some(program) = PROGRAMS.iter().find(|p| p.names.contains(&b)) {
                program_table(name, program, args, &mut out);
            }
            if matches!(b, "deno" | "bun") {
                runtime_verbs(b, args, &mut out);
            }
            // `python -m pytest ARGS` is pytest with those arguments (the rule that names
            // `-m` allowed running the module, not every option of it).
            if matches!(b, "python" | "pypy") {
                if let Some((module, rest)) = python_module(args) {
                    if matches!(module, "pytest" | "py.test") {
                        // Round 10: `-m pytest` runs pytest as `pytest` does, or a `pytest`
                        // module of the working directory (python looks there first): code
                        // at `.`, the project's inside the roots (a false ask under the
                        // default profile before: `-m` asked unless a rule named it).
                        out.effects.retain(|e| e.option != "-m");
                        out.code_at(
                            &Word::lit("."),
                            "runs pytest, or the `pytest` module of the working directory,",
                        );
                        let inner = examine("pytest", rest);
                        out.effects.extend(inner.effects);
                        out.writes.extend(inner.writes);
                    }
                }
            }
        }
    }
    if opens_in_place(base, args) {
        out.writes.retain(|w| !super::writes_no_file(w));
    }
    if let Some(reading) = another_name(base, args) {
        out.readings.push(reading);
    }
    out
}

/// The name a rule knows this command by, when it is that program under another name (round
/// 9): `mke2fs` is what `mkfs.ext2`/`mkfs.ext4` link to and `mkdosfs` is `mkfs.fat`; `halt`,
/// `poweroff` and `telinit`/`init 0` power off as `shutdown` does and `telinit`/`init 6`
/// reboots (all are systemctl acting on its name), as do `systemctl poweroff|halt` and
/// `systemctl reboot|kexec`. The reading is `NAME ARGS…` (the level only for `telinit`, the
/// verb's options dropped for systemctl).
fn another_name(base: &str, args: &[Word]) -> Option<Vec<String>> {
    let with = |name: &str| {
        let mut key = vec![name.to_string()];
        key.extend(args.iter().map(|w| w.text.clone()));
        Some(key)
    };
    match base {
        "mke2fs" => with("mkfs.ext2"),
        "mkdosfs" => with("mkfs.fat"),
        "mkntfs" => with("mkfs.ntfs"),
        "mkexfatfs" => with("mkfs.exfat"),
        "halt" | "poweroff" => with("shutdown"),
        "telinit" | "init" => match args.first().map(|w| w.text.as_str()) {
            Some("0") => Some(vec!["shutdown".to_string()]),
            Some("6") => Some(vec!["reboot".to_string()]),
            _ => None,
        },
        "systemctl" => {
            let verb = args.iter().find(|w| !w.text.starts_with('-'))?;
            match verb.text.as_str() {
                "poweroff" | "halt" => Some(vec!["shutdown".to_string()]),
                "reboot" | "kexec" | "soft-reboot" => Some(vec!["reboot".to_string()]),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether every file this command writes through its options and operands is opened where
/// it is (`O_WRONLY|O_CREAT`), never renamed over, unlinked or made a directory: then the null
/// device and the line's own streams among them are no files of the tree (round 9: under
/// strace the real tee, curl 7.88, wget 1.21, sort, uniq and dd did only that; `mv`, `install`,
/// `ln` and `cp --remove-destination` replace the path, so they are not here). curl puts `-o`
/// under `--output-dir` (the real curl wrote `DIR//dev/null`), so not with that option, which
/// nothing but its name or an abbreviation (`--output-`: the real curl took it) spells.
fn opens_in_place(base: &str, args: &[Word]) -> bool {
    match base {
        "tee" | "wget" | "sort" | "uniq" | "dd" => true,
        "curl" => !args.iter().any(|w| w.text.starts_with("--output-")),
        _ => false,
    }
}

/// Whether `base` is `tool` or a cross toolchain's spelling of it (`x86_64-linux-gnu-ld`).
fn is_tool(base: &str, tool: &str) -> bool {
    base == tool
        || base
            .strip_suffix(tool)
            .is_some_and(|p| p.ends_with('-') && p.len() > 1)
}

/// The module `python -m MODULE ARGS…` runs and its arguments, as python reads its options
/// (options end at `-m` or `-c`, at the first operand, or at `--`).
fn python_module(args: &[Word]) -> Option<(&str, &[Word])> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if !w.literal || !t.starts_with('-') || t == "-" || t.starts_with("--") {
            return None;
        }
        for (k, c) in t[1..].char_indices() {
            let rest = &t[1 + k + c.len_utf8()..];
            match c {
                'm' if rest.is_empty() => {
                    let module = args.get(i + 1).filter(|m| m.literal)?;
                    return Some((module.text.as_str(), args.get(i + 2..).unwrap_or(&[])));
                }
                'm' => return Some((rest, args.get(i + 1..).unwrap_or(&[]))),
                'c' => return None,
                'W' | 'X' | 'Q' => {
                    if rest.is_empty() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

fn program_table(name: &str, program: &Program, args: &[Word], out: &mut Examined) {
    let p = parse(args, &program.spec, program.permute);
    judge_options(&p, program.options, out);
    if program.abbrev {
        judge_abbreviated(&p, &program.spec, program.options, out);
    }
    if let Some(text) = &p.dynamic {
        // Round 11: also where only the special reads the options (`csplit * 2`: files named
        // `--prefix=.envr` and `-bc%.0d` made the real csplit write `.envrc`).
        if !program.options.is_empty() || program.special.is_some() {
            out.effect(
                EffectKind::Runs,
                UNKNOWN_OPTION,
                format!(
                    "`{text}` is only known when the line runs and may be any option of `{name}`"
                ),
            );
        }
    }
    let written_before = out.writes.len();
    match program.operands {
        Operands::Read => {}
        Operands::Written | Operands::AllMoved => {
            for w in &p.operands {
                out.write(w);
            }
        }
        Operands::LastWritten => {
            let dirs: Vec<&Word> = p.args(&["-t", "--target-directory"]).collect();
            if dirs.is_empty() {
                // Round 11: a last word that may become several (`cp *`, `cp "$@"`) ends with
                // a destination only known when the line runs (`cp *` copied `a.txt` over
                // `cordon.toml`, the next name).
                if let Some(last) = p
                    .operands
                    .last()
                    .filter(|l| p.operands.len() > 1 || !l.single)
                {
                    out.write(last);
                }
            }
            for d in dirs {
                out.write(d);
            }
        }
    }
    if program.operands == Operands::AllMoved {
        for d in p.args(&["-t", "--target-directory"]) {
            out.write(d);
        }
    }
    if matches!(program.operands, Operands::LastWritten | Operands::AllMoved) {
        into_directory(name, &p, out);
        suffixed_backups(name, &p, written_before, out);
    }
    if let Some(special) = program.special {
        special(&p, out);
    }
    if program.permute && p.dynamic.is_none() {
        let mut key = vec![name.to_string()];
        key.extend(p.option_words.iter().cloned());
        key.extend(p.operands.iter().map(|w| w.text.clone()));
        out.key = Some(key);
    }
}

/// Why a link's target names the persistence surface, by name (`.git/config`,
/// `../.git/hooks/pre-commit`, `/abs/repo/.envrc`, `~/.bashrc`): the components of the path,
/// `..` and `.` left out, as a path below a root or below the home.
fn links_to_surface(target: &str) -> Option<&'static str> {
    use cordon_policy::surface::{classify, classify_home};
    use std::path::{Component, PathBuf};
    let rest = target.strip_prefix("~/");
    let rel: PathBuf = std::path::Path::new(rest.unwrap_or(target))
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    // Any directory may be a repository here (the name is all there is to go by).
    classify(&rel, &|_| false)
        .or_else(|| classify_home(&rel))
        .or_else(|| {
            // A repository's configuration under any directory (`ev/config` of a bare one).
            let names: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
            (names.len() >= 2 && matches!(names[names.len() - 1], "config" | "commondir"))
                .then_some(())
                .and_then(|_| {
                    let k = names.len() - 1;
                    classify(&rel, &|d| d.components().count() == k)
                })
        })
        .map(|hit| hit.why)
}

/// `cp`, `mv`, `ln`, `install`, `rsync`: each source lands in the destination directory under
/// its own name (`cp x/.envrc .`, `ln -s /tmp/e/.envrc`, `mv x/settings.json .claude/`), and a
/// recursive copy of a tree from outside the roots writes names the line does not show.
fn into_directory(name: &str, p: &Parsed, out: &mut Examined) {
    let base = name.rsplit('/').next().unwrap_or(name);
    let dot = Word::lit(".");
    let dirs: Vec<&Word> = p.args(&["-t", "--target-directory"]).collect();
    let (sources, dests): (&[Word], Vec<&Word>) = if !dirs.is_empty() {
        (&p.operands, dirs)
    } else if p.operands.len() > 1 {
        let (last, rest) = p.operands.split_last().expect("two operands");
        (rest, vec![last])
    } else if base == "ln" {
        // `ln -s TARGET` makes the link in the current directory, under TARGET's name.
        (&p.operands, vec![&dot])
    } else {
        (&[], Vec::new())
    };
    // Round 6: a link made to the persistence surface (`ln -s .git/hooks/pre-commit p &&
    // cat x > p`: bash's `>` follows it, as `sed -i --follow-symlinks` and a hard link's
    // writes do) makes every later write of the link a write of the surface, which the
    // analysis of that write cannot see: the link asks.
    let links = base == "ln"
        || (matches!(base, "cp" | "gcp")
            && (p.has(&["-s", "-l"])
                || p.opts.iter().any(|o| {
                    o.name.strip_prefix("--").is_some_and(|n| {
                        n.len() > 2 && ("symbolic-link".starts_with(n) || "link".starts_with(n))
                    })
                })));
    if links {
        for s in sources {
            let detail = if s.text.contains(['$', '`']) {
                Some(format!(
                    "`{base}` makes a link to `{}`, only known when the line runs: what later writes the link may write the persistence surface",
                    s.text
                ))
            } else {
                links_to_surface(&s.text).map(|why| format!(
                    "`{base}` makes a link to `{}`, on the persistence surface ({why}): what later writes the link writes it",
                    s.text
                ))
            };
            if let Some(detail) = detail {
                out.effect(EffectKind::Writes, UNSHOWN_NAMES, detail);
            }
        }
    }
    // `install -d` makes directories; `-T` says the destination is the file itself.
    let not_into_dir =
        p.has(&["-T", "--no-target-directory"]) || (base == "install" && p.has(&["-d"]));
    // `cp --parents SRC DIR` (and `rsync -R`/`--relative`) writes `DIR/SRC`, the source's
    // whole path (`cp --parents .git/hooks/pre-commit sub` writes the hook of the repository
    // `sub`).
    let parents = (matches!(base, "cp" | "gcp")
        && p.opts.iter().any(|o| {
            o.name
                .strip_prefix("--")
                .is_some_and(|n| n.len() >= 3 && "parents".starts_with(n))
        }))
        || (base == "rsync"
            && (p.has(&["-R"])
                || p.opts.iter().any(|o| {
                    o.name
                        .strip_prefix("--")
                        .is_some_and(|n| n.len() >= 3 && "relative".starts_with(n))
                })));
    if !not_into_dir {
        for d in &dests {
            for s in sources {
                if parents {
                    out.copied_with_path_into(d, s);
                } else {
                    out.copied_into(d, s);
                }
            }
        }
    }
    let long = |full: &[&str]| {
        p.opts.iter().any(|o| {
            o.name
                .strip_prefix("--")
                .is_some_and(|n| !n.is_empty() && full.iter().any(|f| f.starts_with(n)))
        })
    };
    // `rsync -d` copies a directory's entries without recursing, and `--files-from` the
    // names a file lists: names the line does not show as well.
    let recursive = match base {
        "cp" | "gcp" => p.has(&["-r", "-R", "-a"]) || long(&["recursive", "archive"]),
        "rsync" => {
            p.has(&["-r", "-a", "-d"]) || long(&["recursive", "archive", "dirs", "files-from"])
        }
        _ => false,
    };
    if recursive {
        // Wherever the tree comes from: inside the roots too, a copy moves its names to
        // where they take effect (`cp -r x/. .` makes a fixture's `x/.envrc` or
        // `x/.git/hooks/post-checkout` the project's own).
        for s in sources {
            out.unshown(
                format!(
                    "`{base}` copies the tree `{}`: the names in it are not on the line, and any may be on the persistence surface",
                    s.text
                ));
        }
    }
}

/// `cp`/`mv`/`ln`/`install`/`rsync` `-S SUFFIX` (`--suffix`) keep the file a copy replaces
/// under its name with SUFFIX appended: `cp -S rc x .env` renames an existing `.env` to
/// `.envrc` (checked with coreutils). Each file the command writes is written with the
/// suffix too; in a recursive copy the names are not on the line.
fn suffixed_backups(name: &str, p: &Parsed, written_before: usize, out: &mut Examined) {
    let base = name.rsplit('/').next().unwrap_or(name);
    let option: &[&str] = if base == "rsync" {
        &["--suffix"]
    } else {
        &["-S", "--suffix"]
    };
    let mut suffixes: Vec<&Word> = p.args(option).collect();
    // An abbreviated `--suf=rc` (GNU getopt_long), which the lenient parse keeps as written.
    suffixes.extend(p.opts.iter().filter_map(|o| {
        let short = o.name.strip_prefix("--")?;
        (short.len() >= 2 && short != "suffix" && "suffix".starts_with(short))
            .then_some(o.arg.as_ref())
            .flatten()
    }));
    for suffix in suffixes {
        if !suffix.literal {
            out.unknown_suffix(suffix);
            continue;
        }
        let named: Vec<String> = out.writes[written_before..]
            .iter()
            .map(|w| format!("{}{}", w.trim_end_matches('/'), suffix.text))
            .collect();
        out.writes.extend(named);
        if out.effects.iter().any(|e| e.option == UNSHOWN_NAMES) {
            out.unshown(format!(
                "`{base}` keeps each file it replaces as NAME{}, for names the line does not show",
                suffix.text
            ));
        }
    }
}

/// For a program that accepts abbreviations: each long option that is not exactly an option the
/// spec or the table knows is judged as every table option it is a prefix of (`pytest
/// --log-fil=x` as `--log-file=x`, `sort --out=x` as `--output=x`).
pub(super) fn judge_abbreviated(
    p: &Parsed,
    spec: &Spec,
    table: &[(&str, Does)],
    out: &mut Examined,
) {
    for o in &p.opts {
        let Some(short) = o.name.strip_prefix("--") else {
            continue;
        };
        let exact = |list: &[&str]| list.contains(&short);
        if short.is_empty()
            || exact(spec.long_arg)
            || exact(spec.long_flag)
            || exact(spec.long_opt)
            || table.iter().any(|(n, _)| *n == o.name)
        {
            continue;
        }
        let meant: Vec<(&str, Does)> = table
            .iter()
            .filter(|(n, _)| n.strip_prefix("--").is_some_and(|n| n.starts_with(short)))
            .copied()
            .collect();
        if meant.is_empty() {
            continue;
        }
        let as_full = Parsed {
            opts: meant
                .iter()
                .map(|(n, _)| Opt {
                    name: n.to_string(),
                    arg: o.arg.clone(),
                })
                .collect(),
            operands: Vec::new(),
            option_words: Vec::new(),
            dynamic: None,
        };
        judge_options(&as_full, &meant, out);
    }
}

pub(super) fn judge_options(p: &Parsed, table: &[(&str, Does)], out: &mut Examined) {
    for o in &p.opts {
        let Some((option, does)) = table.iter().find(|(n, _)| *n == o.name) else {
            continue;
        };
        match does {
            Does::WritesArg => match &o.arg {
                Some(a) => out.write(a),
                None => out.effect(
                    EffectKind::Runs,
                    option,
                    format!("`{option}` writes a file not named on the line"),
                ),
            },
            Does::WritesArgOr(default) => {
                out.write(o.arg.as_ref().unwrap_or(&Word::lit(default)));
            }
            Does::Deletes => out.effect(
                EffectKind::Deletes,
                option,
                format!("`{option}` deletes files"),
            ),
            Does::Runs => out.effect(
                EffectKind::Runs,
                option,
                format!("`{option}` runs code the line does not show"),
            ),
            Does::Network => out.effect(
                EffectKind::Network,
                option,
                format!("`{option}` reaches the network"),
            ),
        }
    }
}

/// Every name a path on the persistence surface is made of (`.git`, `hooks`, `.vscode`,
/// `tasks.json`, `.envrc`, `cordon.toml`, …): what a glob copied into a directory could write
/// there. Where each is on the surface is the assessment's question.
pub(super) fn surface_names() -> impl Iterator<Item = &'static str> {
    [".git"]
        .into_iter()
        .chain(surface_entries().flat_map(|(n, _)| n.split('/')))
}

/// Every named entry of the persistence surface's lists, with its reason.
fn surface_entries() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    use cordon_policy::surface::{
        CORDON_FILES, GIT_CONFIG, HOME_DIRS, HOME_FILES, TOOL_DIRS, TOOL_FILES,
    };
    GIT_CONFIG
        .iter()
        .chain(TOOL_FILES)
        .chain(TOOL_DIRS)
        .chain(HOME_FILES)
        .chain(HOME_DIRS)
        .chain(CORDON_FILES)
}

/// The last component of each name on the persistence surface (`config`, `.envrc`,
/// `settings.json`, `.husky`): what a program that writes one file under a name only it knows
/// (`rustc --out-dir DIR`) could write. A directory's name written as a file holds nothing,
/// and any name inside a surface directory is the surface already.
pub(super) fn surface_file_names() -> impl Iterator<Item = &'static str> {
    surface_entries().filter_map(|(n, _)| n.rsplit('/').find(|c| !c.is_empty()))
}

/// Whether the glob `pattern` (`*`, `?`, `[…]`) matches `name`, as bash could match it:
/// case-insensitively (`nocaseglob`) and with a leading dot matched by a wildcard (`dotglob`),
/// both options a line may set. A bracket it cannot read matches any one character.
fn glob_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| go(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some('[') => {
                let Some(c) = n.first() else { return false };
                let mut i = 1;
                let negate = matches!(p.get(i), Some('!' | '^'));
                if negate {
                    i += 1;
                }
                let start = i;
                let mut hit = false;
                while i < p.len() && (p[i] != ']' || i == start) {
                    if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
                        hit |= (p[i]..=p[i + 2]).contains(c);
                        i += 3;
                    } else {
                        hit |= p[i] == *c;
                        i += 1;
                    }
                }
                if i >= p.len() {
                    // No closing bracket: taken as any character (never less strict).
                    return go(&p[1..], &n[1..]) || go(&p[1..], n);
                }
                (hit != negate) && go(&p[i + 1..], &n[1..])
            }
            Some('\\') if p.len() > 1 => n.first() == Some(&p[1]) && go(&p[2..], &n[1..]),
            Some(c) => n.first() == Some(c) && go(&p[1..], &n[1..]),
        }
    }
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let n: Vec<char> = name.to_lowercase().chars().collect();
    go(&p, &n)
}
