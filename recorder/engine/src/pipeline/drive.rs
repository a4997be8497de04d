//! The trials of a stage, N in flight at once, with the run's bookkeeping
//! (cancel, spend cap, cost ledger), and the drive that scores the suite.

use fitness_shared::gates;
use fitness_shared::record::{CostTier, GateDetail, GateRecord, Outcome};
use rmcp::model::Tool;
use serde_json::json;

use super::control::Interruption;
use super::run::{Flow, Run};
use super::sandbox::Server;
use super::trials::{Job, TrialKind, Trials};
use super::{registration, score, trials};
use crate::model::agent::TrialOutcome;
use crate::model::cost::Role as Spender;
use crate::model::types::{LlmErrorClass, ModelClient};
use crate::suite::task::Task;

/// Why a trial in flight could not finish: the stage ends.
enum Halt {
    Cancelled,
    Lost(String),
    Failed(anyhow::Error),
}

impl Run<'_> {
    /// The trials of one stage, `concurrency` in flight at once, with the
    /// run's bookkeeping (cancellation, the spend cap, the cost ledger);
    /// their outcomes in the order of `jobs`, whatever order they finished
    /// in. A trial that cannot finish (the operator stopped the run, the
    /// server is gone, the spend cap refused a call) ends the stage: the
    /// trials still in flight are dropped, and every trial that finished is
    /// still in the cost ledger.
    pub(super) async fn trials(
        &mut self,
        model: &dyn ModelClient,
        role: &str,
        server: &Server,
        trials: &Trials<'_>,
        jobs: &[Job<'_>],
    ) -> anyhow::Result<Vec<TrialOutcome>> {
        use futures::StreamExt as _;
        self.check_spend()?;
        self.stop_if_cancelled()?;
        let width = self.width();
        let mut done: Vec<Option<TrialOutcome>> = vec![None; jobs.len()];
        let mut halt = None;
        // The repetitions of one task share its corr_id: they take turns, so
        // the tapes never interleave two of them and each reads as one
        // conversation after another. Other tasks fill the width.
        let turns: std::collections::HashMap<&str, tokio::sync::Mutex<()>> = jobs
            .iter()
            .map(|(task, _)| (task.id.as_str(), tokio::sync::Mutex::new(())))
            .collect();
        {
            let this = &*self;
            let turns = &turns;
            let mut flight = futures::stream::iter(jobs.iter().enumerate())
                .map(|(i, &(task, kind))| async move {
                    let _turn = match turns.get(task.id.as_str()) {
                        Some(m) => Some(m.lock().await),
                        None => None,
                    };
                    (i, this.one_trial(model, server, trials, task, kind).await)
                })
                .buffer_unordered(width);
            while let Some((i, result)) = flight.next().await {
                match result {
                    Ok(outcome) => {
                        self.progress.advance();
                        let stop = self.meter.reached().is_some();
                        done[i] = Some(outcome);
                        if stop {
                            break;
                        }
                    }
                    Err(why) => {
                        halt = Some(why);
                        break;
                    }
                }
            }
        }
        for outcome in done.iter().flatten() {
            self.account(model, role, outcome);
        }
        match halt {
            Some(Halt::Cancelled) => {
                let stop = self.cancelled();
                self.agent
                    .event("fitness.interrupted", json!({"during": role}), None);
                return Err(stop);
            }
            Some(Halt::Lost(why)) => {
                self.interrupted = Some(Interruption::Failed(why.clone()));
                anyhow::bail!(why);
            }
            Some(Halt::Failed(e)) => return Err(self.failed(e)),
            None => {}
        }
        self.check_spend()?;
        Ok(done.into_iter().flatten().collect())
    }

    /// One trial, read-only on the run: it may wait on the session's turn
    /// for its tool calls while other trials are in flight.
    async fn one_trial(
        &self,
        model: &dyn ModelClient,
        server: &Server,
        trials: &Trials<'_>,
        task: &Task,
        kind: TrialKind,
    ) -> Result<TrialOutcome, Halt> {
        if self.cancel.is_cancelled() {
            return Err(Halt::Cancelled);
        }
        let mut cancel = self.cancel.clone();
        let corr = kind.corr_id(&task.id);
        // An act task's check reads the state after every arm's trial, so
        // every arm's trial starts from the state put back, always (its
        // hash on the wire tape).
        if task.is_act() {
            server.wrote();
        }
        if kind.reaches_server() || task.is_act() {
            server.before_trial(&corr).await.map_err(Halt::Failed)?;
        }
        let session = server.session().map_err(Halt::Failed)?;
        if let Some(why) = session.lost() {
            return Err(Halt::Lost(why));
        }
        let outcome = tokio::select! {
            outcome = trials.run(model, &session, task, kind, &self.agent) => outcome,
            () = cancel.cancelled() => {
                self.agent.event("fitness.interrupted", json!({"during": corr}), Some(&corr));
                return Err(Halt::Cancelled);
            }
        };
        let mut outcome = outcome;
        if outcome.calls.iter().any(|c| c.writes && !c.blocked) {
            server.wrote();
        }
        // An act task is checked by the state the trial left: reads the
        // harness makes on the wire tape (`<trial>::state`), never shown
        // to the agent.
        if let Some(check) = &task.state_check {
            outcome.state = Some(
                crate::suite::act::read_state(&session, check, &corr, self.cfg.settings.timeout)
                    .await,
            );
        }
        // The trial's verdict as its stage counts it, on the tape beside the
        // trial (the replay shows it at the end of the conversation).
        let check = super::trials::answered(task, &outcome);
        let success = match kind {
            TrialKind::Construct => super::trials::reached_through_server(task, &outcome),
            _ => check,
        };
        self.agent.event(
            "fitness.task_end",
            json!({"taskId": task.id, "success": success, "checkResult": check,
                   "failure": (!success).then(|| score::failure_of(&outcome)),
                   "toolCalls": outcome.calls.len()}),
            Some(&corr),
        );
        Ok(outcome)
    }

    /// A finished trial in the cost ledger. Calls the spend cap refused were
    /// never sent: they are no one's spend.
    fn account(&mut self, model: &dyn ModelClient, role: &str, outcome: &TrialOutcome) {
        let threw = outcome
            .model_errors
            .iter()
            .filter(|e| e.class != LlmErrorClass::SpendCap)
            .count() as u64;
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
    }

    pub(super) async fn drive(
        &mut self,
        server: &Server,
        tools: &[Tool],
        runner: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<Flow> {
        self.progress
            .phase("drive", tasks.len() as u64 * self.cfg.settings.reps);
        let mut errors = 0u64;
        let mut completed = 0u64;
        // Trials run in an order shuffled by the seed: a score that moved
        // with the order would be measuring what earlier trials left behind.
        let order = trial_order(tasks.len(), self.cfg.settings.reps, self.cfg.settings.seed);
        let jobs: Vec<Job<'_>> = order
            .iter()
            .map(|&(t, _)| (&tasks[t], TrialKind::Drive))
            .collect();
        let outcomes = self.trials(runner, "runner", server, trials, &jobs).await?;
        let mut reps: Vec<Vec<Option<TrialOutcome>>> = tasks
            .iter()
            .map(|_| vec![None; self.cfg.settings.reps as usize])
            .collect();
        for (&(t, rep), outcome) in order.iter().zip(outcomes) {
            if trials::errored(&outcome) {
                errors += 1;
            } else {
                completed += 1;
            }
            reps[t][rep] = Some(outcome);
        }
        let results: Vec<(&Task, Vec<TrialOutcome>)> = tasks
            .iter()
            .zip(reps)
            .map(|(task, reps)| (task, reps.into_iter().flatten().collect()))
            .collect();
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
        let score = score::score(&runner_model, tools, &results, &self.prices);
        self.progress.finish_phase(&format!(
            "first try {} of {}",
            score.first_try.k, score.first_try.n
        ));
        self.score = Some(score);
        Ok(Flow::Continue)
    }
}

/// The drive's (task, repetition) pairs in the order the seed shuffles
/// them.
fn trial_order(tasks: usize, reps: u64, seed: u64) -> Vec<(usize, usize)> {
    use rand::SeedableRng as _;
    use rand::seq::SliceRandom as _;
    let mut order: Vec<(usize, usize)> = (0..tasks)
        .flat_map(|t| (0..reps as usize).map(move |r| (t, r)))
        .collect();
    let mut rng =
        rand::rngs::ChaCha8Rng::seed_from_u64(seed ^ registration::stable_hash("drive order"));
    order.shuffle(&mut rng);
    order
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_trial_runs_once_in_an_order_the_seed_decides() {
        let a = super::trial_order(5, 3, 1);
        let b = super::trial_order(5, 3, 2);
        assert_eq!(a.len(), 15);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        let mut sorted_b = b.clone();
        sorted_b.sort_unstable();
        assert_eq!(sorted, sorted_b, "the same trials");
        assert_ne!(a, b, "in another order");
        assert_eq!(
            a,
            super::trial_order(5, 3, 1),
            "the same seed, the same order"
        );
    }
}
