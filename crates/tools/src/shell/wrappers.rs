//! Commands that run other commands (`sudo`, `env`, `xargs`, `find -exec`, `bash -c`, …)
//! and builtins that run code we cannot see (`eval`, `source`, …).
//!
//! Each wrapper's options are modelled from its getopt string: which options take an
//! argument decides where the inner command starts. An option we do not know is a
//! concern (we cannot tell where the inner command starts), never a guess.

use super::words::{arithmetic_targets, join_raw, split_env_string, Word};
use super::{Concern, Inherited};

/// What a command runs besides itself.
pub(super) enum Inner {
    /// Another command, as argv.
    Argv(Vec<Word>),
    /// A shell command string, to be parsed.
    Line(Word),
}

#[derive(Default)]
pub(super) struct Outcome {
    pub(super) inner: Vec<Inner>,
    pub(super) concerns: Vec<Concern>,
}

impl Outcome {
    fn argv(&mut self, words: &[Word]) {
        if !words.is_empty() {
            self.inner.push(Inner::Argv(words.to_vec()));
        }
    }

    fn line(&mut self, word: &Word) {
        self.inner.push(Inner::Line(word.clone()));
    }

    fn stop(&mut self, stop: Stop) {
        self.concerns.push(match stop {
            Stop::Dynamic(w) => Concern::DynamicCommand(w),
            Stop::Unknown(m) => Concern::Unparsed(m),
        });
    }

    fn opaque(&mut self, what: String) {
        self.concerns.push(Concern::Opaque(what));
    }
}

/// Why option parsing had to stop.
enum Stop {
    /// A word whose value (or word count) is unknown sits where options or the inner
    /// command are.
    Dynamic(String),
    /// An option we do not model.
    Unknown(String),
}

/// A getopt-style option specification.
#[derive(Default, Clone, Copy)]
struct Spec {
    /// Short options that take an argument (attached or the next word).
    short_arg: &'static str,
    /// Short options with an optional attached argument only (`-i[R]`).
    short_opt: &'static str,
    /// Short options without argument.
    short_flag: &'static str,
    /// Any ASCII letter is a flag unless listed in `short_arg` (shells).
    any_letter: bool,
    /// Long options that take an argument (`--x=v` or `--x v`).
    long_arg: &'static [&'static str],
    /// Long options without argument (an attached `=v` is accepted).
    long_flag: &'static [&'static str],
    /// `+o`-style options (shells).
    plus: bool,
    /// `-N` numeric options (`nice -10`).
    numeric: bool,
    /// Accept any `--name=value` long option (strace, ltrace).
    long_any_value: bool,
}

/// One parsed option: `-x` or `--name`, with its argument.
struct Opt {
    name: String,
    arg: Option<Word>,
}

enum Step {
    /// Options from one word (or two, with a separate argument); continue at `next`.
    Opts(Vec<Opt>, usize),
    /// `--`: operands start at the given index.
    End(usize),
    /// The word at the index is an operand.
    Operand,
}

fn step(args: &[Word], i: usize, spec: &Spec) -> Result<Step, Stop> {
    let w = &args[i];
    if !w.single {
        return Err(Stop::Dynamic(w.text.clone()));
    }
    if !w.literal {
        // Not an option if it visibly starts with a plain character (`X="$y"`, `"Hi $y"`);
        // otherwise (`"$opt"`, `$x`) it might be one.
        let plain = w
            .raw
            .trim_start_matches('"')
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || "_/.,:@%=".contains(c));
        return if plain {
            Ok(Step::Operand)
        } else {
            Err(Stop::Dynamic(w.text.clone()))
        };
    }
    let t = w.text.as_str();
    if t == "--" {
        return Ok(Step::End(i + 1));
    }
    if let Some(long) = t.strip_prefix("--") {
        let (name, value) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        let known = |list: &[&'static str]| -> Vec<&'static str> {
            if let Some(exact) = list.iter().find(|o| **o == name) {
                return vec![exact];
            }
            list.iter()
                .copied()
                .filter(|o| o.starts_with(name))
                .collect()
        };
        let args_m = known(spec.long_arg);
        let flags_m = known(spec.long_flag);
        let exact_arg = spec.long_arg.contains(&name);
        let exact_flag = spec.long_flag.contains(&name);
        let takes_arg = if exact_arg {
            true
        } else if exact_flag {
            false
        } else if args_m.len() + flags_m.len() == 1 {
            args_m.len() == 1
        } else if spec.long_any_value && value.is_some() {
            false
        } else {
            return Err(Stop::Unknown(format!(
                "unknown or ambiguous option `--{name}`: cannot tell where the inner command starts"
            )));
        };
        let full = args_m.first().or(flags_m.first()).copied().unwrap_or(name);
        let name = format!("--{full}");
        if let Some(v) = value {
            return Ok(Step::Opts(
                vec![Opt {
                    name,
                    arg: Some(Word::lit(v)),
                }],
                i + 1,
            ));
        }
        if takes_arg {
            return match args.get(i + 1) {
                Some(a) if !a.single => Err(Stop::Dynamic(a.text.clone())),
                Some(a) => Ok(Step::Opts(
                    vec![Opt {
                        name,
                        arg: Some(a.clone()),
                    }],
                    i + 2,
                )),
                None => Ok(Step::Opts(vec![Opt { name, arg: None }], i + 1)),
            };
        }
        return Ok(Step::Opts(vec![Opt { name, arg: None }], i + 1));
    }
    let (sign, body) = if let Some(b) = t.strip_prefix('-') {
        ('-', b)
    } else if let Some(b) = t.strip_prefix('+').filter(|_| spec.plus) {
        ('+', b)
    } else {
        return Ok(Step::Operand);
    };
    if body.is_empty() {
        return Ok(Step::Operand);
    }
    if spec.numeric
        && body
            .trim_start_matches(['+', '-'])
            .chars()
            .all(|c| c.is_ascii_digit())
    {
        return Ok(Step::Opts(
            vec![Opt {
                name: t.to_string(),
                arg: None,
            }],
            i + 1,
        ));
    }
    let mut opts = Vec::new();
    for (idx, c) in body.char_indices() {
        let name = format!("{sign}{c}");
        let rest = &body[idx + c.len_utf8()..];
        if spec.short_arg.contains(c) {
            if !rest.is_empty() {
                opts.push(Opt {
                    name,
                    arg: Some(Word::lit(rest)),
                });
                return Ok(Step::Opts(opts, i + 1));
            }
            return match args.get(i + 1) {
                Some(a) if !a.single => Err(Stop::Dynamic(a.text.clone())),
                Some(a) => {
                    opts.push(Opt {
                        name,
                        arg: Some(a.clone()),
                    });
                    Ok(Step::Opts(opts, i + 2))
                }
                None => {
                    opts.push(Opt { name, arg: None });
                    Ok(Step::Opts(opts, i + 1))
                }
            };
        }
        if spec.short_opt.contains(c) {
            opts.push(Opt {
                name,
                arg: (!rest.is_empty()).then(|| Word::lit(rest)),
            });
            return Ok(Step::Opts(opts, i + 1));
        }
        if spec.short_flag.contains(c) || (spec.any_letter && c.is_ascii_alphabetic()) {
            opts.push(Opt { name, arg: None });
            continue;
        }
        return Err(Stop::Unknown(format!(
            "unknown option `{sign}{c}` in `{t}`: cannot tell where the inner command starts"
        )));
    }
    Ok(Step::Opts(opts, i + 1))
}

/// Options up to the first operand (getopt with `+`). Returns the options and the index
/// of the first operand.
fn scan(args: &[Word], spec: &Spec) -> Result<(Vec<Opt>, usize), Stop> {
    let mut opts = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match step(args, i, spec)? {
            Step::Opts(o, next) => {
                opts.extend(o);
                i = next;
            }
            Step::End(next) => return Ok((opts, next)),
            Step::Operand => return Ok((opts, i)),
        }
    }
    Ok((opts, i))
}

/// Options anywhere (GNU getopt permutation). Returns the options and the operands.
fn scan_permuted(args: &[Word], spec: &Spec) -> Result<(Vec<Opt>, Vec<Word>), Stop> {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match step(args, i, spec)? {
            Step::Opts(o, next) => {
                opts.extend(o);
                i = next;
            }
            Step::End(next) => {
                operands.extend(args[next..].iter().cloned());
                break;
            }
            Step::Operand => {
                operands.push(args[i].clone());
                i += 1;
            }
        }
    }
    Ok((opts, operands))
}

fn has(opts: &[Opt], names: &[&str]) -> bool {
    opts.iter().any(|o| names.contains(&o.name.as_str()))
}

fn arg_of<'a>(opts: &'a [Opt], names: &[&str]) -> Option<&'a Word> {
    opts.iter()
        .rev()
        .find(|o| names.contains(&o.name.as_str()))
        .and_then(|o| o.arg.as_ref())
}

/// Variables that make a program load or run code other than what the line shows: the
/// policy's loader variables ([`cordon_policy::is_loader_variable`]: `LD_*`, `DYLD_*`,
/// `GCONV_PATH`, `GLIBC_TUNABLES`, `TMPDIR`, …, the ones the sandbox never passes), and the
/// shell's own: start-up and trace hooks (`BASH_ENV`, `ENV`, `PS4`, `PROMPT_COMMAND`,
/// `SHELLOPTS`, `BASHOPTS`), exported bash functions (`BASH_FUNC_*`) and `PATH` (which decides
/// what a command name runs). Each is a [`Concern::LoaderVariable`] wherever the line sets it.
pub fn is_loader_variable(name: &str) -> bool {
    cordon_policy::is_loader_variable(name)
        || name.starts_with("BASH_FUNC_")
        || matches!(
            name,
            "BASH_ENV" | "ENV" | "PS4" | "PROMPT_COMMAND" | "SHELLOPTS" | "BASHOPTS" | "PATH"
        )
}

/// Variables known not to change what a program runs, loads or reads as configuration: the
/// allow-list. Any other variable that reaches a program's environment is a
/// [`Concern::Environment`] (or, for loader variables, [`Concern::LoaderVariable`]): the set of
/// variables that do change what runs (`GIT_PAGER`, `GIT_SSH_COMMAND`, `EDITOR`, `PAGER`,
/// `NODE_OPTIONS`, `PYTHONPATH`, `PERL5OPT`, `HOME`, `XDG_CONFIG_HOME`, `RUSTC_WRAPPER`,
/// `CC`, `LESSOPEN`, …) has no end, so only these are let through.
pub fn is_inert_variable(name: &str) -> bool {
    // Locale: picks a language and character set among the installed locales (where locale
    // data is searched, `LOCPATH`, is a loader variable).
    name.starts_with("LC_")
        || matches!(
            name,
            "LANG" | "LANGUAGE"
            // Time zone for formatting dates (the zone files' directory, `TZDIR`, is a
            // loader variable).
            | "TZ"
            // Terminal type and colour and size hints: how output looks, not what runs.
            | "TERM"
            | "COLORTERM"
            | "NO_COLOR"
            | "CLICOLOR"
            | "CLICOLOR_FORCE"
            | "FORCE_COLOR"
            | "COLUMNS"
            | "LINES"
            // Field splitting: every POSIX shell sets its own at start-up, ignoring the
            // inherited one (`while IFS= read -r line`).
            | "IFS"
            // "Running under CI": tools switch off prompts and progress bars.
            | "CI"
            // Rust: backtraces on panic and log filtering, read by the program itself.
            | "RUST_BACKTRACE"
            | "RUST_LIB_BACKTRACE"
            | "RUST_LOG"
            // Cargo: colour of its own messages only.
            | "CARGO_TERM_COLOR"
            // Python: buffering, bytecode caching, hash seed and stdio encoding; none names
            // code or a path (unlike `PYTHONPATH`, `PYTHONSTARTUP`, `PYTHONHOME`).
            | "PYTHONUNBUFFERED"
            | "PYTHONDONTWRITEBYTECODE"
            | "PYTHONHASHSEED"
            | "PYTHONIOENCODING"
            // Node: a mode string the program's own code reads (unlike `NODE_OPTIONS`,
            // `NODE_PATH`).
            | "NODE_ENV"
        )
}

/// The concern, if any, for a variable that reaches a program's environment; `written` is
/// what the line shows (`NAME=value`, or the name alone for `export NAME`).
pub(super) fn environment_concern(name: &str, written: &str) -> Option<Concern> {
    if is_loader_variable(name) {
        Some(Concern::LoaderVariable(written.to_string()))
    } else if is_inert_variable(name) {
        None
    } else {
        Some(Concern::Environment(written.to_string()))
    }
}

/// Whether a variable the line assigns without exporting it may already be exported: bash
/// passes the new value of a variable it inherited from its environment to every command it
/// runs after (`HOME=/tmp/x; git log`). With [`Inherited::Exactly`], the caller knows the
/// environment the shell starts with: the names in it, and those the shell exports on its own
/// ([`SHELL_EXPORTED`]). With [`Inherited::Unknown`] it is guessed: environment variables are
/// upper-case by convention and shell variables lower-case, so a name without a lower-case
/// letter is taken as possibly inherited, and so are the lower-case names programs do read
/// from the environment: `<scheme>_proxy` (`http_proxy`, `https_proxy`, `ftp_proxy`,
/// `all_proxy`, `no_proxy`: curl reads `http_proxy` only in lower case, and wget, git and
/// Python read them too) and `npm_config_*` (npm's settings, which npm itself exports in lower
/// case to the scripts it runs).
///
/// Not guessed to be inherited: `REPLY`, `OPTARG`, `OPTIND` and `MAPFILE`, the shell's own
/// variables, which `read`, `select`, `getopts` and `mapfile` set without being named (and
/// scripts reset, as in `OPTIND=1`). No program reads them; taking them as inherited would make
/// every such loop ask.
pub(super) fn may_be_inherited(name: &str, inherited: &Inherited) -> bool {
    match inherited {
        Inherited::Exactly(names) => names.contains(name) || SHELL_EXPORTED.contains(&name),
        Inherited::Unknown => {
            if matches!(name, "REPLY" | "OPTARG" | "OPTIND" | "MAPFILE") {
                return false;
            }
            !name.bytes().any(|b| b.is_ascii_lowercase())
                || name.ends_with("_proxy")
                || name.starts_with("npm_config_")
        }
    }
}

/// Variables a shell exports on its own, whatever it inherited: bash exports `PWD`, `OLDPWD`
/// and `SHLVL` (`env -i bash -c 'export -p'`), dash `PWD` and, after a `cd`, `OLDPWD`. bash
/// also exports `_`, but sets it to the path of each command it runs, in that command's
/// environment, so an assignment to `_` never reaches a program (`for _ in 1 2`).
pub const SHELL_EXPORTED: &[&str] = &["PWD", "OLDPWD", "SHLVL"];

/// The concern, if any, for a variable the line sets without exporting it (`NAME=value; …`):
/// a loader variable wherever it is set (`PATH` also decides what the shell itself runs); any
/// other only if it may have been inherited ([`may_be_inherited`]), and so be exported already.
pub(super) fn assignment_concern(
    name: &str,
    written: &str,
    inherited: &Inherited,
) -> Option<Concern> {
    if is_loader_variable(name) || may_be_inherited(name, inherited) {
        environment_concern(name, written)
    } else {
        None
    }
}

/// The concern, if any, for a variable assigned without an `=` word, named by `target`: a
/// builtin's operand (`read NAME`, `printf -v NAME`), a loop's variable (`for NAME in`) or an
/// arithmetic target (`(( NAME = 1 ))`). It is the concern of the assignment `NAME=value`
/// ([`assignment_concern`]); a name not known before the line runs may be any variable.
pub(super) fn target_concern(target: &Word, inherited: &Inherited) -> Option<Concern> {
    if !target.literal {
        return Some(Concern::Environment(target.text.clone()));
    }
    leading_name(&target.text).and_then(|name| assignment_concern(name, &target.text, inherited))
}

/// The subscript of a variable name as written (`i` for `a[i]` and `a[i]=v`): from the `[`
/// right after the name to the `]` that closes it, or to the end if none does.
fn subscript(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    if !is_name(&text[..end]) {
        return None;
    }
    let rest = text[end..].strip_prefix('[')?;
    let mut depth = 1usize;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&rest[..i]);
                }
            }
            _ => {}
        }
    }
    Some(rest)
}

/// Whether text that bash expands and evaluates itself, not as part of the line the parser
/// read (a variable name's subscript given in a string, arithmetic given as a string), holds
/// an expansion: bash expands a subscript when it evaluates it, running any `$(…)` or
/// `` `…` `` in it (`read 'a[$(cmd)]'`). A plain `$i` counts too: its value is substituted and
/// then evaluated as arithmetic, where an array reference's subscript is expanded again, so a
/// value such as `x[$(cmd)]` runs `cmd`; the value is not known before the line runs.
pub(super) fn evaluated_text_hides_code(text: &str) -> bool {
    text.contains(['$', '`'])
}

/// A variable name bash reads from a word when the line runs (a builtin's operand, `read NAME`,
/// `printf -v NAME`, `unset NAME`; a declaration's `NAME[i]=v` with `declaration`): code hidden
/// in its subscript is [`Concern::Opaque`], and what the subscript assigns as arithmetic
/// (`a[HOME=1]`) is checked as any assignment.
///
/// A literal word was not expanded by the parser: any `$` or backtick in it (in a
/// declaration, in its subscript; the value after `=` is not evaluated) is code bash runs.
/// A word with expansions (`read "a[$i]"`, `read "$name"`) has its subscript evaluated after
/// they are substituted, so the values may hold code (`name='a[$(cmd)]'`): for a builtin
/// operand, any such word is opaque (it also names a variable not known before the line
/// runs, a [`Concern::Environment`] already); in a declaration,
/// where `a[$i]=v` is what `NAME[$i]=v` would be on its own, only quoting that hides a `$`
/// from the parser (`\$`, `'…'`) inside the subscript is.
fn evaluated_name(
    w: &Word,
    declaration: bool,
    whole: &str,
    inherited: &Inherited,
    out: &mut Outcome,
) {
    if w.literal {
        let checked = if declaration {
            subscript(&w.text).unwrap_or("")
        } else {
            w.text.as_str()
        };
        if evaluated_text_hides_code(checked) {
            out.opaque(whole.to_string());
        }
        if let Some(sub) = subscript(&w.text) {
            for target in arithmetic_targets(sub) {
                out.concerns.extend(target_concern(&target, inherited));
            }
        }
    } else {
        let unquoted: String = w.raw.chars().filter(|&c| c != '"').collect();
        let hidden = if declaration {
            subscript(&unquoted).is_some_and(|s| s.contains(['\\', '\'']))
        } else {
            true
        };
        if hidden {
            out.opaque(whole.to_string());
        }
    }
}

/// The variable name an assignment or declaration word starts with (`NAME`, `NAME=v`,
/// `NAME+=v`, `NAME[i]=v`).
pub(super) fn leading_name(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    let follows = rest.is_empty() || rest.starts_with(['=', '[']) || rest.starts_with("+=");
    (is_name(name) && follows).then_some(name)
}

/// Skips `NAME=value` words (env and sudo accept them before the command): each puts a
/// variable in the command's environment, a concern unless it is inert. Returns the index of
/// the command.
fn assignments(args: &[Word], mut i: usize, out: &mut Outcome) -> Option<usize> {
    while let Some(w) = args.get(i) {
        // `NAME="$value"`: an assignment whatever the value, as long as it stays one word.
        let written_name = w.raw.split_once('=').map(|(n, _)| n).filter(|n| is_name(n));
        let name = match (written_name, w.literal) {
            (Some(n), _) if w.single => n,
            (_, true) if w.single => match w.text.split_once('=') {
                Some((n, _)) => n,
                None => break,
            },
            _ => {
                out.stop(Stop::Dynamic(w.text.clone()));
                return None;
            }
        };
        out.concerns.extend(environment_concern(name, &w.text));
        i += 1;
    }
    Some(i)
}

/// `export`, `declare`, `typeset`, `local`, `readonly` (as parsed declarations or as argv,
/// `command export …`): the variables they put in the environment of every later command.
/// `export NAME[=v]` and `declare -x NAME[=v]` export any name; an assignment without `-x`
/// reaches the environment when the variable was inherited ([`may_be_inherited`]).
fn declaration(base: &str, args: &[Word], whole: &str, inherited: &Inherited, out: &mut Outcome) {
    let mut exported = base == "export";
    let mut functions = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if leading_name(&w.raw).is_some() {
            break;
        }
        if !w.literal {
            // `export "$x"`, `declare $flags …`: may be `-x` or `NAME=value`.
            out.concerns.push(Concern::Environment(whole.to_string()));
            return;
        }
        let t = w.text.as_str();
        let (on, flags) = match (t.strip_prefix('-'), t.strip_prefix('+')) {
            (Some(f), _) if !f.is_empty() => (true, f),
            (_, Some(f)) if !f.is_empty() => (false, f),
            _ => break,
        };
        i += 1;
        if t == "--" {
            break;
        }
        for c in flags.chars() {
            match c {
                'x' => exported = on,
                // `export -n`: no longer exported.
                'n' if base == "export" => exported = false,
                // `declare -n ref=NAME`: later assignments to `ref` set NAME, whatever it is.
                'n' if on => out.concerns.push(Concern::Environment(whole.to_string())),
                'f' | 'F' => functions = true,
                _ => {}
            }
        }
    }
    if functions {
        // Function names, not variables (their bodies are checked where they are defined).
        return;
    }
    for w in &args[i..] {
        evaluated_name(w, true, whole, inherited, out);
        // As written (`NAME="$v"`), else after quote removal (`"NAME=v"`).
        let form = match (leading_name(&w.raw), leading_name(&w.text)) {
            (Some(name), _) => Some((name, w.raw.as_str())),
            (None, Some(name)) if w.literal => Some((name, w.text.as_str())),
            _ => None,
        };
        let Some((name, form)) = form else {
            if !w.literal {
                out.concerns.push(Concern::Environment(w.text.clone()));
            }
            continue;
        };
        let assigns = form.len() > name.len();
        if exported || (assigns && may_be_inherited(name, inherited)) || is_loader_variable(name) {
            out.concerns.extend(environment_concern(name, &w.text));
        }
    }
}

/// Builtins that assign the variables they are given by name: `read [-a NAME] [NAME…]`,
/// `printf -v NAME`, `mapfile`/`readarray [NAME]`, `getopts OPTSTRING NAME`. Each name is
/// checked as `NAME=value` would be ([`target_concern`]). With no name, `read` sets `REPLY` and
/// `mapfile` `MAPFILE`, and `getopts` always sets `OPTARG` and `OPTIND`: the shell's own
/// variables, never taken as inherited ([`may_be_inherited`]), so they are not looked at.
fn assigned_by_name(
    base: &str,
    args: &[Word],
    whole: &str,
    inherited: &Inherited,
    out: &mut Outcome,
) {
    let names: Vec<Word> = if base == "getopts" {
        // No options: `getopts [--] OPTSTRING NAME [ARG…]`.
        let skip = usize::from(args.first().is_some_and(|w| w.literal && w.text == "--"));
        args.get(skip + 1).into_iter().cloned().collect()
    } else {
        let spec = match base {
            "read" => Spec {
                short_arg: "adinNptu",
                short_flag: "Eers",
                ..Spec::default()
            },
            "printf" => Spec {
                short_arg: "v",
                ..Spec::default()
            },
            _ => Spec {
                short_arg: "CcdnOsu",
                short_flag: "t",
                ..Spec::default()
            },
        };
        let (opts, start) = match scan(args, &spec) {
            Ok(r) => r,
            // `printf "$f" HOME x`, `read "$name"`: the word may be `-v`, and any word the
            // name, with a subscript that runs code.
            Err(Stop::Dynamic(_)) => {
                out.concerns.push(Concern::Environment(whole.to_string()));
                for w in args {
                    evaluated_name(w, false, whole, inherited, out);
                }
                return;
            }
            // bash refuses an option it does not know, and assigns nothing.
            Err(Stop::Unknown(_)) => return,
        };
        let operands = args.get(start..).unwrap_or(&[]);
        let named = arg_of(&opts, &["-a", "-v"]).into_iter();
        match base {
            "read" => named.chain(operands).cloned().collect(),
            "printf" => named.cloned().collect(),
            _ => operands.first().into_iter().cloned().collect(),
        }
    };
    for name in &names {
        evaluated_name(name, false, whole, inherited, out);
        out.concerns.extend(target_concern(name, inherited));
    }
}

/// `set -a` / `set -o allexport` (also as a shell's options): every later assignment is
/// exported.
fn allexport(opts: &[Opt]) -> bool {
    opts.iter().any(|o| {
        o.name == "-a" || (o.name == "-o" && o.arg.as_ref().is_some_and(|a| a.text == "allexport"))
    })
}

fn set(args: &[Word], whole: &str, out: &mut Outcome) {
    let spec = Spec {
        short_arg: "o",
        any_letter: true,
        plus: true,
        ..Spec::default()
    };
    match scan(args, &spec) {
        Ok((opts, _)) if !allexport(&opts) => {}
        // `set -a`, or a word that may be `-a`.
        Ok(_) | Err(Stop::Dynamic(_)) => out.concerns.push(Concern::Environment(whole.to_string())),
        // bash refuses an option it does not know.
        Err(Stop::Unknown(_)) => {}
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash", "rbash", "lksh", "pdksh",
    "oksh", "loksh", "ksh93", "bosh",
];
pub(super) const FOREIGN_SHELLS: &[&str] = &[
    "fish",
    "csh",
    "tcsh",
    "pwsh",
    "powershell",
    "nu",
    "elvish",
    "xonsh",
    "rc",
    "es",
];

/// What a command with this name and these arguments runs besides itself.
pub(super) fn analyse(name: &str, args: &[Word], whole: &str, inherited: &Inherited) -> Outcome {
    let mut out = Outcome::default();
    let base = name.rsplit('/').next().unwrap_or(name);
    match base {
        "env" => env(args, &mut out, 0),
        "sudo" => sudo(args, &mut out),
        "doas" => {
            let spec = Spec {
                short_arg: "Cu",
                short_flag: "Lns",
                ..Spec::default()
            };
            if let Ok((opts, start)) = scan(args, &spec) {
                if start >= args.len() && has(&opts, &["-s"]) {
                    out.opaque(
                        "doas -s starts a shell that reads commands from standard input".into(),
                    );
                }
            }
            prefix(args, &spec, 0, &["-C", "-L"], &mut out)
        }
        "timeout" | "gtimeout" => prefix(
            args,
            &Spec {
                short_arg: "ks",
                short_flag: "fpv",
                long_arg: &["kill-after", "signal"],
                long_flag: &[
                    "foreground",
                    "preserve-status",
                    "verbose",
                    "help",
                    "version",
                ],
                ..Spec::default()
            },
            1,
            &["--help", "--version"],
            &mut out,
        ),
        "nice" => prefix(
            args,
            &Spec {
                short_arg: "n",
                long_arg: &["adjustment"],
                long_flag: &["help", "version"],
                numeric: true,
                ..Spec::default()
            },
            0,
            &["--help", "--version"],
            &mut out,
        ),
        "nohup" | "setsid" | "unbuffer" | "catchsegv" | "coproc" | "builtin" | "busybox" => prefix(
            args,
            &Spec {
                short_flag: match base {
                    "setsid" => "cfw",
                    "unbuffer" => "p",
                    _ => "",
                },
                long_flag: match base {
                    "setsid" => &["ctty", "fork", "wait", "help", "version"],
                    "nohup" => &["help", "version"],
                    _ => &[],
                },
                ..Spec::default()
            },
            0,
            &["--help", "--version"],
            &mut out,
        ),
        "command" => prefix(
            args,
            &Spec {
                short_flag: "pvV",
                ..Spec::default()
            },
            0,
            &["-v", "-V"],
            &mut out,
        ),
        "exec" => prefix(
            args,
            &Spec {
                short_arg: "a",
                short_flag: "cl",
                ..Spec::default()
            },
            0,
            &[],
            &mut out,
        ),
        "stdbuf" => prefix(
            args,
            &Spec {
                short_arg: "ioe",
                long_arg: &["input", "output", "error"],
                long_flag: &["help", "version"],
                ..Spec::default()
            },
            0,
            &["--help", "--version"],
            &mut out,
        ),
        "time" => prefix(
            args,
            &Spec {
                short_arg: "fo",
                short_flag: "apqvV",
                long_arg: &["format", "output"],
                long_flag: &[
                    "append",
                    "portability",
                    "quiet",
                    "verbose",
                    "help",
                    "version",
                ],
                ..Spec::default()
            },
            0,
            &["--help", "-V", "--version"],
            &mut out,
        ),
        "ionice" => prefix(
            args,
            &Spec {
                short_arg: "cnpPu",
                short_flag: "thV",
                long_arg: &["class", "classdata", "pid", "pgid", "uid"],
                long_flag: &["ignore", "help", "version"],
                ..Spec::default()
            },
            0,
            &["-p", "-P", "-u", "--pid", "--pgid", "--uid", "-h", "-V"],
            &mut out,
        ),
        "chrt" => chrt(args, &mut out),
        "taskset" => prefix(
            args,
            &Spec {
                short_flag: "acphV",
                long_flag: &["all-tasks", "cpu-list", "pid", "help", "version"],
                ..Spec::default()
            },
            1,
            &["-p", "--pid", "-h", "-V"],
            &mut out,
        ),
        "chroot" => prefix(
            args,
            &Spec {
                long_arg: &["userspec", "groups"],
                long_flag: &["skip-chdir", "help", "version"],
                ..Spec::default()
            },
            1,
            &["--help", "--version"],
            &mut out,
        ),
        "strace" => prefix(
            args,
            &Spec {
                short_arg: "abeEIoOpPsSuUX",
                short_flag: "AcCdDfFhiknqrtTvVwxyzZ",
                long_arg: &["output", "attach", "user", "trace-path", "string-limit"],
                long_flag: &[
                    "follow-forks",
                    "output-separately",
                    "summary-only",
                    "summary",
                    "summary-wall-clock",
                    "help",
                    "version",
                    "no-abbrev",
                    "relative-timestamps",
                    "absolute-timestamps",
                    "syscall-times",
                    "stack-traces",
                ],
                long_any_value: true,
                ..Spec::default()
            },
            0,
            &["-h", "-V", "--help", "--version"],
            &mut out,
        ),
        "ltrace" => prefix(
            args,
            &Spec {
                short_arg: "aADeFlnopsuwx",
                short_flag: "bcCfhiLrStTV",
                long_arg: &["align", "output", "library"],
                long_flag: &["demangle", "help", "version", "no-signals"],
                long_any_value: true,
                ..Spec::default()
            },
            0,
            &["-h", "-V", "--help", "--version"],
            &mut out,
        ),
        "pkexec" => prefix(
            args,
            &Spec {
                long_arg: &["user"],
                long_flag: &["disable-internal-agent", "keep-cwd", "help", "version"],
                ..Spec::default()
            },
            0,
            &["--help", "--version"],
            &mut out,
        ),
        "caffeinate" => prefix(
            args,
            &Spec {
                short_arg: "tw",
                short_flag: "dimsu",
                ..Spec::default()
            },
            0,
            &[],
            &mut out,
        ),
        "fakeroot" => prefix(
            args,
            &Spec {
                short_arg: "lsib",
                short_flag: "uhv",
                long_arg: &["lib", "faked"],
                long_flag: &["unknown-is-real", "help", "version"],
                ..Spec::default()
            },
            0,
            &["-h", "-v", "--help", "--version"],
            &mut out,
        ),
        "proxychains" | "proxychains4" => prefix(
            args,
            &Spec {
                short_arg: "f",
                short_flag: "q",
                ..Spec::default()
            },
            0,
            &[],
            &mut out,
        ),
        "xargs" => xargs(args, &mut out),
        "find" => find(args, &mut out),
        "watch" => watch(args, &mut out),
        "flock" => flock(args, &mut out),
        "script" => script(args, &mut out),
        "su" => su(args, false, &mut out),
        "runuser" => su(args, true, &mut out),
        "sg" => sg(args, &mut out),
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            declaration(base, args, whole, inherited, &mut out)
        }
        "set" => set(args, whole, &mut out),
        "read" | "printf" | "getopts" => assigned_by_name(base, args, whole, inherited, &mut out),
        "eval" => {
            out.opaque(whole.to_string());
            if !args.is_empty() && args.iter().all(|w| w.literal) {
                let text = args
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                out.line(&Word {
                    raw: join_raw(args),
                    text,
                    literal: true,
                    single: true,
                });
            }
        }
        "source" | "." => out.opaque(whole.to_string()),
        "trap" => trap(args, whole, &mut out),
        // Defining an alias (listing is harmless).
        "alias" if args.iter().any(|w| !w.literal || w.text.contains('=')) => {
            out.opaque(whole.to_string());
        }
        "enable" | "hash" | "compgen" | "mapfile" | "readarray" | "bind" => {
            let flag = match base {
                "enable" => 'f',
                "hash" => 'p',
                "compgen" => 'C',
                "bind" => 'x',
                _ => 'C',
            };
            let hit = args.iter().any(|w| {
                !w.literal
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && (w.text.contains(flag) || (base == "compgen" && w.text.contains('F'))))
            });
            if hit {
                out.opaque(whole.to_string());
            }
            if matches!(base, "mapfile" | "readarray") {
                assigned_by_name(base, args, whole, inherited, &mut out);
            }
        }
        // Re-running history (listing with -l is harmless).
        "fc" if !args
            .iter()
            .any(|w| w.literal && w.text.starts_with('-') && w.text.contains('l')) =>
        {
            out.opaque(whole.to_string());
        }
        "let" | "test" | "[" => {
            // Arithmetic evaluates array subscripts, which may contain `$(...)`.
            let arith = base == "let"
                || args.iter().any(|w| {
                    matches!(
                        w.text.as_str(),
                        "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v"
                    )
                });
            // A literal word reaches the builtin as written: an expansion in it is one bash
            // performs itself, which the parser never saw (`let 'a[$(cmd)]=1'`).
            if arith
                && args.iter().any(|w| {
                    w.text.contains("$(")
                        || w.text.contains('`')
                        || (w.literal && evaluated_text_hides_code(&w.text))
                })
            {
                out.opaque(whole.to_string());
            }
            if base == "let" {
                for target in args.iter().flat_map(|w| arithmetic_targets(&w.text)) {
                    out.concerns.extend(target_concern(&target, inherited));
                }
            }
        }
        // `unset 'a[$(cmd)]'` evaluates the subscript (function names with `-f` do not).
        "unset" => {
            let functions = args
                .iter()
                .take_while(|w| w.literal && w.text.starts_with('-') && w.text != "--")
                .any(|w| w.text.contains('f'));
            if !functions {
                for w in args
                    .iter()
                    .filter(|w| !(w.literal && w.text.starts_with('-')))
                {
                    evaluated_name(w, false, whole, inherited, &mut out);
                }
            }
        }
        _ if SHELLS.contains(&base) => shell(base, args, &mut out),
        _ if FOREIGN_SHELLS.contains(&base) => {
            let has_c = args.iter().any(|w| {
                !w.literal
                    || w.text == "-c"
                    || w.text == "-Command"
                    || w.text == "--command"
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains('c'))
            });
            if has_c || args.is_empty() {
                out.opaque(format!("{base} code is not parsed: {whole}"));
            }
        }
        _ => {}
    }
    out
}

/// `WRAPPER [OPTIONS] [FIXED OPERANDS...] COMMAND [ARGS...]`.
fn prefix(args: &[Word], spec: &Spec, fixed: usize, no_inner: &[&str], out: &mut Outcome) {
    let (opts, start) = match scan(args, spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, no_inner) {
        return;
    }
    for w in args.iter().skip(start).take(fixed) {
        if !w.single {
            return out.stop(Stop::Dynamic(w.text.clone()));
        }
    }
    out.argv(args.get(start + fixed..).unwrap_or(&[]));
}

fn env(args: &[Word], out: &mut Outcome, depth: usize) {
    if depth > 8 {
        return out.stop(Stop::Unknown("env -S nested too deeply".into()));
    }
    let spec = Spec {
        short_arg: "uCS",
        short_flag: "i0v",
        long_arg: &["unset", "chdir", "split-string"],
        long_flag: &[
            "ignore-environment",
            "null",
            "debug",
            "help",
            "version",
            "list-signal-handling",
            "block-signal",
            "default-signal",
            "ignore-signal",
        ],
        ..Spec::default()
    };
    let mut i = 0;
    while i < args.len() {
        if args[i].literal && args[i].text == "-" {
            i += 1;
            continue;
        }
        match step(args, i, &spec) {
            Err(s) => return out.stop(s),
            Ok(Step::End(next)) => {
                i = next;
                break;
            }
            Ok(Step::Operand) => break,
            Ok(Step::Opts(opts, next)) => {
                if has(&opts, &["--help", "--version"]) {
                    return;
                }
                if let Some(opt) = opts
                    .iter()
                    .find(|o| o.name == "-S" || o.name == "--split-string")
                {
                    let Some(s) = &opt.arg else { return };
                    if !s.literal {
                        return out.stop(Stop::Dynamic(s.text.clone()));
                    }
                    match split_env_string(&s.text) {
                        Ok(mut words) => {
                            words.extend(args[next..].iter().cloned());
                            return env(&words, out, depth + 1);
                        }
                        Err(e) => return out.stop(Stop::Unknown(e)),
                    }
                }
                i = next;
            }
        }
    }
    if let Some(cmd) = assignments(args, i, out) {
        out.argv(args.get(cmd..).unwrap_or(&[]));
    }
}

fn sudo(args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "aCcDgpRrTtUu",
        short_opt: "h",
        short_flag: "ABbEeHiKklNnPSsVv",
        long_arg: &[
            "user",
            "group",
            "close-from",
            "chdir",
            "chroot",
            "prompt",
            "role",
            "type",
            "other-user",
            "command-timeout",
            "login-class",
            "auth-type",
        ],
        long_flag: &[
            "askpass",
            "background",
            "bell",
            "edit",
            "help",
            "login",
            "list",
            "non-interactive",
            "preserve-groups",
            "remove-timestamp",
            "reset-timestamp",
            "set-home",
            "shell",
            "stdin",
            "validate",
            "version",
            "preserve-env",
            "host",
        ],
        ..Spec::default()
    };
    let (opts, start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if opts.iter().any(|o| o.name == "-h" && o.arg.is_none()) && start < args.len() {
        return out.stop(Stop::Unknown(
            "sudo -h without an attached host is ambiguous (help or host)".into(),
        ));
    }
    if has(
        &opts,
        &[
            "-e",
            "--edit",
            "-l",
            "--list",
            "-V",
            "--version",
            "--help",
            "-v",
            "--validate",
        ],
    ) {
        return;
    }
    if let Some(cmd) = assignments(args, start, out) {
        let inner = args.get(cmd..).unwrap_or(&[]);
        if inner.is_empty() && has(&opts, &["-s", "-i", "--shell", "--login"]) {
            out.opaque("sudo starts a shell that reads commands from standard input".into());
        }
        out.argv(inner);
    }
}

fn chrt(args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "TPD",
        short_flag: "abdefimoprRvhV",
        long_arg: &["sched-runtime", "sched-period", "sched-deadline"],
        long_flag: &[
            "all-tasks",
            "batch",
            "deadline",
            "ext",
            "fifo",
            "idle",
            "max",
            "other",
            "pid",
            "rr",
            "reset-on-fork",
            "verbose",
            "help",
            "version",
        ],
        ..Spec::default()
    };
    let (opts, mut start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(
        &opts,
        &[
            "-p",
            "--pid",
            "-m",
            "--max",
            "-h",
            "-V",
            "--help",
            "--version",
        ],
    ) {
        return;
    }
    if let Some(prio) = args.get(start) {
        if !prio.literal {
            return out.stop(Stop::Dynamic(prio.text.clone()));
        }
        if prio.text.chars().all(|c| c.is_ascii_digit()) {
            start += 1;
        }
    }
    out.argv(args.get(start..).unwrap_or(&[]));
}

fn xargs(args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "aEdILnPs",
        short_opt: "eil",
        short_flag: "0prtxo",
        long_arg: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        long_flag: &[
            "null",
            "no-run-if-empty",
            "verbose",
            "interactive",
            "exit",
            "open-tty",
            "show-limits",
            "help",
            "version",
            "replace",
            "eof",
            "max-lines",
        ],
        ..Spec::default()
    };
    let (opts, start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, &["--help", "--version", "--show-limits"]) {
        return;
    }
    // With -I R (or -i / --replace, R = `{}`), every word containing R is replaced by
    // input: its value is unknown.
    let replace: Option<String> = opts.iter().rev().find_map(|o| match o.name.as_str() {
        "-I" => o.arg.as_ref().map(|a| a.text.clone()),
        "-i" | "--replace" => Some(
            o.arg
                .as_ref()
                .map(|a| a.text.clone())
                .unwrap_or_else(|| "{}".into()),
        ),
        _ => None,
    });
    let mut inner: Vec<Word> = args.get(start..).unwrap_or(&[]).to_vec();
    if inner.is_empty() {
        inner.push(Word::lit("echo"));
    }
    if let Some(r) = replace.filter(|r| !r.is_empty()) {
        for w in &mut inner {
            if w.text.contains(&r) {
                *w = w.made_dynamic();
            }
        }
    }
    out.argv(&inner);
}

/// find's tests that take an argument: a non-literal word there is a value, not an action.
const FIND_ARG_TESTS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-newer",
    "-anewer",
    "-cnewer",
    "-samefile",
    "-type",
    "-xtype",
    "-size",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-maxdepth",
    "-mindepth",
    "-links",
    "-inum",
    "-used",
    "-fstype",
    "-context",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-regextype",
];

fn find(args: &[Word], out: &mut Outcome) {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.literal {
            let is_value = i > 0
                && args[i - 1].literal
                && (FIND_ARG_TESTS.contains(&args[i - 1].text.as_str())
                    || args[i - 1].text.starts_with("-newer"));
            if !is_value || !w.single {
                out.stop(Stop::Dynamic(w.text.clone()));
                return;
            }
            i += 1;
            continue;
        }
        if matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut j = start;
            while j < args.len() {
                let t = &args[j];
                if t.literal
                    && (t.text == ";" || (t.text == "+" && j > start && args[j - 1].text == "{}"))
                {
                    break;
                }
                j += 1;
            }
            // find replaces `{}` by each file name: such words have no known value.
            let inner: Vec<Word> = args[start..j]
                .iter()
                .map(|w| {
                    if w.text.contains("{}") {
                        w.made_dynamic()
                    } else {
                        w.clone()
                    }
                })
                .collect();
            out.argv(&inner);
            i = j + 1;
            continue;
        }
        i += 1;
    }
}

fn watch(args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "nqs",
        short_opt: "d",
        short_flag: "bcCegprtwxhv",
        long_arg: &["interval", "equexit", "shotsdir"],
        long_flag: &[
            "beep",
            "color",
            "no-color",
            "differences",
            "errexit",
            "chgexit",
            "precise",
            "no-rerun",
            "no-title",
            "no-wrap",
            "exec",
            "help",
            "version",
        ],
        ..Spec::default()
    };
    let (opts, start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, &["-h", "-v", "--help", "--version"]) {
        return;
    }
    let rest = args.get(start..).unwrap_or(&[]);
    if rest.is_empty() {
        return;
    }
    if has(&opts, &["-x", "--exec"]) {
        return out.argv(rest);
    }
    // watch joins its arguments with spaces and runs them with `sh -c`.
    let literal = rest.iter().all(|w| w.literal);
    let text = rest
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    out.line(&Word {
        raw: join_raw(rest),
        text: if literal { text } else { join_raw(rest) },
        literal,
        single: true,
    });
}

fn flock(args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "wEc",
        short_flag: "sexnouFhV",
        long_arg: &["timeout", "wait", "conflict-exit-code", "command"],
        long_flag: &[
            "shared",
            "exclusive",
            "unlock",
            "nonblock",
            "nb",
            "close",
            "no-fork",
            "verbose",
            "help",
            "version",
        ],
        ..Spec::default()
    };
    let (opts, start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if let Some(cmd) = arg_of(&opts, &["-c", "--command"]) {
        return out.line(cmd);
    }
    // flock FILE -c STRING | flock FILE COMMAND ARGS | flock FD
    let Some(next) = args.get(start + 1) else {
        return;
    };
    if !next.literal {
        return out.stop(Stop::Dynamic(next.text.clone()));
    }
    if next.text == "-c" || next.text == "--command" {
        if let Some(s) = args.get(start + 2) {
            out.line(s);
        }
        return;
    }
    out.argv(&args[start + 1..]);
}

fn script(args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "cEBIOTmo",
        short_opt: "t",
        short_flag: "aefqhV",
        long_arg: &[
            "command",
            "echo",
            "log-io",
            "log-in",
            "log-out",
            "log-timing",
            "logging-format",
            "output-limit",
        ],
        long_flag: &[
            "append", "return", "flush", "force", "quiet", "timing", "help", "version",
        ],
        ..Spec::default()
    };
    let (opts, _operands) = match scan_permuted(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, &["-h", "-V", "--help", "--version"]) {
        return;
    }
    match arg_of(&opts, &["-c", "--command"]) {
        Some(cmd) => out.line(cmd),
        None => out.opaque("script starts a shell that reads commands from standard input".into()),
    }
}

fn su(args: &[Word], runuser: bool, out: &mut Outcome) {
    let spec = Spec {
        short_arg: if runuser { "cgGswu" } else { "cgGsw" },
        short_flag: "flmpPhV",
        long_arg: &[
            "command",
            "session-command",
            "group",
            "supp-group",
            "shell",
            "whitelist-environment",
            "user",
        ],
        long_flag: &[
            "fast",
            "login",
            "preserve-environment",
            "pty",
            "help",
            "version",
        ],
        ..Spec::default()
    };
    let (opts, operands) = match scan_permuted(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, &["-h", "-V", "--help", "--version"]) {
        return;
    }
    if runuser && has(&opts, &["-u", "--user"]) {
        return out.argv(&operands);
    }
    match arg_of(&opts, &["-c", "--command", "--session-command"]) {
        Some(cmd) => out.line(cmd),
        None => out.opaque("su starts a shell that reads commands from standard input".into()),
    }
}

fn sg(args: &[Word], out: &mut Outcome) {
    // sg GROUP [-c] COMMAND
    let mut rest = args.get(1..).unwrap_or(&[]);
    if let Some(first) = rest.first() {
        if first.literal && first.text == "-c" {
            rest = &rest[1..];
        }
    }
    if let Some(cmd) = rest.first() {
        out.line(cmd);
    }
}

fn trap(args: &[Word], whole: &str, out: &mut Outcome) {
    let mut args = args;
    if args.first().is_some_and(|w| w.literal && w.text == "--") {
        args = &args[1..];
    }
    let Some(first) = args.first() else { return };
    if first.literal && (first.text == "-p" || first.text == "-l" || first.text == "-") {
        return;
    }
    if args.len() < 2 && first.literal {
        // `trap SIGNAL` resets a signal.
        return;
    }
    out.opaque(whole.to_string());
    if first.literal && !first.text.is_empty() {
        out.line(first);
    }
}

fn shell(base: &str, args: &[Word], out: &mut Outcome) {
    let spec = Spec {
        short_arg: "oO",
        any_letter: true,
        long_arg: &["rcfile", "init-file", "emulate"],
        long_flag: &[
            "login",
            "noprofile",
            "norc",
            "posix",
            "restricted",
            "verbose",
            "version",
            "help",
            "debugger",
            "dump-strings",
            "dump-po-strings",
            "noediting",
            "pretty-print",
            "no-rcs",
            "no-globalrcs",
        ],
        plus: true,
        ..Spec::default()
    };
    let (opts, start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if allexport(&opts) {
        // `bash -a -c '…'`: every assignment in the string is exported.
        out.concerns
            .push(Concern::Environment(format!("{base} {}", join_raw(args))));
    }
    if has(&opts, &["-c"]) {
        if let Some(cmd) = args.get(start) {
            out.line(cmd);
        }
        return;
    }
    if has(&opts, &["--version", "--help", "-n"]) {
        return;
    }
    if start >= args.len() || has(&opts, &["-s", "-i"]) {
        out.opaque(format!("{base} reads commands from standard input"));
    }
}
