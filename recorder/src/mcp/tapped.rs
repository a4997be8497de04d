//! A transport wrapper that records each message rmcp sends or receives.
//!
//! Used for streamable HTTP, where rmcp owns the HTTP exchange: frames are
//! re-serialised from rmcp's typed messages, so they are faithful in content
//! but not byte-exact. The raw probes record exact bodies, status and headers
//! themselves (see `raw`).

use fitness_shared::tape::Direction;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::tap::Tap;

pub struct TappedTransport<T> {
    inner: T,
    tap: Tap,
    corr_id: Option<String>,
}

impl<T> TappedTransport<T> {
    pub fn new(inner: T, tap: Tap, corr_id: Option<String>) -> Self {
        TappedTransport {
            inner,
            tap,
            corr_id,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for TappedTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Ok(frame) = serde_json::to_string(&item) {
            self.tap
                .frame(Direction::In, &frame, self.corr_id.as_deref());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(m) = &message
            && let Ok(frame) = serde_json::to_string(m)
        {
            self.tap
                .frame(Direction::Out, &frame, self.corr_id.as_deref());
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
