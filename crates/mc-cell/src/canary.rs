//! The egress canary: `mc-cell canary --proxy HOST:PORT [--allowed HOST:PORT] --denied HOST:PORT
//! --direct IP:PORT`, run from inside a cell's network before the cell's clock starts. It proves
//! that the proxy refuses a host that is not allowed, lets an allowed one through, and that
//! nothing gets out without the proxy. Prints one JSON line; exits 0 only if every check passed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

use crate::json::Json;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The status code the proxy answers to `CONNECT target`.
fn connect_status(proxy: &str, target: &str) -> Result<u16, String> {
    let address = proxy
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve proxy {proxy}: {e}"))?
        .next()
        .ok_or("no proxy address")?;
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))
        .map_err(|e| format!("cannot reach proxy: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut head = [0u8; 12];
    stream
        .read_exact(&mut head)
        .map_err(|e| format!("no answer from proxy: {e}"))?;
    let text = String::from_utf8_lossy(&head);
    text.get(9..12)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("odd answer `{text}`"))
}

/// True when a direct TCP connection fails (as it must without the proxy).
fn direct_blocked(target: &str) -> (bool, String) {
    let Ok(address) = target.parse::<SocketAddr>() else {
        return (false, format!("bad address {target}"));
    };
    match TcpStream::connect_timeout(&address, Duration::from_secs(2)) {
        Ok(_) => (false, format!("connected directly to {target}")),
        Err(e) => (true, e.to_string()),
    }
}

/// Entry point of `mc-cell canary`.
pub fn run(args: &[String]) -> ExitCode {
    let (Some(proxy), Some(denied), Some(direct)) = (
        arg(args, "--proxy"),
        arg(args, "--denied"),
        arg(args, "--direct"),
    ) else {
        eprintln!(
            "usage: mc-cell canary --proxy HOST:PORT [--allowed HOST:PORT] --denied HOST:PORT --direct IP:PORT"
        );
        return ExitCode::from(2);
    };
    let mut checks = Vec::new();
    let mut passed = true;
    let denied_result = connect_status(&proxy, &denied);
    let ok = denied_result == Ok(403);
    passed &= ok;
    checks.push(("denied_refused", ok, format!("{denied}: {denied_result:?}")));
    if let Some(allowed) = arg(args, "--allowed") {
        let result = connect_status(&proxy, &allowed);
        let ok = result == Ok(200);
        passed &= ok;
        checks.push(("allowed_reachable", ok, format!("{allowed}: {result:?}")));
    }
    let (ok, detail) = direct_blocked(&direct);
    passed &= ok;
    checks.push(("direct_blocked", ok, format!("{direct}: {detail}")));
    let mut fields = vec![("passed".to_owned(), Json::Bool(passed))];
    for (name, ok, detail) in checks {
        fields.push((
            name.to_owned(),
            Json::Object(vec![
                ("ok".into(), Json::Bool(ok)),
                ("detail".into(), Json::Str(detail)),
            ]),
        ));
    }
    let line = Json::Object(fields).pretty().replace('\n', " ");
    println!("MULTICOOKER-CANARY {}", line.trim());
    let _ = std::io::stdout().flush();
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
