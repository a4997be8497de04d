//! The end-to-end tests, one binary: each file is a module (nextest still
//! runs every test in a process of its own), so the engine is linked once.

mod floors;
mod fuzz_corpus;
mod site_links;
mod viewer_board;
mod viewer_replay;
mod viewer_smoke;
