//! The CLI's one error type: what every subcommand and front end ends with when it cannot do
//! what it was asked, printed once in `main` as one `cordon: ` line (what, why, what to do),
//! the lines after it, and [`Error::exit_code`].

use crate::{hook, mcp};

/// cordon's refusals and failures as the CLI reports them: the gate's (policy, remembered rules,
/// audit log, sandbox, a refused call, cordon's own failure) as they are, and the front ends'
/// own (`cordon hook`'s input, `cordon mcp`'s session). Exit codes: the gate's (125 cordon's
/// own failure, 126 denied, 127 not found, 124 timed out), [`hook::EXIT_BLOCK`] (2, what every
/// host reads as "blocked") for the hook's, 125 for the MCP server's.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Deciding, recording or running failed or was refused; also the CLI's own failures
    /// ([`Error::failure`]), which are the gate's [`cordon_gate::Error::Failed`].
    #[error(transparent)]
    Gate(#[from] cordon_gate::Error),
    /// `cordon hook` cannot answer its host.
    #[error(transparent)]
    Hook(#[from] hook::Error),
    /// `cordon mcp` cannot serve.
    #[error(transparent)]
    Mcp(#[from] mcp::Error),
}

impl Error {
    /// An error with its exit code (125 cordon's own failure, 126 denied, any other as given);
    /// the message is made safe for a terminal.
    pub fn new(code: i32, message: impl std::fmt::Display) -> Error {
        Error::Gate(cordon_gate::Error::new(code, message))
    }

    /// cordon's own failure (125).
    pub fn failure(message: impl std::fmt::Display) -> Error {
        Error::Gate(cordon_gate::Error::failure(message))
    }

    /// The exit code `cordon` returns for it.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Gate(e) => e.exit_code(),
            Error::Hook(_) => hook::EXIT_BLOCK,
            Error::Mcp(_) => crate::EXIT_FAILURE,
        }
    }

    /// The lines to show after the message, each safe for a terminal.
    pub fn detail(&self) -> Vec<String> {
        match self {
            Error::Gate(e) => e.detail(),
            Error::Hook(_) | Error::Mcp(_) => Vec::new(),
        }
    }

    /// The message, then `lines` shown after it (see [`cordon_gate::Error::with_detail`]).
    pub fn with_detail<'a>(self, lines: impl IntoIterator<Item = &'a str>) -> Error {
        match self {
            Error::Gate(e) => Error::Gate(e.with_detail(lines)),
            other => Error::Gate(cordon_gate::Error::failure(&other).with_detail(lines)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_front_end_keeps_its_exit_code_and_one_line() {
        let gate: Error = cordon_gate::Error::Refused("denied by rule x".into()).into();
        assert_eq!(gate.exit_code(), crate::EXIT_DENIED);
        let hook: Error = hook::Error::RelativeCwd.into();
        assert_eq!(hook.exit_code(), hook::EXIT_BLOCK);
        let mcp: Error = mcp::Error::MissingTool("read_file").into();
        assert_eq!(mcp.exit_code(), crate::EXIT_FAILURE);
        for e in [gate, hook, mcp] {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        let timed_out = Error::new(124, "timed out\u{1b}[2J");
        assert_eq!(timed_out.exit_code(), 124);
        assert_eq!(timed_out.to_string(), "timed out\\u{1b}[2J");
        let with = Error::failure("policy changed").with_detail(["+ a", "- b"]);
        assert_eq!(with.detail(), ["+ a", "- b"]);
    }
}
