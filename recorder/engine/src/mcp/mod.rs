//! Reaching an MCP server, taping the wire, and the zero-token probes.
//!
//! - [`connect`]: rmcp sessions over stdio or streamable HTTP, both eras.
//! - [`stdio`]: child processes with a byte-exact tap.
//! - [`tapped`]: a transport wrapper that tapes rmcp's HTTP frames.
//! - [`tap`]: the shared, line-flushed `mcp.jsonl` writer.
//! - [`input`]: a server's requests for input (sampling, elicitation) and
//!   who answers them.
//! - [`tasks`]: long-running calls, polled to their end.
//! - [`trace`]: the trace context each call carries.
//! - [`target`]: where the server is and which handshake era a session speaks.
//! - [`raw`]: hand-written JSON-RPC for the probes (stdio lines, plain HTTP).
//! - [`probes`]: the protocol probes and their results.

pub mod connect;
pub mod frames;
pub mod input;
pub mod probes;
pub mod raw;
pub mod report;
pub mod stdio;
pub mod surface;
pub mod tap;
pub mod tapped;
pub mod target;
pub mod tasks;
pub mod trace;
pub mod unreachable;
