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
//! `ask`: `approve-all` allows, `strict` and `deny` refuse, `interactive` leaves it an ask
//! ([`Outcome::Ask`]). An ask stays an ask: who answers it (a terminal, an MCP elicitation, an
//! agent host's own prompt, or nobody) is the front end's business, not the engine's.
//!
//! One evaluator decides: [`Engine::explain`] says, purely, how a request is decided — each
//! key's rule or default, the tool's concerns, the session grants, the doom loop, the mode and
//! the [`Outcome`] ([`Explanation`]); [`Engine::evaluate`] is `explain` plus the doom-loop
//! count and the audit record.
//!
//! A tool describes a call with facts, never a decision: its keys, keys that pass unless a
//! rule names them ([`Passing`]: a wrapper such as `timeout 60`, whose command is a key of its
//! own), and [`Concern`]s the keys do not capture (an environment variable, a write outside the
//! roots), each `ask` or `deny`. The engine applies the rules to the keys and combines the
//! concerns; no session grant covers a concern, and only an explicit allow rule that names the
//! option lifts a concern about one command's option (`find * -delete`):
//!
//! ```
//! use cordon_approval::{Concern, Engine, Key, Passing, Request};
//! use cordon_policy::{Action, Policy};
//!
//! let text = "version = 1\n[[shell.rules]]\npattern = \"pytest\"\naction = \"allow\"\n";
//! let engine = Engine::new(&Policy::parse(text, "cordon.toml", std::path::Path::new("/")).unwrap());
//! let req = Request::shell("1", vec![Key::split("pytest -x")]).with_passing(Passing {
//!     key: Key::split("timeout 60"),
//!     check: "wrapper",
//!     reason: "runs its command as it is".into(),
//! });
//! assert_eq!(engine.explain(&req).action(), Action::Allow);
//! let req = req.with_concern(Concern::new(Action::Ask, "environment", "`PAGER` may run code"));
//! assert_eq!(engine.explain(&req).action(), Action::Ask);
//! ```
//!
//! Every decision can be recorded in a hash-chained [`audit`] log, durable before the tool
//! runs.
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
//!
//! ## An agent host, end to end: the [`Engine`] and a [`Batch`] of deferred approvals
//!
//! The engine adds, per session, what plain rules cannot: tool defaults (`[tools.NAME]
//! approval`, which stays respected in `strict` mode), session grants ([`SessionMemory`]),
//! the doom loop, the mode, answers ([`Answer`]), persisted "approve always" rules
//! ([`amend`]), timeouts and lost channels. Every [`Outcome`] names what decided it ([`By`]),
//! for the audit log. A host collects the tool calls of one model turn into a batch, shows
//! the pending ones, applies the answers, and runs what was allowed:
//!
//! ```
//! use cordon_approval::{amend, Answer, Engine, Key, Outcome, Request, Rules};
//! use cordon_policy::Policy;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let policy_path = dir.path().join("cordon.toml");
//! std::fs::write(&policy_path, r#"
//! version = 1
//! [[shell.rules]]
//! pattern = "ls"
//! action = "allow"
//! [[shell.rules]]
//! pattern = "rm -rf*"
//! action = "deny"
//! reason = "destructive"
//! [tools.web_search]
//! approval = "deny"
//! [approval]
//! timeout = "5m"
//! "#).unwrap();
//! let policy = Policy::load(&policy_path).unwrap();
//!
//! // Persisted "approve always" grants live beside the policy.
//! let rules_file = amend::rules_file_for(&policy_path);
//! let mut rules = Rules::from_policy(&policy);
//! // Their content is pinned in the operator's trust store (refused when a command edits it).
//! let store = cordon_policy::trust::TrustStore::at(dir.path().join("config/cordon"));
//! rules.add_persisted(amend::load(&rules_file, &store).unwrap());
//! let mut engine = Engine::with_rules(rules, &policy);
//! // Every final decision is appended to the hash-chained log before the engine hands it out.
//! let log = dir.path().join("audit.jsonl");
//! engine.set_audit(cordon_approval::audit::AuditLog::open(&log).unwrap());
//!
//! // Hide the tools a blanket deny removes.
//! let hidden = engine.disabled_tools(["shell", "write_file", "web_search"]);
//! assert_eq!(hidden[0].tool, "web_search");
//!
//! // One model turn: four tool calls.
//! let sh = |id: &str, line: &str| Request::shell(id, vec![Key::split(line)]);
//! let turn = vec![
//!     sh("call-1", "ls -la"),
//!     sh("call-2", "cargo test"),
//!     sh("call-3", "rm -rf /"),
//!     Request::new("call-4", "write_file", vec![Key::split("write_file notes/a.txt")]),
//! ];
//! let mut batch = engine.batch(turn);
//!
//! // Show the pending ones (a UI would render each presentation: summary + preview).
//! let pending: Vec<String> = batch.pending().iter().map(|(r, _)| r.id.clone()).collect();
//! assert_eq!(pending, ["call-2", "call-4"]);
//!
//! // The person approves `cargo test` always, and sends a substitute for the write.
//! let rule_text = match batch.answer("call-2", Answer::Always).unwrap() {
//!     Outcome::Allowed { amendments, .. } => {
//!         let shown = amendments[0].to_toml(); // shown verbatim before saving
//!         let wrote = amend::append(&rules_file, &store, &amendments[0]).unwrap().unwrap();
//!         assert!(wrote.ends_with(&shown));
//!         shown
//!     }
//!     other => panic!("{other:?}"),
//! };
//! assert!(rule_text.contains("pattern = \"cargo test\"\nexact = true"));
//! batch
//!     .approve_with_args("call-4", serde_json::json!({"path": "notes/b.txt"}))
//!     .unwrap();
//! assert!(batch.is_done());
//!
//! // Resume: run what was allowed; hand every denial back to the agent as a typed error.
//! for r in batch.finish() {
//!     match r.outcome.result() {
//!         Ok(()) => { /* the tool re-validates r.args (if any) and runs */ }
//!         Err(e) => {
//!             assert_eq!(r.request.id, "call-3");
//!             assert!(e.to_string().ends_with("(rm -rf*): destructive"), "{e}");
//!         }
//!     }
//! }
//! // Next turn, `cargo test` is allowed by the session grant (and, in a new session, by the
//! // persisted rule).
//! assert!(engine.evaluate(&sh("call-5", "cargo test")).is_allowed());
//!
//! // Five final decisions, five records, one intact chain.
//! let report = cordon_approval::audit::verify(&log).unwrap();
//! assert!(report.is_intact());
//! assert_eq!(report.records, 5);
//! ```
//!
//! ## Errors
//!
//! One error type, [`Error`]: why something this crate was asked to do failed — an "always"
//! answer that cannot become a rule (shown to the person) or a rules file that cannot be read,
//! parsed or written; a [`Batch`] used wrongly (an unknown or already decided id); an audit log
//! that cannot be opened, appended to or verified (the caller refuses to run the call).
//!
//! Two more types implement `std::error::Error` but are values the engine exchanges, not
//! failures of this crate, and stay `Clone + Eq` (which an error holding an `io::Error` cannot
//! be):
//!
//! - [`AskError`] — what an [`Asker`] returns *to* the engine: nobody answered in time, or the
//!   channel to the person was lost. Implemented by front ends, so it stays this small.
//! - [`ApprovalError`] — why a call must not run, typed for the agent host (`Rejected`,
//!   `DeniedByRule`, …): a verdict derived from an [`Outcome`].

// The few syscalls the audit log and amendments make (openat, renameat, flock) go through
// rustix's safe wrappers: nothing here needs `unsafe`.
#![forbid(unsafe_code)]

pub mod amend;
pub mod audit;
mod batch;
mod engine;
mod error;
mod explain;
mod memory;
mod outcome;
mod request;
mod rule_index;
mod rules;
mod toolrules;

pub use amend::Amendment;
pub use batch::{Batch, Resolved};
pub use cordon_policy::verdict::Known;
pub use engine::{
    refusal_record, remembers, Asker, AsyncAsker, Decided, Disabled, Durable, Engine, RuleStore,
};
pub use error::Error;
pub use explain::{Explanation, KeyExplained};
pub use memory::SessionMemory;
pub use outcome::{mode_name, Answer, ApprovalError, AskError, By, Outcome, Pending};
pub use request::{Concern, FileAccess, Key, Passing, Presentation, Preview, Request};
pub use rules::{
    names_system_program, resolve_mode, Decision, RuleRef, RuleSet, Shadowed, SYSTEM_BIN_DIRS,
};
pub use toolrules::{network_rules, rule, KeyVerdict, Origin, Rules};
