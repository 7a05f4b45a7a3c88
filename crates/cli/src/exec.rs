//! `cordon exec`: decide on the terminal, then run under the OS sandbox — through the gate.

use std::sync::{Arc, Mutex};

use cordon_gate::{Command, Gate, Options, Output, RunOptions};

use crate::prompt::Prompt;
use crate::{term, Error, ExecArgs, Exit};

pub fn run(args: ExecArgs) -> Exit {
    let cwd = crate::current_dir()?;
    let command = match (&args.command, args.argv.is_empty()) {
        (Some(line), _) => Command::Line(line.clone()),
        (None, false) => Command::Argv(args.argv.clone()),
        (None, true) => {
            return Err(Error::failure(
                "nothing to run: give -c STRING or -- PROG ARGS",
            ))
        }
    };
    let mut opts = Options::new(cwd);
    opts.policy = args.policy.clone();
    opts.backend = args.backend.map(|b| b.to_policy());
    crate::approval_options(
        &mut opts,
        args.approve_all,
        args.strict,
        args.session.clone(),
    );
    // A host's user approved exactly this line (`cordon hook`): the gate uses the grant up
    // as it opens, checked against the policy it runs under, and the grant stands in for the
    // person on the terminal. A grant that does not hold is a refusal (126); its directory
    // failing, cordon's (125).
    opts.host_grant = match (&args.host_grant, &args.command) {
        (None, _) => None,
        (Some(id), Some(line)) => Some(cordon_gate::host_grant::Claim {
            id: id.clone(),
            line: line.clone(),
        }),
        (Some(_), None) => return Err(Error::failure("--host-grant needs -c STRING")),
    };
    // A run an agent host started never asks on a terminal: the terminal there is the
    // host's, and its agent may type into it (answer its own question).
    let from_host = args.from_hook || args.host_grant.is_some();
    // Inside Codex's sandbox: this run's state apart from the hook's (see `cordon_gate::Options`).
    opts.codex_state = args.state.is_some();
    let terminal = !from_host && term::terminal_available();
    let session = opts.session.clone();
    let gate = Gate::open(opts)?;
    let host_grant = gate.granted_by().map(str::to_string);
    for w in gate.warnings() {
        eprintln!("cordon: warning: {w}");
    }
    // The sandbox first: a run that can never happen is refused before anyone is asked and
    // before anything is recorded.
    let call = gate.shell(command, None)?;
    let rules_file = gate.rules_file().map(std::path::Path::to_path_buf);
    let mut prompt = Prompt::new(rules_file, session);
    // Provisional: an allow's record is made durable while the sandbox is built, and the
    // command starts only once it is (`Gate::run_provisional`).
    let decision = match &host_grant {
        // The host's user already said yes to this call, once.
        Some(_) => gate.decide_provisional(
            &call,
            &mut |_: &cordon_gate::Request, _: &cordon_gate::Pending, _| {
                Ok(cordon_gate::Answer::Once)
            },
        ),
        None if terminal => gate.decide_provisional(&call, &mut prompt),
        // Nobody to ask: the gate's denial says how a person can approve it.
        None => gate.decide_provisional(&call, &mut cordon_gate::nobody()),
    };
    for n in &decision.provisional().notices {
        eprintln!("cordon: {n}");
    }
    if !decision.provisional().is_allowed() {
        let decision = decision.durable();
        return Err(Error::new(decision.exit_code(), decision.message()));
    }
    let timeout = args.timeout.or(gate.policy().sandbox.limits.timeout);
    // A connection the `[network]` rules leave to "ask" is asked on this terminal, while the
    // command waits; never in a run an agent host started (its user approved the command, not
    // its connections), and never when the command's output goes into a pipe: its reader
    // writes to the terminal on its own, so what the command prints could cover the question.
    let ask: Option<cordon_gate::SharedAsker> =
        (terminal && !term::output_into_a_pipe()).then(|| Arc::new(Mutex::new(prompt)) as _);
    let opts = RunOptions {
        timeout,
        output: Output::Inherit,
        cancel: None,
        ask,
        // A command a host runs reads nothing, unless a person types into it through the host:
        // an agent's keys (Codex's `write_stdin`, Copilot's `write_bash`) reach no hook.
        input: match (from_host, args.input.as_deref()) {
            (true, None) => cordon_gate::Input::Nothing,
            _ => cordon_gate::Input::Inherit,
        },
    };
    let ran = gate.run_provisional(&call, decision, opts);
    repeat_warnings(gate.warnings());
    let ran = ran?;
    if ran.timed_out {
        return Err(Error::new(
            ran.exit_code,
            format!(
                "timed out after {:?}; killed `{}` and all its descendants",
                timeout.unwrap_or_default(),
                call.shown()
            ),
        ));
    }
    Ok(ran.exit_code)
}

/// Says the warnings printed before the run again once it is over, when cordon's stderr is a
/// terminal: the command's output could clear the screen, move the cursor over them or leave
/// the terminal concealing text, so that they were gone before anyone read them. The terminal
/// is reset first (as before a question), then each goes on a line of its own.
fn repeat_warnings(warnings: &[String]) {
    use std::io::{IsTerminal, Write};
    let mut err = std::io::stderr();
    if warnings.is_empty() || !err.is_terminal() {
        return;
    }
    let mut text = crate::prompt::TERMINAL_RESET.to_vec();
    text.extend_from_slice(b"\r\n");
    for w in warnings {
        text.extend_from_slice(format!("cordon: warning (again, after the run): {w}\n").as_bytes());
    }
    let _ = err.write_all(&text);
}
