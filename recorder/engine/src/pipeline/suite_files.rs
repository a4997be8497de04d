//! A run that reuses the suite files beside an earlier run's tapes
//! (`--suite`, rewrite-check): the suite stands in for generation, each
//! checked against its hash (`suite::file`).

use fitness_shared::record as rec;
use rmcp::model::Tool;
use serde_json::json;

use super::run::Run;
use crate::model::types::ModelClient;
use crate::suite::GenerationReport;
use crate::suite::hashed::load_suite;

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
        let writers = crate::suite::destructive::writers(tools, &labels);
        self.suite_fits_access(&suite, &writers, path)?;
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
                screen_skipped: None,
                candidates_file: None,
                quality: None,
                judge_calls: None,
                discovery: None,
                act: None,
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
            screen_deletions: Vec::new(),
            screen_errors: 0,
            spend: spend.into_iter().collect(),
            destructiveness: labels,
            writers,
            leaks_at_generation: Vec::new(),
            degenerate: false,
            observed: Default::default(),
            walk: None,
        })
    }

    /// A reused suite fits this run's access ([`super::config::suite_fits`]
    /// checked its mode before the run), and in a read-only run none of its
    /// tasks writes.
    fn suite_fits_access(
        &self,
        suite: &crate::suite::Suite,
        writers: &std::collections::BTreeSet<String>,
        path: &std::path::Path,
    ) -> anyhow::Result<()> {
        let mode = self.cfg.settings.sandbox.mode();
        if mode == rec::AccessMode::ReadOnly {
            for task in &suite.tasks {
                if let Some(call) = task.solution.iter().find(|c| writers.contains(&c.tool)) {
                    anyhow::bail!(
                        "the suite in {} has a task ({}) whose solution calls `{}`, which may write, and this run is read-only: give --sandbox to drive it",
                        path.display(),
                        task.id,
                        call.tool
                    );
                }
            }
        }
        Ok(())
    }
}
