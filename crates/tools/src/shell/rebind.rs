//! Names that rebind commands: assignments and builtins that change what later commands in
//! the line mean, so that the command a rule allowed is not the one that runs.
//!
//! - Variables bash consults to find, read or run a command: its command hash
//!   (`BASH_CMDS[ls]=/bin/rm; ls` runs `rm`), `BASH_ALIASES`, `IFS` (splits every later
//!   unquoted expansion: `IFS=/` makes `$x` several words), `CDPATH` (where `cd` goes),
//!   `GLOBIGNORE`, `EXECIGNORE`, `POSIXLY_CORRECT`, `BASH_COMPAT`, `BASH_XTRACEFD`,
//!   `BASH_LOADABLES_PATH` and the loader and start-up variables ([`is_loader_variable`]:
//!   `PATH`, `BASH_ENV`, `ENV`, `PS4`, `PROMPT_COMMAND`, `SHELLOPTS`, `BASHOPTS`, `LD_*`),
//!   which are reported as such. An assignment to one, in any spelling (plain, subscript,
//!   `+=`, a declaration, `read`, `printf -v`, `mapfile`, `getopts`, `for`, arithmetic,
//!   `${NAME:=…}`), is a [`Concern::Rebinding`]. `IFS` as a command's prefix (`IFS= read -r
//!   line`) only reaches that command and stays silent, unless the command is a special
//!   builtin or a function of the line, where the assignment persists or reaches the body.
//! - Builtins that change how bash reads or runs what follows: `enable` with names (turns a
//!   builtin on or off, or loads one with `-f`), `shopt -s`/`-u` and `set` options outside a
//!   short list that only make the shell stricter or louder (`-e`, `-u`, `-x`, `pipefail`,
//!   `nullglob`, …; `expand_aliases`, `extglob`, `+o interactive-comments`, `-k` and the rest
//!   ask), and the same options given to a shell (`bash -O expand_aliases -c …`). `alias` and
//!   `hash -p` are opaque code already.
//! - Function definitions named like a builtin or a program in a system directory (`ls() { rm
//!   "$@"; }; ls`, `function git { …; }`), called in the line or not (an agent's shell keeps
//!   them for its next call), and `command_not_found_handle`, which bash runs for every
//!   unknown name.

use super::variables::{is_hook_variable, leading_name};
use super::words::{arithmetic_targets, Word};

/// Variables that change what later commands mean without being loader variables (those are
/// reported as [`super::Concern::LoaderVariable`] wherever they are set).
pub fn rebinds_commands(name: &str) -> bool {
    matches!(
        name,
        "BASH_CMDS"
            | "BASH_ALIASES"
            | "IFS"
            | "CDPATH"
            | "GLOBIGNORE"
            | "EXECIGNORE"
            | "POSIXLY_CORRECT"
            | "BASH_COMPAT"
            | "BASH_XTRACEFD"
            | "BASH_LOADABLES_PATH"
    ) && !is_hook_variable(name)
}

/// bash's builtins: a function of the same name would replace one; `PATH` is not searched for
/// one.
pub const BUILTINS: &[&str] = &[
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "[",
];

/// Whether a function of this name takes the place of a command that exists without it: a
/// builtin, a program in a system directory, or bash's hook for unknown commands.
pub(super) fn shadows_command(name: &str) -> bool {
    name == "command_not_found_handle"
        || BUILTINS.contains(&name)
        || (!name.contains('/')
            && !name.is_empty()
            && cordon_policy::SYSTEM_BIN_DIRS
                .iter()
                .any(|d| std::path::Path::new(d).join(name).exists()))
}

/// Special builtins: a prefix assignment before one persists in POSIX mode (`IFS=/ :`).
pub(super) const SPECIAL_BUILTINS: &[&str] = &[
    ":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set",
    "shift", "source", "times", "trap", "unset",
];

/// `set` letters that only make the shell stricter, louder or quieter about errors.
const SAFE_SET_LETTERS: &str = "euxvCfnETbm";
/// `set -o` names for the same.
const SAFE_SET_OPTIONS: &[&str] = &[
    "errexit",
    "nounset",
    "xtrace",
    "verbose",
    "noclobber",
    "noglob",
    "noexec",
    "errtrace",
    "functrace",
    "pipefail",
    "notify",
    "monitor",
];
/// `shopt` options that do not change which command a word names or how the line is read.
const SAFE_SHOPT: &[&str] = &[
    "nullglob",
    "failglob",
    "dotglob",
    "globstar",
    "nocaseglob",
    "nocasematch",
    "inherit_errexit",
    "checkwinsize",
    "histappend",
    "cmdhist",
    "lithist",
    "progcomp",
    "globasciiranges",
];

/// What a simple command does to the variables and options of the shell that runs it.
#[derive(Default)]
pub(super) struct Effects {
    /// Variables it assigns by name (name as written, maybe with a subscript), with the value
    /// when it is known (`None`: from input or not known before the line runs).
    pub(super) assigns: Vec<(String, Option<String>)>,
    /// Variables arithmetic assigns (always numbers).
    pub(super) numbers: Vec<String>,
    /// Arithmetic text it evaluates (`let` arguments).
    pub(super) arithmetic: Vec<String>,
    /// `declare -i` names.
    pub(super) integers: Vec<String>,
    /// `declare -A` names.
    pub(super) assoc: Vec<String>,
    /// `declare -n`.
    pub(super) nameref: bool,
    /// Changes to how later commands are found or read (the concern's detail).
    pub(super) rebinding: Vec<String>,
}

/// The effects of the command `base args…`. `parsed`: a declaration the parser read itself,
/// whose unquoted `NAME=value` words are checked as assignments where they stand.
pub(super) fn effects(base: &str, args: &[Word], whole: &str, parsed: bool) -> Effects {
    let mut fx = Effects::default();
    match base {
        "read" => {
            let names = operands(args, "adinNptu", "Eers", Some('a'));
            for n in names {
                fx.assigns.push((n, None));
            }
        }
        "printf" => {
            if let Some(n) = option_arg(args, "v") {
                fx.assigns.push((n, None));
            }
        }
        "mapfile" | "readarray" => {
            let names = operands(args, "CcdnOsu", "t", None);
            fx.assigns
                .push((names.into_iter().next().unwrap_or("MAPFILE".into()), None));
        }
        "getopts" => {
            let skip = usize::from(args.first().is_some_and(|w| w.literal && w.text == "--"));
            if let Some(n) = args.get(skip + 1) {
                fx.assigns.push((n.text.clone(), None));
            }
        }
        "declare" | "typeset" | "local" | "export" | "readonly" => {
            declaration(args, parsed, &mut fx);
        }
        "let" => {
            for w in args {
                fx.arithmetic.push(w.text.clone());
                for t in arithmetic_targets(&w.text) {
                    fx.numbers.push(t.text);
                }
            }
        }
        // Listing (`enable`, `-a`, `-p`, `-s` alone) changes nothing; a name does.
        "enable"
            if args
                .iter()
                .any(|w| !w.literal || !w.text.starts_with('-') || w.text.contains('f')) =>
        {
            fx.rebinding.push(whole.to_string());
        }
        "shopt" => shopt(args, whole, &mut fx),
        "set" => set_options(args, whole, false, &mut fx),
        _ if super::wrappers::SHELLS.contains(&base) => set_options(args, whole, true, &mut fx),
        _ => {}
    }
    fx
}

/// Operands of a builtin with getopt-style options: `args_opts` take an argument, `flags` do
/// not; `named` is an option whose argument is a name too (`read -a NAME`). A word that is not
/// known before the line runs ends the scan (the existing checks report it).
fn operands(args: &[Word], args_opts: &str, flags: &str, named: Option<char>) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            return out;
        }
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        let Some(body) = t.strip_prefix('-').filter(|b| !b.is_empty()) else {
            break;
        };
        i += 1;
        for (k, c) in body.char_indices() {
            if args_opts.contains(c) {
                let rest = &body[k + c.len_utf8()..];
                let arg = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).map(|a| a.text.clone())
                } else {
                    Some(rest.to_string())
                };
                if named == Some(c) {
                    out.extend(arg);
                }
                break;
            }
            if !flags.contains(c) {
                return out;
            }
        }
    }
    out.extend(args[i.min(args.len())..].iter().map(|w| w.text.clone()));
    out
}

/// The argument of option `-v` (`printf -v NAME`, `-vNAME`) before the first operand.
fn option_arg(args: &[Word], opt: &str) -> Option<String> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal || !w.text.starts_with('-') || w.text == "--" {
            return None;
        }
        if let Some(rest) = w.text.strip_prefix('-').and_then(|r| r.strip_prefix(opt)) {
            return if rest.is_empty() {
                args.get(i + 1).map(|a| a.text.clone())
            } else {
                Some(rest.to_string())
            };
        }
        i += 1;
    }
    None
}

fn declaration(args: &[Word], parsed: bool, fx: &mut Effects) {
    let (mut integer, mut assoc) = (false, false);
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        let flags = match (t.strip_prefix('-'), t.strip_prefix('+')) {
            _ if !w.literal || leading_name(&w.raw).is_some() => break,
            (Some(f), _) if !f.is_empty() => f,
            (_, Some(f)) if !f.is_empty() => {
                i += 1;
                continue;
            }
            _ => break,
        };
        i += 1;
        if t == "--" {
            break;
        }
        if flags.contains(['f', 'F']) {
            return;
        }
        integer |= flags.contains('i');
        assoc |= flags.contains('A');
        fx.nameref |= flags.contains('n');
    }
    for w in &args[i.min(args.len())..] {
        let Some(name) = leading_name(&w.text) else {
            continue;
        };
        if integer {
            fx.integers.push(name.to_string());
        }
        if assoc {
            fx.assoc.push(name.to_string());
        }
        let written_as_assignment = leading_name(&w.raw).is_some();
        if let Some((_, value)) = w.text.split_once('=') {
            if parsed && written_as_assignment {
                // A `variable_assignment` the walk checks where it stands.
                continue;
            }
            let value = w.literal.then(|| value.to_string());
            fx.assigns.push((w.text.clone(), value));
        }
    }
}

fn shopt(args: &[Word], whole: &str, fx: &mut Effects) {
    let mut changes = false;
    let mut set_o = false;
    let mut names = Vec::new();
    for w in args {
        if !w.literal {
            return fx.rebinding.push(whole.to_string());
        }
        match w.text.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && flags != "-" => {
                changes |= flags.contains(['s', 'u']);
                set_o |= flags.contains('o');
            }
            _ => names.push(w.text.as_str()),
        }
    }
    let safe = |n: &&str| {
        if set_o {
            SAFE_SET_OPTIONS.contains(n)
        } else {
            SAFE_SHOPT.contains(n)
        }
    };
    if changes && (names.is_empty() || !names.iter().all(safe)) {
        fx.rebinding.push(whole.to_string());
    }
}

/// `set` options, or a shell's (`bash -O extglob -c …`, `sh +o interactive-comments -c …`):
/// any that is not on the safe lists changes how what follows is read or run.
fn set_options(args: &[Word], whole: &str, shell: bool, fx: &mut Effects) {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            if !shell {
                fx.rebinding.push(whole.to_string());
            }
            return;
        }
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            return;
        }
        if shell && t.starts_with("--") {
            if t == "--posix" {
                fx.rebinding.push(whole.to_string());
            }
            i += 1;
            continue;
        }
        let Some(body) = t.strip_prefix(['-', '+']).filter(|b| !b.is_empty()) else {
            return;
        };
        i += 1;
        for c in body.chars() {
            match c {
                'o' | 'O' => {
                    let Some(name) = args.get(i) else {
                        // `set -o` alone lists the options.
                        break;
                    };
                    i += 1;
                    // `allexport` is an environment concern already.
                    let safe = name.literal
                        && if c == 'o' {
                            name.text == "allexport"
                                || SAFE_SET_OPTIONS.contains(&name.text.as_str())
                        } else {
                            SAFE_SHOPT.contains(&name.text.as_str())
                        };
                    if !safe {
                        fx.rebinding.push(whole.to_string());
                        return;
                    }
                }
                // A shell's own: the string to run, login, interactive, read stdin, restricted.
                'c' | 'l' | 'i' | 's' | 'r' if shell => {}
                // `set -a` is an environment concern already.
                'a' => {}
                _ if SAFE_SET_LETTERS.contains(c) => {}
                _ => {
                    fx.rebinding.push(whole.to_string());
                    return;
                }
            }
        }
        if shell && body.contains('c') {
            return;
        }
    }
}
