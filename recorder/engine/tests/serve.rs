//! `fitness serve` over real HTTP: the `_headers` rules, content types, gzip,
//! range requests, clean 404s, and traversal attempts refused.

use std::io::Write as _;
use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A raw HTTP/1.1 request, so paths reach the server exactly as written
/// (an HTTP client library would normalise `..` away before sending).
async fn get(addr: std::net::SocketAddr, path: &str, extra: &[(&str, &str)]) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (k, v) in extra {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v == "chunked")
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..end]).unwrap().trim(), 16).unwrap();
        data = &data[end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

async fn start(site: &Path) -> std::net::SocketAddr {
    let app = fitness_recorder::serve::router(site).expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    let tape: Vec<u8> = (0..200)
        .flat_map(|i| {
            format!("{{\"t\":\"2026-08-20T17:23:48.{i:03}Z\",\"dir\":\"in\",\"raw\":{{}}}}\n")
                .into_bytes()
        })
        .collect();
    write(&root.join("index.html"), b"<!doctype html><title>x</title>");
    write(&root.join("data/board.json"), br#"{"rows":[]}"#);
    write(&root.join("runs/r1/mcp.jsonl"), &tape);
    write(&root.join("runs/r1/mcp.jsonl.gz"), &gzip(&tape));
    write(&root.join("runs/r1/record.json"), b"{}");
    write(&dir.path().join("secret.txt"), b"outside the site");
    let rules = fitness_recorder::serve::headers::HeaderRules::for_site("default-src 'self'");
    write(&root.join("_headers"), rules.render().as_bytes());
    dir
}

#[tokio::test]
async fn tapes_are_served_cross_origin_immutable_as_ndjson() {
    let dir = site();
    let addr = start(&dir.path().join("site")).await;
    let reply = get(addr, "/runs/r1/mcp.jsonl", &[]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        reply.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(
        reply.header("content-type"),
        Some("application/x-ndjson; charset=utf-8")
    );
    assert_eq!(
        reply.body,
        std::fs::read(dir.path().join("site/runs/r1/mcp.jsonl")).unwrap()
    );

    let board = get(addr, "/data/board.json", &[]).await;
    assert_eq!(board.status, 200);
    assert_eq!(
        board.header("cache-control"),
        Some("public, max-age=60, must-revalidate")
    );
    assert!(
        board
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );

    let page = get(addr, "/", &[]).await;
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(
        page.header("content-security-policy"),
        Some("default-src 'self'")
    );
}

#[tokio::test]
async fn gzip_is_served_from_the_precompressed_file() {
    let dir = site();
    let addr = start(&dir.path().join("site")).await;
    let reply = get(addr, "/runs/r1/mcp.jsonl", &[("Accept-Encoding", "gzip")]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-encoding"), Some("gzip"));
    assert_eq!(
        reply.body,
        std::fs::read(dir.path().join("site/runs/r1/mcp.jsonl.gz")).unwrap()
    );
}

#[tokio::test]
async fn range_requests_return_exactly_the_bytes_asked_for() {
    let dir = site();
    let addr = start(&dir.path().join("site")).await;
    let reply = get(addr, "/runs/r1/mcp.jsonl", &[("Range", "bytes=10-29")]).await;
    assert_eq!(reply.status, 206);
    let full = std::fs::read(dir.path().join("site/runs/r1/mcp.jsonl")).unwrap();
    assert_eq!(reply.body, full[10..30].to_vec());
    assert_eq!(
        reply.header("content-range"),
        Some(format!("bytes 10-29/{}", full.len()).as_str())
    );
}

#[tokio::test]
async fn missing_files_and_escapes_get_a_clean_404() {
    let dir = site();
    let addr = start(&dir.path().join("site")).await;
    for path in [
        "/nope.json",
        "/../secret.txt",
        "/runs/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/runs/%2E%2E/%2E%2E/secret.txt",
        "/runs%2f..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
    ] {
        let reply = get(addr, path, &[]).await;
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(reply.body, b"not found\n", "{path}");
        assert!(
            !String::from_utf8_lossy(&reply.body).contains("outside"),
            "{path}"
        );
    }
}

#[test]
fn a_missing_site_is_a_clear_error() {
    let err = fitness_recorder::serve::router(Path::new("/definitely/not/here")).unwrap_err();
    assert!(err.to_string().contains("no site directory"), "{err}");
}

#[tokio::test]
async fn symlinks_that_lead_out_of_the_site_are_refused_and_those_inside_served() {
    use std::os::unix::fs::symlink;
    let dir = site();
    let root = dir.path().join("site");
    let secret = dir.path().join("secret.txt");
    // A file, a directory and a precompressed twin that lead outside, and a
    // system file as in the issue (once served with ACAO *).
    symlink(&secret, root.join("runs/r1/leak.jsonl")).unwrap();
    symlink(dir.path(), root.join("runs/outside")).unwrap();
    symlink("/etc/hostname", root.join("runs/r1/hostname.jsonl")).unwrap();
    write(&root.join("runs/r1/agent.jsonl"), b"{}\n");
    symlink(&secret, root.join("runs/r1/agent.jsonl.gz")).unwrap();
    // Inside the site: a convenience link is fine.
    symlink(root.join("runs/r1"), root.join("runs/latest")).unwrap();
    let addr = start(&root).await;
    for (path, encoding) in [
        ("/runs/r1/leak.jsonl", "identity"),
        ("/runs/outside/secret.txt", "identity"),
        ("/runs/r1/hostname.jsonl", "identity"),
        ("/runs/r1/agent.jsonl", "gzip"),
    ] {
        let reply = get(addr, path, &[("Accept-Encoding", encoding)]).await;
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(reply.body, b"not found\n", "{path}");
    }
    let inside = get(addr, "/runs/latest/mcp.jsonl", &[]).await;
    assert_eq!(inside.status, 200);
    assert_eq!(
        inside.body,
        std::fs::read(root.join("runs/r1/mcp.jsonl")).unwrap()
    );
}
