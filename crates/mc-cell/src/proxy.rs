//! The egress proxy: `mc-cell proxy --listen ADDR --allow HOST:PORT[,HOST:PORT…]`.
//!
//! One runs beside each cell whose network mode is `allowlist`; it is the cell's only way out.
//! It speaks HTTP `CONNECT` only, allows exactly the listed `host:port` pairs (lower-case, IP
//! literals only when listed), resolves names itself, and refuses loopback, link-local
//! (cloud metadata), unspecified, multicast and, unless `--allow-private`, RFC 1918 and other
//! private addresses after resolution, so DNS tricks cannot point an allowed name inward.
//! Every decision is logged as one line on stdout: `allow|deny <client> CONNECT <target>: <why>`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

/// Longest request head accepted.
const MAX_HEAD: usize = 8 << 10;

/// The proxy's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where to listen.
    pub listen: String,
    /// Allowed `host:port` targets, lower-case.
    pub allow: Vec<String>,
    /// Allow private (RFC 1918, unique-local) upstream addresses.
    pub allow_private: bool,
}

/// Parses `--listen`, `--allow` (repeatable, comma-separated) and `--allow-private`.
pub fn parse_args(args: &[String]) -> Result<Config, String> {
    let mut config = Config {
        listen: "0.0.0.0:3128".into(),
        allow: Vec::new(),
        allow_private: false,
    };
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--listen" => config.listen = iter.next().ok_or("--listen needs ADDR")?.clone(),
            "--allow" => {
                let list = iter.next().ok_or("--allow needs HOST:PORT")?;
                for target in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    config.allow.push(
                        normalize(target)
                            .ok_or_else(|| format!("bad --allow target `{target}`"))?,
                    );
                }
            }
            "--allow-private" => config.allow_private = true,
            other => return Err(format!("unknown proxy argument `{other}`")),
        }
    }
    Ok(config)
}

/// `host:port` in lower case, with a valid port.
fn normalize(target: &str) -> Option<String> {
    let (host, port) = target.rsplit_once(':')?;
    let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if host.is_empty() || host.contains(['/', ' ', '@']) {
        return None;
    }
    Some(format!("{host}:{port}"))
}

/// Why an upstream address is refused, if it is.
pub fn refused_address(ip: IpAddr, allow_private: bool) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback address")
            } else if v4.is_link_local() {
                Some("link-local address (cloud metadata)")
            } else if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || o[0] == 0 {
                Some("non-routable address")
            } else if o[0] == 100 && (64..128).contains(&o[1]) {
                Some("shared address space")
            } else if v4.is_private() && !allow_private {
                Some("private address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if let Some(v4) = v6.to_ipv4_mapped() {
                refused_address(IpAddr::V4(v4), allow_private)
            } else if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
                Some("non-routable address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local address")
            } else if first & 0xfe00 == 0xfc00 && !allow_private {
                Some("private address")
            } else {
                None
            }
        }
    }
}

/// The decision on a request line, before any connection is made.
pub fn decide(request_line: &str, config: &Config) -> Result<String, (u16, String)> {
    let parts: Vec<&str> = request_line.split_whitespace().collect();
    let [method, target, version] = parts.as_slice() else {
        return Err((400, "malformed request line".into()));
    };
    if !version.starts_with("HTTP/1.") {
        return Err((400, "not HTTP/1.x".into()));
    }
    if *method != "CONNECT" {
        return Err((405, format!("{method} is not allowed (CONNECT only)")));
    }
    let target = normalize(target).ok_or((400, format!("bad target `{target}`")))?;
    if config.allow.contains(&target) {
        Ok(target)
    } else {
        Err((403, format!("{target} is not in the allowlist")))
    }
}

/// Resolves an allowed target and connects to the first acceptable address.
fn connect_upstream(target: &str, config: &Config) -> Result<TcpStream, (u16, String)> {
    let addresses: Vec<SocketAddr> = target
        .to_socket_addrs()
        .map_err(|e| (502, format!("cannot resolve {target}: {e}")))?
        .collect();
    let mut last = format!("{target} resolved to nothing");
    for address in addresses {
        if let Some(why) = refused_address(address.ip(), config.allow_private) {
            last = format!("{target} resolved to {} ({why})", address.ip());
            continue;
        }
        match TcpStream::connect_timeout(&address, Duration::from_secs(10)) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("cannot connect to {address}: {e}"),
        }
    }
    Err((502, last))
}

fn respond(client: &mut TcpStream, code: u16) {
    let reason = match code {
        200 => "Connection established",
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        _ => "Bad Gateway",
    };
    let _ = write!(
        client,
        "HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}

/// Reads the request head (bounded), returning the request line and any bytes after the head.
fn read_head(client: &TcpStream) -> Result<(String, Vec<u8>), String> {
    let mut reader = BufReader::new(
        client
            .try_clone()
            .map_err(|e| e.to_string())?
            .take(MAX_HEAD as u64),
    );
    let mut request_line = String::new();
    reader
        .read_line(&mut request_line)
        .map_err(|e| e.to_string())?;
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("request head too long or cut short".into());
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
    }
    Ok((request_line.trim_end().to_owned(), reader.buffer().to_vec()))
}

fn handle(mut client: TcpStream, config: &Config) {
    let peer = client
        .peer_addr()
        .map_or_else(|_| "?".into(), |a| a.to_string());
    let _ = client.set_read_timeout(Some(Duration::from_secs(10)));
    let (line, early) = match read_head(&client) {
        Ok(head) => head,
        Err(why) => {
            println!("deny {peer} (no request): {why}");
            return respond(&mut client, 400);
        }
    };
    let upstream = decide(&line, config)
        .and_then(|target| connect_upstream(&target, config).map(|s| (target, s)));
    let (target, upstream) = match upstream {
        Ok(pair) => pair,
        Err((code, why)) => {
            println!("deny {peer} {line}: {why}");
            return respond(&mut client, code);
        }
    };
    println!("allow {peer} CONNECT {target}");
    respond_ok(&mut client);
    tunnel(client, upstream, &early);
}

fn respond_ok(client: &mut TcpStream) {
    let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
}

/// Copies bytes both ways until either side closes.
fn tunnel(client: TcpStream, mut upstream: TcpStream, early: &[u8]) {
    let _ = client.set_read_timeout(None);
    let _ = upstream.write_all(early);
    let (Ok(mut client_read), Ok(mut upstream_read)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let mut client_write = client;
    let back = std::thread::spawn(move || {
        let _ = std::io::copy(&mut upstream_read, &mut client_write);
        let _ = client_write.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut client_read, &mut upstream);
    let _ = upstream.shutdown(Shutdown::Write);
    let _ = back.join();
}

/// Entry point of `mc-cell proxy`.
pub fn run(args: &[String]) -> ExitCode {
    let config = match parse_args(args) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("mc-cell proxy: {error}");
            return ExitCode::from(2);
        }
    };
    let listener = match TcpListener::bind(&config.listen) {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("mc-cell proxy: cannot listen on {}: {error}", config.listen);
            return ExitCode::from(1);
        }
    };
    println!(
        "listening on {} allow [{}]",
        config.listen,
        config.allow.join(", ")
    );
    let _ = std::io::stdout().flush();
    for client in listener.incoming().flatten() {
        let config = config.clone();
        std::thread::spawn(move || handle(client, &config));
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allow: &[&str]) -> Config {
        Config {
            listen: "127.0.0.1:0".into(),
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            allow_private: false,
        }
    }

    #[test]
    fn only_listed_connect_targets_pass() {
        let config = config(&["api.example.com:443"]);
        assert_eq!(
            decide("CONNECT API.example.com:443 HTTP/1.1", &config),
            Ok("api.example.com:443".into())
        );
        assert_eq!(
            decide("CONNECT api.example.com:80 HTTP/1.1", &config)
                .unwrap_err()
                .0,
            403
        );
        assert_eq!(
            decide("CONNECT 93.184.216.34:443 HTTP/1.1", &config)
                .unwrap_err()
                .0,
            403
        );
        assert_eq!(
            decide("GET http://api.example.com/ HTTP/1.1", &config)
                .unwrap_err()
                .0,
            405
        );
        assert_eq!(
            decide("CONNECT api.example.com:443", &config)
                .unwrap_err()
                .0,
            400
        );
    }

    #[test]
    fn inward_addresses_are_refused_after_resolution() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            refused_address(ip("169.254.169.254"), true),
            Some("link-local address (cloud metadata)")
        );
        assert_eq!(
            refused_address(ip("127.0.0.1"), true),
            Some("loopback address")
        );
        assert_eq!(
            refused_address(ip("10.213.0.2"), false),
            Some("private address")
        );
        assert_eq!(refused_address(ip("10.213.0.2"), true), None);
        assert_eq!(
            refused_address(ip("::ffff:169.254.169.254"), true),
            Some("link-local address (cloud metadata)")
        );
        assert_eq!(
            refused_address(ip("fd00::1"), false),
            Some("private address")
        );
        assert_eq!(refused_address(ip("1.1.1.1"), false), None);
    }

    #[test]
    fn arguments_are_checked() {
        let args: Vec<String> = ["--allow", "a.com:443, B.com:8080", "--allow-private"]
            .map(String::from)
            .to_vec();
        let config = parse_args(&args).unwrap();
        assert_eq!(config.allow, ["a.com:443", "b.com:8080"]);
        assert!(config.allow_private);
        assert!(parse_args(&["--allow".into(), "nope".into()]).is_err());
    }

    #[test]
    fn a_tunnel_carries_bytes_and_a_denied_target_gets_403() {
        let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream_port = upstream.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = upstream.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&buf).unwrap();
        });
        let mut config = config(&[&format!("localhost:{upstream_port}")]);
        config.allow_private = true;
        let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy_addr = proxy.local_addr().unwrap();
        std::thread::spawn(move || {
            for client in proxy.incoming().flatten() {
                let config = config.clone();
                std::thread::spawn(move || handle(client, &config));
            }
        });
        // Loopback upstreams are refused even when private ones are allowed.
        let mut client = TcpStream::connect(proxy_addr).unwrap();
        write!(
            client,
            "CONNECT localhost:{upstream_port} HTTP/1.1\r\n\r\nhello"
        )
        .unwrap();
        let mut reply = String::new();
        client.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
        let mut client = TcpStream::connect(proxy_addr).unwrap();
        write!(client, "CONNECT elsewhere.com:443 HTTP/1.1\r\n\r\n").unwrap();
        let mut reply = String::new();
        client.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    }
}
