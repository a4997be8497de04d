//! The engine's integration tests, one binary: each file is a module
//! (nextest still runs every test in a process of its own).

mod model_fake;

mod model_providers;
mod serve;
mod suite_admission;
