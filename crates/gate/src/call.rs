//! Building a call: what it means (the tools' reading), turned into the request the
//! approval engine decides.

use super::*;

impl Gate {
    /// A shell call in `cwd` (`None`: the gate's), run (if allowed) in the sandbox the gate
    /// prepared when it was opened. `cwd` must lie in one of the policy's roots.
    pub fn shell(&self, command: Command, cwd: Option<&Path>) -> Result<Call, Error> {
        let cwd = self.call_cwd(cwd)?;
        let (argv, parsed, shown) = match command {
            Command::Line(line) => (
                // bash where installed (the analysis is bash's), so what was judged is what runs.
                vec![shell::line_shell().to_string(), "-c".into(), line.clone()],
                shell::parse_in(&line, &self.inherited),
                line,
            ),
            Command::Argv(argv) if argv.is_empty() => {
                return Err(Error::failure("nothing to run: an empty command"))
            }
            Command::Argv(argv) => {
                let parsed = shell::parse_argv_in(&argv, &self.inherited);
                let shown = argv.join(" ");
                (argv, parsed, shown)
            }
        };
        let cx = ShellContext::for_policy(&self.policy, cwd.clone());
        let assessment = assess(&parsed, &cx);
        let (request, preview) = {
            let engine = lock(&self.engine);
            shell_request(&engine, &shown, &argv, &cwd, &assessment)
        };
        Ok(Call {
            request,
            shown,
            preview,
            what: What::Shell(Box::new(ShellRun {
                argv,
                cwd,
                assessment,
            })),
        })
    }

    /// A file-tool call (`read_file`, `write_file`, `edit_file`, `list_dir`, `delete_file`,
    /// or a `[tools.NAME]` tool) with the tool's own arguments. Invalid arguments or a path
    /// outside the roots: refused (126), nothing recorded.
    pub fn file(&self, tool: &str, args: serde_json::Value) -> Result<Call, Error> {
        let toolbox = self.toolbox()?;
        let a = toolbox.assess(tool, &args).map_err(|e| match e {
            cordon_tools::tool::ToolError::UnknownTool { name, mut known } => {
                known.push("shell".into());
                known.sort();
                Error::failure(format!(
                    "unknown tool `{name}`; known tools: {}",
                    known.join(", ")
                ))
            }
            e => Error::Tool(e),
        })?;
        let id = cordon_approval::audit::new_id().unwrap_or_default();
        let preview = a.presentation.preview.to_string();
        let shown = a.presentation.summary.clone();
        // Facts only: the engine decides with the rules, the tool's default (for a file tool
        // the root's approval settings, for `[tools.NAME]` its `approval`), grants and mode.
        let mut request = Request::new(id, a.tool.clone(), vec![Key::new(a.keys.clone())])
            .with_presentation(a.presentation.clone())
            .with_args(a.args.clone());
        if let Some(access) = &a.access {
            request = request.with_file(access.clone());
        }
        for c in &a.concerns {
            request = request.with_concern(concern(c));
        }
        Ok(Call {
            request,
            shown,
            preview,
            what: What::File(Box::new(a)),
        })
    }

    /// Records a call that the front end refuses before the rules see it (a host's tool
    /// cordon will not let through, a line no shell can be given): a denial by the built-in
    /// check `check`, in the audit log like every decision. `key` names what was called.
    pub fn refuse(
        &self,
        tool: &str,
        key: Vec<String>,
        shown: &str,
        check: &'static str,
        reason: &str,
    ) -> Decision {
        let id = cordon_approval::audit::new_id().unwrap_or_default();
        let request = Request::new(id, tool, vec![Key::new(key)])
            .with_presentation(Presentation::summary(shown))
            // A deny concern: final whatever the rules, grants or mode say.
            .with_concern(cordon_approval::Concern::new(Action::Deny, check, reason));
        let shown = clean(shown);
        if self.front_end == FrontEnd::Check {
            return Decision {
                request: request.id.clone(),
                shown,
                kind: DecisionKind::Failed {
                    by: None,
                    reason: "this gate only checks calls".into(),
                },
                notices: Vec::new(),
            };
        }
        // A tool's own deny is final: the engine records it and hands back a denial.
        // Written under the engine's lock, synced after it (shared with concurrent calls).
        let decided = lock(&self.engine).evaluate_unsynced(&request);
        let kind = match decided.durable() {
            Outcome::Denied {
                by: By::AuditFailed,
                reason,
                ..
            } => DecisionKind::Failed {
                by: Some(By::AuditFailed),
                reason,
            },
            o @ Outcome::Denied { .. } => DecisionKind::Decided(o),
            // Never for a deny verdict; fail closed all the same.
            _ => DecisionKind::Decided(Outcome::Denied {
                by: By::Unanswered,
                reason: reason.to_string(),
                note: None,
            }),
        };
        Decision {
            request: request.id.clone(),
            shown,
            kind,
            notices: Vec::new(),
        }
    }

    /// A call's directory: the gate's, or one inside a root of the policy.
    pub(crate) fn call_cwd(&self, cwd: Option<&Path>) -> Result<PathBuf, Error> {
        let Some(dir) = cwd else {
            return Ok(self.cwd.clone());
        };
        let dir = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            self.cwd.join(dir)
        };
        let real = std::fs::canonicalize(&dir)
            .map_err(|e| Error::new(EXIT_DENIED, format!("cwd {}: {e}", dir.display())))?;
        let inside = self
            .policy
            .sandbox
            .paths
            .iter()
            .any(|p| std::fs::canonicalize(&p.root).is_ok_and(|root| real.starts_with(root)));
        if !inside {
            return Err(Error::new(
                EXIT_DENIED,
                format!("cwd {} lies outside the policy's roots", real.display()),
            ));
        }
        Ok(real)
    }
}

/// The shell call as the approval engine sees it: one key per simple command (a transparent
/// wrapper's or a state-only builtin's passes unless a rule names it), the reading's concerns,
/// and a preview listing each command with what the engine's one evaluator
/// ([`Engine::explain`]) says of it. The reading holds facts only; every rule, grant and mode
/// is applied by the engine.
fn shell_request(
    engine: &Engine,
    shown: &str,
    argv: &[String],
    cwd: &Path,
    a: &ShellReading,
) -> (Request, String) {
    let keys: Vec<Key> = a
        .commands
        .iter()
        .filter(|c| c.passes.is_none())
        .map(|c| Key::new(c.key.clone()).with_known(c.command.known.clone()))
        .collect();
    let id = cordon_approval::audit::new_id().unwrap_or_default(); // empty: the log picks one
    let mut req =
        Request::shell(id, keys).with_args(serde_json::json!({ "argv": argv, "cwd": cwd }));
    for c in &a.commands {
        if let Some(p) = &c.passes {
            req = req.with_passing(cordon_approval::Passing {
                key: Key::new(c.key.clone()).with_known(c.command.known.clone()),
                check: p.check,
                reason: p.reason.clone(),
            });
        }
    }
    // The reading's concerns (an environment assignment, a redirection outside the roots, a
    // line it cannot parse) are not in the keys, so a session grant never covers them.
    for c in &a.concerns {
        req = req.with_concern(concern(c));
    }
    let text = preview(&engine.explain(&req));
    req.presentation = Presentation::new(shown, Preview::Text { text: text.clone() });
    (req, text)
}

/// One line per standing concern, then one per command with the action the evaluator gave its
/// key, each made safe for the terminal here (a newline inside a quoted word must not push the
/// next command out of the box).
fn preview(x: &Explanation) -> String {
    let mut lines: Vec<String> = x
        .concerns
        .iter()
        .map(|c| clean(&format!("{:<9} ! {}", c.action.as_str(), c.reason)))
        .collect();
    for k in &x.keys {
        if matches!(k.verdict.by, By::Tool(cordon_approval::RuleRef::Builtin(_))) && !k.by_default {
            // A key that passed (a wrapper, `cd src`): its command is listed by its own key.
            continue;
        }
        let action = if k.by_default {
            "(default)"
        } else {
            k.verdict.action.as_str()
        };
        lines.push(clean(&format!("{action:<9} {}", k.key)));
    }
    lines.join("\n")
}

/// A concern a tool found, as the engine weighs it.
fn concern(c: &cordon_tools::assess::Concern) -> cordon_approval::Concern {
    cordon_approval::Concern {
        action: c.level.action(),
        reason: c.reason.clone(),
        check: c.check,
        lift: c.lift.clone().map(|(key, option)| (Key::new(key), option)),
    }
}
