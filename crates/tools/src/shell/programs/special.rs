//! What needs more than an option table: scripts to read (`sed`, `awk`), modes (`tar`),
//! operands (`dd of=`, `rsync host:`, `make NAME=value`), non-getopt syntax (`find`, `less +CMD`,
//! npm's settings).

use super::{
    judge_abbreviated, judge_options, parse, Does, EffectKind, Examined, Parsed, UNKNOWN_OPTION,
};
use crate::shell::options::Spec;
use crate::shell::words::Word;

/// `sed -i` writes its file operands; the script's `w`/`W` commands and `s///w` write files,
/// its `e` command and `s///e` run them as shell commands.
pub(super) fn sed(p: &Parsed, out: &mut Examined) {
    let in_place = p.has(&["-i", "--in-place"]);
    let mut scripts: Vec<&Word> = p.args(&["-e", "--expression"]).collect();
    let mut files: &[Word] = &p.operands;
    if scripts.is_empty() && !p.has(&["-f", "--file"]) {
        if let Some((first, rest)) = p.operands.split_first() {
            scripts.push(first);
            files = rest;
        }
    }
    if in_place {
        for f in files {
            out.write(f);
        }
        backups(p, &["-i", "--in-place"], files, out);
    }
    if p.has(&["--sandbox"]) {
        return;
    }
    for script in scripts {
        if !script.literal {
            out.effect(
                EffectKind::Runs,
                "e",
                format!(
                    "sed script `{}` is only known when the line runs",
                    script.text
                ),
            );
            continue;
        }
        sed_script(&script.text, out);
    }
}

/// Reads a sed script command by command, as GNU sed does, for the commands that write files
/// (`w FILE`, `W FILE`, `s///w FILE`) or run a shell (`e`, `s///e`). Anything it cannot read is
/// taken as running code.
fn sed_script(script: &str, out: &mut Examined) {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let to_eol = |i: &mut usize| -> String {
        let start = *i;
        while *i < b.len() && b[*i] != '\n' {
            *i += 1;
        }
        b[start..*i].iter().collect::<String>()
    };
    // A delimited part (`/re/`, the parts of `s` and `y`): index after the closing delimiter.
    let delimited = |mut i: usize, d: char| -> Option<usize> {
        while i < b.len() {
            if b[i] == '\\' {
                i += 2;
                continue;
            }
            if b[i] == d {
                return Some(i + 1);
            }
            if b[i] == '\n' && d != '\n' {
                return None;
            }
            i += 1;
        }
        None
    };
    let unreadable = |out: &mut Examined| {
        out.effect(
            EffectKind::Runs,
            "e",
            format!("sed script `{script}` could not be read to check for `e` and `w` commands"),
        );
    };
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() || c == ';' || c == '{' || c == '}' || c == '!' {
            i += 1;
            continue;
        }
        // Addresses.
        if c.is_ascii_digit() || c == '$' || c == ',' || c == '~' || c == '+' {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let (d, from) = if c == '\\' {
                match b.get(i + 1) {
                    Some(&d) => (d, i + 2),
                    None => return unreadable(out),
                }
            } else {
                ('/', i + 1)
            };
            match delimited(from, d) {
                Some(next) => i = next,
                None => return unreadable(out),
            }
            // Address flags `I` and `M`.
            while i < b.len() && (b[i] == 'I' || b[i] == 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            '#' | ':' | 'b' | 't' | 'T' | 'a' | 'i' | 'c' | 'r' | 'R' | 'q' | 'Q' | 'l' | 'L'
            | 'v' => {
                // A label, text, a file read, or a number. Labels, numbers and `v`'s version
                // end at a blank too: GNU sed 4.9 reads `:x e id` as the label `x` and then the
                // command `e id` (and `tx e id`, `v 4.2 e id` alike), so what follows is read
                // as commands here; ending early only finds more.
                if matches!(c, ':' | 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L' | 'v') {
                    while i < b.len() && (b[i] == ' ' || b[i] == '\t') {
                        i += 1;
                    }
                    while i < b.len() && !b[i].is_whitespace() && b[i] != ';' && b[i] != '}' {
                        i += 1;
                    }
                } else {
                    let mut text = to_eol(&mut i);
                    // `a\` text continues over escaped newlines.
                    while text.ends_with('\\') && i < b.len() {
                        i += 1;
                        text = to_eol(&mut i);
                    }
                }
            }
            'w' | 'W' => {
                let file = to_eol(&mut i);
                sed_write(file.trim_start(), out);
            }
            'e' => {
                let cmd = to_eol(&mut i);
                out.effect(
                    EffectKind::Runs,
                    "e",
                    format!("sed command `e{cmd}` runs a shell command"),
                );
            }
            's' | 'y' => {
                let Some(&d) = b.get(i) else {
                    return unreadable(out);
                };
                if d == '\n' || d == '\\' {
                    return unreadable(out);
                }
                let Some(mid) = delimited(i + 1, d) else {
                    return unreadable(out);
                };
                let Some(end) = delimited(mid, d) else {
                    return unreadable(out);
                };
                i = end;
                if c == 's' {
                    while i < b.len() {
                        match b[i] {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                            'e' => {
                                i += 1;
                                out.effect(
                                    EffectKind::Runs,
                                    "e",
                                    "sed flag `s///e` runs the pattern space as a shell command"
                                        .into(),
                                );
                            }
                            'w' => {
                                i += 1;
                                let file = to_eol(&mut i);
                                sed_write(file.trim_start(), out);
                            }
                            _ => break,
                        }
                    }
                }
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            _ => return unreadable(out),
        }
    }
}

fn sed_write(file: &str, out: &mut Examined) {
    if !matches!(file, "/dev/stdout" | "/dev/stderr") {
        out.writes.push(file.to_string());
    }
}

/// `perl -i` and `ruby -i` edit their file operands in place.
pub(super) fn in_place(p: &Parsed, out: &mut Examined) {
    if p.has(&["-i"]) {
        for f in &p.operands {
            out.write(f);
        }
        backups(p, &["-i"], &p.operands, out);
    }
}

/// perl and ruby: in-place edits ([`in_place`]), and the program read from the input.
pub(super) fn perl_ruby(p: &Parsed, out: &mut Examined) {
    in_place(p, out);
    program_from_input(
        p,
        &["-e", "-E", "-v", "-V", "-h", "--version", "--help"],
        out,
    );
}

/// node (also deno and bun, which share its table): the program read from the input.
pub(super) fn node_input(p: &Parsed, out: &mut Examined) {
    program_from_input(
        p,
        &[
            "-e",
            "--eval",
            "-p",
            "--print",
            "-c",
            "--check",
            "--test",
            "-v",
            "--version",
            "-h",
            "--help",
            "--v8-options",
        ],
        out,
    );
}

/// Rscript: `-e EXPR` is judged by the table; with neither one nor a script file (or with
/// `-`) it runs the program it reads from its input (the real Rscript 4.2 did).
pub(super) fn rscript_input(p: &Parsed, out: &mut Examined) {
    program_from_input(p, &["-e", "--version", "--help"], out);
}

/// R reads its program from the input unless `-f FILE`/`--file` or `-e EXPR` give it (R takes
/// no script operand: `R x.R` reads the input too), `R CMD TOOL` runs a tool, or it only
/// reports (the real R 4.2 ran the `system()` it read from its input).
pub(super) fn r_input(p: &Parsed, out: &mut Examined) {
    let tool = p
        .operands
        .first()
        .is_some_and(|w| w.literal && w.text == "CMD");
    if tool || p.has(&["-f", "--file", "-e", "--version", "--help", "-h"]) {
        return;
    }
    out.effect(
        EffectKind::Runs,
        "-",
        "R runs the program it reads from its input, which the line does not show".into(),
    );
}

/// tclsh and wish given no script run the commands they read from their input (the real
/// tclsh 8.6 ran the `exec` it read).
pub(super) fn tcl_input(p: &Parsed, out: &mut Examined) {
    program_from_input(p, &[], out);
}

/// pip's options that take a value (pip 23's `--help` of each command; optparse takes any
/// unambiguous abbreviation of a long one, `--tar` for `--target`).
const PIP_SPEC: Spec = Spec {
    short_arg: "rcetCifdwb",
    long_arg: &[
        "requirement",
        "constraint",
        "editable",
        "target",
        "platform",
        "python-version",
        "implementation",
        "abi",
        "root",
        "prefix",
        "src",
        "upgrade-strategy",
        "config-settings",
        "global-option",
        "build-option",
        "no-binary",
        "only-binary",
        "progress-bar",
        "root-user-action",
        "report",
        "index-url",
        "extra-index-url",
        "find-links",
        "python",
        "log",
        "log-file",
        "keyring-provider",
        "proxy",
        "retries",
        "timeout",
        "exists-action",
        "trusted-host",
        "cert",
        "client-cert",
        "cache-dir",
        "use-feature",
        "use-deprecated",
        "dest",
        "wheel-dir",
        "format",
        "exclude",
        "path",
    ],
    lenient: true,
    ..Spec::NONE
};

/// The pip options whose value is a file or directory pip writes.
const PIP_OPTIONS: &[(&str, Does)] = &[
    ("-t", Does::WritesArg),
    ("--target", Does::WritesArg),
    ("--prefix", Does::WritesArg),
    ("--root", Does::WritesArg),
    ("--src", Does::WritesArg),
    ("--log", Does::WritesArg),
    ("--log-file", Does::WritesArg),
    ("--report", Does::WritesArg),
    ("--cache-dir", Does::WritesArg),
    ("-d", Does::WritesArg),
    ("--dest", Does::WritesArg),
    ("-w", Does::WritesArg),
    ("--wheel-dir", Does::WritesArg),
];

/// Round 11: `pip install` and `pip uninstall` change the environment of the python pip runs
/// for, and what they put there runs in every later run of it: a package's `.pth` file runs
/// at each start of that python, its scripts land on the PATH (the real pip 23 installed a
/// wheel whose `.pth` then ran at the next `python -c pass`). Which environment a bare `pip`
/// serves the line does not show (a venv's inside the roots, or the operator's own), so that
/// asks, as `python -m pip` did; a pip named by a path (`.venv/bin/pip`) or `--python PATH` is
/// that environment, judged as code at a path. Round 12: an activated venv (`VIRTUAL_ENV`
/// set) does not change this: the analysis reads the line, not the PATH lookup the shell makes
/// when it runs (the variable may be stale or inherited, a pyenv shim or `hash` may come first,
/// and the line itself may change PATH), so the ask says how to name the venv's pip. `--user` writes the operator's `~/.local`;
/// `--target`/`--prefix`/`--root` and the other directories are writes, judged as any. A
/// project given as a path (`-e DIR`, `./pkg`) has its build backend run: code at that path.
pub(super) fn pip(name: &str, args: &[Word], out: &mut Examined) {
    let p = parse(args, &PIP_SPEC, true);
    judge_options(&p, PIP_OPTIONS, out);
    judge_abbreviated(&p, &PIP_SPEC, PIP_OPTIONS, out);
    if let Some(text) = &p.dynamic {
        out.effect(
            EffectKind::Runs,
            UNKNOWN_OPTION,
            format!("`{text}` is only known when the line runs and may be any option of `pip`"),
        );
    }
    let Some(verb) = p.operands.first() else {
        return;
    };
    if !verb.literal {
        return out.effect(
            EffectKind::Runs,
            UNKNOWN_OPTION,
            format!(
                "pip's command `{}` is only known when the line runs",
                verb.text
            ),
        );
    }
    let verb = verb.text.as_str();
    if !matches!(verb, "install" | "uninstall" | "download" | "wheel") {
        return;
    }
    for project in p.args(&["-e", "--editable"]).chain(
        p.operands[1..]
            .iter()
            .filter(|w| !w.literal || w.text.starts_with(['.', '/', '~']) || w.text.contains('/')),
    ) {
        if !project.text.contains("://") {
            out.code_at(project, "builds, running its build backend, the project at");
        }
    }
    if !matches!(verb, "install" | "uninstall") || p.has(&["--dry-run"]) {
        return;
    }
    if p.has(&["--user"]) {
        out.write(&Word::lit("~/.local"));
    }
    let elsewhere = ["-t", "--target", "--prefix", "--root"];
    if verb == "install" && p.has(&elsewhere) {
        return;
    }
    if let Some(python) = p.args(&["--python"]).next() {
        return out.code_at(
            python,
            &format!("`pip {verb}` changes the environment of the python"),
        );
    }
    if name.contains('/') {
        out.code_at(
            &Word::lit(name),
            &format!("`pip {verb}` changes the environment of"),
        );
    } else {
        out.effect(
            EffectKind::Runs,
            verb,
            format!("`{name} {verb}` changes the environment of the pip the PATH finds, which may be the operator's own: what it installs runs in every later run of that python (a `.pth` file at each start) and its scripts land on the PATH; name a venv's pip by its path (`.venv/bin/pip {verb}`) to have it judged as that environment"),
        );
    }
}

/// Round 11: deno's and bun's own verbs (they share node's table for the runtime's options).
/// `deno eval CODE` runs its code and `deno repl`/`bun repl` their input; `deno upgrade` and
/// `bun upgrade` replace the program the PATH finds; a global install (`deno install -g`, `bun
/// add -g`, `bun link`) writes the operator's `~/.deno/bin` or `~/.bun`, on the PATH (by
/// their manuals: neither is installed here).
pub(super) fn runtime_verbs(base: &str, args: &[Word], out: &mut Examined) {
    let Some(at) = args.iter().position(|w| !w.text.starts_with('-')) else {
        return;
    };
    let verb = &args[at];
    if !verb.literal {
        return;
    }
    let rest = &args[at + 1..];
    let global = args
        .iter()
        .any(|w| w.literal && matches!(w.text.as_str(), "-g" | "--global"));
    match (base, verb.text.as_str()) {
        ("deno", "eval") => out.effect(
            EffectKind::Runs,
            "eval",
            "`deno eval` runs the code it is given".into(),
        ),
        ("deno" | "bun", "repl") => out.effect(
            EffectKind::Runs,
            "repl",
            format!("`{base} repl` runs the code it reads from its input"),
        ),
        ("deno" | "bun", "upgrade") => out.effect(
            EffectKind::Runs,
            "upgrade",
            format!("`{base} upgrade` replaces the `{base}` the operator runs"),
        ),
        ("deno", "install" | "i" | "uninstall" | "add" | "remove") if global => {
            out.write(&Word::lit("~/.deno/bin"))
        }
        ("bun", "add" | "a" | "install" | "i" | "remove" | "rm" | "update" | "link")
            if global || (verb.text == "link" && rest.iter().all(|w| w.text.starts_with('-'))) =>
        {
            out.write(&Word::lit("~/.bun"))
        }
        _ => {}
    }
}

/// Round 11: php runs `-r CODE`, `-B`/`-R`/`-E` (per input line) and the program it reads from
/// its input when given no script, `-f FILE` or a script operand (the real php 8.2 ran each).
/// A script outside the roots is code the line does not show, as for python.
pub(super) fn php_script(p: &Parsed, out: &mut Examined) {
    let reports = [
        "-r",
        "-B",
        "-R",
        "-F",
        "-E",
        "-v",
        "-h",
        "-i",
        "-m",
        "-l",
        "-s",
        "-w",
        "-S",
        "--version",
        "--help",
        "--info",
        "--modules",
        "--ini",
        "--rf",
        "--rc",
        "--re",
        "--rz",
        "--ri",
    ];
    for f in p.args(&["-f", "--file"]) {
        out.code_at(f, "runs the script");
    }
    if p.has(&["-f", "--file"]) || p.has(&reports) {
        return;
    }
    script_or_input(p, out);
}

/// Round 11: lua runs `-e CODE` and `-l MODULE` (judged by the table), a script operand (code
/// at a path), and the program it reads from its input when given no script (or `-`) and no
/// `-e`, or with `-i` (the real lua 5.4 ran each).
pub(super) fn lua_script(p: &Parsed, out: &mut Examined) {
    if p.has(&["-i"]) {
        out.effect(
            EffectKind::Runs,
            "-i",
            "`lua -i` runs the statements it reads from its input".into(),
        );
    }
    if p.operands.is_empty() && p.has(&["-e", "-v"]) {
        return;
    }
    script_or_input(p, out);
}

/// Round 11: julia and guile run a script operand (code at a path) or, given no script, no
/// expression and no version or help, the program they read from their input (by their
/// manuals: neither is installed here).
pub(super) fn julia_guile(p: &Parsed, out: &mut Examined) {
    for f in p.args(&["-L", "--load", "-l", "-s", "-C"]) {
        out.code_at(f, "loads the code at");
    }
    if p.has(&[
        "-e",
        "-E",
        "--eval",
        "--print",
        "-c",
        "-s",
        "-v",
        "--version",
        "-h",
        "--help",
    ]) {
        return;
    }
    script_or_input(p, out);
}

/// Round 11: m4's input is a program (`syscmd`, `esyscmd` run shell commands; the real GNU m4
/// 1.4.19 ran both): each file operand and include directory is code at a path, and with no
/// file (or `-`) the program is its input, which the line does not show.
pub(super) fn m4_input(p: &Parsed, out: &mut Examined) {
    if p.has(&["--version", "--help"]) {
        return;
    }
    for d in p.args(&["-I", "--include", "-R", "--reload-state"]) {
        out.code_at(d, "reads macros (which run shell commands) from");
    }
    if p.operands.is_empty() {
        return out.effect(
            EffectKind::Runs,
            "-",
            "m4 runs the macros it reads from its input (`syscmd` runs a shell command), which the line does not show".into(),
        );
    }
    for f in &p.operands {
        if f.literal && f.text == "-" {
            out.effect(
                EffectKind::Runs,
                "-",
                "m4 runs the macros it reads from its input (`syscmd` runs a shell command), which the line does not show".into(),
            );
        } else {
            out.code_at(f, "runs the macros (which run shell commands) in");
        }
    }
}

/// The first operand is a script (code at a path); none, or `-`, is the program read from the
/// input.
fn script_or_input(p: &Parsed, out: &mut Examined) {
    match p.operands.first() {
        Some(w) if !(w.literal && w.text == "-") => out.code_at(w, "runs the script"),
        _ => out.effect(
            EffectKind::Runs,
            "-",
            "the interpreter runs the program it reads from its input, which the line does not show"
                .into(),
        ),
    }
}

/// Round 10: an interpreter given no script (or `-`) runs the program it reads from its input
/// (`echo 'system "rm -rf src"' | perl`: the real perl 5.36, ruby 3.1 and node 20 each ran
/// the `touch` they read), which the line does not show, as `python` does (round 6). `given`
/// are the options that give the program (already judged) or only report.
fn program_from_input(p: &Parsed, given: &[&str], out: &mut Examined) {
    if p.has(given) {
        return;
    }
    if p.operands
        .first()
        .is_none_or(|w| w.literal && w.text == "-")
    {
        out.effect(
            EffectKind::Runs,
            "-",
            "the interpreter runs the program it reads from its input, which the line does not show"
                .into(),
        );
    }
}

/// The backup an in-place edit keeps (GNU sed's and perl's `-iSUFFIX`): the file renamed to
/// its name as written with SUFFIX appended, or, where SUFFIX has a `*`, to SUFFIX with each `*`
/// replaced by that name (relative to the current directory: sed 4.9 renames `sub/f` to
/// `.sub/frc` for `-i'.*rc'`, checked with strace). `sed -i'.*rc' … env` renames `env` to
/// `.envrc`, `-i'.git/hooks/*' … post-checkout` moves it into git's hooks: both are writes.
fn backups(p: &Parsed, names: &[&str], files: &[Word], out: &mut Examined) {
    for suffix in p.args(names) {
        if !suffix.literal {
            out.unknown_suffix(suffix);
            continue;
        }
        for f in files.iter().filter(|f| f.literal) {
            out.writes.push(if suffix.text.contains('*') {
                suffix.text.replace('*', &f.text)
            } else {
                format!("{}{}", f.text, suffix.text)
            });
        }
    }
}

/// An awk program (the first operand without `-f`/`-e`): `system()`, pipes (`print | "cmd"`,
/// `"cmd" | getline`) and gawk's `@load`/`@include` run code; `print > FILE` and `>> FILE`
/// write a file named by an expression. A `-v`/operand assignment is data.
pub(super) fn awk(p: &Parsed, out: &mut Examined) {
    let mut programs: Vec<&Word> = p.args(&["-e", "--source"]).collect();
    if !p.has(&["-f", "--file", "-e", "--source", "-E", "--exec"]) {
        programs.extend(p.operands.first());
    }
    for prog in programs {
        if !prog.literal {
            out.effect(
                EffectKind::Runs,
                "system",
                format!(
                    "awk program `{}` is only known when the line runs",
                    prog.text
                ),
            );
            continue;
        }
        awk_program(&prog.text, out);
    }
}

fn awk_program(prog: &str, out: &mut Examined) {
    // Outside strings and regular expressions only; a `/` after an operand is division.
    let mut code = String::with_capacity(prog.len());
    let mut chars = prog.chars().peekable();
    let mut operand_before = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(n) = chars.next() {
                    match n {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                code.push_str(" \"\" ");
                operand_before = true;
            }
            '/' if !operand_before => {
                while let Some(n) = chars.next() {
                    match n {
                        '\\' => {
                            chars.next();
                        }
                        '/' => break,
                        _ => {}
                    }
                }
                code.push_str(" // ");
                operand_before = true;
            }
            '#' => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                code.push('\n');
            }
            _ => {
                code.push(c);
                if !c.is_whitespace() {
                    operand_before =
                        c.is_ascii_alphanumeric() || c == '_' || c == ')' || c == ']' || c == '$';
                }
            }
        }
    }
    let runs = code.contains("system")
        || code.replace("||", "").contains('|')
        || code.contains("@load")
        || code.contains("@include");
    if runs {
        out.effect(
            EffectKind::Runs,
            "system",
            format!("awk program `{prog}` runs commands (`system`, `|`, `@load`)"),
        );
    }
    // `print … > file`: a `>` in a statement that prints (comparisons elsewhere are fine).
    let writes = code
        .split([';', '\n', '{', '}'])
        .any(|stmt| (stmt.contains("print") || stmt.contains("printf")) && stmt.contains('>'));
    if writes {
        out.effect(
            EffectKind::Runs,
            ">",
            format!("awk program `{prog}` may write to a file named when it runs"),
        );
    }
}

/// rsync: an operand `host:path` or `rsync://…` reaches the network.
pub(super) fn rsync(p: &Parsed, out: &mut Examined) {
    for w in &p.operands {
        let t = &w.text;
        let remote = t.starts_with("rsync://")
            || t.split_once(':')
                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
        if remote {
            out.effect(
                EffectKind::Network,
                t,
                format!("rsync `{t}` reaches another host"),
            );
        }
    }
}

/// make: `NAME=value` operands override the Makefile's variables (`SHELL`, `CC`, `MAKEFLAGS`),
/// which decide what its recipes run.
pub(super) fn make(p: &Parsed, out: &mut Examined) {
    for w in &p.operands {
        if !w.literal || w.text.contains('=') {
            out.effect(
                EffectKind::Runs,
                if w.literal { &w.text } else { UNKNOWN_OPTION },
                format!(
                    "make `{}` overrides a variable of the Makefile's recipes",
                    w.text
                ),
            );
        }
    }
}

/// less: `+cmd` and `-+`/`--` commands run at start-up may include `!shell`.
pub(super) fn less(p: &Parsed, out: &mut Examined) {
    for o in &p.opts {
        if o.name.starts_with('+') {
            out.effect(
                EffectKind::Runs,
                "+",
                "less `+COMMAND` runs a command at start-up, which may be `!shell`".into(),
            );
        }
    }
}

/// find: `-delete` deletes, `-fprint*`/`-fls` write the file they name. (`-exec`, `-execdir`,
/// `-ok`, `-okdir` run their command, which is seen through as a wrapper.)
pub(super) fn find(args: &[Word], out: &mut Examined) {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        match w.text.as_str() {
            "-delete" if w.literal => out.effect(
                EffectKind::Deletes,
                "-delete",
                "`find -delete` deletes the files it finds".into(),
            ),
            // More words only known when the line runs (`xargs find`): any action.
            _ if !w.single => out.effect(
                EffectKind::Runs,
                UNKNOWN_OPTION,
                format!(
                    "`{}` may be any find action, `-delete` or `-exec` included",
                    w.text
                ),
            ),
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" if w.literal => {
                if let Some(file) = args.get(i + 1) {
                    out.write(file);
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
}

/// dd: `of=FILE` writes it.
pub(super) fn dd(args: &[Word], out: &mut Examined) {
    for w in args {
        if !w.single {
            // Words only known when the line runs (`xargs dd`): any operand, `of=` included.
            out.effect(
                EffectKind::Writes,
                UNKNOWN_OPTION,
                format!("`{}` may be a dd operand that writes a file", w.text),
            );
        }
        if let Some(file) = w.text.strip_prefix("of=") {
            out.writes.push(if w.literal {
                file.to_string()
            } else {
                w.text.clone()
            });
        }
    }
}

/// tar: extracting writes beneath `-C DIR` (or the current directory; anywhere with `-P`),
/// creating writes the archive `-f FILE`; `--to-command`, `-I`/`--use-compress-program`,
/// `--checkpoint-action=exec=…`, `-F`/`--info-script` and the remote-shell options run code;
/// `-f host:file` reaches the network; `--remove-files` deletes.
pub(super) fn tar(args: &[Word], out: &mut Examined) {
    let spec = Spec {
        short_arg: "bCfFgHIKLNTVX",
        long_arg: &[
            "file",
            "directory",
            "use-compress-program",
            "to-command",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
            "exclude",
            "exclude-from",
            "files-from",
            "format",
            "blocking-factor",
            "record-size",
            "owner",
            "group",
            "mode",
            "mtime",
            "newer",
            "after-date",
            "newer-mtime",
            "label",
            "listed-incremental",
            "index-file",
            "volno-file",
            "transform",
            "xform",
            "strip-components",
            "starting-file",
            "tape-length",
            "checkpoint-action",
        ],
        long_flag: &[
            "extract",
            "get",
            "create",
            "append",
            "update",
            "catenate",
            "concatenate",
            "delete",
            "list",
            "diff",
            "compare",
            "absolute-names",
            "remove-files",
            "force-local",
        ],
        lenient: true,
        ..Spec::NONE
    };
    // Old style: `tar xzf a.tar` is `tar -x -z -f a.tar`, each letter's argument in turn.
    let mut words: Vec<Word> = Vec::with_capacity(args.len() + 2);
    let mut rest = args;
    if let Some(first) = args
        .first()
        .filter(|w| w.literal && !w.text.starts_with('-'))
    {
        rest = &args[1..];
        let mut taken = 0;
        for c in first.text.chars() {
            words.push(Word::lit(&format!("-{c}")));
            if spec.short_arg.contains(c) {
                if let Some(a) = rest.get(taken) {
                    words.push(a.clone());
                    taken += 1;
                }
            }
        }
        rest = &rest[taken.min(rest.len())..];
    }
    words.extend(rest.iter().cloned());
    let p = parse(&words, &spec, true);
    judge_options(
        &p,
        &[
            ("--to-command", Does::Runs),
            ("-I", Does::Runs),
            ("--use-compress-program", Does::Runs),
            ("-F", Does::Runs),
            ("--info-script", Does::Runs),
            ("--new-volume-script", Does::Runs),
            ("--rsh-command", Does::Runs),
            ("--rmt-command", Does::Runs),
            ("--remove-files", Does::Deletes),
            ("--index-file", Does::WritesArg),
            ("-g", Does::WritesArg),
            ("--listed-incremental", Does::WritesArg),
            ("--volno-file", Does::WritesArg),
        ],
        out,
    );
    for a in p.args(&["--checkpoint-action"]) {
        if !a.literal || a.text.contains("exec") {
            out.effect(
                EffectKind::Runs,
                "--checkpoint-action",
                format!("tar `--checkpoint-action={}` runs a command", a.text),
            );
        }
    }
    let extract = p.has(&["-x", "--extract", "--get"]);
    let creates = p.has(&[
        "-c",
        "--create",
        "-r",
        "--append",
        "-u",
        "--update",
        "-A",
        "--catenate",
        "--concatenate",
        "--delete",
    ]);
    let archives: Vec<&Word> = p.args(&["-f", "--file"]).collect();
    for f in &archives {
        let remote = !p.has(&["--force-local"])
            && f.text
                .split_once(':')
                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
        if remote {
            out.effect(
                EffectKind::Network,
                "-f",
                format!("tar `-f {}` reaches another host", f.text),
            );
        }
        if creates && f.text != "-" {
            out.write(f);
        }
    }
    if extract {
        if p.has(&["-P", "--absolute-names"]) {
            out.effect(
                EffectKind::Runs,
                "-P",
                "tar `-x -P` extracts to any path the archive names".into(),
            );
        }
        match p.args(&["-C", "--directory"]).last() {
            Some(dir) => out.write(dir),
            None => out.writes.push(".".into()),
        }
        out.unshown(
            "tar `-x` writes the names the archive holds, which the line does not show (any may be on the persistence surface: `.git/hooks/…`, `.envrc`)".into());
    }
    if p.dynamic.is_some() {
        out.effect(
            EffectKind::Runs,
            UNKNOWN_OPTION,
            "a tar option is only known when the line runs".into(),
        );
    }
}

/// npm and friends: `--script-shell`, `--node-options`, `--prefix`/`-C` (another package's
/// scripts), `--userconfig`/`--globalconfig` (settings that name programs) run code the line
/// does not show; `-g`/`--global` installs or runs outside the project. npm reads every
/// `--name[=value]` as a setting and accepts unambiguous abbreviations, so any word that
/// starts a dangerous setting's name counts.
/// Round 6: npm's commands that run a program the line names or a package's (`npm exec --
/// CMD`, `npm x CMD`, `npm explore PKG -- CMD`, `npm init PKG`, which runs `create-PKG`), and
/// the ones that write npm's own configuration (`npm config set script-shell=CMD`, `npm set`:
/// `~/.npmrc`, whose settings name the programs the operator's next `npm` runs). The command
/// is the first word that is not an option, or, after a long option that may take it as its
/// value (`--loglevel silent exec`), the next one too.
fn runs_what_it_is_given(base: &str, args: &[Word], out: &mut Examined) {
    let mut candidates: Vec<(usize, &Word)> = Vec::new();
    let mut after_option = false;
    for (i, w) in args.iter().enumerate() {
        if w.literal && w.text == "--" {
            break;
        }
        if w.literal && w.text.starts_with('-') {
            after_option = w.text.starts_with("--") && !w.text.contains('=');
            continue;
        }
        candidates.push((i, w));
        if !after_option {
            break;
        }
        after_option = false;
    }
    for (i, w) in candidates {
        // npm reads a command as its exact name, an alias (`x`, `ln`, `c`, `i`) or any unique
        // abbreviation (`npm exe`, `npm lin`, `npm confi`, checked with npm 11): the
        // command's name, as npm resolves it.
        let t = if base == "npm" {
            npm_command(&w.text).unwrap_or(w.text.as_str())
        } else {
            w.text.as_str()
        };
        let next = args[i + 1..]
            .iter()
            .find(|a| !(a.literal && a.text.starts_with('-')));
        let runs = match t {
            _ if base == "npx" => false, // a rule on npx names what it runs
            "exec" | "x" | "explore" | "create" | "dlx" => true,
            "init" | "innit" => next.is_some(),
            _ => false,
        };
        if runs {
            out.effect(
                EffectKind::Runs,
                t,
                format!("`{base} {t}` runs a program or a package's code that the line names, not one the rule allowing {base} names"),
            );
        }
        // `npm link` puts the package (and its `bin` programs) into the global prefix, on
        // the operator's PATH; a package installed from a path outside the roots runs its
        // install scripts.
        if t == "link" || t == "ln" {
            out.effect(
                EffectKind::Writes,
                t,
                format!("`{base} {t}` writes the global node_modules and its bin directory, on the operator's PATH"),
            );
        }
        if matches!(
            t,
            "install" | "i" | "add" | "link" | "ln" | "ci" | "update" | "up"
        ) {
            for a in &args[i + 1..] {
                let spec = a.text.as_str();
                let path = spec
                    .strip_prefix("file:")
                    .or_else(|| spec.strip_prefix("git+file://"))
                    .unwrap_or(spec);
                let local = path.starts_with(['/', '~'])
                    || path.starts_with("./")
                    || path.starts_with("../")
                    || path == "."
                    || path == "..";
                if a.literal && local {
                    out.code_at(
                        &Word::lit(path),
                        "installs, and runs the install scripts of, the package at",
                    );
                }
            }
        }
        let config = match t {
            "login" | "adduser" | "add-user" | "logout" => true,
            "config" | "c" => next.is_some_and(|n| {
                matches!(
                    n.text.as_str(),
                    "set" | "delete" | "del" | "rm" | "edit" | "fix"
                ) || !n.literal
            }),
            "set" => true,
            _ => false,
        };
        if config {
            out.write(&Word::lit("~/.npmrc"));
        }
    }
}

/// npm's commands and aliases (npm 11.19, `lib/utils/cmd-list.js`).
const NPM_COMMANDS: &[&str] = &[
    "access",
    "adduser",
    "approve-scripts",
    "audit",
    "bugs",
    "cache",
    "ci",
    "completion",
    "config",
    "dedupe",
    "deny-scripts",
    "deprecate",
    "diff",
    "dist-tag",
    "docs",
    "doctor",
    "edit",
    "exec",
    "explain",
    "explore",
    "find-dupes",
    "fund",
    "get",
    "help",
    "help-search",
    "init",
    "install",
    "install-ci-test",
    "install-scripts",
    "install-test",
    "link",
    "ll",
    "login",
    "logout",
    "ls",
    "org",
    "outdated",
    "owner",
    "pack",
    "ping",
    "pkg",
    "prefix",
    "profile",
    "prune",
    "publish",
    "query",
    "rebuild",
    "repo",
    "restart",
    "root",
    "run",
    "sbom",
    "search",
    "set",
    "shrinkwrap",
    "stage",
    "star",
    "stars",
    "start",
    "stop",
    "team",
    "test",
    "token",
    "trust",
    "undeprecate",
    "uninstall",
    "unpublish",
    "unstar",
    "update",
    "version",
    "view",
    "whoami",
];
const NPM_ALIASES: &[(&str, &str)] = &[
    ("author", "owner"),
    ("home", "docs"),
    ("issues", "bugs"),
    ("info", "view"),
    ("show", "view"),
    ("find", "search"),
    ("add", "install"),
    ("unlink", "uninstall"),
    ("remove", "uninstall"),
    ("rm", "uninstall"),
    ("r", "uninstall"),
    ("un", "uninstall"),
    ("rb", "rebuild"),
    ("list", "ls"),
    ("ln", "link"),
    ("create", "init"),
    ("i", "install"),
    ("it", "install-test"),
    ("cit", "install-ci-test"),
    ("u", "update"),
    ("up", "update"),
    ("c", "config"),
    ("s", "search"),
    ("se", "search"),
    ("tst", "test"),
    ("t", "test"),
    ("ddp", "dedupe"),
    ("v", "view"),
    ("run-script", "run"),
    ("clean-install", "ci"),
    ("clean-install-test", "install-ci-test"),
    ("x", "exec"),
    ("why", "explain"),
    ("la", "ll"),
    ("verison", "version"),
    ("ic", "ci"),
    ("innit", "init"),
    ("in", "install"),
    ("ins", "install"),
    ("inst", "install"),
    ("insta", "install"),
    ("instal", "install"),
    ("isnt", "install"),
    ("isnta", "install"),
    ("isntal", "install"),
    ("isntall", "install"),
    ("install-clean", "ci"),
    ("isntall-clean", "ci"),
    ("hlep", "help"),
    ("dist-tags", "dist-tag"),
    ("upgrade", "update"),
    ("udpate", "update"),
    ("rum", "run"),
    ("sit", "install-ci-test"),
    ("urn", "run"),
    ("ogr", "org"),
    ("add-user", "adduser"),
];

/// The command npm runs for the word `c`, as npm's `deref` finds it: camelCase as kebab-case,
/// the exact name, an alias, else the one command or alias `c` abbreviates (none when it
/// abbreviates several: npm refuses it).
fn npm_command(c: &str) -> Option<&'static str> {
    let mut kebab = String::new();
    for ch in c.chars() {
        if ch.is_ascii_uppercase() {
            kebab.push('-');
            kebab.push(ch.to_ascii_lowercase());
        } else {
            kebab.push(ch);
        }
    }
    let alias = |a: &str| NPM_ALIASES.iter().find(|(k, _)| *k == a).map(|(_, v)| *v);
    if let Some(exact) = NPM_COMMANDS.iter().find(|n| **n == kebab) {
        return Some(exact);
    }
    if let Some(a) = alias(&kebab) {
        return Some(a);
    }
    if kebab.is_empty() {
        return None;
    }
    let mut hits = NPM_COMMANDS
        .iter()
        .copied()
        .chain(NPM_ALIASES.iter().map(|(k, _)| *k))
        .filter(|n| n.starts_with(&kebab));
    let one = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let mut name = one;
    while let Some(a) = alias(name) {
        name = a;
    }
    Some(name)
}

pub(super) fn npm(base: &str, args: &[Word], out: &mut Examined) {
    const RUNS: &[&str] = &[
        "script-shell",
        "node-options",
        "prefix",
        "userconfig",
        "globalconfig",
        "global",
        "location",
        "call",
        "shell",
        // Round 6: programs and scripts npm runs (`npm docs --browser=CMD`, `npm edit
        // --editor=CMD`, the git it runs, `npm init`'s module).
        "browser",
        "editor",
        "viewer",
        "git",
        "node-gyp",
        "init-module",
    ];
    runs_what_it_is_given(base, args, out);
    for (i, w) in args.iter().enumerate() {
        if w.literal && w.text == "--" {
            break;
        }
        if !w.literal {
            let raw = w.raw.trim_start_matches(['"', '\'']);
            if !w.single || raw.starts_with('-') || raw.starts_with('$') {
                out.effect(
                    EffectKind::Runs,
                    UNKNOWN_OPTION,
                    format!(
                        "`{}` is only known when the line runs and may be any {base} setting",
                        w.text
                    ),
                );
            }
            continue;
        }
        let t = w.text.as_str();
        // Round 10: pnpm's `--dir DIR` (nopt takes `--di`) and yarn 1's `--cwd DIR` run the
        // scripts of the package at DIR, which outside the roots is not the project's (the
        // real pnpm 10 ran `--dir /elsewhere build`'s script). pnpm's `-C` asks below.
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            let dir = match base {
                "pnpm" => name.len() >= 2 && "dir".starts_with(name),
                "yarn" => name == "cwd",
                _ => false,
            };
            if dir {
                if let Some(d) = value.map(Word::lit).or_else(|| args.get(i + 1).cloned()) {
                    out.code_at(&d, "runs the scripts of the package at");
                }
            }
        }
        // The shorthands of those settings: `-C` (`--prefix`), `-g` (`--global`), `-c`
        // (`--call`). nopt splits a cluster of letters (`-sC DIR` is `-s -C DIR`) and takes a
        // shorthand written as a long option too (`--C=DIR`): the real npm ran DIR's scripts.
        let shorthand = |letters: &str| letters.contains(['C', 'g', 'c']);
        let hit = if let Some(long) = t.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            let name = name.strip_prefix("no-").unwrap_or(name);
            let runs = match name.len() {
                1 => shorthand(name),
                0 => false,
                _ => RUNS.iter().any(|r| r.starts_with(name)),
            };
            runs.then(|| format!("--{name}"))
        } else if let Some(short) = t.strip_prefix('-') {
            shorthand(short).then(|| t.to_string())
        } else {
            None
        };
        if let Some(option) = hit {
            out.effect(
                EffectKind::Runs,
                &option,
                format!("{base} `{t}` changes which program or package runs"),
            );
        }
    }
}

/// cargo: `--config KEY=VALUE|FILE` sets configuration that names programs cargo runs
/// (`build.rustc-wrapper`, `target.<triple>.runner`, `target.<triple>.linker`, `build.rustflags`
/// with `-C linker=…`), and `-Z` turns on unstable behaviour (config includes, scripts): both
/// run code the line does not show, so `cargo build --config build.rustc-wrapper=/tmp/x` is
/// not what a rule `cargo build` allowed. `--manifest-path` and `-C DIR` build a package (and
/// run its build scripts) that outside the writable roots is not the project's;
/// `--target-dir`, `--artifact-dir`/`--out-dir` and `--lockfile-path` write where they name.
/// cargo's parser (clap) takes long options exactly, as `--name=value` or `--name value`,
/// before or after the subcommand, up to `--`; a short cluster may end in `-Z`/`-C` with its
/// value attached (`-vZfoo`). The key is left as written: `cargo build` rules keep matching.
pub(super) fn cargo(args: &[Word], out: &mut Examined) {
    // The subcommand: the first word that is neither an option nor a global option's value.
    let subcommand = {
        let mut j = 0;
        loop {
            match args.get(j) {
                None => break None,
                // `+toolchain` (rustup's) comes before everything.
                Some(w) if j == 0 && w.text.starts_with('+') => j += 1,
                Some(w) if w.text.starts_with('-') => {
                    let separate = matches!(w.text.as_str(), "--config" | "-Z" | "-C" | "--color");
                    j += if separate { 2 } else { 1 };
                }
                Some(_) => break Some(j),
            }
        }
    };
    // Round 6: `cargo +/path/to/toolchain` runs that directory's `bin/cargo` and `rustc`
    // (rustup takes a path for a toolchain), not the cargo the rule names; `+nightly` names
    // one the operator installed.
    if let Some(w) = args.first().filter(|w| w.text.starts_with('+')) {
        if !w.literal || w.text.contains(['/', '.']) {
            out.effect(
                EffectKind::Runs,
                &w.text,
                format!(
                    "`cargo {}` runs the cargo and rustc of the toolchain at that path",
                    w.text
                ),
            );
        }
    }
    // `cargo rustc -- ARGS` and `cargo rustdoc -- ARGS` pass ARGS to rustc (`-C linker=PROG`).
    if let Some(sub) = subcommand.and_then(|k| args.get(k)) {
        if matches!(sub.text.as_str(), "rustc" | "rustdoc") {
            if let Some(dash) = args.iter().position(|w| w.literal && w.text == "--") {
                super::toolchain::rustc_options(&args[dash + 1..], out);
            }
        }
    }
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            // `"$x"`, `*`: may be `--config=…` when the line runs.
            let raw = w.raw.trim_start_matches(['"', '\'']);
            if !w.single || raw.starts_with('-') || raw.starts_with('$') {
                out.effect(
                    EffectKind::Runs,
                    UNKNOWN_OPTION,
                    format!(
                        "`{}` is only known when the line runs and may be any cargo option, `--config` included",
                        w.text
                    ),
                );
            }
            continue;
        }
        let t = w.text.as_str();
        if t == "--" {
            break;
        }
        // Round 6: `cargo install` writes its binaries into `--root DIR`'s `bin` (by default
        // `~/.cargo/bin`, on the operator's PATH), building them from `--path DIR`.
        // `cargo login`/`logout` write the token file in cargo's home.
        if matches!(t, "login" | "logout") && Some(i - 1) == subcommand {
            out.write(&Word::lit("~/.cargo/credentials.toml"));
            continue;
        }
        if t == "vendor" && Some(i - 1) == subcommand {
            cargo_vendor(&args[i..], out);
            continue;
        }
        // Round 11: `cargo binstall` (cargo-binstall) installs a release binary the same way.
        if matches!(t, "install" | "binstall") && Some(i - 1) == subcommand {
            let mut root = false;
            let mut j = i;
            while let Some(a) = args.get(j) {
                j += 1;
                let (name, value) = match a.text.split_once('=') {
                    Some((n, v)) if a.literal => (n, Some(Word::lit(v))),
                    _ => (a.text.as_str(), None),
                };
                if !matches!(name, "--root" | "--path") {
                    continue;
                }
                let Some(v) = value.or_else(|| args.get(j).cloned()) else {
                    continue;
                };
                if name == "--root" {
                    root = true;
                    out.write(&v);
                } else {
                    out.code_at(&v, "`cargo install --path` builds, and runs the build scripts of, the package at");
                }
            }
            if !root {
                out.write(&Word::lit("~/.cargo/bin"));
            }
            continue;
        }
        let (option, attached): (String, Option<&str>) = if let Some(long) = t.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v)),
                None => (t.to_string(), None),
            }
        } else if let Some(cluster) = t.strip_prefix('-') {
            match cluster.find(['Z', 'C']) {
                Some(at) => {
                    let rest = &cluster[at + 1..];
                    (
                        format!("-{}", &cluster[at..=at]),
                        (!rest.is_empty()).then_some(rest),
                    )
                }
                None => continue,
            }
        } else {
            continue;
        };
        let takes = matches!(
            option.as_str(),
            "--config"
                | "-Z"
                | "--manifest-path"
                | "-C"
                | "--target-dir"
                | "--artifact-dir"
                | "--out-dir"
                | "--lockfile-path"
        );
        if !takes {
            continue;
        }
        let value = match attached {
            Some(v) => Some(Word::lit(v)),
            None => {
                let next = args.get(i).cloned();
                i += 1;
                next
            }
        };
        match option.as_str() {
            "--config" => out.effect(
                EffectKind::Runs,
                "--config",
                "`cargo --config` sets configuration, which can name programs cargo runs (`build.rustc-wrapper`, `target.*.runner`, linkers)".into(),
            ),
            "-Z" => out.effect(
                EffectKind::Runs,
                "-Z",
                "`cargo -Z` turns on unstable behaviour (config includes, scripts)".into(),
            ),
            "--manifest-path" | "-C" => {
                if let Some(v) = &value {
                    out.code_at(v, "builds the package, and runs its build scripts, at");
                }
            }
            _ => {
                if let Some(v) = &value {
                    out.write(v);
                }
            }
        }
    }
}

/// Round 10: `cargo vendor [DIR]` empties DIR (`vendor` by default) unless `--no-delete`, then
/// writes each crate's sources under it: the real cargo 1.95's `cargo vendor .git` removed the
/// repository's `config`, `HEAD` and `objects` and left a crate's directory there. The crates'
/// files are names the line does not show (a crate may hold an `.envrc` or editor settings);
/// DIR is judged as a write (outside the roots, or cordon's own files). The words after
/// `vendor` are its options, the value of those that take one, and DIR.
fn cargo_vendor(args: &[Word], out: &mut Examined) {
    if args
        .iter()
        .any(|w| matches!(w.text.as_str(), "-h" | "--help"))
    {
        return;
    }
    let mut dir = None;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if w.literal && t == "--" {
            dir = dir.or_else(|| args.get(i).cloned());
            break;
        }
        if w.literal && t.starts_with('-') {
            let takes = matches!(
                t,
                "-s" | "--sync"
                    | "--manifest-path"
                    | "--config"
                    | "-Z"
                    | "--color"
                    | "--lockfile-path"
                    | "-C"
            );
            i += usize::from(takes);
            continue;
        }
        if dir.is_none() {
            dir = Some(w.clone());
        }
    }
    let dir = dir.unwrap_or_else(|| Word::lit("vendor"));
    out.write(&dir);
    let empties = if args.iter().any(|w| w.text == "--no-delete") {
        ""
    } else {
        "removes what it held and "
    };
    out.unshown(format!(
        "`cargo vendor` {empties}writes the crates' sources under `{}`",
        dir.text
    ));
}

/// go: `-exec PROG` (test, run) runs the binary through PROG, `-toolexec PROG` runs every tool
/// of the build through it, `vet -vettool PROG` runs PROG, and `-ldflags` with `-extld` names
/// the external linker: code the line does not show, so `go test -exec /tmp/x ./...` is not
/// what a rule `go test` allowed (the real go ran `/tmp/x`). `-C DIR`, `-modfile`, `-overlay`
/// take the build from elsewhere (outside the writable roots, not the project's code); `-o`,
/// `-outputdir` and the profile files are writes; `go env -w`/`-u` writes go's environment file,
/// which every later go command reads (`GOFLAGS=-toolexec=…`). go's flag package takes `-name`
/// and `--name`, `=value` or the next word, and `go test` flags may follow the packages, up to
/// `-args`.
pub(super) fn go(args: &[Word], out: &mut Examined) {
    const PROFILES: &[&str] = &[
        "o",
        "outputdir",
        "coverprofile",
        "cpuprofile",
        "memprofile",
        "blockprofile",
        "mutexprofile",
        "trace",
    ];
    const ELSEWHERE: &[&str] = &["C", "modfile", "overlay"];
    const VALUED: &[&str] = &["exec", "toolexec", "vettool", "ldflags"];
    let sub = args.first().filter(|w| w.literal).map(|w| w.text.as_str());
    // Round 10: `go install` writes the programs it builds into `$GOBIN`, by default
    // `~/go/bin` (on the operator's PATH), as `cargo install` writes `~/.cargo/bin` (the real
    // go 1.19 wrote `$GOPATH/bin/NAME`).
    if sub == Some("install") {
        out.write(&Word::lit("~/go/bin"));
    }
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            let raw = w.raw.trim_start_matches(['"', '\'']);
            if !w.single || raw.starts_with('-') || raw.starts_with('$') {
                out.effect(
                    EffectKind::Runs,
                    UNKNOWN_OPTION,
                    format!(
                        "`{}` is only known when the line runs and may be any go flag, `-toolexec` included",
                        w.text
                    ),
                );
            }
            continue;
        }
        let t = w.text.as_str();
        if t == "-args" || t == "--args" || t == "--" {
            break;
        }
        let Some(flag) = t.strip_prefix("--").or_else(|| t.strip_prefix('-')) else {
            continue;
        };
        let (name, attached) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (flag, None),
        };
        // `go test` also takes the test binary's flags as `-test.NAME`.
        let name = name.strip_prefix("test.").unwrap_or(name);
        if sub == Some("env") && matches!(name, "w" | "u") {
            out.effect(
                EffectKind::Runs,
                t,
                "`go env -w`/`-u` changes go's environment file, which every later go command reads (GOFLAGS, GOTOOLCHAIN, …)".into(),
            );
            continue;
        }
        let known = PROFILES.contains(&name) || ELSEWHERE.contains(&name) || VALUED.contains(&name);
        if !known {
            continue;
        }
        let value = match attached {
            Some(v) => Some(Word::lit(v)),
            None => {
                let next = args.get(i).cloned();
                i += 1;
                next
            }
        };
        match name {
            "exec" | "toolexec" | "vettool" => out.effect(
                EffectKind::Runs,
                &format!("-{name}"),
                format!(
                    "`go -{name}` runs a program the line names around the build or its binaries"
                ),
            ),
            "ldflags" => {
                let extld = value.as_ref().is_none_or(|v| {
                    !v.literal || v.text.contains("extld") || v.text.contains("linkmode")
                });
                if extld {
                    out.effect(
                        EffectKind::Runs,
                        "-ldflags",
                        "`go -ldflags` with `-extld`/`-linkmode` names the external linker go runs"
                            .into(),
                    );
                }
            }
            _ if ELSEWHERE.contains(&name) => {
                if let Some(v) = &value {
                    out.code_at(v, "builds, and runs, the code named at");
                }
            }
            _ => {
                if let Some(v) = &value {
                    out.write(v);
                }
            }
        }
    }
}

/// zip: `-T` tests the archive with `-TT CMD`/`--unzip-command CMD` (abbreviations too: zip's
/// own parser takes them, `--unzip-c=…`; checked with the real zip), a command run through the
/// shell; the archive (the first operand, or `-O`/`--output-file`) is written.
pub(super) fn zip(args: &[Word], out: &mut Examined) {
    // Options whose value is the next word.
    const VALUED: &[&str] = &[
        "-b", "-n", "-t", "-tt", "-P", "-Z", "-s", "-sp", "-O", "-TT", "-ds",
    ];
    let mut archive_seen = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            let raw = w.raw.trim_start_matches(['"', '\'']);
            if !w.single || raw.starts_with('-') || raw.starts_with('$') {
                out.effect(
                    EffectKind::Runs,
                    UNKNOWN_OPTION,
                    format!(
                        "`{}` is only known when the line runs and may be `-TT CMD`",
                        w.text
                    ),
                );
            }
            archive_seen = true;
            continue;
        }
        let t = w.text.as_str();
        if t == "--" {
            if let Some(a) = args.get(i).filter(|_| !archive_seen) {
                out.write(a);
            }
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(Word::lit(v))),
                None => (long, None),
            };
            if name.len() >= 3 && "unzip-command".starts_with(name) {
                out.effect(
                    EffectKind::Runs,
                    "-TT",
                    "zip `--unzip-command` runs a command to test the archive".into(),
                );
            }
            if name.len() >= 3 && "output-file".starts_with(name) {
                let v = value.or_else(|| {
                    i += 1;
                    args.get(i - 1).cloned()
                });
                if let Some(v) = v {
                    out.write(&v);
                }
            }
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            if t == "-TT" || (t.starts_with("-TT") && t.len() > 3) {
                out.effect(
                    EffectKind::Runs,
                    "-TT",
                    "zip `-TT CMD` runs CMD to test the archive".into(),
                );
            }
            if VALUED.contains(&t) {
                if t == "-O" {
                    if let Some(v) = args.get(i) {
                        out.write(v);
                    }
                }
                i += 1;
            }
            continue;
        }
        if !archive_seen {
            archive_seen = true;
            out.write(w);
        }
    }
}

/// pytest: the test files and directories it imports (its operands, `FILE::test` node ids
/// included) run code, which outside the writable roots is not the project's; `@FILE` reads
/// more arguments from a file (argparse's `fromfile_prefix_chars`); `-p NAME` imports a plugin
/// (`-p no:NAME` only disables one); `-W` with a dotted warning category imports its module.
pub(super) fn pytest(p: &Parsed, out: &mut Examined) {
    for w in &p.operands {
        if w.text.starts_with('@') || !w.literal && w.raw.starts_with('@') {
            out.effect(
                EffectKind::Runs,
                if w.literal { &w.text } else { UNKNOWN_OPTION },
                format!("`{}` reads more pytest arguments from a file", w.text),
            );
            continue;
        }
        let path = w.text.split("::").next().unwrap_or(&w.text);
        let file = Word {
            text: path.to_string(),
            ..w.clone()
        };
        out.code_at(&file, "runs the test code in");
    }
    // Plugins add options of their own, many naming a file they write (`--cache-dir`-like):
    // one the table does not know, given a path, is judged as a write of it.
    let spec = super::table::PROGRAMS
        .iter()
        .find(|p| p.names.contains(&"pytest"))
        .map(|p| p.spec);
    for o in &p.opts {
        let Some(long) = o.name.strip_prefix("--") else {
            continue;
        };
        let known = spec.is_some_and(|s| {
            [s.long_arg, s.long_flag, s.long_opt]
                .iter()
                .any(|list| list.contains(&long))
        });
        if let Some(a) = o.arg.as_ref().filter(|a| !known && a.text.contains('/')) {
            out.write(a);
        }
    }
    for o in &p.opts {
        let value = o.arg.as_ref();
        match o.name.as_str() {
            "-p" if !value.is_some_and(|v| v.literal && v.text.starts_with("no:")) => {
                out.effect(
                    EffectKind::Runs,
                    "-p",
                    "`pytest -p NAME` imports a plugin module".into(),
                );
            }
            "-W" | "--pythonwarnings" => {
                // action:message:category:module:lineno; a dotted category is imported.
                let imports = value.is_none_or(|v| {
                    !v.literal || v.text.split(':').nth(2).is_some_and(|c| c.contains('.'))
                });
                if imports {
                    out.effect(
                        EffectKind::Runs,
                        &o.name,
                        format!(
                            "`pytest {}` with a dotted warning category imports its module",
                            o.name
                        ),
                    );
                }
            }
            _ => {}
        }
    }
}

/// unzip (Info-ZIP 6): unless it only lists, tests or prints (`-l`, `-v`, `-t`, `-p`, `-c`,
/// `-z`, `-Z`), it writes the archive's members under `-d DIR` (anywhere on the line, or
/// attached: `-dDIR`, `-qod DIR`) or the current directory: names the line does not show.
/// `-:` lets members climb out with `../`.
pub(super) fn unzip(args: &[Word], out: &mut Examined) {
    let mut lists = false;
    let mut dirs: Vec<Word> = Vec::new();
    let mut i = 0;
    let mut excluding = false;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            if w.text.starts_with('-') || !excluding {
                out.effect(
                    EffectKind::Runs,
                    UNKNOWN_OPTION,
                    format!(
                        "`{}` is only known when the line runs and may be any unzip option",
                        w.text
                    ),
                );
            }
            continue;
        }
        let Some(cluster) = w.text.strip_prefix('-').filter(|c| !c.is_empty()) else {
            continue;
        };
        excluding = false;
        for (k, c) in cluster.char_indices() {
            match c {
                'l' | 'v' | 't' | 'p' | 'c' | 'z' | 'Z' => lists = true,
                ':' => out.effect(
                    EffectKind::Writes,
                    "-:",
                    "unzip `-:` writes members named with `../` outside the directory".into(),
                ),
                'x' => excluding = true,
                'd' => {
                    let rest = &cluster[k + 1..];
                    if rest.is_empty() {
                        if let Some(d) = args.get(i) {
                            dirs.push(d.clone());
                            i += 1;
                        }
                    } else {
                        dirs.push(Word::lit(rest));
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    if lists {
        return;
    }
    if dirs.is_empty() {
        out.writes.push(".".into());
    }
    for d in &dirs {
        out.write(d);
    }
    out.unshown(
        "unzip writes the names the archive holds, which the line does not show (any may be on the persistence surface: `.git/hooks/…`, `.envrc`)".into());
}

/// patch (GNU): without an ORIGINALFILE operand (or `-o FILE`) it writes the files the patch
/// names, which the line does not show; `-B`/`-Y`/`-z` name backups by a prefix or suffix of
/// the line's choosing. `--dry-run` writes nothing.
pub(super) fn patch(p: &Parsed, out: &mut Examined) {
    if p.has(&["--dry-run", "-C", "--check"]) {
        return;
    }
    if let Some(original) = p.operands.first() {
        out.write(original);
    } else if !p.has(&["-o", "--output"]) {
        out.unshown(
            "patch writes the files the patch names, which the line does not show (any may be on the persistence surface: `.envrc`, `.git/hooks/…`)".into());
    }
    for o in [
        "-B",
        "--prefix",
        "-Y",
        "--basename-prefix",
        "-z",
        "--suffix",
    ] {
        if p.has(&[o]) {
            out.unshown(format!(
                "patch `{o}` names its backup files by what it is given (a prefix or a suffix)"
            ));
        }
    }
}

/// gzip, bzip2, xz, zstd and their `un…` names: each file operand is replaced by one whose name
/// the program derives — the operand without its suffix when decompressing (`gunzip
/// .envrc.gz` writes `.envrc`), with the suffix when compressing (`gzip -S rc .env` writes
/// `.envrc`). `-c`/`--stdout`, `-t`, `-l` write no file; `-r` names the files in a directory.
/// Round 7: decompressing with `-N`/`--name` (gzip, pigz) restores the name stored in the
/// archive, which the line does not show; zstd's `--output-dir-flat DIR` and
/// `--output-dir-mirror DIR` put the derived names in DIR; `uncompress` is gzip's `gzip -d`.
pub(super) fn compressor(base: &str, args: &[Word], out: &mut Examined) {
    let spec = Spec {
        short_arg: "SboTFM",
        long_arg: &[
            "suffix",
            "output",
            "format",
            "threads",
            "memlimit",
            "block-size",
            "output-dir-flat",
            "output-dir-mirror",
            "trace",
            "filelist",
        ],
        long_opt: &["files", "files0"],
        long_flag: &[
            "stdout",
            "to-stdout",
            "decompress",
            "uncompress",
            "test",
            "list",
            "recursive",
            "keep",
        ],
        lenient: true,
        ..Spec::NONE
    };
    let p = parse(args, &spec, true);
    if p.has(&[
        "-c",
        "--stdout",
        "--to-stdout",
        "-t",
        "--test",
        "-l",
        "--list",
    ]) {
        return;
    }
    // Round 11: zstd's `--trace LOG` writes LOG (the real zstd 1.5 did); `--filelist` (xz's
    // `--files`) reads the names to compress from a file.
    for o in p.args(&["-o", "--output", "--trace"]) {
        out.write(o);
    }
    if p.has(&["--filelist", "--files", "--files0"]) {
        out.unshown(format!(
            "`{base}` reads the names of the files it writes from a list"
        ));
    }
    let decompressing = p.has(&["-d", "--decompress", "--uncompress"])
        || base.starts_with("un")
        || base == "gunzip";
    if decompressing && p.has(&["-N", "--name"]) {
        out.unshown(format!(
            "`{base} -N` names the file it writes after the name stored in the archive"
        ));
    }
    if p.has(&["-r", "--recursive"]) || p.dynamic.is_some() {
        out.unshown(format!(
            "`{base}` names the files it writes after names the line does not show"
        ));
    }
    let suffixes: Vec<&Word> = p.args(&["-S", "--suffix"]).collect();
    if suffixes.iter().any(|s| !s.literal) {
        out.unshown(format!(
            "`{base}`'s suffix is only known when the line runs"
        ));
    }
    const KNOWN: &[(&str, &str)] = &[
        (".tgz", ".tar"),
        (".taz", ".tar"),
        (".tbz", ".tar"),
        (".tbz2", ".tar"),
        (".txz", ".tar"),
        (".tzst", ".tar"),
        (".gz", ""),
        ("-gz", ""),
        (".z", ""),
        ("-z", ""),
        ("_z", ""),
        (".bz2", ""),
        (".bz", ""),
        (".xz", ""),
        (".lzma", ""),
        (".zst", ""),
    ];
    let flat: Vec<&Word> = p.args(&["--output-dir-flat"]).collect();
    let mirror: Vec<&Word> = p.args(&["--output-dir-mirror"]).collect();
    for f in p.operands.iter().filter(|f| f.text != "-") {
        if !f.literal {
            out.unshown(format!("`{base}` writes a file named after `{}`", f.text));
            continue;
        }
        // Both ways, whichever mode the options chose: a name is only ever judged more.
        // Round 11: compressing writes the name with the program's suffix and removes the
        // file itself (`gzip /tmp/e/a` replaced a file outside the roots, and `zstd
        // --output-dir-flat DIR a` wrote `DIR/a.zst`; both were allowed): both are writes.
        let mut names = vec![f.text.clone(), format!("{}{}", f.text, suffix_of(base))];
        let lower = f.text.to_ascii_lowercase();
        for (end, to) in KNOWN {
            if lower.ends_with(end) && f.text.len() > end.len() {
                names.push(format!("{}{to}", &f.text[..f.text.len() - end.len()]));
            }
        }
        for s in suffixes.iter().filter(|s| s.literal && !s.text.is_empty()) {
            names.push(format!("{}{}", f.text, s.text));
            if let Some(stripped) = f.text.strip_suffix(s.text.as_str()) {
                names.push(stripped.to_string());
            }
        }
        for name in names {
            let file = name.rsplit('/').next().unwrap_or(&name);
            for d in &flat {
                out.write(&Word {
                    text: format!("{}/{file}", d.text.trim_end_matches('/')),
                    raw: String::new(),
                    literal: d.literal,
                    single: true,
                });
            }
            for d in &mirror {
                out.write(&Word {
                    text: format!("{}/{name}", d.text.trim_end_matches('/')),
                    raw: String::new(),
                    literal: d.literal,
                    single: true,
                });
            }
            out.writes.push(name);
        }
    }
}

/// The suffix a compressor gives the files it writes.
fn suffix_of(base: &str) -> &'static str {
    [
        ("bz", ".bz2"),
        ("xz", ".xz"),
        ("lzma", ".lzma"),
        ("zst", ".zst"),
        ("compress", ".Z"),
    ]
    .into_iter()
    .find(|(part, _)| base.contains(part))
    .map_or(".gz", |(_, suffix)| suffix)
}

/// `lz4 [-d] IN OUT` writes OUT (the real lz4 1.9 decompressed into `.envrc`); with one operand,
/// or each of `-m`'s, a name derived from it: the operand without `.lz4` (decompressing) or
/// with it (compressing), both judged. `-c`, `-t`, `--list` and `lz4cat` write no file.
pub(super) fn lz4(base: &str, args: &[Word], out: &mut Examined) {
    let spec = Spec {
        short_arg: "B",
        long_flag: &[
            "stdout",
            "to-stdout",
            "test",
            "list",
            "multiple",
            "decompress",
        ],
        lenient: true,
        ..Spec::NONE
    };
    let p = parse(args, &spec, true);
    if p.has(&["-c", "--stdout", "--to-stdout", "-t", "--test", "--list"]) {
        return;
    }
    if p.dynamic.is_some() || p.operands.iter().any(|w| !w.literal) {
        return out.unshown(format!(
            "`{base}` writes a name only known when the line runs"
        ));
    }
    let files: Vec<&Word> = p.operands.iter().filter(|w| w.text != "-").collect();
    if !p.has(&["-m", "--multiple"]) && p.operands.len() == 2 {
        if p.operands[1].text != "stdout" {
            out.write(&p.operands[1]);
        }
        return;
    }
    for f in files {
        if let Some(stem) = f.text.strip_suffix(".lz4") {
            out.write(&Word::lit(stem));
        }
        out.write(&Word::lit(&format!("{}.lz4", f.text)));
    }
}

/// `chmod`/`chown`/`chgrp -R` change every file under the directories named, names the line
/// does not show (a planted `.git/hooks/pre-commit` becomes executable).
pub(super) fn modes(p: &Parsed, out: &mut Examined) {
    if p.has(&["-R", "--recursive"]) {
        out.unshown(
            "a recursive mode or owner change reaches names the line does not show (`chmod -R +x` makes a hook in the tree executable)".into(),
        );
    }
}

/// `mktemp [TEMPLATE]` makes a new file (or directory) from TEMPLATE in `-p DIR`/`--tmpdir=DIR`,
/// or, without them and `-t`, where TEMPLATE says (relative to the current directory); the
/// `X`s become random letters, so the template's place is what is judged. Without a template
/// and a directory, a fresh random name in the temporary directory.
pub(super) fn mktemp(p: &Parsed, out: &mut Examined) {
    let dir = p.args(&["-p", "--tmpdir"]).last();
    let template = p.operands.first();
    let join = |d: &Word, name: &str| Word {
        text: format!("{}/{name}", d.text.trim_end_matches('/')),
        raw: String::new(),
        literal: d.literal,
        single: true,
    };
    match (template, dir) {
        (Some(t), Some(d)) if t.literal => out.write(&join(d, &t.text)),
        (Some(t), Some(_)) => out.write(t),
        (Some(t), None) if !p.has(&["-t"]) => out.write(t),
        (None, Some(d)) => out.write(&join(d, "tmp.XXXXXXXXXX")),
        _ => {}
    }
}

/// `uniq [INPUT [OUTPUT]]` and `xxd [INFILE [OUTFILE]]` write their second operand.
pub(super) fn second_operand_written(p: &Parsed, out: &mut Examined) {
    // Round 11: a first word that may become several (`uniq *`, `xxd "$@"`) puts a name only
    // known when the line runs second (`uniq *` wrote `a.txt` over `cordon.toml`).
    let at = match p.operands.first() {
        Some(first) if !first.single => 0,
        _ => 1,
    };
    if let Some(w) = p.operands.get(at) {
        out.write(w);
    }
}

/// `split [FILE [PREFIX]]` and `csplit -f PREFIX FILE PATTERN…` write PREFIX followed by a
/// generated suffix (`split`: letters or digits, then `--additional-suffix`; `csplit`: the
/// `-b` printf format, whose number may render as nothing: `-b 'rc%.0d'` makes `PREFIXrc`).
/// The prefix's place is judged as a write, and each name on the persistence surface the
/// generated names could be (`split -a1 x .git/hooks/pre-commi` makes `pre-commit`).
pub(super) fn split(p: &Parsed, out: &mut Examined) {
    let prefix = p.operands.get(1).cloned().unwrap_or_else(|| Word::lit("x"));
    let tail = match p.args(&["--additional-suffix"]).last() {
        None => Some("*".to_string()),
        Some(s) if s.literal => Some(format!("*{}", glob_escape(&s.text))),
        Some(_) => None,
    };
    generated(&prefix, tail, out);
}

pub(super) fn csplit(p: &Parsed, out: &mut Examined) {
    let prefix = p.args(&["-f", "--prefix"]).last().cloned();
    let tail = match p.args(&["-b", "--suffix-format"]).last() {
        None => Some("*".to_string()),
        Some(f) if f.literal => printf_glob(&f.text),
        Some(_) => None,
    };
    generated(&prefix.unwrap_or_else(|| Word::lit("xx")), tail, out);
}

/// Names made of `prefix` and a generated `tail` (a glob; `None` when only known at run time).
fn generated(prefix: &Word, tail: Option<String>, out: &mut Examined) {
    let Some(tail) = tail.filter(|t| !t.contains('/')) else {
        out.unshown("the suffix of the names it writes is only known when the line runs, or names a directory".into());
        return;
    };
    out.write(prefix);
    if !prefix.literal {
        return; // judged outside the roots
    }
    let (dir, base) = match prefix.text.rsplit_once('/') {
        Some((d, b)) => (Some(d), b),
        None => (None, prefix.text.as_str()),
    };
    let pattern = format!("{}{tail}", glob_escape(base));
    for name in super::surface_names().filter(|n| super::glob_matches(&pattern, n)) {
        out.writes.push(match dir {
            Some(d) => format!("{d}/{name}"),
            None => name.to_string(),
        });
    }
}

/// A printf format as a glob of what it renders: each conversion may be any text, also none.
fn printf_glob(format: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push_str(&glob_escape(&c.to_string()));
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // Flags, width, precision, then the conversion letter.
        loop {
            match chars.next() {
                Some(c) if c.is_ascii_alphabetic() => break,
                Some(_) => continue,
                None => return None,
            }
        }
        out.push('*');
    }
    Some(out)
}

fn glob_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = matches!(c, '*' | '?' | '[' | ']' | '\\');
            escape.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// The file name a download of `url` gets: the last segment of its path (wget keeps the query),
/// `index.html` for a directory. `None` when the URL is only known at run time or uses curl's
/// globbing (`{a,b}`, `[1-3]`, which `#1` in `-o` turns into names).
fn url_name(url: &Word, keep_query: bool) -> Option<String> {
    if !url.literal || url.text.contains(['{', '[']) {
        return None;
    }
    let t = url.text.split('#').next().unwrap_or("");
    let t = if keep_query {
        t
    } else {
        t.split('?').next().unwrap_or("")
    };
    let path = t
        .split_once("://")
        .map_or(t, |(_, rest)| rest.split_once('/').map_or("", |(_, p)| p));
    let name = path.rsplit('/').next().unwrap_or("");
    Some(if name.is_empty() { "index.html" } else { name }.to_string())
}

fn join_dir(dir: Option<&Word>, name: &str) -> Word {
    match dir {
        Some(d) => Word {
            text: format!("{}/{name}", d.text.trim_end_matches('/')),
            raw: String::new(),
            literal: d.literal,
            single: true,
        },
        None => Word::lit(name),
    }
}

/// wget without `-O` writes each URL's name (in `-P DIR`); a recursive, mirrored or
/// server-named download, `-x` and `-i FILE` write names the line does not show.
pub(super) fn wget(p: &Parsed, out: &mut Examined) {
    if p.has(&["-O", "--output-document"]) {
        return;
    }
    let unshown = [
        "-r",
        "--recursive",
        "-m",
        "--mirror",
        "-p",
        "--page-requisites",
        "-x",
        "--force-directories",
        "--content-disposition",
        "--trust-server-names",
        "-i",
        "--input-file",
    ];
    if p.has(&unshown) {
        out.unshown("wget writes the names the server's pages or headers give, which the line does not show".into());
        return;
    }
    let dir = p.args(&["-P", "--directory-prefix"]).last();
    for url in &p.operands {
        match url_name(url, true) {
            Some(name) => out.write(&join_dir(dir, &name)),
            None => out.unshown(format!(
                "wget `{}` writes a name only known when the line runs",
                url.text
            )),
        }
    }
}

/// curl `-O`/`--remote-name(-all)` writes each URL's name (in `--output-dir`); `-J` takes
/// the name from the server's header, and URL globbing (`{a,b}`, `[1-3]`) makes the names
/// `-o '#1'` or `-O` write.
pub(super) fn curl(p: &Parsed, out: &mut Examined) {
    // curl ≥ 8.3 (its manual, `-w`): `%output{FILE}` (`%output{>>FILE}` appends) in the
    // write-out format sends what follows to FILE; `-w @FILE` (`@-`) reads the format from a
    // file or the input. (A `%%` escape is still read as a write: the worst for us.)
    for format in p.args(&["-w", "--write-out"]) {
        if !format.literal || format.text.starts_with('@') {
            out.unshown(format!(
                "curl's write-out format `{}` is only known when it runs, and its `%output{{FILE}}` writes FILE",
                format.text
            ));
            continue;
        }
        let mut rest = format.text.as_str();
        while let Some(at) = rest.find("%output{") {
            let after = &rest[at + "%output{".len()..];
            let Some(end) = after.find('}') else {
                out.unshown(format!(
                    "curl's write-out format `{}` writes a file",
                    format.text
                ));
                break;
            };
            out.write(&Word::lit(after[..end].trim_start_matches(">>")));
            rest = &after[end..];
        }
    }
    let globbing = !p.has(&["-g", "--globoff"]);
    let globbed = globbing && p.operands.iter().any(|u| u.text.contains(['{', '[']));
    let remote = p.has(&["-O", "--remote-name", "--remote-name-all"]);
    // A glob names files only through `-O` (each URL's last part) or an `-o` template's `#N`;
    // without them every transfer goes to stdout or the one file `-o` names (judged as written
    // by the table).
    let numbered = p.args(&["-o", "--output"]).any(|o| o.text.contains('#'));
    if p.has(&["-J", "--remote-header-name"]) || (globbed && (remote || numbered)) {
        out.unshown("curl writes names from the server's header or the URL's glob, which the line does not show".into());
        return;
    }
    if !remote {
        return;
    }
    let dir = p.args(&["--output-dir"]).last();
    for url in p.operands.iter().chain(p.args(&["--url"])) {
        match url_name(url, false) {
            Some(name) => out.write(&join_dir(dir, &name)),
            None => out.unshown(format!(
                "curl `{}` writes a name only known when the line runs",
                url.text
            )),
        }
    }
}

/// ssh-keygen writes the key file `-f` names and `FILE.pub` (`-R`/`-H` rewrite a known-hosts
/// file and keep `FILE.old`); `-s` writes `KEY-cert.pub` beside each key it signs, `-Y sign`
/// writes `FILE.sig`; without `-f` a mode that writes reads the file's name from its input.
/// The modes that only print write nothing.
pub(super) fn ssh_keygen(p: &Parsed, out: &mut Examined) {
    if p.has(&["-l", "-y", "-e", "-i", "-B", "-F", "-Q", "-L", "-D"]) {
        return;
    }
    let beside = |w: &Word, suffix: &str| Word {
        text: format!("{}{suffix}", w.text),
        ..w.clone()
    };
    if p.has(&["-s"]) {
        for key in &p.operands {
            let stem = Word {
                text: key
                    .text
                    .strip_suffix(".pub")
                    .unwrap_or(&key.text)
                    .to_string(),
                ..key.clone()
            };
            out.write(&beside(&stem, "-cert.pub"));
        }
        return;
    }
    if let Some(action) = p.args(&["-Y"]).last() {
        if !action.literal || action.text == "sign" {
            for file in &p.operands {
                out.write(&beside(file, ".sig"));
            }
        }
        return;
    }
    match p.args(&["-f"]).last() {
        Some(file) => {
            out.write(file);
            out.write(&beside(file, ".pub"));
            if p.has(&["-R", "-H"]) {
                out.write(&beside(file, ".old"));
            }
        }
        None if p.has(&["-A"]) => {
            out.unshown("ssh-keygen -A writes the host keys under /etc/ssh".into());
        }
        None => {
            out.unshown("ssh-keygen reads the name of the key file it writes from its input".into())
        }
    }
}

/// `uudecode` without `-o` writes the name the encoded file's `begin` line gives.
pub(super) fn uudecode(p: &Parsed, out: &mut Examined) {
    if !p.has(&["-o", "--output-file"]) {
        out.unshown("uudecode writes the name the encoded file gives".into());
    }
}

/// `gpg FILE.gpg` (and `--decrypt-files`) writes FILE, the name without its suffix, unless
/// `-o` names the output or `-d` prints it.
pub(super) fn gpg(p: &Parsed, out: &mut Examined) {
    // Round 9: `--use-embedded-filename` (gpg takes any unambiguous abbreviation, `--use-e`
    // with the real GnuPG 2.2) writes the name stored in the packet, `-d` or not.
    let embedded = p.option_words.iter().any(|o| {
        let name = o.strip_prefix("--").unwrap_or("");
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        name.len() >= 3 && "use-embedded-filename".starts_with(name)
    });
    if embedded {
        out.unshown(
            "gpg `--use-embedded-filename` writes the name stored in the encrypted file".into(),
        );
    }
    if p.has(&["-o", "--output", "-d", "--decrypt"]) {
        return;
    }
    for w in &p.operands {
        if let Some(stem) = [".gpg", ".pgp", ".asc", ".sig"]
            .iter()
            .find_map(|x| w.text.strip_suffix(x))
        {
            out.write(&Word {
                text: stem.to_string(),
                raw: String::new(),
                literal: w.literal,
                single: true,
            });
        }
    }
}

/// Archivers that extract names the line does not show: `7z x`/`e`, `ar x`, `cpio -i`/`-p`,
/// `pax -r`, `jar x`. `key` holds the operation's letters (the first word, with or without
/// `-`).
pub(super) fn extractor(p: &Parsed, out: &mut Examined) {
    let letters = |w: &Word| {
        let t = w.text.trim_start_matches('-');
        !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric())
    };
    let first = p.operands.first().filter(|w| letters(w));
    let in_first = |c: char| first.is_some_and(|w| w.text.contains(c));
    let opt = |names: &[&str]| p.has(names);
    let extracts = opt(&["-x", "--extract"])
        || in_first('x')
        || (first.is_some_and(|w| w.text == "e"))
        || opt(&["-i", "-p", "--pass-through", "-r"]);
    if extracts {
        out.unshown("the archive's members are written under names the line does not show".into());
    }
}

/// Round 11: 7-Zip reads a switch anywhere on its line, also after the archive and the files:
/// the real 7zz 22 given `a x.7z *` in a directory holding a file named `-sdel` deleted the
/// files it archived. `-sdel` deletes; a word only known when the line runs may be it, or the
/// command (`x`). Then the extracting commands, as for the other archivers.
pub(super) fn sevenzip(p: &Parsed, out: &mut Examined) {
    // A word that starts with a known character other than `-` (`src/*`) never becomes a
    // switch; the first operand is the command.
    let known_start = |w: &Word| {
        w.text
            .starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_'))
    };
    for (i, w) in p.operands.iter().enumerate() {
        if !w.literal && (i == 0 || !known_start(w)) {
            out.effect(
                EffectKind::Runs,
                UNKNOWN_OPTION,
                format!("`{}` is only known when the line runs and may be any switch of 7-Zip (`-sdel` deletes the files it archives)", w.text),
            );
        }
    }
    if p.option_words
        .iter()
        .chain(p.operands.iter().map(|w| &w.text))
        .any(|t| t.to_ascii_lowercase().starts_with("-sdel"))
    {
        out.effect(
            EffectKind::Deletes,
            "-sdel",
            "`-sdel` deletes the files 7-Zip archived".into(),
        );
    }
    extractor(p, out);
}

/// `objcopy --dump-section NAME=FILE` writes the section to FILE.
pub(super) fn objcopy(p: &Parsed, out: &mut Examined) {
    for a in p.args(&["--dump-section"]) {
        match a.text.split_once('=') {
            Some((_, file)) if a.literal => out.write(&Word::lit(file)),
            _ => out.write(a),
        }
    }
}

/// util-linux `rename FROM TO FILE…`: each FILE becomes FILE with the first FROM (`-l` the
/// last, `-a` every one) replaced by TO, in the whole name (the real `rename.ul d/f .envrc d/f`
/// moved the file to `.envrc`): each new name is a write. `-s` changes where links point, a
/// name only known when the line runs may become anything.
pub(super) fn rename(p: &Parsed, out: &mut Examined) {
    if p.has(&["-n", "--no-act", "-h", "--help", "-V", "--version"]) {
        return;
    }
    let [from, to, files @ ..] = p.operands.as_slice() else {
        return;
    };
    if p.has(&["-s", "--symlink"])
        || p.dynamic.is_some()
        || !from.literal
        || !to.literal
        || files.iter().any(|f| !f.literal)
    {
        return out.unshown("`rename` writes names only known when the line runs".into());
    }
    for f in files {
        let name = &f.text;
        let renamed = if from.text.is_empty() {
            continue;
        } else if p.has(&["-a", "--all"]) {
            name.replace(&from.text, &to.text)
        } else if p.has(&["-l", "--last"]) {
            match name.rfind(&from.text) {
                Some(at) => format!(
                    "{}{}{}",
                    &name[..at],
                    to.text,
                    &name[at + from.text.len()..]
                ),
                None => continue,
            }
        } else {
            name.replacen(&from.text, &to.text, 1)
        };
        if &renamed != name {
            out.write(&Word::lit(&renamed));
        }
    }
}

/// Perl's `rename` (Debian's `rename`, `file-rename`, `prename`): its first operand is Perl
/// code it runs for each name (`s/x/…/e` runs anything).
pub(super) fn perl_rename(p: &Parsed, out: &mut Examined) {
    if p.has(&["-h", "--help", "-V", "--version"]) {
        return;
    }
    out.effect(
        EffectKind::Runs,
        "-e",
        "Perl's `rename` runs its expression as Perl code".into(),
    );
}

/// `crontab FILE` (`-`, `-e`), `at` and `batch` install a job the operator's cron or atd runs
/// later, outside any sandbox (the real `crontab -` wrote `/var/spool/cron/crontabs/root`), and
/// `crontab -r` removes the operator's: only listing (`-l`, with `-u USER`) passes.
pub(super) fn scheduler(p: &Parsed, out: &mut Examined) {
    let lists = p.dynamic.is_none()
        && p.operands.is_empty()
        && p.has(&["-l"])
        && p.opts
            .iter()
            .all(|o| matches!(o.name.as_str(), "-l" | "-u"));
    if !lists {
        out.effect(
            EffectKind::Runs,
            "schedule",
            "a scheduler entry (crontab, at) runs later as the operator, outside any sandbox"
                .into(),
        );
    }
}

/// `dpkg-deb` and `dpkg`: extracting (`-x`, `-X`, `-R`, `-e`), building and installing write
/// names the line does not show (the real `dpkg-deb -x` wrote the `.envrc` a package held), and
/// installing runs the package's maintainer scripts. Only the actions known to read pass: they
/// list, show or print a package or the database.
pub(super) fn package(p: &Parsed, out: &mut Examined) {
    const READS: &[&str] = &[
        "-c",
        "--contents",
        "-I",
        "--info",
        "-f",
        "--field",
        "-W",
        "--show",
        "--fsys-tarfile",
        "--ctrl-tarfile",
        "-l",
        "--list",
        "-L",
        "--listfiles",
        "-s",
        "--status",
        "-S",
        "--search",
        "-p",
        "--print-avail",
        "--get-selections",
        "--print-architecture",
        "--print-foreign-architectures",
        "-C",
        "--audit",
        "-V",
        "--verify",
        "--version",
        "--help",
        "-?",
    ];
    let writes = p.opts.iter().any(|o| {
        !READS.contains(&o.name.as_str())
            && !matches!(o.name.as_str(), "--admindir" | "--log" | "-D" | "--debug")
    });
    if p.dynamic.is_some() || writes || !p.has(READS) {
        out.unshown(
            "`dpkg`/`dpkg-deb` extracts, builds or installs a package: names the line does not show (and a package's maintainer scripts)".into(),
        );
    }
}

/// Round 6: `python SCRIPT` runs the script: code at a path outside the roots is an effect, as
/// for pytest (`python /tmp/e/x.py`); with no script (or `-`) and no `-c`/`-m`, python runs
/// what it reads from its input (`cat /tmp/e/x.py | python`), which the line does not show.
pub(super) fn python_script(p: &Parsed, out: &mut Examined) {
    if p.has(&[
        "-c",
        "-m",
        "-V",
        "--version",
        "-h",
        "-?",
        "--help",
        "--help-all",
    ]) {
        return;
    }
    match p.operands.first() {
        Some(w) if !(w.literal && w.text == "-") => out.code_at(w, "runs the script"),
        _ => out.effect(
            EffectKind::Runs,
            "-",
            "python runs the program it reads from its input, which the line does not show".into(),
        ),
    }
}

/// tcpdump names the pieces of a rotated capture after `-w FILE`: with `-G` FILE is an
/// strftime format (`%…` rendered when each piece opens), so a name with `%` is not the name
/// written. (`-C` appends digits, which no name on the persistence surface ends in.)
pub(super) fn tcpdump_files(p: &Parsed, out: &mut Examined) {
    if let Some(file) = p.args(&["-w"]).find(|w| w.text.contains('%')) {
        out.unshown(format!(
            "tcpdump renders `-w {}` as a time format for each file it rotates to",
            file.text
        ));
    }
}

/// `apt`/`apt-get VERB`: only the verbs that read the package lists pass, and the changing
/// verbs only simulated (`-s`). Installing, removing and upgrading write the system outside
/// the roots and run the packages' maintainer scripts as root; `update`, `source`,
/// `download` and `build-dep` write the lists, sources or packages they fetch (and `update`
/// runs `APT::Update::*-Invoke` hooks even simulated).
pub(super) fn apt_verbs(p: &Parsed, out: &mut Examined) {
    const READS: &[&str] = &[
        "list",
        "search",
        "show",
        "showsrc",
        "policy",
        "depends",
        "rdepends",
        "madison",
        "changelog",
        "indextargets",
        "help",
        "moo",
    ];
    const SIMULATED: &[&str] = &[
        "install",
        "reinstall",
        "remove",
        "purge",
        "upgrade",
        "dist-upgrade",
        "full-upgrade",
        "autoremove",
        "auto-remove",
        "autopurge",
        "satisfy",
        "check",
    ];
    let Some(verb) = p.operands.first() else {
        return; // prints its help
    };
    let simulated = p.has(&[
        "-s",
        "--simulate",
        "--just-print",
        "--dry-run",
        "--recon",
        "--no-act",
    ]);
    let t = verb.text.as_str();
    let reads = verb.literal && (READS.contains(&t) || (simulated && SIMULATED.contains(&t)));
    if !reads || p.dynamic.is_some() {
        out.effect(
            EffectKind::Runs,
            t,
            format!("APT's `{t}` changes the system outside the roots (the package lists, the packages and their maintainer scripts, run as root)"),
        );
    }
}
