//! The Fitness Report viewer: the board, the run record page, a server's
//! history and the replay.
//!
//! The same components render twice: `fitness publish` renders the board,
//! every record page and every server page to static HTML (`render`, the
//! `ssr` feature), and in the browser the wasm hydrates those pages (the
//! `hydrate` feature, `client`) or renders the ones no file holds (the
//! replay, a filtered board, an embed). Shared components live in
//! `components`; `api`
//! is the only module that builds data URLs and fetches; each page is a
//! module under `routes`. Every number shown is a stored number from
//! `board.json` or a run record: nothing is recomputed.

#![recursion_limit = "256"]

pub mod api;
pub mod app;
#[cfg(feature = "hydrate")]
pub mod client;
pub mod components;
#[cfg(feature = "ssr")]
pub mod render;
pub mod routes;
pub mod url_state;

pub use app::{App, Preloaded};
pub use components::*;
pub use url_state::{UrlState, View};
