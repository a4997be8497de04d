//! One module per page.

pub mod board;
pub mod findings;
pub mod record;
pub mod replay;
pub mod server;
