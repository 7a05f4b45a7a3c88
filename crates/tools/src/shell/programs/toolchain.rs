//! Compilers and the tools of a toolchain: `cc`/`gcc`/`clang` and their C++ and cross
//! spellings, `cpp`, `rustc`, `ld`, `as`, `ar`, `ranlib`.
//!
//! Their options are many and some run other programs (`gcc -B DIR` runs `DIR/as`,
//! `-wrapper`, `-fplugin=`, `-specs=`, `-Wl,-plugin,…`, `clang -Xclang -load`, `rustc -C
//! linker=`) or write files the line names only indirectly (`-fopt-info=FILE`, `-dumpdir`,
//! `rustc --out-dir` with a name only the crate knows). So, unlike the getopt tables, these are
//! read the other way round: an option is allowed only when it is known to do nothing but
//! read and choose how to compile (`-O2`, `-Wall`, `-Iinc`, `-std=c11`, `-c`, `-fPIC`); `-o`
//! (and `rustc --emit KIND=PATH`) is a write judged like any other; every other option is an
//! effect that a rule naming it lifts. A word only known when the line runs, or a response
//! file (`@FILE`), may be any option.

use super::{surface_file_names, EffectKind, Examined, UNKNOWN_OPTION};
use crate::shell::options::{step, Spec, Stop};
use crate::shell::words::Word;

/// The C and C++ compiler drivers, by basename: `cc`, `gcc-12`, `x86_64-linux-gnu-g++`,
/// `clang++-17`. `clang-cl` (MSVC options) and `clang-format`/`clang-tidy` are not drivers.
pub(super) fn is_cc(base: &str) -> bool {
    let drivers = ["cc", "c++", "gcc", "g++", "clang", "clang++", "c89", "c99"];
    // A cross prefix (`x86_64-linux-gnu-`) before, a version (`-12`, `-17.0`) after.
    let name = base
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
        .trim_end_matches('-');
    let name = if name.is_empty() { base } else { name };
    drivers.iter().any(|d| {
        name == *d
            || name
                .strip_suffix(d)
                .is_some_and(|prefix| prefix.ends_with('-') && !prefix.starts_with('-'))
    })
}

/// Whether `w` may be an option: a literal starting with `-`, or a word only known when the
/// line runs that does not visibly start with a plain character.
fn dynamic(args: &[Word], i: usize) -> bool {
    matches!(step(args, i, &Spec::NONE), Err(Stop::Dynamic(_)))
}

/// `args[i]`, a word only known when the line runs: if it may be an option ([`dynamic`]), an
/// effect of `program`'s that a rule naming the program lifts.
pub(super) fn unknown_option(args: &[Word], i: usize, program: &str, out: &mut Examined) {
    if dynamic(args, i) {
        out.effect(
            EffectKind::Runs,
            UNKNOWN_OPTION,
            format!(
                "`{}` is only known when the line runs and may be any option of `{program}`",
                args[i].text
            ),
        );
    }
}

/// Flags of the C drivers that only choose what to print or how to compile.
const CC_FLAGS: &[&str] = &[
    "-c",
    "-S",
    "-E",
    "-v",
    "-w",
    "-s",
    "-P",
    "-C",
    "-CC",
    "-H",
    "-M",
    "-MM",
    "-MD",
    "-MMD",
    "-MP",
    "-MG",
    "-r",
    "-p",
    "-pg",
    "-shared",
    "-static",
    "-static-libgcc",
    "-static-libstdc++",
    "-static-pie",
    "-pie",
    "-no-pie",
    "-rdynamic",
    "-pthread",
    "-ansi",
    "-pipe",
    "-pedantic",
    "-pedantic-errors",
    "-nostdlib",
    "-nostdinc",
    "-nostdinc++",
    "-nostartfiles",
    "-nodefaultlibs",
    "-undef",
    "-trigraphs",
    "-traditional-cpp",
    "-save-temps",
    "-time",
    "-###",
    "--version",
    "--help",
    "--coverage",
    "-dumpversion",
    "-dumpfullversion",
    "-dumpmachine",
    "-dumpspecs",
];

/// Options of the C drivers with an argument that is read or is not a file, taken attached
/// (`-Iinc`) or as the next word (`-I inc`).
const CC_WITH_ARG: &[&str] = &[
    "-I",
    "-L",
    "-D",
    "-U",
    "-l",
    "-x",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-isysroot",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "--sysroot",
    "-MT",
    "-MQ",
    "-u",
];

/// `-fNAME=VALUE` options whose value is not a file or a program.
const CC_F_VALUES: &[&str] = &[
    "-fvisibility",
    "-fsanitize",
    "-fno-sanitize",
    "-fsanitize-recover",
    "-fno-sanitize-recover",
    "-fdiagnostics-color",
    "-fmax-errors",
    "-fmessage-length",
    "-fabi-version",
    "-ftemplate-depth",
    "-fconstexpr-depth",
    "-fconstexpr-steps",
    "-flto",
    "-fcf-protection",
    "-ftrivial-auto-var-init",
    "-fexcess-precision",
    "-ffp-contract",
    "-fdebug-prefix-map",
    "-fmacro-prefix-map",
    "-ffile-prefix-map",
    "-finput-charset",
    "-fexec-charset",
    "-fwide-exec-charset",
    "-fstrict-flex-arrays",
    "-fzero-call-used-regs",
    "-fstack-protector-guard",
    "-fpatchable-function-entry",
    "-fprofile-update",
    "-ftls-model",
    "-fsanitize-address-use-after-return",
    "-fsanitize-coverage",
];

/// `cc`, `gcc`, `clang` and their spellings; `cpp` is the preprocessor (`cpp IN OUT` writes
/// OUT).
pub(super) fn cc(base: &str, args: &[Word], out: &mut Examined) {
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        i += 1;
        if !w.literal {
            unknown_option(args, i - 1, base, out);
            operands.push(w);
            continue;
        }
        if response_file(t, base, out) {
            continue;
        }
        if !t.starts_with('-') || t == "-" {
            operands.push(w);
            continue;
        }
        // The next word, taken as an option's argument.
        let next = |i: &mut usize| {
            let a = args.get(*i);
            *i += 1;
            a
        };
        let attached = |name: &str| t.strip_prefix(name).filter(|r| !r.is_empty());
        // Writes: `-o FILE`, `-oFILE`, `--output[=]FILE`, `-MF FILE`, clang's `-MJ FILE`.
        let mut wrote = false;
        for name in ["-o", "-MF", "-MJ"] {
            if t == name {
                if let Some(a) = next(&mut i) {
                    out.write(a);
                }
                wrote = true;
            } else if let Some(rest) = attached(name) {
                out.write(&Word::lit(rest));
                wrote = true;
            }
            if wrote {
                break;
            }
        }
        if wrote {
            continue;
        }
        if t == "--output" {
            if let Some(a) = next(&mut i) {
                out.write(a);
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("--output=") {
            out.write(&Word::lit(rest));
            continue;
        }
        if CC_FLAGS.contains(&t) || t.starts_with("-print-") || t.starts_with("--print-") {
            continue;
        }
        if CC_WITH_ARG.contains(&t) {
            next(&mut i);
            continue;
        }
        if CC_WITH_ARG
            .iter()
            .any(|n| attached(n).is_some_and(|r| !n.starts_with("--") || r.starts_with('=')))
        {
            continue;
        }
        let passes = ["-Wl,", "-Wa,", "-Wp,"].iter().find(|p| t.starts_with(**p));
        if let Some(p) = passes {
            out.effect(
                EffectKind::Runs,
                p,
                format!("`{t}` passes options to the linker, assembler or preprocessor, which may load a plugin or write a file"),
            );
            continue;
        }
        let plain = |prefix: &str| t.len() > prefix.len() && t.starts_with(prefix);
        let known = matches!(t, "-O" | "-g")
            || plain("-O")
            || plain("-g")
            || (plain("-W") && !t.contains(','))
            || plain("-std=")
            || (plain("-m") && t != "-mllvm")
            || (plain("-f")
                && match t.split_once('=') {
                    None => !t.starts_with("-fplugin") && !t.starts_with("-fpass-plugin"),
                    Some((name, value)) => {
                        CC_F_VALUES.contains(&name)
                            // `-fuse-ld=lld` picks `ld.lld` where the driver finds its tools; a
                            // path (`-fuse-ld=/tmp/x`) runs that program.
                            || (name == "-fuse-ld"
                                && !value.is_empty()
                                && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'))
                    }
                });
        if known {
            continue;
        }
        let name = t.split_once('=').map_or(t, |(n, _)| n);
        out.effect(
            EffectKind::Runs,
            name,
            format!("`{base} {t}` is not known to only read and write what the line names: it may run another program or write a file"),
        );
    }
    if base.starts_with("cpp") || base.ends_with("-cpp") {
        // `cpp IN OUT`: the second operand is written.
        if let Some(w) = operands.get(1) {
            out.write(w);
        }
    }
}

/// `rustc`'s `-C` options that only choose how to compile (a linker, a linker's arguments, an
/// LLVM option, a dlltool run a program; an incremental directory is written).
const RUSTC_CODEGEN: &[&str] = &[
    "opt-level",
    "debuginfo",
    "debug-assertions",
    "overflow-checks",
    "panic",
    "lto",
    "codegen-units",
    "target-cpu",
    "target-feature",
    "relocation-model",
    "code-model",
    "strip",
    "embed-bitcode",
    "force-frame-pointers",
    "force-unwind-tables",
    "metadata",
    "prefer-dynamic",
    "rpath",
    "split-debuginfo",
    "symbol-mangling-version",
    "instrument-coverage",
    "no-redzone",
    "no-vectorize-loops",
    "no-vectorize-slp",
    "soft-float",
    "profile-generate",
    "profile-use",
    "link-dead-code",
    "default-linker-libraries",
    "relro-level",
    "collapse-macro-debuginfo",
    "jump-tables",
    "dwarf-version",
    "save-temps",
];

/// `rustc`'s options without argument.
const RUSTC_FLAGS: &[&str] = &[
    "-h",
    "--help",
    "-V",
    "--version",
    "-v",
    "--verbose",
    "-g",
    "-O",
    "--test",
];

/// `rustc`'s options with an argument that is not a file written or code run.
const RUSTC_WITH_ARG: &[&str] = &[
    "--cfg",
    "--check-cfg",
    "-l",
    "--crate-type",
    "--crate-name",
    "--edition",
    "-A",
    "--allow",
    "-W",
    "--warn",
    "--force-warn",
    "-D",
    "--deny",
    "-F",
    "--forbid",
    "--cap-lints",
    "--explain",
    "--error-format",
    "--json",
    "--color",
    "--diagnostic-width",
    "--remap-path-prefix",
    "--target",
];

/// The arguments `cargo rustc -- ARGS` passes to rustc: its options judged as `rustc`'s (the
/// output's name is cargo's).
pub(super) fn rustc_options(args: &[Word], out: &mut Examined) {
    let mut inner = Examined::default();
    rustc(args, &mut inner);
    out.effects.extend(inner.effects);
    // Without `-o`, rustc alone would write the crate's name into the directory; under cargo
    // the output goes to the target directory: only the options' writes count.
    let named_output = args.iter().any(|w| {
        w.text.starts_with("-o") || w.text.starts_with("--emit") || w.text.starts_with("--print")
    });
    if named_output {
        out.writes.extend(inner.writes);
    }
}

/// `rustc`: getopts options (`-o FILE`, `-oFILE`, `--out-dir DIR`, `--out-dir=DIR`).
pub(super) fn rustc(args: &[Word], out: &mut Examined) {
    let mut i = 0;
    let mut compiles = false;
    let mut out_file = false;
    let mut out_dir: Option<Word> = None;
    let mut any_name = false;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        i += 1;
        if !w.literal {
            unknown_option(args, i - 1, "rustc", out);
            compiles = true;
            continue;
        }
        if response_file(t, "rustc", out) {
            continue;
        }
        if !t.starts_with('-') || t == "-" {
            compiles = true;
            continue;
        }
        // The option's name and argument: `--name=V`, `--name V`, `-xV`, `-x V`.
        let (name, attached) = match t.split_once('=').filter(|_| t.starts_with("--")) {
            Some((n, v)) => (n, Some(v.to_string())),
            // `-xVALUE` (the letter may be any character: split where it ends).
            None if !t.starts_with("--") && t.chars().count() > 2 => {
                let at = t.char_indices().nth(2).map_or(t.len(), |(k, _)| k);
                (&t[..at], Some(t[at..].to_string()))
            }
            None => (t, None),
        };
        if RUSTC_FLAGS.contains(&name) && attached.is_none() {
            continue;
        }
        let takes = RUSTC_WITH_ARG.contains(&name)
            || matches!(
                name,
                "-o" | "--out-dir"
                    | "-C"
                    | "--codegen"
                    | "-Z"
                    | "--emit"
                    | "--print"
                    | "-L"
                    | "--extern"
                    | "--sysroot"
            );
        if !takes {
            out.effect(
                EffectKind::Runs,
                name,
                format!("`rustc {t}` is not known to only read and write what the line names"),
            );
            continue;
        }
        let arg = match attached {
            Some(a) => Word::lit(&a),
            None => match args.get(i) {
                Some(a) => {
                    i += 1;
                    a.clone()
                }
                None => continue,
            },
        };
        let a = arg.text.as_str();
        match name {
            "-o" => {
                out.write(&arg);
                out_file = true;
            }
            "--out-dir" => out_dir = Some(arg.clone()),
            "--emit" | "--print" => {
                for kind in a.split(',') {
                    if let Some((_, path)) = kind.split_once('=') {
                        if path != "-" {
                            out.write(&Word::lit(path));
                        }
                    }
                }
            }
            "-C" | "--codegen" => {
                let (key, value) = a.split_once('=').unwrap_or((a, ""));
                if key == "incremental" {
                    any_names_in(&Word::lit(value), |_| true, out);
                } else if key == "extra-filename" {
                    any_name = true;
                } else if !arg.literal || !RUSTC_CODEGEN.contains(&key) {
                    out.effect(
                        EffectKind::Runs,
                        &format!("{key}="),
                        format!("`rustc -C {a}` may run another program or write a file"),
                    );
                }
            }
            "-Z" => out.effect(
                EffectKind::Runs,
                "-Z",
                format!("`rustc -Z {a}` (an unstable option) may load or run another program"),
            ),
            // Proc-macro crates found there are loaded and run while compiling.
            "-L" => {
                let dir = a.split_once('=').map_or(a, |(_, d)| d);
                out.code_at(&Word::lit(dir), "`rustc -L` loads proc-macro crates from");
            }
            "--extern" => {
                if let Some((_, path)) = a.split_once('=') {
                    out.code_at(&Word::lit(path), "`rustc --extern` loads the crate");
                }
            }
            "--sysroot" => out.code_at(&arg, "`rustc --sysroot` loads crates from"),
            "--target" if a.ends_with(".json") || a.contains('/') => {
                out.code_at(&arg, "a target file names the linker `rustc` runs:");
            }
            _ => {}
        }
    }
    if compiles && !out_file {
        // The output's name comes from the crate (`#![crate_name]`, `--crate-name`, `-C
        // extra-filename`): an identifier, or any name with an extra suffix.
        let dir = out_dir.unwrap_or_else(|| Word::lit("."));
        if any_name {
            any_names_in(&dir, |_| true, out);
        } else {
            // (An identifier's name is an executable's, an ELF file. irb's `_irbrc`, the one
            // startup file on the surface with such a name, is Ruby that irb parses whole
            // before it runs any of it, and Ruby refuses the ELF header's first byte, 0x7f:
            // an executable there runs nothing. Other outputs are `lib…` or carry a suffix.)
            any_names_in(
                &dir,
                |n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && n != "_irbrc",
                out,
            );
        }
    }
}

/// A program writes into `dir` under a name only it knows (`rustc --out-dir DIR`): each name
/// on the persistence surface it could be (`which`) is judged.
fn any_names_in(dir: &Word, which: impl Fn(&str) -> bool, out: &mut Examined) {
    if !dir.literal {
        out.unshown(format!(
            "writes into `{}`, a directory only known when the line runs",
            dir.text
        ));
        return;
    }
    let base = dir.text.trim_end_matches('/');
    for name in surface_file_names().filter(|n| which(n)) {
        let path = if base.is_empty() && dir.text.starts_with('/') {
            format!("/{name}")
        } else if base == "." {
            name.to_string()
        } else {
            format!("{base}/{name}")
        };
        out.writes.push(path);
    }
}

/// `ld` (and `ld.bfd`, `ld.gold`, `ld.lld`, `gold`, `mold`) and `as`: `-o FILE` is a write,
/// the version and help are reads; every other option may load a plugin (`-plugin`), run a
/// script or write a file (`-Map`, `--dependency-file`, `as --MD`).
pub(super) fn linker(base: &str, args: &[Word], out: &mut Examined) {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        i += 1;
        if !w.literal {
            unknown_option(args, i - 1, base, out);
            continue;
        }
        if !t.starts_with(['-', '@']) || t == "-" {
            continue;
        }
        match t {
            "--version" | "-v" | "-V" | "--help" => {}
            "-o" | "--output" => {
                if let Some(a) = args.get(i) {
                    out.write(a);
                    i += 1;
                }
            }
            _ if t.starts_with("--output=") => out.write(&Word::lit(&t["--output=".len()..])),
            _ if t.starts_with("-o") => out.write(&Word::lit(&t[2..])),
            _ => {
                let name = t.split_once('=').map_or(t, |(n, _)| n);
                out.effect(
                    EffectKind::Runs,
                    name,
                    format!(
                        "`{base} {t}` may load a plugin or write a file the line does not name"
                    ),
                );
            }
        }
    }
}

/// `ar`: the operation letters (`rcs`, `-x`, `t`) come first; `r`, `q`, `d`, `m` and `s` write
/// the archive (the operand after the key, after a member name for `a`/`b`/`i` and a count for
/// `N`), `x` writes the members' names. `--plugin` loads code; a response file may be any
/// option.
pub(super) fn ar(args: &[Word], out: &mut Examined) {
    let mut key: Option<String> = None;
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        i += 1;
        if !w.literal {
            if key.is_none() || dynamic(args, i - 1) {
                out.effect(
                    EffectKind::Runs,
                    UNKNOWN_OPTION,
                    format!(
                        "`{t}` is only known when the line runs and may be any operation of `ar`"
                    ),
                );
            }
            operands.push(w);
            continue;
        }
        if let Some(file) = t.strip_prefix('@') {
            out.effect(
                EffectKind::Runs,
                t,
                format!("`ar` reads more arguments from `{file}`, which the line does not show"),
            );
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            match name {
                "version" | "help" => {}
                "target" | "output" if !long.contains('=') => i += 1,
                "target" => {}
                "output" => {
                    out.unshown(format!("`ar {t}` extracts members into a directory"));
                }
                _ => {
                    if name == "plugin" && !long.contains('=') {
                        i += 1;
                    }
                    out.effect(
                        EffectKind::Runs,
                        &format!("--{name}"),
                        format!("`ar {t}` may load code or change what ar writes"),
                    );
                }
            }
            continue;
        }
        if key.is_none() {
            key = Some(t.trim_start_matches('-').to_string());
            continue;
        }
        // More operation letters as their own words: the real `ar -r -c -s ARCHIVE x.o`
        // writes ARCHIVE (taken for the archive, `-c` hid it).
        if let Some(more) = t.strip_prefix('-').filter(|m| !m.is_empty()) {
            if let Some(k) = key.as_mut() {
                k.push_str(more);
            }
            continue;
        }
        operands.push(w);
    }
    let Some(key) = key else { return };
    let skip = key
        .chars()
        .filter(|c| matches!(c, 'a' | 'b' | 'i' | 'N'))
        .count();
    if key.contains('x') {
        out.unshown("the archive's members are written under names the line does not show".into());
    }
    if key.contains(['r', 'q', 'd', 'm', 's']) {
        if let Some(archive) = operands.get(skip) {
            out.write(archive);
        }
    }
}

/// `@FILE`: the program reads more options from FILE, which the line does not show (a
/// `Runs` effect: anything could be in it). True when `t` is one.
fn response_file(t: &str, base: &str, out: &mut Examined) -> bool {
    let Some(file) = t.strip_prefix('@').filter(|f| !f.is_empty()) else {
        return false;
    };
    out.effect(
        EffectKind::Runs,
        t,
        format!("`{base}` reads more options from `{file}`, which the line does not show"),
    );
    true
}
