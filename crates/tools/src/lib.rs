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
//! let commands: Vec<Vec<String>> = parsed.commands.into_iter().map(|c| c.words).collect();
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
//! let a = tools.assess("write_file", &json!({"path": "notes/a.txt", "content": "hi\n"})).unwrap();
//! assert_eq!(a.verdict.action, Action::Ask);
//! assert_eq!(a.keys, ["write_file", "notes/a.txt"]);
//! assert!(matches!(a.presentation.preview, Preview::Content { .. }));
//!
//! let a = tools.assess("read_file", &json!({"path": "notes/../../etc/passwd"})).unwrap();
//! assert_eq!(a.verdict.action, Action::Deny);
//! assert_eq!(a.verdict.rule.to_string(), "builtin:path");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assess;
pub mod files;
pub mod network;
pub mod shell;
pub mod tool;
