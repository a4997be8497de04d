//! Runners and judges: provider clients, the sim agent, the agent loop,
//! prices and cost.
//!
//! - [`types`]: the provider-neutral conversation and the [`ModelClient`] trait.
//! - [`anthropic`], [`openai`]: HTTP clients (bounded retries in [`http`]).
//! - [`sim`]: `sim/<profile>`, deterministic offline agents.
//! - [`agent`]: the agent loop that drives a server and writes the agent tape.
//! - [`price`], [`cost`]: the bundled price table and the run's cost block.
//!
//! Retries are visible to the caller: every [`ChatResponse`] and every
//! [`LlmError`] carries `log: Vec<Attempt>`, one entry per HTTP attempt with
//! its status and, for a failed attempt, its [`AttemptFailure`] (class,
//! message, backoff). The agent loop tapes each as `llm.request` and each
//! failure as `llm.error`.
//!
//! [`ChatResponse`]: types::ChatResponse
//! [`LlmError`]: types::LlmError
//! [`Attempt`]: types::Attempt
//! [`AttemptFailure`]: types::AttemptFailure

pub mod agent;
pub mod anthropic;
pub mod cost;
pub mod http;
pub mod meter;
pub mod openai;
pub mod price;
pub mod sim;
pub mod stream;
pub mod types;

use std::sync::Arc;

pub use types::{ClientOptions, DEFAULT_MODEL_TIMEOUT, ModelClient, ModelId, ProviderKind};

/// The client for `id`. Keys come only from the environment
/// (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`); a missing key is an error naming
/// the variable. An unknown sim profile is an error listing the profiles.
pub fn client_for(id: &ModelId, opts: &ClientOptions) -> anyhow::Result<Arc<dyn ModelClient>> {
    Ok(match id.provider {
        ProviderKind::Anthropic => Arc::new(anthropic::AnthropicClient::from_env(id, opts)?),
        ProviderKind::OpenAi => Arc::new(openai::OpenAiClient::from_env(id, opts)?),
        ProviderKind::Sim => Arc::new(sim::SimClient::new(id, opts.seed)?),
    })
}
