//! Option parsing as getopt and GNU getopt_long do it: clustered short flags (`-uo x`),
//! attached or separate arguments (`-ox`, `-o x`), `--name=value`, unambiguous abbreviations
//! of long options (`--out` for `--output`), `--` ending the options, and (with
//! [`scan_permuted`]) options after operands. Wrappers use it to find where their inner
//! command starts; the program tables use it to find the options that write or run code.

use super::words::Word;

/// Why option parsing had to stop.
pub(super) enum Stop {
    /// A word whose value (or word count) is unknown sits where options or the inner
    /// command are.
    Dynamic(String),
    /// An option we do not model.
    Unknown(String),
}

/// A getopt-style option specification.
#[derive(Default, Clone, Copy)]
pub(super) struct Spec {
    /// Short options that take an argument (attached or the next word).
    pub(super) short_arg: &'static str,
    /// Short options with an optional attached argument only (`-i[R]`).
    pub(super) short_opt: &'static str,
    /// Short options without argument.
    pub(super) short_flag: &'static str,
    /// Any ASCII letter is a flag unless listed in `short_arg` (shells).
    pub(super) any_letter: bool,
    /// Long options that take an argument (`--x=v` or `--x v`).
    pub(super) long_arg: &'static [&'static str],
    /// Long options without argument (an attached `=v` is accepted).
    pub(super) long_flag: &'static [&'static str],
    /// Long options with an optional argument: `--x=v`, or (argparse's `nargs='?'`) the next
    /// word when it does not start with `-` (`pytest --debug FILE`).
    pub(super) long_opt: &'static [&'static str],
    /// `+o`-style options (shells).
    pub(super) plus: bool,
    /// `-N` numeric options (`nice -10`).
    pub(super) numeric: bool,
    /// Accept any `--name=value` long option (strace, ltrace).
    pub(super) long_any_value: bool,
    /// An option not listed is a flag (`--name` as written, a short letter alone), not an
    /// error: for the programs whose options are examined for what they do, where the table
    /// lists every option that takes an argument and the ones that matter.
    pub(super) lenient: bool,
}

impl Spec {
    /// No options at all (the base for a table entry's `..Spec::NONE`).
    pub(super) const NONE: Spec = Spec {
        short_arg: "",
        short_opt: "",
        short_flag: "",
        any_letter: false,
        long_arg: &[],
        long_flag: &[],
        long_opt: &[],
        plus: false,
        numeric: false,
        long_any_value: false,
        lenient: false,
    };
}

/// One parsed option: `-x` or `--name`, with its argument.
pub(super) struct Opt {
    pub(super) name: String,
    pub(super) arg: Option<Word>,
}

pub(super) enum Step {
    /// Options from one word (or two, with a separate argument); continue at `next`.
    Opts(Vec<Opt>, usize),
    /// `--`: operands start at the given index.
    End(usize),
    /// The word at the index is an operand.
    Operand,
}

pub(super) fn step(args: &[Word], i: usize, spec: &Spec) -> Result<Step, Stop> {
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
        let opt_m = known(spec.long_opt);
        let exact_arg = spec.long_arg.contains(&name);
        let exact_flag = spec.long_flag.contains(&name);
        let exact_opt = spec.long_opt.contains(&name);
        if exact_opt
            || (!exact_arg && !exact_flag && opt_m.len() == 1 && args_m.len() + flags_m.len() == 0)
        {
            let full = format!("--{}", opt_m.first().copied().unwrap_or(name));
            let arg = match (value, args.get(i + 1)) {
                (Some(v), _) => Some((Word::lit(v), i + 1)),
                (None, Some(a)) if !a.single => return Err(Stop::Dynamic(a.text.clone())),
                (None, Some(a)) if !a.text.starts_with('-') => Some((a.clone(), i + 2)),
                _ => None,
            };
            return Ok(match arg {
                Some((a, next)) => Step::Opts(
                    vec![Opt {
                        name: full,
                        arg: Some(a),
                    }],
                    next,
                ),
                None => Step::Opts(
                    vec![Opt {
                        name: full,
                        arg: None,
                    }],
                    i + 1,
                ),
            });
        }
        let takes_arg = if exact_arg {
            true
        } else if exact_flag {
            false
        } else if args_m.len() + flags_m.len() == 1 {
            args_m.len() == 1
        } else if (spec.long_any_value && value.is_some()) || spec.lenient {
            false
        } else {
            return Err(Stop::Unknown(format!(
                "unknown or ambiguous option `--{name}`: cannot tell where the inner command starts"
            )));
        };
        // An ambiguous abbreviation a lenient spec let through stays as written.
        let unique = exact_arg || exact_flag || args_m.len() + flags_m.len() == 1;
        // An exact name is itself, also where it starts a longer one (`--inspect` is not
        // `--inspect-port`).
        let full = if exact_arg || exact_flag {
            name
        } else if unique || !spec.lenient {
            args_m.first().or(flags_m.first()).copied().unwrap_or(name)
        } else {
            name
        };
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
        if spec.short_flag.contains(c)
            || (spec.any_letter && c.is_ascii_alphabetic())
            || spec.lenient
        {
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
pub(super) fn scan(args: &[Word], spec: &Spec) -> Result<(Vec<Opt>, usize), Stop> {
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
pub(super) fn scan_permuted(args: &[Word], spec: &Spec) -> Result<(Vec<Opt>, Vec<Word>), Stop> {
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

pub(super) fn has(opts: &[Opt], names: &[&str]) -> bool {
    opts.iter().any(|o| names.contains(&o.name.as_str()))
}

pub(super) fn arg_of<'a>(opts: &'a [Opt], names: &[&str]) -> Option<&'a Word> {
    opts.iter()
        .rev()
        .find(|o| names.contains(&o.name.as_str()))
        .and_then(|o| o.arg.as_ref())
}
