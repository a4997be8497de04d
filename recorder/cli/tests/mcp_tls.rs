//! `fitness probe https://…`: TLS is spoken (rustls). A server whose
//! certificate no trusted CA signed is refused with a certificate error;
//! trusting that certificate with `--ca-cert FILE` or `$FITNESS_CA_CERT`
//! makes the same probe succeed.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{FITNESS, http_fixture};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(120);

/// A TLS-terminating proxy on 127.0.0.1 in front of a plain HTTP fixture,
/// with a fresh self-signed certificate for 127.0.0.1.
struct TlsFront {
    url: String,
    cert_pem: String,
    _runtime: tokio::runtime::Runtime,
}

fn tls_front(backend_url: &str) -> TlsFront {
    let backend = backend_url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("an http://HOST:PORT/… URL")
        .to_owned();
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("a self-signed certificate");
    let cert_der: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(vec![cert_der], key)
    .expect("a server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local addr").port();
    runtime.spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let backend = backend.clone();
            tokio::spawn(async move {
                // A client that rejects the certificate ends the handshake.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(&backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    TlsFront {
        url: format!("https://127.0.0.1:{port}/mcp"),
        cert_pem: certified.cert.pem(),
        _runtime: runtime,
    }
}

/// `fitness ARGS` with `env`, bounded in time.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(FITNESS);
    cmd.args(args)
        .env_remove("FITNESS_CA_CERT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("fitness starts");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("fitness {args:?} did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn tools(out: &Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "fitness probe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t.as_str().expect("name").to_owned())
        .collect()
}

fn write_pem(dir: &Path, pem: &str) -> String {
    let path = dir.join("ca.pem");
    std::fs::write(&path, pem).expect("write the certificate");
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn an_untrusted_certificate_is_refused_with_a_certificate_error() {
    let fixture = http_fixture("correct");
    let front = tls_front(&fixture.url);
    let out = run(&["probe", "--json", "--timeout", "10", &front.url], &[]);
    assert_eq!(out.status.code(), Some(1), "the probe must fail");
    let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(stderr.contains("certificate"), "{stderr}");
    assert!(stderr.contains("--ca-cert"), "the fix is named: {stderr}");
}

#[test]
fn a_trusted_certificate_from_the_flag_or_the_environment_succeeds() {
    let fixture = http_fixture("correct");
    let front = tls_front(&fixture.url);
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = write_pem(dir.path(), &front.cert_pem);
    let by_flag = run(&["probe", "--json", "--ca-cert", &ca, &front.url], &[]);
    assert_eq!(tools(&by_flag), ["add", "echo", "reverse"]);
    let by_env = run(
        &["probe", "--json", &front.url],
        &[("FITNESS_CA_CERT", ca.as_str())],
    );
    assert_eq!(tools(&by_env), ["add", "echo", "reverse"]);
}

#[test]
fn a_bad_ca_file_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = write_pem(dir.path(), "not a certificate");
    let out = run(
        &["probe", "--ca-cert", &bad, "https://127.0.0.1:9/mcp"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ca.pem"), "{stderr}");
}
