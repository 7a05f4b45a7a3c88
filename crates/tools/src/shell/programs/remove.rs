//! rm as the rules read it: a deny rule is a pattern over words (`rm -[rRf]*[rRf] /*`), and rm
//! means the same by many spellings (`rm -r -f /usr`, `--recursive --force`, `-R`, `-rfv`,
//! `//usr/`, `rm -rf x /usr`). Each operand is read as one canonical command, `rm -rf PATH`
//! (or `rm -f PATH`, `rm PATH`), which the rules see besides the command as written.

use crate::shell::options::{has, scan_permuted, Spec};
use crate::shell::words::Word;

/// GNU rm's options (coreutils 9).
const RM: Spec = Spec {
    short_flag: "fiIrRdv",
    long_flag: &[
        "force",
        "recursive",
        "dir",
        "verbose",
        "one-file-system",
        "no-preserve-root",
        "help",
        "version",
    ],
    long_opt: &["interactive", "preserve-root"],
    ..Spec::NONE
};

/// The canonical readings of `rm ARGS`, one per operand and form (none when the options are
/// not known before the line runs: rm then fails or the words are dynamic, which the line's
/// other concerns judge).
///
/// The options are a set: recursion is `-rf` whatever else is given, since `-i`/`-I` take
/// their answers from the input, which may say yes (`yes | rm -ri /usr`), and without a
/// terminal rm asks nothing. Each operand is normalised lexically (`//usr/./` is `/usr`,
/// `/usr/lib/..` is `/usr`, which GNU rm refuses but another rm may not), and an operand with
/// a glob also stands for the directory whose entries it names (`/usr/*` is read as `/usr`).
pub(in crate::shell) fn rm_readings(name: &str, args: &[Word]) -> Vec<Vec<String>> {
    // A glob that starts with `/` expands to absolute paths only, never to an option: one
    // operand for the rules (`rm -rf /usr/*`). `$"…"` is its text where no message catalogue
    // translates it.
    let args: Vec<Word> = args
        .iter()
        .map(|w| match locale_text(&w.raw) {
            Some(inner) => Word {
                text: inner.to_string(),
                literal: true,
                single: true,
                ..w.clone()
            },
            // A word only known at run time is read as the operand it is spelled as (its
            // reading keeps the spelling, which the approval layer treats as any value, options
            // included): without a reading, `rm -r "$d" -f` was never read as `rm -rf "$d"`.
            None if !w.literal && !w.text.starts_with('-') => Word {
                single: true,
                literal: true,
                ..w.clone()
            },
            None => Word {
                single: w.single || w.raw.starts_with('/'),
                ..w.clone()
            },
        })
        .collect();
    let Ok((opts, operands)) = scan_permuted(&args, &RM) else {
        return Vec::new();
    };
    let cluster = if has(&opts, &["-r", "-R", "--recursive"]) {
        Some("-rf")
    } else if has(&opts, &["-f", "--force"]) {
        Some("-f")
    } else {
        None
    };
    let mut out = Vec::new();
    for operand in &operands {
        let text = operand.text.as_str();
        // A home (`~`, `~user`, `~+`) is the base `..` climbs from: anchored by the assessment.
        let mut forms = vec![if text.starts_with('~') {
            text.to_string()
        } else {
            normalise(text)
        }];
        if let Some(dir) = glob_parent(text) {
            forms.push(normalise(&dir));
        }
        for form in forms {
            let mut key = vec![name.to_string()];
            key.extend(cluster.map(String::from));
            key.push(form);
            if !out.contains(&key) {
                out.push(key);
            }
        }
    }
    out
}

/// The text of a `$"…"` word without expansions or escapes inside.
pub(in crate::shell) fn locale_text(raw: &str) -> Option<&str> {
    raw.strip_prefix("$\"")
        .and_then(|r| r.strip_suffix('"'))
        .filter(|inner| !inner.contains(['$', '`', '\\', '"']))
}

/// `path` without empty and `.` components, `..` taken lexically
/// ([`cordon_fs::links::lexical_text`]); a relative result that starts with `-` keeps a `./`
/// so that it never reads as an option.
pub(crate) fn normalise(path: &str) -> String {
    let text = cordon_fs::links::lexical_text(path);
    if text.starts_with('-') {
        format!("./{text}")
    } else {
        text
    }
}

/// The directory before the first component with a glob character (`/usr/*` -> `/usr`,
/// `/*` -> `/`).
fn glob_parent(path: &str) -> Option<String> {
    let at = path.find(['*', '?', '['])?;
    let cut = path[..at].rfind('/')?;
    Some(if cut == 0 {
        "/".to_string()
    } else {
        path[..cut].to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn paths_are_normalised_lexically() {
        for (path, want) in [
            ("//usr", "/usr"),
            ("/usr/", "/usr"),
            ("/usr/.", "/usr"),
            ("/./usr//", "/usr"),
            ("/usr/lib/..", "/usr"),
            ("/..", "/"),
            ("//", "/"),
            ("./build/", "build"),
            ("a/../..", ".."),
            ("./-rf", "./-rf"),
            (".", "."),
        ] {
            assert_eq!(normalise(path), want, "{path}");
        }
    }
}
