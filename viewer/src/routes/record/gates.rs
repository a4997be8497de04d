//! The record page's gates: the deciding gate with the numbers it saw
//! (one view per gate family) and the ledger of every gate in order.

use std::sync::Arc;

use fitness_shared::gates::suite_size_text;
use fitness_shared::reading::null_baseline::NullReading;
use fitness_shared::record::{GateDetail, GateRecord, RunRecord};
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
    // How the extension protocol resolved the gate, beside its verdict: a
    // FAIL after the last batch reads as what the pooled count resolved to.
    let resolution = fitness_shared::reading::extensions::resolution_text(&record, &gate.id)
        .map(|t| view! { <p class="resolution">{t}</p> });
    view! {
        <section class="deciding">
            <h3>{format!("What the {} gate saw", gate.id)}</h3>
            <p class="reason-line">"reason: " <span class="reason">{gate.reason.clone()}</span></p>
            {verdict.map(|v| view! { <p class="verdict">{v}</p> })}
            {resolution}
            {family}
        </section>
    }
}

/// What a gate of each family saw.
// One piece: one match, an arm per gate family, each arm that family's template; it reads top to bottom.
pub(super) fn gate_family(detail: &GateDetail, record: &RunRecord) -> impl IntoView + use<> {
    match detail {
        GateDetail::NullBaseline { .. } => EitherOf10::A(null_baseline_view(detail)),
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
            // else the ledger's.
            let size = n_tasks.or(record.suite.tasks);
            let generated = match size {
                Some(_) => format!("Candidates generated: {}", opt_u(*n_generated)),
                None => format!("Tasks generated and admitted: {}", opt_u(*n_generated)),
            };
            // A suite the screen emptied is its own finding, read in its
            // own words; the gate's note would repeat them.
            let emptied = fitness_shared::reading::screen::emptied(record);
            let size_line = match &emptied {
                Some(e) => e.size.clone(),
                None => suite_size_text(
                    size.or(*n_generated).unwrap_or(0),
                    n_requested.or(record.preregistration.n_tasks),
                    record.preregistration.min_tasks.or(*min_generated),
                ),
            };
            let reading = emptied.as_ref().map(|e| {
                view! {
                    <p class="screen-emptied">{e.what.clone()}</p>
                    <p class="finding">{e.reading.clone()}</p>
                }
            });
            let explain = explain.clone().filter(|_| emptied.is_none());
            view! {
            <ul>
                {n_requested.map(|n| view! { <li>{format!("Tasks requested: {n}")}</li> })}
                <li>{generated}</li>
                <li>{format!("Admission rate {} against a floor of {}", opt_pct(*admission_rate), opt_pct(*min_admission_rate))}</li>
                <li>{size_line}</li>
            </ul>
            {reading}
            {explain.map(|e| view! { <p class="explain">{e}</p> })}
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
            let finding = tape_reading
                .as_ref()
                .and_then(fitness_shared::reading::construct::finding)
                .map(|f| view! { <p class="finding server-finding">{f}</p> });
            EitherOf10::D(view! {
                <p>"A reference agent handed the answer key must still reach it through the server."</p>
                <ul>
                    <li>{format!("Reference trials completed: {n}; oracle errors: {errors}.")}</li>
                    {compromised.then(|| view! { <li>"The error rate crossed its limit, so the run was compromised: the measurement did not complete."</li> })}
                    {pooled.as_ref().filter(|_| *extensions_consumed > 0).map(|p| view! { <li>{format!("Pooled across {extensions_consumed} extensions: {} of {}.", p.k, p.n)}</li> })}
                    {published.as_ref().map(|p| view! { <li>{format!("The publication rule read the pooled count as {} (raw {}); Wilson interval {} to {}; reason {}.", verdict_word(p.outcome), verdict_word(p.raw_outcome), pct(p.wilson_low), pct(p.wilson_high), p.reason)}</li> })}
                    {tape_reading.as_ref().map(|t| view! { <li class="tape-reading">{fitness_shared::reading::construct::counts_text(t)}</li> })}
                </ul>
                {finding}
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

/// The null gate, read by `shared`: each null model's rate against the
/// agent's rate and the kill line, why an arm did not run, how the line
/// was drawn, and the reading the arms that ran support.
pub(super) fn null_baseline_view(detail: &GateDetail) -> impl IntoView + use<> {
    let Some(reading) = NullReading::of(detail) else {
        return Either::Left(());
    };
    // The record's own words, where they say more than the reading (a
    // compromised arm's count of failed calls, an imported record's).
    let own = detail
        .explain()
        .filter(|e| *e != reading.explain())
        .map(|e| view! { <p class="explain">{format!("In the record's words: {e}")}</p> });
    let rows = reading
        .arms
        .iter()
        .map(|a| {
            let class = match a.reached {
                Some(true) => "reached",
                Some(false) => "below",
                None if a.ran => "ran",
                None => "not-run",
            };
            view! {
                <tr class=class data-arm=a.label.clone()>
                    <th scope="row">{a.label.clone()}" "<span class="given">{a.given}</span></th>
                    <td>{a.passed.clone()}</td>
                    <td>{a.rate.clone()}</td>
                    <td class="against">{a.against.clone()}</td>
                    <td>{a.errors}</td>
                </tr>
            }
        })
        .collect_view();
    let findings = reading
        .findings
        .iter()
        .map(|f| view! { <p class="finding">{f.clone()}</p> })
        .collect_view();
    Either::Right(view! {
        <p class="null-intro">{reading.intro.clone()}</p>
        <div class="scroll"><table class="nulls">
            <thead><tr><th scope="col">"Null model, and what it is given"</th><th scope="col">"Passed"</th><th scope="col">"Rate"</th><th scope="col">"Against the line"</th><th scope="col">"Calls that failed"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table></div>
        <ul class="null-line">
            <li class="agent-rate">{reading.agent.clone()}</li>
            <li>{reading.null_rate.clone()}</li>
            <li class="kill-line">{reading.line.clone()}</li>
            <li class="decision">{reading.decision.clone()}</li>
        </ul>
        {findings}
        {own}
    })
}

/// Calls, errors and requests without a response over the whole MCP tape
/// (every arm), as `shared` sums them from the record's tape statistics:
/// context for the reference trials' own reading above it.
pub(super) fn construct_tape_counts(record: &RunRecord) -> impl IntoView + use<> {
    let Some(t) = fitness_shared::reading::construct::whole_tape(record) else {
        return Either::Left(
            view! { <p>"The record carries no MCP tape statistics, so the whole tape's calls and unanswered requests are not stated."</p> },
        );
    };
    Either::Right(view! {
        <p>"From the whole MCP tape, every arm of the run (generation, the null arms and the reference trials together):"</p>
        <ul class="tape-counts">
            <li>{format!("Tool calls recorded: {}", t.calls_recorded)}</li>
            <li>{format!("Came back as errors: {}", t.call_errors)}</li>
            <li>{format!("Requests with no matching response: {}", t.no_response)}</li>
        </ul>
    })
}

pub(super) fn gate_ledger(record: &RunRecord) -> impl IntoView + use<> {
    let rows = record
        .gates
        .records
        .iter()
        .map(|g| {
            let tier = format!("{:?}", g.cost_tier).to_lowercase();
            let line = fitness_shared::reading::ledger::line(g, record);
            let state = line.state.word();
            view! {
                <tr class=state data-gate=g.id.clone()>
                    <th scope="row">{g.id.clone()}</th>
                    <td>{tier}</td>
                    <td class="state">{state}</td>
                    <td>{g.reason.clone()}</td>
                    <td>{line.counts}</td>
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
