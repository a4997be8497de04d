//! A static file server on 127.0.0.1 for tests, on an ephemeral port.

use std::net::SocketAddr;
use std::path::Path;

use tokio::task::JoinHandle;

/// A running static server; stopped when dropped.
pub struct StaticServer {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl StaticServer {
    /// Serve `dir` on 127.0.0.1 at a free port.
    pub async fn start(dir: &Path) -> anyhow::Result<Self> {
        let app = axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }

    /// Serve `dir` with `Access-Control-Allow-Origin: *` on every response,
    /// as a site that lets other origins embed its viewer must.
    pub async fn start_cors(dir: &Path) -> anyhow::Result<Self> {
        let app = axum::Router::new()
            .fallback_service(tower_http::services::ServeDir::new(dir))
            .layer(axum::middleware::map_response(
                |mut response: axum::response::Response| async move {
                    response.headers_mut().insert(
                        "access-control-allow-origin",
                        axum::http::HeaderValue::from_static("*"),
                    );
                    response
                },
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }

    /// Serve a published site the way `fitness serve` does: its `_headers`
    /// (the Content-Security-Policy included), gzip, and no path escape.
    pub async fn start_site(site: &Path) -> anyhow::Result<Self> {
        let app = fitness_recorder::serve::router(site)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
