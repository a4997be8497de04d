//! `fitness serve`: serve a published site over HTTP with the same headers a
//! static host would send from its `_headers` file, gzip, range requests,
//! clean 404s, and no way out of the site root: neither by the path (`..`,
//! however encoded) nor by a symlink that leads outside it.

pub mod headers;

use std::path::{Path, PathBuf};

use anyhow::Context;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::services::ServeDir;

use headers::{HeaderRules, content_security_policy};

/// Serve `site` on `listener` until `shutdown` resolves.
pub async fn serve(
    site: &Path,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let app = router(site)?;
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
        .context("the HTTP server stopped with an error")
}

/// The site's router: static files under `site`, headers from its `_headers`
/// file (or the default site rules when it has none).
pub fn router(site: &Path) -> anyhow::Result<Router> {
    anyhow::ensure!(site.is_dir(), "no site directory at {}", site.display());
    let root = std::fs::canonicalize(site)
        .with_context(|| format!("failed to resolve {}", site.display()))?;
    let rules = load_rules(site)?;
    let files = ServeDir::new(site)
        .precompressed_gzip()
        .append_index_html_on_directories(true)
        .not_found_service(axum::routing::any(not_found));
    // Never gzip a partial response: the byte range refers to the identity body.
    let compress = DefaultPredicate::new()
        .and(|status: StatusCode, _, _: &_, _: &_| status != StatusCode::PARTIAL_CONTENT);
    Ok(Router::new()
        .fallback_service(files)
        .layer(CompressionLayer::new().gzip(true).compress_when(compress))
        .layer(middleware::from_fn_with_state(
            std::sync::Arc::new(rules),
            apply_rules,
        ))
        .layer(middleware::from_fn_with_state(
            std::sync::Arc::new(root),
            refuse_symlink_escapes,
        ))
        .layer(middleware::from_fn(refuse_escapes)))
}

fn load_rules(site: &Path) -> anyhow::Result<HeaderRules> {
    let path = site.join("_headers");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            HeaderRules::parse(&text).with_context(|| format!("failed to read {}", path.display()))
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Ok(HeaderRules::for_site(&content_security_policy(&[])))
        }
        Err(err) => Err(err).with_context(|| format!("failed to read {}", path.display())),
    }
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "not found\n",
    )
        .into_response()
}

/// Refuse any path that could step outside the site root, however encoded:
/// `..` segments (also `%2e%2e`), backslashes, encoded slashes and NUL bytes.
async fn refuse_escapes(request: Request, next: Next) -> Response {
    if is_escape_attempt(request.uri().path()) {
        return not_found().await;
    }
    next.run(request).await
}

/// `path` with every symlink resolved; an error when it does not exist or
/// resolves outside `root` (itself resolved).
pub fn resolve_within(root: &Path, path: &Path) -> anyhow::Result<PathBuf> {
    let real = std::fs::canonicalize(path)
        .with_context(|| format!("failed to resolve {}", path.display()))?;
    anyhow::ensure!(
        real.starts_with(root),
        "{} leads outside {} (to {}): refused",
        path.display(),
        root.display(),
        real.display()
    );
    Ok(real)
}

/// Refuse a path when the file the static service would send for it (the
/// file, its `.gz`, or a directory's `index.html` and its `.gz`) is a
/// symlink, or lies under one, that leads outside the site root.
async fn refuse_symlink_escapes(
    axum::extract::State(root): axum::extract::State<std::sync::Arc<PathBuf>>,
    request: Request,
    next: Next,
) -> Response {
    let path = root.join(percent_decode(request.uri().path()).trim_start_matches('/'));
    let gz = |p: &Path| {
        let mut name = p.as_os_str().to_owned();
        name.push(".gz");
        PathBuf::from(name)
    };
    let index = path.join(fitness_shared::site::PAGE_FILE);
    let escapes = [gz(&path), gz(&index), path, index]
        .iter()
        .any(|p| std::fs::symlink_metadata(p).is_ok() && resolve_within(&root, p).is_err());
    if escapes {
        return not_found().await;
    }
    next.run(request).await
}

fn is_escape_attempt(raw_path: &str) -> bool {
    let lower = raw_path.to_ascii_lowercase();
    if lower.contains("%2f")
        || lower.contains("%5c")
        || lower.contains("%00")
        || raw_path.contains('\\')
    {
        return true;
    }
    let decoded = percent_decode(raw_path);
    decoded.split(['/', '\\']).any(|segment| segment == "..") || decoded.contains('\0')
}

fn percent_decode(input: &str) -> String {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(value);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn apply_rules(
    axum::extract::State(rules): axum::extract::State<std::sync::Arc<HeaderRules>>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    let status = response.status();
    let applies = status.is_success() || status == StatusCode::NOT_MODIFIED;
    for (name, value) in rules.for_path(&path) {
        let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value))
        else {
            continue;
        };
        // A 404 keeps its own text/plain type; everything else applies.
        if !applies && name == header::CONTENT_TYPE {
            continue;
        }
        response.headers_mut().insert(name, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_attempts_are_recognised_however_encoded() {
        for bad in [
            "/../etc/passwd",
            "/runs/../../x",
            "/%2e%2e/secret",
            "/%2E%2E/secret",
            "/runs%2f..%2fx",
            "/a%5c..%5cb",
            "/a\\..\\b",
            "/a%00b",
        ] {
            assert!(is_escape_attempt(bad), "{bad} should be refused");
        }
        for good in [
            "/",
            "/index.html",
            "/runs/a..b/mcp.jsonl",
            "/data/board.json",
            "/%20x",
        ] {
            assert!(!is_escape_attempt(good), "{good} should be allowed");
        }
    }
}
