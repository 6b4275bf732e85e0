//! `doctor` as a new user meets it (issue 17): the engine it used, the count of warnings, a
//! non-zero exit when something a cook needs is missing, `-q` printing only the errors, and
//! `DOCKER_HOST=tcp://…` honoured, plain and with `DOCKER_TLS_VERIFY` (through real second
//! listeners in front of the engine's socket).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use multicooker::runtime::connect::Endpoint;

use crate::common::{TestCook, show};

/// Issue 27 (changing issue 17's answer): with no login, plain `doctor` tells dummy cooks from
/// real flavors instead of failing: a warning with the login commands, a line saying what this
/// machine can cook, exit 0 since every dummy cook works; `-q` then prints nothing.
#[test]
fn doctor_with_nothing_logged_in_is_ready_for_dummy_cooks_and_says_so() {
    let cook = TestCook::empty("doctor-new");
    let home = tempfile::tempdir().unwrap();
    let doctor = |args: &[&str]| {
        cook.command(args)
            .env("MULTICOOKER_HOST_HOME", home.path())
            .env(
                "MULTICOOKER_TOKEN_STORE",
                format!("file:{}", home.path().join("tokens").display()),
            )
            .output()
            .unwrap()
    };
    let output = doctor(&["doctor"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("engine reachable at unix://"),
        "doctor names the engine it used: {stdout}"
    );
    assert!(
        stdout.contains("[WARN] no real flavor is logged in, so only `dummy` cooks can run"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "doctor: ready for dummy cooks: yes; ready for real flavors: none (no login)"
        ),
        "{stdout}"
    );
    let last = stdout.lines().last().unwrap();
    assert!(
        last.starts_with("doctor: ready, ") && last.contains(" warnings"),
        "the last line counts the warnings: {last}"
    );
    assert!(!stdout.contains("[FAIL]"), "{stdout}");

    let quiet = doctor(&["-q", "doctor"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", show(&quiet));
    assert!(
        quiet.stdout.is_empty() && quiet.stderr.is_empty(),
        "-q prints only errors, and there are none: {}",
        show(&quiet)
    );
}

/// A TCP listener that forwards every connection to the engine's unix socket, counting them:
/// a second, real way to reach the same engine. With `tls`, it speaks TLS and demands a client
/// certificate, as a `DOCKER_TLS_VERIFY` engine does.
fn tcp_to_unix_proxy(
    socket: std::path::PathBuf,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> (u16, Arc<AtomicUsize>, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let handle = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            // Serve until no connection came for 10 s (the test is over by then).
            while let Ok(Ok((tcp, _))) =
                tokio::time::timeout(std::time::Duration::from_secs(10), listener.accept()).await
            {
                let (socket, tls, seen) = (socket.clone(), tls.clone(), seen.clone());
                tokio::spawn(async move {
                    let Ok(mut unix) = tokio::net::UnixStream::connect(&socket).await else {
                        return;
                    };
                    match tls {
                        None => {
                            seen.fetch_add(1, Ordering::SeqCst);
                            let mut tcp = tcp;
                            let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
                        }
                        Some(acceptor) => {
                            // Counted only once the handshake (client certificate included)
                            // succeeded.
                            if let Ok(mut stream) = acceptor.accept(tcp).await {
                                seen.fetch_add(1, Ordering::SeqCst);
                                let _ = tokio::io::copy_bidirectional(&mut stream, &mut unix).await;
                            }
                        }
                    }
                });
            }
        });
    });
    (port, count, handle)
}

fn engine_socket() -> std::path::PathBuf {
    match Endpoint::from_env(&multicooker::settings::Env::from_process().docker()) {
        Ok(Endpoint::Unix { socket }) => socket,
        other => panic!(
            "this test reaches the engine's unix socket through a tcp listener; run it with the engine on a unix socket (DOCKER_HOST unset or unix://), not {other:?}"
        ),
    }
}

#[test]
fn docker_host_tcp_is_honoured_and_named() {
    let cook = TestCook::empty("doctor-tcp");
    let (port, connections, proxy) = tcp_to_unix_proxy(engine_socket(), None);
    let output = cook
        .command(&["doctor", "--flavors", "dummy", "--json"])
        .env("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"))
        .env_remove("DOCKER_TLS_VERIFY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["engine"], format!("tcp://127.0.0.1:{port}"));
    assert!(
        connections.load(Ordering::SeqCst) > 0,
        "the engine was reached through the tcp listener"
    );
    // TLS asked for without certificates: refused with the file and the fix, not ignored.
    let certs = tempfile::tempdir().unwrap();
    let output = cook
        .command(&["doctor", "--flavors", "dummy"])
        .env("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"))
        .env("DOCKER_TLS_VERIFY", "1")
        .env("DOCKER_CERT_PATH", certs.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("key.pem` is missing"), "{stdout}");
    drop(proxy);
    assert!(cook.leftovers().is_empty());
}

/// Issue 17: base images of older builds pile up; doctor lists them and `clean --all
/// --base-images` covers them (checked with `--dry-run`: the engine is shared with other
/// tests, whose current base images must stay).
#[test]
fn doctor_lists_base_images_of_older_builds_and_clean_covers_them() {
    use multicooker::runtime::{ImageSpec, LABEL_FLAVOR, Labels, ObjectKind, ObjectRef, Runtime};
    let cook = TestCook::empty("doctor-stale");
    let tag = format!("multicooker-base-dummy:0ld{}", std::process::id());
    let mut context = tar::Builder::new(Vec::new());
    let dockerfile = b"FROM scratch\nLABEL purpose=stale-base-test\n";
    let mut header = tar::Header::new_gnu();
    header.set_size(dockerfile.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    context
        .append_data(&mut header, "Dockerfile", &dockerfile[..])
        .unwrap();
    let spec = ImageSpec {
        tag: tag.clone(),
        labels: Labels::shared("base").with(LABEL_FLAVOR, "dummy"),
        context: context.into_inner().unwrap(),
    };
    let image = ObjectRef {
        kind: ObjectKind::Image,
        name: tag.clone(),
    };
    crate::common::block_on(async {
        crate::common::engine()
            .await
            .build_image(&spec)
            .await
            .unwrap();
    });
    let output = cook
        .command(&["doctor", "--flavors", "dummy", "--json"])
        .output()
        .unwrap();
    let clean = cook
        .command(&["clean", "--all", "--base-images", "--dry-run", "--json"])
        .output()
        .unwrap();
    crate::common::block_on(async {
        crate::common::engine().await.remove(&image).await.unwrap();
    });
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let stale = report["stale_base_images"].as_array().unwrap();
    assert!(stale.iter().any(|t| *t == tag.as_str()), "{stale:?}");
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["level"] == "WARN"
                && c["check"]
                    .as_str()
                    .unwrap()
                    .contains("clean --all --base-images")),
        "{report}"
    );
    let current = format!(
        "multicooker-base-dummy:{}",
        multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
            .unwrap()
            .digest
    );
    assert!(
        !stale.iter().any(|t| *t == current.as_str()),
        "the current one is in use"
    );
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let cleaned: serde_json::Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert!(
        cleaned["objects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o.as_str().unwrap().contains(&tag)),
        "{cleaned}"
    );
}

/// Issue 25: on a shared engine `clean --all --base-images` offered another orchestrator's base
/// images (20 of 23) and `doctor` recommended that command. Each namespace now has base images of
/// its own: another namespace's, current or stale, survive a real clean and are never listed by
/// doctor or offered by a dry run (the default namespace's included); each namespace's own are
/// listed and removed.
#[test]
fn clean_and_doctor_never_touch_or_offer_another_namespaces_base_images() {
    use multicooker::runtime::{
        LABEL_FLAVOR, LABEL_NAMESPACE, Labels, ObjectKind, ObjectRef, Runtime,
    };
    let cook = TestCook::empty("doctor-ns");
    let ours = format!("mcns-a{}", std::process::id());
    let theirs = format!("mcns-b{}", std::process::id());
    let json = |args: &[&str]| -> serde_json::Value {
        let output = cook.command(args).arg("--json").output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", show(&output));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    // The other orchestrator: its current dummy base, and one an older build of it left.
    let built = json(&["build-base", "dummy", "--namespace", &theirs]);
    let their_current = built["images"][0]["image"].as_str().unwrap().to_owned();
    let digest =
        multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
            .unwrap()
            .digest;
    assert_eq!(
        their_current,
        format!("multicooker-base-dummy:{theirs}-{digest}"),
        "a namespace's base image is its own"
    );
    let their_old = format!("multicooker-base-dummy:{theirs}-0ld");
    build_empty_base(
        &their_old,
        Labels::shared("base")
            .with(LABEL_FLAVOR, "dummy")
            .with(LABEL_NAMESPACE, &theirs),
    );
    let theirs_named = |names: &[String]| names.iter().any(|n| n.contains(&theirs));
    // Our namespace: doctor (which builds our own dummy base) lists none of theirs …
    let doctor = json(&["doctor", "--flavors", "dummy", "--namespace", &ours]);
    let our_current = format!("multicooker-base-dummy:{ours}-{digest}");
    assert!(exists(&our_current), "doctor built our own base");
    let stale = strings(&doctor["stale_base_images"]);
    assert!(
        !theirs_named(&stale),
        "another namespace's offered: {stale:?}"
    );
    // … nor does the default namespace's doctor or its dry run.
    let plain = json(&["doctor", "--flavors", "dummy"]);
    let stale = strings(&plain["stale_base_images"]);
    assert!(
        !theirs_named(&stale),
        "offered to the default namespace: {stale:?}"
    );
    let dry = json(&["clean", "--all", "--base-images", "--dry-run"]);
    let offered = strings(&dry["objects"]);
    assert!(
        !theirs_named(&offered),
        "dry run offers theirs: {offered:?}"
    );
    assert!(!offered.iter().any(|o| o.contains(&ours)), "{offered:?}");
    // A real clean of our namespace removes our base and leaves both of theirs.
    let cleaned = json(&["clean", "--all", "--base-images", "--namespace", &ours]);
    let removed = strings(&cleaned["objects"]);
    assert!(
        removed.iter().any(|o| o.contains(&our_current)),
        "our own base is ours to remove: {removed:?}"
    );
    assert!(!theirs_named(&removed), "{removed:?}");
    assert!(!exists(&our_current));
    assert!(
        exists(&their_current) && exists(&their_old),
        "theirs survive"
    );
    // Their doctor calls their old base stale (not their current one), and their clean takes both.
    let doctor = json(&["doctor", "--flavors", "dummy", "--namespace", &theirs]);
    let stale = strings(&doctor["stale_base_images"]);
    assert!(stale.contains(&their_old), "{stale:?}");
    assert!(!stale.contains(&their_current), "{stale:?}");
    let warning = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|c| c["check"].as_str().filter(|t| t.contains("base image(s)")))
        .unwrap_or_default()
        .to_owned();
    assert!(
        warning.contains(&format!(
            "`multicooker clean --all --base-images --namespace {theirs}`"
        )),
        "the command it recommends stays in its namespace: {warning}"
    );
    json(&["clean", "--all", "--base-images", "--namespace", &theirs]);
    for tag in [&their_current, &their_old] {
        if exists(tag) {
            crate::common::block_on(async {
                let image = ObjectRef {
                    kind: ObjectKind::Image,
                    name: tag.clone(),
                };
                crate::common::engine().await.remove(&image).await.unwrap();
            });
            panic!("`{tag}` was left by its own namespace's clean");
        }
    }
}

/// Issue 25: doctor printed the engine lines twice (with `-v`, the connection's own `engine:`
/// line and doctor's engine check); the engine is named once, in doctor's check.
#[test]
fn doctor_names_the_engine_once() {
    let cook = TestCook::empty("doctor-once");
    for args in [
        &["doctor", "--flavors", "dummy"][..],
        &["doctor", "--flavors", "dummy", "-v"][..],
    ] {
        let output = cook.command(args).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", show(&output));
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(all.matches(" (API ").count(), 1, "{args:?}: {all}");
        assert_eq!(
            all.matches("engine reachable at ").count(),
            1,
            "{args:?}: {all}"
        );
    }
}

/// Builds an empty image standing for a base image, with these labels.
fn build_empty_base(tag: &str, labels: multicooker::runtime::Labels) {
    use multicooker::runtime::{ImageSpec, Runtime};
    let mut context = tar::Builder::new(Vec::new());
    let dockerfile = b"FROM scratch\nLABEL purpose=namespaced-stale-base-test\n";
    let mut header = tar::Header::new_gnu();
    header.set_size(dockerfile.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    context
        .append_data(&mut header, "Dockerfile", &dockerfile[..])
        .unwrap();
    let spec = ImageSpec {
        tag: tag.to_owned(),
        labels,
        context: context.into_inner().unwrap(),
    };
    crate::common::block_on(async {
        crate::common::engine()
            .await
            .build_image(&spec)
            .await
            .unwrap();
    });
}

/// Whether the engine has an image of this tag.
fn exists(tag: &str) -> bool {
    use multicooker::runtime::Runtime;
    crate::common::block_on(async {
        crate::common::engine()
            .await
            .image_exists(tag)
            .await
            .unwrap()
    })
}

/// A JSON array of strings.
fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, as `DOCKER_CERT_PATH`
/// holds them (`ca.pem`, `cert.pem`, `key.pem`), and the server side's TLS acceptor.
fn tls_material(dir: &std::path::Path) -> tokio_rustls::TlsAcceptor {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client = CertificateParams::new(Vec::<String>::new())
        .unwrap()
        .signed_by(&client_key, &ca)
        .unwrap();
    fs_err::write(dir.join("ca.pem"), ca.pem()).unwrap();
    fs_err::write(dir.join("cert.pem"), client.pem()).unwrap();
    fs_err::write(dir.join("key.pem"), client_key.serialize_pem()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![server.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        )
        .unwrap();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

#[test]
fn docker_tls_verify_talks_tls_with_the_client_certificate() {
    let cook = TestCook::empty("doctor-tls");
    let certs = tempfile::tempdir().unwrap();
    let acceptor = tls_material(certs.path());
    let (port, handshakes, proxy) = tcp_to_unix_proxy(engine_socket(), Some(acceptor));
    let output = cook
        .command(&["doctor", "--flavors", "dummy", "--json"])
        .env("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"))
        .env("DOCKER_TLS_VERIFY", "1")
        .env("DOCKER_CERT_PATH", certs.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["engine"],
        format!(
            "tcp://127.0.0.1:{port} (TLS, certificates in `{}`)",
            certs.path().display()
        )
    );
    assert!(
        handshakes.load(Ordering::SeqCst) > 0,
        "the engine was reached through TLS with the client certificate"
    );
    // The same listener without TLS on the client side: refused, named, and not ignored.
    let plain = cook
        .command(&["doctor", "--flavors", "dummy"])
        .env("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"))
        .env_remove("DOCKER_TLS_VERIFY")
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(1), "{}", show(&plain));
    drop(proxy);
    assert!(cook.leftovers().is_empty());
}
