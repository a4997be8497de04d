//! The recorder's engine: everything `fitness` does, behind the command
//! line. It never sees clap, never prints, and never decides an exit code:
//! the binary (`recorder/cli`) parses, calls in here, shows progress and
//! maps every end to a code. ARCHITECTURE.md draws its floors.

pub mod access;
pub mod auth;
pub mod clock;
pub mod conformance;
pub mod demo;
pub mod http;
pub mod integrity;
pub mod mcp;
pub mod model;
pub mod pipeline;
pub mod publish;
pub mod rewrite;
pub mod secrets;
pub mod serve;
pub mod suite;
pub mod test_servers;
pub mod watch;
