//! The paid gate: reference trials handed the answer key, with the
//! registered extension batches when the verdict is unresolved.

use anyhow::Context as _;
use fitness_shared::gates::{self, BatchCounts, ExtensionDecision};
use fitness_shared::record::{
    self as rec, CostTier, ExtensionBatch, GateDetail, GateRecord, GateVerdict, VerdictOutcome,
};
use rmcp::model::Tool;

use super::run::{Flow, Run, name_of};
use super::sandbox::Server;
use super::trials::{Job, TrialKind, Trials};
use super::{record, tape_reading, trials};
use crate::model::types::ModelClient;
use crate::suite::GenerateOptions;
use crate::suite::task::Task;
use fitness_shared::site::suite_batch_file as batch_file;

pub(super) fn verdict_outcome(o: gates::GateOutcome) -> VerdictOutcome {
    match o {
        gates::GateOutcome::Pass => VerdictOutcome::Pass,
        gates::GateOutcome::Fail => VerdictOutcome::Fail,
        gates::GateOutcome::Extend => VerdictOutcome::Extend,
    }
}

/// What an extension batch's generation left for the ledger: task ids,
/// candidates, batch suite hash, drops, seed.
type BatchInfo = (Vec<String>, u64, Option<String>, rec::BatchDrops, u64);

/// The models a gate's trials and an extension batch's generation call.
pub(super) struct Clients<'a> {
    pub runner: &'a dyn ModelClient,
    pub reference: &'a dyn ModelClient,
    pub judge: Option<&'a dyn ModelClient>,
}

impl Run<'_> {
    /// Reference trials over a batch of tasks; counts for the ledger.
    pub(super) async fn construct_batch(
        &mut self,
        server: &Server,
        reference: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<BatchCounts> {
        let mut counts = BatchCounts {
            tasks: tasks.len() as u64,
            ..BatchCounts::default()
        };
        let jobs: Vec<Job<'_>> = tasks
            .iter()
            .flat_map(|t| (0..self.cfg.settings.reps).map(move |_| (t, TrialKind::Construct)))
            .collect();
        let outcomes = self
            .trials(reference, "reference", server, trials, &jobs)
            .await?;
        for (&(task, _), outcome) in jobs.iter().zip(&outcomes) {
            if trials::errored(outcome) {
                counts.errors += 1;
            } else {
                counts.trials += 1;
                counts.successes += u64::from(trials::reached_through_server(task, outcome));
            }
        }
        Ok(counts)
    }

    /// The construct gate over the suite (`driven`), consuming registered
    /// extension batches while the verdict is unresolved; every task it
    /// checked is left in `driven`.
    pub(super) async fn construct(
        &mut self,
        server: &Server,
        clients: &Clients<'_>,
        trials: &Trials<'_>,
        driven: &mut Vec<Task>,
    ) -> anyhow::Result<Flow> {
        let prereg = self.gate_prereg();
        self.progress.phase("construct", prereg.registered_trials());
        let first = self
            .construct_batch(server, clients.reference, trials, &driven.clone())
            .await?;
        let mut ledger = vec![first];
        let mut batch_info: Vec<BatchInfo> = Vec::new();
        let resolution = loop {
            let res = gates::resolve_extensions_with(
                &prereg,
                &ledger,
                self.cfg.settings.floors.max_error_rate,
            )?;
            let ExtensionDecision::ConsumeBatch { index } = res.decision else {
                break res;
            };
            self.progress.finish_phase(&format!(
                "unresolved at {} of {}: extension batch {index}",
                res.pooled.successes, res.pooled.trials
            ));
            let (info, tasks) = self
                .extension_batch(index, server, clients, trials.tools, driven)
                .await?;
            // The batch's own failed calls are gated as the suite's were.
            if let Flow::Stop { outcome, gate } = self.batch_call_errors(index, &info.3) {
                return Ok(Flow::Stop { outcome, gate });
            }
            batch_info.push(info);
            self.progress.phase(
                &format!("extension {index}"),
                tasks.len() as u64 * self.cfg.settings.reps,
            );
            // A batch short of its registered size voids the run: nothing
            // is paid for it (the protocol reads its task count and stops).
            let counts = if (tasks.len() as u64) < self.cfg.settings.extension_size {
                gates::BatchCounts {
                    tasks: tasks.len() as u64,
                    ..gates::BatchCounts::default()
                }
            } else {
                self.construct_batch(server, clients.reference, trials, &tasks)
                    .await?
            };
            driven.extend(tasks);
            ledger.push(counts);
        };
        self.record_extensions(&resolution, batch_info);
        Ok(self.record_construct(&prereg, &resolution))
    }

    /// Extension batch `index`: generated anew (its seed follows the run's),
    /// or the one kept beside a reused suite; written beside the tapes.
    async fn extension_batch(
        &mut self,
        index: u64,
        server: &Server,
        clients: &Clients<'_>,
        tools: &[Tool],
        driven: &[Task],
    ) -> anyhow::Result<(BatchInfo, Vec<Task>)> {
        let seed = self.cfg.settings.seed.wrapping_add(index);
        let opts = GenerateOptions {
            generator: self.cfg.generator,
            n_tasks: self.cfg.settings.extension_size as usize,
            overgen_factor: self.cfg.settings.overgen_factor,
            seed,
            credential: self.cfg.settings.credential,
            screen: self.cfg.settings.screen,
            id_prefix: format!("x{index}-"),
            exclude_prompts: driven.iter().map(|t| t.prompt.clone()).collect(),
            seed_handles: server
                .target()
                .operator_roots(!self.cfg.settings.sandbox.writes_at_generation()),
            operator_files: server
                .target()
                .operator_files(!self.cfg.settings.sandbox.writes_at_generation()),
            watched: server.target().watched(vec![self.dir.clone()]),
            // A batch short of its registered size voids the run.
            must_reach: Some(self.suite_floors(self.cfg.settings.extension_size)),
            access: self.cfg.settings.sandbox.mode(),
            writes: self.cfg.settings.sandbox.writes_at_generation(),
            concurrency: self.width(),
            hints: self.cfg.settings.hints.clone(),
            fresh: Some(server.target().clone()),
        };
        let corr = format!("generate::x{index}");
        // A reused suite brings its extension batches along.
        let kept = self
            .cfg
            .settings
            .fixed_suite
            .as_ref()
            .map(|p| p.with_file_name(batch_file(index)))
            .filter(|p| p.is_file());
        // The batch is generated from the state trials start from, and its
        // own writes (a sandbox's) are the state later trials start from.
        server.before_trial(&corr).await?;
        let session = server.session()?;
        session.set_corr_id(Some(&corr));
        let batch = match &kept {
            Some(path) => self.reuse_suite(path, tools, clients.judge, &corr).await,
            None => {
                crate::suite::generate(
                    &session,
                    tools,
                    self.instructions.as_deref(),
                    &opts,
                    clients.judge,
                    self.cfg.settings.screen.then_some(clients.runner),
                    &self.agent,
                )
                .await
            }
        };
        session.set_corr_id(None);
        drop(session);
        self.check_spend()?;
        let batch = batch.with_context(|| format!("generating extension batch {index} failed"))?;
        server.generated()?;
        self.add_spend(&batch.spend);
        self.rejected
            .extend(batch.rejections.iter().map(crate::suite::Rejection::listed));
        self.screened_out
            .extend(batch.screen_deletions.iter().cloned());
        self.write_json(&self.dir.join(batch_file(index)), &batch.suite)?;
        let drops = record::batch_drops(&batch);
        let tasks = batch.suite.tasks.clone();
        let info = (
            tasks.iter().map(|t| t.id.clone()).collect(),
            batch.ledger.candidates.unwrap_or(0),
            Some(batch.suite.hash.clone()),
            drops,
            seed,
        );
        Ok((info, tasks))
    }

    /// Each consumed extension batch, for the record.
    fn record_extensions(&mut self, resolution: &gates::ExtensionResolution, info: Vec<BatchInfo>) {
        for (step, (ids, generated, hash, drops, seed)) in resolution.steps.iter().zip(info) {
            self.extensions.push(ExtensionBatch {
                index: step.index as u32,
                gate: "construct".to_owned(),
                tasks_added: step.tasks_added,
                trials_added: step.trials_added,
                pooled_before: rec::Count {
                    k: step.pooled_before.k,
                    n: step.pooled_before.n,
                },
                pooled_after: rec::Count {
                    k: step.pooled_after.k,
                    n: step.pooled_after.n,
                },
                verdict_before: verdict_outcome(step.verdict_before),
                verdict_after: verdict_outcome(step.verdict_after),
                seed: Some(seed),
                batch_suite_hash: hash,
                short: step.tasks_added < self.cfg.settings.extension_size,
                task_ids: ids,
                generated: Some(generated),
                dropped: Some(drops),
            });
        }
    }

    /// The construct gate's record, with what the wire tape shows when it
    /// did not pass; where the run goes from here.
    fn record_construct(
        &mut self,
        prereg: &gates::PreRegistration,
        resolution: &gates::ExtensionResolution,
    ) -> Flow {
        let (outcome, reason) = match &resolution.decision {
            ExtensionDecision::Passed => (None, "ok".to_owned()),
            ExtensionDecision::Refused {
                outcome,
                reason: reason @ gates::ExtensionReason::IncompleteBatch,
            } => {
                if let Some(step) = resolution.steps.last() {
                    let size = self.cfg.settings.extension_size;
                    self.interrupted
                        .get_or_insert(super::control::Interruption::Failed(format!(
                            "extension batch {} added {} of the {size} registered tasks, so the construct gate could not read its registered size",
                            step.index, step.tasks_added
                        )));
                }
                (Some(*outcome), name_of(reason))
            }
            ExtensionDecision::Refused { outcome, reason } => (Some(*outcome), name_of(reason)),
            ExtensionDecision::ConsumeBatch { .. } => unreachable!("the loop consumes every batch"),
        };
        let tape_reading = if outcome.is_some() {
            tape_reading::read(
                &self.dir.join(fitness_shared::site::MCP_TAPE),
                "::construct",
            )
            .ok()
        } else {
            None
        };
        let pooled = resolution.pooled;
        let verdict = resolution.verdict.as_ref();
        self.progress.finish_phase(&format!(
            "{} of {} reached the answer through the server",
            pooled.successes, pooled.trials
        ));
        if let Some(reading) = &tape_reading {
            let finding = fitness_shared::reading::construct::finding(reading)
                .map(|f| format!(" {f}"))
                .unwrap_or_default();
            self.own_notes.push(format!(
                "Construct gate, {}{finding}",
                fitness_shared::reading::construct::counts_text(reading).replacen(
                    "Read from",
                    "read from",
                    1
                )
            ));
        }
        // The gate's verdict is what the pooled count resolved to: after
        // the last registered batch an unresolved gate is a FAIL.
        let resolved = resolution.resolved();
        self.push_gate(GateRecord {
            id: "construct".to_owned(),
            cost_tier: CostTier::Paid,
            ok: outcome.is_none(),
            verdict: verdict.map(|v| GateVerdict {
                outcome: verdict_outcome(resolved.unwrap_or(v.outcome)),
                k: v.k,
                n: v.n,
                threshold: v.threshold,
                alpha: v.alpha,
                p_value: v.p_value,
            }),
            reason,
            detail: GateDetail::Construct {
                n: pooled.trials,
                n_intended: Some(prereg.registered_trials()),
                errors: pooled.errors,
                max_error_rate: Some(resolution.errors.max_error_rate),
                compromised: resolution.errors.compromised,
                reps: Some(self.cfg.settings.reps),
                published: verdict.map(|v| rec::PublishedVerdict {
                    outcome: verdict_outcome(v.outcome),
                    raw_outcome: verdict_outcome(v.raw_outcome),
                    downgraded: v.downgraded,
                    wilson_low: v.wilson_low,
                    wilson_high: v.wilson_high,
                    required_n: v.required_n.unwrap_or(0),
                    achieved_power: v.achieved_power,
                    reason: name_of(&v.reason),
                }),
                pooled: Some(rec::Count {
                    k: pooled.successes,
                    n: pooled.trials,
                }),
                extensions_consumed: resolution.steps.len() as u64,
                tape_reading,
            },
            source_detail: None,
        });
        match outcome {
            None => Flow::Continue,
            Some(code) => Flow::Stop {
                outcome: code,
                gate: "construct".to_owned(),
            },
        }
    }
}
