//! git: its global options (exactly as git reads them, before the subcommand) and the options of
//! the subcommands that write, run a configured program or reach the network.

use super::{judge_options, parse, Does, EffectKind, Examined, Parsed, UNKNOWN_OPTION};
use crate::shell::options::{Opt, Spec};
use crate::shell::words::Word;

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

/// `-c NAME=VALUE` settings that only change how output looks, or who a commit names (agents
/// commit as `git -c user.name=… -c user.email=… commit`; a name runs nothing).
fn inert_git_config(setting: &str) -> bool {
    let name = setting
        .split_once('=')
        .map_or(setting, |(n, _)| n)
        .to_ascii_lowercase();
    name.starts_with("color.")
        || name.starts_with("advice.")
        || matches!(
            name.as_str(),
            "core.quotepath"
                | "user.name"
                | "user.email"
                | "author.name"
                | "author.email"
                | "committer.name"
                | "committer.email"
                | "init.defaultbranch"
        )
}

/// git's own commands (`git --list-cmds=main` of git 2.47, with `subtree`, `gui`, `citool` and
/// newer git's `backfill`, `diff-pairs`, `last-modified`, `repo`): neither an alias nor an
/// external `git-*` program can take one of these names.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout--worker",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-cache--daemon",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-pairs",
    "diff-tree",
    "difftool",
    "difftool--helper",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "fsmonitor--daemon",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "last-modified",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-recursive-ours",
    "merge-recursive-theirs",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "pickaxe",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "remote-ext",
    "remote-fd",
    "remote-ftp",
    "remote-ftps",
    "remote-http",
    "remote-https",
    "repack",
    "replace",
    "replay",
    "repo",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "sh-i18n--envsubst",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "submodule--helper",
    "subtree",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-archive--writer",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "web--browse",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// git: global options (handled as git does, exactly, before the subcommand), then the
/// subcommand's own options.
pub(super) fn git(args: &[Word], out: &mut Examined) {
    let mut key = vec!["git".to_string()];
    // Where `-C` took git (relative to the current directory, as the line wrote it).
    let mut dir: Option<Word> = None;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            out.effect(
                EffectKind::Runs,
                UNKNOWN_OPTION,
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
            let value = match attached {
                Some(v) => Some(Word::lit(v)),
                None if takes => args.get(i + 1).cloned(),
                None => None,
            };
            if let Some(v) = value.filter(|_| matches!(name, "-C" | "--git-dir" | "--work-tree")) {
                located(name, &v, &mut dir, out);
            }
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
    // An alias or an external `git-SUB` program (git's own commands take precedence over
    // both): what it runs and writes the line does not show. A rule that names it decides.
    // (An option git does not take as global, `--version`, prints or is refused.)
    if !sub.text.starts_with('-') && !GIT_COMMANDS.contains(&sub.text.as_str()) {
        out.effect(
            EffectKind::Runs,
            &sub.text,
            format!(
                "`git {}` is none of git's own commands: an alias or an external `git-{}` program, which runs and writes what the line does not show",
                sub.text, sub.text
            ),
        );
    }
    if sub.text == "config" {
        config_writes(sub_args, dir.as_ref(), out);
    }
    if matches!(sub.text.as_str(), "apply" | "am") {
        patch_writes(&sub.text, sub_args, out);
    }
    more_writes(&sub.text, sub_args, out);
    if !leaves_the_work_tree(&sub.text, sub_args) {
        out.unshown(
            format!("`git {}` writes the work tree from git's objects, names the line does not show (any may be on the persistence surface: a committed `.envrc`, `.vscode/tasks.json`)", sub.text));
    }
    // `git format-patch -o DIR` writes the patches into DIR (its other options are the diff
    // family's, judged below).
    if sub.text == "format-patch" {
        let mut i = 0;
        while let Some(w) = sub_args.get(i) {
            i += 1;
            let t = w.text.as_str();
            if t == "--" {
                break;
            }
            let long = t.strip_prefix("--").and_then(|l| {
                let (name, value) = l.split_once('=').map_or((l, None), |(n, v)| (n, Some(v)));
                (name.len() >= 8 && "output-directory".starts_with(name)).then_some(value)
            });
            match (t, long) {
                (_, Some(Some(v))) => out.write(&Word::lit(v)),
                ("-o", _) | (_, Some(None)) => {
                    if let Some(d) = sub_args.get(i) {
                        out.write(d);
                        i += 1;
                    }
                }
                _ if t.starts_with("-o") && w.literal => out.write(&Word::lit(&t[2..])),
                _ => {}
            }
        }
    }
    // `git bundle create FILE …` writes FILE.
    if sub.text == "bundle"
        && sub_args
            .first()
            .is_some_and(|w| w.literal && w.text == "create")
    {
        if let Some(file) = sub_args[1..]
            .iter()
            .find(|w| !(w.literal && w.text.starts_with('-')))
        {
            out.write(file);
        }
    }
    // `git mv SRC… DST` renames in the work tree as mv does (`git mv x .envrc`, `git mv
    // x/settings.json .claude/`), unless it only says what it would do.
    if sub.text == "mv" {
        let p = parse(
            sub_args,
            &Spec {
                lenient: true,
                ..Spec::NONE
            },
            true,
        );
        if !p.has(&["-n", "--dry-run"]) {
            for w in &p.operands {
                out.write(w);
            }
            super::into_directory("mv", &p, out);
        }
    }
    // `git worktree add PATH` checks a work tree out at PATH.
    if sub.text == "worktree"
        && sub_args
            .first()
            .is_some_and(|w| w.literal && w.text == "add")
    {
        let mut i = 1;
        while let Some(w) = sub_args.get(i) {
            i += 1;
            if w.literal && w.text.starts_with('-') {
                if matches!(w.text.as_str(), "-b" | "-B" | "--reason") {
                    i += 1;
                }
                continue;
            }
            out.write(w);
            break;
        }
    }
    match git_subcommand(&sub.text) {
        Some(g) => {
            let p = parse(sub_args, &g.spec, true);
            judge_options(&p, g.options, out);
            // `git clone URL DIR` writes DIR (and `--separate-git-dir` the repository there).
            if sub.text == "clone" {
                if let Some(dest) = p.operands.get(1) {
                    out.write(dest);
                }
                for d in p.args(&["--separate-git-dir"]) {
                    out.write(d);
                }
            }
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
                    UNKNOWN_OPTION,
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
                if forces(&sub.text, &p) {
                    let mut reading = key.clone();
                    reading.insert(2, "--force".to_string());
                    out.readings.push(reading);
                }
            } else {
                key.extend(sub_args.iter().map(|w| w.text.clone()));
            }
        }
        None => key.extend(sub_args.iter().map(|w| w.text.clone())),
    }
    out.key = Some(key);
}

/// Round 6: git's own commands that write a file they name, write the operator's
/// configuration or scheduler, or serve and run programs, each found allowed under a `git`
/// rule: `git mailinfo .envrc patch` and `git merge-file .envrc …` write the file they name,
/// `credential-store --file F`, `fast-import --export-marks=F` and `index-pack -o F` too; `git
/// init --template=DIR` copies DIR's hooks into the new repository (`--separate-git-dir`
/// puts it elsewhere); `git maintenance start` installs a systemd timer or crontab entry that
/// runs git for the operator (and `register` writes `~/.gitconfig`); `git daemon
/// --access-hook=CMD` and `git instaweb` run servers and programs; `git receive-pack` writes
/// refs and objects from its input and runs the repository's receive hooks.
fn more_writes(sub: &str, args: &[Word], out: &mut Examined) {
    let lenient = Spec {
        lenient: true,
        ..Spec::NONE
    };
    // A long option `name` given in full or abbreviated (parse-options takes any unambiguous
    // prefix: the real `git init --t=DIR` copied DIR's hooks; an ambiguous one git refuses),
    // with its value.
    let long = |t: &str, name: &str, min: usize| -> Option<Option<String>> {
        let l = t.strip_prefix("--")?;
        let (n, v) = l
            .split_once('=')
            .map_or((l, None), |(n, v)| (n, Some(v.to_string())));
        (n.len() >= min && name.starts_with(n)).then_some(v)
    };
    // The value of `--name[=]V` (or the next word) for each use of the option.
    let values = |name: &str, min: usize| -> Vec<Word> {
        let mut found = Vec::new();
        let mut i = 0;
        while let Some(w) = args.get(i) {
            i += 1;
            if w.literal && w.text == "--" {
                break;
            }
            match long(&w.text, name, min) {
                Some(Some(v)) => found.push(Word::lit(&v)),
                Some(None) => {
                    if let Some(a) = args.get(i) {
                        found.push(a.clone());
                        i += 1;
                    }
                }
                None => {}
            }
        }
        found
    };
    // Revision options (`setup_revisions`) take `--output FILE` in every command that reads
    // them, not only the diff family below: the real git writes it for `rev-list`,
    // `shortlog`, `reflog`, `stash show`/`list` and `cherry-pick`. These take the name only in
    // full (`git rev-list --outp=F` is refused), as does fast-export's `--export-marks`.
    let diff_family =
        git_subcommand(sub).is_some_and(|g| g.options.iter().any(|(n, _)| *n == "--output"));
    if !diff_family {
        for f in values("output", "output".len()) {
            out.write(&f);
        }
    }
    if sub == "fast-export" {
        for f in values("export-marks", "export-marks".len()) {
            out.write(&f);
        }
    }
    match sub {
        "mailinfo" => {
            let p = parse(args, &lenient, true);
            for w in p.operands.iter().take(2) {
                out.write(w);
            }
        }
        "merge-file" => {
            let spec = Spec {
                short_arg: "L",
                long_arg: &["marker-size", "diff-algorithm"],
                lenient: true,
                ..Spec::NONE
            };
            let p = parse(args, &spec, true);
            if !p.has(&["-p", "--stdout"]) {
                if let Some(w) = p.operands.first() {
                    out.write(w);
                }
            }
        }
        // Round 11: `git credential approve|reject` (`store`/`erase`, and a verb only known
        // when the line runs) hand what they read to the operator's credential helpers, which
        // keep it outside the roots (the real git 2.47 wrote the store file the operator's
        // global configuration names); `fill` and `capability` only read.
        "credential"
            if args
                .iter()
                .any(|w| !w.literal || !matches!(w.text.as_str(), "fill" | "capability")) =>
        {
            out.effect(
                EffectKind::Writes,
                "credential",
                "`git credential approve`/`reject` changes what the operator's credential helpers keep, outside the roots".into(),
            );
        }
        "credential-store" => {
            let files = values("file", 1);
            let stores = args
                .iter()
                .any(|w| matches!(w.text.as_str(), "store" | "erase"));
            // `store` and `erase` write the file (`get` only reads it).
            if files.is_empty() && stores {
                out.write(&Word::lit("~/.git-credentials"));
            }
            for f in files.iter().filter(|_| stores) {
                out.write(f);
            }
        }
        "fast-import" => {
            for w in args {
                for name in ["--export-marks=", "--export-pack-edges="] {
                    if let Some(f) = w.text.strip_prefix(name) {
                        out.write(&Word::lit(f));
                    }
                }
            }
        }
        "index-pack" => {
            let mut i = 0;
            while let Some(w) = args.get(i) {
                i += 1;
                if w.text == "-o" {
                    if let Some(f) = args.get(i) {
                        out.write(f);
                    }
                }
            }
        }
        "init" => {
            if values("template", 1).iter().any(|t| !t.text.is_empty()) {
                out.unshown("`git init --template=DIR` copies DIR's hooks and files into the new repository".into());
            }
            // A repository whose git directory is not `.git`: its configuration and hooks
            // are the surface only once it exists, and the rest of the line may write them.
            let bare = args
                .iter()
                .any(|w| long(&w.text, "bare", 1).is_some_and(|v| v.is_none()));
            if bare || !values("separate-git-dir", 1).is_empty() {
                out.unshown("`git init --bare` (or `--separate-git-dir`) makes a repository whose configuration and hooks are not under `.git`, and the line may write them".into());
            }
            // Round 11: `git init DIR` makes DIR and the repository in it (the real git 2.47
            // wrote `/tmp/…/r/.git`; allowed outside the roots before). Every operand is
            // judged (an option's value taken for one, `-b main`, is only judged more).
            for dir in parse(args, &lenient, true).operands {
                out.write(&dir);
            }
        }
        "maintenance" => {
            let p = parse(args, &lenient, true);
            if p.operands.first().is_none_or(|w| {
                !w.literal || matches!(w.text.as_str(), "start" | "stop" | "register" | "unregister")
            }) {
                out.effect(
                    EffectKind::Runs,
                    "maintenance",
                    "`git maintenance start`/`register` writes the operator's `~/.gitconfig` and installs a systemd timer or crontab entry that runs git outside any sandbox".into(),
                );
            }
        }
        // `for-each-repo --config=KEY CMD` runs `git CMD` in every repository KEY lists (the
        // operator's, outside the roots); `web--browse --browser=CMD` runs CMD.
        "for-each-repo" | "web--browse" => out.effect(
            EffectKind::Runs,
            sub,
            format!("`git {sub}` runs commands in other repositories or a browser the line does not show"),
        ),
        "bugreport" | "diagnose" => {
            let mut i = 0;
            while let Some(w) = args.get(i) {
                i += 1;
                match long(&w.text, "output-directory", 1) {
                    Some(Some(v)) => out.write(&Word::lit(&v)),
                    Some(None) => {
                        if let Some(d) = args.get(i) {
                            out.write(d);
                        }
                    }
                    None if w.text == "-o" => {
                        if let Some(d) = args.get(i) {
                            out.write(d);
                        }
                    }
                    None if w.text.starts_with("-o") => out.write(&Word::lit(&w.text[2..])),
                    None => {}
                }
            }
        }
        "daemon" | "instaweb" => out.effect(
            EffectKind::Runs,
            sub,
            format!("`git {sub}` runs a server and the programs it is configured or told to run (`--access-hook`, a web server, a browser)"),
        ),
        // `--in-place` rewrites each file operand with the trailers appended (`--trailer
        // 'touch pwned #=x'` adds a line a shell runs).
        "interpret-trailers" => {
            let spec = Spec {
                long_arg: &["trailer", "where", "if-exists", "if-missing"],
                long_flag: &[
                    "in-place",
                    "trim-empty",
                    "only-trailers",
                    "only-input",
                    "unfold",
                    "parse",
                    "no-divider",
                ],
                lenient: true,
                ..Spec::NONE
            };
            let p = parse(args, &spec, true);
            if p.has(&["--in-place"]) {
                for w in &p.operands {
                    out.write(w);
                }
            }
        }
        // `git shell -c CMD` runs `git-receive-pack` (below) or a command of the operator's
        // `~/git-shell-commands`.
        "shell" => out.unshown(
            "`git shell` runs `git-receive-pack` (which writes refs and runs the repository's receive hooks) or the operator's `~/git-shell-commands`".into(),
        ),
        "receive-pack" => out.unshown(
            "`git receive-pack` writes refs and objects from its input and runs the repository's receive hooks (and, as configured, updates the work tree)".into(),
        ),
        _ => {}
    }
}

/// `git config` that sets, unsets, renames or edits: a write of the file it changes — the
/// repository's `.git/config` (or `config.worktree`), `~/.gitconfig` (`--global`),
/// `/etc/gitconfig` (`--system`) or `--file FILE` — judged like a redirection to it, so the
/// persistence surface asks (`git config core.fsmonitor CMD` makes the next `git status` run
/// CMD); `-e`/`--edit` also runs the editor. Reading (`--get*`, `--list`, `get`, `list`, a name
/// alone) writes nothing. A word only known when the line runs may be any of these.
fn config_writes(args: &[Word], dir: Option<&Word>, out: &mut Examined) {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
    ];
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
    ];
    const VALUED: &[&str] = &["-f", "--file", "--blob", "--type", "--default", "--comment"];
    let mut file: Option<Word> = None;
    let mut scope = "local";
    let mut reads = false;
    let mut writes = false;
    let mut edits = false;
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.literal {
            out.effect(
                EffectKind::Runs,
                UNKNOWN_OPTION,
                format!(
                    "`{}` is only known when the line runs and may make `git config` write or edit",
                    w.text
                ),
            );
            return;
        }
        let t = w.text.as_str();
        let (name, value) = match t.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(Word::lit(v))),
            _ => (t, None),
        };
        if !name.starts_with('-') || name == "-" {
            operands.push(w);
            continue;
        }
        match name {
            "--global" => scope = "global",
            "--system" => scope = "system",
            "--worktree" => scope = "worktree",
            "--local" => scope = "local",
            _ => {}
        }
        reads |= READS.contains(&name);
        writes |= WRITES.contains(&name);
        edits |= matches!(name, "-e" | "--edit");
        if VALUED.contains(&name) {
            let v = value.or_else(|| {
                i += 1;
                args.get(i - 1).cloned()
            });
            if matches!(name, "-f" | "--file") {
                file = v;
            }
        }
    }
    // git 2.46's subcommands: `git config set|unset|rename-section|remove-section|edit …`.
    if let Some(first) = operands.first() {
        match first.text.as_str() {
            "get" | "list" => reads = true,
            "set" | "unset" | "rename-section" | "remove-section" => writes = true,
            "edit" => {
                writes = true;
                edits = true;
            }
            _ => {}
        }
    }
    if !writes && !reads && operands.len() >= 2 {
        writes = true;
    }
    if !writes {
        return;
    }
    if edits {
        out.effect(
            EffectKind::Runs,
            "--edit",
            "`git config --edit` runs the configured editor".into(),
        );
    }
    let target = match (file, scope) {
        (None, "global") => Word::lit("~/.gitconfig"),
        (None, "system") => Word::lit("/etc/gitconfig"),
        // Round 6: `git init --bare ev && git config --file ev/config core.pager CMD` was
        // allowed: when the line is read, `ev` is no repository yet, so `ev/config` is not
        // the surface. A file git is told to write as configuration under a repository
        // configuration's name is taken for one.
        (Some(f), _)
            if f.text
                .rsplit('/')
                .next()
                .is_some_and(|n| matches!(n, "config" | "config.worktree")) =>
        {
            out.effect(
                EffectKind::Writes,
                "--file",
                format!(
                    "`git config --file {}` writes configuration under the name of a repository's, which git would run programs from (`core.pager`, `core.fsmonitor`)",
                    f.text
                ),
            );
            f
        }
        (Some(f), _) => f,
        (None, s) => {
            let name = if s == "worktree" {
                ".git/config.worktree"
            } else {
                ".git/config"
            };
            match dir {
                Some(d) if d.literal => Word::lit(&format!("{}/{name}", d.text)),
                Some(d) => Word {
                    text: format!("{}/{name}", d.text),
                    raw: format!("{}/{name}", d.raw),
                    literal: false,
                    single: true,
                },
                None => Word::lit(name),
            }
        }
    };
    out.write(&target);
}

/// `-C DIR`, `--git-dir=DIR`, `--work-tree=DIR`: a repository (or work tree) outside the
/// writable roots is not the project's: git runs its configuration (`core.fsmonitor`,
/// `core.pager`, aliases, hooks) and reads and writes its files. `-C` accumulates (`-C a -C b`
/// is `a/b`, and the other two are relative to it), as git's `chdir`s do.
fn located(name: &str, value: &Word, dir: &mut Option<Word>, out: &mut Examined) {
    // `-C ""` leaves git where it is.
    if name == "-C" && value.literal && value.text.is_empty() {
        return;
    }
    let joined = match dir.as_ref() {
        Some(d) if !value.text.starts_with('/') => Word {
            text: format!("{}/{}", d.text, value.text),
            raw: format!("{}/{}", d.raw, value.raw),
            literal: d.literal && value.literal,
            single: d.single && value.single,
        },
        _ => value.clone(),
    };
    let what = match name {
        "-C" => "runs the configuration and hooks of the repository at",
        "--git-dir" => "runs the configuration and hooks of the repository",
        _ => "reads and writes the work tree",
    };
    out.code_at(&joined, what);
    if name == "-C" {
        *dir = Some(joined);
    }
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
    // Round 10: the plumbing under `fetch` and `push` takes the same programs to run (the
    // real git 2.47's `fetch-pack --upload-pack=CMD` and `--exec=CMD`, `send-pack
    // --receive-pack=CMD` and `--exec=CMD` each ran CMD through the shell).
    GitSubcommand {
        names: &["fetch-pack", "send-pack"],
        spec: Spec {
            long_arg: &["upload-pack", "receive-pack", "exec"],
            lenient: true,
            ..Spec::NONE
        },
        options: &[
            ("--upload-pack", Does::Runs),
            ("--receive-pack", Does::Runs),
            ("--exec", Does::Runs),
        ],
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
        options: &[
            ("-O", Does::Runs),
            ("--open-files-in-pager", Does::Runs),
            ("--textconv", Does::Runs),
        ],
        runs: false,
    },
    // `--textconv` and `--filters` run the drivers the configuration names.
    GitSubcommand {
        names: &["cat-file"],
        spec: Spec {
            lenient: true,
            ..Spec::NONE
        },
        options: &[("--textconv", Does::Runs), ("--filters", Does::Runs)],
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

/// `git apply` and `git am` write the files the patch names, which the line does not show (git
/// refuses `.git/` in them, not `.envrc`, `.vscode/tasks.json` or `.claude/settings.json`),
/// unless the line only asks what the patch would do (`--check`, `--stat`, `--numstat`,
/// `--summary` without `--apply`), applies it to the index alone (`apply --cached`) or shows
/// the patch `am` stopped at. Those are taken exactly as written, and only when every word is
/// known: a word only known when the line runs may be `--apply`.
fn patch_writes(sub: &str, args: &[Word], out: &mut Examined) {
    let all_known = args.iter().all(|w| w.literal);
    let has = |names: &[&str]| all_known && args.iter().any(|w| names.contains(&w.text.as_str()));
    let reads_only = match sub {
        "apply" => {
            has(&["--cached"])
                || (has(&["--check", "--stat", "--numstat", "--summary"])
                    && !args.iter().any(|w| w.text == "--apply"))
        }
        _ => has(&["--show-current-patch", "--quit"]),
    };
    if !reads_only {
        out.unshown(
            format!("`git {sub}` writes the files the patch names, which the line does not show (any may be on the persistence surface: `.envrc`, `.vscode/tasks.json`)"));
    }
}

/// Whether `git SUB ARGS` is certain to leave the work tree alone. The subcommands that write it
/// from git's objects (`checkout`, `switch`, `restore`, `merge`, `pull`, `stash`, `reset
/// --hard`, `cherry-pick`, `revert`, `rebase`, `read-tree`, `checkout-index`, `worktree add`,
/// `clone`, `sparse-checkout`, `submodule`, `bisect`, `subtree`, `filter-branch`, and the
/// importers `quiltimport`, `svn`, `p4`, `cvsimport`, `archimport`, `cvsexportcommit`) write names
/// the line does not show: whatever a commit holds (`git apply --cached p && git commit` put a
/// `.envrc` there). Of them, only forms shown with the real git (2.47) to leave the work tree
/// alone, also in a sparse repository whose patterns changed, are certain, taken exactly as
/// written with every word known (a word only known when the line runs may be `--hard`, and
/// parse-options takes `--wor` for `--worktree`):
/// - `git switch -c`/`-C`/`--create`/`--force-create NEW` without a start point: with HEAD
///   unchanged `git switch` skips the work tree (`git checkout -b NEW` does not: it applies
///   changed sparse patterns);
/// - `git restore --staged`/`-S` without `--worktree`/`-W` (the index alone);
/// - `git reset` without `--hard`, `--merge`, `--keep`, `--recurse-submodules`;
/// - `git stash list`/`show`, `sparse-checkout list`, `submodule status`/`summary`/`foreach`
///   (its command is judged on its own), `bisect log`/`terms`, `worktree` other than `add`.
fn leaves_the_work_tree(sub: &str, args: &[Word]) -> bool {
    let known = args.iter().all(|w| w.literal);
    let first = args.first().map(|w| w.text.as_str());
    // Every option word is one of `allowed` (an `=value` attached to one that takes it).
    let only = |allowed: &[&str], operands: usize| {
        let mut count = 0;
        let mut i = 0;
        let mut after_dashes = false;
        while let Some(w) = args.get(i) {
            i += 1;
            let t = w.text.as_str();
            if after_dashes || !t.starts_with('-') || t == "-" {
                count += 1;
                continue;
            }
            if t == "--" {
                after_dashes = true;
                continue;
            }
            let name = t.split_once('=').map_or(t, |(n, _)| n);
            if !allowed.contains(&name) {
                return false;
            }
            if matches!(name, "-s" | "--source") && !t.contains('=') {
                i += 1; // its value
            }
        }
        count <= operands
    };
    const WRITERS: &[&str] = &[
        "checkout",
        "switch",
        "restore",
        "merge",
        "pull",
        "stash",
        "reset",
        "cherry-pick",
        "revert",
        "rebase",
        "read-tree",
        "checkout-index",
        "worktree",
        "clone",
        "sparse-checkout",
        "submodule",
        "bisect",
        "subtree",
        "filter-branch",
        // Round 7: a quilt series applied to the work tree (the real `git quiltimport` wrote
        // the `.envrc` a patch adds), and the importers that check out or patch one.
        "quiltimport",
        "svn",
        "p4",
        "cvsimport",
        "archimport",
        "cvsexportcommit",
    ];
    if !WRITERS.contains(&sub) {
        return true;
    }
    if !known {
        return false;
    }
    match sub {
        "checkout" | "merge" | "pull" | "cherry-pick" | "revert" | "rebase" | "read-tree"
        | "checkout-index" | "clone" | "subtree" | "filter-branch" => false,
        "switch" => {
            let create = |t: &str| matches!(t, "-c" | "-C" | "--create" | "--force-create");
            let mut i = 0;
            let mut new = 0;
            while let Some(w) = args.get(i) {
                let t = w.text.as_str();
                i += 1;
                if matches!(t, "-q" | "--quiet") {
                    continue;
                }
                if create(t) && args.get(i).is_some_and(|n| !n.text.starts_with('-')) {
                    new += 1;
                    i += 1;
                } else if let Some((_, v)) = t.split_once('=').filter(|(n, _)| create(n)) {
                    new += usize::from(!v.is_empty());
                } else {
                    return false; // a start point, `-m`, `--detach`, a branch to go to
                }
            }
            new == 1
        }
        "restore" => {
            only(
                &[
                    "--staged", "-S", "-q", "--quiet", "-s", "--source", "-p", "--patch",
                ],
                usize::MAX,
            ) && args
                .iter()
                .any(|w| matches!(w.text.as_str(), "--staged" | "-S"))
        }
        "reset" => only(
            &[
                "-q",
                "--quiet",
                "--soft",
                "--mixed",
                "-N",
                "--intent-to-add",
                "-p",
                "--patch",
                "--refresh",
                "--no-refresh",
            ],
            usize::MAX,
        ),
        "stash" => matches!(first, Some("list" | "show")),
        "sparse-checkout" => first == Some("list"),
        "submodule" => {
            let rest = args.iter().find(|w| !w.text.starts_with('-'));
            rest.is_none_or(|w| matches!(w.text.as_str(), "status" | "summary" | "foreach"))
                && args
                    .iter()
                    .take_while(|w| w.text.starts_with('-'))
                    .all(|w| matches!(w.text.as_str(), "-q" | "--quiet"))
        }
        "bisect" => matches!(first, Some("log" | "terms")),
        "worktree" => first != Some("add"),
        _ => false,
    }
}

/// Whether the command forces what the rules know as `--force` (round 9): `git push -f`
/// (git's short name for it, alone or in a cluster), a `+` refspec (it forces its ref) and
/// `--mirror` (it forces every ref); `git clean -i`, which deletes what the input agrees to
/// without `-f`, as `yes | rm -i` does. Such a command is also read as `git SUB --force …`, so
/// that the default profile's rules (`git push --force*`, `git clean -*f*`) see the meaning,
/// not the spelling, and a rule on the spelling (`git push -f`) still matches the command.
fn forces(sub: &str, p: &super::Parsed) -> bool {
    if p.option_words.iter().any(|w| w.starts_with("--force")) {
        return false; // read so already
    }
    match sub {
        "push" => {
            p.has(&["-f", "--mirror"]) || p.operands.iter().skip(1).any(|w| w.text.starts_with('+'))
        }
        "clean" => p.has(&["-i", "--interactive"]),
        _ => false,
    }
}
