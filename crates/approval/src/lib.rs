//! cordon's approval layer: should this call happen?
//!
//! It sees requests, not files: a request names a tool and the operation keys it touches (for
//! the shell tool, each simple command's words). Rules come from the policy and decide each
//! key; the semantics are fixed:
//!
//! 1. an explicit **deny** that matches wins over everything;
//! 2. otherwise the **last** matching rule decides;
//! 3. otherwise the default (the secure default is `ask`).
//!
//! A request with several keys (a compound command line) gets the most restrictive result of
//! its parts. Finally the approval [`Mode`](cordon_policy::ApprovalMode) resolves what is still
//! `ask`: `approve-all` allows, `strict` and `deny` refuse, `interactive` asks a person — and
//! refuses when there is no terminal to ask on.
//!
//! ```
//! use cordon_approval::RuleSet;
//! use cordon_policy::{Action, Policy};
//!
//! let text = r#"
//! version = 1
//! [shell]
//! default = "ask"
//! [[shell.rules]]
//! pattern = "git *"
//! action = "allow"
//! [[shell.rules]]
//! pattern = "git push --force*"
//! action = "deny"
//! reason = "rewrites remote history"
//! "#;
//! let policy = Policy::parse(text, "cordon.toml", std::path::Path::new("/")).unwrap();
//! let rules = RuleSet::new(&policy.shell);
//!
//! let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
//! assert_eq!(rules.decide(&words("git status")).action, Action::Allow);
//! let d = rules.decide(&words("git push --force origin"));
//! assert_eq!(d.action, Action::Deny);
//! assert_eq!(d.reason, "rewrites remote history");
//! assert_eq!(d.rule.to_string(), "cordon.toml:8:1 (git push --force*)");
//! assert_eq!(rules.decide(&words("ls")).rule.to_string(), "default");
//! ```

mod rules;

pub use rules::{resolve_mode, Decision, RuleRef, RuleSet};
