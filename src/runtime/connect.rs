//! Which engine to talk to, read from the standard Docker environment the way the docker CLI
//! reads it: `DOCKER_HOST` (`unix://`, `tcp://`, `http://`, `https://`; default the local
//! socket), `DOCKER_TLS_VERIFY` (any non-empty value: TLS, verified against the engine's CA)
//! and `DOCKER_CERT_PATH` (`ca.pem`, `cert.pem`, `key.pem`; default `~/.docker`).
//!
//! This module only connects and negotiates the API version; it never runs an engine
//! operation. A setting it cannot honour is an error naming the variable and the fix, never a
//! silent fall-back to the local socket (issue 17: `DOCKER_HOST=tcp://…` used to be ignored).

use std::fmt;
use std::path::PathBuf;

use bollard::{API_DEFAULT_VERSION, ClientVersion, Docker};

use super::RuntimeError;

/// The engine's socket when `DOCKER_HOST` is unset.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";
/// Seconds a request to the engine may take (bollard's default).
const TIMEOUT_S: u64 = 120;

/// The Docker variables of the environment, as the settings read them once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DockerEnv {
    /// `DOCKER_HOST`, if set and not empty.
    pub host: Option<String>,
    /// `DOCKER_TLS_VERIFY` is set and not empty.
    pub tls_verify: bool,
    /// `DOCKER_CERT_PATH`, if set and not empty.
    pub cert_path: Option<PathBuf>,
    /// `HOME`, for the default certificate folder `~/.docker`.
    pub home: Option<PathBuf>,
}

/// Where the engine listens, and how to talk to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket.
    Unix {
        /// The socket's path.
        socket: PathBuf,
    },
    /// Plain HTTP over TCP (`host:port`).
    Tcp {
        /// `host:port`.
        address: String,
    },
    /// TLS over TCP, verified against `ca.pem`, with the client certificate `cert.pem` and key
    /// `key.pem` of `certs`.
    Tls {
        /// `host:port`.
        address: String,
        /// The folder holding `ca.pem`, `cert.pem` and `key.pem`.
        certs: PathBuf,
    },
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unix { socket } => write!(f, "unix://{}", socket.display()),
            Self::Tcp { address } => write!(f, "tcp://{address}"),
            Self::Tls { address, certs } => write!(
                f,
                "tcp://{address} (TLS, certificates in `{}`)",
                certs.display()
            ),
        }
    }
}

/// The certificate files a TLS endpoint needs, in the order bollard takes them.
const TLS_FILES: [&str; 3] = ["key.pem", "cert.pem", "ca.pem"];

impl Endpoint {
    /// The endpoint the environment names. The error is one sentence naming the variable and
    /// the fix.
    pub fn from_env(env: &DockerEnv) -> Result<Self, String> {
        let Some(host) = env.host.as_deref() else {
            return Ok(Self::Unix {
                socket: PathBuf::from(DEFAULT_SOCKET),
            });
        };
        let (scheme, rest) = host.split_once("://").unwrap_or(("", host));
        let tls = match scheme {
            "unix" if !rest.is_empty() => {
                return Ok(Self::Unix {
                    socket: PathBuf::from(rest),
                });
            }
            "tcp" | "http" => env.tls_verify,
            "https" => true,
            "ssh" => {
                return Err(format!(
                    "DOCKER_HOST `{host}`: ssh:// is not supported; forward the engine's socket \
                     (`ssh -NL /tmp/docker.sock:/var/run/docker.sock <host>`) and set \
                     DOCKER_HOST=unix:///tmp/docker.sock"
                ));
            }
            _ => {
                return Err(format!(
                    "DOCKER_HOST `{host}` is not an engine address; use unix:///path/to/docker.sock, \
                     tcp://host:2375, or tcp://host:2376 with DOCKER_TLS_VERIFY=1"
                ));
            }
        };
        let authority = rest.trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') {
            return Err(format!(
                "DOCKER_HOST `{host}` has no host:port; use e.g. tcp://192.0.2.10:{}",
                if tls { 2376 } else { 2375 }
            ));
        }
        let address = if has_port(authority) {
            authority.to_owned()
        } else {
            format!("{authority}:{}", if tls { 2376 } else { 2375 })
        };
        if !tls {
            return Ok(Self::Tcp { address });
        }
        let certs = match (&env.cert_path, &env.home) {
            (Some(path), _) => path.clone(),
            (None, Some(home)) => home.join(".docker"),
            (None, None) => {
                return Err(
                    "DOCKER_TLS_VERIFY is set but neither DOCKER_CERT_PATH nor HOME is; set DOCKER_CERT_PATH to the folder with ca.pem, cert.pem and key.pem".into(),
                );
            }
        };
        for file in TLS_FILES {
            if !certs.join(file).is_file() {
                return Err(format!(
                    "DOCKER_TLS_VERIFY is set but `{}` is missing; put the engine's ca.pem, cert.pem and key.pem in `{}` (or point DOCKER_CERT_PATH at them), or unset DOCKER_TLS_VERIFY for a plain tcp:// engine",
                    certs.join(file).display(),
                    certs.display()
                ));
            }
        }
        Ok(Self::Tls { address, certs })
    }
}

/// True when `authority` ends in `:<port>` (an IPv6 literal is bracketed: `[::1]:2375`).
fn has_port(authority: &str) -> bool {
    authority.rsplit_once(':').is_some_and(|(host, port)| {
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && (!host.contains(':') || host.ends_with(']'))
    })
}

/// A client connected to the engine `env` names, its API version negotiated, and the endpoint
/// it uses.
pub async fn connect_with(env: &DockerEnv) -> Result<(Docker, Endpoint), RuntimeError> {
    let endpoint = Endpoint::from_env(env).map_err(|message| RuntimeError::Unreachable {
        endpoint: env.host.clone(),
        message,
    })?;
    let unreachable = |e: bollard::errors::Error| RuntimeError::Unreachable {
        endpoint: Some(endpoint.to_string()),
        message: e.to_string(),
    };
    let docker = client(&endpoint).map_err(unreachable)?;
    let docker = docker.negotiate_version().await.map_err(unreachable)?;
    Ok((docker, endpoint))
}

/// A client for `env`'s engine whose every request is bounded by `timeout_s`, speaking
/// `version` without asking the engine (a swarm node that may not answer now: the manager's
/// negotiated version is used). Never makes an engine call.
pub fn client_for(
    env: &DockerEnv,
    timeout_s: u64,
    version: &ClientVersion,
) -> Result<(Docker, Endpoint), RuntimeError> {
    let endpoint = Endpoint::from_env(env).map_err(|message| RuntimeError::Unreachable {
        endpoint: env.host.clone(),
        message,
    })?;
    let docker =
        client_with(&endpoint, timeout_s, version).map_err(|e| RuntimeError::Unreachable {
            endpoint: Some(endpoint.to_string()),
            message: e.to_string(),
        })?;
    Ok((docker, endpoint))
}

fn client(endpoint: &Endpoint) -> Result<Docker, bollard::errors::Error> {
    client_with(endpoint, TIMEOUT_S, API_DEFAULT_VERSION)
}

fn client_with(
    endpoint: &Endpoint,
    timeout_s: u64,
    version: &ClientVersion,
) -> Result<Docker, bollard::errors::Error> {
    match endpoint {
        Endpoint::Unix { socket } => {
            Docker::connect_with_unix(&socket.to_string_lossy(), timeout_s, version)
        }
        Endpoint::Tcp { address } => {
            Docker::connect_with_http(&format!("tcp://{address}"), timeout_s, version)
        }
        Endpoint::Tls { address, certs } => {
            let file = |name: &str| certs.join(name);
            let [key, cert, ca] = TLS_FILES.map(file);
            Docker::connect_with_ssl(
                &format!("tcp://{address}"),
                &key,
                &cert,
                &ca,
                timeout_s,
                version,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(host: Option<&str>) -> DockerEnv {
        DockerEnv {
            host: host.map(str::to_owned),
            tls_verify: false,
            cert_path: None,
            home: Some(PathBuf::from("/home/u")),
        }
    }

    #[test]
    fn the_default_is_the_local_socket_and_unix_hosts_name_theirs() {
        assert_eq!(
            Endpoint::from_env(&env(None)).unwrap().to_string(),
            "unix:///var/run/docker.sock"
        );
        assert_eq!(
            Endpoint::from_env(&env(Some("unix:///run/user/1000/docker.sock"))).unwrap(),
            Endpoint::Unix {
                socket: PathBuf::from("/run/user/1000/docker.sock")
            }
        );
    }

    #[test]
    fn tcp_hosts_are_plain_unless_tls_is_asked_for_and_get_the_standard_ports() {
        for (host, address) in [
            ("tcp://10.0.0.5:2375", "10.0.0.5:2375"),
            ("tcp://engine.lan", "engine.lan:2375"),
            ("http://engine.lan:8080/", "engine.lan:8080"),
            ("tcp://[::1]:2375", "[::1]:2375"),
        ] {
            assert_eq!(
                Endpoint::from_env(&env(Some(host))).unwrap(),
                Endpoint::Tcp {
                    address: address.into()
                },
                "{host}"
            );
        }
    }

    #[test]
    fn tls_needs_its_three_certificate_files_and_names_the_missing_one() {
        let certs = tempfile::tempdir().unwrap();
        let mut tls = env(Some("tcp://engine.lan"));
        tls.tls_verify = true;
        tls.cert_path = Some(certs.path().to_path_buf());
        let error = Endpoint::from_env(&tls).unwrap_err();
        assert!(error.contains("key.pem` is missing"), "{error}");
        assert!(error.contains("unset DOCKER_TLS_VERIFY"), "{error}");
        for file in TLS_FILES {
            fs_err::write(certs.path().join(file), "pem").unwrap();
        }
        let endpoint = Endpoint::from_env(&tls).unwrap();
        assert_eq!(
            endpoint,
            Endpoint::Tls {
                address: "engine.lan:2376".into(),
                certs: certs.path().to_path_buf()
            }
        );
        assert!(
            endpoint
                .to_string()
                .starts_with("tcp://engine.lan:2376 (TLS")
        );
        tls.cert_path = None;
        let error = Endpoint::from_env(&tls).unwrap_err();
        assert!(
            error.contains("/home/u/.docker/key.pem"),
            "the default is ~/.docker: {error}"
        );
        let https = DockerEnv {
            tls_verify: false,
            ..env(Some("https://engine.lan:443"))
        };
        assert!(
            Endpoint::from_env(&https)
                .unwrap_err()
                .contains("/home/u/.docker")
        );
    }

    #[test]
    fn unsupported_or_malformed_hosts_are_refused_with_the_fix() {
        for (host, needle) in [
            ("ssh://me@engine", "ssh -NL"),
            ("npipe:////./pipe/docker_engine", "not an engine address"),
            ("engine.lan:2375", "not an engine address"),
            ("tcp://", "has no host:port"),
            ("tcp://engine/path", "has no host:port"),
        ] {
            let error = Endpoint::from_env(&env(Some(host))).unwrap_err();
            assert!(error.contains(needle), "{host}: {error}");
            assert!(error.contains("DOCKER_HOST"), "{host}: {error}");
        }
    }

    #[tokio::test]
    async fn an_unreachable_tcp_engine_is_an_error_naming_the_endpoint() {
        // A port nothing listens on: bind one, then close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let error = connect_with(&env(Some(&format!("tcp://127.0.0.1:{port}"))))
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&format!("at `tcp://127.0.0.1:{port}`")),
            "{error}"
        );
    }
}
