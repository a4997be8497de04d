//! `fitness serve SITE [--addr ADDR]`: a published site over HTTP, with the
//! headers of its `_headers` file, until Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;

/// Where a site is served unless the operator says otherwise: loopback.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// Arguments of `fitness serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The published site directory (what `fitness publish --out` wrote).
    pub site: PathBuf,
    /// Address to listen on. Keep it on loopback unless you mean to share it.
    #[arg(long, default_value = DEFAULT_ADDR)]
    pub addr: SocketAddr,
}

/// Run `fitness serve` until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async move {
        // Listening for Ctrl-C and SIGTERM before the address is printed:
        // whoever reads it may stop the server at once.
        let stop = crate::process::stop_requested();
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("failed to listen on {}", args.addr))?;
        let local = listener.local_addr()?;
        crate::process::outln!(
            "serving {} at http://{local}/ (Ctrl-C to stop)",
            args.site.display()
        );
        fitness_recorder::serve::serve(&args.site, listener, stop).await
    })
}
