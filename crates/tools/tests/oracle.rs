//! bash as the oracle (issue 22). A line cordon *allows* under the outside review's policy
//! (allow `git status|diff|log`, `ls`, `cat`, `echo`, `grep`, `find`, `pytest`, `npm run
//! test*`; deny `rm`, `curl`, `git reset --hard`; ask by default) is run under real bash in a
//! throw-away directory, traced (`support/oracle.rs`), and what bash really did must be what the
//! rules allow: every program it executed (with its argv, and again with argv[0] as the name
//! the kernel ran, which `exec -a` changes) is allowed by the rules, every path written is
//! inside the workspace, and nothing connects.
//!
//! The lines come from a generator over the grammar of the analysed subset (and the constructs
//! just outside it, which must ask): simple commands seeded from the corpora of the earlier
//! reviews, combined in lists, pipelines, subshells, groups, substitutions, conditionals,
//! loops, `[ … ]` and `[[ … ]]` with operators inside, `sh -c`/`bash -c` strings, wrappers,
//! redirections and arithmetic. CI runs `ORACLE_CASES` lines (default 2000, under a minute on a
//! loaded machine); a longer run: `ORACLE_CASES=20000 cargo test -p cordon-tools --test oracle
//! --release`.

use cordon_approval::RuleSet;
use cordon_policy::{Action, Policy};
use cordon_tools::assess::ShellContext;
use cordon_tools::shell::{parse, parse_argv};
use judge::{assess, ShellAssessment};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

#[path = "support/judge.rs"]
mod judge;
#[path = "support/review.rs"]
mod review;

#[path = "support/denied_anywhere.rs"]
#[allow(dead_code)]
mod denied_anywhere;

#[path = "support/oracle.rs"]
#[allow(dead_code)]
mod oracle;

struct Judge {
    rules: RuleSet,
    cx: ShellContext,
}

impl Judge {
    fn new(ws: &std::path::Path) -> Judge {
        Judge::with_rules(ws, review::REVIEW_RULES)
    }

    fn with_rules(ws: &std::path::Path, rules: &str) -> Judge {
        let text =
            format!("version = 1\n{rules}\n[sandbox.paths.ws]\nroot = \".\"\nmode = \"rw\"\n");
        let policy = Policy::parse(&text, "cordon.toml", ws).unwrap();
        let mut cx = ShellContext::for_policy(&policy, ws.to_path_buf());
        cx.search_path = Vec::new();
        cx.home = None;
        Judge {
            rules: RuleSet::new(&policy.shell),
            cx,
        }
    }

    fn line(&self, line: &str) -> ShellAssessment {
        assess(&parse(line), &self.rules, &self.cx)
    }

    fn argv(&self, argv: &[String]) -> Action {
        assess(&parse_argv(argv), &self.rules, &self.cx)
            .decision
            .action
    }
}

/// What bash did that the rules do not allow, for a line cordon allowed; empty when none.
fn violations(judge: &Judge, sandbox: &oracle::Sandbox, line: &str) -> Vec<String> {
    let trace = sandbox.run(line);
    let mut out = Vec::new();
    for (path, argv) in &trace.execs {
        let name = path.rsplit('/').next().unwrap_or(path).to_string();
        let mut by_path = argv.clone();
        match by_path.first_mut() {
            Some(first) => *first = name,
            None => by_path.push(name),
        }
        let spellings: &[&Vec<String>] = if &by_path == argv {
            &[argv]
        } else {
            &[argv, &by_path]
        };
        for words in spellings {
            let action = judge.argv(words);
            if action != Action::Allow {
                out.push(format!("executed {words:?} ({path}), which is {action:?}"));
            }
        }
    }
    let ok_devices = [
        "/dev/null",
        "/dev/tty",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/fd/1",
        "/dev/fd/2",
    ];
    for w in &trace.writes {
        // Round 11: strace shows a relative path joined to the directory (`ws/../trace.log`),
        // which `starts_with` took for a path inside the workspace.
        let w = &w.components().fold(std::path::PathBuf::new(), |mut p, c| {
            match c {
                std::path::Component::ParentDir => {
                    p.pop();
                }
                std::path::Component::CurDir => {}
                c => p.push(c),
            }
            p
        });
        let inside = w.starts_with(&sandbox.ws)
            || ok_devices.iter().any(|d| w == std::path::Path::new(d))
            || w.starts_with("/proc/self/fd")
            || w.starts_with("/dev/pts");
        if !inside {
            out.push(format!("wrote {}", w.display()));
        }
    }
    for c in &trace.connects {
        out.push(format!("connected: {c}"));
    }
    out
}

// ---- the generator ---------------------------------------------------------------------

/// Simple commands: allowed, denied, asked, state-only builtins, and the seeds of the earlier
/// corpora (`support/denied_anywhere.rs`).
const SIMPLE: &[&str] = &[
    "ls",
    "ls -la src",
    "cat x",
    "echo hi",
    "echo \"$y\"",
    "grep -r hi .",
    "grep -c a x",
    "find . -name x",
    "find . -name '*.py' -exec grep hi {} +",
    "find . -name x -delete",
    "find . -execdir rm {} +",
    "git status",
    "git log -r .",
    "git diff",
    "git reset --hard",
    "pytest -q",
    "npm run test",
    "npm install",
    "true",
    ":",
    "false",
    "pwd",
    "test -f x",
    "[ -f x ]",
    "[ a = b ]",
    "set -e",
    "read y",
    "cd src",
    "y=1",
    "command -v ls",
    "type ls",
    "rm -rf src",
    "curl -s http://127.0.0.1:9/",
    "touch new",
    "mkdir d",
    "sort -o out x",
    "sed -i s/a/b/ x",
    "wc -l x",
    "head -n1 x",
    "exec -a git-rm git log -r .",
    "env -C src ls",
    "xargs --process-slot-var=HOME ls",
    "echo $(( 2 + 1 ))",
    "echo ${@:1}",
    "printf '%s\\n' a",
    "make",
];

/// `s` as one single-quoted word.
fn squote(s: &str) -> String {
    denied_anywhere::squote(s)
}

fn simple(pick: &mut dyn FnMut(usize) -> usize) -> String {
    let seeds = denied_anywhere::DENIED.len() + denied_anywhere::SAFE.len();
    let i = pick(SIMPLE.len() + seeds);
    if i < SIMPLE.len() {
        SIMPLE[i].to_string()
    } else if i - SIMPLE.len() < denied_anywhere::DENIED.len() {
        denied_anywhere::DENIED[i - SIMPLE.len()].to_string()
    } else {
        denied_anywhere::SAFE[i - SIMPLE.len() - denied_anywhere::DENIED.len()].to_string()
    }
}

/// A line of `depth` more levels of syntax around simple commands.
fn gen(pick: &mut dyn FnMut(usize) -> usize, depth: usize) -> String {
    if depth == 0 {
        return simple(pick);
    }
    let a = gen(pick, depth - 1);
    let other = |pick: &mut dyn FnMut(usize) -> usize| gen(pick, depth - 1);
    match pick(45) {
        0 => format!("{a}; {}", other(pick)),
        1 => format!("{a} && {}", other(pick)),
        2 => format!("{a} || {}", other(pick)),
        3 => format!("{a} | {}", other(pick)),
        4 => format!("( {a} )"),
        5 => format!("{{ {a}; }}"),
        6 => format!("echo $({a})"),
        7 => format!("if {a}; then {}; fi", other(pick)),
        8 => format!("for i in 1 2; do {a}; done"),
        9 => format!("while false; do {a}; done"),
        10 => format!("case x in x) {a};; esac"),
        11 => format!("{a} > out"),
        12 => format!("{a} 2>/dev/null"),
        13 => format!("{a} >/dev/fd/2"),
        14 => format!("{a} < x"),
        // `[` is a command: operators inside end it (the review's class).
        15 => format!("[ x || {a} ]"),
        16 => format!("[ x | {a} ]"),
        17 => format!("[ x > out ]; {a}"),
        18 => format!("[ -n x ] && {a}"),
        19 => format!("[[ -n x || {a} ]]"),
        20 => format!("sh -c {}", squote(&a)),
        21 => format!("bash -c {}", squote(&a)),
        22 => format!("sh -c {}", squote(&format!("[[ -n x || {a} ]]"))),
        23 => format!("env {a}"),
        24 => format!("timeout 5 {a}"),
        25 => format!("nice {a}"),
        26 => format!("! {a}"),
        27 => format!("(({a}) || true)"),
        28 => format!("y=$({a}); echo \"$y\""),
        29 => format!("{a} &\nwait"),
        30 => format!("test x || {a}"),
        31 => format!("bash -lc {}", squote(&a)),
        32 => format!("echo `{a}`"),
        33 => format!("cat <<EOF\n$({a})\nEOF"),
        34 => format!("cat <<'EOF'\n$({a})\nEOF\n{}", other(pick)),
        35 => format!("time {a}"),
        36 => format!("{{ {a}; }} 2>&1 | cat"),
        37 => format!("[ \"$({a})\" = x ] && ls"),
        38 => format!("test -n x -a x || {a}"),
        39 => format!("exec 3>&1; {a}"),
        40 => format!("{a} \\\n&& {}", other(pick)),
        41 => format!("echo $'x\\'' && {a}'"),
        42 => format!(
            "sh -c {} && {}",
            squote(&format!("[ x ] || {a}")),
            other(pick)
        ),
        // dash has no `((`: two subshells.
        43 => format!("sh -c {}", squote(&format!("(({a}))"))),
        _ => format!("{a}\n{}", other(pick)),
    }
}

fn line_from(choices: &[u16]) -> String {
    let mut at = 0;
    let mut pick = |n: usize| {
        let c = choices[at % choices.len()] as usize;
        at += 1;
        c % n
    };
    let depth = 1 + pick(3);
    gen(&mut pick, depth)
}

fn cases() -> u32 {
    std::env::var("ORACLE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000)
}

/// The property: every generated line cordon allows does only what the rules allow.
#[test]
fn what_cordon_allows_bash_does_only_what_the_rules_allow() {
    oracle::require_tools();
    let sandbox = oracle::Sandbox::new();
    let judge = Judge::new(&sandbox.ws);
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let allowed = std::cell::Cell::new(0u32);
    let result = runner.run(&prop::collection::vec(any::<u16>(), 8..40), |choices| {
        let line = line_from(&choices);
        if judge.line(&line).decision.action != Action::Allow {
            return Ok(());
        }
        allowed.set(allowed.get() + 1);
        let v = violations(&judge, &sandbox, &line);
        if v.is_empty() {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!(
                "cordon allowed {line:?}, and bash:\n  {}",
                v.join("\n  ")
            )))
        }
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The generator must reach allowed lines, or the property proves nothing.
    eprintln!(
        "{} generated lines allowed and run under bash",
        allowed.get()
    );
    assert!(allowed.get() > 0, "no generated line was allowed");
}

/// The review's classes, each run under bash: cordon's reading must hold for every line it
/// allows, and these must not be allowed at all (bash runs or writes what the rules deny).
#[test]
fn the_review_classes_are_not_allowed_and_bash_confirms_why() {
    oracle::require_tools();
    let sandbox = oracle::Sandbox::new();
    let judge = Judge::new(&sandbox.ws);
    let lines = [
        "[ x || rm -rf src ]; ls",
        "[ x | rm -rf src ]",
        "sh -c '[[ -n x || rm -rf src ]]'",
        "exec -a git-rm git log -r .",
        "((false) || rm -rf src)",
        "test -z x || rm -rf src",
    ];
    not_allowed_and_bash_confirms_why(&judge, &sandbox, &lines);
}

/// Round 10's classes, each run under bash: bash must do something the rules object to (the
/// oracle sees the class), and cordon must not allow the line even under rules that allow
/// everything but `rm` and `curl`: `wait -p` evaluates its name's subscript, perl runs the
/// program it reads from its input, gpg the
/// `agent-program` of the `gpg.conf` the line writes into its `--homedir` (stopped after a
/// second: it waits for the agent), apt-get the hook `-o` sets (every APT directory in the
/// workspace, the system's own hooks cleared by a `-c` file).
#[test]
fn round_ten_classes_are_not_allowed_and_bash_confirms_why() {
    oracle::require_tools();
    let sandbox = oracle::Sandbox::new();
    let judge = Judge::with_rules(&sandbox.ws, ALLOW_ALL_BUT_RM);
    let lines = [
        "echo 'system q(rm src)' | perl",
        "echo 'exec qw(rm src)' | perl -",
        "true & wait -n -p 'a[$(rm src)]'",
        "mkdir -m 700 g && echo \"agent-program $PWD/../bin/rm\" > g/gpg.conf && timeout 1 gpg --homedir g --batch --pinentry-mode loopback --passphrase x -o x.gpg -c x",
        "mkdir -p l/partial c && printf '#clear APT::Update::Post-Invoke-Success;\\n' > k && apt-get -c \"$PWD/k\" -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=\"$PWD/n\" -o Dir::State::Lists=\"$PWD/l\" -o Dir::Cache=\"$PWD/c\" -o 'APT::Update::Pre-Invoke::=rm src' update",
    ];
    not_allowed_and_bash_confirms_why(&judge, &sandbox, &lines);
}

/// Round 11 (docs/shell-analysis.md): interpreters no table had (php, lua, m4) run the code on
/// their line or from their input, and zstd's trace log and wget's WARC file are written
/// outside the workspace. On main cordon allowed each and bash executed `rm` or wrote outside.
#[test]
fn round_eleven_classes_are_not_allowed_and_bash_confirms_why() {
    oracle::require_tools();
    let sandbox = oracle::Sandbox::new();
    let judge = Judge::with_rules(&sandbox.ws, ALLOW_ALL_BUT_RM);
    let lines = [
        "php -r 'system(\"rm src\");'",
        "echo 'os.execute(\"rm src\")' | lua5.4",
        "echo 'syscmd(rm src)' | m4",
        "echo x > x && zstd -q -f --trace ../trace.log x",
        "timeout 20 wget -q --tries=1 --warc-file=../w http://127.0.0.1:1/",
    ];
    not_allowed_and_bash_confirms_why(&judge, &sandbox, &lines);
}

/// Each line, run under bash, does something the rules object to (the oracle sees its class),
/// and `judge` does not allow it.
fn not_allowed_and_bash_confirms_why(judge: &Judge, sandbox: &oracle::Sandbox, lines: &[&str]) {
    let mut wrong = Vec::new();
    for &line in lines {
        let v = violations(judge, sandbox, line);
        assert!(
            !v.is_empty(),
            "bash did nothing the rules object to for {line:?}: the oracle cannot see it"
        );
        if judge.line(line).decision.action == Action::Allow {
            wrong.push(format!("{line:?}: {}", v.join("; ")));
        }
    }
    assert!(wrong.is_empty(), "allowed:\n{}", wrong.join("\n"));
}

/// Read-only lines a careful operator allows (issue 22's false positives): allowed, and bash
/// confirms they do only what the rules allow.
#[test]
fn read_only_lines_are_allowed_and_bash_confirms() {
    oracle::require_tools();
    let sandbox = oracle::Sandbox::new();
    let judge = Judge::new(&sandbox.ws);
    let mut wrong = Vec::new();
    for line in READ_ONLY {
        let a = judge.line(line);
        if a.decision.action != Action::Allow {
            wrong.push(format!(
                "{line:?}: {:?} ({})",
                a.decision.action, a.decision.reason
            ));
            continue;
        }
        let v = violations(&judge, &sandbox, line);
        if !v.is_empty() {
            wrong.push(format!("{line:?} allowed, but bash: {}", v.join("; ")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The corpus of read-only lines a reviewer expects allowed.
const READ_ONLY: &[&str] = &[
    "true",
    ":",
    "true && ls",
    "test -f x && cat x",
    "[ -f x ] && cat x",
    "[ -d src ] || echo missing",
    "[ a = b ] || echo differ",
    "if [ -n x ]; then ls; fi",
    "set -euo pipefail; ls",
    "set -e; git status",
    "shopt -s globstar; ls",
    "cd src && ls",
    "pushd src && ls",
    "pwd",
    "command -v git",
    "type ls",
    "read y < x; echo \"$y\"",
    "echo $(( 2 + 1 ))",
    "echo hi >/dev/fd/2",
    "echo hi >/dev/stderr",
    "ls 2>/dev/null",
    "git status; git diff",
    "grep -r hi . | grep -c hi",
    "find . -name '*.py' | xargs grep hi",
    "cat x | grep hi",
];

// ---- round 9: bash's tricky constructs ---------------------------------------------------

/// Rules that allow every command but `rm` and `curl`: what the shell tool itself objects to is
/// all that stands between a line and bash.
const ALLOW_ALL_BUT_RM: &str = r#"
[shell]
default = "allow"
[[shell.rules]]
pattern = "rm"
action = "deny"
[[shell.rules]]
pattern = "curl"
action = "deny"
"#;

/// State a line may set before its body: variables holding code or names, namerefs, aliases,
/// functions shadowing commands, traps, the prompt and trace hooks, options that change how
/// later words are read (`set -k`, `extglob`, `globstar`), where `cd` searches (`CDPATH`), the
/// startup files a later shell reads (`BASH_ENV`, `ENV`), the command hash, descriptors.
const SETUP: &[&str] = &[
    "",
    "x=rm",
    "x='rm src'",
    "x='$(rm src)'",
    "x='a[$(rm src)]'",
    "x=src",
    "x=..",
    "a=(rm src)",
    "set -- rm src",
    "declare -n r=x",
    "x=rm; declare -n r=x",
    "IFS=r",
    "alias ls='rm src'",
    "shopt -s expand_aliases; alias ls='rm src'",
    "ls() { rm src; }",
    "function cat { rm src; }",
    "command_not_found_handle() { rm src; }",
    "trap 'rm src' EXIT",
    "trap 'rm src' DEBUG",
    "trap 'rm src' ERR",
    "trap \"$x\" EXIT",
    "PROMPT_COMMAND='rm src'",
    "PS4='$(rm src)'; set -x",
    "set -k",
    "set -a",
    "set -o posix",
    "shopt -s extglob",
    "shopt -s globstar",
    "shopt -s dotglob nullglob",
    "shopt -s extdebug",
    "CDPATH=..",
    "CDPATH=/",
    "HOME=..",
    "OLDPWD=..",
    "echo 'rm src' > e",
    "BASH_ENV=e",
    "export BASH_ENV=e",
    "export ENV=e",
    "hash -p /bin/rm ls",
    "enable -n echo",
    "exec 3>../o",
    "exec 3>o",
    "cd src",
    "cd ..",
    "pushd .. >/dev/null",
    "declare -i n",
    "printf -v x rm",
    "read x <<< rm",
    "mapfile -t a <<< rm",
    "TIMEFORMAT='$(rm src)'",
    "HISTFILE=../h",
    "set -o history",
    "readonly x=rm",
    "umask 0",
    "y=$(ls)",
    "x=RM",
    "x=xrm",
    "shopt -s lastpipe",
    "set -o allexport",
    "echo 'rm src' > .bashrc; HOME=.",
    "echo 'rm src' > .profile; HOME=.",
    "echo 'rm src' > .bash_profile; HOME=.",
    "exec {fd}<e",
    "declare -A m",
];

/// What runs after the setup: every way bash reads a word as code, a name, a path or a
/// command that the earlier rounds found, and their plain forms. (`bash FILE` is not here: a
/// script named as an operand runs unread by design, the kernel being the boundary, as the
/// docs say; a script bash finds on its own, `BASH_ENV`, `--rcfile`, `~/.bashrc`, is.)
const BODY: &[&str] = &[
    "ls",
    "ls src",
    "cat x",
    "echo $x",
    "$x src",
    "\"$x\"",
    "${x} src",
    "echo ${!x}",
    "echo ${x@P}",
    "echo ${x@E}",
    "echo ${x@Q}",
    "echo ${x@A}",
    "echo $r",
    "r=rm; echo $x",
    "\"${a[@]}\"",
    "${a[*]}",
    "\"$@\"",
    "$1 $2",
    "echo $(( x ))",
    "echo $(( a[$x] ))",
    "(( x ))",
    "let x",
    "[[ $x -eq 1 ]]",
    "[[ -v $x ]]",
    "[[ -v a[$(rm src)] ]]",
    "test -v \"$x\"",
    "[ -v 'a[$(rm src)]' ]",
    "echo $[ x ]",
    "n=$x",
    "n='a[$(rm src)]'",
    "printf -v 'a[$(rm src)]' x",
    "printf -v \"$x\" x",
    "read 'a[$(rm src)]' < x",
    "read -a \"$x\" < x",
    "mapfile -C 'rm src' -c 1 < x",
    "mapfile -C \"$x\" -c 1 < x",
    "cat <<< $x",
    "cat <(rm src)",
    "cat < <(ls)",
    "echo >(rm src)",
    "eval \"$x\"",
    "eval $x",
    "source e",
    ". e",
    "source /dev/stdin <<< 'rm src'",
    "bash -c ls",
    "sh -c ls",
    "cd src && ls",
    "cd; touch y",
    "cd home && touch y",
    "cd - && touch y",
    "cd ~ && touch y",
    "cd \"$x\" && touch y",
    "touch ~+/../y",
    "touch ~/y",
    "touch ../y",
    "touch \"$x\"/y",
    "mkdir -p ../d",
    "echo hi > ../y",
    "echo hi >| ../y",
    "echo hi &> ../y",
    "echo hi >> ~/y",
    "echo hi > \"$x\"",
    "echo hi > $x/y",
    "echo hi >&3",
    "echo hi > /dev/fd/3",
    "echo hi > /dev/stdout",
    "echo hi > /dev/tcp/127.0.0.1/9",
    "ls !(x)",
    "ls **/x",
    "ls ../*",
    "echo ~+",
    "echo {rm,src}",
    "{rm,src}",
    "{ls,src}",
    "$'\\x72m' src",
    "r\\m src",
    "$(echo) rm src",
    "${u} rm src",
    "$u$x src",
    "coproc rm src",
    "coproc ls",
    "exec ls",
    "command rm src",
    "builtin echo x",
    "nosuch",
    "history -w",
    "time ls",
    "ls & wait",
    "x=1 ls",
    "ls BASH_ENV=e",
    "bash -c ls BASH_ENV=e",
    "BASH_ENV=e bash -c ls",
    "ENV=e sh -c ls",
    "PATH=src ls",
    "echo ${x:-$(rm src)}",
    "echo ${x/$(rm src)/}",
    ": ${x:=$(rm src)}",
    "echo \"${x:-'$(rm src)'}\"",
    "case $x in $(rm src)) ;; esac",
    "for i in $x; do $i; done",
    "echo \"${a[@]/#/$(rm src)}\"",
    "echo ${x[$(rm src)]}",
    "echo src | xargs rm",
    "find . -exec rm {} +",
    "find src -exec ls {} +",
    "find . -exec echo {} +",
    "env $x",
    "env -S \"$x\"",
    "timeout 1 $x",
    "nice $x src",
    "getopts a \"$x\"",
    "ls > /dev/null",
    "ls | tee /dev/null",
    "unset 'a[$(rm src)]'",
    "unset \"$x\"",
    "declare -p x",
    "export \"$x\"=1",
    "declare \"$x\"=1",
    "typeset -n r=x; echo $r",
    "f() { ls; }; f",
    "${x,,} src",
    "${x^^} src",
    "${x:1} src",
    "${x#x} src",
    "${x/x/} src",
    "$(<e) src",
    "`<e` src",
    "read -r l < e; $l",
    "while read -r l; do $l; done < e",
    "source <(cat e)",
    ". ./e",
    "bash < e",
    "sh < e",
    "cat e | bash",
    "m[$(rm src)]=1",
    "b=([$(rm src)]=1)",
    "{r..r}m src",
    "r{m..m} src",
    "$'\\162m' src",
    "$'\\u0072m' src",
    "\"r\"'m' src",
    "../bin/r? src",
    "../b*/rm src",
    "command -p rm src",
    "exec -c rm src",
    "[[ $x == $(rm src) ]]",
    "[[ x =~ $(rm src) ]]",
    "for ((i=a[$(rm src)]; 0; )); do :; done",
    "echo ${#a[$(rm src)]}",
    "echo rm | read x; $x src",
    "ls() { rm src; }; export -f ls; bash -c ls",
    "env 'BASH_FUNC_ls%%=() { rm src; }' bash -c ls",
    "bash --rcfile e -ic ls",
    "bash --init-file e -ic ls",
    "bash -ic ls",
    "bash -lc ls",
    "sh -lc ls",
    "sh -ic ls",
    "find . -fprint ../y",
    "find . -fls ../y",
    "find . -fprintf ../y x",
    "sed -n 'w ../y' x",
    "sed 's/a/b/w ../y' x",
    "sed -n '1e rm src' x",
    "sort -o ../y x",
    "head -c1 x > ../y",
    "env -C .. touch y",
    "timeout 1 touch ../y",
    "mkdir -p src/../../d",
    "touch src/../../y",
    "cd src/../.. && touch y",
    "touch $PWD/../y",
    "touch \"$OLDPWD/y\"",
    "eval \"$(cat <&$fd)\"",
    "xargs sh -c < e",
    "xargs -a e",
    "find . -exec sh -c 'rm src' \\;",
    "printf -v x '%s' rm; $x src",
    // Round 10: a program read from the input.
    "echo 'system q(rm src)' | perl",
    "perl - < e",
    // Round 10: `wait -p` evaluates its name's subscript.
    "true & wait -n -p \"$x\"",
];

/// How the setup and the body are put together.
fn tricky_line(pick: &mut dyn FnMut(usize) -> usize) -> String {
    let setup = SETUP[pick(SETUP.len())];
    let body = BODY[pick(BODY.len())];
    // An alias takes effect from the next line; a function's body runs where it is called.
    let line = match (setup.is_empty(), pick(3)) {
        (true, _) => body.to_string(),
        (false, 0) => format!("{setup}; {body}"),
        (false, 1) => format!("{setup}\n{body}"),
        (false, _) => format!("{setup} && {body}"),
    };
    match pick(8) {
        0 => format!("bash -c {}", squote(&line)),
        1 => format!("( {line} )"),
        2 => format!("g() {{ {line}\n}}; g"),
        3 => format!("{line}\nls"),
        _ => line,
    }
}

/// The property, over bash's tricky constructs (round 9): every line cordon allows, under the
/// review's rules or under rules that allow all but `rm` and `curl`, run by the real bash
/// under strace, executes only programs those rules allow and writes nowhere but the
/// workspace. A line cordon asks about is not run.
#[test]
fn what_cordon_allows_of_bashs_tricky_constructs_bash_does_only_what_the_rules_allow() {
    oracle::require_tools();
    let sandbox = oracle::Sandbox::new();
    let judges = [
        Judge::new(&sandbox.ws),
        Judge::with_rules(&sandbox.ws, ALLOW_ALL_BUT_RM),
    ];
    let mut runner = TestRunner::new(Config {
        cases: cases() / 2,
        failure_persistence: None,
        ..Config::default()
    });
    let allowed = std::cell::Cell::new(0u32);
    let result = runner.run(&prop::collection::vec(any::<u16>(), 4..8), |choices| {
        let mut at = 0;
        let mut pick = |n: usize| {
            let c = choices[at % choices.len()] as usize;
            at += 1;
            c % n
        };
        let line = tricky_line(&mut pick);
        for judge in &judges {
            if judge.line(&line).decision.action != Action::Allow {
                continue;
            }
            allowed.set(allowed.get() + 1);
            let v = violations(judge, &sandbox, &line);
            if !v.is_empty() {
                return Err(TestCaseError::fail(format!(
                    "cordon allowed {line:?}, and bash:\n  {}",
                    v.join("\n  ")
                )));
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!("{} tricky lines allowed and run under bash", allowed.get());
    assert!(allowed.get() > 0, "no tricky line was allowed");
}
