//! A suite and its hash ([`Suite`], [`suite_hash`]): the generator's
//! config, the seed and the tasks, hashed together; kept on disk as
//! `suite.json` beside a run's tapes (and its extension batches), and read
//! back ([`load_suite`]) only when the hash holds.

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::task::Task;

/// Read a `suite.json` and check that its hash is the hash of its contents.
pub fn load_suite(path: &std::path::Path) -> anyhow::Result<Suite> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("failed to read the suite {}", path.display()))?;
    let suite: Suite = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a suite.json", path.display()))?;
    let hash = suite_hash(&suite.config, suite.seed, &suite.tasks);
    anyhow::ensure!(
        hash == suite.hash || !bytes.windows(10).any(|w| w == b"[redacted:"),
        "the suite in {} held a secret when it was written, and the copy on disk has it redacted, so its tasks are no longer the ones its hash {} names; generate a new suite instead",
        path.display(),
        suite.hash
    );
    anyhow::ensure!(
        hash == suite.hash,
        "the suite in {} does not match its hash: it says {} but its config, seed and tasks hash to {}",
        path.display(),
        suite.hash,
        hash
    );
    anyhow::ensure!(
        !suite.tasks.is_empty(),
        "the suite in {} has no tasks",
        path.display()
    );
    Ok(suite)
}

/// The suite that will be driven, and its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    pub generator: String,
    pub config: Value,
    pub seed: u64,
    pub tasks: Vec<Task>,
    pub hash: String,
}

/// sha256 (bare lowercase hex, as the records' `suite_hash`) of the RFC 8785
/// canonical JSON of `{"generator_config", "seed", "tasks"}`. The seed is
/// written as a decimal string: a u64 above 2^53 has no exact JSON number.
pub fn suite_hash(generator_config: &Value, seed: u64, tasks: &[Task]) -> String {
    let doc = json!({
        "generator_config": generator_config,
        "seed": seed.to_string(),
        "tasks": tasks,
    });
    match fitness_shared::integrity::canonical_json(&doc) {
        Ok(bytes) => fitness_shared::integrity::sha256_hex(&bytes),
        // Only an integer beyond 2^53 inside a task can get here; hash the
        // plain serialisation rather than refuse (still deterministic).
        Err(_) => fitness_shared::integrity::sha256_hex(doc.to_string().as_bytes()),
    }
}
