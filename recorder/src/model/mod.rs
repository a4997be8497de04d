//! Runners and judges: provider clients, the sim agent, the agent loop.

pub mod types;
