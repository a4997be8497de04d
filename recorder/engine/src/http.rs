//! HTTP as every client of the recorder speaks it (the MCP transport, the
//! probes' plain requests, the model APIs): TLS trust with the operator's
//! extra CA files, redirects followed only within the first request's
//! origin, bodies read within a bound, and a connection failure explained.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

/// Environment variable naming a PEM file of extra CA certificates to trust
/// for https servers (beside the system roots); `--ca-cert FILE` does the same.
pub const CA_CERT_ENV: &str = "FITNESS_CA_CERT";

/// Extra CA files trusted for this process (`--ca-cert`), beside the system
/// roots and [`CA_CERT_ENV`]. Every HTTP client the recorder builds reads it.
static EXTRA_CA_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Trust the CA certificates in the PEM file at `path` for every https
/// connection this process makes from now on. Fails when the file cannot be
/// read or holds no certificate.
pub fn trust_ca_file(path: &Path) -> anyhow::Result<()> {
    read_ca_file(path)?;
    EXTRA_CA_FILES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(path.to_owned());
    Ok(())
}

fn read_ca_file(path: &Path) -> anyhow::Result<Vec<reqwest::Certificate>> {
    let pem = std::fs::read(path)
        .with_context(|| format!("failed to read the CA certificate file {}", path.display()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| anyhow::anyhow!("{} is not a PEM certificate bundle: {e}", path.display()))?;
    anyhow::ensure!(
        !certs.is_empty(),
        "{} holds no PEM certificate",
        path.display()
    );
    Ok(certs)
}

/// The redirect rule of every HTTP client the recorder builds: a redirect
/// is followed only to the origin of the first request, so the operator's
/// `Authorization`, `--header` values and API keys never reach another
/// origin (reqwest would follow it, dropping only `Authorization` and
/// cookies). A redirect elsewhere is not followed; the caller sees the 3xx.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("exceeded 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

/// A reqwest builder that speaks TLS (rustls), trusts the system roots
/// plus the extra CA files (`--ca-cert`, `$FITNESS_CA_CERT`), and follows
/// only same-origin redirects ([`same_origin_redirects`]).
pub fn http_client_builder() -> anyhow::Result<reqwest::ClientBuilder> {
    let mut files = EXTRA_CA_FILES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if let Some(env) = std::env::var_os(CA_CERT_ENV).filter(|v| !v.is_empty()) {
        files.push(PathBuf::from(env));
    }
    let mut extra = Vec::new();
    for file in &files {
        extra.extend(read_ca_file(file)?);
    }
    Ok(reqwest::Client::builder()
        .tls_certs_merge(extra)
        .redirect(same_origin_redirects()))
}

/// The longest HTTP body read whole: a probe's reply, a model API's reply.
pub const MAX_BODY: usize = 32 * 1024 * 1024;

/// Why a body was not read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the body is longer than {0} bytes")]
    TooLong(usize),
    #[error("{0}")]
    Read(#[from] reqwest::Error),
}

/// Read `response`'s body, but never more than `max` bytes of it: a longer
/// body (declared or streamed) is refused as soon as it passes `max`.
pub async fn body_within(
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(BodyError::TooLong(max));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len().saturating_add(chunk.len()) > max {
            return Err(BodyError::TooLong(max));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
