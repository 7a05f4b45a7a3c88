//! The tools layer of cordon.
//!
//! cordon stands between an AI agent and the machine in three layers: approval asks
//! "should this happen?", the OS sandbox blocks whatever the policy does not allow, and
//! the tools — this crate — are what the agent actually calls. A tool validates its
//! arguments, knows what an operation *means*, and describes it for approval: only the
//! file tool knows that `notes/../secret` leaves its root, only the shell tool knows that
//! `ls && rm -rf x` runs `rm`.
//!
//! [`shell`] is the shell tool's core: it finds every simple command a shell line would
//! run — through lists, pipelines, substitutions, wrappers such as `sudo`, `xargs` or
//! `bash -c`, and quoting tricks — and reports everything about the line that must never
//! be allowed without asking (syntax it cannot parse, commands only known at run time,
//! `eval`, output redirections, loader variables, and any other variable put in a program's
//! environment unless it is known to be inert, such as `LANG` or `TERM`).
//!
//! ```
//! use cordon_tools::shell;
//!
//! let parsed = shell::parse(r#"echo "rm x" && env LD_PRELOAD=/tmp/x.so \rm -rf $(pwd)"#);
//! // What bash runs (not the other readings kept for the rules: `rm`'s meaning).
//! let commands: Vec<Vec<String>> = parsed
//!     .commands
//!     .into_iter()
//!     .filter(|c| !c.reading)
//!     .map(|c| c.words)
//!     .collect();
//! assert_eq!(
//!     commands,
//!     [
//!         vec!["echo", "rm x"],
//!         vec!["env", "LD_PRELOAD=/tmp/x.so", "rm", "-rf", "$(pwd)"],
//!         vec!["rm", "-rf", "$(pwd)"],
//!         vec!["pwd"],
//!     ]
//! );
//! assert_eq!(
//!     parsed.concerns,
//!     [shell::Concern::LoaderVariable("LD_PRELOAD=/tmp/x.so".into())]
//! );
//! ```
//!
//! [`assess`] reads a parsed line in its context (the roots, cordon's own files, the `PATH`):
//! the commands bash will run, each with the key a rule matches (a wrapper that only carries
//! another command, such as `timeout 60`, passes unless a rule names it), and the concerns the
//! reading raised, each weighed `ask` or `deny` with the check that found it. These are facts,
//! never a rule's decision: this crate does not depend on the approval layer. The gate turns
//! the reading into an `approval::Request` and the engine's one evaluator decides it:
//!
//! ```
//! use cordon_policy::{Action, Policy};
//! use cordon_tools::assess::{assess, Level, ShellContext};
//! use cordon_tools::shell;
//!
//! let text = "version = 1\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\n";
//! let policy = Policy::parse(text, "cordon.toml", std::path::Path::new("/")).unwrap();
//! let cx = ShellContext::for_policy(&policy, "/".into());
//! let reading = assess(&shell::parse("timeout 60 ls > /etc/motd"), &cx);
//! let keys: Vec<String> = reading.commands.iter().map(|c| c.key.join(" ")).collect();
//! assert_eq!(keys, ["timeout 60 ls", "ls"]);
//! assert!(reading.commands[0].passes.is_some()); // the wrapper: `ls` is decided instead
//! let worst = reading.worst().unwrap();
//! assert_eq!((worst.level, worst.check), (Level::Ask, "redirect"));
//!
//! // The gate's request (crates/gate/src/call.rs): keys, passing keys and concerns.
//! use cordon_approval::{Concern, Engine, Key, Passing, Request};
//! let mut req = Request::shell("1", vec![Key::new(reading.commands[1].key.clone())]);
//! req = req.with_passing(Passing {
//!     key: Key::new(reading.commands[0].key.clone()),
//!     check: "wrapper",
//!     reason: "runs its command as it is".into(),
//! });
//! req = req.with_concern(Concern::new(worst.level.action(), worst.check, worst.reason.clone()));
//! let x = Engine::new(&policy).explain(&req);
//! assert_eq!(x.action(), Action::Ask); // `ls` is allowed; the write outside the roots asks
//! ```
//!
//! [`tool`] is the interface every tool implements (name, JSON schema, an *assessment* of a
//! call for approval, and its execution), with [`tool::Toolbox`] holding a policy's tools and
//! [`tool::ConfiguredTool`] for user-defined `[tools.NAME]` entries. [`files`] holds the file
//! tools (`read_file`, `write_file`, `edit_file`, `list_dir`, `delete_file`) over the policy's
//! named roots, with race-free path resolution beneath each root's directory descriptor.
//!
//! ```
//! use cordon_policy::{Action, Policy};
//! use cordon_tools::tool::{Preview, Toolbox};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir(dir.path().join("notes")).unwrap();
//! let text = "version = 1\n[sandbox.paths.notes]\nroot = \"notes\"\nmode = \"rw\"\nwrite_approval = true\n";
//! let policy = Policy::parse(text, "cordon.toml", dir.path()).unwrap();
//! let tools = Toolbox::from_policy(&policy).unwrap();
//!
//! // Facts: the key, the root that holds the path, whether the call writes.
//! let a = tools.assess("write_file", &json!({"path": "notes/a.txt", "content": "hi\n"})).unwrap();
//! assert_eq!(a.keys, ["write_file", "notes/a.txt"]);
//! assert_eq!(a.access.as_ref().map(|f| (f.root.as_str(), f.writes)), Some(("notes", true)));
//! assert!(matches!(a.presentation.preview, Preview::Content { .. }));
//!
//! // The engine decides (as the gate asks it): the root's write_approval makes it an ask.
//! use cordon_approval::{Engine, Key, Request};
//! let req = Request::new("1", a.tool.clone(), vec![Key::new(a.keys.clone())])
//!     .with_file(a.access.clone().unwrap());
//! assert_eq!(Engine::new(&policy).explain(&req).action(), Action::Ask);
//!
//! // A refusal is a fact too: a deny concern, final whatever the rules say.
//! let a = tools.assess("read_file", &json!({"path": "notes/../../etc/passwd"})).unwrap();
//! assert_eq!(a.refusal().unwrap().rule.to_string(), "builtin:path");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assess;
pub mod files;
pub mod network;
pub mod shell;
pub mod tool;

// The tests decide a reading as the gate does, through the approval engine (a dev-dependency).
#[cfg(test)]
extern crate self as cordon_tools;
#[cfg(test)]
#[path = "../tests/support/judge.rs"]
mod judge;
