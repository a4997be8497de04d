//! One module per page.

pub mod board;
pub mod record;
pub mod replay;
