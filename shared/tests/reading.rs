//! The gate readings on the cases the demo does not make: a null gate
//! still waiting for the agent's rate with every arm run, one the agent's
//! zero rate left indeterminate, and an extension ledger recorded before
//! the last batch said FAIL.

use fitness_shared::reading::extensions::{resolved_after, resolved_after_text};
use fitness_shared::reading::null_baseline::NullReading;
use fitness_shared::record::*;

use crate::record_common::scored_record;

fn rate(label: &str, k: u64, n: u64) -> NullRate {
    NullRate {
        label: label.into(),
        k,
        n,
        rate: k as f64 / n as f64,
        errors: 0,
    }
}

fn null(t_agent: Option<f64>, line: Option<f64>, decision: &str) -> GateDetail {
    GateDetail::NullBaseline {
        rates: vec![
            rate("random-valid-args", 1, 12),
            rate("no-tools", 0, 12),
            rate("stubbed-empty", 0, 12),
        ],
        t_null: Some(1.0 / 12.0),
        t_agent,
        kill_threshold: line,
        ratio: Some(0.5),
        percentile: Some(95),
        decision: Some(decision.into()),
        explain: None,
    }
}

#[test]
fn a_deferred_gate_says_the_line_is_not_drawn_and_no_arm_reached_it() {
    let r = NullReading::of(&null(None, None, "DEFERRED")).expect("a null gate");
    assert!(r.intro.starts_with("Three null models ran"), "{}", r.intro);
    assert!(r.arms.iter().all(|a| a.ran && a.reached.is_none()));
    assert!(
        r.agent
            .contains("a run that stops before the drive leaves it undecided"),
        "{}",
        r.agent
    );
    assert!(r.line.starts_with("Kill line: not drawn yet"), "{}", r.line);
    assert_eq!(
        r.findings,
        [
            "No null model reached the line: with no server in the loop, or with its answers emptied or its arguments random, the suite was not passed."
        ]
    );
}

#[test]
fn an_agent_that_passed_nothing_leaves_no_signal_and_no_finding() {
    let r = NullReading::of(&null(Some(0.0), Some(0.0), "INDETERMINATE")).expect("a null gate");
    assert!(r.agent.contains("The agent passed nothing"), "{}", r.agent);
    assert!(
        r.decision.contains("halts the run exactly like a kill"),
        "{}",
        r.decision
    );
    // A stored line of 0 reads nothing about the suite: no arm is read
    // against it, and no finding is drawn from it.
    assert!(r.line.starts_with("Kill line: none,"), "{}", r.line);
    assert!(r.arms.iter().all(|a| a.reached.is_none()), "{:?}", r.arms);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert!(NullReading::of(&GateDetail::Unrecognised).is_none());
}

#[test]
fn an_older_ledger_that_ended_on_extend_reads_fail_after_its_last_batch() {
    let mut r = scored_record();
    let mut second = r.extensions[0].clone();
    second.index = 2;
    r.extensions[0].verdict_after = VerdictOutcome::Extend;
    second.verdict_after = VerdictOutcome::Extend;
    r.extensions.push(second);
    let construct = r
        .gates
        .records
        .iter_mut()
        .find(|g| g.id == "construct")
        .expect("construct");
    construct.reason = "unresolved_after_max_extensions".into();
    let (first, last) = (r.extensions[0].clone(), r.extensions[1].clone());
    assert_eq!(resolved_after(&r, &first), VerdictOutcome::Extend);
    assert_eq!(resolved_after_text(&r, &first), "EXTEND, so batch 2");
    assert_eq!(resolved_after(&r, &last), VerdictOutcome::Fail);
    assert_eq!(resolved_after_text(&r, &last), "FAIL");
}

#[test]
fn the_reason_a_deferred_gate_records_is_the_one_read_as_undecided() {
    // The gate's reason on the record and the tape is the null gate's own
    // spelling of AwaitingAgentRate; the state read from it must match.
    let wire =
        fitness_shared::wire_name::wire_name(&fitness_shared::gates::NullReason::AwaitingAgentRate);
    assert_eq!(
        wire.as_deref(),
        Some(fitness_shared::gate_state::AWAITING_AGENT_RATE)
    );
}
