//! A stand-in for the model APIs the real CLIs call (Anthropic Messages, OpenAI Responses over
//! ChatGPT's backend), for multicooker's real-CLI suite (`tests/it/real_clis.rs`). Test-only:
//! never published.
//!
//! `mc-standin ca <dir>` writes a test CA (`ca.pem`, `ca.key`) once.
//! `mc-standin serve <ca dir> <record dir>` serves HTTPS on :443 for the vendor hostnames with a
//! certificate from that CA, answers as `<record dir>/script.json` says (re-read on every
//! request, so a test switches scenarios between runs), and appends every request (method,
//! path, headers without secrets, decoded body; each WebSocket frame codex sends as `method:
//! "WEBSOCKET"`) to `<record dir>/requests.jsonl`.

mod anthropic;
mod http;
mod openai;
mod websocket;

use std::io::{self, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

/// The hostnames the stand-in answers for (its certificate's names).
const HOSTS: &[&str] = &[
    "api.anthropic.com",
    "claude.ai",
    "platform.claude.com",
    "console.anthropic.com",
    "chatgpt.com",
    "api.openai.com",
    "auth.openai.com",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["ca", dir] => make_ca(Path::new(dir)),
        ["serve", ca, record] => serve(Path::new(ca), PathBuf::from(record)),
        _ => Err(io::Error::other(
            "usage: mc-standin ca <dir> | mc-standin serve <ca dir> <record dir>",
        )),
    };
    if let Err(error) = result {
        let _ = writeln!(io::stderr(), "mc-standin: {error}");
        std::process::exit(1);
    }
}

/// The test CA's parameters: the same every time, so the CA written once signs later leaves.
fn ca_params() -> io::Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(io::Error::other)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "multicooker real-CLI test CA");
    Ok(params)
}

fn make_ca(dir: &Path) -> io::Result<()> {
    let key = KeyPair::generate().map_err(io::Error::other)?;
    let cert = ca_params()?.self_signed(&key).map_err(io::Error::other)?;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("ca.key"), key.serialize_pem())?;
    std::fs::write(dir.join("ca.pem"), cert.pem())
}

fn tls_config(ca: &Path) -> io::Result<ServerConfig> {
    let ca_key = KeyPair::from_pem(&std::fs::read_to_string(ca.join("ca.key"))?)
        .map_err(io::Error::other)?;
    let issuer = Issuer::new(ca_params()?, ca_key);
    let key = KeyPair::generate().map_err(io::Error::other)?;
    let params = CertificateParams::new(HOSTS.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>())
        .map_err(io::Error::other)?;
    let cert = params.signed_by(&key, &issuer).map_err(io::Error::other)?;
    let chain = vec![CertificateDer::from(cert.der().to_vec())];
    let private =
        PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).map_err(io::Error::other)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(io::Error::other)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// What the tests share with every connection.
struct Shared {
    record: PathBuf,
    lock: Mutex<()>,
}

impl Shared {
    fn script(&self) -> Value {
        std::fs::read_to_string(self.record.join("script.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| json!({}))
    }

    fn log(&self, entry: &Value) {
        let _guard = self.lock.lock();
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.record.join("requests.jsonl"))
        {
            let _ = writeln!(file, "{entry}");
        }
    }
}

fn serve(ca: &Path, record: PathBuf) -> io::Result<()> {
    let config = Arc::new(tls_config(ca)?);
    let shared = Arc::new(Shared {
        record,
        lock: Mutex::new(()),
    });
    let listener = TcpListener::bind("0.0.0.0:443")?;
    shared.log(&json!({"event": "listening"}));
    for stream in listener.incoming().flatten() {
        let config = Arc::clone(&config);
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let Ok(connection) = rustls::ServerConnection::new(config) else {
                return;
            };
            let mut tls = rustls::StreamOwned::new(connection, stream);
            let _ = http::handle(&mut tls, &shared);
        });
    }
    Ok(())
}

/// Routes one request: (status, headers, body) or an SSE stream.
fn route(request: &http::Request, shared: &Shared) -> http::Reply {
    let script = shared.script();
    let path = request.path.split('?').next().unwrap_or_default();
    if request.host.ends_with("anthropic.com")
        || request.host.ends_with("claude.ai")
        || request.host.ends_with("claude.com")
    {
        return anthropic::route(request, path, &script);
    }
    openai::route(request, path, &script)
}
