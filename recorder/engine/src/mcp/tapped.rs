//! A transport wrapper that records each message rmcp sends or receives.
//!
//! Used for streamable HTTP, where rmcp owns the HTTP exchange: frames are
//! re-serialised from rmcp's typed messages, so they are faithful in content
//! but not byte-exact. The raw probes record exact bodies, status and headers
//! themselves (see `raw`).

use std::sync::{Arc, RwLock};

use fitness_shared::tape::Direction;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::tap::Tap;

/// The corr_id written on a session's wire lines, shared by the tasks that
/// move frames and read at frame time, so one session can carry many trials
/// (see `Session::set_corr_id`). Cheap to clone; a read is one uncontended
/// read lock and an `Arc` clone.
#[derive(Clone, Default, Debug)]
pub struct SharedCorrId(Arc<RwLock<Option<Arc<str>>>>);

impl SharedCorrId {
    pub fn new(corr_id: Option<&str>) -> Self {
        SharedCorrId(Arc::new(RwLock::new(corr_id.map(Arc::from))))
    }

    /// The current corr_id.
    pub fn get(&self) -> Option<Arc<str>> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replace the corr_id for every frame from now on.
    pub fn set(&self, corr_id: Option<&str>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = corr_id.map(Arc::from);
    }
}

pub struct TappedTransport<T> {
    inner: T,
    tap: Tap,
    corr_id: SharedCorrId,
}

impl<T> TappedTransport<T> {
    pub fn new(inner: T, tap: Tap, corr_id: SharedCorrId) -> Self {
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
                .frame(Direction::In, &frame, self.corr_id.get().as_deref());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(m) = &message
            && let Ok(frame) = serde_json::to_string(m)
        {
            self.tap
                .frame(Direction::Out, &frame, self.corr_id.get().as_deref());
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
