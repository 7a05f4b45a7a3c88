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
//! `eval`, output redirections, loader variables).
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

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assess;
pub mod shell;
