//! Programs that run the commands they read: `openssl` (its own prompt when given no command,
//! and modules its options and configuration load), `sqlite3` (dot-commands and SQL that run
//! programs and write any file), `psql` (backslash commands, and SQL a server runs) and the
//! text editors (which read commands from their options, their start-up files and their input,
//! `printf ':!cmd\n' | vim -es`).

use super::{EffectKind, Examined, UNKNOWN_OPTION, UNSHOWN_NAMES};
use crate::shell::words::Word;

/// openssl's options whose argument is a file it writes.
const OPENSSL_WRITES: &[&str] = &[
    "out",
    "keyout",
    "writerand",
    "sess_out",
    "keylogfile",
    "msgfile",
    "reqout",
    "respout",
    "rspout",
    "certout",
    "chainout",
    "extracertsout",
    "cacertsout",
    "CAserial",
    "signer_out",
    "outdir",
];

/// openssl's options that load code: an engine or provider module, or a configuration file
/// (which may load modules of its own).
const OPENSSL_LOADS: &[&str] = &[
    "engine",
    "keygen_engine",
    "provider",
    "provider-path",
    "config",
    "ssl_config",
];

/// openssl's options with "out" in their name that write nothing.
const OPENSSL_OUT_FLAGS: &[&str] = &[
    "noout",
    "pubout",
    "outform",
    "timeout",
    "out_trusted",
    "passout",
    "no_out",
    "keyform",
    "outkey",
];

/// `openssl COMMAND OPTIONS…`: options are `-name`, `--name`, `-name=value` or `-name value`.
pub(super) fn openssl(args: &[Word], out: &mut Examined) {
    let Some(command) = args.first() else {
        out.effect(
            EffectKind::Runs,
            UNSHOWN_NAMES,
            "`openssl` without a command runs the commands it reads from its input".into(),
        );
        return;
    };
    if !command.literal {
        out.effect(
            EffectKind::Runs,
            UNKNOWN_OPTION,
            format!(
                "`{}` is only known when the line runs and may be any openssl command",
                command.text
            ),
        );
        return;
    }
    match command.text.as_str() {
        "s_client" | "s_server" | "s_time" | "ocsp" | "cmp" | "http" => out.effect(
            EffectKind::Network,
            &command.text,
            format!("`openssl {}` reaches the network", command.text),
        ),
        // Writes certificates, its database and serial files where its configuration says.
        "ca" | "srp" | "ts" => out.unshown(format!(
            "`openssl {}` writes files its configuration names",
            command.text
        )),
        _ => {}
    }
    let mut i = 1;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        if !w.literal {
            super::toolchain::unknown_option(args, i - 1, "openssl", out);
            continue;
        }
        let t = w.text.as_str();
        let Some(opt) = t.strip_prefix("--").or_else(|| t.strip_prefix('-')) else {
            continue;
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(Word::lit(v))),
            None => (opt, None),
        };
        let mut arg = || match &value {
            Some(v) => Some(v.clone()),
            None => {
                let a = args.get(i).cloned();
                i += 1;
                a
            }
        };
        if OPENSSL_WRITES.contains(&name) {
            if let Some(a) = arg() {
                out.write(&a);
            }
        } else if OPENSSL_LOADS.contains(&name) {
            arg();
            out.effect(
                EffectKind::Runs,
                &format!("-{name}"),
                format!("`openssl {t}` loads a module or a configuration that may load one"),
            );
        } else if name.contains("out") && !OPENSSL_OUT_FLAGS.contains(&name) {
            out.effect(
                EffectKind::Writes,
                &format!("-{name}"),
                format!("`openssl {t}` may write a file"),
            );
        }
    }
}

/// `sqlite3 [OPTIONS] [DB [SQL…]]`: its dot-commands and SQL run programs (`.shell`,
/// `.system`, `load_extension()`, `edit()`) and write any file (`.output`, `.once`,
/// `.backup`, `writefile()`, `ATTACH`, `VACUUM INTO`), from its arguments, `-cmd`, `-init`, the
/// operator's `~/.sqliterc` or its input. Under `-safe` it refuses all of them (checked with
/// sqlite 3.40), so then only the database is written.
pub(super) fn sqlite3(args: &[Word], out: &mut Examined) {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let only = |names: &[&str]| texts.len() == 1 && names.contains(&texts[0]);
    if only(&["-version", "--version", "-help", "--help"]) {
        return;
    }
    let safe = args.iter().all(|w| w.literal)
        && texts.iter().any(|t| opt(t) == Some("safe"))
        && !texts
            .iter()
            .any(|t| opt(t).is_some_and(|o| o.starts_with("unsafe")));
    if !safe {
        out.effect(
            EffectKind::Runs,
            UNSHOWN_NAMES,
            "`sqlite3` runs dot-commands and SQL that can run programs (`.shell`, `load_extension()`) or write any file (`.output`, `writefile()`, `ATTACH`), from its arguments, its input or `~/.sqliterc`; with `-safe` it refuses them".into(),
        );
    }
    // The database, the first operand: created or written. Options with an argument skipped.
    let with_arg = [
        "cmd",
        "init",
        "separator",
        "newline",
        "nullvalue",
        "vfs",
        "maxsize",
        "mmap",
        "pagecache",
        "lookaside",
        "heap",
        "nonce",
        "escape",
    ];
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        match opt(&w.text) {
            Some(o) if w.literal => {
                if with_arg.contains(&o) {
                    i += 1;
                }
            }
            _ => {
                out.write(w);
                return;
            }
        }
    }
}

/// Round 11: `psql` runs backslash commands from `-c`, `-f`, its input and the operator's
/// `~/.psqlrc`: `\! CMD` runs a shell command, `\o`/`\w`/`\copy … to` write any file, `\g |CMD`
/// pipes to a program. Its SQL runs on a server, outside any sandbox (`COPY … TO PROGRAM`
/// runs a program as the server's user). No mode refuses them, as sqlite3's `-safe` does, so
/// only the version and help are certain reads; an explicit rule naming psql lifts the rest.
pub(super) fn psql(args: &[Word], out: &mut Examined) {
    let reads_only = args.len() == 1
        && args[0].literal
        && matches!(args[0].text.as_str(), "--version" | "-V" | "--help" | "-?");
    if !reads_only {
        out.effect(
            EffectKind::Runs,
            UNSHOWN_NAMES,
            "`psql` runs backslash commands that run programs (`\\!`, `\\g |CMD`) or write any file (`\\o`, `\\w`, `\\copy`), from its arguments, its input or `~/.psqlrc`, and SQL on a server outside any sandbox (`COPY … TO PROGRAM`)".into(),
        );
    }
}

/// An option's name without its one or two dashes.
fn opt(t: &str) -> Option<&str> {
    t.strip_prefix("--").or_else(|| t.strip_prefix('-'))
}

/// The text editors: every run reads commands (`-c`, `+CMD`, `--eval`, `-S`, start-up files,
/// modelines, and its input when that is not a terminal), which may run programs or write
/// any file. Only the version and help are certain reads; an explicit rule naming the editor
/// lifts the rest.
pub(super) fn editor(base: &str, args: &[Word], out: &mut Examined) {
    let reads_only = args.len() == 1
        && args[0].literal
        && matches!(args[0].text.as_str(), "--version" | "--help" | "-h");
    if !reads_only {
        out.effect(
            EffectKind::Runs,
            base,
            format!("`{base}` runs the commands it reads (its options, start-up files and input), which may run programs or write any file"),
        );
    }
}

/// The editors [`editor`] judges, by basename.
pub(super) const EDITORS: &[&str] = &[
    "vi",
    "vim",
    "view",
    "vimdiff",
    "ex",
    "rvim",
    "rview",
    "gvim",
    "evim",
    "nvim",
    "vimx",
    "emacs",
    "emacsclient",
    "nano",
    "pico",
    "rnano",
    "ed",
    "red",
    "joe",
    "jed",
    "micro",
    "hx",
    "helix",
    "kak",
    "mcedit",
    "ne",
    "mg",
    // Debian's names: the builds of vim, and the alternatives that start the default editor.
    "vim.basic",
    "vim.tiny",
    "vim.nox",
    "vim.gtk",
    "vim.gtk3",
    "vim.athena",
    "editor",
    "sensible-editor",
    "nvi",
];
