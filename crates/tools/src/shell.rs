//! Finds every simple command a shell line would run.
//!
//! The line is parsed with tree-sitter-bash and walked: through lists (`&&`, `||`, `;`,
//! `&`, newlines), pipelines, subshells, groups, `if`/`for`/`while`/`until`/`case`,
//! function bodies, command and process substitutions (wherever they appear: arguments,
//! double-quoted strings, assignments, redirection targets, `[[ ]]`, arithmetic,
//! here-strings, unquoted here-documents). Each simple command's words are resolved
//! (quotes removed, parts concatenated), `VAR=value` prefixes are stripped, and
//! commands that run other commands — `sudo`, `env`, `timeout`, `xargs`,
//! `find -exec`, `watch`, `bash -c`, … — are seen through: both the wrapper and the
//! command it runs are reported, and shell strings (`sh -c STRING`) are parsed in turn.
//!
//! Anything that means the line must never be allowed without asking is a [`Concern`]:
//! syntax that does not parse or that this module does not model, a command name whose
//! value is not known before the line runs, code we cannot see (`eval`, `source`),
//! output redirections to files, loader variables such as `LD_PRELOAD`, and any other
//! variable put in a program's environment (`GIT_PAGER=… git log`, `env EDITOR=… git commit`,
//! `export NODE_OPTIONS=…`) unless it is on a short allow-list of inert ones
//! ([`is_inert_variable`]: locale, terminal, colour, …). A plain assignment (`x=1; echo $x`)
//! does not reach a program's environment, except for a variable the shell inherited (bash
//! exports those). Which ones it inherited the caller may know ([`parse_in`] with
//! [`Inherited::Exactly`]: the names of the environment the shell starts with, plus
//! [`SHELL_EXPORTED`], `PWD`, `OLDPWD` and `SHLVL`, which shells export on their own);
//! otherwise ([`parse`], [`Inherited::Unknown`]) one whose name has no lower-case letter is
//! taken as possibly inherited (`HOME=/tmp/x; git log`), and so are the lower-case ones
//! programs read from the environment, `*_proxy` (`http_proxy=…; curl …`) and `npm_config_*`;
//! the shell's own `REPLY`, `OPTARG`, `OPTIND` and `MAPFILE` are not. Loader variables count
//! wherever they are set, and exports and prefix assignments (`export X=1`, `X=1 cmd`) whatever
//! the shell inherited. With [`Inherited::Exactly`], an inherited hook variable (`BASH_ENV`) or
//! one that changes the options of a program the analysis reads ([`changes_modelled_options`]:
//! `TAR_OPTIONS`, `SIMPLE_BACKUP_SUFFIX`, `GIT_CONFIG_COUNT`, …, which only the policy's
//! `sandbox.env` can pass) is a concern on every line, as if the line set it. Variables
//! assigned without an `=` word are judged the same way: by
//! `read`, `printf -v`, `mapfile`/`readarray`, `getopts`, `for`/`select` loops, named file
//! descriptors (`exec {NAME}>file`), and arithmetic (`let`, `(( NAME = … ))`, `$(( NAME++ ))`,
//! array subscripts, also those of names given as strings, `read 'a[NAME=1]'`, and the
//! operands of `[[ … -eq … ]]`), so `for f in *.rs` and `while IFS= read -r line` stay silent
//! while `read -r HOME` and `for PATH in …` do not. A variable name only known when the line
//! runs (`read "$name"`, `printf "$fmt" …`, which may be `-v NAME`) may be any variable. Not
//! seen: assignments that arithmetic finds in a variable's value (`x='HOME=1'; (( x ))`) or
//! makes through an integer variable (`declare -i n; n='HOME=1'`), and `wait -p NAME`.
//!
//! bash evaluates the subscript of a variable name it reads from text at run time, and
//! expands it first, running any command substitution in it: a builtin's name operand
//! (`read 'a[$(cmd)]'`, `printf -v`, `mapfile`, `getopts`, `unset`), the name part of a
//! declaration word (`declare 'a[$(cmd)]=1'`), and arithmetic given as a string (`let
//! 'a[$(cmd)]=1'`, `[[ 1 -eq 'a[$(cmd)]' ]]`). Any `$` or backtick the parser did not read as
//! an expansion there is [`Concern::Opaque`], a plain `$i` included: its value is evaluated as
//! arithmetic in turn, and `x[$(cmd)]` would run `cmd`. So is a builtin's name operand with
//! expansions (`read "$name"`). Subscripts the parser reads itself (`a[$(cmd)]=1`, `(( a[$i]
//! ))`) are walked like any other code, and values are not known (`i='x[$(cmd)]'; (( a[$i]
//! ))` is not seen).
//!
//! What changes the meaning of later commands is a [`Concern::Rebinding`] (`BASH_CMDS[ls]=…`,
//! `IFS=/`, `shopt -s expand_aliases`, a function named like a builtin or a system program; see
//! `rebind.rs`), and a variable's value that bash evaluates as code (arithmetic, `${!x}`,
//! `${x@P}`) is [`Concern::Opaque`] unless it is known to be a plain number (see
//! `values.rs`). Redirections to `/dev/tcp/…` or `/dev/udp/…` are [`Concern::Network`], and an
//! input redirection from a target only known at run time is [`Concern::DynamicRedirect`].
//!
//! The parser fails closed: on any input it returns, never panics, and whenever
//! tree-sitter reports a syntax error the result carries [`Concern::Unparsed`]. Where
//! tree-sitter-bash is known to read a line differently from bash without reporting an
//! error, the line is checked and reported as [`Concern::Unparsed`] too: `$'\\'` followed
//! by another quote, command substitutions inside `${var#pattern}`-style expansions,
//! `#` after an escaped blank, line continuations inside a word, here-document delimiters,
//! escaped blanks between words, redirection targets on the next line, reserved words read
//! as command names. Work is bounded: input over [`MAX_LINE_BYTES`], shell strings nested
//! deeper than [`MAX_SHELL_DEPTH`], deep syntax or a parse that takes too long are
//! [`Concern::Unparsed`].
//!
//! The options of the programs agents run most are examined for what they do beyond reading
//! (`find -delete`, `sort -o FILE`, `sed -i`, `rg --pre`, `git -c`, `python -c`, …): files
//! they write are [`Concern::WriteRedirect`]s, and deleting, running code or reaching the network
//! are [`Effect`]s of the command; each command also gets the [`SimpleCommand::key`] rules
//! are matched against (see `programs.rs`).
//!
//! Not seen through (reported as the command they are, so rules on their names apply):
//! commands that run code in another language (`python -c`, `perl -e`, `node -e`), remote
//! commands (`ssh host CMD`), and runners such as `parallel`, `systemd-run`, `docker exec`.
//! (`unshare`, `nsenter`, `setpriv`, `valgrind`, `ccache`, `distcc` and the like are seen
//! through: their command is reported too, beside them.) A shell started without `-c` that
//! reads its commands
//! from standard input (`curl … | sh`) is [`Concern::Opaque`]; one given a script file
//! (`bash build.sh`) is just that command.
//!
//! ```
//! use cordon_tools::shell::{parse, Concern};
//!
//! let line = parse("ls && sudo r''m -rf /tmp/x > log");
//! let argvs: Vec<_> = line.commands.iter().map(|c| c.words.join(" ")).collect();
//! assert_eq!(argvs, ["ls", "sudo rm -rf /tmp/x", "rm -rf /tmp/x"]);
//! assert_eq!(line.concerns, [Concern::WriteRedirect("log".into())]);
//! ```

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, Parser, Tree};

pub use cordon_policy::verdict::Known;

mod heredoc;
mod options;
mod programs;
mod rebind;
mod values;
mod variables;
mod words;
mod wrappers;

#[cfg(test)]
mod tests;

pub(crate) use programs::lexical_path;
pub use programs::{Effect, EffectKind};
pub use rebind::{rebinds_commands, BUILTINS};
use values::Values;
pub use variables::{
    changes_modelled_options, is_hook_variable, is_inert_variable, SHELL_EXPORTED,
};
use words::{arithmetic_targets, join_raw, resolve, Src, Word};
use wrappers::Inner;

/// The shell a line is run with: bash, which this module's analysis models, where it is
/// installed at a trusted absolute path (`/usr/bin/bash`, `/bin/bash`; never looked up on
/// `PATH`, which the caller's environment decides), else `/bin/sh`.
pub fn line_shell() -> &'static str {
    ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
        .unwrap_or("/bin/sh")
}

/// Longest line (and longest argv, summed) that is parsed at all; longer input is
/// [`Concern::Unparsed`].
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// How deeply shell strings (`bash -c '…'` inside `sh -c "…"`, `eval`, `watch`, …) are
/// followed; deeper is [`Concern::Unparsed`].
pub const MAX_SHELL_DEPTH: usize = 8;
/// How deeply syntax may nest (substitutions in substitutions, subshells, …).
const MAX_NODE_DEPTH: usize = 200;
/// How many wrappers may be stacked (`sudo env timeout nice …`).
const MAX_WRAPPER_DEPTH: usize = 16;
/// How many times a line is parsed again after escaping the `[` the parser read as a test.
const MAX_BRACKET_ROUNDS: usize = 16;
/// Wall-clock budget for tree-sitter on one call of [`parse`]; exceeding it is
/// [`Concern::Unparsed`]. Generous: it only stops pathological input.
const PARSE_BUDGET: Duration = Duration::from_secs(1);

/// One simple command the line would run, with quoting resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// argv after quote removal and concatenation (`r''m` -> `rm`, `"rm"` -> `rm`, `\rm` -> `rm`),
    /// with literal `VAR=value` prefixes stripped and wrappers seen through (see below).
    ///
    /// A word whose value is only known when the line runs (`$HOME`, `$(pwd)`, `"$x"`) is
    /// given as written.
    pub words: Vec<String>,
    /// The source text of this command (for display).
    pub text: String,
    /// The words rules are matched against: `words`, except for the programs whose options
    /// are examined ([`Effect`]), where it is their canonical form: `git` without the global
    /// options that only locate the repository or turn the pager off (`git --no-pager log` is
    /// `git log`), and for programs whose options may follow operands, the options first with
    /// long names in full (`git reset HEAD~1 --har` is `git reset --hard HEAD~1`).
    pub key: Vec<String>,
    /// A wrapper that runs its command as it is (`time`, `timeout 300`, `nice`, `env`,
    /// `xargs`, `bash -c STRING`): decided by the commands it runs unless a rule names it.
    pub transparent: bool,
    /// What its options do that an allow rule on the program does not cover: deleting,
    /// running code, reaching the network (the files they write are
    /// [`Concern::WriteRedirect`]s of the line).
    pub effects: Vec<Effect>,
    /// A builtin that, with these literal arguments, only reads or sets the shell's own state
    /// (`true`, `:`, `[ -f x ]`, `set -euo pipefail`, `cd DIR`, `command -v git`, `read x`;
    /// see [`STATE_ONLY`]): where no rule names it, it is allowed as a careful operator would
    /// (`cd` and `pushd` only to a directory inside the roots). What it changes is judged
    /// where it matters (a variable `read` sets, a `set` option: the line's other concerns).
    pub state_only: bool,
    /// Another reading of the command before it, for the rules only: `rm -r -f /usr` is also
    /// read as `rm -rf /usr`, one per operand (see `programs::rm_readings`), so that a deny rule
    /// matches rm's meaning, not one spelling of it. It needs no decision of its own unless a
    /// rule names it.
    pub reading: bool,
    /// How much of each word of `key` is known before the line runs (parallel to it): a word
    /// whose value only the running shell knows (`"$x"`, `$(cat f)`, a glob, xargs input) is in
    /// `key` as written, and the approval layer asks where a deny or ask rule could match some
    /// value of it.
    pub known: Vec<Known>,
}

/// How much of each key word is known: a key word that is, or contains, the text of a word
/// whose value is only known at run time stands for any one word, or any words where bash
/// splits or expands it (unquoted, a glob, xargs input). Canonical forms keep such a word's
/// text, so it is found again after reordering; a literal word that happens to be spelled like
/// it counts as unknown too (an ask at worst). A locale string without expansions (`$"build"`)
/// is its text where no message catalogue translates it, as rm's readings take it.
fn known_of(key: &[String], words: &[Word]) -> Vec<Known> {
    // Chosen once: a line of many literal words has a long key and many words.
    let unknown: Vec<&Word> = words
        .iter()
        .filter(|w| (!w.literal && programs::locale_text(&w.raw).is_none()) || run_time_tilde(w))
        .collect();
    key.iter()
        .map(|k| {
            unknown
                .iter()
                .filter(|w| w.text == *k || (w.text.len() > 1 && k.contains(&w.text)))
                // `"$@"`, `"${a[@]}"`, `"${!a[@]}"` are as many words as there are elements,
                // quoted or not (any `@` in an expansion is taken so: an ask at worst).
                .map(|w| {
                    if w.single && !w.text.contains('@') {
                        Known::OneWord
                    } else {
                        Known::AnyWords
                    }
                })
                .max()
                .unwrap_or(Known::Literal)
        })
        .collect()
}

/// Whether `w` starts with a tilde prefix whose directory only the running shell knows: a
/// user's home (`~root`), the previous directory (`~-`, `$OLDPWD`), the directory stack
/// (`~1`, `~+1`). The parser keeps such a word literal; `~` and `~+` are the home and the
/// working directory, which the assessment anchors.
fn run_time_tilde(w: &Word) -> bool {
    let prefix = w.raw.split('/').next().unwrap_or_default();
    prefix.starts_with('~') && prefix != "~" && prefix != "~+"
}

/// The builtins that run no program and write no file, with literal arguments: their effect is
/// on the shell's own state, which the rest of the analysis follows (`read NAME` assigns NAME,
/// `set -o OPT` is judged by the option lists, `cd` moves relative paths). Not `popd`: it goes
/// to a directory an earlier call may have pushed.
pub const STATE_ONLY: &[&str] = &[
    "true", ":", "false", "test", "[", "set", "shopt", "cd", "pushd", "dirs", "pwd", "command",
    "type", "read", "shift", "umask",
];

/// Whether `words` (all literal) is a use of a [`STATE_ONLY`] builtin that only reads or sets
/// the shell's state: `command` only with `-v`/`-V` (it otherwise runs its operand), `umask`
/// only without a mode, `[` only closed by `]`.
fn is_state_only(words: &[Word]) -> bool {
    let Some(name) = words.first() else {
        return false;
    };
    if !words.iter().all(|w| w.literal) || !STATE_ONLY.contains(&name.text.as_str()) {
        return false;
    }
    let args = &words[1..];
    match name.text.as_str() {
        "command" => args
            .first()
            .is_some_and(|a| a.text == "-v" || a.text == "-V"),
        "umask" => args.iter().all(|a| a.text.starts_with('-')),
        "[" => args.last().is_some_and(|a| a.text == "]"),
        _ => true,
    }
}

/// Something about the line that means it must never be auto-allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Concern {
    /// The line does not parse (tree-sitter ERROR / MISSING nodes), or uses syntax we do not model.
    Unparsed(String),
    /// A word that is not a literal after quote removal (`$X`, `$(...)`, an unquoted glob or
    /// brace expansion) appears as a command name or where a wrapper's options or inner
    /// command would be.
    DynamicCommand(String),
    /// eval, source, `.`, and similar that run code we cannot see; also code bash finds in
    /// text it evaluates itself (`read 'a[$(cmd)]'`, `let 'a[$i]=1'`).
    Opaque(String),
    /// An output redirection (`>`, `>>`, `&>`, `>|`, `<>`) to a target, or a file a program's
    /// option or operand writes (`sort -o FILE`, `sed -i … FILE`, `tee FILE`): the file path as
    /// written (resolved literal) or the raw text if dynamic.
    WriteRedirect(String),
    /// A loader variable (LD_PRELOAD=..., LD_LIBRARY_PATH=..., LD_AUDIT=..., DYLD_*) set
    /// anywhere in the line: as a command's prefix, through `env`/`sudo`, exported, plainly
    /// assigned, or assigned by a builtin, a loop or arithmetic (`read PATH`, `for PATH in`).
    ///
    /// Also other variables that make a program run code the line does not show; see
    /// [`is_hook_variable`].
    LoaderVariable(String),
    /// An option of a program that deletes, runs code the line does not show or reaches the
    /// network (`find -delete`, `rg --pre CMD`, `sed 'e …'`, `git -c core.pager=…`): the
    /// [`Effect`]'s description. Only the assessment reports it, and only when the rule that
    /// allowed the command does not name the option.
    OptionEffect(String),
    /// Any other variable put in a program's environment that is not known to be inert (see
    /// [`is_inert_variable`]): `GIT_PAGER=… git log`, `env GIT_SSH_COMMAND=… git push`,
    /// `sudo PAGER=… man ls`, `export NODE_OPTIONS=…`, `declare -x NAME=…`, or an assignment
    /// to a possibly inherited variable (upper-case, `*_proxy`, `npm_config_*`), plain
    /// (`HOME=/tmp/x; git log`) or without an `=` word (`read HOME`, `for HOME in …`,
    /// `(( HOME = 1 ))`). The detail is the assignment as written (or the name, for `export
    /// NAME` and assignments without `=`); it is the whole command when it may set variables it
    /// does not name (`set -a`, `export "$x"`, `declare -n ref=…`, `read "$name"`,
    /// `printf "$fmt" …`), and the target as written when only its name is not known before
    /// the line runs (`$v` for `(( $v = 1 ))`).
    Environment(String),
    /// Something that changes what later commands in the line mean, so that the command a rule
    /// allowed is not the one that runs: an assignment to a variable bash consults to find or
    /// read commands (`BASH_CMDS[ls]=/bin/rm`, `BASH_ALIASES`, `IFS`, `CDPATH`, `GLOBIGNORE`;
    /// see [`rebinds_commands`]), `enable NAME`, a `shopt`/`set` option outside the safe
    /// lists, or a function named like a builtin or a system program (`ls() { …; }`).
    Rebinding(String),
    /// A redirection to bash's network paths (`< /dev/tcp/HOST/PORT`, `> /dev/udp/…`, `exec
    /// 3<>/dev/tcp/…`): bash connects, whatever the command.
    Network(String),
    /// An input redirection whose target is only known when the line runs (`< "$f"`, `<
    /// $(cmd)`): it may be `/dev/tcp/…`.
    DynamicRedirect(String),
    /// Something outside the subset of bash the analysis models (docs/shell-analysis.md):
    /// an option of a wrapper that moves its command or changes how it is started (`env -C
    /// DIR`, `exec -a NAME`), a shell string in another shell's grammar. Never allowed
    /// unasked; the commands found around it are still decided (a deny rule still denies).
    Outside(String),
}

impl Concern {
    /// A short name for the kind of concern (`unparsed`, `dynamic-command`, `opaque`,
    /// `write-redirect`, `loader-variable`, `environment`, `rebinding`, `network`,
    /// `dynamic-redirect`).
    pub fn kind(&self) -> &'static str {
        match self {
            Concern::Rebinding(_) => "rebinding",
            Concern::Network(_) => "network",
            Concern::DynamicRedirect(_) => "dynamic-redirect",
            Concern::Unparsed(_) => "unparsed",
            Concern::DynamicCommand(_) => "dynamic-command",
            Concern::Opaque(_) => "opaque",
            Concern::WriteRedirect(_) => "write-redirect",
            Concern::LoaderVariable(_) => "loader-variable",
            Concern::Environment(_) => "environment",
            Concern::OptionEffect(_) => "option-effect",
            Concern::Outside(_) => "outside-subset",
        }
    }

    /// The detail: the offending text or a message.
    pub fn detail(&self) -> &str {
        match self {
            Concern::Unparsed(s)
            | Concern::DynamicCommand(s)
            | Concern::Opaque(s)
            | Concern::WriteRedirect(s)
            | Concern::LoaderVariable(s)
            | Concern::Environment(s)
            | Concern::OptionEffect(s)
            | Concern::Rebinding(s)
            | Concern::Network(s)
            | Concern::DynamicRedirect(s)
            | Concern::Outside(s) => s,
        }
    }

    /// For [`Concern::Environment`]: the variable it names, when it names one (`GIT_PAGER`
    /// for `GIT_PAGER=less`; none for `set -a`).
    pub fn variable(&self) -> Option<&str> {
        match self {
            Concern::Environment(s) | Concern::LoaderVariable(s) => variables::leading_name(s),
            _ => None,
        }
    }
}

impl fmt::Display for Concern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Concern::Unparsed(m) => write!(f, "cannot be parsed safely: {m}"),
            Concern::DynamicCommand(w) => {
                write!(f, "command not known before it runs: `{w}`")
            }
            Concern::Opaque(w) => write!(f, "runs code that cannot be inspected: `{w}`"),
            Concern::WriteRedirect(t) => write!(f, "writes `{t}`"),
            Concern::OptionEffect(what) => write!(f, "{what}"),
            Concern::LoaderVariable(v) => write!(f, "sets loader variable `{v}`"),
            Concern::Rebinding(v) => write!(f, "changes what later commands mean: `{v}`"),
            Concern::Network(t) => write!(f, "connects to the network through `{t}`"),
            Concern::DynamicRedirect(t) => {
                write!(f, "redirects from `{t}`, only known when the line runs")
            }
            Concern::Outside(what) => {
                write!(f, "outside what the shell analysis models: {what}")
            }
            Concern::Environment(v) => match self.variable() {
                Some(name) => write!(
                    f,
                    "puts `{name}` in a program's environment (`{v}`), which may change what the program runs"
                ),
                None => write!(
                    f,
                    "may put variables in a program's environment (`{v}`), which may change what the program runs"
                ),
            },
        }
    }
}

/// Every simple command a line would run, and what makes it unsafe to allow unasked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedLine {
    /// In source order; a wrapper comes before the command it runs, a command before
    /// the commands in its substitutions.
    pub commands: Vec<SimpleCommand>,
    /// Without duplicates, in the order found.
    pub concerns: Vec<Concern>,
}

impl ParsedLine {
    /// Whether the whole line was understood (no [`Concern::Unparsed`]).
    pub fn is_parsed(&self) -> bool {
        !self
            .concerns
            .iter()
            .any(|c| matches!(c, Concern::Unparsed(_)))
    }
}

/// Which variables the shell that runs the line inherits from its environment. A variable the
/// line assigns without exporting it (`NAME=value`, `read NAME`, `for NAME in …`) reaches the
/// programs the line runs only if it was inherited (bash exports what it inherited), so this
/// decides whether such an assignment is a [`Concern::Environment`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Inherited {
    /// Not known: a name without a lower-case letter, `*_proxy` and `npm_config_*` are taken as
    /// possibly inherited (what [`parse`] and [`parse_argv`] assume).
    #[default]
    Unknown,
    /// Exactly these names (the environment the shell is started with, such as the sandbox's
    /// scrubbed one). The variables a shell exports on its own, [`SHELL_EXPORTED`] (`PWD`,
    /// `OLDPWD`, `SHLVL`), count as inherited whether listed or not.
    Exactly(BTreeSet<String>),
}

impl Inherited {
    /// [`Inherited::Exactly`] the given names (`Inherited::exactly(env.keys())`).
    pub fn exactly<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Inherited::Exactly(names.into_iter().map(Into::into).collect())
    }
}

/// Parses a shell line into every simple command it would run. Never panics, on any input.
/// Which variables the shell inherited is not known ([`Inherited::Unknown`]); see [`parse_in`].
pub fn parse(line: &str) -> ParsedLine {
    parse_in(line, &Inherited::Unknown)
}

/// [`parse`], for a shell that inherits the given variables: a variable assigned without being
/// exported is a [`Concern::Environment`] only if it is inherited (or a loader variable, which
/// always is). Exports and prefix assignments (`export X=1`, `X=1 cmd`, `env X=1 cmd`) are
/// judged the same way whatever the shell inherited.
pub fn parse_in(line: &str, inherited: &Inherited) -> ParsedLine {
    let mut walker = Walker::new(inherited);
    walker.line(line);
    let mut parsed = walker.finish();
    parsed
        .concerns
        .extend(variables::inherited_concerns(inherited));
    parsed
}

/// The argv form (`cordon exec -- PROG ARGS`): no parsing of the words themselves, but wrappers
/// are seen through and `sh -c`/`bash -c`/`bash -lc` arguments are parsed, exactly as for `parse`.
pub fn parse_argv(argv: &[String]) -> ParsedLine {
    parse_argv_in(argv, &Inherited::Unknown)
}

/// [`parse_argv`], for a command started with the given variables (see [`parse_in`]); the
/// shell strings it runs (`sh -c STRING`) are taken to inherit them too.
pub fn parse_argv_in(argv: &[String], inherited: &Inherited) -> ParsedLine {
    let mut walker = Walker::new(inherited);
    let total: usize = argv.iter().map(|a| a.len() + 1).sum();
    if total > MAX_LINE_BYTES {
        walker.concern(Concern::Unparsed(format!(
            "command is longer than {MAX_LINE_BYTES} bytes"
        )));
    } else if argv.iter().any(|a| a.contains('\0')) {
        walker.concern(Concern::Unparsed(
            "an argument contains a NUL byte".to_string(),
        ));
    } else {
        let words: Vec<Word> = argv.iter().map(|a| Word::lit(a)).collect();
        let text = join_raw(&words);
        walker.run(words, text, 0);
    }
    let mut parsed = walker.finish();
    parsed
        .concerns
        .extend(variables::inherited_concerns(inherited));
    parsed
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses with a reused per-thread parser. `None` when the parser is unavailable or gave up.
fn parse_tree(line: &str, deadline: Instant) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        let bytes = scanner_safe(line);
        let mut progress = |_: &tree_sitter::ParseState| {
            if Instant::now() > deadline {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or(&[]),
            None,
            Some(options),
        );
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// The line as tree-sitter-bash's scanner may be given it: every byte of a non-ASCII character
/// replaced by `%`, so byte offsets (and the text taken from the original line by them) stay
/// the same. The scanner (0.25) passes the next character to C's `isdigit`, whose table covers
/// only -128..=255: `x=$(echo {\u{10FFFF})` read far outside it and crashed cordon (found by
/// the shell property test). `%` is what a non-ASCII character is to bash's grammar here: a
/// plain word byte, neither a name's nor a number's, nor special.
fn scanner_safe(line: &str) -> std::borrow::Cow<'_, [u8]> {
    if line.is_ascii() {
        return std::borrow::Cow::Borrowed(line.as_bytes());
    }
    std::borrow::Cow::Owned(
        line.bytes()
            .map(|b| if b.is_ascii() { b } else { b'%' })
            .collect(),
    )
}

/// The first ERROR or MISSING node, described.
fn first_error(root: Node, src: &Src) -> String {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_missing() {
            let p = node.start_position();
            return format!(
                "syntax error at line {}, column {}: missing `{}`",
                p.row + 1,
                p.column + 1,
                node.kind()
            );
        }
        if node.is_error() {
            let p = node.start_position();
            let mut near: String = src.raw(node).chars().take(40).collect();
            if near.is_empty() {
                near = src
                    .slice(node.start_byte(), node.start_byte() + 40)
                    .chars()
                    .take(40)
                    .collect();
            }
            return format!(
                "syntax error at line {}, column {} near `{}`",
                p.row + 1,
                p.column + 1,
                near.trim_end()
            );
        }
        // Descend only into subtrees that contain the error.
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return "syntax error".to_string();
            }
        }
    }
}

/// The byte offsets of the `[` (and, for a POSIX shell, `[[`) that open what the parser read as
/// a test command, in order; `None` when there is none.
fn misread_brackets(root: Node, text: &str, posix: bool) -> Option<Vec<usize>> {
    // Most lines have no `[` at all: no walk.
    if !text.contains('[') {
        return None;
    }
    let mut at = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "test_command" {
            if let Some(open) = node.child(0) {
                if open.kind() == "[" || (posix && open.kind() == "[[") {
                    at.push(open.start_byte());
                    continue;
                }
            }
        }
        stack.extend(node.children(&mut cursor));
    }
    at.sort_unstable();
    at.dedup();
    (!at.is_empty()).then_some(at)
}

/// `line` with every `((` that is not `$((` spaced apart (`( (`), as a POSIX shell reads it;
/// `None` when there is none.
fn posix_double_parens(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let at: Vec<usize> = (0..b.len().saturating_sub(1))
        .filter(|&i| b[i] == b'(' && b[i + 1] == b'(' && (i == 0 || b[i - 1] != b'$'))
        .collect();
    if at.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(line.len() + at.len());
    let mut last = 0;
    for i in at {
        out.push_str(&line[last..=i]);
        out.push(' ');
        last = i + 1;
    }
    out.push_str(&line[last..]);
    Some(out)
}

/// Whether text bash evaluates as a name with a subscript hides a substitution.
fn evaluated_text_hides_code_in(text: &str) -> bool {
    variables::evaluated_text_hides_code(text)
}

/// Whether `s` is non-empty and made only of backslash-newline line continuations.
fn only_continuations(s: &str) -> bool {
    !s.is_empty() && s.split("\\\n").all(str::is_empty)
}

/// Where a `NAME=value` is, which decides whether it reaches a program's environment.
#[derive(Clone, Copy)]
enum Place {
    /// Before a command's name: in that command's environment.
    Prefix,
    /// In `export`/`declare`/`local`/…: judged with the declaration's command.
    Declaration,
    /// On its own (`x=1; …`): a shell variable, exported only if it was inherited.
    Plain,
}

struct Walker<'a> {
    out: ParsedLine,
    /// Which variables the shell inherited.
    inherited: &'a Inherited,
    /// The concerns already reported (no duplicates).
    seen: HashSet<Concern>,
    shell_depth: usize,
    node_depth: usize,
    /// Inside an arithmetic context (`(( ))`, `$(( ))`, `[[ ]]`, c-style `for`).
    arith: bool,
    /// Running a command that `xargs` gives more operands, read from its input.
    input_operands: bool,
    deadline: Instant,
    /// Variables' values, for the uses that run them as code.
    values: Values,
    /// Functions the line defines, in walk order.
    functions: Vec<String>,
    /// The prefix assignments being walked persist or reach a function body (a special
    /// builtin's or a function's prefix).
    prefix_persists: bool,
    /// The command being run is a declaration the parser read, whose `NAME=value` words are
    /// walked as assignments.
    parsed_declaration: bool,
    /// That declaration stands at the top level of its shell.
    top_declaration: bool,
    /// The line being walked is read by a POSIX shell (`sh -c STRING`: dash has no `[[`).
    posix: bool,
    /// Walking an alternative reading of a line that did not parse.
    alternative_depth: usize,
    /// The command being run is a wrapper's inner command, not one the parser read.
    from_wrapper: bool,
}

impl<'a> Walker<'a> {
    fn new(inherited: &'a Inherited) -> Self {
        Walker {
            out: ParsedLine::default(),
            inherited,
            seen: HashSet::new(),
            shell_depth: 0,
            node_depth: 0,
            arith: false,
            input_operands: false,
            deadline: Instant::now() + PARSE_BUDGET,
            values: Values::default(),
            functions: Vec::new(),
            prefix_persists: false,
            parsed_declaration: false,
            top_declaration: false,
            posix: false,
            alternative_depth: 0,
            from_wrapper: false,
        }
    }

    fn finish(mut self) -> ParsedLine {
        for detail in self.values.finish() {
            self.concern(Concern::Opaque(detail));
        }
        // Called here or not: an agent's shell keeps its functions for the next call.
        let functions = std::mem::take(&mut self.functions);
        for f in functions {
            if rebind::shadows_command(&f) {
                self.concern(Concern::Rebinding(format!(
                    "function `{f}` takes the place of the command `{f}`"
                )));
            }
        }
        self.out
    }

    fn concern(&mut self, c: Concern) {
        if self.seen.insert(c.clone()) {
            self.out.concerns.push(c);
        }
    }

    /// Parses one shell line (the top-level line, or a nested shell string).
    fn line(&mut self, line: &str) {
        if self.shell_depth > MAX_SHELL_DEPTH {
            return self.concern(Concern::Unparsed(format!(
                "shell strings nested deeper than {MAX_SHELL_DEPTH} levels"
            )));
        }
        if line.len() > MAX_LINE_BYTES {
            return self.concern(Concern::Unparsed(format!(
                "command is longer than {MAX_LINE_BYTES} bytes"
            )));
        }
        if line.contains('\0') {
            return self.concern(Concern::Unparsed("command contains a NUL byte".to_string()));
        }
        if line.contains("\\\r\n") {
            // bash keeps the CR in the word and ends the command at the LF; the parser
            // treats the three bytes as a line continuation.
            return self.concern(Concern::Unparsed(
                "backslash before CR LF (bash and the parser disagree)".to_string(),
            ));
        }
        // Here-documents are read as bash reads them (tree-sitter-bash's scanner ends the
        // delimiter elsewhere, and a body then hides commands bash runs).
        if heredoc::may_have(line) {
            match heredoc::split(line) {
                Ok(split) => {
                    // Where the parser reads the line as an error, bash's reading (below) may
                    // still be right, but nothing confirms it: the line is not allowed.
                    let confirmed =
                        parse_tree(line, self.deadline).is_some_and(|t| !t.root_node().has_error());
                    if !confirmed {
                        self.concern(Concern::Unparsed(
                            "here-documents the parser reads differently from bash".to_string(),
                        ));
                    }
                    self.walk_text(&split.text);
                    for (quoted, body) in &split.bodies {
                        // A quoted delimiter makes the body plain data; otherwise its
                        // substitutions run.
                        if !quoted && (body.contains("$(") || body.contains('`')) {
                            self.heredoc_body(body);
                        }
                    }
                }
                Err(heredoc::Unsure(why)) => {
                    self.concern(Concern::Unparsed(format!(
                        "here-documents that cannot be read as bash reads them: {why}"
                    )));
                    self.walk_text(line);
                    // Every word sequence bash could run is seen by the deny rules: the line
                    // read again with each body's lines taken as commands.
                    self.walk_text(&line.replace("<<", "< "));
                }
            }
            return;
        }
        self.walk_text(line);
    }

    /// Parses `line` and walks its commands.
    fn walk_text(&mut self, line: &str) {
        let Some(mut tree) = parse_tree(line, self.deadline) else {
            return self.concern(Concern::Unparsed(
                "the shell parser gave up on this input".to_string(),
            ));
        };
        // `[ … ]` is a plain command to bash (and `[[ … ]]` to a POSIX shell): the grammar's
        // test-command reading, where `||`, `|`, `>` inside are operators of the test, is not
        // bash's. Each such `[` is escaped (`\[`, the same word to bash) and the line parsed
        // again, so that what follows is read as bash reads it.
        let misparsed = tree.root_node().has_error();
        let mut owned = String::new();
        let mut rounds = 0;
        loop {
            let text = if owned.is_empty() { line } else { &owned };
            let Some(at) = misread_brackets(tree.root_node(), text, self.posix) else {
                break;
            };
            let mut fixed = String::with_capacity(text.len() + at.len());
            let mut last = 0;
            for &i in &at {
                fixed.push_str(&text[last..i]);
                fixed.push('\\');
                last = i;
            }
            fixed.push_str(&text[last..]);
            owned = fixed;
            rounds += 1;
            match parse_tree(&owned, self.deadline) {
                Some(t) if rounds <= MAX_BRACKET_ROUNDS => tree = t,
                _ => {
                    return self.concern(Concern::Unparsed(
                        "`[` commands the parser keeps reading as tests".to_string(),
                    ))
                }
            }
        }
        let line = if owned.is_empty() { line } else { &owned };
        let src = Src::new(line);
        let root = tree.root_node();
        if misparsed && !root.has_error() {
            // Only the line with its `[` escaped parses: nothing confirms that reading.
            self.concern(Concern::Unparsed(
                "a line that parses only with its `[` read as a command".to_string(),
            ));
        }
        if self.posix && self.alternative_depth == 0 {
            if let Some(subshells) = posix_double_parens(line) {
                // dash has no `((`: it runs `((x))` as two subshells around the command `x`.
                self.concern(Concern::Unparsed(
                    "`((` in a POSIX shell's string, which runs it as two subshells".to_string(),
                ));
                self.alternative_depth += 1;
                self.walk_text(&subshells);
                self.alternative_depth -= 1;
            }
        }
        if root.has_error() {
            let msg = first_error(root, &src);
            self.concern(Concern::Unparsed(msg));
            if line.contains("((") && self.alternative_depth == 0 {
                // bash reads `((` that is not arithmetic as two subshells (`((false) || rm
                // x)`): that reading is walked too, so the deny rules see its commands.
                self.alternative_depth += 1;
                self.walk_text(&line.replace("((", "( ("));
                self.alternative_depth -= 1;
            }
        }
        // Each shell string is a shell of its own: what this one assigned is not known there.
        self.values.enter_shell();
        // Best effort even after an error: the commands we can see are still reported.
        self.any(root, &src);
        self.values.leave_shell();
    }

    /// A shell string run by a wrapper (`bash -c STRING`, `eval`, `watch`, …).
    fn nested(&mut self, word: &Word) {
        self.nested_as(word, false)
    }

    /// A shell string, read with POSIX sh grammar when `posix` (`sh -c STRING`).
    fn nested_as(&mut self, word: &Word, posix: bool) {
        if !word.literal {
            return self.concern(Concern::DynamicCommand(word.text.clone()));
        }
        let saved_arith = std::mem::replace(&mut self.arith, false);
        let saved_posix = std::mem::replace(&mut self.posix, posix);
        self.shell_depth += 1;
        self.line(&word.text);
        self.shell_depth -= 1;
        self.posix = saved_posix;
        self.arith = saved_arith;
    }

    fn any(&mut self, node: Node, src: &Src) {
        if !node.is_named() || node.is_missing() {
            return;
        }
        if self.node_depth >= MAX_NODE_DEPTH {
            return self.concern(Concern::Unparsed(format!(
                "syntax nested deeper than {MAX_NODE_DEPTH} levels"
            )));
        }
        self.node_depth += 1;
        self.dispatch(node, src);
        self.node_depth -= 1;
    }

    fn children(&mut self, node: Node, src: &Src) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.any(child, src);
        }
    }

    fn arith_children(&mut self, node: Node, src: &Src) {
        let saved = std::mem::replace(&mut self.arith, true);
        self.children(node, src);
        self.arith = saved;
    }

    fn dispatch(&mut self, node: Node, src: &Src) {
        match node.kind() {
            "program"
            | "list"
            | "pipeline"
            | "subshell"
            | "do_group"
            | "else_clause"
            | "elif_clause"
            | "negated_command"
            | "if_statement"
            | "while_statement"
            | "case_statement"
            | "case_item"
            | "redirected_statement"
            | "variable_assignments"
            | "string"
            | "simple_expansion"
            | "array"
            | "number"
            | "translated_string"
            | "brace_expression"
            | "command_name" => self.children(node, src),
            // Substitutions run commands of their own; arithmetic around them does not
            // make their quoted strings arithmetic.
            "command_substitution" | "process_substitution" => {
                let saved = std::mem::replace(&mut self.arith, false);
                if node.child(0).is_some_and(|c| c.kind() == "`") {
                    self.backticks(node, src);
                } else {
                    self.children(node, src);
                }
                self.arith = saved;
            }
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.functions.push(resolve(&[name], src).text);
                }
                self.children(node, src)
            }
            "expansion" => {
                let raw = src.raw(node);
                if let Some((name, value)) = self.values.expansion(&raw) {
                    let (name, value) = (name.to_string(), value.to_string());
                    self.default_assignment(&name, &value);
                }
                self.children(node, src)
            }
            // `for NAME in …` and `select NAME in …` assign NAME.
            "for_statement" => {
                let mut in_loop = 0;
                if let Some(var) = node.child_by_field_name("variable") {
                    let name = src.raw(var);
                    self.assigned(&Word::lit(&name));
                    let mut cursor = node.walk();
                    let words: Vec<Word> = node
                        .children_by_field_name("value", &mut cursor)
                        .map(|v| resolve(&[v], src))
                        .collect();
                    // Literal numbers, or the indices of an indexed array (`"${!a[@]}"`).
                    let numbers = !words.is_empty()
                        && words.iter().all(|w| {
                            (w.literal && !w.text.is_empty() && values::is_plain_number(&w.text))
                                || self.values.indices_of_indexed_array(&w.raw)
                        });
                    if numbers {
                        in_loop = self.values.push_loop(&[name]);
                    } else {
                        self.values.assign(&name, None, false);
                    }
                }
                self.children(node, src);
                self.values.pop_loop(in_loop);
            }
            "unary_expression" if self.tests_variable(node, src) => {
                self.concern(Concern::Opaque(format!(
                    "{} evaluates the subscript of a name only known when the line runs, which can run commands",
                    src.raw(node)
                )));
                self.arith_children(node, src)
            }
            "binary_expression"
            | "unary_expression"
            | "ternary_expression"
            | "postfix_expression"
            | "parenthesized_expression"
            | "test_command" => {
                // `[[ X -eq Y ]]` evaluates both sides as arithmetic.
                let numeric = node.child_by_field_name("operator").is_some_and(|op| {
                    op.kind() == "test_operator"
                        && matches!(
                            src.raw(op).as_str(),
                            "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
                        )
                });
                if numeric {
                    for side in ["left", "right"] {
                        if let Some(n) = node.child_by_field_name(side) {
                            self.arithmetic(&src.raw(n));
                            self.values.arithmetic(&src.raw(n), false);
                            self.quoted_arithmetic(n, src);
                        }
                    }
                }
                self.arith_children(node, src)
            }
            "subscript" | "arithmetic_expansion" => {
                let raw = src.raw(node);
                self.arithmetic(&raw);
                self.values.arithmetic(&raw, node.kind() == "subscript");
                self.arith_children(node, src)
            }
            "c_style_for_statement" => {
                let header_end = node
                    .child_by_field_name("body")
                    .map_or(node.end_byte(), |b| b.start_byte());
                self.arithmetic(&src.slice(node.start_byte(), header_end));
                // The initializer runs first: inside the loop its targets hold numbers.
                let mut cursor = node.walk();
                let counters: Vec<String> = node
                    .children_by_field_name("initializer", &mut cursor)
                    .flat_map(|i| arithmetic_targets(&src.raw(i)))
                    .filter(|t| t.literal)
                    .filter_map(|t| variables::leading_name(&t.text).map(str::to_string))
                    .collect();
                let in_loop = self.values.push_loop(&counters);
                for field in ["initializer", "condition", "update"] {
                    let mut cursor = node.walk();
                    let parts: Vec<Node> =
                        node.children_by_field_name(field, &mut cursor).collect();
                    for part in parts {
                        self.values.arithmetic(&src.raw(part), false);
                    }
                }
                self.arith_children(node, src);
                self.values.pop_loop(in_loop);
            }
            "compound_statement" => {
                let arith = node.child(0).is_some_and(|c| c.kind() == "((");
                if arith {
                    self.arithmetic(&src.raw(node));
                    self.values.arithmetic(&src.raw(node), false);
                    self.arith_children(node, src)
                } else {
                    self.children(node, src)
                }
            }
            "command" => self.command(node, src),
            "declaration_command" | "unset_command" => self.declaration(node, src),
            "variable_assignment" => {
                let place = match node.parent().map(|p| p.kind()) {
                    Some("declaration_command") => Place::Declaration,
                    // `for ((i = 0; …))`: found with the header's other arithmetic.
                    Some("c_style_for_statement") => return self.children(node, src),
                    _ => Place::Plain,
                };
                self.assignment(node, src, place)
            }
            "concatenation" => {
                self.named_descriptor(node, src);
                // The parts of one word touch (or are joined by line continuations).
                let mut cursor = node.walk();
                let parts: Vec<Node> = node.children(&mut cursor).collect();
                let apart = parts.windows(2).any(|w| {
                    let gap = src.slice(w[0].end_byte(), w[1].start_byte());
                    !gap.is_empty() && !only_continuations(&gap)
                });
                if apart {
                    self.concern(Concern::Unparsed(format!(
                        "a word the parser joined across blanks: `{}`",
                        src.raw(node).chars().take(40).collect::<String>()
                    )));
                }
                self.children(node, src)
            }
            "file_redirect" => self.file_redirect(node, src),
            "herestring_redirect" => {
                let mut cursor = node.walk();
                let word = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() != "comment" && c.kind() != "file_descriptor");
                if let Some(word) = word {
                    let gap = src.slice(node.start_byte(), word.start_byte());
                    if gap.contains('\n') && !gap.contains("\\\n") {
                        self.concern(Concern::Unparsed(
                            "here-string `<<<` without a word on its line".to_string(),
                        ));
                    }
                }
                self.children(node, src)
            }
            "heredoc_redirect" => self.heredoc(node, src),
            "raw_string"
            | "string_content"
            | "ansi_c_string"
            | "word"
            | "regex"
            | "extglob_pattern"
            | "variable_name"
            | "special_variable_name"
            | "test_operator" => {
                let kind = node.kind();
                if kind == "ansi_c_string" && !ansi_c_string_closes_at_end(&src.raw(node)) {
                    // The grammar's `\$'([^']|\\')*'` reads `$'\\'` past its end.
                    self.concern(Concern::Unparsed(format!(
                        "$'...' string read differently by bash and the parser near `{}`",
                        src.raw(node).chars().take(40).collect::<String>()
                    )));
                }
                if (kind != "raw_string" || quotes_are_plain_here(node)) && kind != "ansi_c_string"
                {
                    self.hidden_substitutions(node, src);
                }
                if kind == "word" {
                    self.named_descriptor(node, src);
                    self.hidden_process_substitutions(node, src);
                }
                if self.arith {
                    let text = src.raw(node);
                    if text.contains("$(") || text.contains('`') {
                        self.concern(Concern::Opaque(format!(
                            "{text} is evaluated as arithmetic, which can run commands"
                        )));
                    }
                }
                self.children(node, src)
            }
            "comment" => {
                if !comment_starts_word(src.text.as_bytes(), node.start_byte()) {
                    self.concern(Concern::Unparsed(format!(
                        "`#` inside a word read as a comment near `{}`",
                        src.raw(node).chars().take(40).collect::<String>()
                    )));
                }
            }
            "file_descriptor" | "heredoc_start" | "heredoc_end" | "heredoc_content" => {
                self.children(node, src)
            }
            // Only reached outside a heredoc_redirect; scanning it is the safe choice.
            "heredoc_body" => self.children(node, src),
            // Already reported by `line` (the tree has an error); keep looking inside.
            "ERROR" => self.children(node, src),
            other => {
                let near: String = src.raw(node).chars().take(40).collect();
                self.concern(Concern::Unparsed(format!(
                    "unsupported shell syntax ({other}) near `{near}`"
                )));
                self.children(node, src)
            }
        }
    }

    /// An operand of `[[ X -eq Y ]]`, which bash evaluates as arithmetic: a `$` or backtick the
    /// parser did not read as an expansion (quoted, `'a[$(cmd)]'`, or escaped) is one bash
    /// performs itself when it evaluates an array subscript, so it is code the line hides
    /// (see [`variables::evaluated_text_hides_code`]).
    fn quoted_arithmetic(&mut self, operand: Node, src: &Src) {
        let mut cursor = operand.walk();
        let mut stack = vec![operand];
        while let Some(n) = stack.pop() {
            let raw = src.raw(n);
            let unexpanded = match n.kind() {
                "raw_string" | "string_content" | "word" => raw.as_str(),
                "ansi_c_string" => raw.get(2..).unwrap_or(""),
                // Run as commands of their own, and checked as such.
                "command_substitution" | "process_substitution" => continue,
                _ => {
                    stack.extend(n.named_children(&mut cursor));
                    continue;
                }
            };
            if variables::evaluated_text_hides_code(unexpanded) {
                return self.concern(Concern::Opaque(format!(
                    "{} is evaluated as arithmetic, which can run commands",
                    src.raw(operand)
                )));
            }
        }
    }

    /// `[[ -v WORD ]]` where WORD is not a plain name: bash expands it and evaluates its
    /// subscript as arithmetic (`x='a[$(cmd)]'; [[ -v $x ]]` runs `cmd`).
    ///
    /// A literal `NAME[SUB]` has its subscript evaluated: judged as any subscript is
    /// (`[[ -v a[x] ]]` runs what `x` holds).
    fn tests_variable(&mut self, node: Node, src: &Src) -> bool {
        let raw = src.raw(node);
        let Some(operand) = raw.strip_prefix("-v") else {
            return false;
        };
        if !operand.starts_with([' ', '\t']) {
            return false;
        }
        let operand = operand.trim();
        if operand.contains(['$', '`']) || evaluated_text_hides_code_in(operand) {
            return true;
        }
        if operand.contains('[') {
            self.arithmetic(operand);
            self.values.arithmetic(operand, true);
        }
        false
    }

    /// `{NAME}>file`, `{NAME}<&-`: bash opens a file descriptor and assigns its number to
    /// `NAME` (named file descriptors), so the word right before a redirection operator
    /// assigns the variable it names, as `NAME=value` would.
    fn named_descriptor(&mut self, node: Node, src: &Src) {
        let raw = src.raw(node);
        let Some(name) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) else {
            return;
        };
        let next = src.slice(node.end_byte(), node.end_byte() + 1);
        if variables::leading_name(name) == Some(name) && (next == "<" || next == ">") {
            self.assigned(&Word::lit(name));
        }
    }

    /// A token the parser took as plain text but that holds an unescaped `$(` or a
    /// backtick (`${x#$(cmd)}`, `${x:-`cmd`}`): bash would run it. The line is
    /// [`Concern::Unparsed`]; the commands inside are still reported, best effort.
    fn hidden_substitutions(&mut self, node: Node, src: &Src) {
        let text = src.raw(node);
        if !text.contains("$(") && !text.contains('`') {
            return;
        }
        let (found, inner) = find_substitutions(&text);
        if !found {
            return;
        }
        self.concern(Concern::Unparsed(format!(
            "command substitution the parser did not recognise in `{}`",
            text.chars().take(40).collect::<String>()
        )));
        for cmd in inner {
            self.nested(&Word::lit(&cmd));
        }
    }

    /// An unquoted word the parser took as plain text but that holds an unescaped `<(` or
    /// `>(`: in the word of `${x:-WORD}` (`echo ${x:-<(cmd)}`) bash runs it as a process
    /// substitution. The line is [`Concern::Unparsed`]; the commands inside are reported.
    fn hidden_process_substitutions(&mut self, node: Node, src: &Src) {
        if in_double_quotes(node) {
            // `"${x:-<(cmd)}"` is text to bash.
            return;
        }
        let text = src.raw(node);
        let bytes = text.as_bytes();
        let mut found = false;
        let mut i = 0;
        while i + 1 < bytes.len() {
            match (bytes[i], bytes[i + 1]) {
                (b'\\', _) => i += 2,
                (b'<' | b'>', b'(') => {
                    found = true;
                    let end = closing_paren(bytes, i + 1).unwrap_or(bytes.len());
                    let inner = String::from_utf8_lossy(&bytes[i + 2..end]);
                    self.nested(&Word::lit(&inner));
                    i = end + 1;
                }
                _ => i += 1,
            }
        }
        if found {
            self.concern(Concern::Unparsed(format!(
                "process substitution the parser did not recognise in `{}`",
                text.chars().take(40).collect::<String>()
            )));
        }
    }

    /// `` `...` ``: bash removes the backslash from `\\`, `` \` `` and `\$` and parses the
    /// result, so `` `echo \`rm x\`` `` runs `rm`. The parser does not; when there is a
    /// backslash inside, the unescaped text is parsed instead of the tree.
    fn backticks(&mut self, node: Node, src: &Src) {
        let raw = src.raw(node);
        let inner = raw
            .strip_prefix('`')
            .and_then(|r| r.strip_suffix('`'))
            .unwrap_or(&raw);
        if !inner.contains('\\') {
            return self.children(node, src);
        }
        let mut text = String::with_capacity(inner.len());
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' && matches!(chars.peek(), Some('\\' | '`' | '$')) {
                if let Some(n) = chars.next() {
                    text.push(n);
                }
            } else {
                text.push(c);
            }
        }
        self.nested(&Word::lit(&text));
    }

    /// A simple command: its words, prefix assignments and redirections.
    fn command(&mut self, node: Node, src: &Src) {
        let mut kids: Vec<(Option<&'static str>, Node)> = Vec::new();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                kids.push((cursor.field_name(), cursor.node()));
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        // The parser reads `\<blank>` between words as whitespace; bash reads a word
        // made of the blank.
        let escaped_blank = |gap: &str| {
            gap.as_bytes()
                .windows(2)
                .any(|w| w[0] == b'\\' && matches!(w[1], b' ' | b'\t' | 0x0b | 0x0c))
        };
        let start = node.start_byte();
        let before = src.slice(start.saturating_sub(2), start);
        let before_ok = !escaped_blank(&before)
            || src
                .text
                .as_bytes()
                .get(..start.saturating_sub(2))
                .unwrap_or_default()
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count()
                % 2
                == 1;
        let gaps_ok = kids
            .windows(2)
            .all(|w| !escaped_blank(&src.slice(w[0].1.end_byte(), w[1].1.start_byte())));
        if !before_ok || !gaps_ok {
            self.concern(Concern::Unparsed(format!(
                "escaped blank read as a word separator in `{}`",
                src.raw(node).chars().take(40).collect::<String>()
            )));
        }
        // bash ends a simple command at a newline that is not escaped; the parser sometimes
        // reads on (`ls` newline `\rm x` as `ls '\rm' x`).
        let newline_inside = kids.windows(2).any(|w| {
            let gap = src.slice(w[0].1.end_byte(), w[1].1.start_byte());
            gap.replace("\\\n", "").contains('\n')
        }) || kids.iter().any(|(_, k)| {
            // A name's word too: after an assignment alone on its line the parser read
            // `x=1` newline `[ …` as one command named `\n[` (round 9).
            let word = match k.kind() {
                "word" => Some(*k),
                "command_name" => k.child(0).filter(|c| c.kind() == "word"),
                _ => None,
            };
            word.is_some_and(|w| src.raw(w).replace("\\\n", "").contains('\n'))
        });
        if newline_inside {
            self.concern(Concern::Unparsed(format!(
                "a newline the parser read inside one command near `{}`",
                src.raw(node).chars().take(40).collect::<String>()
            )));
        }
        let is_word = |f: Option<&str>| matches!(f, Some("name" | "argument"));
        let mut parts: Vec<Node> = Vec::new();
        for (i, (field, child)) in kids.iter().enumerate() {
            if i > 0 {
                let (prev_field, prev) = kids[i - 1];
                let gap = src.slice(prev.end_byte(), child.start_byte());
                if only_continuations(&gap) && !(is_word(prev_field) && is_word(*field)) {
                    // `X=a\<newline>b cmd`: bash joins the parts, the parser does not.
                    self.concern(Concern::Unparsed(format!(
                        "line continuation inside a word near `{}`",
                        src.raw(*child).chars().take(40).collect::<String>()
                    )));
                }
            }
            if is_word(*field) {
                parts.push(*child);
            }
        }
        let words = group_words(&parts, src);
        // Without a command name (`X=1 >f`), the assignments are plain ones.
        let place = if words.is_empty() {
            Place::Plain
        } else {
            Place::Prefix
        };
        // Before a special builtin (POSIX mode) a prefix assignment persists; before a function
        // of the line it reaches the body.
        let persists = words.first().is_some_and(|w| {
            rebind::SPECIAL_BUILTINS.contains(&w.text.as_str()) || self.functions.contains(&w.text)
        });
        self.run(words, src.raw(node), 0);
        // Then everything inside: substitutions in words, assignments, redirections.
        self.prefix_persists = persists;
        for (field, child) in kids {
            if field.is_none() && child.kind() == "variable_assignment" {
                self.assignment(child, src, place);
            } else {
                self.any(child, src);
            }
        }
        self.prefix_persists = false;
    }

    /// Reports one simple command (given as words) and whatever it runs in turn.
    fn run(&mut self, words: Vec<Word>, text: String, level: usize) {
        let parsed_declaration = std::mem::take(&mut self.parsed_declaration);
        let from_wrapper = std::mem::take(&mut self.from_wrapper);
        let Some(name) = words.first() else { return };
        // A wrapper runs `!` as a program of that name (`env ! ls` runs no `ls`; found by the
        // bash oracle).
        if name.raw == "!" && !from_wrapper && level < MAX_WRAPPER_DEPTH {
            // `! ! cmd`: the parser reads the second `!` as a command name.
            let rest = words[1..].to_vec();
            return self.run(rest, text, level + 1);
        }
        let index = self.out.commands.len();
        let plain: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let known = known_of(&plain, &words);
        self.out.commands.push(SimpleCommand {
            key: plain.clone(),
            words: plain,
            text: text.clone(),
            transparent: false,
            effects: Vec::new(),
            state_only: is_state_only(&words),
            reading: false,
            known,
        });
        if !name.literal {
            return self.concern(Concern::DynamicCommand(name.text.clone()));
        }
        if level >= MAX_WRAPPER_DEPTH {
            return self.concern(Concern::Unparsed(format!(
                "more than {MAX_WRAPPER_DEPTH} nested wrapper commands"
            )));
        }
        // tree-sitter-bash sometimes reads a reserved word as a command name (`! ! cmd`,
        // `time { cmd; }`, `coproc { cmd; }`). `!` negates the rest; any other reserved
        // word means the parser misread the line.
        if RESERVED.contains(&name.raw.as_str()) {
            if name.raw != "!" {
                self.concern(Concern::Unparsed(format!(
                    "reserved word `{}` where a command name was expected",
                    name.raw
                )));
            }
            if matches!(
                name.raw.as_str(),
                "!" | "{" | "(" | "do" | "then" | "else" | "time"
            ) {
                let rest = words[1..].to_vec();
                let text = join_raw(&rest);
                self.run(rest, text, level + 1);
            }
            return;
        }
        // The operands xargs adds may be any file names, or options, and a runner reads them
        // as it reads its own words: `xargs sh -c` takes its script from the input.
        let args: Vec<Word> = if self.input_operands {
            let mut args = words[1..].to_vec();
            args.push(programs::input_operands());
            args
        } else {
            words[1..].to_vec()
        };
        let outcome = wrappers::analyse(&name.text, &args, &text, self.inherited);
        let examined = programs::examine(&name.text, &args);
        let command = &mut self.out.commands[index];
        command.transparent = outcome.transparent && !outcome.inner.is_empty();
        if let Some(key) = examined.key {
            command.key = key;
        }
        if self.input_operands {
            // What runs has more words than the line shows: an exact rule must not match.
            let input = programs::input_operands().text;
            if command.key.last() != Some(&input) {
                command.key.push(input);
            }
        }
        // Canonical forms reorder and rename words: find each key word's origin again.
        command.known = known_of(&command.key, &args);
        if let Some(k) = command.known.first_mut() {
            *k = known_of(std::slice::from_ref(&name.text), std::slice::from_ref(name))[0];
        }
        command.effects = examined.effects;
        let examined_readings = examined.readings;
        for path in examined.writes {
            self.concern(Concern::WriteRedirect(path));
        }
        for c in outcome.concerns {
            self.concern(c);
        }
        let base = name.text.rsplit('/').next().unwrap_or(&name.text);
        let mut readings = Vec::new();
        if base == "rm" && !self.input_operands {
            for key in programs::rm_readings(&name.text, &words[1..]) {
                // A relative or home path differs once the assessment anchors it.
                let anchored = key.last().is_some_and(|p| !p.starts_with('/'));
                if anchored || key != self.out.commands[index].key {
                    readings.push(key);
                }
            }
        }
        readings.extend(
            examined_readings
                .into_iter()
                .filter(|key| *key != self.out.commands[index].key),
        );
        for key in readings {
            let known = known_of(&key, &words);
            self.out.commands.push(SimpleCommand {
                words: key.clone(),
                key,
                text: text.clone(),
                transparent: false,
                effects: Vec::new(),
                state_only: false,
                reading: true,
                known,
            });
        }
        let fx = rebind::effects(base, &words[1..], &text, parsed_declaration);
        self.effects(fx);
        for inner in outcome.inner {
            match inner {
                Inner::Argv(argv) => {
                    let text = join_raw(&argv);
                    let saved = self.input_operands;
                    self.input_operands |= outcome.appends_input;
                    self.from_wrapper = true;
                    self.run(argv, text, level + 1);
                    self.input_operands = saved;
                }
                Inner::Line(word) => self.nested(&word),
                Inner::PosixLine(word) => self.nested_as(&word, true),
            }
        }
    }

    /// `export`, `declare`, `local`, `readonly`, `typeset`, `unset`: reported as a
    /// command; assignments inside are checked like any other.
    fn declaration(&mut self, node: Node, src: &Src) {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                if words.is_empty() {
                    words.push(Word::lit(&src.raw(child)));
                }
                continue;
            }
            if child.kind() == "variable_assignment" || child.kind() == "variable_name" {
                let raw = src.raw(child);
                let literal = !has_expansion(child);
                words.push(Word {
                    text: raw.clone(),
                    raw,
                    literal,
                    single: literal,
                });
            } else if child.kind() != "comment" {
                words.push(resolve(&[child], src));
            }
        }
        self.parsed_declaration = true;
        // `declare -A` makes an array's subscripts strings only once it has run: at the top
        // level of the shell, it has for what follows.
        self.top_declaration = node.parent().is_some_and(|p| p.kind() == "program");
        self.run(words, src.raw(node), 0);
        self.parsed_declaration = false;
        self.top_declaration = false;
        self.children(node, src);
    }

    /// `declare -a NAME='(…)'` (also `-A`, `typeset`, `readonly`, `local`, and a plain
    /// `declare NAME='(…)'` when NAME is already an array, which an earlier call may have
    /// made): bash takes the quoted text for a compound assignment, expands its words and
    /// evaluates its subscripts (`declare -a a='($(rm x))'` runs `rm`). A value with a `$`, a
    /// backquote or a subscript is code; its substitutions are read as commands.
    fn quoted_compound_assignment(&mut self, node: Node, src: &Src) {
        let Some(value) = node
            .child_by_field_name("value")
            .filter(|v| v.kind() != "array")
        else {
            return;
        };
        if !node.parent().is_some_and(|d| may_assign_an_array(d, src)) {
            return;
        }
        let word = resolve(&[value], src);
        if !word.literal {
            // A value only known when the line runs may be `(…)` after expansion, and bash then
            // evaluates it as one (`declare -a a="$v"`, `declare a="$(cmd)"` when `a` is an
            // array): unless the value visibly starts with another character.
            let head = src.raw(value);
            if head.trim_start_matches('"').starts_with(['$', '`', '(']) {
                self.concern(Concern::Opaque(format!(
                    "{}: a declaration evaluates a value that expands to `(…)` as a compound assignment when the variable is an array (as an earlier call may have made it), which can run commands",
                    src.raw(node)
                )));
            }
            return;
        }
        let text = word.text;
        let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
            return;
        };
        if !inner.contains(['$', '`', '[']) {
            return;
        }
        self.concern(Concern::Opaque(format!(
            "{}: a declaration evaluates a quoted `(…)` as a compound assignment, which can run commands",
            src.raw(node)
        )));
        if inner.contains(['$', '`']) {
            self.nested(&Word::lit(&format!(": {inner}")));
        }
    }

    /// `NAME=value` (standalone, as a command prefix, or in a declaration).
    fn assignment(&mut self, node: Node, src: &Src, place: Place) {
        if let Some(name) = node.child_by_field_name("name") {
            let var = if name.kind() == "subscript" {
                name.child_by_field_name("name")
                    .map(|n| src.raw(n))
                    .unwrap_or_default()
            } else {
                src.raw(name)
            };
            let text = src.raw(node);
            let concern = match place {
                // In the command's environment, whatever the name.
                Place::Prefix => variables::environment_concern(&var, &text),
                // What a declaration exports is reported with its command (the same
                // concern for the same text); a loader variable is one wherever it is set.
                Place::Declaration => {
                    is_hook_variable(&var).then_some(Concern::LoaderVariable(text.clone()))
                }
                // Only reaches a program if the variable was inherited (so exported).
                Place::Plain => variables::assignment_concern(&var, &text, self.inherited),
            };
            if let Some(c) = concern {
                self.concern(c);
            }
            if rebinds_commands(&var) && (!matches!(place, Place::Prefix) || self.prefix_persists) {
                self.concern(Concern::Rebinding(text.clone()));
            }
            if matches!(place, Place::Declaration) {
                self.quoted_compound_assignment(node, src);
            }
            // The value, for the uses that evaluate it: known only when it is a literal (each
            // element of an array).
            // `a=([KEY]=v)`: for an indexed array bash evaluates KEY as arithmetic.
            if let Some(v) = node
                .child_by_field_name("value")
                .filter(|v| v.kind() == "array")
            {
                let mut cursor = v.walk();
                for e in v.named_children(&mut cursor) {
                    let raw = src.raw(e);
                    if let Some(key) = raw.strip_prefix('[').and_then(|r| r.split_once("]=")) {
                        if !self.values.is_assoc(&var) {
                            let key = format!("[{}]", key.0);
                            self.arithmetic(&key);
                            self.values.arithmetic(&key, true);
                            if key.contains("$(") || key.contains('`') {
                                self.concern(Concern::Opaque(format!(
                                    "{raw}: the subscript is evaluated as arithmetic, which can run commands"
                                )));
                            }
                        }
                    }
                }
            }
            let value = match node.child_by_field_name("value") {
                None => Some(String::new()),
                Some(v) if v.kind() == "array" => {
                    let mut cursor = v.walk();
                    let all_plain = v.named_children(&mut cursor).all(|e| {
                        let w = resolve(&[e], src);
                        w.literal && values::is_plain_number(&w.text)
                    });
                    all_plain.then(String::new)
                }
                // `$(( … ))` is a number, whatever it evaluates (which is checked where it is).
                Some(v) if v.kind() == "arithmetic_expansion" => Some("0".to_string()),
                Some(v) => {
                    let w = resolve(&[v], src);
                    w.literal.then_some(w.text)
                }
            };
            // A whole-variable assignment standing as a statement of the shell's top level
            // always runs before the statements after it. `+=` appends to what was there.
            let top = |n: Node| n.parent().is_some_and(|p| p.kind() == "program");
            let definite = matches!(place, Place::Plain)
                && name.kind() != "subscript"
                && !text.get(var.len()..).unwrap_or("").starts_with("+=")
                && (top(node)
                    || node
                        .parent()
                        .is_some_and(|p| p.kind() == "variable_assignments" && top(p)));
            self.values.assign(&var, value.as_deref(), definite);
        }
        self.children(node, src);
    }

    /// `${NAME:=value}` / `${NAME=value}`: assigns NAME when it is unset (or empty), as
    /// `NAME=value` would.
    fn default_assignment(&mut self, name: &str, value: &str) {
        self.assigned(&Word::lit(name));
        let known = !value.contains(['$', '`']);
        let value: String = value
            .chars()
            .filter(|c| !matches!(c, '"' | '\'' | '\\'))
            .collect();
        self.values
            .assign(name, known.then_some(value.as_str()), false);
    }

    /// A variable assigned without an `=` word (`for NAME in`, an arithmetic target): checked
    /// as the plain assignment `NAME=value` would be.
    fn assigned(&mut self, target: &Word) {
        if let Some(c) = variables::target_concern(target, self.inherited) {
            self.concern(c);
        }
        let name = variables::leading_name(&target.text);
        if target.literal && name.is_some_and(rebinds_commands) {
            self.concern(Concern::Rebinding(target.text.clone()));
        }
    }

    /// What a command does to the shell's variables and options ([`rebind::effects`]).
    fn effects(&mut self, fx: rebind::Effects) {
        for (written, value) in fx.assigns {
            let Some(name) = variables::leading_name(&written) else {
                continue;
            };
            if rebinds_commands(name) {
                self.concern(Concern::Rebinding(written.clone()));
            }
            self.values.assign(name, value.as_deref(), false);
        }
        for written in fx.numbers {
            if variables::leading_name(&written).is_some_and(rebinds_commands) {
                self.concern(Concern::Rebinding(written));
            }
        }
        for text in fx.arithmetic {
            self.values.arithmetic(&text, false);
        }
        for name in fx.integers {
            self.values.declare_integer(&name);
        }
        if std::mem::take(&mut self.top_declaration) {
            for name in fx.assoc {
                self.values.declare_assoc(&name);
            }
        }
        if fx.nameref {
            self.values.set_nameref();
        }
        for detail in fx.rebinding {
            self.concern(Concern::Rebinding(detail));
        }
    }

    /// The variables an arithmetic expression assigns (`(( NAME = 1 ))`, `$(( NAME++ ))`,
    /// `a[NAME = 1]`).
    fn arithmetic(&mut self, text: &str) {
        for target in arithmetic_targets(text) {
            self.assigned(&target);
        }
    }

    /// Words the parser put in a redirection after its target. bash gives them to the command
    /// (`git reset >/dev/null --hard` is `git reset --hard`), or, after a newline the parser
    /// read on past (`ls >out⏎\rm x`), runs them as a command of their own. The parser hands
    /// neither to the command, so the line is not understood; what bash would run is read
    /// again for the deny rules.
    fn words_after_target(&mut self, node: Node, dest: &[Node], src: &Src) {
        let parts: Vec<&Node> = dest
            .iter()
            .filter(|p| p.end_byte() > p.start_byte())
            .collect();
        let Some(first) = parts.first() else {
            return;
        };
        // A newline outside quotes, in a gap or inside an unquoted word, ends the command.
        let unescaped_newline = |text: &str| text.replace("\\\n", "  ").find('\n');
        if unescaped_newline(&src.slice(node.start_byte(), first.start_byte())).is_some() {
            // No target on the operator's line: a syntax error in bash, reported as such.
            return;
        }
        for (i, part) in parts.iter().enumerate() {
            let gap_start = if i == 0 {
                part.start_byte()
            } else {
                parts[i - 1].end_byte()
            };
            let gap = src.slice(gap_start, part.start_byte());
            let word = if part.kind() == "word" {
                src.raw(**part)
            } else {
                String::new()
            };
            let at = unescaped_newline(&gap)
                .map(|a| gap_start + a)
                .or_else(|| unescaped_newline(&word).map(|a| part.start_byte() + a));
            if let Some(at) = at {
                self.concern(Concern::Unparsed(format!(
                    "a newline after the redirection `{}` that the parser read past",
                    src.slice(node.start_byte(), first.end_byte())
                )));
                self.walk_text(&src.slice(at + 1, node.end_byte()));
                return;
            }
        }
        let Some(k) = parts.windows(2).position(|w| {
            let gap = src.slice(w[0].end_byte(), w[1].start_byte());
            !(gap.is_empty() || only_continuations(&gap))
        }) else {
            return;
        };
        let (last, next) = (parts[k], parts[k + 1]);
        let rest = src.slice(next.start_byte(), node.end_byte());
        self.concern(Concern::Unparsed(format!(
            "words after the target of the redirection `{}`, which bash gives to the command",
            src.slice(node.start_byte(), last.end_byte())
        )));
        let body = node
            .parent()
            .filter(|p| p.kind() == "redirected_statement")
            .and_then(|p| p.child_by_field_name("body"))
            .filter(|b| b.kind() == "command");
        if let Some(body) = body {
            self.walk_text(&format!("{} {rest}", src.raw(body)));
        }
    }

    fn file_redirect(&mut self, node: Node, src: &Src) {
        let mut op = String::new();
        let mut dest: Vec<Node> = Vec::new();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if cursor.field_name() == Some("destination") {
                    dest.push(child);
                } else if !child.is_named() && op.is_empty() {
                    op = child.kind().to_string();
                } else if child.is_error() {
                    // `<>` is not in the grammar: the `>` shows up as an error here.
                    op.push_str(&src.raw(child));
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if let Some(first) = dest.first() {
            let gap = src.slice(node.start_byte(), first.start_byte());
            if gap.contains('\n') && !gap.contains("\\\n") {
                // bash: `syntax error near unexpected token newline`; the parser takes the
                // next line's first word as the target.
                self.concern(Concern::Unparsed(format!(
                    "redirection `{op}` without a target on its line"
                )));
            }
        }
        self.words_after_target(node, &dest, src);
        let target = group_words(&dest, src).into_iter().next();
        let writes = match op.as_str() {
            ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => true,
            ">&" => !target.as_ref().is_some_and(|t| {
                t.literal && (t.text == "-" || t.text.chars().all(|c| c.is_ascii_digit()))
            }),
            "<" | "<&" | "<&-" | ">&-" => false,
            other => {
                self.concern(Concern::Unparsed(format!(
                    "unknown redirection `{other}` in `{}`",
                    src.raw(node)
                )));
                true
            }
        };
        // bash opens `/dev/tcp/HOST/PORT` and `/dev/udp/…` itself, in either direction.
        let network = target.as_ref().is_some_and(|t| {
            let bare = t.text.trim_start_matches(['"', '\'']);
            bare.starts_with("/dev/tcp/") || bare.starts_with("/dev/udp/")
        });
        if network {
            let t = target.as_ref().map(|t| t.text.clone()).unwrap_or_default();
            self.concern(Concern::Network(t));
        } else if matches!(op.as_str(), "<" | "<>") {
            // A target only known at run time may be one; `<(…)` is a pipe.
            let substituted =
                !dest.is_empty() && dest.iter().all(|d| d.kind() == "process_substitution");
            match &target {
                Some(t) if !t.literal && !substituted => {
                    self.concern(Concern::DynamicRedirect(t.text.clone()))
                }
                _ => {}
            }
        }
        if writes {
            match &target {
                Some(t) if t.literal && writes_no_file(&t.text) => {}
                Some(t) => self.concern(Concern::WriteRedirect(t.text.clone())),
                None => self.concern(Concern::WriteRedirect(src.raw(node))),
            }
        }
        self.children(node, src);
    }

    fn heredoc(&mut self, node: Node, src: &Src) {
        let mut quoted = false;
        let mut delimiter = None;
        let mut end = None;
        let mut body = String::new();
        let strip_tabs = node.child(0).is_some_and(|c| c.kind() == "<<-");
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "heredoc_start" => {
                    let raw = src.raw(child);
                    quoted = raw.contains(['\'', '"', '\\']);
                    delimiter = Some(unquote_delimiter(&raw));
                }
                "heredoc_end" => end = Some(src.raw(child)),
                "heredoc_body" => body.push_str(&src.raw(child)),
                _ => {}
            }
        }
        // bash ends the body at the first line equal to the delimiter (after quote
        // removal); if the parser ended it elsewhere, it misread the line.
        if let Some(delimiter) = &delimiter {
            let trim = |l: &str| -> String {
                if strip_tabs {
                    l.trim_start_matches('\t').to_string()
                } else {
                    l.to_string()
                }
            };
            let early = body.split('\n').any(|l| trim(l) == *delimiter);
            let wrong_end = end.as_ref().is_some_and(|e| trim(e) != *delimiter);
            if early || wrong_end {
                self.concern(Concern::Unparsed(format!(
                    "here-document delimiter `{delimiter}` not matched the way bash matches it"
                )));
            }
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                // A quoted delimiter makes the body plain data.
                "heredoc_body" if quoted => {}
                // Otherwise expansions and substitutions in it happen. tree-sitter-bash
                // does not always find them (`<<-` bodies), so the body is re-read as the
                // double-quoted string it is equivalent to.
                "heredoc_body" => {
                    let body = src.raw(child);
                    if body.contains("$(") || body.contains('`') {
                        self.heredoc_body(&body);
                    }
                }
                _ => self.any(child, src),
            }
        }
    }

    /// Finds the commands in an unquoted here-document body by parsing `: "BODY"`, with
    /// the body's `"` escaped (the only character that differs between the two).
    fn heredoc_body(&mut self, body: &str) {
        let mut quoted = String::with_capacity(body.len() + 8);
        quoted.push_str(": \"");
        // Inside `$(…)` bash reads a command afresh, where a `"` is a quote again: such text is
        // copied as it is.
        let (verbatim, unsure) = command_substitution_spans(body);
        if unsure {
            self.concern(Concern::Unparsed(
                "a command substitution in a here-document that cannot be delimited safely"
                    .to_string(),
            ));
        }
        let chars: Vec<(usize, char)> = body.char_indices().collect();
        let mut k = 0;
        while let Some(&(here, c)) = chars.get(k) {
            k += 1;
            if verbatim
                .iter()
                .any(|&(start, end)| here >= start && here < end)
            {
                quoted.push(c);
                continue;
            }
            let next = chars.get(k).map(|&(_, n)| n);
            match c {
                '\\' if next == Some('"') => {
                    k += 1;
                    quoted.push_str("\\\\\\\"");
                }
                '\\' => {
                    quoted.push('\\');
                    match next {
                        Some(n) => {
                            k += 1;
                            quoted.push(n);
                        }
                        None => quoted.push('\\'),
                    }
                }
                '"' => quoted.push_str("\\\""),
                _ => quoted.push(c),
            }
        }
        quoted.push('"');
        let mut sub = Walker {
            out: ParsedLine::default(),
            inherited: self.inherited,
            seen: HashSet::new(),
            shell_depth: self.shell_depth + 1,
            node_depth: self.node_depth,
            arith: false,
            input_operands: self.input_operands,
            deadline: self.deadline,
            values: std::mem::take(&mut self.values),
            functions: std::mem::take(&mut self.functions),
            prefix_persists: false,
            parsed_declaration: false,
            top_declaration: false,
            posix: false,
            alternative_depth: 0,
            from_wrapper: false,
        };
        sub.line(&quoted);
        // What the body found about variables and functions is the line's: judged at the end.
        self.values = std::mem::take(&mut sub.values);
        self.functions = std::mem::take(&mut sub.functions);
        let mut found = sub.out;
        // Drop the `:` that carried the string.
        if found
            .commands
            .first()
            .is_some_and(|c| c.words.first().is_some_and(|w| w == ":"))
        {
            found.commands.remove(0);
        }
        self.out.commands.extend(found.commands);
        for c in found.concerns {
            self.concern(c);
        }
    }
}

/// Whether a `#` at this offset starts a word (so bash reads a comment): at the start,
/// or after an unescaped blank or operator character.
fn comment_starts_word(bytes: &[u8], at: usize) -> bool {
    if at == 0 {
        return true;
    }
    let Some(&prev) = bytes.get(at - 1) else {
        return false;
    };
    if !matches!(
        prev,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    ) {
        return false;
    }
    let backslashes = bytes[..at - 1]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    backslashes % 2 == 0
}

/// Whether the first unescaped `'` after `$'` is the last character (bash's reading).
fn ansi_c_string_closes_at_end(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut i = 2;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\'' => return i + 1 == bytes.len(),
            _ => i += 1,
        }
    }
    false
}

/// The index of the `)` that closes the `(` at `open` in `bytes`, counting nested pairs and
/// skipping what a backslash escapes; `None` when it is not closed.
fn closing_paren(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = open;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// Unescaped `$(...)` and `` `...` `` in text: whether there is any, and the command
/// text inside each one that is complete (`$((...))` arithmetic is searched, not parsed).
fn find_substitutions(text: &str) -> (bool, Vec<String>) {
    let bytes = text.as_bytes();
    let mut found = false;
    let mut inner = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                found = true;
                let arith = bytes.get(i + 2) == Some(&b'(');
                match closing_paren(bytes, i + 1) {
                    Some(close) if !arith => {
                        inner.push(String::from_utf8_lossy(&bytes[i + 2..close]).into_owned());
                        i = close + 1;
                    }
                    _ => i += 2,
                }
            }
            b'`' => {
                found = true;
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'`' {
                    if bytes[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                if j < bytes.len() {
                    inner.push(String::from_utf8_lossy(&bytes[i + 1..j]).into_owned());
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    (found, inner)
}

/// The byte ranges of the unescaped `$(…)` (and `$((…))`) in a here-document body, each from
/// its `$` to just past the `)` that closes it, read with quotes inside; and whether one could
/// not be delimited for sure (a `case` inside, whose patterns end with an unmatched `)`, a `$(`
/// inside a quoted string, an unterminated quote or substitution).
fn command_substitution_spans(text: &str) -> (Vec<(usize, usize)>, bool) {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut unsure = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                let mut depth = 0usize;
                let mut j = i + 1;
                let mut end = None;
                while j < bytes.len() {
                    match bytes[j] {
                        b'\\' => j += 1,
                        b'\'' => match bytes[j + 1..].iter().position(|&b| b == b'\'') {
                            Some(k) => j += k + 1,
                            None => break,
                        },
                        b'"' => {
                            let mut k = j + 1;
                            while k < bytes.len() && bytes[k] != b'"' {
                                if bytes[k] == b'\\' {
                                    k += 1;
                                } else if bytes[k] == b'$' && bytes.get(k + 1) == Some(&b'(') {
                                    unsure = true;
                                }
                                k += 1;
                            }
                            j = k;
                        }
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(j + 1);
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let end = end.unwrap_or_else(|| {
                    unsure = true;
                    bytes.len()
                });
                let inner = String::from_utf8_lossy(&bytes[i..end]);
                if inner
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|w| w == "case")
                {
                    unsure = true;
                }
                spans.push((i, end));
                i = end;
            }
            _ => i += 1,
        }
    }
    (spans, unsure)
}

/// A here-document delimiter after quote removal.
fn unquote_delimiter(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {}
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Shell reserved words (and `{`/`}`), as written unquoted.
const RESERVED: &[&str] = &[
    "!", "{", "}", "[[", "]]", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
    "while", "until", "for", "in", "select", "function", "(", ")",
];

/// Groups adjacent nodes (nothing, or only line continuations, between them) into shell
/// words and resolves each.
fn group_words(parts: &[Node], src: &Src) -> Vec<Word> {
    let mut groups: Vec<Vec<Node>> = Vec::new();
    // Zero-width nodes are MISSING nodes inserted by error recovery: no word.
    for part in parts.iter().filter(|p| p.end_byte() > p.start_byte()) {
        let joined = groups.last().and_then(|g| g.last()).is_some_and(|prev| {
            let gap = src.slice(prev.end_byte(), part.start_byte());
            gap.is_empty() || only_continuations(&gap)
        });
        match groups.last_mut() {
            Some(group) if joined => group.push(*part),
            _ => groups.push(vec![*part]),
        }
    }
    groups.iter().map(|g| resolve(g, src)).collect()
}

/// Whether a node contains an expansion or substitution.
fn has_expansion(node: Node) -> bool {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    let mut budget = 10_000;
    while let Some(n) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            return true;
        }
        if matches!(
            n.kind(),
            "simple_expansion"
                | "expansion"
                | "command_substitution"
                | "process_substitution"
                | "arithmetic_expansion"
                | "brace_expression"
        ) {
            return true;
        }
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

/// Whether writing to this path writes no file: the null device and the streams the line
/// already has.
fn writes_no_file(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2"
    )
}

/// Whether single quotes are plain characters where this `'…'` stands: inside `${…}` inside
/// double quotes (`"${x:-'$(cmd)'}"`), bash expands what is between them, so a substitution
/// there runs although the parser read a quoted string. (The pattern operators, `#`, `%`,
/// `/`, do take them as quotes; asking there too is never less strict.) A substitution opens
/// a new quoting context.
fn quotes_are_plain_here(node: Node) -> bool {
    let mut in_expansion = false;
    let mut up = node.parent();
    while let Some(n) = up {
        match n.kind() {
            "expansion" => in_expansion = true,
            "string" if in_expansion => return true,
            "command_substitution" | "process_substitution" | "program" => return false,
            _ => {}
        }
        up = n.parent();
    }
    false
}

/// Whether a declaration may assign an array, and so evaluate a value `(…)` as a compound
/// assignment: `declare`/`typeset` whenever the variable is one (an earlier call may have made
/// it one), `local` when the same function already made it a local array, and any of them with
/// `-a` or `-A` (`export -a`, `readonly -a`). Checked with the real bash 5.2: `export a="$v"`
/// and `readonly a="$v"` assign `a` the string, even where `a` is an array, and `local x="$v"`
/// makes a new scalar unless this function's own `x` is already an array (a caller's or a
/// global one does not count).
fn may_assign_an_array(declaration: Node, src: &Src) -> bool {
    let mut cursor = declaration.walk();
    let mut keyword = None;
    for c in declaration.children(&mut cursor) {
        if !c.is_named() {
            keyword.get_or_insert_with(|| src.raw(c));
            continue;
        }
        if c.kind() == "variable_assignment" || c.kind() == "variable_name" {
            continue;
        }
        let flag = resolve(&[c], src);
        if !flag.literal || (flag.text.starts_with('-') && flag.text.contains(['a', 'A'])) {
            return true;
        }
    }
    match keyword.as_deref() {
        Some("declare" | "typeset") => true,
        Some("local") => local_array_before(declaration, src),
        _ => false,
    }
}

/// Whether the function around `node` may have made a local array before it: its text up to
/// `node` has an array value or an `-a`/`-A` declaration (never less strict than the names).
/// `local` outside a function is an error.
fn local_array_before(node: Node, src: &Src) -> bool {
    let mut up = node.parent();
    while let Some(n) = up {
        if n.kind() == "function_definition" {
            let before = src.slice(n.start_byte(), node.start_byte());
            return before.contains("=(") || before.contains("-a") || before.contains("-A");
        }
        up = n.parent();
    }
    false
}

/// Whether a node stands inside double quotes (a substitution opens a new context).
fn in_double_quotes(node: Node) -> bool {
    let mut up = node.parent();
    while let Some(n) = up {
        match n.kind() {
            "string" => return true,
            "command_substitution" | "process_substitution" | "program" => return false,
            _ => {}
        }
        up = n.parent();
    }
    false
}
