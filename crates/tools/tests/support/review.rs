//! The shell rules of the outside review behind issue 13: allow `git status`, `git diff`,
//! `git log`, `ls`, `cat`, `echo`, `grep`, `find`, `pytest`, `npm run test*`; deny `rm`, `curl`,
//! `git reset --hard`; ask by default. Shared by the bypass and option-table tests.

/// The `[shell]` section, as policy text.
pub const REVIEW_RULES: &str = r#"
[shell]
default = "ask"
[[shell.rules]]
pattern = "git status"
action = "allow"
[[shell.rules]]
pattern = "git diff"
action = "allow"
[[shell.rules]]
pattern = "git log"
action = "allow"
[[shell.rules]]
pattern = "ls"
action = "allow"
[[shell.rules]]
pattern = "cat"
action = "allow"
[[shell.rules]]
pattern = "echo"
action = "allow"
[[shell.rules]]
pattern = "grep"
action = "allow"
[[shell.rules]]
pattern = "find"
action = "allow"
[[shell.rules]]
pattern = "pytest"
action = "allow"
[[shell.rules]]
pattern = "npm run test*"
action = "allow"
[[shell.rules]]
pattern = "rm"
action = "deny"
[[shell.rules]]
pattern = "curl"
action = "deny"
[[shell.rules]]
pattern = "git reset --hard"
action = "deny"
"#;
