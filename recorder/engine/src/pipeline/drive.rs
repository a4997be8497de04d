//! One model-driven trial with the run's bookkeeping (cancel, spend cap,
//! cost ledger), and the drive that scores the suite.

use fitness_shared::gates;
use fitness_shared::record::{CostTier, GateDetail, GateRecord, Outcome};
use rmcp::model::Tool;
use serde_json::json;

use super::control::Interruption;
use super::run::{Flow, Run};
use super::trials::{TrialKind, Trials};
use super::{record, trials};
use crate::mcp::connect::Session;
use crate::model::agent::TrialOutcome;
use crate::model::cost::Role as Spender;
use crate::model::types::ModelClient;
use crate::suite::task::Task;

impl Run<'_> {
    /// One model-driven trial with the run's bookkeeping: cancellation, the
    /// spend cap, and the cost ledger.
    pub(super) async fn trial(
        &mut self,
        model: &dyn ModelClient,
        role: &str,
        session: &Session,
        trials: &Trials<'_>,
        task: &Task,
        kind: TrialKind,
    ) -> anyhow::Result<TrialOutcome> {
        if let Some(cap) = self.cfg.settings.max_model_calls
            && self.model_calls >= cap
        {
            self.interrupted = Some(Interruption::SpendCap { calls: cap });
            anyhow::bail!("spend cap reached");
        }
        self.stop_if_cancelled()?;
        let mut cancel = self.cancel.clone();
        self.ensure_server(session)?;
        let outcome = tokio::select! {
            outcome = trials.run(model, session, task, kind, &self.agent) => outcome,
            () = cancel.cancelled() => {
                let stop = self.cancelled();
                self.agent.event("fitness.interrupted", json!({"during": kind.corr_id(&task.id)}), Some(&kind.corr_id(&task.id)));
                return Err(stop);
            }
        };
        let threw = outcome.model_errors.len() as u64;
        self.model_calls += u64::from(outcome.model_calls) + threw;
        self.cost.add_calls(
            Spender::Runner,
            model.id(),
            &outcome.usage,
            u64::from(outcome.model_calls),
            u64::from(outcome.calls_without_usage),
            threw,
        );
        if role == "runner"
            && let Some(m) = &outcome.model_reported
        {
            self.runner_reported = Some(m.clone());
        }
        self.progress.advance();
        Ok(outcome)
    }

    pub(super) async fn drive(
        &mut self,
        session: &Session,
        tools: &[Tool],
        runner: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<Flow> {
        self.progress
            .phase("drive", tasks.len() as u64 * self.cfg.settings.reps);
        let mut results = Vec::with_capacity(tasks.len());
        let mut errors = 0u64;
        let mut completed = 0u64;
        for task in tasks {
            let mut reps = Vec::with_capacity(self.cfg.settings.reps as usize);
            for _ in 0..self.cfg.settings.reps {
                let outcome = self
                    .trial(runner, "runner", session, trials, task, TrialKind::Drive)
                    .await?;
                if trials::errored(&outcome) {
                    errors += 1;
                } else {
                    completed += 1;
                }
                reps.push(outcome);
            }
            results.push((task, reps));
        }
        let check = gates::compromised(completed, errors, self.cfg.settings.floors.max_error_rate);
        self.push_gate(GateRecord {
            id: "drive".to_owned(),
            cost_tier: CostTier::Paid,
            ok: !check.compromised,
            verdict: None,
            reason: if check.compromised {
                "compromised"
            } else {
                "ok"
            }
            .to_owned(),
            detail: GateDetail::Drive {
                trials: completed,
                errors,
                max_error_rate: check.max_error_rate,
                compromised: check.compromised,
            },
            source_detail: None,
        });
        if check.compromised {
            return Ok(Flow::Stop {
                outcome: Outcome::Compromised,
                gate: "drive".to_owned(),
            });
        }
        let runner_model = self
            .runner_reported
            .clone()
            .unwrap_or_else(|| self.cfg.settings.runner.to_string());
        let score = record::score(&runner_model, tools, &results, &self.prices);
        self.progress.finish_phase(&format!(
            "first try {} of {}",
            score.first_try.k, score.first_try.n
        ));
        self.score = Some(score);
        Ok(Flow::Continue)
    }
}
