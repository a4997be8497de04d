//! The null-baseline gate in words. The seed: the record shows each null
//! rate against the rate the agent reached with the real server, and the
//! threshold between them. So each arm is read against the line; an arm
//! that did not run says why; the line says how it was drawn (against the
//! agent's measured rate, or against every rate an agent could reach,
//! before any paid call); and the finding printed is the one the arms that
//! ran support, never a sentence about an arm that did not run.

use super::words::{pct, plural};
use crate::record::{GateDetail, NullRate};

/// The three arms' labels, as the record keeps them.
pub const NO_TOOLS: &str = "no-tools";
pub const STUBBED_EMPTY: &str = "stubbed-empty";
pub const RANDOM_VALID_ARGS: &str = "random-valid-args";

/// One null arm, read against the line.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmReading {
    /// The arm's label (`no-tools`).
    pub label: String,
    /// What the null model is given, in words.
    pub given: &'static str,
    /// `12 of 12`, or `none` for an arm that did not run.
    pub passed: String,
    /// `100.0%`, or `not run`.
    pub rate: String,
    /// The rate against the line, or why the arm did not run.
    pub against: String,
    /// Trials the model API failed (or whose reply could not be used).
    pub errors: u64,
    /// Whether the arm ran at all.
    pub ran: bool,
    /// Whether its rate reached the line (`None`: not run, or no line).
    pub reached: Option<bool>,
}

/// The gate, read.
#[derive(Debug, Clone, PartialEq)]
pub struct NullReading {
    /// What ran, in one sentence.
    pub intro: String,
    pub arms: Vec<ArmReading>,
    /// The agent's rate, or why there is none.
    pub agent: String,
    /// The null rate the gate took.
    pub null_rate: String,
    /// The line, and how it was drawn.
    pub line: String,
    /// The decision, and what it means for the run.
    pub decision: String,
    /// What the arms that ran support: one sentence per arm that reached
    /// the line, or the sentence for none.
    pub findings: Vec<String>,
    /// The numbers behind the words, for [`NullReading::teaser`].
    t_null: Option<f64>,
    line_value: Option<f64>,
    decision_code: String,
}

impl NullReading {
    /// The reading of a null-baseline gate's detail; `None` for any other.
    pub fn of(detail: &GateDetail) -> Option<NullReading> {
        let GateDetail::NullBaseline {
            rates,
            t_null,
            t_agent,
            kill_threshold,
            ratio,
            decision,
            ..
        } = detail
        else {
            return None;
        };
        let decision = decision.as_deref().unwrap_or("not recorded");
        let ratio = ratio.unwrap_or(crate::gates::NULL_KILL_RATIO);
        // An undecidable gate (the agent passed nothing, a rate missing)
        // draws no line to read the arms against, whatever it stored.
        let kill_threshold = &kill_threshold.filter(|_| decision != "INDETERMINATE");
        // Decided before any paid call: the line for an agent at 100%.
        let before_agent = t_agent.is_none() && decision == "KILL";
        let arms: Vec<ArmReading> = rates
            .iter()
            .enumerate()
            .map(|(i, r)| arm(r, &rates[..i], *kill_threshold, decision, before_agent))
            .collect();
        let ran = arms.iter().filter(|a| a.ran).count();
        let intro = match (ran, rates.len()) {
            (r, n) if r == n => format!(
                "{} null models ran the same suite. Each rate is read against the agent's rate with the real server and the kill line between them.",
                count_word(n)
            ),
            (r, n) => format!(
                "{} of the {} null models ran before the gate {}; each that did not run says why. Each rate is read against the agent's rate with the real server and the kill line between them.",
                count_word(r),
                count_word(n).to_lowercase(),
                if decision == "COMPROMISED" {
                    "stopped"
                } else {
                    "decided"
                }
            ),
        };
        Some(NullReading {
            intro,
            agent: agent_text(*t_agent, decision, before_agent.then_some(ratio)),
            null_rate: null_rate_text(*t_null, ran),
            line: line_text(*kill_threshold, *t_agent, ratio, decision, before_agent),
            decision: decision_text(decision),
            findings: findings(&arms, rates, decision),
            arms,
            t_null: *t_null,
            line_value: *kill_threshold,
            decision_code: decision.to_owned(),
        })
    }

    /// The numbers in one line, as a board row prints them: each arm's
    /// count (or that it did not run) against the line, and the decision.
    pub fn teaser(&self) -> String {
        let arms: Vec<String> = self
            .arms
            .iter()
            .map(|a| {
                if a.ran {
                    format!("{} {}", a.label, a.passed)
                } else {
                    format!("{} not run", a.label)
                }
            })
            .collect();
        let line = self.line_value.map_or_else(
            || "no line yet".to_owned(),
            |l| format!("the line {}", pct(l)),
        );
        format!(
            "Null rate {} against {line} ({}): {}.",
            self.t_null.map_or_else(|| "none".to_owned(), pct),
            arms.join(", "),
            self.decision_code
        )
    }

    /// The reading in one paragraph: the decision, the line, and what the
    /// arms support. The engine writes it as the gate's `explain`.
    pub fn explain(&self) -> String {
        let mut parts = vec![
            self.null_rate.clone(),
            self.line.clone(),
            self.decision.clone(),
        ];
        parts.extend(self.findings.iter().cloned());
        parts.join(" ")
    }
}

fn count_word(n: usize) -> String {
    match n {
        1 => "One".to_owned(),
        2 => "Two".to_owned(),
        3 => "Three".to_owned(),
        n => n.to_string(),
    }
}

/// What each null model is given.
pub fn given(label: &str) -> &'static str {
    match label {
        NO_TOOLS => "no tools at all, the task's prompt alone",
        STUBBED_EMPTY => "the server's tools listed, every call answered empty",
        RANDOM_VALID_ARGS => {
            "no model: the task's expected tool called with random valid arguments"
        }
        _ => "a null model this reader does not know",
    }
}

fn arm(
    r: &NullRate,
    earlier: &[NullRate],
    line: Option<f64>,
    decision: &str,
    before_agent: bool,
) -> ArmReading {
    let ran = r.n > 0;
    let reached = line.filter(|_| ran).map(|l| r.rate >= l);
    let against = match (ran, reached, line) {
        (true, Some(true), Some(l)) => format!("at or above the line of {}", pct(l)),
        (true, Some(false), Some(l)) => format!("below the line of {}", pct(l)),
        (true, _, _) => "no line to read it against".to_owned(),
        (false, _, _) => not_run_why(r, earlier, decision, before_agent),
    };
    ArmReading {
        label: r.label.clone(),
        given: given(&r.label),
        passed: if ran {
            format!("{} of {}", r.k, r.n)
        } else {
            "none".to_owned()
        },
        rate: if ran {
            pct(r.rate)
        } else {
            "not run".to_owned()
        },
        against,
        errors: r.errors,
        ran,
        reached,
    }
}

/// Why an arm has no completed trial, from what the record holds.
fn not_run_why(r: &NullRate, earlier: &[NullRate], decision: &str, before_agent: bool) -> String {
    if r.errors > 0 {
        return format!(
            "no trial completed: {} failed at the model API or gave a reply the harness could not use",
            plural(r.errors, "trial", "trials")
        );
    }
    let decided_by: Vec<&str> = earlier
        .iter()
        .filter(|a| a.n > 0)
        .map(|a| a.label.as_str())
        .collect();
    match decision {
        "KILL" if before_agent && !decided_by.is_empty() => format!(
            "not run: the gate had decided on {} (the arms run cheapest first)",
            decided_by.join(" and ")
        ),
        "COMPROMISED" => {
            "not run: the gate stopped when an earlier arm's calls failed over the limit".to_owned()
        }
        _ => "not run; the record does not say why".to_owned(),
    }
}

/// `before_agent`: the ratio, when the gate decided before any paid call.
fn agent_text(t_agent: Option<f64>, decision: &str, before_agent: Option<f64>) -> String {
    match (t_agent, decision) {
        (Some(a), "INDETERMINATE") if a == 0.0 => format!(
            "Agent's rate with the real server: {}. The agent passed nothing, so there is no signal to read the noise against.",
            pct(a)
        ),
        (Some(a), _) => format!(
            "Agent's rate with the real server: {}.",
            pct(a)
        ),
        (None, _) if let Some(ratio) = before_agent => format!(
            "Agent's rate: not measured. The gate decided before any paid call, so the agent never ran: whatever rate it reached, the line could not rise above {}.",
            pct(ratio)
        ),
        (None, "DEFERRED") => "Agent's rate: not measured when the gate was read. The gate is decided again against it after the drive; a run that stops before the drive leaves it undecided.".to_owned(),
        (None, "COMPROMISED") => "Agent's rate: not measured. The gate stopped when a null arm's calls failed, before any paid call.".to_owned(),
        (None, _) => "Agent's rate: not measured.".to_owned(),
    }
}

fn null_rate_text(t_null: Option<f64>, ran: usize) -> String {
    match t_null {
        Some(t) => format!(
            "Null rate taken: {}, the 95th percentile (nearest rank) of the {} measured.",
            pct(t),
            plural(ran as u64, "rate", "rates")
        ),
        None => "Null rate taken: none, no arm completed a trial.".to_owned(),
    }
}

fn line_text(
    line: Option<f64>,
    t_agent: Option<f64>,
    ratio: f64,
    decision: &str,
    before_agent: bool,
) -> String {
    match (line, t_agent) {
        (Some(l), _) if before_agent => format!(
            "Kill line: {}, the ratio {ratio} times 100%, the highest rate an agent could reach. A null rate at or above it kills the run whatever the agent's rate would be, so it was decided before any paid call.",
            pct(l)
        ),
        (Some(l), Some(a)) => format!(
            "Kill line: {}, the ratio {ratio} times the agent's {}.",
            pct(l),
            pct(a)
        ),
        (Some(l), None) => format!("Kill line: {}, the ratio {ratio}.", pct(l)),
        (None, _) if decision == "INDETERMINATE" => {
            "Kill line: none, since the gate could not be decided.".to_owned()
        }
        (None, _) if decision == "DEFERRED" => format!(
            "Kill line: not drawn yet. It is {ratio} times the agent's rate; before any paid call only a null rate at or above {} could kill, and none did.",
            pct(ratio)
        ),
        (None, _) => format!(
            "Kill line: not drawn (the ratio {ratio} of an agent's rate that does not exist)."
        ),
    }
}

fn decision_text(decision: &str) -> String {
    match decision {
        "KILL" => "Decision: KILL. The null rate reaches the line, which halts the run.".to_owned(),
        "PROCEED" => "Decision: PROCEED. The null rate is below the line.".to_owned(),
        "DEFERRED" => "Decision: DEFERRED. Undecided until the agent's rate exists.".to_owned(),
        "INDETERMINATE" => "Decision: INDETERMINATE. It halts the run exactly like a kill.".to_owned(),
        "COMPROMISED" => "Decision: COMPROMISED. Too many of one arm's calls failed, so the baseline was not decided.".to_owned(),
        other => format!("Decision: {other}."),
    }
}

/// The reading the arms that ran support: one sentence for each arm at or
/// above the line, or, where none reached it, what that shows.
fn findings(arms: &[ArmReading], rates: &[NullRate], decision: &str) -> Vec<String> {
    let reached: Vec<String> = arms
        .iter()
        .zip(rates)
        .filter(|(a, _)| a.reached == Some(true))
        .map(|(_, r)| reached_finding(r))
        .collect();
    if !reached.is_empty() {
        return reached;
    }
    match decision {
        "PROCEED" | "DEFERRED" if arms.iter().all(|a| a.ran) => vec![
            "No null model reached the line: with no server in the loop, or with its answers emptied or its arguments random, the suite was not passed.".to_owned(),
        ],
        _ => Vec::new(),
    }
}

fn reached_finding(r: &NullRate) -> String {
    let passed = format!("{} of {}", r.k, r.n);
    match r.label.as_str() {
        NO_TOOLS => format!(
            "With no tools at all the model passed {passed}: these tasks were answerable from what the model already knew, and the server was never in the loop. That finding is about our task generator, not about the server."
        ),
        STUBBED_EMPTY => format!(
            "With every tool call answered empty the model passed {passed}: the answers did not come from the server's results. That finding is about our task generator, not about the server."
        ),
        RANDOM_VALID_ARGS => format!(
            "Calling each task's expected tool with random valid arguments, and no model, passed {passed}: the server was called, but its answers did not depend on what each task asked. Either the server answers the same whatever it is asked, or the tasks ask only for what any call returns; either way the suite cannot tell an agent that reads the task from one that does not, so it cannot measure the server's fitness."
        ),
        other => format!("The {other} null model passed {passed}, at or above the line."),
    }
}
