//! The record page's gates: the deciding gate with the numbers it saw
//! (one view per gate family) and the ledger of every gate in order.

use std::sync::Arc;

use fitness_shared::gates::suite_size_text;
use fitness_shared::record::{GateDetail, GateRecord, NullRate, RunRecord};
use leptos::either::{Either, EitherOf10};
use leptos::prelude::*;

use super::words::{opt_pct, opt_u, p_text, verdict_word};
use crate::components::pct;

#[component]
pub(super) fn DecidingGate(gate: GateRecord, record: Arc<RunRecord>) -> impl IntoView {
    let verdict = gate.verdict.as_ref().map(|v| {
        format!(
            "{} of {} against a threshold of {}, alpha {}, {}: {}.",
            v.k,
            v.n,
            pct(v.threshold),
            v.alpha,
            p_text(v.p_value),
            verdict_word(v.outcome)
        )
    });
    let family = gate_family(&gate.detail, &record);
    view! {
        <section class="deciding">
            <h3>{format!("What the {} gate saw", gate.id)}</h3>
            <p class="reason-line">"reason: " <span class="reason">{gate.reason.clone()}</span></p>
            {verdict.map(|v| view! { <p class="verdict">{v}</p> })}
            {family}
        </section>
    }
}

/// What a gate of each family saw.
// One piece: one match, an arm per gate family, each arm that family's template; it reads top to bottom.
pub(super) fn gate_family(detail: &GateDetail, record: &RunRecord) -> impl IntoView + use<> {
    match detail {
        GateDetail::NullBaseline {
            rates,
            t_null,
            t_agent,
            kill_threshold,
            ratio,
            decision,
            explain,
            ..
        } => EitherOf10::A(null_baseline_view(
            rates,
            *t_null,
            *t_agent,
            *kill_threshold,
            *ratio,
            decision.clone(),
            explain.clone(),
        )),
        GateDetail::Structural {
            n_requested,
            n_generated,
            n_tasks,
            admission_rate,
            min_admission_rate,
            min_generated,
            explain,
        } => EitherOf10::B({
            // The suite's size, never the candidates: the gate's own count,
            // else the ledger's; an imported record's `n_generated` was the
            // suite it generated.
            let size = n_tasks.or(record.suite.tasks);
            let generated = match size {
                Some(_) => format!("Candidates generated: {}", opt_u(*n_generated)),
                None => format!("Tasks generated and admitted: {}", opt_u(*n_generated)),
            };
            view! {
            <ul>
                <li>{format!("Tasks requested: {}", opt_u(*n_requested))}</li>
                <li>{generated}</li>
                <li>{format!("Admission rate {} against a floor of {}", opt_pct(*admission_rate), opt_pct(*min_admission_rate))}</li>
                <li>{suite_size_text(size.or(*n_generated).unwrap_or(0), n_requested.or(record.preregistration.n_tasks), record.preregistration.min_tasks.or(*min_generated))}</li>
            </ul>
            {explain.clone().map(|e| view! { <p class="explain">{e}</p> })}
            }
        }),
        GateDetail::SuiteSize {
            n_tasks,
            min_tasks,
            tool_count,
        } => EitherOf10::C(view! {
            <p>{format!("{}.{}", suite_size_text(*n_tasks, record.preregistration.n_tasks, Some(*min_tasks)), tool_count.map(|t| format!(" The server advertised {t} tools.")).unwrap_or_default())}</p>
        }),
        GateDetail::Construct {
            n,
            errors,
            compromised,
            published,
            pooled,
            extensions_consumed,
            tape_reading,
            ..
        } => {
            let stats = construct_tape_counts(record);
            EitherOf10::D(view! {
                <p>"A reference agent handed the answer key must still reach it through the server."</p>
                <ul>
                    <li>{format!("Reference trials completed: {n}; oracle errors: {errors}.")}</li>
                    {compromised.then(|| view! { <li>"The error rate crossed its limit, so the run was compromised: the measurement did not complete."</li> })}
                    {pooled.as_ref().filter(|_| *extensions_consumed > 0).map(|p| view! { <li>{format!("Pooled across {extensions_consumed} extensions: {} of {}.", p.k, p.n)}</li> })}
                    {published.as_ref().map(|p| view! { <li>{format!("Published verdict {} (raw {}); Wilson interval {} to {}; reason {}.", verdict_word(p.outcome), verdict_word(p.raw_outcome), pct(p.wilson_low), pct(p.wilson_high), p.reason)}</li> })}
                    {tape_reading.as_ref().map(|t| view! { <li>{format!("Read from the tape: {} tools/call requests recorded for the reference trials, {} answered with an error, {} never answered.", t.calls_recorded, t.call_errors, t.no_response)}</li> })}
                </ul>
                {stats}
            })
        }
        GateDetail::PlanPower {
            required_n,
            actual_n,
            threshold,
            detectable_rate,
            achieved_power,
            explain,
        } => EitherOf10::E(view! {
            <p>{format!("The run's n of {actual_n} against a required n of {required_n}; threshold {}, detectable rate {}, achieved power {:.3}.", pct(*threshold), pct(*detectable_rate), achieved_power)}</p>
            {explain.clone().map(|e| view! { <p>{e}</p> })}
        }),
        GateDetail::AnswerLeak {
            leaks,
            at_generation,
        } => EitherOf10::F(view! {
            <p>{format!("{} answer leaks in the driven suite; {} dropped at generation.", leaks.len(), at_generation.len())}</p>
        }),
        GateDetail::ProtocolHygiene { failed } => EitherOf10::G(view! {
            <p>{format!("Failed probes: {}.", failed.join(", "))}</p>
        }),
        GateDetail::Drive {
            trials,
            errors,
            max_error_rate,
            compromised,
        } => EitherOf10::H(view! {
            <p>{format!("The drive completed {trials} trials; the model API failed {errors} (limit {}).{}", pct(*max_error_rate), if *compromised { " Over the limit: the measurement is compromised." } else { "" })}</p>
        }),
        GateDetail::Synthesis { .. } | GateDetail::Screen { .. } => {
            let (text, explain) = our_calls_text(detail);
            EitherOf10::I(view! {
                <p>{text}</p>
                {explain.map(|e| view! { <p>{e}</p> })}
            })
        }
        GateDetail::Unrecognised => EitherOf10::J(view! {
            <p>"This gate's detail is of a kind this viewer does not know; its reason string stands."</p>
        }),
    }
}

/// Our own model calls that a gate held to the error limit (the judge's
/// synthesis, the runner's screen): the sentence, and the gate's own words.
pub(super) fn our_calls_text(detail: &GateDetail) -> (String, Option<String>) {
    let (asked, failures, max_error_rate, compromised, explain) = match detail {
        GateDetail::Synthesis {
            calls,
            failures,
            max_error_rate,
            compromised,
            explain,
        } => (
            format!("The judge was asked {calls} times for tasks"),
            failures,
            max_error_rate,
            compromised,
            explain,
        ),
        GateDetail::Screen {
            calls,
            failures,
            max_error_rate,
            compromised,
            explain,
        } => (
            format!("The runner was asked to screen {calls} candidates"),
            failures,
            max_error_rate,
            compromised,
            explain,
        ),
        _ => return (String::new(), None),
    };
    (
        format!(
            "{asked}; {failures} calls failed (limit {}).{}",
            pct(*max_error_rate),
            if *compromised {
                " Over the limit: our measurement failed, not the server."
            } else {
                ""
            }
        ),
        explain.clone(),
    )
}

/// The null gate: each null model's rate on the suite, read against the
/// agent's rate and the kill threshold between them.
pub(super) fn null_baseline_view(
    rates: &[NullRate],
    t_null: Option<f64>,
    t_agent: Option<f64>,
    kill_threshold: Option<f64>,
    ratio: Option<f64>,
    decision: Option<String>,
    explain: Option<String>,
) -> impl IntoView + use<> {
    let rows = rates
        .iter()
        .map(|r| view! {
            <tr><th scope="row">{r.label.clone()}</th><td>{format!("{} of {}", r.k, r.n)}</td><td>{if r.n == 0 { "not run".to_owned() } else { pct(r.rate) }}</td><td>{r.errors}</td></tr>
        })
        .collect_view();
    view! {
        <p>"Three null models ran the same suite. Each rate is read against the agent's rate with the real server and the kill threshold between them."</p>
        <table class="nulls">
            <thead><tr><th scope="col">"Null model"</th><th scope="col">"Passed"</th><th scope="col">"Rate"</th><th scope="col">"Calls that failed"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <ul>
            <li>{format!("Agent's rate: {}", opt_pct(t_agent))}</li>
            <li>{format!("Null rate taken: {}", opt_pct(t_null))}</li>
            <li>{format!("Kill threshold: {}{}", opt_pct(kill_threshold), ratio.map(|r| format!(" (ratio {r} of the agent's rate)")).unwrap_or_default())}</li>
            <li>{format!("Decision: {}", decision.unwrap_or_else(|| "not recorded".to_owned()))}</li>
        </ul>
        {explain.map(|e| view! { <p class="explain">{e}</p> })}
        <p>"When a model with no tools passes most of the suite, the tasks were answerable without the server. That finding is about our task generator, not about the server."</p>
    }
}

/// Calls, errors and requests without a response, read from the MCP plane's
/// recorded tape statistics (`planes.mcp.tools[]`: calls, errors, pending).
pub(super) fn construct_tape_counts(record: &RunRecord) -> impl IntoView + use<> {
    let tools = record
        .trace_stats
        .as_ref()
        .and_then(|s| s.pointer("/planes/mcp/tools"))
        .and_then(|t| t.as_array());
    let Some(tools) = tools else {
        return Either::Left(
            view! { <p>"The record carries no MCP tape statistics, so calls and unanswered requests are not stated."</p> },
        );
    };
    let sum = |key: &str| -> u64 {
        tools
            .iter()
            .filter_map(|t| t.get(key).and_then(|v| v.as_u64()))
            .sum()
    };
    let (calls, errors, pending) = (sum("calls"), sum("errors"), sum("pending"));
    let finding = (pending > 0 && pending == calls).then(|| view! {
        <p class="finding">"Every recorded tool call is a request with no matching protocol response. That is a finding about the server, read from the recorded counts."</p>
    });
    Either::Right(view! {
        <p>"From the whole MCP tape, every arm of the run:"</p>
        <ul class="tape-counts">
            <li>{format!("Tool calls recorded: {calls}")}</li>
            <li>{format!("Came back as errors: {errors}")}</li>
            <li>{format!("Requests with no matching response: {pending}")}</li>
        </ul>
        {finding}
    })
}

pub(super) fn gate_ledger(record: &RunRecord) -> impl IntoView + use<> {
    let rows = record
        .gates
        .records
        .iter()
        .map(|g| {
            let tier = format!("{:?}", g.cost_tier).to_lowercase();
            let counts = g
                .verdict
                .as_ref()
                .map(|v| format!("{} of {}, {}", v.k, v.n, p_text(v.p_value)))
                .unwrap_or_default();
            view! {
                <tr>
                    <th scope="row">{g.id.clone()}</th>
                    <td>{tier}</td>
                    <td>{if g.ok { "passed" } else { "failed" }}</td>
                    <td>{g.reason.clone()}</td>
                    <td>{counts}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="gates">
            <h3>"Gate ledger, in the order the gates ran"</h3>
            <div class="scroll"><table>
                <thead><tr><th scope="col">"Gate"</th><th scope="col">"Tier"</th><th scope="col">"Result"</th><th scope="col">"Reason"</th><th scope="col">"Counts"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
        </section>
    }
}
