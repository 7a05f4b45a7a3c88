//! Issue 13, classes 3, 7 and 8, against the outside review's policy: allows `git status`,
//! `git diff`, `git log`, `ls`, `cat`, `echo`, `grep`, `find`, `pytest`, `npm run test*`;
//! denies `rm`, `curl`, `git reset --hard`; asks by default. The workspace (`/work/ws`) is the
//! only writable root.
//!
//! Class 3: an allow rule for a program allows what it does with its read-only options; an
//! option that writes outside the roots, deletes, runs code or reaches the network asks, and
//! deny rules see through abbreviations and reordered options. Class 7: wrappers and harmless
//! global options are decided by the command they run. Class 8: `find . -delete` and
//! `bash -lc`, the earlier corpus's misses.

use std::path::{Path, PathBuf};

use cordon_approval::{RuleRef, RuleSet};
use cordon_policy::{Action, Policy};
use cordon_tools::assess::ShellContext;
use cordon_tools::shell::parse;
use judge::{assess, ShellAssessment};

#[path = "support/judge.rs"]
mod judge;
#[path = "support/review.rs"]
mod review;
use review::REVIEW_RULES;

fn rules(extra: &str) -> RuleSet {
    let text = format!("version = 1\n{REVIEW_RULES}{extra}");
    RuleSet::new(
        &Policy::parse(&text, "cordon.toml", Path::new("/work/ws"))
            .unwrap()
            .shell,
    )
}

fn cx() -> ShellContext {
    ShellContext {
        cwd: PathBuf::from("/work/ws"),
        writable: vec![PathBuf::from("/work/ws")],
        policy_files: vec![],
        network: cordon_policy::Network::Deny,
        home: None,
        search_path: ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .map(PathBuf::from)
            .collect(),
    }
}

fn decide_with(rules: &RuleSet, line: &str) -> ShellAssessment {
    assess(&parse(line), rules, &cx())
}

fn decide(line: &str) -> ShellAssessment {
    decide_with(&rules(""), line)
}

fn expect(lines: &[&str], want: Action) {
    let mut wrong = Vec::new();
    for line in lines {
        let a = decide(line);
        if a.decision.action != want {
            wrong.push(format!(
                "{line:?}: {} ({}, {})",
                a.decision.action.as_str(),
                a.decision.reason,
                a.decision.rule
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "expected {}:\n{}",
        want.as_str(),
        wrong.join("\n")
    );
}

#[test]
fn the_fixture_allows_what_it_means_to() {
    expect(
        &[
            "git status",
            "git status --short",
            "git diff HEAD~1",
            "git log --oneline -n 5",
            "ls -la",
            "cat README.md",
            "echo hi",
            "grep -rn TODO src",
            "find . -name '*.rs'",
            "pytest -q tests",
            "npm run test",
            "npm run test:unit",
        ],
        Action::Allow,
    );
}

// Class 8 (and 3): find's own options that delete or write.
#[test]
fn find_delete_and_file_writing_actions_are_not_allowed_by_find() {
    expect(
        &[
            "find . -delete",
            "find . -name '*.rs' -delete",
            "find src -type f -delete -print",
            "find . -maxdepth 1 -delete",
        ],
        Action::Ask,
    );
    // -fprint and friends write the file they name: outside the roots, never allowed.
    expect(
        &[
            "find . -fprint /home/u/.bashrc",
            "find . -fprint0 ../outside",
            "find . -fls /tmp/x",
            "find . -fprintf /etc/cron.d/x '%p'",
        ],
        Action::Ask,
    );
    // Inside the roots, the rule's decision stands.
    expect(
        &["find . -fprint list.txt", "find . -fls out/listing"],
        Action::Allow,
    );
    // -exec runs its command, decided by its own rules.
    expect(
        &["find . -exec rm {} ;", "find . -name x -execdir rm -f {} +"],
        Action::Deny,
    );
    expect(&["find . -exec cat {} ;"], Action::Allow);
}

#[test]
fn a_rule_that_names_the_option_allows_it() {
    let r = rules("[[shell.rules]]\npattern = \"find * -delete\"\naction = \"allow\"\n");
    let a = decide_with(&r, "find build -delete");
    assert_eq!(a.decision.action, Action::Allow, "{:?}", a.decision);
    let a = decide_with(&r, "find . -delete");
    assert_eq!(a.decision.action, Action::Allow, "{:?}", a.decision);
}

#[test]
fn git_options_that_write_or_run_code() {
    expect(
        &[
            "git log --output=/home/u/.bashrc",
            "git log --output /home/u/.bashrc",
            "git log --out=/tmp/x",
            "git diff --output=../../x",
            "git diff HEAD --outp /etc/x",
            "git -c core.pager='sh -c id' log",
            "git -c core.fsmonitor=./evil status",
            "git -c alias.log='!sh' log",
            "git -c user.signingkey=x -c commit.gpgsign=true log",
            "git -c user.name=a -c core.editor=vi log",
            "git --config-env=core.pager=EVIL log",
            "git --exec-path=/tmp/evil status",
            "git -p log",
            "git --paginate log",
            "git diff --ext-diff",
            "git diff --ext",
            "git log -p --textconv",
            "git log \"$opts\"",
        ],
        Action::Ask,
    );
    // Writes inside the roots stand; harmless `-c` settings too.
    expect(
        &[
            "git log --output=log.txt",
            "git diff --output out/patch.diff",
            "git -c color.ui=never log",
            "git -c core.quotepath=false status",
            "git -c user.name=a -c user.email=a@b log",
            "git -c User.Email=x status",
            "git diff --no-ext-diff",
        ],
        Action::Allow,
    );
}

#[test]
fn deny_rules_see_through_abbreviations_and_reordering() {
    expect(
        &[
            "git reset --hard",
            "git reset --har",
            "git reset --ha HEAD",
            "git reset HEAD~1 --hard",
            "git reset origin/main -q --hard",
            "git -C . reset --hard",
            "git -C /work/ws reset --hard HEAD",
            "git -c x=y reset --hard",
            "git --no-pager reset --hard",
            "git --git-dir=.git reset --hard",
            "git --git-dir .git --work-tree . reset --hard",
            "git reset -q --hard",
            "rm -rf /",
            "sudo rm -rf x",
            "curl -o x https://example.com",
        ],
        Action::Deny,
    );
    // Not `--hard`: the rule does not apply.
    expect(
        &["git reset --soft HEAD~1", "git reset HEAD~1"],
        Action::Ask,
    );
}

#[test]
fn grep_sed_sort_and_friends() {
    let r = rules(
        "[[shell.rules]]\npattern = \"rg\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"sed\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"sort\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"tar\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"awk\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"tee\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"cp\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"dd\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"python\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"make\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"rsync\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"man\"\naction = \"allow\"\n",
    );
    let check = |lines: &[&str], want: Action| {
        for line in lines {
            let a = decide_with(&r, line);
            assert_eq!(a.decision.action, want, "{line}: {:?}", a.decision);
        }
    };
    check(
        &[
            "rg --pre ./evil.sh foo",
            "rg foo --pre=./evil.sh",
            "rg --hostname-bin ./x foo",
            "sed -i s/a/b/ /home/u/.bashrc",
            "sed -ni s/a/b/p /etc/hosts",
            "sed --in-place=.bak s/a/b/ ../x",
            "sed --in-pl s/a/b/ ../x",
            "sed 's/a/b/w /home/u/.bashrc' f",
            "sed -n '1w /tmp/x' f",
            "sed 'e id' f",
            "sed 's/.*/id/e' f",
            "sed -e p -e '$W /tmp/x' f",
            "sed -f script.sed f",
            "sed \"$script\" f",
            "sort -o /home/u/.bashrc f",
            "sort --out=/tmp/x f",
            "sort -uo /tmp/x f",
            "sort f --output /tmp/x",
            "sort --compress-program=./evil f",
            "tar xf a.tar -C /tmp",
            "tar -xzf a.tar --directory=/etc",
            "tar -xf a.tar -P",
            "tar cf /tmp/out.tar src",
            "tar -c -f ../x.tar src",
            "tar -xf a.tar --to-command='sh -c id'",
            "tar -cf x.tar -I ./evil src",
            "tar --use-compress=./evil -cf x.tar src",
            "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec=id src",
            "tar -tf host:archive.tar",
            "tar -xf a.tar --remove-files",
            "awk 'BEGIN { system(\"id\") }'",
            "awk '{ print | \"sh\" }' f",
            "awk '{ print > \"/tmp/x\" }' f",
            "awk -f prog.awk f",
            "tee /home/u/.bashrc",
            "tee -a ../outside",
            "cp a /home/u/.bashrc",
            "cp -t /etc a b",
            "dd if=/dev/zero of=/home/u/x",
            "python -c 'import os'",
            "python3 -c 'import os'",
            "python -m http.server",
            "make -f /tmp/evil.mk",
            "make SHELL=/tmp/evil",
            "make --eval='x:; id'",
            "rsync -e 'sh -c id' a b",
            "rsync --rsync-path=evil a host:b",
            "rsync -a src/ host:/dst/",
            "rsync -a --delete src/ dst/",
            "man -P 'sh -c id' ls",
            "man --pager=evil ls",
            // An extraction writes the names the archive holds, not shown on the line: any
            // may be on the persistence surface (bypass.rs, round 4).
            "tar xzf a.tar",
            "tar -xf a.tar -C build",
            // So does a recursive copy, wherever its tree comes from (round 5).
            "rsync -a src/ dst/",
        ],
        Action::Ask,
    );
    check(
        &[
            "rg foo src",
            "rg -n --pre-glob '*.gz' foo",
            "sed -n '1,10p' f",
            "sed 's/a/b/g; /x/d' f",
            "sed -i s/a/b/ src/main.rs",
            "sed -e 's|a|b|' -e '$!N' f",
            "sort -u f",
            "sort -o sorted.txt f",
            "tar tf a.tar",
            "tar -czf out.tar.gz src",
            "awk '{ print $1 }' f",
            "awk -F: '$3 > 1000 { n++ } END { print n }' /etc/passwd",
            "tee out.log",
            "cp a b",
            "dd if=a of=b",
            "python script.py",
            "make test",
            "rsync src/a dst/",
            "man ls",
        ],
        Action::Allow,
    );
}

#[test]
fn pytest_and_npm_options_that_write_or_run() {
    expect(
        &[
            "pytest --basetemp=/tmp/x",
            "pytest --basetemp build/tmp",
            "pytest --junitxml=/home/u/x.xml",
            "pytest --junit-xml /tmp/r.xml",
            "pytest --pastebin=all",
            "pytest -p evil_plugin",
            "pytest -pevil",
            "pytest tests -o addopts=-pevil",
            "pytest --override-ini=cache_dir=/tmp/c",
            "pytest --result-log=/tmp/r",
            "pytest --log-file /tmp/l",
            "pytest -c /tmp/evil.ini",
            "pytest --rootdir=/tmp",
            "npm run test --script-shell=./evil",
            "npm run test --script-sh ./evil",
            "npm run test --node-options=--require=./evil.js",
            "npm run test --prefix /tmp/other",
            "npm run test -C /tmp/other",
            "npm run test -g",
            "npm run test --global",
            "npm run test --userconfig=/tmp/npmrc",
        ],
        Action::Ask,
    );
    expect(
        &[
            "pytest --junitxml=report.xml",
            "pytest -x -q tests/test_a.py -k fast",
            "pytest --log-file=out/pytest.log",
            "npm run test",
            "npm run test -- --watch=false",
            "npm run test --silent",
        ],
        Action::Allow,
    );
}

// Class 7: wrappers and harmless global options are decided by the command they run.
#[test]
fn wrappers_and_global_options_defer_to_the_inner_command() {
    expect(
        &[
            "git --no-pager log",
            "git --no-pager log --oneline -n 3",
            "git -P diff",
            "git -C sub status",
            "git --git-dir=.git log",
            "git --no-optional-locks status",
            "time pytest",
            "time -p pytest -q",
            "timeout 300 pytest",
            "timeout -k 5 300 pytest -x",
            "timeout --signal=KILL 1m pytest",
            "nice -n 5 pytest",
            "nice -5 pytest",
            "nice pytest",
            "ionice -c 3 pytest",
            "stdbuf -oL pytest",
            "find . -name '*.py' | xargs grep foo",
            "find . -print0 | xargs -0 grep -l foo",
            "ls | xargs -n 1 echo",
            "bash -c \"git status\"",
            "bash -c 'git status && git diff'",
            "sh -c 'ls'",
            "sh -c ls",
            "dash -c 'echo hi'",
            "env LANG=C ls",
            "env ls",
            "env -u FOO ls",
            "command ls",
            "exec ls",
            "timeout 60 bash -c 'pytest -q'",
            "time timeout 300 nice -n 5 pytest",
        ],
        Action::Allow,
    );
    // The command inside still decides: a denied or unknown one is not allowed.
    expect(
        &[
            "time rm -rf x",
            "timeout 5 rm x",
            "bash -lc 'rm -rf .'",
            "find . | xargs rm",
        ],
        Action::Deny,
    );
    expect(
        &[
            "time make",
            "nice -n 5 npm install",
            "bash -lc 'pytest; make'",
            // A login or interactive shell runs its start-up files first (issue 22): decided by
            // a rule naming it, not by the string's commands alone.
            "bash -lc \"git status\"",
            "bash -i -c ls",
            "timeout 60 bash -lc 'pytest -q'",
            "env FOO=1 ls",
            "time -o /tmp/t pytest",
            // Not transparent: they change what the command may do.
            "sudo ls",
            "chroot /srv ls",
            "fakeroot ls",
            "strace ls",
            "nohup ls",
        ],
        Action::Ask,
    );
}

#[test]
fn a_rule_on_the_wrapper_itself_still_applies() {
    let r = rules("[[shell.rules]]\npattern = \"timeout\"\naction = \"deny\"\n");
    let a = decide_with(&r, "timeout 300 pytest");
    assert_eq!(a.decision.action, Action::Deny, "{:?}", a.decision);
    let a = decide("timeout 300 pytest");
    assert_eq!(a.decision.action, Action::Allow);
    assert!(
        a.decision.rule.to_string().contains("(pytest)"),
        "the line is allowed by the rule on the command the wrapper runs: {:?}",
        a.decision
    );
    let wrapper = &a.commands[0];
    assert_eq!(wrapper.decision.rule, RuleRef::Builtin("wrapper"));
    assert_eq!(
        wrapper.key, None,
        "a transparent wrapper is not a key of its own"
    );
    assert_eq!(
        a.commands[1].key.as_deref(),
        Some(&["pytest".to_string()][..])
    );
}

#[test]
fn keys_are_the_canonical_form() {
    let key = |line: &str| parse(line).commands[0].key.join(" ");
    assert_eq!(key("git --no-pager log -n 3"), "git log -n 3");
    assert_eq!(
        key("git -C . reset HEAD~1 --har"),
        "git reset --hard HEAD~1"
    );
    assert_eq!(key("sort f --out=x"), "sort --output=x f");
    assert_eq!(key("ls -la"), "ls -la");
}

#[test]
fn operands_only_known_when_the_line_runs() {
    let r = rules(
        "[[shell.rules]]\npattern = \"sed\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"xargs\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"tee\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"dd\"\naction = \"allow\"\n",
    );
    // find gives `{}`, xargs its input: a file anywhere, or an option.
    for line in [
        "find / -name '*.conf' -exec sed -i s/a/b/ {} +",
        "find / -exec sed -i s/a/b/ {} ;",
        "find / -name x | xargs sed -i s/a/b/",
        "find / | xargs -0 timeout 5 sed -i s/a/b/",
        "ls | xargs tee",
        "cat list | xargs git log",
        "cat list | xargs find .",
        "cat list | xargs dd if=/dev/zero",
        "find . | xargs -I{} sed -i s/a/b/ {}",
        // Conservative: a replaced `{}` is taken as possibly an option (xargs input may be
        // one; find's file names never are, but the two are not told apart).
        "find . -exec sed -n 1p {} ;",
    ] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Ask, "{line}: {:?}", a.decision);
    }
    for line in [
        "find . -name '*.rs' | xargs grep -l foo",
        "find . -exec grep -l foo {} +",
        "ls | xargs echo",
    ] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
}

#[test]
fn xargs_operands_are_part_of_the_key() {
    // An exact rule allows exactly the words it names; xargs adds more when it runs.
    let r = rules("[[shell.rules]]\npattern = \"make\"\nexact = true\naction = \"allow\"\n");
    assert_eq!(decide_with(&r, "make").decision.action, Action::Allow);
    for line in ["ls | xargs make", "ls | xargs timeout 5 make"] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Ask, "{line}: {:?}", a.decision);
    }
    let key = |line: &str| {
        let p = parse(line);
        p.commands.last().unwrap().key.join(" ")
    };
    assert_eq!(key("ls | xargs grep -l foo"), "grep -l foo {xargs input}");
    assert_eq!(key("ls | xargs -I{} grep foo {}"), "grep foo {}");
}

/// A shell word holding `s` exactly.
fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 400, ..Default::default() })]

    /// Scripts, programs and options of the examined programs, whatever they hold, never make
    /// the parse panic, and a sed script with an `e` command on a line of its own is never
    /// allowed, whatever comes before it.
    #[test]
    fn examined_programs_never_panic(script in "[ -~\n]{0,40}", opts in "[-a-zA-Z=/.:~+ ]{0,30}") {
        let r = rules(
            "[[shell.rules]]\npattern = \"sed\"\naction = \"allow\"\n\
             [[shell.rules]]\npattern = \"awk\"\naction = \"allow\"\n\
             [[shell.rules]]\npattern = \"tar\"\naction = \"allow\"\n",
        );
        let q = single_quoted(&script);
        for line in [
            format!("sed {opts} {q} f"),
            format!("awk {opts} {q} f"),
            format!("tar {opts} {q}"),
            format!("git {opts} log {q}"),
            format!("npm run test {opts} {q}"),
            format!("find . {opts} {q}"),
            format!("sort {opts} {q}"),
        ] {
            let _ = decide_with(&r, &line);
        }
        // An `e` command on a line of its own (not text continued by a trailing `\`).
        if !script.ends_with('\\') {
            let with_e = single_quoted(&format!("{script}\ne"));
            let a = decide_with(&r, &format!("sed {with_e} f"));
            proptest::prop_assert_ne!(a.decision.action, Action::Allow, "{:?}", script);
        }
    }
}

/// Red-team findings: pytest options that write a file, import code or read arguments from a
/// file, in every spelling pytest (or an older pytest, whose argparse took any unambiguous
/// prefix) reads; test paths outside the roots; and the same through `python -m pytest`.
#[test]
fn pytest_writes_imports_and_test_paths_outside_the_roots() {
    let attacks = [
        "pytest --debug=/tmp/x.log",
        "pytest --debug /tmp/x.log",
        "pytest --debug ~/.bashrc",
        "pytest tests --debug=../../etc/x",
        "pytest --debu=/tmp/x",
        "pytest --deb /tmp/x",
        "pytest --report-log=/tmp/x",
        "pytest --report-log /tmp/x",
        "pytest --report-lo=/tmp/x",
        "pytest --report=/tmp/x",
        "pytest --log-fil=/tmp/x",
        "pytest --log-f=/tmp/x",
        "pytest --junitxml=/tmp/x",
        "pytest --junitx=/tmp/x",
        "pytest --junit-x=/tmp/x",
        "pytest --resultlog=/tmp/x",
        "pytest --result-log=/tmp/x",
        "pytest --html=/tmp/r.html",
        "pytest --basetemp=build/tmp",
        "pytest --basete=/tmp/x",
        "pytest -o cache_dir=/tmp/c",
        "pytest -ocache_dir=/tmp/c",
        "pytest --override-ini cache_dir=/tmp/c",
        "pytest -c /tmp/evil.ini",
        "pytest -c pytest.ini",
        "pytest --config-file=/tmp/evil.ini",
        "pytest --config-f=/tmp/evil.ini",
        "pytest --rootdir=/tmp/evil",
        "pytest --rootdir /tmp/evil",
        "pytest --confcutdir=/tmp",
        "pytest -p evil",
        "pytest -pevil",
        "pytest -p no:x -p evil",
        "pytest --pyargs evil",
        "pytest --pdbcls=evil:Pdb",
        "pytest -W error::evil.Warning",
        "pytest --pythonwarnings=ignore::evil.W",
        "pytest --cov-report=html:/tmp/cov",
        "pytest --tx popen//python=/tmp/evil/python",
        "pytest --cache-dir=/tmp/x",
        "pytest --some-plugin-output=/tmp/x",
        "pytest --md-report-output=~/.bashrc",
        "pytest @/tmp/evil/args",
        "pytest @args.txt",
        "pytest /tmp/evil/test_x.py",
        "pytest /tmp/evil",
        "pytest ../../x",
        "pytest ../other/tests",
        "pytest tests /tmp/evil/test_x.py::test_a",
        "pytest /tmp/evil/test_x.py::TestA::test_b",
        "pytest -x /tmp/evil -q",
        "pytest \"$d\"",
        "timeout 60 pytest /tmp/evil",
        "cd /tmp && pytest x",
        "python -m pytest --debug=/tmp/x",
        "python3 -m pytest /tmp/evil/test_x.py",
        "python3.12 -m pytest --rootdir=/tmp/evil",
        "python -B -m pytest -p evil",
        "python -Bm pytest --report-log=/tmp/x",
        "python -mpytest --log-fil=/tmp/x",
        "python -W ignore -m pytest /tmp/evil",
    ];
    let rules = rules(
        "[[shell.rules]]\npattern = \"python -m pytest\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"python3 -m pytest\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"python3.12 -m pytest\"\naction = \"allow\"\n",
    );
    let allowed: Vec<String> = attacks
        .iter()
        .filter(|l| decide_with(&rules, l).decision.action == Action::Allow)
        .map(|l| l.to_string())
        .collect();
    assert!(allowed.is_empty(), "allowed:\n{}", allowed.join("\n"));
    let fine = [
        "pytest",
        "pytest tests",
        "pytest tests/test_a.py::test_b -q",
        "pytest ./tests sub/../tests",
        "pytest /work/ws/tests",
        "pytest --debug",
        "pytest --debug=out/debug.log",
        "pytest --report-log=out/report.jsonl",
        "pytest --log-file=out/log.txt --log-file-level=INFO",
        "pytest --co -q",
        "pytest --lf --ff --sw -x",
        "pytest -p no:cacheprovider",
        "pytest -W error",
        "pytest -W ignore::DeprecationWarning",
        "pytest --tb=short -k 'not slow' -m unit",
        "pytest --durations=10 -n 4",
        "pytest --rootdir=. --basetemp-not-an-option",
        "pytest --some-plugin-output=out/x.md --reruns 2",
        "python -m pytest tests -q",
        "python3 -m pytest",
    ];
    let asked: Vec<String> = fine
        .iter()
        .map(|l| (l, decide_with(&rules, l)))
        .filter(|(_, a)| a.decision.action != Action::Allow)
        .map(|(l, a)| format!("{l:?}: {}", a.decision.reason))
        .collect();
    assert!(asked.is_empty(), "not allowed:\n{}", asked.join("\n"));
}

/// Programs whose parser takes any unambiguous prefix of a long option (GNU getopt_long,
/// argp, nopt, less): an abbreviation of a dangerous option is that option, the table's
/// `abbrev` property; an ambiguous one is judged as each option it could be.
#[test]
fn long_option_abbreviations_are_the_options_they_abbreviate() {
    let rules = rules(
        "[[shell.rules]]\npattern = \"sort\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"tar\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"make\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"wget\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"rsync\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"less\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"sed\"\naction = \"allow\"\n",
    );
    let attacks = [
        "sort --out=/tmp/x a",
        "sort --outp /tmp/x a",
        "sort --compress-prog=./evil a",
        "sort --compress=./evil a",
        "tar --to-com=./evil -xf a.tar",
        "tar -xf a.tar --to-c=./evil",
        "make --eval='x:;rm -rf /'",
        "make --ev=x",
        "make --fil=/tmp/Makefile",
        "make --makef=/tmp/Makefile",
        "make --dir=/tmp/evil",
        "wget --output-d=/tmp/x http://h/",
        "wget --exec=x http://h/",
        "rsync --remove-sou a b",
        "rsync --delete-a a/ b/",
        "rsync --rsy=evil a b",
        "rsync --log-fi=/tmp/x a b",
        "less --log-f=/tmp/x f",
        "less --lesskey-s=/tmp/k f",
        "sed --in-pl s/a/b/ /tmp/x",
        "sed --fil=/tmp/evil.sed f",
    ];
    let allowed: Vec<String> = attacks
        .iter()
        .filter(|l| decide_with(&rules, l).decision.action == Action::Allow)
        .map(|l| l.to_string())
        .collect();
    assert!(allowed.is_empty(), "allowed:\n{}", allowed.join("\n"));
    let fine = [
        "sort --numeric a",
        "sort --uniq a",
        "tar -tf a.tar",
        "make --jobs=4 test",
        "wget --tries=3 -q -O out/x http://h/",
        "less --quiet f",
    ];
    let asked: Vec<String> = fine
        .iter()
        .map(|l| (l, decide_with(&rules, l)))
        .filter(|(_, a)| a.decision.action != Action::Allow)
        .map(|(l, a)| format!("{l:?}: {}", a.decision.reason))
        .collect();
    assert!(asked.is_empty(), "not allowed:\n{}", asked.join("\n"));
}

/// Red-team finding: `git -C /elsewhere status` (and `--git-dir`, `--work-tree`) was allowed
/// by a `git status` rule, yet git runs that repository's configuration (`core.fsmonitor`,
/// `core.pager`, aliases) and hooks: outside the writable roots it asks; inside, it is the
/// project's. Configuration given on the line runs programs unless the setting is inert.
#[test]
fn git_naming_a_repository_outside_the_roots_asks() {
    expect(
        &[
            "git -C /tmp/evil status",
            "git -C /tmp/evil log --oneline",
            "git -C .. status",
            "git -C ../other diff",
            "git -C sub -C ../.. status",
            "git -C / -C tmp/evil status",
            "git -C \"$d\" status",
            "git -C ~/other status",
            "git --git-dir=/tmp/evil/.git log",
            "git --git-dir /tmp/evil/.git status",
            "git --git-dir=../x/.git diff",
            "git -C sub --git-dir=../../x/.git log",
            "git --work-tree=/tmp/evil status",
            "git --work-tree / diff",
            "git --no-pager -C /tmp/evil log",
            "git --exec-path=/tmp/evil status",
            "GIT_DIR=/tmp/evil git status",
            "GIT_WORK_TREE=/ git status",
            "env GIT_DIR=/tmp/evil git log",
            "GIT_CONFIG_GLOBAL=/tmp/x git status",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
            "git -c core.fsmonitor=/tmp/evil status",
            "git -c core.fsMonitor=x status",
            "git -c CORE.PAGER=x log",
            "git -c core.pager=x log",
            "git -c pager.log=x log",
            "git -c core.sshCommand=x status",
            "git -c core.hooksPath=/tmp/h status",
            "git -c core.editor=x status",
            "git -c core.askPass=x status",
            "git -c diff.external=x diff",
            "git -c diff.x.textconv=x diff",
            "git -c filter.x.clean=x status",
            "git -c alias.status='!rm -rf .' status",
            "git -c include.path=/tmp/x status",
            "git -c includeIf.gitdir:/.path=/tmp/x status",
            "git -c gpg.program=x log --show-signature",
            "git -c sequence.editor=x status",
            "git -c uploadpack.packObjectsHook=x status",
            "git --config-env=core.pager=X log",
            "git -c \"$k\" status",
        ],
        Action::Ask,
    );
    expect(
        &[
            "git -C sub status",
            "git -C /work/ws status",
            "git -C sub -C .. status",
            "git -C \"\" status",
            "git --git-dir=.git status",
            "git --git-dir=/work/ws/.git --work-tree=/work/ws status",
            "git --no-pager log",
            "git -c color.ui=always log",
            "git -c user.name=a -c user.email=b log",
        ],
        Action::Allow,
    );
}

/// GNU sed 4.9 ends a label (`:x`, `b x`, `t x`, `T x`) and `v`'s version at a blank, and reads
/// what follows as the next command: `sed ':x e id'` runs `id` (checked with the real sed).
/// Read as running to the end of the line, these were allowed under a `sed` rule.
#[test]
fn sed_labels_end_at_a_blank_as_gnu_sed_reads_them() {
    let r = rules("[[shell.rules]]\npattern = \"sed\"\naction = \"allow\"\n");
    let lines = [
        "sed ':x e id' f",
        "sed ':x\te id' f",
        "sed ': x e id' f",
        "sed 'tx e id' f",
        "sed 'b x e id' f",
        "sed 'T x e id' f",
        "sed 'v 4.2 e id' f",
        "sed -n ':a w /tmp/out' f",
    ];
    for line in lines {
        let a = decide_with(&r, line);
        assert_ne!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    for line in [
        "sed ':a;N;$!ba;s/\\n/ /g' f",
        "sed -e :a -e '$!N;ba' f",
        "sed -n '/a/b end\np\n:end' f",
        "sed 'b end;s/a/b/;:end' f",
        "sed '10q' f",
    ] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    // The real sed runs the command after the label.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "a\n").unwrap();
    let out = std::process::Command::new("sed")
        .args([":x e echo RAN-AFTER-LABEL", "f"])
        .current_dir(dir.path())
        .output()
        .expect("GNU sed is needed for this test (Debian package `sed`)");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("RAN-AFTER-LABEL"),
        "the real sed did not run the command after `:x`: {out:?}"
    );
}

/// diff3 and sdiff run `--diff-program` (also abbreviated: GNU getopt_long), bat its
/// `--pager`: under rules naming them they were allowed (checked with the real diff3, which ran
/// the program).
#[test]
fn diff3_sdiff_and_bat_run_the_program_their_options_name() {
    let r = rules(
        "[[shell.rules]]\npattern = \"diff3\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"sdiff\"\naction = \"allow\"\n\
         [[shell.rules]]\npattern = \"bat\"\naction = \"allow\"\n",
    );
    for line in [
        "diff3 --diff-program=/tmp/x a b c",
        "diff3 --diff-prog=/tmp/x a b c",
        "sdiff --diff-program /tmp/x a b",
        "sdiff -o /tmp/merged a b",
        "bat --pager=/tmp/x f",
        "bat f --pager '/tmp/x -R'",
    ] {
        let a = decide_with(&r, line);
        assert_ne!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    for line in [
        "diff3 a b c",
        "sdiff -s a b",
        "bat -n f",
        "bat --paging=never f",
    ] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    let dir = tempfile::tempdir().unwrap();
    for (n, t) in [("a", "1\n"), ("b", "2\n"), ("c", "3\n")] {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    let prog = dir.path().join("prog");
    std::fs::write(
        &prog,
        "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\nexec diff \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let _ = std::process::Command::new("diff3")
        .arg(format!("--diff-prog={}", prog.display()))
        .args(["a", "b", "c"])
        .current_dir(dir.path())
        .output()
        .expect("diff3 is needed for this test (Debian package `diffutils`)");
    assert!(
        dir.path().join("ran").exists(),
        "the real diff3 did not run --diff-program"
    );
}

/// GNU make's `-E STRING` is `--eval=STRING` (make 4.3 takes it too): `make -E '$(shell id)'`
/// ran `id` under a `make` rule (checked with the real make).
#[test]
fn make_dash_e_is_eval() {
    let r = rules("[[shell.rules]]\npattern = \"make\"\naction = \"allow\"\n");
    for line in [
        "make -E '$(shell id)'",
        "make -sE x",
        "make -E\"$(shell id)\" all",
    ] {
        let a = decide_with(&r, line);
        assert_ne!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    for line in ["make", "make test", "make -j4 -s all"] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Makefile"), "all:\n\t@true\n").unwrap();
    let _ = std::process::Command::new("make")
        .args(["-E", "$(shell touch ran)"])
        .current_dir(dir.path())
        .output()
        .expect("GNU make is needed for this test (Debian package `make`)");
    assert!(
        dir.path().join("ran").exists(),
        "the real make did not evaluate -E"
    );
}

/// node options that load code from a named file (`--env-file-if-exists`, which may set
/// NODE_OPTIONS; `--openssl-config`, which loads providers; `--snapshot-blob`), open the
/// inspector (a debugger for whoever reaches its port) or write where they name
/// (`--redirect-warnings`, the report and profile directories) were allowed under a `node`
/// rule (the real node wrote the `--redirect-warnings` file, checked).
#[test]
fn node_options_that_load_code_listen_or_write() {
    let r = rules("[[shell.rules]]\npattern = \"node\"\naction = \"allow\"\n");
    for line in [
        "node --env-file-if-exists=/tmp/e t.js",
        "node --openssl-config=/tmp/c.cnf t.js",
        "node --snapshot-blob /tmp/s.blob t.js",
        "node --inspect=0.0.0.0:9229 t.js",
        "node --inspect-brk t.js",
        "node --redirect-warnings=/tmp/w t.js",
        "node --report-directory /tmp/r t.js",
        "node --cpu-prof-dir=/tmp t.js",
    ] {
        let a = decide_with(&r, line);
        assert_ne!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    for line in [
        "node t.js",
        "node --test",
        "node --redirect-warnings=w.log t.js",
    ] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    let node = ["/usr/bin/node", "/usr/local/bin/node"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("node is needed for this test: run scripts/test-deps.sh (it installs nodejs)");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warnings");
    let _ = std::process::Command::new(node)
        .arg(format!("--redirect-warnings={}", out.display()))
        .args(["-e", "process.emitWarning('x')"])
        .output()
        .unwrap();
    assert!(
        out.exists(),
        "the real node did not write --redirect-warnings"
    );
}

/// zip tests the archive with `-TT CMD`/`--unzip-command CMD` (abbreviated too): a command
/// through the shell, allowed under a `zip` rule (checked with the real zip); the archive it
/// writes outside the roots was allowed too.
#[test]
fn zip_unzip_command_runs_and_the_archive_is_written() {
    let r = rules("[[shell.rules]]\npattern = \"zip\"\naction = \"allow\"\n");
    for line in [
        "zip -T -TT id a.zip f",
        "zip -T --unzip-command=id a.zip f",
        "zip -T --unzip-c id a.zip f",
        "zip /tmp/a.zip f",
        "zip -r -O /tmp/b.zip a.zip",
        "zip \"$opt\" a.zip f",
    ] {
        let a = decide_with(&r, line);
        assert_ne!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    for line in ["zip -r a.zip src", "zip -q -9 -r out.zip dir -x '*.o'"] {
        let a = decide_with(&r, line);
        assert_eq!(a.decision.action, Action::Allow, "{line}: {:?}", a.decision);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let _ = std::process::Command::new("zip")
        .args(["-q", "-T", "--unzip-c", "touch ran #", "a.zip", "f"])
        .current_dir(dir.path())
        .output()
        .expect("zip is needed for this test (Debian package `zip`)");
    assert!(
        dir.path().join("ran").exists(),
        "the real zip did not run --unzip-command"
    );
}
