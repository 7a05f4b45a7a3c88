//! Which variables change what a program runs ([`is_hook_variable`], [`is_inert_variable`]),
//! which assignments reach a program's environment ([`may_be_inherited`]), and the builtins
//! that assign variables by name (`export`, `declare`, `read`, `printf -v`, `set -a`, …).

use super::options::{arg_of, scan, Opt, Spec, Stop};
use super::words::{arithmetic_targets, Word};
use super::wrappers::Findings;
use super::{Concern, Inherited};

/// Variables that make a program load or run code other than what the line shows (hooks): the
/// policy's loader variables ([`cordon_policy::is_loader_variable`]: `LD_*`, `DYLD_*`,
/// `GCONV_PATH`, `GLIBC_TUNABLES`, `TMPDIR`, …, the ones the sandbox never passes), and the
/// shell's own: start-up and trace hooks (`BASH_ENV`, `ENV`, `PS4`, `PROMPT_COMMAND`,
/// `SHELLOPTS`, `BASHOPTS`), exported bash functions (`BASH_FUNC_*`) and `PATH` (which decides
/// what a command name runs). Each is a [`Concern::LoaderVariable`] wherever the line sets it.
pub fn is_hook_variable(name: &str) -> bool {
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

/// Whether a program whose options the analysis reads takes more options, a backup suffix, a
/// command or its configuration from this variable (`TAR_OPTIONS`, `SIMPLE_BACKUP_SUFFIX`,
/// `GZIP`, `GIT_CONFIG_COUNT`, `GIT_EXTERNAL_DIFF`, `LESSOPEN`, `GCC_EXEC_PREFIX`, …): where
/// the shell inherits it, the reading of that program's options is not what runs (so an
/// inherited one is a concern on every line, [`super::parse_in`]). git's identity variables (`GIT_AUTHOR_NAME`, …) only name who
/// commits.
pub fn changes_modelled_options(name: &str) -> bool {
    const EXACT: &[&str] = &[
        // cp, mv, ln, install: the backup's name.
        "SIMPLE_BACKUP_SUFFIX",
        "VERSION_CONTROL",
        // Archivers and compressors: more options.
        "TAR_OPTIONS",
        "GZIP",
        "PIGZ",
        "XZ_OPT",
        "XZ_DEFAULTS",
        "BZIP",
        "BZIP2",
        "ZSTD_CLEVEL",
        "ZIPOPT",
        "ZIP",
        "UNZIP",
        "UNZIPOPT",
        // Pagers, man and editors git and others start.
        "PAGER",
        "EDITOR",
        "VISUAL",
        "LESS",
        "LESSOPEN",
        "LESSCLOSE",
        "LESSKEYIN",
        "LESSKEY",
        "MANPAGER",
        "MANOPT",
        "MANROFFOPT",
        "BAT_PAGER",
        "BAT_OPTS",
        "BAT_CONFIG_PATH",
        // Remote shells and downloads.
        "RSYNC_RSH",
        "RSYNC_CONNECT_PROG",
        "RSYNC_PROXY",
        "CURL_HOME",
        "WGETRC",
        // Test runners, build tools and compilers.
        "PYTEST_ADDOPTS",
        "PYTEST_PLUGINS",
        "MAKEFLAGS",
        "GNUMAKEFLAGS",
        "MFLAGS",
        "MAKEFILES",
        "GCC_EXEC_PREFIX",
        "COMPILER_PATH",
        "CCC_OVERRIDE_OPTIONS",
        "RUSTC_WRAPPER",
        "RUSTC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "GOFLAGS",
        "NODE_OPTIONS",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PERL5OPT",
        "RUBYOPT",
        // openssl's configuration and modules; sqlite's history.
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "OPENSSL_MODULES",
        "SQLITE_HISTORY",
    ];
    let identity = matches!(
        name,
        "GIT_AUTHOR_NAME"
            | "GIT_AUTHOR_EMAIL"
            | "GIT_AUTHOR_DATE"
            | "GIT_COMMITTER_NAME"
            | "GIT_COMMITTER_EMAIL"
            | "GIT_COMMITTER_DATE"
    );
    EXACT.contains(&name)
        || (name.starts_with("GIT_") && !identity)
        || name.starts_with("CARGO_BUILD_")
        || (name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER"))
        || name.starts_with("CARGO_REGISTRIES_")
}

/// The concerns of what the shell inherits (with [`Inherited::Exactly`]; the sandbox passes
/// the built-in list, `LC_*` and the policy's `sandbox.env`): a hook variable (`BASH_ENV`,
/// `ENV`, exported functions, `PROMPT_COMMAND`; `PATH` is judged by its entries and `TMPDIR` is
/// cordon's own) and a variable that changes the options of a program the analysis reads
/// ([`changes_modelled_options`]) make every line ask, as if the line set them.
pub(super) fn inherited_concerns(inherited: &Inherited) -> Vec<Concern> {
    let Inherited::Exactly(names) = inherited else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|n| !matches!(n.as_str(), "PATH" | "TMPDIR"))
        .filter_map(|n| {
            let written = format!("{n}=${n}");
            if is_hook_variable(n) {
                Some(Concern::LoaderVariable(written))
            } else if changes_modelled_options(n) {
                Some(Concern::Environment(written))
            } else {
                None
            }
        })
        .collect()
}

/// The concern, if any, for a variable that reaches a program's environment; `written` is
/// what the line shows (`NAME=value`, or the name alone for `export NAME`).
pub(super) fn environment_concern(name: &str, written: &str) -> Option<Concern> {
    if is_hook_variable(name) {
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
    if is_hook_variable(name) || may_be_inherited(name, inherited) {
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
pub(super) fn subscript(text: &str) -> Option<&str> {
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
pub(super) fn evaluated_name(
    w: &Word,
    declaration: bool,
    whole: &str,
    inherited: &Inherited,
    out: &mut Findings,
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
pub(super) fn assignments(args: &[Word], mut i: usize, out: &mut Findings) -> Option<usize> {
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
pub(super) fn declaration(
    base: &str,
    args: &[Word],
    whole: &str,
    inherited: &Inherited,
    out: &mut Findings,
) {
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
        if exported || (assigns && may_be_inherited(name, inherited)) || is_hook_variable(name) {
            out.concerns.extend(environment_concern(name, &w.text));
        }
    }
}

/// Builtins that assign the variables they are given by name: `read [-a NAME] [NAME…]`,
/// `printf -v NAME`, `mapfile`/`readarray [NAME]`, `getopts OPTSTRING NAME`. Each name is
/// checked as `NAME=value` would be ([`target_concern`]). With no name, `read` sets `REPLY` and
/// `mapfile` `MAPFILE`, and `getopts` always sets `OPTARG` and `OPTIND`: the shell's own
/// variables, never taken as inherited ([`may_be_inherited`]), so they are not looked at.
pub(super) fn assigned_by_name(
    base: &str,
    args: &[Word],
    whole: &str,
    inherited: &Inherited,
    out: &mut Findings,
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
            // Round 10: `wait -p NAME` assigns the waited job's id to NAME, evaluating its
            // subscript (the real bash 5.2 ran `wait -n -p 'a[$(cmd)]'`'s `cmd`).
            "wait" => Spec {
                short_arg: "p",
                short_flag: "fn",
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
            // `wait "$pid"`: one word, the last, is a job or a flag (a `-p` would have no name
            // after it): nothing is assigned.
            Err(Stop::Dynamic(_))
                if base == "wait"
                    && args.last().is_some_and(|w| w.single && !w.literal)
                    && args.iter().filter(|w| !w.literal).count() == 1 =>
            {
                return
            }
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
            "wait" => arg_of(&opts, &["-p"]).into_iter().cloned().collect(),
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
pub(super) fn allexport(opts: &[Opt]) -> bool {
    opts.iter().any(|o| {
        o.name == "-a" || (o.name == "-o" && o.arg.as_ref().is_some_and(|a| a.text == "allexport"))
    })
}

pub(super) fn set(args: &[Word], whole: &str, out: &mut Findings) {
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

pub(super) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
