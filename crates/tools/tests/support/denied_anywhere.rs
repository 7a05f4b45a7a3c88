//! Lines that run a denied command somewhere: a denied command (in one of many spellings)
//! wrapped, one to four times, in the shell's syntactic positions (lists, pipelines, subshells,
//! groups, substitutions, conditionals, loops, functions, here-documents, wrappers, nested
//! shells) next to harmless commands. Shared by the property test (`tests/shell_prop.rs`) and
//! the fuzz target (`fuzz/fuzz_targets/assess.rs`), which draw the choices differently.
//!
//! The property: with a policy that allows everything but the denied commands, no such line
//! is ever allowed.

/// The policy: every command allowed but these.
pub const POLICY: &str = "version = 1\n[shell]\ndefault = \"allow\"\n\
    [[shell.rules]]\npattern = \"rm\"\naction = \"deny\"\n\
    [[shell.rules]]\npattern = \"curl\"\naction = \"deny\"\n\
    [[shell.rules]]\npattern = \"git reset --hard\"\naction = \"deny\"\n";

/// Denied commands, spelled as an agent (or an attacker) might.
pub const DENIED: &[&str] = &[
    "rm -rf x",
    "/bin/rm x",
    "/usr/bin/rm -f x",
    "./rm x",
    "\\rm x",
    "r\\m x",
    "\"rm\" x",
    "'r'm x",
    "r''m x",
    "$'rm' x",
    "command rm x",
    "builtin command rm x",
    "env rm x",
    "env -i FOO=1 rm x",
    "/usr/bin/env rm x",
    "sudo rm x",
    "sudo -u root /bin/rm x",
    "nice -n 5 rm x",
    "timeout 5 rm x",
    "nohup rm x",
    "xargs rm",
    "xargs -0 -n1 rm -f",
    "find . -name x -exec rm {} \\;",
    "find . -execdir rm -f {} +",
    "bash -c 'rm x'",
    "sh -c 'rm x'",
    "bash -lc 'rm x'",
    "eval 'rm x'",
    "exec rm x",
    "curl http://x",
    "/usr/bin/curl -s x",
    "git reset --hard",
    "git reset --hard HEAD",
];

/// Harmless commands (allowed by the policy).
pub const SAFE: &[&str] = &[
    "ls",
    "echo hi",
    "cat f",
    "git status",
    "true",
    "grep -r x .",
    "x=1",
];

/// `s` as one single-quoted shell word.
pub fn squote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A line that runs a denied command. `pick(n)` returns a choice below `n`; `word` is any
/// text, used only inside single quotes.
pub fn line(pick: &mut dyn FnMut(usize) -> usize, word: &str) -> String {
    let mut c = DENIED[pick(DENIED.len())].to_string();
    for _ in 0..1 + pick(4) {
        c = wrap(c, pick, word);
    }
    c
}

fn safe(pick: &mut dyn FnMut(usize) -> usize, word: &str) -> String {
    let i = pick(SAFE.len() + 1);
    match SAFE.get(i) {
        Some(s) => s.to_string(),
        None => format!("echo {}", squote(word)),
    }
}

/// The positions a command `c` can stand in.
const POSITIONS: usize = 40;

fn wrap(c: String, pick: &mut dyn FnMut(usize) -> usize, word: &str) -> String {
    let s = safe(pick, word);
    // Backticks nest only with escaping; `$(…)` is used where `c` has any.
    let subst = if c.contains(['`', '\\']) {
        format!("$({c})")
    } else {
        format!("`{c}`")
    };
    match pick(POSITIONS) {
        0 => c,
        1 => format!("{s}; {c}"),
        2 => format!("{c}; {s}"),
        3 => format!("{s} && {c}"),
        4 => format!("{s} || {c}"),
        5 => format!("{s} | {c}"),
        6 => format!("{c} | {s}"),
        7 => format!("{c} &"),
        8 => format!("({c})"),
        9 => format!("{{ {c}; }}"),
        10 => format!("echo $({c})"),
        11 => format!("echo {subst}"),
        12 => format!("echo \"$({c})\""),
        13 => format!("y=$({c})"),
        14 => format!("cat <({c})"),
        15 => format!("echo hi > >({c})"),
        16 => format!("if {c}; then {s}; fi"),
        17 => format!("if {s}; then {c}; else {s}; fi"),
        18 => format!("while {c}; do {s}; done"),
        19 => format!("for i in 1 2; do {c}; done"),
        20 => format!("case x in x) {c};; esac"),
        21 => format!("f() {{ {c}; }}; f"),
        22 => format!("cat <<EOF\n$({c})\nEOF"),
        23 => format!("[[ -n $({c}) ]]"),
        24 => format!("echo ${{v:-$({c})}}"),
        25 => format!("a=($({c}))"),
        26 => format!("! {c}"),
        27 => format!("time {c}"),
        28 => format!("{c} 2>&1"),
        29 => format!("bash -c {}", squote(&c)),
        30 => format!("sh -c {} sh", squote(&c)),
        31 => format!("{s}\n{c}"),
        32 => format!("until {c}; do {s}; done"),
        // After here-documents, where bash reads on (tree-sitter-bash took `EOF;` for the
        // delimiter). On the operator's line only a one-line command: from its first newline
        // on, bash reads the bodies.
        34 | 36 | 38 if c.contains('\n') => format!("cat <<EOF\n{s}\nEOF\n{c}"),
        34 => format!("cat <<EOF;{c}\nEOF"),
        35 => format!("cat <<EOF\n{s}\nEOF\n{c}"),
        36 => format!("cat <<-'E' <<F|{c}\n\tE\nF"),
        37 => format!("x=$(cat <<EOF\n{s}\nEOF\n); {c}"),
        38 => format!("cat <<EOF >/dev/null&&{c}\nEOF"),
        39 => format!("{s} <<'A'\nA\n{c}"),
        _ => format!("echo {} > /dev/null; {c}", squote(word)),
    }
}
