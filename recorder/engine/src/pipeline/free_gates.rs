//! The free gates, which need no model call: the pre-registration's power
//! plan (before the server is touched), the judge's synthesis errors, the
//! structural floors and answer leaks.

use anyhow::Context as _;
use fitness_shared::gates::{self, SuiteFates};
use fitness_shared::record::{CostTier, GateDetail, GateRecord, Outcome};
use rmcp::model::Tool;
use serde_json::json;

use super::config;
use super::null_gate::pct;
use super::run::{Flow, Run, name_of};
use crate::suite::task::Task;

/// What a gate on our own calls' failures records.
struct OwnCalls {
    id: &'static str,
    /// The note's lead word.
    note: &'static str,
    failed_reason: &'static str,
    failures: u64,
    compromised: bool,
    explain: String,
    detail: GateDetail,
}

impl Run<'_> {
    /// The judge's synthesis calls, gated like the drive's model errors:
    /// over the error limit the run is COMPROMISED at `synthesis`, our
    /// measurement's failure, never INSUFFICIENT_SURFACE.
    pub(super) fn synthesis_errors(&mut self) -> Flow {
        let Some(calls) = self
            .generation
            .as_ref()
            .and_then(|g| g.ledger.judge_calls.clone())
        else {
            return Flow::Continue;
        };
        let check = gates::compromised(
            calls.made.saturating_sub(calls.failed),
            calls.failed,
            self.cfg.settings.floors.max_error_rate,
        );
        let explain = format!(
            "The judge was asked {} times for candidate tasks and {} calls failed{}; the limit is {}.",
            calls.made,
            calls.failed,
            calls
                .last_error
                .as_deref()
                .map(|e| format!(" (last: {e})"))
                .unwrap_or_default(),
            pct(Some(check.max_error_rate))
        );
        self.own_calls_gate(OwnCalls {
            id: "synthesis",
            note: "Synthesis",
            failed_reason: "judge_failed",
            failures: calls.failed,
            compromised: check.compromised,
            detail: GateDetail::Synthesis {
                calls: calls.made,
                failures: calls.failed,
                max_error_rate: check.max_error_rate,
                compromised: check.compromised,
                explain: Some(explain.clone()),
            },
            explain,
        })
    }

    /// The null screen's calls: a call that failed kept its candidate
    /// unscreened. Gated like the judge's: over the error limit the run is
    /// COMPROMISED at `screen`, our measurement's failure.
    pub(super) fn screen_errors(&mut self) -> Flow {
        let Some(count) = self
            .generation
            .as_ref()
            .and_then(|g| g.ledger.null_screened.clone())
        else {
            return Flow::Continue;
        };
        let check = gates::compromised(
            count.screened.saturating_sub(count.errors),
            count.errors,
            self.cfg.settings.floors.max_error_rate,
        );
        let explain = format!(
            "The runner was asked to screen {} admitted candidates with no tools; {} calls failed and their candidates were kept unscreened; the limit is {}.",
            count.screened,
            count.errors,
            pct(Some(check.max_error_rate))
        );
        self.own_calls_gate(OwnCalls {
            id: "screen",
            note: "Screen",
            failed_reason: "screen_failed",
            failures: count.errors,
            compromised: check.compromised,
            detail: GateDetail::Screen {
                calls: count.screened,
                failures: count.errors,
                max_error_rate: check.max_error_rate,
                compromised: check.compromised,
                explain: Some(explain.clone()),
            },
            explain,
        })
    }

    /// An extension batch's own calls that failed (the judge's synthesis,
    /// the screen), counted in its drops and gated as the main suite's:
    /// a gate record when any failed, COMPROMISED over the limit.
    pub(super) fn batch_call_errors(
        &mut self,
        index: u64,
        drops: &fitness_shared::record::BatchDrops,
    ) -> Flow {
        let limit = self.cfg.settings.floors.max_error_rate;
        let judge = gates::compromised(
            drops.judge_calls.saturating_sub(drops.judge_errors),
            drops.judge_errors,
            limit,
        );
        if drops.judge_errors > 0 {
            let explain = format!(
                "Extension batch {index}: the judge was asked {} times for candidate tasks and {} calls failed; the limit is {}.",
                drops.judge_calls,
                drops.judge_errors,
                pct(Some(judge.max_error_rate))
            );
            let flow = self.own_calls_gate(OwnCalls {
                id: "extension_synthesis",
                note: "Synthesis",
                failed_reason: "judge_failed",
                failures: drops.judge_errors,
                compromised: judge.compromised,
                detail: GateDetail::Synthesis {
                    calls: drops.judge_calls,
                    failures: drops.judge_errors,
                    max_error_rate: judge.max_error_rate,
                    compromised: judge.compromised,
                    explain: Some(explain.clone()),
                },
                explain,
            });
            if let Flow::Stop { .. } = flow {
                return flow;
            }
        }
        let screen = gates::compromised(
            drops.screen_calls.saturating_sub(drops.screen_errors),
            drops.screen_errors,
            limit,
        );
        if drops.screen_errors == 0 {
            return Flow::Continue;
        }
        let explain = format!(
            "Extension batch {index}: the runner was asked to screen {} admitted candidates with no tools; {} calls failed and their candidates were kept unscreened; the limit is {}.",
            drops.screen_calls,
            drops.screen_errors,
            pct(Some(screen.max_error_rate))
        );
        self.own_calls_gate(OwnCalls {
            id: "extension_screen",
            note: "Screen",
            failed_reason: "screen_failed",
            failures: drops.screen_errors,
            compromised: screen.compromised,
            detail: GateDetail::Screen {
                calls: drops.screen_calls,
                failures: drops.screen_errors,
                max_error_rate: screen.max_error_rate,
                compromised: screen.compromised,
                explain: Some(explain.clone()),
            },
            explain,
        })
    }

    /// A gate on our own calls' failures (the judge's, the screen's): a
    /// note when any failed, the gate's record, and COMPROMISED over the
    /// limit, our measurement's failure.
    fn own_calls_gate(&mut self, g: OwnCalls) -> Flow {
        if g.failures > 0 {
            self.own_notes.push(format!("{}: {}", g.note, g.explain));
        }
        self.push_gate(GateRecord {
            id: g.id.to_owned(),
            cost_tier: CostTier::Cheap,
            ok: !g.compromised,
            verdict: None,
            reason: if g.compromised { g.failed_reason } else { "ok" }.to_owned(),
            detail: g.detail,
            source_detail: None,
        });
        if g.compromised {
            Flow::Stop {
                outcome: Outcome::Compromised,
                gate: g.id.to_owned(),
            }
        } else {
            Flow::Continue
        }
    }

    pub(super) fn structural(&mut self) -> anyhow::Result<Flow> {
        let generation = self.generation.as_ref().context("no suite")?;
        let ledger = &generation.ledger;
        let fates = SuiteFates {
            candidates: ledger.candidates.unwrap_or(0),
            rejected_by_rule: ledger
                .rejected_by_rule
                .iter()
                .map(|r| (r.rule.clone(), r.count))
                .collect(),
            trimmed_surplus: ledger.trimmed_surplus.unwrap_or(0),
            null_screened: ledger.null_screened.as_ref().map_or(0, |s| s.dropped),
            suite_size: generation.suite.tasks.len() as u64,
        };
        // The suite must reach the floor (the seed's 8, or a floor the run
        // registered higher) and the size the run registered: a run
        // completes its registered size or it is refused, in words that
        // say which of the two it missed.
        let floor = self.cfg.settings.floors.min_suite;
        let registered = self.cfg.settings.tasks;
        let report = gates::structural_registered(
            &fates,
            floor,
            Some(registered),
            self.cfg.settings.floors.min_admission_rate,
        )?;
        let mut explain = format!(
            "{} candidates: {} rejected by rule, {} trimmed as surplus, {} deleted by the null screen; {}; admission rate {} against a floor of {}.",
            fates.candidates,
            report.rejected,
            fates.trimmed_surplus,
            fates.null_screened,
            gates::suite_size_text(fates.suite_size, Some(registered), Some(floor)),
            report
                .admission_rate
                .map_or("undefined".to_owned(), |r| format!("{r:.2}")),
            report.min_admission_rate
        );
        if report.reason == gates::StructuralReason::SuiteBelowRegisteredSize {
            explain.push_str(&format!(
                " A run completes the size it registered, so these {n} tasks are not driven under a registration of {registered}; {would} registers a size this surface meets.",
                n = fates.suite_size,
                would = self.smaller_registration(fates.suite_size)
            ));
        }
        // A judge writes judge-synth's candidates: what admission rejected
        // says as much about the judge as about the server.
        let judged: u64 = fates
            .rejected_by_rule
            .iter()
            .filter(|(rule, _)| !["write-excluded", "error-answer"].contains(&rule.as_str()))
            .map(|(_, n)| n)
            .sum();
        let explain = if self.cfg.generator == crate::suite::GeneratorId::JudgeSynth1 && judged > 0
        {
            format!(
                "{explain} The candidates are the judge's: {judged} were rejected for how the judge wrote them (malformed, a check that cannot match, an answer the server did not return, ...), which measures the judge ({}) as much as the server's surface.",
                self.cfg
                    .settings
                    .judge
                    .as_ref()
                    .map_or_else(|| "none".to_owned(), ToString::to_string)
            )
        } else {
            explain
        };
        // A suite the screen emptied is its own finding: the words say
        // where the admitted candidates went, never "0 admitted" beside
        // the admitted count.
        let explain = if report.reason == gates::StructuralReason::AllCandidatesNullAnswerable {
            use fitness_shared::reading::screen::{Emptied, EmptiedCounts};
            Emptied::of(&EmptiedCounts {
                candidates: fates.candidates,
                admitted: ledger.admitted.unwrap_or(0),
                deleted: fates.null_screened,
                runner: self.cfg.settings.runner.to_string(),
                registered: Some(self.cfg.settings.tasks),
                floor: Some(self.cfg.settings.floors.min_suite),
            })
            .text()
        } else {
            explain
        };
        self.own_notes.push(format!("Suite: {explain}"));
        self.push_gate(GateRecord {
            id: "structural".to_owned(),
            cost_tier: CostTier::Free,
            ok: report.ok,
            verdict: None,
            reason: name_of(&report.reason),
            detail: GateDetail::Structural {
                n_requested: Some(registered),
                n_generated: Some(fates.candidates),
                n_tasks: Some(fates.suite_size),
                admission_rate: report.admission_rate,
                min_admission_rate: Some(report.min_admission_rate),
                min_generated: Some(floor),
                explain: Some(explain),
            },
            source_detail: None,
        });
        Ok(match report.refusal {
            Some(code) => Flow::Stop {
                outcome: code,
                gate: "structural".to_owned(),
            },
            None => Flow::Continue,
        })
    }

    /// The driven suite re-checked: no answer key in a prompt, in the
    /// solution's arguments, or in the instructions and tool descriptions.
    pub(super) fn answer_leak(&mut self, tasks: &[Task], tools: &[Tool]) -> Flow {
        // The same test admission applied (whole tokens, any case).
        let leaks: Vec<serde_json::Value> = tasks
            .iter()
            .filter(|t| t.answer_key.trim().chars().count() >= 2)
            .filter_map(|t| {
                crate::suite::admission::leak_place(t, self.instructions.as_deref(), tools)
                    .map(|place| json!({"task": t.id, "where": place}))
            })
            .collect();
        let at_generation = self
            .generation
            .as_ref()
            .map(|g| g.leaks_at_generation.clone())
            .unwrap_or_default();
        let ok = leaks.is_empty();
        self.push_gate(GateRecord {
            id: "answer_leak".to_owned(),
            cost_tier: CostTier::Free,
            ok,
            verdict: None,
            reason: if ok { "ok" } else { "answer_in_task" }.to_owned(),
            detail: GateDetail::AnswerLeak {
                leaks,
                at_generation,
            },
            source_detail: None,
        });
        if ok {
            Flow::Continue
        } else {
            Flow::Stop {
                outcome: Outcome::Degenerate,
                gate: "answer_leak".to_owned(),
            }
        }
    }

    /// The flags that register `n` tasks, with the reps a flawless
    /// reference agent needs to publish at that size (`--tasks 8 --reps 5`).
    fn smaller_registration(&self, n: u64) -> String {
        let prereg = gates::PreRegistration {
            n_tasks: n.max(1),
            ..self.gate_prereg()
        };
        let publishes = gates::plan_power_gate(&prereg).is_ok_and(|r| r.ok);
        match gates::publishable_sizes(&prereg) {
            _ if publishes => format!("`--tasks {n}`"),
            Ok(gates::PublishableSizes {
                min_reps: Some(r), ..
            }) => format!("`--tasks {n} --reps {r}`"),
            _ => format!("`--tasks {n}` (no reps up to 10,000 trials would let it publish)"),
        }
    }

    pub(super) fn gate_prereg(&self) -> gates::PreRegistration {
        let f = &self.cfg.settings.floors;
        gates::PreRegistration {
            n_tasks: self.cfg.settings.tasks,
            reps: self.cfg.settings.reps,
            alpha: f.alpha,
            threshold: f.construct_threshold,
            detectable: gates::default_detectable(f.construct_threshold),
            planned_power: config::PLANNED_POWER,
            extension_size: self.cfg.settings.extension_size,
            max_extensions: self.cfg.settings.max_extensions,
        }
    }

    pub(super) fn plan_power(&mut self) -> anyhow::Result<Flow> {
        let prereg = self.gate_prereg();
        let report = gates::plan_power_gate(&prereg)?;
        let actual_n = prereg.max_trials();
        let required_n = report.required_n.unwrap_or(0);
        let explain = if report.ok {
            format!(
                "A flawless reference agent can publish a pass at {} pooled trials; the registration reaches up to {actual_n}.",
                report.publishable_at.unwrap_or(actual_n)
            )
        } else {
            let sizes = gates::publishable_sizes(&prereg)?;
            let mut would = Vec::new();
            if let Some(t) = sizes.min_tasks {
                would.push(format!("--tasks {t} --reps {}", prereg.reps));
            }
            if let Some(r) = sizes.min_reps {
                would.push(format!("--tasks {} --reps {r}", prereg.n_tasks));
            }
            format!(
                "This registration ({} tasks x {} reps, {} extension batches of {} tasks) reaches at most {actual_n} pooled trials; a flawless reference agent needs {} for a pass to be published at threshold {}, so the run could only refuse. Refused with zero model calls, after the zero-token probes. Publishable with {}.",
                prereg.n_tasks,
                prereg.reps,
                prereg.max_extensions,
                prereg.extension_size,
                report
                    .perfect_agent_min_trials
                    .map_or("more than 10,000".to_owned(), |n| n.to_string()),
                prereg.threshold,
                if would.is_empty() {
                    "no size up to 10,000 trials".to_owned()
                } else {
                    would.join(", or ")
                }
            )
        };
        if !report.ok {
            self.own_notes.push(format!("Plan power: {explain}"));
        }
        self.push_gate(GateRecord {
            id: "plan_power".to_owned(),
            cost_tier: CostTier::Free,
            ok: report.ok,
            verdict: None,
            reason: name_of(&report.reason),
            detail: GateDetail::PlanPower {
                required_n,
                actual_n,
                threshold: prereg.threshold,
                detectable_rate: prereg.detectable,
                achieved_power: gates::achieved_power(
                    actual_n,
                    prereg.threshold,
                    prereg.detectable,
                    prereg.alpha,
                ),
                explain: Some(explain),
            },
            source_detail: None,
        });
        Ok(match report.refusal {
            Some(code) => Flow::Stop {
                outcome: code,
                gate: "plan_power".to_owned(),
            },
            None => Flow::Continue,
        })
    }
}
