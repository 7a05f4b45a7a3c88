//! `cordon exec`: decide on the terminal, then run under the OS sandbox — through the gate.

use cordon_gate::{Command, Gate, Options, Output, RunOptions};
use cordon_policy::ApprovalMode;

use crate::prompt::Prompt;
use crate::{refuse, refuse_gate, term, ExecArgs, EXIT_FAILURE};

pub fn run(args: ExecArgs) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            return refuse(
                EXIT_FAILURE,
                format!("cannot read the current directory: {e}"),
            )
        }
    };
    let command = match (&args.command, args.argv.is_empty()) {
        (Some(line), _) => Command::Line(line.clone()),
        (None, false) => Command::Argv(args.argv.clone()),
        (None, true) => {
            return refuse(
                EXIT_FAILURE,
                "nothing to run: give -c STRING or -- PROG ARGS",
            )
        }
    };
    let mut opts = Options::new(cwd);
    opts.policy = args.policy.clone();
    opts.backend = args.backend.map(|b| b.to_policy());
    opts.mode = if args.approve_all {
        Some(ApprovalMode::ApproveAll)
    } else if args.strict {
        Some(ApprovalMode::Strict)
    } else {
        None
    };
    opts.session = args.session.clone().or_else(|| {
        std::env::var("CORDON_SESSION")
            .ok()
            .filter(|s| !s.is_empty())
    });
    opts.can_ask = term::terminal_available();
    let session = opts.session.clone();
    let gate = match Gate::open(opts) {
        Ok(g) => g,
        Err(e) => return refuse_gate(&e),
    };
    for w in gate.warnings() {
        eprintln!("cordon: warning: {w}");
    }
    // The sandbox first: a run that can never happen is refused before anyone is asked and
    // before anything is recorded.
    let call = match gate.shell(command, None) {
        Ok(c) => c,
        Err(e) => return refuse_gate(&e),
    };
    let rules_file = gate
        .rules_file()
        .map(std::path::Path::to_path_buf)
        .map_err(String::from);
    let mut prompt = Prompt::new(rules_file, session);
    let decision = gate.decide(&call, &mut prompt);
    for n in &decision.notices {
        eprintln!("cordon: {n}");
    }
    if !decision.is_allowed() {
        return refuse(decision.exit_code(), decision.message());
    }
    let timeout = args.timeout.or(gate.policy().sandbox.limits.timeout);
    let opts = RunOptions {
        timeout,
        output: Output::Inherit,
    };
    match gate.run(&call, &decision, opts) {
        Ok(ran) if ran.timed_out => refuse(
            ran.exit_code,
            format!(
                "timed out after {:?}; killed `{}` and all its descendants",
                timeout.unwrap_or_default(),
                call.shown()
            ),
        ),
        Ok(ran) => ran.exit_code,
        Err(e) => refuse_gate(&e),
    }
}
