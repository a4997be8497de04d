//! The suite files beside the tapes: `suite.json` and its extension
//! batches (`suite-x<N>.json`), checked against their hashes when a run
//! reuses them (`--suite`, rewrite-check).

use anyhow::Context as _;
use fitness_shared::record as rec;
use rmcp::model::Tool;
use serde_json::json;

use super::Run;
use crate::model::types::ModelClient;
use crate::suite::GenerationReport;

/// The file an extension batch's suite is kept in, beside `suite.json`.
pub fn batch_file(index: u64) -> String {
    format!("suite-x{index}.json")
}

/// Read a `suite.json` and check that its hash is the hash of its contents.
pub fn load_suite(path: &std::path::Path) -> anyhow::Result<crate::suite::Suite> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("failed to read the suite {}", path.display()))?;
    let suite: crate::suite::Suite = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a suite.json", path.display()))?;
    let hash = crate::suite::suite_hash(&suite.config, suite.seed, &suite.tasks);
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

impl Run<'_> {
    /// Load a suite.json, check its hash, and stand it in for generation:
    /// the ledger counts its tasks and says the suite was reused.
    pub(super) async fn reuse_suite(
        &mut self,
        path: &std::path::Path,
        tools: &[Tool],
        judge: Option<&dyn ModelClient>,
        corr: &str,
    ) -> anyhow::Result<GenerationReport> {
        let suite = load_suite(path)?;
        anyhow::ensure!(
            suite.generator == self.cfg.generator.as_str(),
            "the suite in {} was made by {} but this run registers the generator {}",
            path.display(),
            suite.generator,
            self.cfg.generator
        );
        let (labels, spend) = crate::suite::destructive::assess(tools, judge, &self.agent).await;
        let n = suite.tasks.len() as u64;
        self.agent.event(
            "fitness.suite_reused",
            json!({"path": path.display().to_string(), "hash": suite.hash, "tasks": n}),
            Some(corr),
        );
        Ok(GenerationReport {
            ledger: rec::SuiteLedger {
                candidates: Some(n),
                admitted: Some(n),
                tasks: Some(n),
                rejected_by_rule: Vec::new(),
                trimmed_surplus: Some(0),
                null_screened: None,
                quality: None,
                judge_calls: None,
                limitation: Some(format!(
                    "the suite was reused, not generated in this run: {n} tasks from {} (suite hash {}); candidates and admitted count those tasks",
                    path.file_name().map_or_else(
                        || path.display().to_string(),
                        |f| f.to_string_lossy().into_owned()
                    ),
                    suite.hash
                )),
            },
            suite,
            rejections: Vec::new(),
            screened_out: Vec::new(),
            screen_errors: 0,
            spend: spend.into_iter().collect(),
            destructiveness: labels,
            leaks_at_generation: Vec::new(),
            degenerate: false,
            observed: Default::default(),
            walk: None,
        })
    }
}
