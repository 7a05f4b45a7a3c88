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
}

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
}

impl Examined {
    fn effect(&mut self, kind: EffectKind, option: &str, detail: String) {
        self.effects.push(Effect {
            kind,
            option: option.to_string(),
            detail,
        });
    }

    fn write(&mut self, w: &Word) {
        // A process substitution (`tee >(cmd)`) is a pipe to a command checked on its own.
        if !(!w.literal && (w.raw.starts_with(">(") || w.raw.starts_with("<("))) {
            self.writes.push(w.text.clone());
        }
    }
}

/// What an option in a [`Program`]'s table does.
#[derive(Clone, Copy)]
enum Does {
    /// Its argument is a file the program writes.
    WritesArg,
    Deletes,
    Runs,
    Network,
}

/// What a program does with its operands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
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
struct Program {
    names: &'static [&'static str],
    /// Every option that takes an argument, and the long options the table needs spelled in
    /// full; any other option is a flag ([`Spec::lenient`]).
    spec: Spec,
    /// Options may follow operands (GNU getopt, git's parse-options): the key puts them first.
    permute: bool,
    options: &'static [(&'static str, Does)],
    operands: Operands,
    /// What needs more than the table (a script to read, modes, `of=` operands).
    special: Option<fn(&Parsed, &mut Examined)>,
}

/// One command's options and operands, as the program parses them.
struct Parsed {
    opts: Vec<Opt>,
    operands: Vec<Word>,
    /// The option words, long names in full, in order (for the key).
    option_words: Vec<String>,
    /// A word whose value is only known when the line runs sits where options are: it may be
    /// any option.
    dynamic: Option<String>,
}

impl Parsed {
    fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|o| names.contains(&o.name.as_str()))
    }

    fn args<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a Word> {
        self.opts
            .iter()
            .filter(move |o| names.contains(&o.name.as_str()))
            .filter_map(|o| o.arg.as_ref())
    }
}

/// Parses `args` as the program does; `permute` lets options follow operands.
fn parse(args: &[Word], spec: &Spec, permute: bool) -> Parsed {
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
        "python" | "pypy" | "perl" | "ruby" | "node" | "pip" => trimmed,
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
        b => {
            if let Some(program) = PROGRAMS.iter().find(|p| p.names.contains(&b)) {
                program_table(name, program, args, &mut out);
            }
        }
    }
    out
}

fn program_table(name: &str, program: &Program, args: &[Word], out: &mut Examined) {
    let p = parse(args, &program.spec, program.permute);
    judge_options(&p, program.options, out);
    if let Some(text) = &p.dynamic {
        if !program.options.is_empty() {
            out.effect(
                EffectKind::Runs,
                text,
                format!(
                    "`{text}` is only known when the line runs and may be any option of `{name}`"
                ),
            );
        }
    }
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
                if let Some(last) = p.operands.last().filter(|_| p.operands.len() > 1) {
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

fn judge_options(p: &Parsed, table: &[(&str, Does)], out: &mut Examined) {
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

const PROGRAMS: &[Program] = &[
    Program {
        names: &["sort"],
        spec: Spec {
            short_arg: "koStT",
            long_arg: &[
                "key",
                "field-separator",
                "output",
                "buffer-size",
                "temporary-directory",
                "parallel",
                "batch-size",
                "compress-program",
                "files0-from",
                "sort",
                "random-source",
            ],
            long_flag: &[
                "unique",
                "check",
                "merge",
                "reverse",
                "numeric-sort",
                "stable",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-o", Does::WritesArg),
            ("--output", Does::WritesArg),
            ("--compress-program", Does::Runs),
        ],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["sed", "gsed"],
        spec: Spec {
            short_arg: "efl",
            short_opt: "i",
            long_arg: &["expression", "file", "line-length"],
            long_flag: &[
                "in-place",
                "quiet",
                "silent",
                "regexp-extended",
                "separate",
                "sandbox",
                "null-data",
                "zero-terminated",
                "unbuffered",
                "posix",
                "debug",
                "follow-symlinks",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[("-f", Does::Runs), ("--file", Does::Runs)],
        operands: Operands::Read,
        special: Some(sed),
    },
    Program {
        names: &["awk", "gawk", "mawk", "nawk", "busybox-awk"],
        spec: Spec {
            short_arg: "fvFEeilW",
            long_arg: &[
                "file",
                "assign",
                "field-separator",
                "exec",
                "source",
                "include",
                "load",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: false,
        options: &[
            ("-f", Does::Runs),
            ("--file", Does::Runs),
            ("-E", Does::Runs),
            ("--exec", Does::Runs),
            ("-i", Does::Runs),
            ("--include", Does::Runs),
            ("-l", Does::Runs),
            ("--load", Does::Runs),
        ],
        operands: Operands::Read,
        special: Some(awk),
    },
    Program {
        names: &["rg", "ripgrep"],
        spec: Spec {
            short_arg: "ABCefgmMrtTEjd",
            long_arg: &[
                "after-context",
                "before-context",
                "context",
                "regexp",
                "file",
                "glob",
                "iglob",
                "max-count",
                "max-columns",
                "replace",
                "type",
                "type-not",
                "type-add",
                "type-clear",
                "encoding",
                "threads",
                "max-depth",
                "pre",
                "pre-glob",
                "hostname-bin",
                "colors",
                "color",
                "context-separator",
                "field-match-separator",
                "field-context-separator",
                "path-separator",
                "engine",
                "sort",
                "sortr",
                "dfa-size-limit",
                "regex-size-limit",
                "ignore-file",
                "max-filesize",
                "generate",
                "hyperlink-format",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[("--pre", Does::Runs), ("--hostname-bin", Does::Runs)],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["tee"],
        spec: Spec {
            long_flag: &["append", "ignore-interrupts", "output-error"],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[],
        operands: Operands::Written,
        special: None,
    },
    Program {
        names: &["cp", "ln", "install", "gcp"],
        spec: Spec {
            short_arg: "StgmoZ",
            long_arg: &["suffix", "target-directory", "group", "mode", "owner"],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[],
        operands: Operands::LastWritten,
        special: None,
    },
    Program {
        names: &["mv", "gmv"],
        spec: Spec {
            short_arg: "St",
            long_arg: &["suffix", "target-directory"],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[],
        operands: Operands::AllMoved,
        special: None,
    },
    Program {
        names: &["rsync"],
        spec: Spec {
            short_arg: "efBTM@",
            long_arg: &[
                "rsh",
                "rsync-path",
                "filter",
                "exclude",
                "include",
                "exclude-from",
                "include-from",
                "files-from",
                "block-size",
                "temp-dir",
                "remote-option",
                "log-file",
                "log-file-format",
                "write-batch",
                "only-write-batch",
                "read-batch",
                "backup-dir",
                "suffix",
                "compare-dest",
                "copy-dest",
                "link-dest",
                "password-file",
                "partial-dir",
                "port",
                "sockopts",
                "chmod",
                "chown",
                "usermap",
                "groupmap",
                "bwlimit",
                "timeout",
                "contimeout",
                "max-size",
                "min-size",
                "max-delete",
                "modify-window",
                "out-format",
                "outbuf",
                "iconv",
                "checksum-choice",
                "compress-choice",
                "compress-level",
                "skip-compress",
                "info",
                "debug",
                "stop-after",
                "stop-at",
            ],
            long_flag: &[
                "delete",
                "delete-before",
                "delete-during",
                "delete-delay",
                "delete-after",
                "delete-excluded",
                "remove-source-files",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-e", Does::Runs),
            ("--rsh", Does::Runs),
            ("--rsync-path", Does::Runs),
            ("-M", Does::Runs),
            ("--remote-option", Does::Runs),
            ("--log-file", Does::WritesArg),
            ("--write-batch", Does::WritesArg),
            ("--only-write-batch", Does::WritesArg),
            ("--backup-dir", Does::WritesArg),
            ("--delete", Does::Deletes),
            ("--delete-before", Does::Deletes),
            ("--delete-during", Does::Deletes),
            ("--delete-delay", Does::Deletes),
            ("--delete-after", Does::Deletes),
            ("--delete-excluded", Does::Deletes),
            ("--remove-source-files", Does::Deletes),
        ],
        operands: Operands::LastWritten,
        special: Some(rsync),
    },
    Program {
        names: &["pytest", "py.test"],
        spec: Spec {
            short_arg: "kmpocrnW",
            long_arg: &[
                "basetemp",
                "junitxml",
                "junit-xml",
                "junit-prefix",
                "result-log",
                "log-file",
                "log-file-level",
                "log-file-format",
                "log-level",
                "log-format",
                "override-ini",
                "rootdir",
                "confcutdir",
                "config-file",
                "pastebin",
                "maxfail",
                "deselect",
                "ignore",
                "ignore-glob",
                "import-mode",
                "durations",
                "tb",
                "capture",
                "cov-report",
                "numprocesses",
                "dist",
            ],
            long_flag: &["cache-clear", "lf", "ff", "exitfirst", "verbose", "quiet"],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("--basetemp", Does::Deletes),
            ("--junitxml", Does::WritesArg),
            ("--junit-xml", Does::WritesArg),
            ("--result-log", Does::WritesArg),
            ("--log-file", Does::WritesArg),
            ("--pastebin", Does::Network),
            ("-p", Does::Runs),
            ("-o", Does::Runs),
            ("--override-ini", Does::Runs),
            ("-c", Does::Runs),
            ("--config-file", Does::Runs),
            ("--rootdir", Does::WritesArg),
            ("--confcutdir", Does::Runs),
        ],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["make", "gmake"],
        spec: Spec {
            short_arg: "fCIjloOW",
            long_arg: &[
                "file",
                "makefile",
                "directory",
                "include-dir",
                "jobs",
                "load-average",
                "old-file",
                "assume-old",
                "output-sync",
                "what-if",
                "new-file",
                "assume-new",
                "eval",
                "debug",
                "shuffle",
                "jobserver-style",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-f", Does::Runs),
            ("--file", Does::Runs),
            ("--makefile", Does::Runs),
            ("-C", Does::Runs),
            ("--directory", Does::Runs),
            ("-I", Does::Runs),
            ("--include-dir", Does::Runs),
            ("--eval", Does::Runs),
        ],
        operands: Operands::Read,
        special: Some(make),
    },
    Program {
        names: &["python", "pypy"],
        spec: Spec {
            short_arg: "cmWXQ",
            lenient: true,
            ..Spec::NONE
        },
        permute: false,
        options: &[("-c", Does::Runs), ("-m", Does::Runs)],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["node", "nodejs", "deno", "bun"],
        spec: Spec {
            short_arg: "eprC",
            long_arg: &[
                "eval",
                "print",
                "require",
                "import",
                "loader",
                "experimental-loader",
                "conditions",
                "env-file",
                "input-type",
                "title",
                "inspect-port",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: false,
        options: &[
            ("-e", Does::Runs),
            ("--eval", Does::Runs),
            ("-p", Does::Runs),
            ("--print", Does::Runs),
            ("-r", Does::Runs),
            ("--require", Does::Runs),
            ("--import", Does::Runs),
            ("--loader", Does::Runs),
            ("--experimental-loader", Does::Runs),
            ("--env-file", Does::Runs),
        ],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["perl", "ruby"],
        spec: Spec {
            short_arg: "eEMmIr",
            short_opt: "i",
            lenient: true,
            ..Spec::NONE
        },
        permute: false,
        options: &[
            ("-e", Does::Runs),
            ("-E", Does::Runs),
            ("-M", Does::Runs),
            ("-m", Does::Runs),
            ("-r", Does::Runs),
            ("-I", Does::Runs),
            ("-x", Does::Runs),
            ("-d", Does::Runs),
        ],
        operands: Operands::Read,
        special: Some(in_place),
    },
    Program {
        names: &["less", "more", "most"],
        spec: Spec {
            short_arg: "bhjkoOpPtTxyz#",
            long_arg: &[
                "log-file",
                "LOG-FILE",
                "lesskey-file",
                "lesskey-src",
                "tag",
                "pattern",
                "prompt",
            ],
            plus: true,
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-o", Does::WritesArg),
            ("-O", Does::WritesArg),
            ("--log-file", Does::WritesArg),
            ("--LOG-FILE", Does::WritesArg),
            ("-k", Does::Runs),
            ("--lesskey-file", Does::Runs),
            ("--lesskey-src", Does::Runs),
        ],
        operands: Operands::Read,
        special: Some(less),
    },
    Program {
        names: &["man"],
        spec: Spec {
            short_arg: "CMPSmerEpLR",
            short_opt: "H",
            long_arg: &[
                "config-file",
                "manpath",
                "pager",
                "sections",
                "systems",
                "extension",
                "preprocessor",
                "locale",
                "encoding",
                "recode",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-P", Does::Runs),
            ("--pager", Does::Runs),
            ("-H", Does::Runs),
            ("--html", Does::Runs),
            ("-C", Does::Runs),
            ("--config-file", Does::Runs),
            ("-p", Does::Runs),
            ("--preprocessor", Does::Runs),
        ],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["curl"],
        spec: Spec {
            short_arg: "oDcbdeEFHKmQrTuUxXyYzAw",
            long_arg: &[
                "output",
                "dump-header",
                "cookie-jar",
                "trace",
                "trace-ascii",
                "libcurl",
                "stderr",
                "config",
                "etag-save",
                "hsts",
                "alt-svc",
                "output-dir",
                "data",
                "data-binary",
                "data-raw",
                "header",
                "user",
                "url",
                "request",
                "cookie",
                "form",
                "proxy",
                "user-agent",
                "write-out",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-o", Does::WritesArg),
            ("--output", Does::WritesArg),
            ("-D", Does::WritesArg),
            ("--dump-header", Does::WritesArg),
            ("-c", Does::WritesArg),
            ("--cookie-jar", Does::WritesArg),
            ("--trace", Does::WritesArg),
            ("--trace-ascii", Does::WritesArg),
            ("--libcurl", Does::WritesArg),
            ("--stderr", Does::WritesArg),
            ("--etag-save", Does::WritesArg),
            ("--hsts", Does::WritesArg),
            ("--alt-svc", Does::WritesArg),
            ("--output-dir", Does::WritesArg),
            ("-K", Does::Runs),
            ("--config", Does::Runs),
        ],
        operands: Operands::Read,
        special: None,
    },
    Program {
        names: &["wget"],
        spec: Spec {
            short_arg: "OoaPeiDtTwQUBlAIRXY",
            long_arg: &[
                "output-document",
                "output-file",
                "append-output",
                "directory-prefix",
                "execute",
                "input-file",
                "config",
                "post-file",
                "post-data",
                "header",
                "user-agent",
                "tries",
                "timeout",
                "wait",
            ],
            lenient: true,
            ..Spec::NONE
        },
        permute: true,
        options: &[
            ("-O", Does::WritesArg),
            ("--output-document", Does::WritesArg),
            ("-o", Does::WritesArg),
            ("--output-file", Does::WritesArg),
            ("-a", Does::WritesArg),
            ("--append-output", Does::WritesArg),
            ("-P", Does::WritesArg),
            ("--directory-prefix", Does::WritesArg),
            ("-e", Does::Runs),
            ("--execute", Does::Runs),
            ("--config", Does::Runs),
        ],
        operands: Operands::Read,
        special: None,
    },
];

/// `sed -i` writes its file operands; the script's `w`/`W` commands and `s///w` write files,
/// its `e` command and `s///e` run them as shell commands.
fn sed(p: &Parsed, out: &mut Examined) {
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
                // A label, text, a file read, or a number: to the end of the line (labels
                // and numbers also end at `;`, which is harmless to skip past here only for
                // the commands that cannot be followed by a writing one on the same line).
                if matches!(c, ':' | 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L' | 'v') {
                    while i < b.len() && b[i] != '\n' && b[i] != ';' && b[i] != '}' {
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
fn in_place(p: &Parsed, out: &mut Examined) {
    if p.has(&["-i"]) {
        for f in &p.operands {
            out.write(f);
        }
    }
}

/// An awk program (the first operand without `-f`/`-e`): `system()`, pipes (`print | "cmd"`,
/// `"cmd" | getline`) and gawk's `@load`/`@include` run code; `print > FILE` and `>> FILE`
/// write a file named by an expression. A `-v`/operand assignment is data.
fn awk(p: &Parsed, out: &mut Examined) {
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
fn rsync(p: &Parsed, out: &mut Examined) {
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
fn make(p: &Parsed, out: &mut Examined) {
    for w in &p.operands {
        if !w.literal || w.text.contains('=') {
            out.effect(
                EffectKind::Runs,
                &w.text,
                format!(
                    "make `{}` overrides a variable of the Makefile's recipes",
                    w.text
                ),
            );
        }
    }
}

/// less: `+cmd` and `-+`/`--` commands run at start-up may include `!shell`.
fn less(p: &Parsed, out: &mut Examined) {
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
fn find(args: &[Word], out: &mut Examined) {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        match w.text.as_str() {
            "-delete" if w.literal => out.effect(
                EffectKind::Deletes,
                "-delete",
                "`find -delete` deletes the files it finds".into(),
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
fn dd(args: &[Word], out: &mut Examined) {
    for w in args {
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
fn tar(args: &[Word], out: &mut Examined) {
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
    }
    if p.dynamic.is_some() {
        out.effect(
            EffectKind::Runs,
            "tar",
            "a tar option is only known when the line runs".into(),
        );
    }
}

/// npm and friends: `--script-shell`, `--node-options`, `--prefix`/`-C` (another package's
/// scripts), `--userconfig`/`--globalconfig` (settings that name programs) run code the line
/// does not show; `-g`/`--global` installs or runs outside the project. npm reads every
/// `--name[=value]` as a setting and accepts unambiguous abbreviations, so any word that
/// starts a dangerous setting's name counts.
fn npm(base: &str, args: &[Word], out: &mut Examined) {
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
    ];
    for w in args {
        if w.literal && w.text == "--" {
            break;
        }
        if !w.literal {
            let raw = w.raw.trim_start_matches(['"', '\'']);
            if raw.starts_with('-') || raw.starts_with('$') {
                out.effect(
                    EffectKind::Runs,
                    &w.text,
                    format!(
                        "`{}` is only known when the line runs and may be any {base} setting",
                        w.text
                    ),
                );
            }
            continue;
        }
        let t = w.text.as_str();
        let hit = if let Some(long) = t.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            let name = name.strip_prefix("no-").unwrap_or(name);
            (name.len() >= 2 && RUNS.iter().any(|r| r.starts_with(name)))
                .then(|| format!("--{name}"))
        } else if let Some(short) = t.strip_prefix('-') {
            (short.starts_with('C') || short.starts_with('g') || short == "c")
                .then(|| t.to_string())
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

/// Git's global options that only say where the repository is, how output is paged or which
/// pathspec rules hold: dropped from the key, so `git --no-pager log` and `git -C dir status`
/// are matched as `git log` and `git status`. `(name, takes an argument)`.
const GIT_LOCATION_OPTIONS: &[(&str, bool)] = &[
    ("-C", true),
    ("--git-dir", true),
    ("--work-tree", true),
    ("--namespace", true),
    ("-P", false),
    ("--no-pager", false),
    ("--no-replace-objects", false),
    ("--no-lazy-fetch", false),
    ("--no-optional-locks", false),
    ("--no-advice", false),
    ("--bare", false),
    ("--literal-pathspecs", false),
    ("--glob-pathspecs", false),
    ("--noglob-pathspecs", false),
    ("--icase-pathspecs", false),
];

/// `-c NAME=VALUE` settings that only change how output looks.
fn inert_git_config(setting: &str) -> bool {
    let name = setting
        .split_once('=')
        .map_or(setting, |(n, _)| n)
        .to_ascii_lowercase();
    name.starts_with("color.") || name.starts_with("advice.") || name == "core.quotepath"
}

/// git: global options (handled as git does, exactly, before the subcommand), then the
/// subcommand's own options.
fn git(args: &[Word], out: &mut Examined) {
    let mut key = vec!["git".to_string()];
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            out.effect(
                EffectKind::Runs,
                &w.text,
                format!(
                    "`{}` is only known when the line runs and may be any git option",
                    w.text
                ),
            );
            key.extend(args[i..].iter().map(|w| w.text.clone()));
            out.key = Some(key);
            return;
        }
        let t = w.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        let (name, attached) = match t.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (t, None),
        };
        if let Some(&(_, takes)) = GIT_LOCATION_OPTIONS.iter().find(|(n, _)| *n == name) {
            i += if takes && attached.is_none() { 2 } else { 1 };
            continue;
        }
        match name {
            "-c" => {
                let setting = attached.or(args.get(i + 1).map(|a| a.text.as_str()));
                let known = args.get(i + 1).is_none_or(|a| a.literal);
                if !known || !setting.is_some_and(inert_git_config) {
                    out.effect(
                        EffectKind::Runs,
                        "-c",
                        format!(
                            "`git -c {}` sets configuration, which can name programs git runs",
                            setting.unwrap_or("")
                        ),
                    );
                }
                i += 2;
            }
            "--config-env" => {
                out.effect(
                    EffectKind::Runs,
                    "--config-env",
                    "`git --config-env` sets configuration, which can name programs git runs"
                        .into(),
                );
                i += if attached.is_some() { 1 } else { 2 };
            }
            "--exec-path" if attached.is_some() => {
                out.effect(
                    EffectKind::Runs,
                    "--exec-path",
                    "`git --exec-path=DIR` runs git's commands from another directory".into(),
                );
                i += 1;
            }
            "-p" | "--paginate" => {
                out.effect(
                    EffectKind::Runs,
                    name,
                    "`git --paginate` runs the configured pager".into(),
                );
                i += 1;
            }
            _ => {
                // Not a global option git knows (git refuses it), or one that prints
                // (`--version`, `--exec-path`): the rest is matched as written.
                break;
            }
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    let Some(sub) = rest.first() else {
        out.key = Some(key);
        return;
    };
    let sub_args = &rest[1..];
    key.push(sub.text.clone());
    match git_subcommand(&sub.text) {
        Some(g) => {
            let p = parse(sub_args, &g.spec, true);
            judge_options(&p, g.options, out);
            // Any long option that abbreviates a dangerous one is that one (parse-options
            // accepts unambiguous prefixes; the table need not list every option sharing it).
            for o in &p.opts {
                let Some(short) = o.name.strip_prefix("--") else {
                    continue;
                };
                if short.len() < 2 || g.options.iter().any(|(n, _)| *n == o.name) {
                    continue;
                }
                if let Some((full, does)) = g
                    .options
                    .iter()
                    .find(|(n, _)| n.strip_prefix("--").is_some_and(|n| n.starts_with(short)))
                {
                    let abbreviated = [(*full, *does)];
                    let as_full = Parsed {
                        opts: vec![Opt {
                            name: full.to_string(),
                            arg: o.arg.clone(),
                        }],
                        operands: Vec::new(),
                        option_words: Vec::new(),
                        dynamic: None,
                    };
                    judge_options(&as_full, &abbreviated, out);
                }
            }
            if let Some(text) = &p.dynamic {
                out.effect(
                    EffectKind::Runs,
                    text,
                    format!("`{text}` is only known when the line runs and may be any git option"),
                );
            }
            if g.runs {
                out.effect(
                    EffectKind::Runs,
                    &sub.text,
                    format!("`git {}` runs a configured program", sub.text),
                );
            }
            if p.dynamic.is_none() {
                key.extend(p.option_words.iter().cloned());
                key.extend(p.operands.iter().map(|w| w.text.clone()));
            } else {
                key.extend(sub_args.iter().map(|w| w.text.clone()));
            }
        }
        None => key.extend(sub_args.iter().map(|w| w.text.clone())),
    }
    out.key = Some(key);
}

/// A git subcommand's options (parse-options: abbreviations, options after operands).
struct GitSubcommand {
    names: &'static [&'static str],
    spec: Spec,
    options: &'static [(&'static str, Does)],
    /// The subcommand itself runs a configured program (`difftool`, `mergetool`).
    runs: bool,
}

fn git_subcommand(name: &str) -> Option<&'static GitSubcommand> {
    GIT_SUBCOMMANDS.iter().find(|g| g.names.contains(&name))
}

/// The diff options of `log`, `show`, `diff` and friends that write or run.
const GIT_DIFF_EFFECTS: &[(&str, Does)] = &[
    ("--output", Does::WritesArg),
    ("--ext-diff", Does::Runs),
    ("--textconv", Does::Runs),
];

/// Only the options that take their argument as the next word too (`--output FILE`,
/// `--author NAME`): listing one that takes it only attached (`--pretty[=…]`) would hide the
/// option after it.
const GIT_DIFF_SPEC: Spec = Spec {
    short_arg: "n",
    long_arg: &[
        "output",
        "max-count",
        "skip",
        "since",
        "after",
        "until",
        "before",
        "author",
        "committer",
        "grep",
        "min-parents",
        "max-parents",
    ],
    long_flag: &[
        "ext-diff",
        "no-ext-diff",
        "textconv",
        "no-textconv",
        "no-index",
    ],
    lenient: true,
    ..Spec::NONE
};

const GIT_SUBCOMMANDS: &[GitSubcommand] = &[
    GitSubcommand {
        names: &[
            "log",
            "show",
            "diff",
            "whatchanged",
            "format-patch",
            "diff-tree",
            "diff-index",
            "diff-files",
            "range-diff",
            "blame",
            "annotate",
        ],
        spec: GIT_DIFF_SPEC,
        options: GIT_DIFF_EFFECTS,
        runs: false,
    },
    GitSubcommand {
        names: &["reset"],
        spec: Spec {
            short_arg: "U",
            long_arg: &["pathspec-from-file", "unified", "inter-hunk-context"],
            long_flag: &[
                "hard",
                "soft",
                "mixed",
                "merge",
                "keep",
                "quiet",
                "no-quiet",
                "patch",
                "intent-to-add",
                "recurse-submodules",
                "no-recurse-submodules",
                "refresh",
                "no-refresh",
                "pathspec-file-nul",
            ],
            lenient: true,
            ..Spec::NONE
        },
        options: &[],
        runs: false,
    },
    GitSubcommand {
        names: &["clean"],
        spec: Spec {
            short_arg: "e",
            long_arg: &["exclude"],
            long_flag: &["force", "dry-run", "interactive", "quiet"],
            lenient: true,
            ..Spec::NONE
        },
        options: &[],
        runs: false,
    },
    GitSubcommand {
        names: &["checkout", "switch", "restore"],
        spec: Spec {
            short_arg: "bBcCsU",
            long_arg: &[
                "source",
                "orphan",
                "conflict",
                "pathspec-from-file",
                "unified",
                "create",
                "force-create",
            ],
            long_flag: &[
                "force",
                "ours",
                "theirs",
                "merge",
                "detach",
                "quiet",
                "patch",
                "staged",
                "worktree",
                "discard-changes",
            ],
            lenient: true,
            ..Spec::NONE
        },
        options: &[],
        runs: false,
    },
    GitSubcommand {
        names: &["push"],
        spec: Spec {
            short_arg: "o",
            long_arg: &[
                "receive-pack",
                "exec",
                "push-option",
                "repo",
                "recurse-submodules",
            ],
            long_flag: &[
                "force", "mirror", "delete", "tags", "all", "prune", "dry-run",
            ],
            lenient: true,
            ..Spec::NONE
        },
        options: &[("--receive-pack", Does::Runs), ("--exec", Does::Runs)],
        runs: false,
    },
    GitSubcommand {
        names: &["fetch", "pull", "clone", "ls-remote", "submodule"],
        spec: Spec {
            short_arg: "ucbjo",
            long_arg: &[
                "upload-pack",
                "template",
                "config",
                "origin",
                "branch",
                "depth",
                "jobs",
                "reference",
                "separate-git-dir",
                "server-option",
            ],
            lenient: true,
            ..Spec::NONE
        },
        options: &[
            ("--upload-pack", Does::Runs),
            ("-u", Does::Runs),
            ("--template", Does::Runs),
            ("--config", Does::Runs),
            ("-c", Does::Runs),
        ],
        runs: false,
    },
    GitSubcommand {
        names: &["archive"],
        spec: Spec {
            short_arg: "o",
            long_arg: &["output", "remote", "exec", "format", "prefix"],
            lenient: true,
            ..Spec::NONE
        },
        options: &[
            ("--output", Does::WritesArg),
            ("-o", Does::WritesArg),
            ("--remote", Does::Network),
            ("--exec", Does::Runs),
        ],
        runs: false,
    },
    GitSubcommand {
        names: &["grep"],
        spec: Spec {
            short_arg: "efmABC",
            short_opt: "O",
            long_arg: &[
                "max-depth",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "threads",
            ],
            lenient: true,
            ..Spec::NONE
        },
        options: &[("-O", Does::Runs), ("--open-files-in-pager", Does::Runs)],
        runs: false,
    },
    GitSubcommand {
        names: &["difftool", "mergetool"],
        spec: Spec {
            short_arg: "tx",
            long_arg: &["tool", "extcmd"],
            lenient: true,
            ..Spec::NONE
        },
        options: &[],
        runs: true,
    },
];
