//! codex's preferred transport: the Responses API over a WebSocket upgrade of
//! `/backend-api/codex/responses` (OpenAI's Responses WebSocket mode). codex sends each request
//! as one JSON text frame (`{"type": "response.create", …}`, the `POST` body's fields) and reads
//! one event JSON per text frame back, the same events the SSE path sends, until
//! `response.completed`; the connection stays open for the next request of the session. A
//! refusal is one `{"type": "error", "status": …, "error": …, "headers": …}` frame, which codex
//! treats as that HTTP status.
//!
//! Every frame codex sends is recorded like a request (`method: "WEBSOCKET"`), so a test can tell
//! which transport a session used and that it did not fall back to `POST`.

use std::io::{self, Read, Write};

use serde_json::{Map, Value, json};
use tungstenite::protocol::Role;
use tungstenite::{Message, WebSocket};

use super::Shared;
use super::http::Request;
use super::openai;

/// Completes the upgrade (`101`) and serves the session until codex closes it.
pub(crate) fn serve<S: Read + Write>(
    stream: &mut S,
    request: &Request,
    shared: &Shared,
) -> io::Result<()> {
    let key = request
        .header("sec-websocket-key")
        .ok_or_else(|| io::Error::other("a WebSocket upgrade without `sec-websocket-key`"))?;
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    write!(
        stream,
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: {accept}\r\n\r\n"
    )?;
    stream.flush()?;
    let mut socket = WebSocket::from_raw_socket(stream, Role::Server, None);
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                for event in answer(text.as_str(), request, shared) {
                    socket
                        .send(Message::text(event.to_string()))
                        .map_err(io::Error::other)?;
                }
            }
            Ok(Message::Close(_)) | Err(_) => return Ok(()),
            // Pings are answered by tungstenite itself; nothing else is expected.
            Ok(_) => {}
        }
    }
}

/// The events answering one request frame, recorded with it.
fn answer(text: &str, request: &Request, shared: &Shared) -> Vec<Value> {
    let body: Value = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()));
    let script = shared.script();
    let (events, status, usage) = if let Some(refused) = openai::refusal(&script) {
        let headers: Map<String, Value> = refused
            .headers
            .into_iter()
            .map(|(n, v)| (n.to_owned(), Value::String(v.to_owned())))
            .collect();
        let event = json!({"type": "error", "status": refused.status,
                           "error": refused.body["error"], "headers": headers});
        (vec![event], refused.status, Value::Null)
    } else {
        let (events, usage) = openai::turn(&body, &script);
        (events.into_iter().map(|(_, e)| e).collect(), 200, usage)
    };
    shared.log(&json!({
        "method": "WEBSOCKET",
        "host": request.host,
        "path": request.path,
        "body": body,
        "status": status,
        "sent_usage": usage,
    }));
    events
}
