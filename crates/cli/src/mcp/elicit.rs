//! Asking the person behind the MCP client: an `elicitation/create` request (protocol
//! 2025-11-25, form mode) whose form offers *once*, *this session* or *deny*. From protocol
//! 2026-07-28 on, where a server sends no requests of its own, the same form goes out in an
//! input-required result and comes back with the client's retry of the call ([`Preset`]).
//!
//! Only an accepted form with one of those three values approves anything. A decline is a
//! deny; a cancel (the person dismissed the dialog), a malformed answer or a failed request is
//! a lost channel, which the engine denies too. The engine bounds the wait with the policy's
//! approval timeout.

use std::time::{Duration, Instant};

use cordon_approval::{Answer, AskError, Asker, AsyncAsker, Pending, Request};
use cordon_gate::clean;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer};
use serde_json::{json, Value};

/// The form's single field and its values.
const FIELD: &str = "decision";
const ONCE: &str = "once";
const SESSION: &str = "session";
const DENY: &str = "deny";

/// The form the client shows: one required choice; "for this session" only where such an
/// answer is remembered (`session`; not for a write on the persistence surface, which asks for
/// each write: [`cordon_approval::remembers`]).
pub fn schema(session: bool) -> Result<ElicitationSchema, serde_json::Error> {
    let mut choices = vec![json!({"const": ONCE, "title": "Allow once"})];
    if session {
        choices.push(json!({"const": SESSION, "title": "Allow for this session"}));
    }
    choices.push(json!({"const": DENY, "title": "Deny"}));
    serde_json::from_value(json!({
        "type": "object",
        "properties": {
            FIELD: {
                "type": "string",
                "title": "Allow this call?",
                "oneOf": choices,
            },
        },
        "required": [FIELD],
    }))
}

/// What an accepted form says; anything else is no answer.
pub fn answer(content: Option<&Value>) -> Result<Answer, AskError> {
    match content.and_then(|c| c.get(FIELD)).and_then(Value::as_str) {
        Some(ONCE) => Ok(Answer::Once),
        Some(SESSION) => Ok(Answer::Session),
        Some(DENY) => Ok(Answer::Deny),
        _ => Err(AskError::Lost(format!(
            "the client's approval form came back without a valid `{FIELD}` ({ONCE}, {SESSION} or {DENY})"
        ))),
    }
}

/// The message the person reads: cordon's own words first, then the call's preview, which
/// holds what the agent wrote (a file's content, a command's words) and so comes last: text
/// in it that reads like cordon's (`Why you are asked: a plain note`) cannot stand where
/// cordon's reason is read, nor push it out of the form.
pub fn message(tool: &str, preview: &str, why: &str) -> String {
    format!(
        "cordon: the agent wants to run a `{}` call that needs your approval.\n\nWhy you are asked: {}\n\nThe call:\n{}",
        clean(tool),
        clean(why),
        clean_lines(preview)
    )
}

/// The message for a connection a command opens while it runs.
fn connection_message(summary: &str, preview: &str, why: &str) -> String {
    format!(
        "cordon: a command the agent runs wants to {}, which needs your approval.\n\nWhy you are asked: {}\n\nThe connection:\n{}",
        clean(summary),
        clean(why),
        clean_lines(preview)
    )
}

/// `text` escaped line by line: the client shows the message, often on a terminal, so what
/// the call, a rule or a tool put in it is escaped as in cordon's own box; its line breaks
/// stay (the preview is one line per command).
fn clean_lines(text: &str) -> String {
    text.lines().map(clean).collect::<Vec<_>>().join("\n")
}

/// The form request (its message and schema; `session`: see [`schema`]).
pub fn params(message: String, session: bool) -> Result<ElicitRequestParams, AskError> {
    let requested_schema =
        schema(session).map_err(|e| AskError::Lost(format!("approval form: {e}")))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    })
}

/// What the client's elicitation result means.
pub fn result(r: &ElicitResult) -> Result<Answer, AskError> {
    match r.action {
        ElicitationAction::Accept => answer(r.content.as_ref()),
        ElicitationAction::Decline => Ok(Answer::Deny),
        ElicitationAction::Cancel => Err(AskError::Lost(
            "the person dismissed the approval request".into(),
        )),
        // A later protocol's action cordon does not know: no answer.
        _ => Err(AskError::Lost(
            "the client answered the approval request with an unknown action".into(),
        )),
    }
}

/// An answer that came with the call (2026-07-28: the client's retry carries the person's
/// answer to the input-required result), or none: then an ask cannot be asked. With the form's
/// text the person answered (and the call's preview), the answer is given only to an ask whose
/// form reads the same: the retry is decided afresh, and an ask about something else (the
/// call changed between the form and the retry) was never put to the person.
pub struct Preset(
    pub Option<Result<Answer, AskError>>,
    /// The form's text the answer is to, and the call's preview now.
    pub Option<(String, String)>,
);

impl Preset {
    /// `answer`, given only to an ask whose form is `shown` for a call previewed as `preview`.
    pub fn shown(answer: Result<Answer, AskError>, shown: String, preview: &str) -> Preset {
        Preset(Some(answer), Some((shown, preview.to_string())))
    }
}

impl AsyncAsker for Preset {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
    ) -> impl std::future::Future<Output = Result<Answer, AskError>> + Send {
        let answer = match (self.0.take(), &self.1) {
            (Some(_), Some((shown, preview)))
                if *shown != message(&request.tool, preview, &pending.reason) =>
            {
                Err(AskError::Lost(
                    "the call changed after the person was asked; it was not approved".into(),
                ))
            }
            (Some(answer), _) => answer,
            (None, _) => Err(AskError::Lost(
                "the call needed an approval the client was not asked for".into(),
            )),
        };
        std::future::ready(answer)
    }
}

/// Resolves when the client cancels the call (`notifications/cancelled`).
pub type Cancelled = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The gate's asker for one tool call of an MCP session.
pub struct Elicit {
    peer: Peer<RoleServer>,
    /// What the person is shown: the call's preview (parsed commands, a diff).
    preview: String,
    /// The call's cancel: the form is given up when it comes (taken by the one ask).
    cancelled: Option<Cancelled>,
}

impl Elicit {
    pub fn new(peer: Peer<RoleServer>, preview: String, cancelled: Cancelled) -> Elicit {
        Elicit {
            peer,
            preview,
            cancelled: Some(cancelled),
        }
    }
}

/// Sends a form and waits for its answer. Dropped before the answer (the call cancelled, the
/// approval timeout, the run ended), it withdraws the form: MCP's `notifications/cancelled`
/// for the form's own request, so the client closes it and sends no answer (rmcp: the
/// handler's request token; the TypeScript SDK: its abort signal). Dropping rmcp's request
/// future sends nothing: the form stayed open (round 11 of issue 21).
async fn form(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
) -> Result<ElicitResult, AskError> {
    let failed = |e: rmcp::ServiceError| {
        AskError::Lost(format!("the client's approval request failed: {e}"))
    };
    let handle = peer
        .send_cancellable_request(
            ServerRequest::ElicitRequest(ElicitRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .map_err(failed)?;
    let mut open = Withdraw(peer.clone(), Some(handle.id.clone()));
    let r = handle.await_response().await;
    open.1 = None;
    match r.map_err(failed)? {
        ClientResult::ElicitResult(r) => Ok(r),
        _ => Err(AskError::Lost(
            "the client answered the approval request with something else than a form's answer"
                .into(),
        )),
    }
}

/// A form sent and not answered yet: withdrawn when dropped so.
struct Withdraw(Peer<RoleServer>, Option<rmcp::model::RequestId>);

impl Drop for Withdraw {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.1.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        let peer = self.0.clone();
        runtime.spawn(async move {
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id),
                    Some(WITHDRAWN.into()),
                ))
                .await;
        });
    }
}

/// Why cordon withdrew a form (`notifications/cancelled`).
pub const WITHDRAWN: &str =
    "cordon: the question ended without an answer (the call was cancelled, the approval timeout passed, or the command ended)";

/// Why an ask ended when the client cancelled its call.
pub const CANCELLED: &str =
    "the client cancelled the call (notifications/cancelled) before it was answered";

impl AsyncAsker for Elicit {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
    ) -> impl std::future::Future<Output = Result<Answer, AskError>> + Send {
        let peer = self.peer.clone();
        let message = message(&request.tool, &self.preview, &pending.reason);
        let session = cordon_approval::remembers(request);
        let cancelled = self.cancelled.take();
        async move {
            let params = params(message, session)?;
            let asking = form(&peer, params);
            // A call the client gave up is decided now (denied, and recorded so), not when
            // the approval timeout passes, and no later answer to its form runs it (its form
            // is withdrawn as `asking` is dropped).
            let r = match cancelled {
                Some(cancelled) => tokio::select! {
                    r = asking => r,
                    () = cancelled => return Err(AskError::Lost(CANCELLED.into())),
                },
                None => asking.await,
            };
            result(&r?)
        }
    }
}

/// The form for a connection a command of the agent's opens while it runs
/// (`sandbox.network = "proxy"`, `[network] default = "ask"`). The gate asks from one of its
/// deciding threads, outside the session's runtime: the request goes out on the runtime, and
/// the thread waits for the answer, the deadline, or the end of the run (the question is
/// then withdrawn: the request is dropped and the connection denied).
pub struct ConnectionElicit {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
}

impl ConnectionElicit {
    pub fn new(peer: Peer<RoleServer>, runtime: tokio::runtime::Handle) -> ConnectionElicit {
        ConnectionElicit { peer, runtime }
    }
}

impl Asker for ConnectionElicit {
    fn ask(
        &mut self,
        request: &Request,
        pending: &Pending,
        deadline: Instant,
    ) -> Result<Answer, AskError> {
        self.ask_withdrawable(request, pending, deadline, &|| false)
    }

    fn ask_withdrawable(
        &mut self,
        request: &Request,
        pending: &Pending,
        deadline: Instant,
        withdrawn: &dyn Fn() -> bool,
    ) -> Result<Answer, AskError> {
        let message = connection_message(
            &request.presentation.summary,
            &request.presentation.preview.to_string(),
            &pending.reason,
        );
        let params = params(message, true)?;
        let peer = self.peer.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let asking = self.runtime.spawn(async move {
            // Aborted (the command ended, the deadline passed), the form is dropped, which
            // withdraws it.
            let _ = tx.send(form(&peer, params).await);
        });
        let gave_up = |e: AskError| {
            asking.abort();
            Err(e)
        };
        loop {
            if withdrawn() {
                return gave_up(AskError::Lost("the command ended before an answer".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return gave_up(AskError::TimedOut);
            }
            match rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(Ok(r)) => return result(&r),
                Ok(Err(e)) => return Err(e),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(AskError::Lost(
                        "the approval request ended without an answer".into(),
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_three_choices_answer() {
        assert_eq!(answer(Some(&json!({"decision": "once"}))), Ok(Answer::Once));
        assert_eq!(
            answer(Some(&json!({"decision": "session"}))),
            Ok(Answer::Session)
        );
        assert_eq!(answer(Some(&json!({"decision": "deny"}))), Ok(Answer::Deny));
        for bad in [
            None,
            Some(json!({})),
            Some(json!({"decision": "always"})),
            Some(json!({"decision": true})),
            Some(json!("once")),
        ] {
            assert!(answer(bad.as_ref()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_form_is_a_valid_elicitation_schema() {
        let s = serde_json::to_value(schema(true).unwrap()).unwrap();
        assert_eq!(s["required"], json!(["decision"]));
        assert_eq!(s["properties"]["decision"]["oneOf"][2]["const"], "deny");
    }

    /// The form's text is shown by the client, often in a terminal: every part of it is
    /// escaped as cordon's own box is (a rule's reason with an ANSI sequence, a tool name or a
    /// summary with a bidirectional override or a lookalike letter was written raw before).
    #[test]
    fn what_the_form_shows_is_escaped() {
        let hostile = "\u{1b}[8mx\u{202e}y\u{441}url\u{200b}\u{85}";
        let m = message(hostile, &format!("a\n{hostile}"), hostile);
        let c = connection_message(hostile, hostile, hostile);
        for m in [m, c] {
            for raw in ['\u{1b}', '\u{202e}', '\u{441}', '\u{200b}', '\u{85}'] {
                assert!(!m.contains(raw), "U+{:04X} raw in {m:?}", raw as u32);
            }
            assert!(m.contains("\\u{202e}"), "{m:?}");
            // The preview's own lines stay lines.
            assert!(m.contains('\n'), "{m:?}");
        }
    }
}
