//! Just enough HTTP/1.1 for the CLIs: one request per connection (`Connection: close`), bodies by
//! Content-Length or chunked, zstd request bodies decoded, replies written whole; a `101` reply
//! hands the connection to the WebSocket session (`websocket.rs`).

use std::io::{self, BufRead, BufReader, Read, Write};

use serde_json::{Value, json};

use super::Shared;

/// One request.
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) host: String,
    pub(crate) headers: Vec<(String, String)>,
    /// Decoded body.
    pub(crate) body: Vec<u8>,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The bearer token, if any.
    pub(crate) fn token(&self) -> Option<&str> {
        self.header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .or_else(|| self.header("x-api-key"))
    }
}

/// A whole reply.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub(crate) fn sse(events: &[(&str, Value)]) -> Self {
        let mut body = String::new();
        for (event, data) in events {
            body.push_str(&format!("event: {event}\ndata: {data}\n\n"));
        }
        Self {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: body.into_bytes(),
        }
    }

    /// Accepts a WebSocket upgrade: `handle` completes the handshake and serves the session.
    pub(crate) fn switching() -> Self {
        Self {
            status: 101,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    #[must_use]
    pub(crate) fn with(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "x-api-key",
    "cookie",
    "proxy-authorization",
];

pub(crate) fn handle<S: Read + Write>(stream: &mut S, shared: &Shared) -> io::Result<()> {
    let request = {
        let mut reader = BufReader::new(&mut *stream);
        read_request(&mut reader)?
    };
    let reply = super::route(&request, shared);
    let headers: serde_json::Map<String, Value> = request
        .headers
        .iter()
        .map(|(n, v)| {
            let lower = n.to_ascii_lowercase();
            let value = if SECRET_HEADERS.contains(&lower.as_str()) {
                let tail: String = v
                    .chars()
                    .rev()
                    .take(4)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                format!("<redacted …{tail}>")
            } else {
                v.clone()
            };
            (lower, Value::String(value))
        })
        .collect();
    let body = match serde_json::from_slice::<Value>(&request.body) {
        Ok(value) => value,
        Err(_) => Value::String(String::from_utf8_lossy(&request.body).into_owned()),
    };
    shared.log(&json!({
        "method": request.method,
        "host": request.host,
        "path": request.path,
        "headers": headers,
        "body": body,
        "status": reply.status,
        "sent_usage": reply
            .headers
            .iter()
            .find(|(n, _)| n == "x-standin-usage")
            .and_then(|(_, v)| serde_json::from_str::<Value>(v).ok()),
    }));
    if reply.status == 101 {
        return super::websocket::serve(stream, &request, shared);
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        reply.body.len()
    ));
    stream.write_all(head.as_bytes())?;
    stream.write_all(&reply.body)?;
    stream.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Status",
    }
}

fn read_request<R: BufRead>(reader: &mut R) -> io::Result<Request> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _): &&(String, String)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut raw = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(io::Error::other)?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(length) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        raw.resize(length, 0);
        reader.read_exact(&mut raw)?;
    }
    let body = if find("content-encoding").is_some_and(|v| v.contains("zstd")) {
        let mut decoded = Vec::new();
        ruzstd::decoding::StreamingDecoder::new(raw.as_slice())
            .map_err(io::Error::other)?
            .read_to_end(&mut decoded)?;
        decoded
    } else {
        raw
    };
    let host = find("host")
        .unwrap_or_default()
        .split(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    Ok(Request {
        method,
        path,
        host,
        headers,
        body,
    })
}

/// A fresh id for every reply, shaped like the real APIs' (`msg_01…`, `resp_…`): the real ones
/// never repeat, and a fixed one hid a double count in claude's live meter (issue 25), which
/// keys its per-message tokens on the message id.
pub(crate) fn fresh_id(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut value = (nanos << 32) | u128::from(NEXT.fetch_add(1, Ordering::Relaxed));
    let mut text = Vec::with_capacity(22);
    for _ in 0..22 {
        text.push(DIGITS[usize::try_from(value % 62).unwrap_or(0)]);
        value /= 62;
    }
    text.reverse();
    format!("{prefix}{}", String::from_utf8_lossy(&text))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_fresh_and_shaped_like_the_real_ones() {
        let ids: std::collections::BTreeSet<String> =
            (0..1000).map(|_| super::fresh_id("msg_01")).collect();
        assert_eq!(ids.len(), 1000, "every id is new");
        assert!(
            ids.iter()
                .all(|id| id.len() == 28 && id[6..].bytes().all(|b| b.is_ascii_alphanumeric())),
            "{ids:?}"
        );
    }
}
