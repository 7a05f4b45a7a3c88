//! A request inside a tunnel whose TLS cordon's proxy terminates, as a call the engine
//! decides: tool `http`, key `["http", METHOD, "HOST:PORT/PATH"]` (`[[network.requests]]`).
//!
//! The one place the approval request for it is built ([`Gate::http_request`]): the
//! proxy's deciding threads and `cordon check network METHOD URL` both come here.

use cordon_approval::{audit, Key, Request};
use cordon_policy::requests::{request_key, HTTP_TOOL};
use cordon_tools::tool::{Assessment, Presentation, Preview};

use crate::{Call, Error, Gate, What, EXIT_DENIED};

impl Gate {
    /// A request call: `method` on `host:port` (normalised), `path` with or without its query
    /// (left out of the key). What is not a host and port is refused (126).
    pub fn http_request(
        &self,
        method: &str,
        host: &str,
        port: u16,
        path: &str,
    ) -> Result<Call, Error> {
        let target = cordon_policy::network::Target::new(host, port)
            .map_err(|e| Error::new(EXIT_DENIED, format!("http: {e}")))?;
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(Error::new(
                EXIT_DENIED,
                format!("http: `{}` is not an HTTP method", crate::clean(method)),
            ));
        }
        let keys = request_key(method, &target, path);
        let shown = format!("{} https://{}", keys[1], keys[2]);
        let a = Assessment::new(
            HTTP_TOOL,
            serde_json::json!({ "method": keys[1], "url": format!("https://{}", keys[2]) }),
            keys.clone(),
        )
        .with_presentation(Presentation {
            summary: shown.clone(),
            preview: Preview::Text {
                text: format!("an HTTPS request through cordon's proxy: {shown}"),
            },
            full: None,
        });
        let id = audit::new_id().unwrap_or_default();
        let request = Request::new(id, a.tool.clone(), vec![Key::new(a.keys.clone())])
            .with_presentation(a.presentation.clone())
            .with_args(a.args.clone());
        Ok(Call {
            request,
            shown,
            preview: a.presentation.preview.to_string(),
            what: What::File(Box::new(a)),
        })
    }
}
