//! The cheap gate: three null arms (random arguments, no tools, stubbed
//! empty results), killed early when already certain, and decided again
//! against the agent's rate after the drive.

use fitness_shared::gates::{self, AgentSignal, NullArm, NullBaseline, NullOutcome};
use fitness_shared::record::{self as rec, CostTier, GateDetail, GateRecord};
use rmcp::model::Tool;
use serde_json::json;

use super::run::{Flow, Run, name_of};
use super::sandbox::Server;
use super::trials::{Job, TrialKind, Trials};
use super::{registration, trials};
use crate::model::types::ModelClient;
use crate::suite::task::Task;

pub(super) fn pct(x: Option<f64>) -> String {
    x.map_or("unmeasured".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

impl Run<'_> {
    pub(super) async fn null_gate(
        &mut self,
        server: &Server,
        tools: &[Tool],
        runner: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<Flow> {
        let labels = [
            TrialKind::NullRandom,
            TrialKind::NullNoTools,
            TrialKind::NullStubbedEmpty,
        ];
        self.null_arms = labels
            .iter()
            .map(|k| NullArm {
                label: k.null_label().to_owned(),
                k: 0,
                n: 0,
            })
            .collect();
        let mut errored = [0u64; 3];
        // Of those, the replies the harness could not use (the rest failed
        // at the model API).
        let mut unusable = [0u64; 3];
        // Each task's first-turn input in the no-tools and stubbed-empty
        // arms: the same system text and prompt, with and without the list.
        let mut first_inputs: [Vec<Option<u64>>; 3] = Default::default();
        for (i, kind) in labels.into_iter().enumerate() {
            self.progress
                .phase(&format!("null {}", kind.null_label()), tasks.len() as u64);
            let (mut k, mut n) = (0, 0);
            if kind == TrialKind::NullRandom {
                // Zero tokens: tool calls only, one at a time.
                for task in tasks {
                    self.stop_if_cancelled()?;
                    let passed = self.random_arm(server, tools, task, i as u64).await?;
                    self.progress.advance();
                    n += 1;
                    k += u64::from(passed);
                }
            } else {
                let jobs: Vec<Job<'_>> = tasks.iter().map(|t| (t, kind)).collect();
                let outcomes = self.trials(runner, "runner", server, trials, &jobs).await?;
                first_inputs[i] = outcomes.iter().map(|o| o.first_input).collect();
                self.tool_list = Some(self.tool_list_cost(&first_inputs));
                for (task, outcome) in tasks.iter().zip(&outcomes) {
                    if trials::errored(outcome) || trials::unusable_reply(outcome) {
                        errored[i] += 1;
                        unusable[i] += u64::from(trials::unusable_reply(outcome));
                        continue;
                    }
                    n += 1;
                    k += u64::from(trials::answered(task, outcome));
                }
            }
            self.null_arms[i].k = k;
            self.null_arms[i].n = n;
            self.progress.finish_phase(&format!("{k} of {n} passed"));
            // An arm's failed calls are our measurement failing: gated on
            // their own, never left out of the arm's denominator unseen.
            self.null_errors = errored;
            let check = gates::compromised(n, errored[i], self.cfg.settings.floors.max_error_rate);
            if check.compromised {
                let label = kind.null_label();
                return Ok(self.record_null_compromised(label, &check, &errored, unusable[i]));
            }
            // Early kill: decided before the next arm when already certain.
            let decision = gates::null_baseline_with_ratio(
                &self.null_arms,
                AgentSignal::NotYetMeasured,
                self.cfg.settings.floors.null_ratio,
            )?;
            if decision.outcome == NullOutcome::Kill {
                return Ok(self.record_null(&decision, &errored));
            }
        }
        let decision = gates::null_baseline_with_ratio(
            &self.null_arms,
            AgentSignal::NotYetMeasured,
            self.cfg.settings.floors.null_ratio,
        )?;
        Ok(self.record_null(&decision, &errored))
    }

    /// The tool list's cost per turn from the arms run so far: the median
    /// over tasks of the stubbed-empty arm's first-turn input less the
    /// no-tools arm's (both reported), or why there is none.
    fn tool_list_cost(&self, first_inputs: &[Vec<Option<u64>>; 3]) -> rec::ToolListCost {
        let runner = &self.cfg.settings.runner;
        let model = runner.to_string();
        let estimate = runner.provider == crate::model::types::ProviderKind::Sim;
        let [_, without, with] = first_inputs;
        if with.is_empty() {
            return rec::ToolListCost::unmeasured(
                &model,
                estimate,
                "the stubbed-empty arm did not run (the null gate decided before it), so there is no pair",
            );
        }
        let pairs: Vec<(u64, u64)> = with
            .iter()
            .zip(without)
            .filter_map(|(w, wo)| Some(((*w)?, (*wo)?)))
            .collect();
        rec::ToolListCost::measure(&model, estimate, &pairs)
    }

    /// The zero-token null: the expected tool called with random
    /// schema-valid arguments; its result text is the answer.
    pub(super) async fn random_arm(
        &mut self,
        server: &Server,
        tools: &[Tool],
        task: &Task,
        arm: u64,
    ) -> anyhow::Result<bool> {
        use rand::SeedableRng as _;
        use rand::rngs::ChaCha8Rng;
        let corr = TrialKind::NullRandom.corr_id(&task.id);
        let Some(tool) = task
            .expected_tools
            .iter()
            .find_map(|name| tools.iter().find(|t| t.name == name.as_str()))
        else {
            return Ok(false);
        };
        let seed = self.cfg.settings.seed ^ registration::stable_hash(&corr) ^ arm;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let schema = serde_json::Value::Object((*tool.input_schema).clone());
        let limits = crate::suite::schema_args::Limits::default().within(self.cfg.settings.timeout);
        let args =
            match crate::suite::schema_args::valid_arguments_within(&schema, &mut rng, &limits) {
                Ok(args) => args,
                // No valid arguments, no call: the arm cannot pass this task.
                Err(why) => {
                    self.mcp.event(
                        "fitness.arguments_unsatisfiable",
                        json!({"tool": tool.name, "why": why.to_string()}),
                        Some(&corr),
                    );
                    return Ok(false);
                }
            };
        // A change's check reads the state after the arm's call: the arm
        // starts from the state put back, like every other.
        if task.is_act() {
            server.wrote();
        }
        server
            .before_trial(&corr)
            .await
            .map_err(|e| self.failed(e))?;
        let session = server.session()?;
        self.ensure_server(&session)?;
        session.set_corr_id(Some(&corr));
        let result = session.call_tool(&tool.name, args).await;
        session.set_corr_id(None);
        if self.access.as_ref().is_some_and(|a| a.writes(&tool.name)) {
            server.wrote();
        }
        let passed = match (&task.state_check, result) {
            // A change is checked on the state the call left, whatever it
            // answered.
            (Some(check), _) if task.is_act() => task.check.check(
                &crate::suite::act::read_state(&session, check, &corr, self.cfg.settings.timeout)
                    .await,
            ),
            (_, Ok(r)) if r.is_error != Some(true) => {
                task.check.check(&crate::model::agent::result_text(&r))
            }
            _ => false,
        };
        self.agent.event(
            "fitness.task_end",
            json!({"taskId": task.id, "success": passed, "checkResult": passed,
                   "failure": (!passed).then_some("wrong_answer"), "toolCalls": 1}),
            Some(&corr),
        );
        Ok(passed)
    }

    pub(super) fn record_null(&mut self, decision: &NullBaseline, errored: &[u64; 3]) -> Flow {
        let mut detail = GateDetail::NullBaseline {
            rates: null_rates(decision, errored),
            t_null: decision.t_null,
            t_agent: decision.t_agent,
            kill_threshold: decision.kill_threshold,
            ratio: Some(decision.ratio),
            percentile: Some(decision.percentile as u64),
            decision: Some(name_of(&decision.outcome)),
            explain: None,
        };
        // The record's words are the page's: each arm against the line,
        // and the reading only the arms that ran support.
        let explain = fitness_shared::reading::null_baseline::NullReading::of(&detail)
            .map(|r| r.explain())
            .unwrap_or_default();
        let errors: u64 = errored.iter().sum();
        let explain = if errors > 0 {
            format!(
                "{explain} {errors} null trials errored: each arm's errors are gated apart against {} of its trials.",
                pct(Some(self.cfg.settings.floors.max_error_rate))
            )
        } else {
            explain
        };
        if let GateDetail::NullBaseline { explain: e, .. } = &mut detail {
            *e = Some(explain);
        }
        let halts = decision.halts;
        self.push_gate(GateRecord {
            id: "null_baseline".to_owned(),
            cost_tier: CostTier::Cheap,
            ok: !halts,
            verdict: None,
            reason: name_of(&decision.reason),
            detail,
            source_detail: None,
        });
        match decision.refusal {
            Some(code) if halts => Flow::Stop {
                outcome: code,
                gate: "null_baseline".to_owned(),
            },
            _ => Flow::Continue,
        }
    }

    /// The null gate refused as COMPROMISED: the arm `label`'s calls
    /// failed over the limit.
    fn record_null_compromised(
        &mut self,
        label: &str,
        check: &gates::ErrorRateCheck,
        errored: &[u64; 3],
        unusable: u64,
    ) -> Flow {
        let decision = gates::null_baseline_with_ratio(
            &self.null_arms,
            AgentSignal::NotYetMeasured,
            self.cfg.settings.floors.null_ratio,
        )
        .ok();
        let api = check.errors.saturating_sub(unusable);
        let what = match (api, unusable) {
            (_, 0) => format!("The model API failed {api}"),
            (0, u) => format!(
                "The model wrote a reply the harness could not use (it repeated itself, or its API could not read it) in {u}"
            ),
            (a, u) => format!(
                "The model API failed {a}, and the model wrote a reply the harness could not use in {u},"
            ),
        };
        let explain = format!(
            "{what} of the {} trials of the {label} arm ({}), over the limit of {}: our measurement failed, not the server, so the null baseline is not decided.",
            check.completed + check.errors,
            pct(Some(check.error_rate)),
            pct(Some(check.max_error_rate))
        );
        self.push_gate(GateRecord {
            id: "null_baseline".to_owned(),
            cost_tier: CostTier::Cheap,
            ok: false,
            verdict: None,
            reason: "compromised".to_owned(),
            detail: GateDetail::NullBaseline {
                rates: decision
                    .as_ref()
                    .map(|d| null_rates(d, errored))
                    .unwrap_or_default(),
                t_null: decision.as_ref().and_then(|d| d.t_null),
                t_agent: None,
                kill_threshold: decision.as_ref().and_then(|d| d.kill_threshold),
                ratio: Some(self.cfg.settings.floors.null_ratio),
                percentile: decision.as_ref().map(|d| d.percentile as u64),
                decision: Some("COMPROMISED".to_owned()),
                explain: Some(explain),
            },
            source_detail: None,
        });
        Flow::Stop {
            outcome: rec::Outcome::Compromised,
            gate: "null_baseline".to_owned(),
        }
    }

    pub(super) fn null_redecide(&mut self) -> anyhow::Result<Flow> {
        let Some(score) = &self.score else {
            return Ok(Flow::Continue);
        };
        let agent = AgentSignal::Measured {
            k: score.first_try.k,
            n: score.first_try.n,
        };
        let decision = gates::null_baseline_with_ratio(
            &self.null_arms,
            agent,
            self.cfg.settings.floors.null_ratio,
        )?;
        let errored = self.null_errors;
        Ok(self.record_null(&decision, &errored))
    }
}

/// Each arm's rate as the record keeps it, with the trials the model API
/// failed beside it (in the order the arms ran: random, no tools, stubbed).
fn null_rates(decision: &NullBaseline, errored: &[u64; 3]) -> Vec<rec::NullRate> {
    decision
        .rates
        .iter()
        .enumerate()
        .map(|(i, r)| rec::NullRate {
            label: r.label.clone(),
            k: r.k,
            n: r.n,
            rate: r.rate.unwrap_or(0.0),
            errors: errored.get(i).copied().unwrap_or(0),
        })
        .collect()
}
