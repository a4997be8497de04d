//! One module per subcommand: its flags (clap) and its `run`, which turns
//! the flags into the engine's plain options, calls the engine, and prints
//! what came back. `cli` lists them and dispatches; nothing in the engine
//! imports one.

pub mod ask;
pub mod compare;
pub mod conformance_client;
pub mod demo;
pub mod demo_server;
pub mod fixture_server;
pub mod import;
pub mod keygen;
pub mod login;
pub mod probe;
pub mod publish;
pub mod rewrite_check;
pub mod rewrite_proxy;
pub mod run;
pub mod serve;
pub mod sign;
pub mod suite;
pub mod sweep;
pub mod tape;
pub mod target;
pub mod verify;
