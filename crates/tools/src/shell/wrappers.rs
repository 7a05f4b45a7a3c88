//! Commands that run other commands (`sudo`, `env`, `xargs`, `find -exec`, `bash -c`, …)
//! and builtins that run code we cannot see (`eval`, `source`, …).
//!
//! Each wrapper's options are modelled from its getopt string: which options take an
//! argument decides where the inner command starts. An option we do not know is a
//! concern (we cannot tell where the inner command starts), never a guess. The wrappers that
//! only take options and a fixed number of operands before their command are a table
//! ([`table::PREFIX_WRAPPERS`]); the others are a function each.

use super::options::{arg_of, has, scan, scan_permuted, step, Spec, Step, Stop};
use super::variables::{
    allexport, assigned_by_name, assignments, declaration, evaluated_name,
    evaluated_text_hides_code, set, target_concern,
};
use super::words::{arithmetic_targets, join_raw, split_env_string, Word};
use super::{Concern, Inherited};
use cordon_policy::verdict::FOUND;
use table::prefix_wrapper;

mod table;

/// What a command runs besides itself.
pub(super) enum Inner {
    /// Another command, as argv.
    Argv(Vec<Word>),
    /// A shell command string, to be parsed.
    Line(Word),
    /// A shell command string read by a POSIX shell (dash: no `[[`, no `((`).
    PosixLine(Word),
}

/// What [`analyse`] found: the commands a command runs besides itself, and its concerns.
#[derive(Default)]
pub(super) struct Findings {
    pub(super) inner: Vec<Inner>,
    pub(super) concerns: Vec<Concern>,
    /// The command only runs `inner` as it is (see [`table::PrefixWrapper::transparent`]).
    pub(super) transparent: bool,
    /// `inner` gets more operands when it runs, read from input (`xargs` without `-I`).
    pub(super) appends_input: bool,
}

impl Findings {
    pub(super) fn argv(&mut self, words: &[Word]) {
        if !words.is_empty() {
            self.inner.push(Inner::Argv(words.to_vec()));
        }
    }

    pub(super) fn line(&mut self, word: &Word) {
        self.inner.push(Inner::Line(word.clone()));
    }

    pub(super) fn stop(&mut self, stop: Stop) {
        self.concerns.push(match stop {
            Stop::Dynamic(w) => Concern::DynamicCommand(w),
            Stop::Unknown(m) => Concern::Unparsed(m),
        });
    }

    pub(super) fn opaque(&mut self, what: String) {
        self.concerns.push(Concern::Opaque(what));
    }
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
pub(super) fn analyse(name: &str, args: &[Word], whole: &str, inherited: &Inherited) -> Findings {
    let mut out = Findings::default();
    let base = name.rsplit('/').next().unwrap_or(name);
    if base == "exec" {
        exec_name(args, &mut out);
    }
    if is_loader(base) {
        loader(args, &mut out);
        return out;
    }
    if let Some(wrapper) = prefix_wrapper(base) {
        if let Ok((opts, _)) = scan(args, &wrapper.spec) {
            for file in opts
                .iter()
                .filter(|o| wrapper.writes.contains(&o.name.as_str()))
                .filter_map(|o| o.arg.as_ref())
            {
                match file.text.strip_prefix(['|', '!']) {
                    // `strace -o '|CMD'` pipes the trace to `sh -c CMD`.
                    Some(cmd) if base == "strace" => {
                        out.inner.push(Inner::PosixLine(Word::lit(cmd)));
                    }
                    // valgrind's `%q{VAR}` puts a variable's value in the name.
                    _ if base == "valgrind" && file.text.contains("%q") => out.opaque(format!(
                        "valgrind names its file `{}` after an environment variable",
                        file.text
                    )),
                    _ => out.concerns.push(Concern::WriteRedirect(file.text.clone())),
                }
            }
        }
        prefix(
            args,
            &wrapper.spec,
            wrapper.fixed,
            wrapper.no_inner,
            &mut out,
        );
        if SHELL_WITHOUT_COMMAND.contains(&base) && runs_no_command(args, wrapper) {
            out.opaque(format!(
                "{base} given no command starts the user's shell, which reads its commands from the input"
            ));
        }
        out.transparent = wrapper.transparent;
        return out;
    }
    match base {
        "env" => {
            env(args, &mut out, 0);
            out.transparent = true;
        }
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
        "chrt" => chrt(args, &mut out),
        "xargs" => {
            xargs(args, &mut out);
            out.transparent = true;
        }
        "find" => find(args, &mut out),
        "fd" | "fdfind" => fd(args, &mut out),
        "git" => git(args, &mut out),
        "watch" => watch(args, &mut out),
        "flock" => flock(args, &mut out),
        "script" => script(args, &mut out),
        "ssh" | "scp" | "sftp" => ssh(base, args, &mut out),
        "jobs" => jobs(args, &mut out),
        "capsh" => capsh(args, &mut out),
        // `lckdo [-q] [-w] FILE CMD…`, `with-lock-ex -w|-q|-f FILE CMD…`: the lock file is
        // created, as flock's.
        "lckdo" | "with-lock-ex" => {
            let spec = Spec {
                short_flag: "qwf",
                ..Spec::NONE
            };
            match scan(args, &spec) {
                Ok((_, start)) => {
                    if let Some(file) = args.get(start) {
                        out.concerns.push(Concern::WriteRedirect(file.text.clone()));
                    }
                    prefix(
                        args.get(start..).unwrap_or(&[]),
                        &Spec::NONE,
                        1,
                        &[],
                        &mut out,
                    );
                }
                Err(s) => out.stop(s),
            }
        }
        // run0 runs its command as a transient unit of the system's service manager, as
        // systemd-run does: outside any sandbox.
        "run0" => {
            out.opaque(
                "`run0` hands its command to the service manager, outside any sandbox".into(),
            );
            let spec = Spec {
                short_arg: "ugD",
                long_arg: &[
                    "user",
                    "group",
                    "nice",
                    "chdir",
                    "setenv",
                    "unit",
                    "property",
                    "description",
                    "slice",
                    "slice-inherit",
                    "machine",
                    "background",
                ],
                long_flag: &["no-ask-password", "help", "version"],
                ..Spec::NONE
            };
            prefix(args, &spec, 0, &["--help", "--version"], &mut out);
        }
        // A runner that also keeps settings (`uv run`, `uv tool install`): a changing verb
        // is judged by the settings arm below.
        b if verb_runner(b).is_some() && !settings(b).is_some_and(|t| changes(t, args)) => {
            if let Some(r) = verb_runner(b) {
                run_verb(r, args, &mut out);
            }
        }
        // `pee CMD…` runs each argument with `sh -c`, its input copied to each.
        "pee" => {
            for w in args {
                if !w.literal {
                    out.stop(Stop::Dynamic(w.text.clone()));
                    break;
                }
                if !w.text.starts_with('-') {
                    out.inner.push(Inner::PosixLine(w.clone()));
                }
            }
        }
        // netcat's `-e`/`-c` (ncat's `--exec`, `--sh-exec`, `--lua-exec`) run a program for
        // each connection.
        "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd"
            if args.iter().any(|w| {
                !w.literal
                    || w.text.starts_with("--exec")
                    || w.text.starts_with("--sh-exec")
                    || w.text.starts_with("--lua-exec")
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains(['e', 'c']))
            }) =>
        {
            out.opaque(format!("`{base}` runs a program for each connection"));
        }
        _ if settings(base).is_some_and(|t| changes(t, args)) => {
            let why = settings(base).map_or("", |t| t.why);
            out.opaque(format!("`{whole}` {why}"));
        }
        "pacman" | "yay" | "paru" | "pikaur" if !pacman_reads(args) => out.opaque(format!(
            "`{whole}` installs, removes or changes the system's packages (as root, running their scripts and hooks), outside any sandbox"
        )),
        "gdb" | "gdb-multiarch" => gdb(args, &mut out),
        "cmake" => cmake_tool(args, &mut out),
        "corepack" => corepack(args, &mut out),
        "rpm" | "rpmquery" if !rpm_reads(base, args) => out.opaque(format!(
            "`{whole}` may install or change the system's packages (running their scriptlets), expand macros that run commands (`--eval '%(…)'`, `%{{lua:…}}`) or pipe its output to a command"
        )),
        // Round 12: `ctest --build-and-test SRC BIN … --test-command CMD…` runs CMD after the
        // build (the real ctest 3.25 ran `touch`); every word after the option is the command.
        "ctest" => match args.iter().find(|w| !w.literal) {
            Some(w) => out.stop(Stop::Dynamic(w.text.clone())),
            None => {
                if let Some(at) = args.iter().position(|w| w.text == "--test-command") {
                    out.argv(&args[at + 1..]);
                }
            }
        },
        "dc" => dc(args, &mut out),
        _ if runner(base).is_some_and(|r| !only_reports(r, args)) => {
            let r = runner(base).map_or("", |r| r.why);
            out.opaque(format!("`{base}` {r}"));
        }
        "tmux" | "screen" => multiplexer(base, args, &mut out),
        // `runcon CONTEXT COMMAND…`, or `runcon [-c] [-u U] [-r R] [-t T] [-l L] COMMAND…`.
        "runcon" => {
            let spec = Spec {
                short_arg: "urtl",
                short_flag: "ch",
                long_arg: &["user", "role", "type", "range"],
                long_flag: &["compute", "help", "version"],
                ..Spec::NONE
            };
            match args.first() {
                Some(w) if !w.single => out.stop(Stop::Dynamic(w.text.clone())),
                Some(w) if !w.text.starts_with('-') => {
                    prefix(&args[1..], &Spec::NONE, 0, &[], &mut out)
                }
                Some(_) => prefix(args, &spec, 0, &["-h", "--help", "--version"], &mut out),
                None => {}
            }
        }
        // `setarch ARCH [options] [command]`.
        "setarch" => match args.split_first() {
            Some((arch, _)) if !arch.single => out.stop(Stop::Dynamic(arch.text.clone())),
            Some((_, rest)) => {
                prefix(rest, &table::SETARCH, 0, &["--help"], &mut out);
                let shell = scan(rest, &table::SETARCH)
                    .is_ok_and(|(opts, start)| !has(&opts, &["--help"]) && rest.len() <= start);
                if shell {
                    out.opaque(
                        "setarch given no command starts a shell, which reads its commands from the input"
                            .into(),
                    );
                }
            }
            None => {}
        },
        // Round 7: the command becomes a unit of the operator's service manager, outside any
        // sandbox (`--user --on-calendar` makes it a timer): it asks, and it is reported.
        "systemd-run" => {
            out.opaque(
                "`systemd-run` hands its command to the operator's service manager, outside any sandbox"
                    .into(),
            );
            let spec = Spec {
                short_arg: "upEMH",
                short_flag: "GtPqrSd",
                long_any_value: true,
                long_flag: &[
                    "user",
                    "system",
                    "scope",
                    "remain-after-exit",
                    "wait",
                    "pipe",
                    "pty",
                    "quiet",
                    "collect",
                    "same-dir",
                    "no-block",
                    "no-ask-password",
                    "shell",
                    "on-clock-change",
                    "on-timezone-change",
                ],
                long_arg: &[
                    "unit",
                    "property",
                    "description",
                    "slice",
                    "setenv",
                    "working-directory",
                    "uid",
                    "gid",
                    "nice",
                    "machine",
                    "host",
                    "service-type",
                ],
                ..Spec::NONE
            };
            prefix(args, &spec, 0, &["--help", "--version"], &mut out);
        }
        "su" => su(args, false, &mut out),
        "runuser" => su(args, true, &mut out),
        "sg" => sg(args, &mut out),
        "npx" | "bunx" => package_runner(args, &mut out),
        "bun" | "npm" | "pnpm" | "yarn" => package_manager_runs(base, args, &mut out),
        // newgrp takes no command: it always starts a shell, which reads the input.
        "newgrp" => {
            out.opaque("newgrp starts a shell that reads commands from standard input".into())
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            declaration(base, args, whole, inherited, &mut out)
        }
        "set" => set(args, whole, &mut out),
        "read" | "printf" | "getopts" | "wait" => {
            assigned_by_name(base, args, whole, inherited, &mut out)
        }
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
        "history" => history(args, whole, &mut out),
        "compgen" | "complete" | "compopt" if !completion_only_lists(args) => {
            out.opaque(whole.to_string());
            // The word list's substitutions run: the deny rules see their commands.
            if let Some(list) = args
                .iter()
                .find(|w| w.literal && w.text.contains(['$', '`']))
            {
                out.line(&Word::lit(&format!(": {}", list.text)));
            }
        }
        "enable" | "hash" | "mapfile" | "readarray" | "bind" => {
            let flag = match base {
                "enable" => 'f',
                "hash" => 'p',
                "bind" => 'x',
                _ => 'C',
            };
            let hit = args.iter().any(|w| {
                !w.literal
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains(flag))
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
        "test" | "["
            if args.iter().any(|w| w.literal && w.text == "-v")
                && args.iter().any(|w| !w.literal) =>
        {
            // `-v NAME` evaluates NAME's subscript: a name only known when the line runs
            // (`[ -v "$x" ]`, x='a[$(cmd)]') runs what it holds.
            out.opaque(whole.to_string());
        }
        "test" | "["
            if args.windows(2).any(|p| {
                // `-v NAME[SUB]`: SUB is evaluated as arithmetic; only a plain number is known.
                p[0].literal
                    && p[0].text == "-v"
                    && p[1].text.split_once('[').is_some_and(|(_, sub)| {
                        !sub.trim_end_matches(']')
                            .chars()
                            .all(|c| c.is_ascii_digit())
                    })
            }) =>
        {
            out.opaque(whole.to_string());
        }
        "test" | "[" if args.iter().any(|w| !w.literal && !w.single) => {
            // An unquoted expansion may split into `-v a[$(cmd)]`.
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

/// Wrappers that, given no command, start the user's shell (`$SHELL`, or bash), which reads
/// its commands from the input: round 9, `echo 'rm -rf /usr' | unshare -r` ran `rm` (the real
/// unshare, chroot, nsenter and fakeroot did; pkexec and firejail say so in their manuals).
const SHELL_WITHOUT_COMMAND: &[&str] = &[
    "linux32",
    "linux64",
    "i386",
    "x86_64",
    "fakechroot",
    "unshare",
    "chroot",
    "nsenter",
    "fakeroot",
    "pkexec",
    "firejail",
];

/// Whether `WRAPPER ARGS` parses, does not only report, and has no command after its fixed
/// operands.
fn runs_no_command(args: &[Word], wrapper: &table::PrefixWrapper) -> bool {
    // firejail's listing and file-transfer options act on other sandboxes and start nothing.
    let reports = |o: &str| {
        let name = o.split_once('=').map_or(o, |(n, _)| n);
        matches!(
            name,
            "--list"
                | "--tree"
                | "--top"
                | "--netstats"
                | "--ls"
                | "--get"
                | "--put"
                | "--shutdown"
        ) || name.ends_with(".print")
            || name.starts_with("--debug")
    };
    scan(args, &wrapper.spec).is_ok_and(|(opts, start)| {
        !has(&opts, wrapper.no_inner)
            && args.len() <= start + wrapper.fixed
            && !(wrapper.names.contains(&"firejail") && opts.iter().any(|o| reports(&o.name)))
    })
}

/// `npx [OPTIONS] COMMAND [ARGS…]`, `npx -c STRING` (and `bunx`): npm runs a package's
/// binary of that name, or, when no package has it, the program on the PATH (round 9: the real
/// `npx --offline touch M` ran touch, and the default profile allowed `npx rm -rf /usr`). The
/// command is read as a command; an option not listed stops the parse (asks). npm takes its own
/// options only before the first operand under npx.
fn package_runner(args: &[Word], out: &mut Findings) {
    let spec = Spec {
        short_arg: "pcw",
        short_flag: "yq",
        long_arg: &[
            "package",
            "call",
            "workspace",
            "loglevel",
            "registry",
            "cache",
        ],
        long_flag: &[
            "yes",
            "no",
            "offline",
            "prefer-offline",
            "prefer-online",
            "quiet",
            "silent",
            "verbose",
            "workspaces",
            "include-workspace-root",
            "no-install",
            "ignore-existing",
            "bun",
            "help",
            "version",
        ],
        ..Spec::NONE
    };
    let (opts, start) = match scan(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if let Some(line) = arg_of(&opts, &["-c", "--call"]) {
        return out.line(line);
    }
    out.argv(args.get(start..).unwrap_or(&[]));
}

/// The run verbs of the package managers: `bun x`, `npm exec|x`, `pnpm exec|dlx`, `yarn
/// exec|dlx`. `npm exec` parses npm's options after the command too, up to `--` (the real npm
/// 11 gave `ls -la` no `-la`): the words after the verb are read as the command whatever they
/// are, for the deny rules, and the program table's concern still asks for these verbs.
fn package_manager_runs(base: &str, args: &[Word], out: &mut Findings) {
    if base == "pnpm" {
        pnpm_fallback(args, out);
    }
    let Some(verb) = args.first().filter(|w| w.literal) else {
        return;
    };
    let rest = &args[1..];
    match (base, verb.text.as_str()) {
        ("bun", "x") => package_runner(rest, out),
        // Round 12: `yarn node ARGS` runs node with ARGS (the real yarn 1.22 ran `-e CODE`).
        ("yarn", "node") => {
            let mut argv = vec![Word::lit("node")];
            argv.extend(rest.iter().cloned());
            out.argv(&argv);
        }
        ("npm", "exec" | "x") | ("pnpm", "exec" | "dlx") | ("yarn", "exec" | "dlx") => {
            if let Some(at) = rest.iter().position(|w| w.literal && w.text == "--") {
                return out.argv(&rest[at + 1..]);
            }
            if let Some(at) = rest
                .iter()
                .position(|w| w.literal && (w.text == "-c" || w.text == "--call"))
            {
                if let Some(line) = rest.get(at + 1) {
                    out.line(line);
                }
                return;
            }
            // Options (and a `--package` value) before the command are the manager's.
            let mut i = 0;
            while let Some(w) = rest.get(i) {
                if !(w.literal && w.text.starts_with('-')) {
                    break;
                }
                let takes_value =
                    matches!(w.text.as_str(), "-p" | "--package" | "-w" | "--workspace");
                i += if takes_value { 2 } else { 1 };
            }
            out.argv(rest.get(i..).unwrap_or(&[]));
        }
        _ => {}
    }
}

/// pnpm's own commands (pnpm 10.34: the `commandNames` of its commands, and those it passes
/// to npm); `t`, `tst` and `stop` are not among them.
const PNPM_COMMANDS: &[&str] = &[
    "add",
    "approve-builds",
    "audit",
    "bin",
    "c",
    "cache",
    "cat-file",
    "cat-index",
    "ci",
    "clean-install",
    "completion",
    "config",
    "create",
    "dedupe",
    "deploy",
    "dislink",
    "dlx",
    "doctor",
    "env",
    "exec",
    "fetch",
    "find-hash",
    "get",
    "help",
    "i",
    "ic",
    "ignored-builds",
    "import",
    "init",
    "install",
    "install-clean",
    "install-test",
    "it",
    "la",
    "licenses",
    "link",
    "list",
    "ll",
    "ln",
    "ls",
    "m",
    "multi",
    "outdated",
    "pack",
    "patch",
    "patch-commit",
    "patch-remove",
    "prune",
    "publish",
    "rb",
    "rebuild",
    "recursive",
    "remove",
    "restart",
    "rm",
    "root",
    "run",
    "run-script",
    "self-update",
    "server",
    "set",
    "setup",
    "start",
    "store",
    "test",
    "un",
    "uni",
    "uninstall",
    "unlink",
    "up",
    "update",
    "upgrade",
    "why",
    // Passed to npm.
    "access",
    "adduser",
    "bugs",
    "deprecate",
    "dist-tag",
    "docs",
    "edit",
    "find",
    "home",
    "info",
    "issues",
    "login",
    "logout",
    "owner",
    "ping",
    "prefix",
    "profile",
    "pkg",
    "repo",
    "s",
    "se",
    "search",
    "set-script",
    "show",
    "star",
    "stars",
    "team",
    "token",
    "unpublish",
    "unstar",
    "v",
    "version",
    "view",
    "whoami",
    "xmas",
];

/// Round 10: `pnpm WORD ARGS…` where WORD is none of pnpm's commands runs the project's script
/// WORD, and without one runs WORD as a program (the real pnpm 10 ran `touch` for `pnpm touch
/// pwned`): the words from the first that does not start with `-` (after one `--`) are the
/// command pnpm runs, as its fallback takes them, and are read as one for the rules (a
/// script of the project's runs its code by design, as `npm run`). An option before it may
/// take that word as its value (`--dir . touch x`), so the next word is looked at too.
/// `--shell-mode` (nopt takes an abbreviation) runs the words as a shell line.
fn pnpm_fallback(args: &[Word], out: &mut Findings) {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            return out.stop(Stop::Dynamic(w.text.clone()));
        }
        if !w.text.starts_with('-') || w.text == "--" {
            break;
        }
        i += 1;
    }
    let options = &args[..i];
    if args.get(i).is_some_and(|w| w.text == "--") {
        i += 1;
    }
    let rest = args.get(i..).unwrap_or(&[]);
    let Some(first) = rest.first() else {
        return;
    };
    if !first.literal {
        return out.stop(Stop::Dynamic(first.text.clone()));
    }
    let after = rest[1..]
        .iter()
        .find(|w| !(w.literal && w.text.starts_with('-')));
    let names = std::iter::once(first).chain(after.filter(|_| !options.is_empty()));
    let mut fallback = false;
    for w in names {
        if !w.literal {
            return out.stop(Stop::Dynamic(w.text.clone()));
        }
        fallback |= !PNPM_COMMANDS.contains(&w.text.as_str());
    }
    if !fallback {
        return;
    }
    let shell_mode = options.iter().any(|o| {
        o.text
            .strip_prefix("--")
            .map(|n| n.split_once('=').map_or(n, |(n, _)| n))
            .is_some_and(|n| !n.is_empty() && "shell-mode".starts_with(n))
    });
    if shell_mode {
        out.line(&Word {
            text: rest
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            raw: join_raw(rest),
            literal: rest.iter().all(|w| w.literal),
            single: true,
        });
    } else {
        out.argv(rest);
    }
}

/// The dynamic loader run as a program (`ld-linux-x86-64.so.2`, `ld-musl-x86_64.so.1`,
/// `ld64.so.2`): it runs the program it is given (round 9: the real loader ran `touch`).
fn is_loader(base: &str) -> bool {
    (base.starts_with("ld-linux") || base.starts_with("ld-musl") || base.starts_with("ld64.so"))
        && base.contains(".so")
}

/// `LOADER [OPTIONS] PROGRAM [ARGS…]`. The options that only list or point the search path are
/// read; `--preload`/`--audit` (load a library into the program) and `--argv0` (a multi-call
/// program acts on that name) are not listed, so they stop the parse (asks).
fn loader(args: &[Word], out: &mut Findings) {
    let spec = Spec {
        long_arg: &[
            "library-path",
            "inhibit-rpath",
            "glibc-hwcaps-prepend",
            "glibc-hwcaps-mask",
        ],
        long_flag: &[
            "inhibit-cache",
            "list",
            "verify",
            "list-tunables",
            "list-diagnostics",
            "help",
            "version",
        ],
        ..Spec::NONE
    };
    prefix(
        args,
        &spec,
        0,
        &[
            "--list",
            "--verify",
            "--list-tunables",
            "--list-diagnostics",
            "--help",
            "--version",
        ],
        out,
    );
}

/// Round 12: whether `rpm ARGS` only queries. rpm expands macros wherever it is given one:
/// the real rpm 4.18 ran the command of `rpm --eval '%(…)'` and `-E '%{lua: os.execute(…)}'`,
/// and of `rpm -qa --pipe CMD`; its other modes install, erase or verify (running the
/// packages' scriptlets). An allow-list: the query mode (`-q…`, `rpmquery`) with the options
/// that select and print, or help and version. `--qf` asks (its format was not checked against
/// macro expansion here: no package is installed to format).
fn rpm_reads(base: &str, args: &[Word]) -> bool {
    const LONG: &[&str] = &[
        "--query",
        "--all",
        "--info",
        "--list",
        "--file",
        "--package",
        "--requires",
        "--provides",
        "--conflicts",
        "--obsoletes",
        "--recommends",
        "--changelog",
        "--whatprovides",
        "--whatrequires",
        "--last",
        "--configfiles",
        "--docfiles",
        "--state",
        "--scripts",
        "--dump",
        "--quiet",
        "--verbose",
    ];
    let mut query = base == "rpmquery";
    for w in args {
        if !w.literal {
            return false;
        }
        match w.text.as_str() {
            "--version" | "--help" | "--querytags" => return args.len() == 1,
            "--query" => query = true,
            t if t.starts_with("--") && !LONG.contains(&t) => return false,
            t if t.starts_with("--") => {}
            t if t.starts_with('-') => {
                if !t[1..].chars().all(|c| "qailfpRcdsv".contains(c)) {
                    return false;
                }
                query |= t.contains('q');
            }
            _ => {}
        }
    }
    query
}

/// Round 12: `corepack PM[@VERSION] ARGS…` runs that package manager with ARGS (the real
/// corepack 0.34 ran `corepack pnpm@10.34.9 exec touch pwned`); its own commands change what
/// runs later (`enable` puts shims beside node, on the PATH; `install -g`, `use`, `up`,
/// `prepare`, `hydrate`) and ask. Only its help and version pass.
fn corepack(args: &[Word], out: &mut Findings) {
    const MANAGERS: &[&str] = &["npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg"];
    let Some(first) = args.first() else {
        return;
    };
    if !first.literal {
        return out.stop(Stop::Dynamic(first.text.clone()));
    }
    let name = first.text.split('@').next().unwrap_or_default();
    if MANAGERS.contains(&name) {
        let mut argv = vec![Word::lit(name)];
        argv.extend(args[1..].iter().cloned());
        return out.argv(&argv);
    }
    if !matches!(
        first.text.as_str(),
        "--version" | "-v" | "--help" | "-h" | "help"
    ) {
        out.opaque(format!(
            "`corepack {}` changes the package managers the PATH finds, or runs one the line does not name",
            first.text
        ));
    }
}

/// Round 12: `cmake -E COMMAND` (only as cmake's first argument) is a tool box: `time CMD`
/// runs its command, `env [OPTIONS] [NAME=VALUE…] CMD` and `chdir DIR CMD` run it in another
/// environment or directory, and `copy`, `rename`, `rm`, `touch`, `create_symlink`, `tar`, …
/// write or remove the files they name, wherever they lie (the real cmake 3.25 wrote
/// `cmake -E copy f HOME/.bashrc` and ran `cmake -E env rm x` past a deny rule on `rm`). Only the
/// commands that print or compare pass; the others ask, their command still reported.
fn cmake_tool(args: &[Word], out: &mut Findings) {
    const READS: &[&str] = &[
        "echo",
        "echo_append",
        "capabilities",
        "compare_files",
        "environment",
        "cat",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "sleep",
        "true",
        "false",
        "help",
    ];
    let Some(first) = args.first() else {
        return;
    };
    if !first.literal {
        return out.stop(Stop::Dynamic(first.text.clone()));
    }
    if first.text != "-E" {
        return;
    }
    let Some(command) = args.get(1) else {
        return;
    };
    if !command.literal {
        return out.stop(Stop::Dynamic(command.text.clone()));
    }
    let rest = &args[2..];
    match command.text.as_str() {
        c if READS.contains(&c) => {}
        "time" => out.argv(rest),
        "env" => {
            // `--unset=NAME`, `--modify OP` (3.25+), `NAME=VALUE`, then `--` or the command.
            let mut i = 0;
            while let Some(w) = rest.get(i) {
                if w.text == "--" {
                    i += 1;
                    break;
                }
                if !(w.text.starts_with("--") || w.text.contains('=')) {
                    break;
                }
                i += if w.text == "--modify" { 2 } else { 1 };
            }
            out.argv(&rest[i.min(rest.len())..]);
            out.opaque("`cmake -E env` runs its command in an environment it changes".into());
        }
        "chdir" => {
            out.argv(rest.get(1..).unwrap_or_default());
            out.opaque("`cmake -E chdir` runs its command in another directory".into());
        }
        c => out.opaque(format!(
            "`cmake -E {c}` writes, removes or runs what it names, wherever it lies"
        )),
    }
}

/// GNU dc: `!` runs the rest of its line as a shell command, in an expression (`-e`), a file
/// (`-f`, an operand) or the input (no expression given). Only expressions on the line without
/// `!` are known to run nothing.
fn dc(args: &[Word], out: &mut Findings) {
    let spec = Spec {
        short_arg: "ef",
        short_flag: "Vh",
        long_arg: &["expression", "file"],
        long_flag: &["version", "help"],
        ..Spec::NONE
    };
    let (opts, operands) = match scan_permuted(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, &["-V", "-h", "--version", "--help"]) {
        return;
    }
    let exprs: Vec<&Word> = opts
        .iter()
        .filter(|o| matches!(o.name.as_str(), "-e" | "--expression"))
        .filter_map(|o| o.arg.as_ref())
        .collect();
    let files = operands.len()
        + opts
            .iter()
            .filter(|o| matches!(o.name.as_str(), "-f" | "--file"))
            .count();
    if exprs.is_empty() || files > 0 || exprs.iter().any(|e| !e.literal || e.text.contains('!')) {
        out.opaque(
            "dc runs the shell command of a `!` in its program, which is not checked".into(),
        );
    }
}

/// `WRAPPER [OPTIONS] [FIXED OPERANDS...] COMMAND [ARGS...]`.
fn prefix(args: &[Word], spec: &Spec, fixed: usize, no_inner: &[&str], out: &mut Findings) {
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

/// `exec -a NAME PROG ARGS`: PROG runs with argv[0] = NAME, and git and multi-call programs
/// (busybox) act on that name (`exec -a git-rm git log -r .` runs `git rm -r .`). The line is
/// outside the modelled subset; the command the name selects is reported too, so that a deny
/// rule on it applies.
fn exec_name(args: &[Word], out: &mut Findings) {
    let spec = Spec {
        short_arg: "a",
        short_flag: "cl",
        ..Spec::NONE
    };
    let Ok((opts, start)) = scan(args, &spec) else {
        return;
    };
    let Some(name) = arg_of(&opts, &["-a"]) else {
        return;
    };
    out.concerns.push(Concern::Outside(format!(
        "exec -a {} runs its program under another name, and programs such as git and busybox act on that name",
        name.text
    )));
    let rest = args.get(start + 1..).unwrap_or(&[]);
    let base = name.text.rsplit('/').next().unwrap_or(&name.text);
    let mut argv = Vec::new();
    if let Some(sub) = base.strip_prefix("git-") {
        argv.push(Word::lit("git"));
        argv.push(Word::lit(sub));
    } else {
        argv.push(name.clone());
    }
    argv.extend(rest.iter().cloned());
    out.argv(&argv);
}

fn env(args: &[Word], out: &mut Findings, depth: usize) {
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
                if let Some(dir) = arg_of(&opts, &["-C", "--chdir"]) {
                    out.concerns.push(Concern::Outside(format!(
                        "env -C {} runs its command in another directory, where its relative paths are not checked",
                        dir.text
                    )));
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

fn sudo(args: &[Word], out: &mut Findings) {
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

fn chrt(args: &[Word], out: &mut Findings) {
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

fn xargs(args: &[Word], out: &mut Findings) {
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
    if let Some(var) = arg_of(&opts, &["--process-slot-var"]) {
        // Each command gets `VAR=slot` in its environment, as `VAR=… cmd` would.
        let written = format!("{}=<slot>", var.text);
        match var.literal {
            true => out
                .concerns
                .extend(super::variables::environment_concern(&var.text, &written)),
            false => out.concerns.push(Concern::Environment(written)),
        }
    }
    // With -I R (or -i / --replace, R = `{}`), every word containing R is replaced by
    // input: its value is unknown. R is spelled `{}` in the word, as find's is: the rules'
    // could-match walk narrows a plain word as a glob (`*` keeps its `/`s), and `%` or `X`
    // spelled as written was narrowed to itself (`xargs -I % rm -rf %` passed `rm -rf /*`).
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
    match replace.filter(|r| !r.is_empty()) {
        Some(r) => {
            for w in &mut inner {
                if w.text.contains(&r) {
                    *w = Word {
                        text: w.text.replace(&r, "{}"),
                        raw: w.raw.replace(&r, "{}"),
                        ..w.made_dynamic()
                    };
                }
            }
        }
        None => out.appends_input = true,
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

fn find(args: &[Word], out: &mut Findings) {
    let found = found_placeholder(args);
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
            // find replaces `{}` by each file name: such words have no known value, but a
            // `{}` alone under `-exec`/`-ok` is the start path or a path below it.
            let dir = matches!(w.text.as_str(), "-execdir" | "-okdir");
            let inner: Vec<Word> = args[start..j]
                .iter()
                .map(|w| match &found {
                    Some(found) if w.literal && w.text == "{}" && !dir => found.clone(),
                    _ if w.text.contains("{}") => w.made_dynamic(),
                    _ => w.clone(),
                })
                .collect();
            out.argv(&inner);
            i = j + 1;
            continue;
        }
        i += 1;
    }
}

/// What find's `{}` stands for under `-exec`/`-ok` (round 9): find names the start path itself
/// and the paths below it, spelled from it (`.`, `./keep`), so with one literal start path P
/// (`.` when none is given) the word is `P/{found}` ([`FOUND`]), which the rules match as P or
/// any path below P. Not when find follows links below the start (`-L`, `-H`, `-follow`: a
/// path below may lead anywhere), takes its start paths from a file (`-files0-from`), has
/// several start paths (`+` mixes them in one command), or an absolute one not in its
/// lexical form (`//usr`: its spellings would differ from the rule's view).
fn found_placeholder(args: &[Word]) -> Option<Word> {
    let mut i = 0;
    // `find [-H] [-L] [-P] [-D OPTS] [-OLEVEL] [START…] [EXPRESSION]`.
    while let Some(w) = args.get(i) {
        match w.text.as_str() {
            "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let starts: Vec<&Word> = args[i.min(args.len())..]
        .iter()
        .take_while(|w| !w.text.starts_with(['-', '(', ')', '!', ',']))
        .collect();
    let follows = args.iter().any(|w| {
        matches!(w.text.as_str(), "-L" | "-H" | "-follow" | "-files0-from")
            || !w.literal && w.text.starts_with('-')
    });
    if follows || starts.len() > 1 || starts.iter().any(|w| !w.literal) {
        return None;
    }
    let start = starts.first().map_or(".", |w| w.text.as_str());
    let lexical = cordon_fs::links::lexical_text(start);
    if start.starts_with('/') && lexical != start {
        return None;
    }
    let text = match lexical.as_str() {
        "." => FOUND.to_string(),
        "/" => format!("/{FOUND}"),
        p => format!("{p}/{FOUND}"),
    };
    Some(Word {
        raw: text.clone(),
        text,
        literal: false,
        single: true,
    })
}

/// fd's short options that take a value: in a cluster, the rest of the word is that value
/// (`-ex` is the extension `x`, not `--exec`).
const FD_SHORT_VALUES: &str = "dtEeSjcoCB";

/// fd (`fdfind` on Debian) runs a command per file found with `-x`/`--exec` and for all of
/// them with `-X`/`--exec-batch`: the words up to a `;` (or the end), with `{}`, `{/}`, `{//}`,
/// `{.}`, `{/.}` replaced by names, and the name appended when the command has none of them.
/// Every word is looked at, a value included (clap refuses an option-like value, so a `-x`
/// there starts a command anyway, and seeing one too many is never less strict); a word only
/// known when the line runs may be `--exec=…`.
fn fd(args: &[Word], out: &mut Findings) {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.literal {
            if !w.single
                || !w
                    .raw
                    .trim_start_matches(['"', '\''])
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || "_/.,:@%=".contains(c))
            {
                out.stop(Stop::Dynamic(w.text.clone()));
                return;
            }
            i += 1;
            continue;
        }
        let t = w.text.as_str();
        if t == "--" {
            // Operands only from here (a pattern and paths).
            return;
        }
        // Where the command's first word is: attached to the option, or the next word.
        let start: Option<Option<String>> = if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            matches!(name, "exec" | "exec-batch").then_some(value)
        } else if let Some(cluster) = t.strip_prefix('-') {
            let mut found = None;
            for (at, c) in cluster.char_indices() {
                if FD_SHORT_VALUES.contains(c) {
                    break;
                }
                if c == 'x' || c == 'X' {
                    let rest = &cluster[at + 1..];
                    found = Some((!rest.is_empty()).then(|| rest.to_string()));
                    break;
                }
            }
            found
        } else {
            None
        };
        let Some(first) = start else {
            i += 1;
            continue;
        };
        let mut inner: Vec<Word> = first.iter().map(|f| Word::lit(f)).collect();
        let mut j = i + 1;
        while j < args.len() && !(args[j].literal && args[j].text == ";") {
            inner.push(args[j].clone());
            j += 1;
        }
        let placeholder = |w: &Word| {
            ["{}", "{/}", "{//}", "{.}", "{/.}"]
                .iter()
                .any(|p| w.text.contains(p))
        };
        let named = inner.iter().skip(1).any(placeholder);
        let mut inner: Vec<Word> = inner
            .into_iter()
            .map(|w| if placeholder(&w) { w.made_dynamic() } else { w })
            .collect();
        if !named && !inner.is_empty() {
            inner.push(Word::lit("{}").made_dynamic());
        }
        out.argv(&inner);
        i = j + 1;
    }
}

/// git's global options that take the next word as their value (when not given `=VALUE`).
const GIT_GLOBAL_VALUES: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
];

/// The commands git subcommands run that the line names, as `find -exec`'s: `rebase -x CMD`
/// (also `--exec=CMD`, `-xCMD`, clustered `-ix CMD`) and `submodule foreach CMD…` and
/// `filter-branch --*-filter CMD` and `send-email --*-cmd CMD` run CMD with `sh -c` (dash),
/// `bisect run CMD ARGS…` runs the argv. A `rm` deny rule denies `git rebase -x 'rm -rf .'`,
/// and a `git rebase` rule no longer allows running whatever `-x` names.
fn git(args: &[Word], out: &mut Findings) {
    // The subcommand: the first word after the global options.
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            // Programs' examination makes it ask; nothing more is known here.
            return;
        }
        if !w.text.starts_with('-') {
            break;
        }
        i += if GIT_GLOBAL_VALUES.contains(&w.text.as_str()) {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(i) else {
        return;
    };
    let rest = &args[i + 1..];
    let runs = matches!(
        sub.text.as_str(),
        "rebase" | "bisect" | "submodule" | "filter-branch" | "send-email" | "merge-index"
    );
    // A word only known when the line runs may be `-x CMD` (or be the command): not read.
    if let Some(w) = rest.iter().find(|w| runs && !w.literal) {
        out.stop(Stop::Dynamic(w.text.clone()));
        return;
    }
    let shell_line = |out: &mut Findings, w: &Word| out.inner.push(Inner::PosixLine(w.clone()));
    match sub.text.as_str() {
        "rebase" => {
            let mut j = 0;
            while let Some(w) = rest.get(j) {
                j += 1;
                if !w.literal {
                    continue;
                }
                let t = w.text.as_str();
                if t == "--" {
                    break;
                }
                // `--exec`, or an abbreviation of it parse-options accepts.
                if let Some(long) = t.strip_prefix("--") {
                    let (name, value) = match long.split_once('=') {
                        Some((n, v)) => (n, Some(v)),
                        None => (long, None),
                    };
                    if name.len() >= 2 && "exec".starts_with(name) {
                        match value {
                            Some(v) => shell_line(out, &Word::lit(v)),
                            None => {
                                if let Some(cmd) = rest.get(j) {
                                    shell_line(out, cmd);
                                    j += 1;
                                }
                            }
                        }
                    }
                    continue;
                }
                let Some(cluster) = t.strip_prefix('-') else {
                    continue;
                };
                for (at, c) in cluster.char_indices() {
                    // Options whose value is the rest of the word (or the next one).
                    if matches!(c, 's' | 'X' | 'C' | 'S') {
                        break;
                    }
                    if c == 'x' {
                        let attached = &cluster[at + 1..];
                        if !attached.is_empty() {
                            shell_line(out, &Word::lit(attached));
                        } else if let Some(cmd) = rest.get(j) {
                            shell_line(out, cmd);
                            j += 1;
                        }
                        break;
                    }
                }
            }
        }
        "bisect" if rest.first().is_some_and(|w| w.literal && w.text == "run") => {
            out.argv(&rest[1..]);
        }
        "submodule" => {
            // `git submodule [--quiet] foreach [--recursive] CMD…`: the words joined, evaluated
            // by sh in each submodule.
            let Some(at) = rest.iter().position(|w| w.literal && w.text == "foreach") else {
                return;
            };
            let cmd: Vec<Word> = rest[at + 1..]
                .iter()
                .skip_while(|w| w.literal && w.text.starts_with('-'))
                .cloned()
                .collect();
            if !cmd.is_empty() {
                let text = cmd
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                shell_line(
                    out,
                    &Word {
                        raw: join_raw(&cmd),
                        text,
                        literal: cmd.iter().all(|w| w.literal),
                        single: true,
                    },
                );
            }
        }
        // `git merge-index [-o] [-q] PROG (-a | [--] FILE…)` runs PROG for each unmerged file.
        "merge-index" => {
            if let Some(at) = rest
                .iter()
                .position(|w| !matches!(w.text.as_str(), "-o" | "-q"))
            {
                out.argv(&rest[at..=at]);
            }
        }
        "filter-branch" | "send-email" => {
            let email = sub.text == "send-email";
            let mut j = 0;
            while let Some(w) = rest.get(j) {
                j += 1;
                if !w.literal {
                    continue;
                }
                // send-email's Getopt::Long also takes a long option after one dash.
                let long = match w.text.strip_prefix("--") {
                    Some(l) => l,
                    None if email => match w.text.strip_prefix('-') {
                        Some(l) => l,
                        None => continue,
                    },
                    None => continue,
                };
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(Word::lit(v))),
                    None => (long, None),
                };
                let (runs, host) = if email {
                    send_email_runs(name)
                } else {
                    (name.ends_with("-filter") || name == "setup", false)
                };
                if !runs {
                    continue;
                }
                let value = match value {
                    Some(v) => v,
                    None => {
                        let Some(v) = rest.get(j) else { break };
                        j += 1;
                        v.clone()
                    }
                };
                // `--smtp-server` is a host unless it is a path to a program.
                if !host || value.text.contains('/') || !value.literal {
                    shell_line(out, &value);
                }
            }
        }
        _ => {}
    }
}

/// Whether `git send-email --NAME` is an option that runs a command (its value read by `sh
/// -c`), and whether that option may be `--smtp-server` (a host, or a program when its value is
/// a path). Perl's Getopt::Long takes any unambiguous prefix of a name (the real send-email ran
/// `--sendm=CMD` and `--heade=CMD`): any prefix of these options counts, except `--to` and
/// `--cc`, options of their own. An ambiguous prefix only makes send-email fail.
fn send_email_runs(name: &str) -> (bool, bool) {
    const RUNS: &[&str] = &[
        "sendmail-cmd",
        "smtp-server",
        "to-cmd",
        "cc-cmd",
        "header-cmd",
    ];
    if name.is_empty() || matches!(name, "to" | "cc") {
        return (false, false);
    }
    let hits: Vec<&str> = RUNS
        .iter()
        .copied()
        .filter(|r| r.starts_with(name))
        .collect();
    (!hits.is_empty(), hits == ["smtp-server"])
}

fn watch(args: &[Word], out: &mut Findings) {
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

fn flock(args: &[Word], out: &mut Findings) {
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
    let command = arg_of(&opts, &["-c", "--command"]);
    // flock FILE -c STRING | flock FILE COMMAND ARGS | flock FD
    let next = args.get(start + 1);
    // With a command, the operand is a file flock opens with O_CREAT (round 8: the real flock
    // made `.envrc`): a write. `flock FD` alone locks a descriptor.
    if let Some(file) = args
        .get(start)
        .filter(|_| command.is_some() || next.is_some())
    {
        out.concerns.push(Concern::WriteRedirect(file.text.clone()));
    }
    if let Some(cmd) = command {
        return out.line(cmd);
    }
    let Some(next) = next else {
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

/// `history`'s options as bash's `internal_getopt(list, "acd:npsrw")` reads them: `-a` and `-w`
/// write the history list (which `-s TEXT` fills with any text) to the operand, else to
/// `$HISTFILE` or `~/.history`: a write, judged as one (`history -s 'touch x'; history -w
/// .envrc` makes an `.envrc` direnv runs). An option bash may add later, or a word only known
/// when the line runs, is not known.
fn history(args: &[Word], whole: &str, out: &mut Findings) {
    let mut writes = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            return out.opaque(whole.to_string());
        }
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += 1;
        for (at, c) in t.char_indices().skip(1) {
            match c {
                'a' | 'w' => writes = true,
                'c' | 'n' | 'p' | 's' | 'r' => {}
                'd' => {
                    if at + 1 == t.len() {
                        i += 1;
                    }
                    break;
                }
                _ => return out.opaque(whole.to_string()),
            }
        }
    }
    if writes {
        let file = args.get(i).map_or("$HISTFILE", |w| w.text.as_str());
        out.concerns.push(Concern::WriteRedirect(file.to_string()));
    }
}

/// Whether `compgen`/`complete`/`compopt` only list or name completions: every option is one
/// known to do so. `-W WORDLIST` expands each word of its list as a command's words are, `$(…)`
/// included (`compgen -W '$(rm -rf src)' x` runs `rm`), `-C` and `-F` run a command or a
/// function, and an option this bash may add later is not known.
fn completion_only_lists(args: &[Word]) -> bool {
    // The action letters, `-p`/`-r` (print, remove), `-D`/`-E`/`-I` (which completion).
    const FLAGS: &str = "abcdefgjksuvprDEI";
    // Options whose argument is a name, a pattern or text bash does not expand.
    const TAKE_ARG: &str = "AGoPSX";
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            return false;
        }
        let t = w.text.as_str();
        if t == "--" || !t.starts_with('-') || t == "-" {
            // The operands: the word to complete, or the names a spec is for.
            return true;
        }
        for (at, c) in t.char_indices().skip(1) {
            if FLAGS.contains(c) {
                continue;
            }
            if !TAKE_ARG.contains(c) {
                return false;
            }
            if at + c.len_utf8() == t.len() {
                // Its argument is the next word.
                i += 1;
            }
            break;
        }
    }
    true
}

fn script(args: &[Word], out: &mut Findings) {
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
            "append", "return", "flush", "force", "quiet", "help", "version",
        ],
        long_opt: &["timing"],
        ..Spec::default()
    };
    let (opts, operands) = match scan_permuted(args, &spec) {
        Ok(r) => r,
        Err(s) => return out.stop(s),
    };
    if has(&opts, &["-h", "-V", "--help", "--version"]) {
        return;
    }
    // The typescript (the operand) and the logs hold what the command prints, framed by
    // script's own lines: a shell reading one runs those lines.
    const LOGS: &[&str] = &[
        "-O",
        "--log-out",
        "-I",
        "--log-in",
        "-B",
        "--log-io",
        "-T",
        "--log-timing",
        "-t",
        "--timing",
    ];
    let logs = opts
        .iter()
        .filter(|o| LOGS.contains(&o.name.as_str()))
        .filter_map(|o| o.arg.as_ref());
    for file in logs.chain(operands.first()) {
        if !(file.literal && super::writes_no_file(&file.text)) {
            out.concerns.push(Concern::WriteRedirect(file.text.clone()));
        }
    }
    match arg_of(&opts, &["-c", "--command"]) {
        Some(cmd) => out.line(cmd),
        None => out.opaque("script starts a shell that reads commands from standard input".into()),
    }
}

/// tmux and screen run what they are given in a terminal they keep (`tmux new -d CMD`,
/// `run-shell`, `screen -dm CMD`; the real tmux 3.3 ran one), and `tmux send-keys`/`screen -X
/// stuff` type into a session that may be the operator's own, outside any sandbox. Only listing
/// passes (`tmux ls`, `list-*`, `has-session`, `-V`; `screen -ls`, `-v`). The words they are
/// given are also read as commands, for the deny rules.
fn multiplexer(base: &str, args: &[Word], out: &mut Findings) {
    const TMUX_LISTS: &[&str] = &[
        "ls",
        "list-sessions",
        "lsw",
        "list-windows",
        "lsp",
        "list-panes",
        "lsc",
        "list-clients",
        "lscm",
        "list-commands",
        "has",
        "has-session",
    ];
    let all_known = args.iter().all(|w| w.literal);
    let lists = all_known
        && match base {
            "tmux" => {
                args.len() == 1 && args[0].text == "-V"
                    || args
                        .iter()
                        .position(|w| !w.text.starts_with('-'))
                        .is_some_and(|i| i == 0 && TMUX_LISTS.contains(&args[0].text.as_str()))
            }
            _ => {
                args.len() == 1
                    && matches!(args[0].text.as_str(), "-ls" | "-list" | "-v" | "--version")
            }
        };
    if lists {
        return;
    }
    out.opaque(format!(
        "`{base}` runs commands in a terminal it keeps, or types into a session that may be the operator's own"
    ));
    for w in args
        .iter()
        .filter(|w| w.literal && !w.text.starts_with('-'))
    {
        out.inner.push(Inner::PosixLine(w.clone()));
    }
}

/// A program that runs a command it is given in a way the analysis does not follow: the
/// command is code in the program's own language, a string it splits or fills in itself, or is
/// run by a server that may be the operator's, outside any sandbox. It asks (a deny rule
/// could not see the command), unless its first word only reports.
pub(super) struct Runner {
    pub(super) names: &'static [&'static str],
    /// First words after which it runs nothing (`--version`, `ps`).
    pub(super) reports: &'static [&'static str],
    pub(super) why: &'static str,
}

const VERSION: &[&str] = &["--version", "-V", "--help", "-h"];

/// Round 8's runners (each ran the command it was given: capsh, gdb, perf, hyperfine,
/// start-stop-daemon, expect and parallel checked with the real program).
pub(super) const RUNNERS: &[Runner] = &[
    Runner {
        names: &["expect", "unbuffer-expect"],
        reports: &["-v"],
        why: "runs a Tcl script, whose `exec` and `spawn` run any command",
    },
    Runner {
        names: &["perf"],
        reports: &["--version", "version", "list", "help", "--help", "-h"],
        why: "runs the command it measures, and `perf script` runs scripts",
    },
    Runner {
        names: &["hyperfine"],
        reports: VERSION,
        why: "runs each command it is given through a shell, with parameters it fills in",
    },
    Runner {
        names: &["parallel", "sem", "parset", "env_parallel"],
        reports: &["--version", "--help", "--citation"],
        why: "runs commands it builds from its arguments and input",
    },
    Runner {
        names: &["start-stop-daemon"],
        reports: &["--version", "--help", "-V", "-H", "--status", "-T"],
        why: "starts a daemon that outlives the call",
    },
    Runner {
        names: &[
            "xterm",
            "uxterm",
            "urxvt",
            "rxvt",
            "x-terminal-emulator",
            "gnome-terminal",
            "konsole",
            "xfce4-terminal",
            "kitty",
            "alacritty",
            "wezterm",
            "foot",
            // Round 12: `st -e`, `terminator -x`, `tilix -e` ran past a `rm` deny rule.
            "st",
            "terminator",
            "tilix",
            "sakura",
            "lxterminal",
            "mate-terminal",
            "qterminal",
            "terminology",
            "guake",
            "tilda",
            "kgx",
            "gnome-console",
            "ptyxis",
            "cool-retro-term",
            "ghostty",
            "eterm",
            "aterm",
            "termite",
            "roxterm",
            "deepin-terminal",
            "contour",
            "rio",
        ],
        reports: VERSION,
        why: "is a terminal that runs a shell or the command it is given",
    },
    // Round 12: window managers' and compositors' messengers run a command (`i3-msg exec`,
    // `swaymsg exec`, `hyprctl dispatch exec`, `niri msg action spawn`, awesome's Lua), and
    // input injectors type into the operator's windows (`xdotool type`, `wtype`, zellij's
    // `action write-chars`): the manager or the focused program runs it, outside any sandbox
    // (their sockets are reachable under `network = "allow"`, as round 8's daemons').
    Runner {
        names: &[
            "i3-msg",
            "swaymsg",
            "hyprctl",
            "bspc",
            "herbstclient",
            "awesome-client",
            "qtile",
            "niri",
            "riverctl",
            "xdotool",
            "ydotool",
            "wtype",
            "dotool",
            "zellij",
        ],
        reports: VERSION,
        why: "asks the operator's window manager or terminal session to run a command or to type keys, outside any sandbox",
    },
    Runner {
        names: &["entr"],
        reports: &[],
        why: "runs its command each time a file changes",
    },
    Runner {
        names: &["tsp", "nq"],
        reports: &["-l", "-h"],
        why: "queues its command with a server that may be the operator's, outside any sandbox",
    },
    Runner {
        names: &["mpirun", "mpiexec", "srun", "sbatch", "salloc", "qsub"],
        reports: VERSION,
        why: "launches its command on other machines or through a scheduler",
    },
    Runner {
        names: &["docker", "podman", "nerdctl", "kubectl", "ctr", "lxc"],
        reports: &[
            "--version",
            "version",
            "--help",
            "help",
            "ps",
            "images",
            "info",
            "top",
            "logs",
            "inspect",
            "get",
            "describe",
        ],
        why: "asks a container engine to run or change containers, outside any sandbox",
    },
    Runner {
        names: &["watchexec", "nodemon", "reflex"],
        reports: VERSION,
        why: "runs its command each time a file changes, a string it splits itself",
    },
    Runner {
        names: &["dtach", "abduco"],
        reports: VERSION,
        why: "starts its command detached, in a session that outlives the call",
    },
    Runner {
        names: &["socat"],
        reports: &["-V", "-h", "--version", "--help"],
        why: "runs the programs its `EXEC:`/`SYSTEM:` addresses name",
    },
    Runner {
        names: &["nix", "nix-shell", "nix-build", "nix-env"],
        reports: &["--version", "--help"],
        why: "builds and runs what its expressions say, through the nix daemon outside any sandbox",
    },
    Runner {
        names: &["vipe", "schedtool"],
        reports: VERSION,
        why: "runs a program it is given (its editor, `-e CMD`)",
    },
    // Round 9: more of the same kind, by their manuals (none is installed here).
    Runner {
        names: &[
            "flatpak",
            "apptainer",
            "singularity",
            "distrobox",
            "distrobox-enter",
            "toolbox",
            "lxc-attach",
            "lxc-execute",
        ],
        reports: &[
            "--version",
            "--help",
            "-h",
            "version",
            "help",
            "list",
            "info",
            "search",
            "remotes",
            "ps",
            "inspect",
        ],
        why: "runs its command in a container or an application sandbox of its own, with its own view of the files",
    },
    Runner {
        names: &["pdsh", "pdcp", "clush"],
        reports: VERSION,
        why: "runs its command on other hosts",
    },
    Runner {
        names: &[
            "flatpak-spawn",
            "machinectl",
            "systemd-nspawn",
            "proot",
            "bwrap",
        ],
        reports: VERSION,
        why: "runs its command in another namespace or on the host, with its own view of the files",
    },
];

/// A manager that runs its argv after a verb: `uv run CMD…`, `direnv exec DIR CMD…`, `ip netns
/// exec NS CMD…` (round 8: each let a `rm` deny rule miss `rm x`). Other verbs are its own
/// business; an option not listed stops the parse (asks).
pub(super) struct VerbRunner {
    pub(super) names: &'static [&'static str],
    pub(super) verbs: &'static [&'static [&'static str]],
    pub(super) spec: Spec,
    /// Operands between the verb and the command (`direnv exec DIR`).
    pub(super) fixed: usize,
    /// The command follows `--` (`mise exec TOOL@V -- CMD`), or is `-c STRING`.
    pub(super) after_dashes: bool,
}

pub(super) const VERB_RUNNERS: &[VerbRunner] = &[
    VerbRunner {
        names: &["uv"],
        verbs: &[&["run"]],
        spec: Spec {
            short_arg: "pPC",
            short_flag: "qvm",
            long_arg: &[
                "extra",
                "with",
                "with-editable",
                "with-requirements",
                "package",
                "python",
                "index",
                "index-url",
                "default-index",
                "extra-index-url",
                "find-links",
                "env-file",
                "directory",
                "project",
                "config-file",
                "cache-dir",
                "group",
                "only-group",
                "no-group",
                "color",
                "keyring-provider",
                "resolution",
                "prerelease",
                "index-strategy",
                "link-mode",
                "refresh-package",
                "reinstall-package",
                "upgrade-package",
                "no-binary-package",
                "no-build-package",
                "exclude-newer",
                "python-platform",
                "allow-insecure-host",
                "config-setting",
            ],
            long_flag: &[
                "all-extras",
                "no-dev",
                "dev",
                "only-dev",
                "all-groups",
                "no-default-groups",
                "module",
                "script",
                "gui-script",
                "no-sync",
                "frozen",
                "locked",
                "isolated",
                "active",
                "no-project",
                "no-editable",
                "no-env-file",
                "exact",
                "inexact",
                "offline",
                "no-cache",
                "quiet",
                "verbose",
                "native-tls",
                "upgrade",
                "refresh",
                "reinstall",
                "no-build",
                "no-binary",
                "no-build-isolation",
                "compile-bytecode",
                "no-python-downloads",
                "managed-python",
                "no-managed-python",
                "no-progress",
                "no-config",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        after_dashes: false,
    },
    VerbRunner {
        names: &["poetry"],
        verbs: &[&["run"]],
        spec: Spec {
            short_arg: "CP",
            short_flag: "qvn",
            long_arg: &["directory", "project"],
            long_flag: &[
                "quiet",
                "verbose",
                "no-interaction",
                "no-plugins",
                "no-cache",
                "ansi",
                "no-ansi",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        after_dashes: false,
    },
    VerbRunner {
        names: &["pipenv", "pyenv", "rbenv", "nodenv", "asdf", "hatch"],
        verbs: &[&["run"], &["exec"]],
        spec: Spec::NONE,
        fixed: 0,
        after_dashes: false,
    },
    VerbRunner {
        names: &["pdm"],
        verbs: &[&["run"]],
        spec: Spec {
            short_arg: "p",
            short_flag: "sgvq",
            long_arg: &["project", "venv"],
            long_flag: &["site-packages", "global", "verbose", "quiet", "recreate"],
            ..Spec::NONE
        },
        fixed: 0,
        after_dashes: false,
    },
    VerbRunner {
        names: &["conda", "mamba", "micromamba"],
        verbs: &[&["run"]],
        spec: Spec {
            short_arg: "np",
            short_flag: "v",
            long_arg: &["name", "prefix", "cwd"],
            long_flag: &[
                "no-capture-output",
                "live-stream",
                "dev",
                "debug-wrapper-scripts",
                "verbose",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        after_dashes: false,
    },
    VerbRunner {
        names: &["direnv"],
        verbs: &[&["exec"]],
        spec: Spec::NONE,
        fixed: 1,
        after_dashes: false,
    },
    VerbRunner {
        names: &["mise", "rtx"],
        verbs: &[&["exec"], &["x"]],
        spec: Spec::NONE,
        fixed: 0,
        after_dashes: true,
    },
    // Round 9: the same verbs of pixi and rye, and guix's `shell`/`environment` (its command
    // follows `--`; without one it starts a shell).
    VerbRunner {
        names: &["pixi", "rye"],
        verbs: &[&["run"]],
        spec: Spec::NONE,
        fixed: 0,
        after_dashes: false,
    },
    VerbRunner {
        names: &["guix"],
        verbs: &[&["shell"], &["environment"]],
        spec: Spec::NONE,
        fixed: 0,
        after_dashes: true,
    },
    VerbRunner {
        names: &["ip"],
        verbs: &[&["netns", "exec"]],
        spec: Spec::NONE,
        fixed: 1,
        after_dashes: false,
    },
];

pub(super) fn verb_runner(base: &str) -> Option<&'static VerbRunner> {
    VERB_RUNNERS.iter().find(|r| r.names.contains(&base))
}

/// `PROGRAM VERB [OPTIONS] [FIXED…] CMD…`: the command, where the verb is one that runs it.
fn run_verb(r: &VerbRunner, args: &[Word], out: &mut Findings) {
    let Some(verb) = r.verbs.iter().find(|v| {
        v.len() <= args.len() && v.iter().zip(args).all(|(v, w)| w.literal && w.text == *v)
    }) else {
        return;
    };
    let rest = &args[verb.len()..];
    if r.after_dashes {
        // Without `--` or `-c` it runs the user's shell.
        if let Some(at) = rest.iter().position(|w| w.literal && w.text == "--") {
            return out.argv(&rest[at + 1..]);
        }
        if let Some(at) = rest
            .iter()
            .position(|w| w.literal && (w.text == "-c" || w.text == "--command"))
        {
            if let Some(s) = rest.get(at + 1) {
                out.line(s);
            }
            return;
        }
        if rest.iter().any(|w| !w.literal) {
            return out.stop(Stop::Dynamic(join_raw(rest)));
        }
        // Round 9: `echo CMD | mise exec` ran the user's shell on the input.
        return out.opaque(format!(
            "`{} {}` without `--` starts the user's shell, which reads its commands from the input",
            r.names[0],
            verb.join(" ")
        ));
    }
    // `hatch run ENV:SCRIPT`: a script the project's configuration names, not a program.
    if r.names.contains(&"hatch") && rest.first().is_some_and(|w| w.text.contains(':')) {
        return out
            .opaque("`hatch run ENV:…` runs a script the project's configuration names".into());
    }
    prefix(rest, &r.spec, r.fixed, &[], out);
}

pub(super) fn runner(base: &str) -> Option<&'static Runner> {
    RUNNERS.iter().find(|r| r.names.contains(&base))
}

/// Whether `runner ARGS` only reports: its first word is a literal in [`Runner::reports`].
fn only_reports(r: &Runner, args: &[Word]) -> bool {
    args.first()
        .is_some_and(|w| w.literal && r.reports.contains(&w.text.as_str()))
}

/// A program that keeps settings, or talks to a daemon, outside the roots: what it changes
/// takes effect for the operator's later programs, outside any sandbox (and under `network =
/// "allow"` a sandboxed command reaches the host's unix sockets, the service manager's
/// included). Its verbs are its literal operands, options skipped.
pub(super) struct Settings {
    pub(super) names: &'static [&'static str],
    /// When set, only these verb sequences pass (an allow-list: an option's argument taken
    /// for a verb, or a verb not listed, asks); the program alone passes too.
    pub(super) reads: Option<&'static [&'static [&'static str]]>,
    /// Whether the program given no verb only prints its help or lists. When not, a call
    /// without a verb passes only as `--help` or `--version`: `cpan` alone is a shell that
    /// installs what its input names, `cpan -u` upgrades every module, MacPorts' `port`
    /// alone reads its actions from the input.
    pub(super) alone: bool,
    /// Verb sequences that ask wherever they stand among the operands.
    pub(super) changes: &'static [&'static [&'static str]],
    pub(super) why: &'static str,
}

/// Round 8's settings and daemons.
pub(super) const SETTINGS: &[Settings] = &[
    Settings {
        names: &["systemctl"],
        reads: Some(&[
            &["status"],
            &["show"],
            &["cat"],
            &["help"],
            &["list-units"],
            &["list-unit-files"],
            &["list-sockets"],
            &["list-timers"],
            &["list-jobs"],
            &["list-dependencies"],
            &["list-automounts"],
            &["list-paths"],
            &["is-active"],
            &["is-enabled"],
            &["is-failed"],
            &["is-system-running"],
            &["show-environment"],
            &["get-default"],
        ]),
        alone: true,
        changes: &[],
        why: "asks the service manager, outside any sandbox, to change, start or persist units or its environment",
    },
    Settings {
        names: &["loginctl"],
        reads: Some(&[
            &["list-sessions"],
            &["session-status"],
            &["show-session"],
            &["list-users"],
            &["user-status"],
            &["show-user"],
            &["list-seats"],
            &["seat-status"],
            &["show-seat"],
            &["help"],
        ]),
        alone: true,
        changes: &[],
        why: "asks the login manager, outside any sandbox, to change sessions or users (`enable-linger` keeps the user's services running)",
    },
    Settings {
        names: &["busctl"],
        reads: Some(&[&["list"], &["status"], &["tree"], &["introspect"], &["help"]]),
        alone: true,
        changes: &[],
        why: "calls a service on the bus, which acts outside any sandbox",
    },
    Settings {
        names: &[
            "dbus-send",
            "gdbus",
            "qdbus",
            "dbus-update-activation-environment",
        ],
        reads: Some(&[]),
        alone: true,
        changes: &[],
        why: "calls a service on the bus, which acts outside any sandbox",
    },
    Settings {
        names: &["rustup"],
        reads: Some(&[
            &["show"],
            &["which"],
            &["help"],
            &["toolchain", "list"],
            &["target", "list"],
            &["component", "list"],
            &["completions"],
        ]),
        alone: true,
        changes: &[],
        why: "changes the toolchains and settings the operator's cargo and rustc use, outside any sandbox",
    },
    Settings {
        names: &["pip", "pip3"],
        reads: None,
        alone: true,
        changes: &[&["config", "set"], &["config", "unset"], &["config", "edit"]],
        why: "changes pip's configuration, which the operator's later installs obey",
    },
    // Round 11: package managers that install into the operator's directories (their gems,
    // tools and binaries run in the operator's later commands, outside any sandbox). gem
    // loads every installed gem's `rubygems_plugin.rb` at each later `gem` command: the real
    // RubyGems 3.3 ran the plugin of a gem that `gem install --local` installed at the next
    // `gem list`.
    Settings {
        names: &["gem", "gem3.1"],
        reads: Some(&[
            &["list"],
            &["search"],
            &["query"],
            &["info"],
            &["contents"],
            &["dependency"],
            &["environment"],
            &["env"],
            &["help"],
            &["specification"],
            &["which"],
            &["outdated"],
            &["stale"],
            &["build"],
        ]),
        alone: true,
        changes: &[],
        why: "installs or changes gems in the operator's gem home (their plugins run at every later `gem` command, their executables land on the PATH)",
    },
    Settings {
        names: &["pipx"],
        reads: Some(&[&["list"], &["environment"], &["help"], &["completions"]]),
        alone: true,
        changes: &[],
        why: "installs or changes tools in the operator's `~/.local` (their executables land on the PATH; `ensurepath` edits the shell's start-up files), or runs a package from the index",
    },
    Settings {
        names: &["uv"],
        reads: None,
        alone: true,
        changes: &[
            &["tool", "install"],
            &["tool", "upgrade"],
            &["tool", "update-shell"],
            &["pip", "install"],
            &["pip", "uninstall"],
            &["pip", "sync"],
            &["python", "install"],
            &["self", "update"],
        ],
        why: "installs into the operator's tools or Python (`uv tool install` puts executables on the PATH; `uv pip install` changes the environment it finds, which the line does not show)",
    },
    Settings {
        names: &["composer"],
        reads: None,
        alone: true,
        changes: &[&["global"], &["self-update"], &["selfupdate"]],
        why: "changes the operator's global Composer packages (their plugins and scripts run at every later `composer` command) or Composer itself",
    },
    // yarn 1's `global` installs into `~/.config/yarn/global` and links the executables into
    // its bin directory, on the PATH, as `npm install -g` does (which asks since round 5).
    Settings {
        names: &["yarn"],
        reads: None,
        alone: true,
        changes: &[&["global", "add"], &["global", "remove"], &["global", "upgrade"]],
        why: "changes the operator's global yarn packages, whose executables land on the PATH",
    },
    Settings {
        names: &["luarocks"],
        reads: Some(&[
            &["list"],
            &["search"],
            &["show"],
            &["doc"],
            &["path"],
            &["which"],
            &["help"],
            &["lint"],
        ]),
        alone: true,
        changes: &[],
        why: "installs or removes rocks in the operator's or the system's tree (their modules run in later lua programs, their scripts land on the PATH)",
    },
    // Round 11: the long tail of installers (by their manuals; none is installed here but
    // update-alternatives and R): system package managers install as root and run the
    // packages' scripts, as apt's verbs (round 10); the language installers write the
    // operator's directories on the PATH or the libraries later programs load.
    Settings {
        names: &["dnf", "yum", "microdnf", "tdnf"],
        reads: Some(&[
            &["list"],
            &["info"],
            &["search"],
            &["provides"],
            &["whatprovides"],
            &["repolist"],
            &["repoquery"],
            &["check-update"],
            &["deplist"],
            &["help"],
        ]),
        alone: true,
        changes: &[],
        why: "installs or changes the system's packages (as root, running their scripts), outside any sandbox",
    },
    Settings {
        names: &["apk", "snap", "brew"],
        reads: Some(&[
            &["info"],
            &["search"],
            &["se"],
            &["list"],
            &["ls"],
            &["policy"],
            &["version"],
            &["find"],
            &["help"],
            &["deps"],
            &["uses"],
            &["outdated"],
            &["desc"],
            &["repos"],
            &["lr"],
            &["what-provides"],
        ]),
        alone: true,
        changes: &[],
        why: "installs or changes the system's or the operator's packages, outside any sandbox",
    },
    // MacPorts' `port` with no action reads its actions from the input (port(1),
    // "interactive mode"); zypper has a `shell` of its own: neither passes alone.
    Settings {
        names: &["port", "zypper"],
        reads: Some(&[
            &["info"],
            &["search"],
            &["se"],
            &["list"],
            &["ls"],
            &["version"],
            &["help"],
            &["deps"],
            &["outdated"],
            &["desc"],
            &["repos"],
            &["lr"],
            &["what-provides"],
        ]),
        alone: false,
        changes: &[],
        why: "installs or changes the system's or the operator's packages, outside any sandbox",
    },
    // Round 12: desktop settings. `gsettings set` writes through dconf's service (or the
    // keyfile in the operator's configuration: the real gsettings 2.74 wrote
    // `glib-2.0/settings/keyfile` with `GSETTINGS_BACKEND=keyfile`); a key such as
    // `default-applications.terminal exec` or a custom keybinding's `command` is run by the
    // desktop, outside any sandbox. `dconf write`/`load` the same; KDE's and Xfce's
    // writers take only options.
    Settings {
        names: &["gsettings"],
        reads: Some(&[
            &["get"],
            &["list-schemas"],
            &["list-relocatable-schemas"],
            &["list-keys"],
            &["list-children"],
            &["list-recursively"],
            &["range"],
            &["describe"],
            &["writable"],
            &["help"],
            &["monitor"],
        ]),
        alone: true,
        changes: &[],
        why: "changes the desktop's settings, which the desktop obeys (a terminal or keybinding command it runs) outside any sandbox",
    },
    Settings {
        names: &["dconf"],
        reads: Some(&[&["read"], &["list"], &["dump"], &["watch"], &["help"], &["blame"]]),
        alone: true,
        changes: &[],
        why: "changes the desktop's settings, which the desktop obeys (a terminal or keybinding command it runs) outside any sandbox",
    },
    Settings {
        names: &["kwriteconfig5", "kwriteconfig6", "gconftool-2", "gconftool", "xfconf-query"],
        reads: Some(&[]),
        alone: false,
        changes: &[],
        why: "changes the desktop's settings, which the desktop obeys (a terminal or keybinding command it runs) outside any sandbox",
    },
    // Round 12: mise keeps the operator's global configuration (`use -g`, `set -g`,
    // `settings set`, `config set` write `~/.config/mise/config.toml`, whose `[env]` and
    // hooks run in every shell mise is activated in; the real mise 2026.9.15 wrote it for
    // `set -g` and `settings set`), its trust list (`trust`), its installs on the PATH
    // (`install`, `use`, `link`, `reshim`, `self-update`), and `mise NAME` runs a project task of
    // that name: only these verbs pass, `exec`/`x`/`run` judged as the runner they are.
    Settings {
        names: &["mise", "rtx"],
        reads: Some(&[
            &["exec"],
            &["x"],
            &["run"],
            &["r"],
            &["ls"],
            &["list"],
            &["ls-remote"],
            &["latest"],
            &["outdated"],
            &["where"],
            &["which"],
            &["env"],
            &["bin-paths"],
            &["doctor"],
            &["version"],
            &["help"],
            &["registry"],
            &["search"],
            &["completion"],
            &["activate"],
            &["deactivate"],
            &["tool"],
            &["config", "ls"],
            &["config", "get"],
            &["settings", "get"],
            &["settings", "ls"],
            &["plugins", "ls"],
            &["tasks", "ls"],
            &["tasks", "info"],
        ]),
        alone: true,
        changes: &[],
        why: "changes mise's global configuration, trust list or installed tools (on the PATH; the configuration's `[env]` and hooks run in every shell mise is activated in), or runs a task the configuration names",
    },
    Settings {
        names: &["conda", "mamba", "micromamba"],
        reads: None,
        alone: true,
        changes: &[
            &["install"],
            &["remove"],
            &["uninstall"],
            &["update"],
            &["upgrade"],
            &["create"],
            &["init"],
            &["config"],
            &["env", "create"],
            &["env", "remove"],
            &["env", "update"],
        ],
        why: "changes conda's environments or settings outside the roots (`init` edits the shell's start-up files)",
    },
    Settings {
        names: &["cabal", "stack", "opam", "raco", "cargo-binstall"],
        reads: None,
        alone: true,
        changes: &[
            &["install"],
            &["v2-install"],
            &["new-install"],
            &["upgrade"],
            &["reinstall"],
            &["init"],
            &["pin"],
            &["switch"],
            &["pkg", "install"],
        ],
        why: "installs programs or libraries into the operator's directories (on the PATH, or loaded by later builds)",
    },
    Settings {
        names: &["cpan", "cpanm", "easy_install", "update-alternatives"],
        reads: Some(&[]),
        // `cpan` alone reads `install X` from its input, `cpan -u`, `cpanm --self-upgrade`
        // and `update-alternatives --all` change what they keep with options only.
        alone: false,
        changes: &[],
        why: "installs into the system's or the operator's libraries, or changes which program a system-wide name runs",
    },
    Settings {
        names: &["dotnet", "mix", "asdf", "volta"],
        reads: None,
        alone: true,
        changes: &[
            &["tool", "install"],
            &["tool", "update"],
            &["workload", "install"],
            &["archive.install"],
            &["escript.install"],
            &["local.hex"],
            &["local.rebar"],
            &["plugin", "add"],
            &["global"],
            &["install"],
            &["setup"],
        ],
        why: "installs tools or runtimes into the operator's directories, on the PATH",
    },
    // R's `CMD INSTALL` writes the package into a library later R sessions load (its
    // `.onLoad` runs there) and runs its configure script.
    Settings {
        names: &["R"],
        reads: None,
        alone: true,
        changes: &[&["CMD", "INSTALL"], &["CMD", "REMOVE"]],
        why: "installs or removes an R package in a library that later R sessions load",
    },
    Settings {
        names: &["gh"],
        reads: None,
        alone: true,
        changes: &[
            &["alias", "set"],
            &["alias", "import"],
            &["config", "set"],
            &["auth", "setup-git"],
            &["auth", "login"],
            &["extension", "install"],
            &["extension", "upgrade"],
            &["ext", "install"],
            &["extensions", "install"],
        ],
        why: "changes gh's settings (an alias may be a shell command, `setup-git` sets the operator's git credential helper), which the operator's later commands obey",
    },
];

pub(super) fn settings(base: &str) -> Option<&'static Settings> {
    SETTINGS.iter().find(|t| t.names.contains(&base))
}

/// Whether `PROGRAM ARGS` may change what [`Settings`] keeps: a verb only known when the line
/// runs, a verb sequence in `changes`, or (with `reads`) one not listed.
fn changes(t: &Settings, args: &[Word]) -> bool {
    if args.iter().any(|w| !w.literal) {
        return true;
    }
    let verbs: Vec<&str> = args
        .iter()
        .map(|w| w.text.as_str())
        .filter(|w| !w.starts_with('-'))
        .collect();
    if verbs.is_empty() && !t.alone {
        return !matches!(args, [w] if w.text == "--help" || w.text == "--version");
    }
    if t.changes
        .iter()
        .any(|c| verbs.windows(c.len()).any(|v| v == *c))
    {
        return true;
    }
    t.reads
        .is_some_and(|reads| !verbs.is_empty() && !reads.iter().any(|r| verbs.starts_with(r)))
}

/// Round 12: whether `pacman ARGS` (or an AUR helper's, which take pacman's operations) only
/// reads. pacman's operation is an option (`-S`, `-U`, `-R`, `-D`, `-Fy` all change the
/// system), so no verb table fits; this is an allow-list, from pacman 6.0's `pacman -Q
/// --help` (and `-S`, `-F`): one operation, `-Q` with any of its modifiers (none writes), `-S`
/// with `-s`/`-i`/`-l`/`-g` (and `-q`) and no `-y`/`-u`/`-w`/`-c`, `-F` without `-y`, or help
/// and version. `-b`/`-r` take the rest of their word or the next one (a database or root to
/// read). Anything else asks: `yay` alone is `yay -Syu`, a long option may be `--config`.
fn pacman_reads(args: &[Word]) -> bool {
    const LONG: &[(&str, char)] = &[
        ("--query", 'Q'),
        ("--sync", 'S'),
        ("--files", 'F'),
        ("--help", 'h'),
        ("--version", 'V'),
        ("--search", 's'),
        ("--info", 'i'),
        ("--list", 'l'),
        ("--groups", 'g'),
        ("--quiet", 'q'),
        ("--owns", 'o'),
        ("--regex", 'x'),
    ];
    let mut letters = Vec::new();
    for w in args {
        if !w.literal {
            return false;
        }
        if let Some(long) = w.text.strip_prefix("--") {
            if long.is_empty() {
                continue;
            }
            match LONG.iter().find(|(name, _)| *name == w.text) {
                Some((_, c)) => letters.push(*c),
                None => return false,
            }
        } else if let Some(short) = w.text.strip_prefix('-') {
            for c in short.chars() {
                if c == 'b' || c == 'r' {
                    break;
                }
                letters.push(c);
            }
        }
    }
    let ops: Vec<char> = letters
        .iter()
        .copied()
        .filter(char::is_ascii_uppercase)
        .collect();
    let mut modifiers = letters.iter().copied().filter(|c| !c.is_ascii_uppercase());
    match ops.as_slice() {
        ['Q'] => true,
        ['S'] => {
            letters.iter().any(|c| "silg".contains(*c)) && modifiers.all(|c| "silgqv".contains(c))
        }
        ['F'] => modifiers.all(|c| "lxqvo".contains(c)),
        ['V'] | [] => modifiers.all(|c| c == 'h' || c == 'V') && !letters.is_empty(),
        _ => false,
    }
}

/// `capsh [OPTIONS] -- ARGS` (also `-+`) runs `/bin/bash ARGS` (`--shell=PATH` instead of
/// bash), `==`/`=+` runs capsh again with the rest; without them it runs nothing. Its options
/// are `--name[=value]` (libcap 2.66's `capsh --help`).
fn capsh(args: &[Word], out: &mut Findings) {
    let mut shell = Word::lit("/bin/bash");
    for (i, w) in args.iter().enumerate() {
        let value_only = w.raw.starts_with("--") && w.raw.contains('=');
        if !w.single || (!w.literal && !value_only) {
            return out.stop(Stop::Dynamic(w.text.clone()));
        }
        let rest = &args[i + 1..];
        match w.text.as_str() {
            "--" | "-+" => {
                let mut argv = vec![shell];
                argv.extend(rest.iter().cloned());
                return out.argv(&argv);
            }
            "==" | "=+" => {
                let mut argv = vec![Word::lit("capsh")];
                argv.extend(rest.iter().cloned());
                return out.argv(&argv);
            }
            t if t.starts_with("--shell=") => {
                if !w.literal {
                    return out.stop(Stop::Dynamic(w.text.clone()));
                }
                shell = Word::lit(&t["--shell=".len()..]);
            }
            _ => {}
        }
    }
}

/// gdb runs what its commands say (`-ex 'shell CMD'`, `-x FILE`, `python …`, `run`) and the
/// program it debugs; `--args PROG ARGS` names that program's command line, which the rules
/// see. Anything but `--version`/`--help`/`--configuration` asks.
fn gdb(args: &[Word], out: &mut Findings) {
    if args.len() == 1
        && args[0].literal
        && matches!(
            args[0].text.as_str(),
            "--version" | "-version" | "--help" | "-help" | "--configuration"
        )
    {
        return;
    }
    out.opaque("`gdb` runs the commands it is given (`-ex 'shell …'`, `-x FILE`, its init files) and the program it debugs".into());
    if let Some(at) = args
        .iter()
        .position(|w| w.literal && matches!(w.text.as_str(), "--args" | "-args"))
    {
        out.argv(&args[at + 1..]);
    }
}

/// `jobs -x COMMAND ARGS` runs COMMAND, its job specs (`%1`) replaced by process group ids
/// (bash's `internal_getopt(list, "lpnxrs")`; `-x` allows no other option).
fn jobs(args: &[Word], out: &mut Findings) {
    let mut execute = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            return out.stop(Stop::Dynamic(w.text.clone()));
        }
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        execute |= t.contains('x');
        i += 1;
    }
    if execute {
        out.argv(&args[i..]);
    }
}

/// ssh, scp and sftp run local commands their options name, before any network: `-o
/// ProxyCommand=CMD` (the real OpenSSH ran CMD with the network down), `LocalCommand`,
/// `KnownHostsCommand` (read as `sh -c` strings, so the deny rules see them), a provider
/// library (`PKCS11Provider`, `SecurityKeyProvider`, `-I`), a configuration file (`-F`, which
/// can name all of these), `scp -S PROG`, `sftp -S PROG`/`-D PROG`; `ssh -E FILE` writes the
/// log. Only the `-o` settings known to choose how to connect, authenticate or forward pass.
fn ssh(base: &str, args: &[Word], out: &mut Findings) {
    const WITH_ARG: &[(&str, &str)] = &[
        ("ssh", "bcDEeFIiJLlmOopQRSWwBP"),
        ("scp", "cDFiJloPSX"),
        ("sftp", "BbcDFiJloPRSsX"),
    ];
    const COMMANDS: &[&str] = &["proxycommand", "localcommand", "knownhostscommand"];
    const PASS: &[&str] = &[
        "addkeystoagent",
        "addressfamily",
        "batchmode",
        "bindaddress",
        "canonicalizehostname",
        "certificatefile",
        "checkhostip",
        "ciphers",
        "clearallforwardings",
        "compression",
        "connectionattempts",
        "connecttimeout",
        "controlmaster",
        "controlpath",
        "controlpersist",
        "dynamicforward",
        "escapechar",
        "exitonforwardfailure",
        "forwardagent",
        "forwardx11",
        "gatewayports",
        "globalknownhostsfile",
        "hashknownhosts",
        "hostkeyalgorithms",
        "hostkeyalias",
        "hostname",
        "identitiesonly",
        "identityfile",
        "ipqos",
        "kbdinteractiveauthentication",
        "kexalgorithms",
        "localforward",
        "loglevel",
        "macs",
        "numberofpasswordprompts",
        "passwordauthentication",
        "port",
        "preferredauthentications",
        "pubkeyacceptedalgorithms",
        "pubkeyacceptedkeytypes",
        "pubkeyauthentication",
        "rekeylimit",
        "remoteforward",
        "requesttty",
        "sendenv",
        "serveraliveinterval",
        "serveralivecountmax",
        "setenv",
        "stricthostkeychecking",
        "tcpkeepalive",
        "updatehostkeys",
        "user",
        "userknownhostsfile",
        "verifyhostkeydns",
        "visualhostkey",
    ];
    let takes = WITH_ARG
        .iter()
        .find(|(n, _)| *n == base)
        .map_or("", |(_, t)| *t);
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            // May be any option (`-o ProxyCommand=…`).
            return out.opaque(format!("`{}` may be any {base} option", w.text));
        }
        let t = w.text.as_str();
        if t == "--" {
            break;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else {
            continue;
        };
        for (at, c) in cluster.char_indices() {
            if c == 'I' && base == "ssh" {
                out.opaque(format!("`{base} -I` loads a PKCS#11 library"));
            }
            if !takes.contains(c) {
                continue;
            }
            let attached = &cluster[at + c.len_utf8()..];
            let value = if attached.is_empty() {
                let v = args.get(i).cloned();
                i += 1;
                v
            } else {
                Some(Word::lit(attached))
            };
            let Some(value) = value else { break };
            match c {
                'o' => {
                    let text = value.text.trim_start();
                    let key = text
                        .split(|ch: char| ch == '=' || ch.is_whitespace())
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    let setting = text[key.len()..].trim_start_matches([' ', '\t', '=']);
                    if !value.literal || !PASS.contains(&key.as_str()) {
                        out.opaque(format!(
                            "`{base} -o {}` is not a setting known only to choose how to connect",
                            value.text
                        ));
                    }
                    if COMMANDS.contains(&key.as_str()) {
                        out.inner.push(Inner::PosixLine(Word::lit(setting)));
                    }
                }
                'F' => out.opaque(format!(
                    "`{base} -F {}` reads a configuration that can name commands to run",
                    value.text
                )),
                'E' if base == "ssh" => out
                    .concerns
                    .push(Concern::WriteRedirect(value.text.clone())),
                'S' | 'D' if base != "ssh" => {
                    out.opaque(format!("`{base} -{c}` runs the program it names"));
                    out.argv(&[value]);
                }
                _ => {}
            }
            break;
        }
    }
}

fn su(args: &[Word], runuser: bool, out: &mut Findings) {
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

fn sg(args: &[Word], out: &mut Findings) {
    // sg GROUP [-c] COMMAND; without a command it starts a shell reading the input.
    if args.len() <= 1 {
        return out.opaque(
            "sg without a command starts a shell that reads commands from standard input".into(),
        );
    }
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

fn trap(args: &[Word], whole: &str, out: &mut Findings) {
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

/// For a shell other than bash, the first bash-only construct in `text` that such a shell reads
/// differently, so that the commands bash's parse finds are not the ones that run: ANSI-C and
/// locale quoting change where quotes end, `<<<`, `&>` and `|&` where commands and their
/// redirections end.
fn reads_differently(shell: &str, text: &str) -> Option<&'static str> {
    if matches!(shell, "bash" | "rbash") {
        return None;
    }
    ["$'", "$\"", "<<<", "&>", "|&"]
        .into_iter()
        .find(|c| text.contains(c))
}

/// Which grammar a shell reads its `-c` string with.
enum Dialect {
    Bash,
    /// POSIX sh (dash is Debian's `/bin/sh`): no `[[`, no `((`, no `$'…'`.
    Posix,
    /// A grammar of its own (zsh, ksh, yash, …): not modelled.
    Other,
}

fn dialect(base: &str) -> Dialect {
    match base {
        "bash" | "rbash" => Dialect::Bash,
        "sh" | "dash" | "ash" | "posh" | "bosh" => Dialect::Posix,
        _ => Dialect::Other,
    }
}

fn shell(base: &str, args: &[Word], out: &mut Findings) {
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
    if let Some(file) = arg_of(&opts, &["--rcfile", "--init-file"]) {
        // Round 9 (the tricky-constructs oracle): `bash --rcfile FILE -ic ls` ran FILE's
        // commands before `ls`, and the line was read as `ls` alone.
        out.opaque(format!(
            "{base} runs `{}` as its start-up file, code the line does not show",
            file.text
        ));
    }
    if allexport(&opts) {
        // `bash -a -c '…'`: every assignment in the string is exported.
        out.concerns
            .push(Concern::Environment(format!("{base} {}", join_raw(args))));
    }
    if has(&opts, &["-c"]) {
        if let Some(cmd) = args.get(start) {
            match dialect(base) {
                Dialect::Bash => out.line(cmd),
                Dialect::Posix => out.inner.push(Inner::PosixLine(cmd.clone())),
                Dialect::Other => {
                    // zsh, ksh, yash, … have grammars of their own: the string is read as bash
                    // reads it only so that the deny rules see its commands.
                    out.line(cmd);
                    out.opaque(format!(
                        "{base} reads its string with its own grammar, not checked: {}",
                        cmd.text
                    ));
                    return;
                }
            }
            if let Some(construct) = reads_differently(base, &cmd.text) {
                // The string is parsed as bash parses it; a POSIX shell (dash is Debian's
                // /bin/sh) splits `$'…'` and the like elsewhere, so the commands found are
                // not the ones that run: `sh -c "echo $'\' ; rm -rf . ; echo '\'"`.
                out.concerns.push(Concern::Unparsed(format!(
                    "`{construct}` in the string of `{base} -c` is read differently by a POSIX shell than by bash, whose reading was checked"
                )));
                return;
            }
            // The string is parsed and each of its commands decided. An interactive or login
            // shell first runs its start-up files (`~/.bashrc`, `~/.profile`, …), code the
            // line does not show: then the shell is decided by its own rule (`bash -lc`),
            // which a policy that trusts those files may give.
            let startup = has(&opts, &["-i", "-l", "--login"]);
            out.transparent = !startup;
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
