//! One run's record (`?run=<id>`), fetched only when this page is opened.
//! It opens on the numbers the deciding gate saw.

use fitness_shared::record::{Cost, GateDetail, GateRecord, RunRecord, VerdictOutcome};
use leptos::prelude::*;

use crate::api::fetch_record;
use crate::{IntervalBar, interval_text, pct};

#[component]
pub fn RecordPage(run: String) -> impl IntoView {
    let id = run.clone();
    let record = LocalResource::new(move || fetch_record(id.clone()));
    view! {
        <nav class="back"><a href="./">"Back to the board"</a></nav>
        <Suspense fallback=|| view! { <p class="loading">"Loading the record."</p> }>
            {move || {
                record
                    .get()
                    .map(|result| match result {
                        Ok(record) => view! { <RecordView record=record /> }.into_any(),
                        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                    })
            }}
        </Suspense>
    }
}

fn verdict_word(v: VerdictOutcome) -> &'static str {
    match v {
        VerdictOutcome::Pass => "PASS",
        VerdictOutcome::Fail => "FAIL",
        VerdictOutcome::Extend => "EXTEND",
        VerdictOutcome::Indeterminate => "INDETERMINATE",
    }
}

/// A stored p-value as printed: four decimals, or "p < 0.0001".
fn p_text(p: f64) -> String {
    if p < 0.0001 {
        "p < 0.0001".to_owned()
    } else {
        format!("p = {p:.4}")
    }
}

fn opt_u(x: Option<u64>) -> String {
    x.map(|v| v.to_string())
        .unwrap_or_else(|| "not recorded".to_owned())
}

fn opt_pct(x: Option<f64>) -> String {
    x.map(pct).unwrap_or_else(|| "not recorded".to_owned())
}

#[component]
pub fn RecordView(record: RunRecord) -> impl IntoView {
    let outcome = record.outcome.code();
    let deciding = record
        .gates
        .refused_at
        .as_deref()
        .and_then(|g| record.gates.record(g))
        // A scored run opens on the construct gate that let it through.
        .or_else(|| {
            record
                .score
                .as_ref()
                .and_then(|_| record.gates.record("construct"))
        })
        .cloned();
    let headline = match (&record.score, &deciding) {
        (Some(score), _) => format!(
            "Scored: first-try success {}",
            interval_text(&score.first_try)
        ),
        (None, Some(g)) => format!(
            "{outcome}: stopped at the {} gate, reason {}",
            g.id, g.reason
        ),
        (None, None) => {
            format!("{outcome}: no gate decided this run.")
        }
    };
    // A run no gate decided (VOID) says why right under its headline, in the
    // record's own score notes.
    let why_no_gate = (record.score.is_none() && deciding.is_none()).then(|| {
        let why = if record.notes.score.is_empty() {
            "The record does not say why the run ended.".to_owned()
        } else {
            record.notes.score.join(" ")
        };
        view! { <p class="why-no-score">{why}</p> }
    });
    let score_bar = record
        .score
        .as_ref()
        .map(|s| view! { <div class="result scored"><IntervalBar interval=s.first_try /></div> });
    let deciding_view = deciding
        .clone()
        .map(|g| view! { <DecidingGate gate=g record=record.clone() /> });
    let suite_view = view! { <SuiteFates record=record.clone() /> };
    let extensions = extensions_view(&record);
    let ledger = gate_ledger(&record);
    let tasks = tasks_view(&record);
    let probes = probes_view(&record);
    let findings = super::findings::findings_view(&record);
    let replay_link = if record.tapes.is_empty() {
        view! { <p class="no-tapes">"No tapes were published for this run, so there is no replay."</p> }.into_any()
    } else {
        let href = format!("?run={}&view=replay", record.run.id);
        view! { <p><a class="open-replay" href=href>"Replay the recorded session"</a></p> }
            .into_any()
    };
    let cost = cost_view(&record.cost);
    let notes = notes_view(&record);
    let prereg = &record.preregistration;
    let protocol = vec![
        format!(
            "Null screen at generation: {}.",
            match prereg.null_screen {
                Some(true) => "registered",
                Some(false) => "not registered",
                None => "not recorded",
            }
        ),
        format!(
            "Extension policy: {} tasks per batch, at most {} batches.",
            prereg.extension_size, prereg.max_extensions
        ),
        prereg
            .extension_protocol
            .clone()
            .map(|p| format!("Extension protocol, in the run's own words: {p}"))
            .unwrap_or_else(|| "The record states no extension protocol.".to_owned()),
    ];
    let zero_policy = (outcome == "EXTEND_EXHAUSTED" && prereg.max_extensions == 0).then(|| view! {
        <p class="limitation">"This run registered a zero extension policy, so no batch was registered. Its record cannot tell a run made before the extension protocol from one that bought no batch."</p>
    });
    let attempt = record.run.attempt.as_ref().map(|a| {
        let others = a
            .others
            .iter()
            .map(|o| view! { <li><a href=format!("?run={o}")>{o.clone()}</a></li> })
            .collect_view();
        view! {
            <p>{format!("Run {} of {} of this server.", a.index, a.of)}</p>
            <ul>{others}</ul>
        }
    });
    view! {
        <article class="record" data-run-id=record.run.id.clone() data-outcome=outcome>
            <h2>{record.server.slug.clone()}</h2>
            <p class="headline">{headline}</p>
            {why_no_gate}
            {replay_link}
            {score_bar}
            {deciding_view}
            {suite_view}
            {extensions}
            <section>
                <h3>"Registered before the first call"</h3>
                <ul>{protocol.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
                {zero_policy}
            </section>
            {ledger}
            {findings}
            {tasks}
            {probes}
            <section class="cost-section"><h3>"Cost"</h3>{cost}</section>
            {notes}
            <section class="identity">
                <h3>"Identity"</h3>
                <dl>
                    <dt>"Run"</dt><dd>{record.run.id.clone()}</dd>
                    <dt>"Started"</dt><dd>{record.run.started_at.clone()}</dd>
                    <dt>"Suite hash"</dt><dd><code>{record.run.suite_hash.clone()}</code></dd>
                    <dt>"Generator"</dt><dd>{record.run.generator_label().to_owned()}</dd>
                    <dt>"Runner model"</dt><dd>{match &record.run.runner_reported { Some(r) => format!("{} (the provider reported {r})", record.run.runner_model), None => record.run.runner_model.clone() }}</dd>
                    <dt>"Judge model"</dt><dd>{record.run.judge_model.clone()}</dd>
                </dl>
                {attempt}
            </section>
        </article>
    }
}

#[component]
fn DecidingGate(gate: GateRecord, record: RunRecord) -> impl IntoView {
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
    let family = match &gate.detail {
        GateDetail::NullBaseline {
            rates,
            t_null,
            t_agent,
            kill_threshold,
            ratio,
            decision,
            explain,
            ..
        } => {
            let rows = rates
                .iter()
                .map(|r| view! {
                    <tr><th scope="row">{r.label.clone()}</th><td>{format!("{} of {}", r.k, r.n)}</td><td>{if r.n == 0 { "not run".to_owned() } else { pct(r.rate) }}</td></tr>
                })
                .collect_view();
            view! {
                <p>"Three null models ran the same suite. Each rate is read against the agent's rate with the real server and the kill threshold between them."</p>
                <table class="nulls">
                    <thead><tr><th scope="col">"Null model"</th><th scope="col">"Passed"</th><th scope="col">"Rate"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <ul>
                    <li>{format!("Agent's rate: {}", opt_pct(*t_agent))}</li>
                    <li>{format!("Null rate taken: {}", opt_pct(*t_null))}</li>
                    <li>{format!("Kill threshold: {}{}", opt_pct(*kill_threshold), ratio.map(|r| format!(" (ratio {r} of the agent's rate)")).unwrap_or_default())}</li>
                    <li>{format!("Decision: {}", decision.clone().unwrap_or_else(|| "not recorded".to_owned()))}</li>
                </ul>
                {explain.clone().map(|e| view! { <p class="explain">{e}</p> })}
                <p>"When a model with no tools passes most of the suite, the tasks were answerable without the server. That finding is about our task generator, not about the server."</p>
            }
            .into_any()
        }
        GateDetail::Structural {
            n_requested,
            n_generated,
            admission_rate,
            min_admission_rate,
            min_generated,
            explain,
        } => view! {
            <ul>
                <li>{format!("Tasks requested: {}", opt_u(*n_requested))}</li>
                <li>{format!("Tasks generated and admitted: {}", opt_u(*n_generated))}</li>
                <li>{format!("Admission rate {} against a floor of {}", opt_pct(*admission_rate), opt_pct(*min_admission_rate))}</li>
                <li>{format!("Minimum generated: {}", opt_u(*min_generated))}</li>
            </ul>
            {explain.clone().map(|e| view! { <p class="explain">{e}</p> })}
        }
        .into_any(),
        GateDetail::SuiteSize { n_tasks, min_tasks, tool_count } => view! {
            <p>{format!("The suite held {n_tasks} tasks against a minimum of {min_tasks}.{}", tool_count.map(|t| format!(" The server advertised {t} tools.")).unwrap_or_default())}</p>
        }
        .into_any(),
        GateDetail::Construct { n, errors, compromised, published, pooled, extensions_consumed, tape_reading, .. } => {
            let stats = construct_tape_counts(&record);
            view! {
                <p>"A reference agent handed the answer key must still reach it through the server."</p>
                <ul>
                    <li>{format!("Reference trials completed: {n}; oracle errors: {errors}.")}</li>
                    {compromised.then(|| view! { <li>"The error rate crossed its limit, so the run was compromised: the measurement did not complete."</li> })}
                    {pooled.as_ref().filter(|_| *extensions_consumed > 0).map(|p| view! { <li>{format!("Pooled across {extensions_consumed} extensions: {} of {}.", p.k, p.n)}</li> })}
                    {published.as_ref().map(|p| view! { <li>{format!("Published verdict {} (raw {}); Wilson interval {} to {}; reason {}.", verdict_word(p.outcome), verdict_word(p.raw_outcome), pct(p.wilson_low), pct(p.wilson_high), p.reason)}</li> })}
                    {tape_reading.as_ref().map(|t| view! { <li>{format!("Read from the tape: {} tools/call requests recorded for the reference trials, {} answered with an error, {} never answered.", t.calls_recorded, t.call_errors, t.no_response)}</li> })}
                </ul>
                {stats}
            }
            .into_any()
        }
        GateDetail::PlanPower { required_n, actual_n, threshold, detectable_rate, achieved_power, explain } => view! {
            <p>{format!("The run's n of {actual_n} against a required n of {required_n}; threshold {}, detectable rate {}, achieved power {:.3}.", pct(*threshold), pct(*detectable_rate), achieved_power)}</p>
            {explain.clone().map(|e| view! { <p>{e}</p> })}
        }
        .into_any(),
        GateDetail::AnswerLeak { leaks, at_generation } => view! {
            <p>{format!("{} answer leaks in the driven suite; {} dropped at generation.", leaks.len(), at_generation.len())}</p>
        }
        .into_any(),
        GateDetail::ProtocolHygiene { failed } => view! {
            <p>{format!("Failed probes: {}.", failed.join(", "))}</p>
        }
        .into_any(),
        GateDetail::Drive { trials, errors, max_error_rate, compromised } => view! {
            <p>{format!("The drive completed {trials} trials; the model API failed {errors} (limit {}).{}", pct(*max_error_rate), if *compromised { " Over the limit: the measurement is compromised." } else { "" })}</p>
        }
        .into_any(),
        GateDetail::Synthesis { calls, failures, max_error_rate, compromised, explain } => view! {
            <p>{format!("The judge was asked {calls} times for tasks; {failures} calls failed (limit {}).{}", pct(*max_error_rate), if *compromised { " Over the limit: our measurement failed, not the server." } else { "" })}</p>
            {explain.clone().map(|e| view! { <p>{e}</p> })}
        }
        .into_any(),
        GateDetail::Unrecognised => view! {
            <p>"This gate's detail is of a kind this viewer does not know; its reason string stands."</p>
        }
        .into_any(),
    };
    view! {
        <section class="deciding">
            <h3>{format!("What the {} gate saw", gate.id)}</h3>
            <p class="reason-line">"reason: " <span class="reason">{gate.reason.clone()}</span></p>
            {verdict.map(|v| view! { <p class="verdict">{v}</p> })}
            {family}
        </section>
    }
}

/// Calls, errors and requests without a response, read from the MCP plane's
/// recorded tape statistics (`planes.mcp.tools[]`: calls, errors, pending).
fn construct_tape_counts(record: &RunRecord) -> AnyView {
    let tools = record
        .trace_stats
        .as_ref()
        .and_then(|s| s.pointer("/planes/mcp/tools"))
        .and_then(|t| t.as_array());
    let Some(tools) = tools else {
        return view! { <p>"The record carries no MCP tape statistics, so calls and unanswered requests are not stated."</p> }.into_any();
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
    view! {
        <p>"From the whole MCP tape, every arm of the run:"</p>
        <ul class="tape-counts">
            <li>{format!("Tool calls recorded: {calls}")}</li>
            <li>{format!("Came back as errors: {errors}")}</li>
            <li>{format!("Requests with no matching response: {pending}")}</li>
        </ul>
        {finding}
    }
    .into_any()
}

#[component]
fn SuiteFates(record: RunRecord) -> impl IntoView {
    let s = &record.suite;
    let rules = s
        .rejected_by_rule
        .iter()
        .map(|r| view! { <li>{format!("{}: {}", r.rule, r.count)}</li> })
        .collect_view();
    let min = record.preregistration.min_tasks.unwrap_or(8);
    let floor = record.preregistration.min_admission_rate;
    view! {
        <section class="fates">
            <h3>"Candidate tasks and their fates"</h3>
            <ul>
                <li>{format!("Candidates generated: {}", opt_u(s.candidates))}</li>
                <li>{format!("Admitted: {}{}", opt_u(s.admitted), floor.map(|f| format!(" (admission floor {})", pct(f))).unwrap_or_default())}</li>
                <li>{format!("Suite size: {} against a minimum of {min}", opt_u(s.tasks))}</li>
                <li>{format!("Trimmed as surplus after admission: {}", opt_u(s.trimmed_surplus))}</li>
                <li>{match &s.null_screened {
                    Some(c) => format!("Null screen at generation: {} screened, {} deleted as answerable without the server", c.screened, c.dropped),
                    None => "Null screen at generation: not recorded".to_owned(),
                }}</li>
            </ul>
            {(!s.rejected_by_rule.is_empty()).then(|| view! { <p>"Rejected by admission, per rule:"</p><ul>{rules}</ul> })}
            {s.limitation.clone().map(|l| view! { <p class="limitation">{l}</p> })}
        </section>
    }
}

fn extensions_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    if record.extensions.is_empty() {
        return None;
    }
    let first = &record.extensions[0];
    let start = format!(
        "On the registered size the {} gate stood at {} of {}: {}.",
        first.gate,
        first.pooled_before.k,
        first.pooled_before.n,
        verdict_word(first.verdict_before)
    );
    let rows = record
        .extensions
        .iter()
        .map(|b| {
            view! {
                <tr class="batch">
                    <th scope="row">{b.index}</th>
                    <td>{b.gate.clone()}</td>
                    <td class="tasks">{b.tasks_added}</td>
                    <td class="trials">{b.trials_added}</td>
                    <td class="pooled">{format!("{}/{}", b.pooled_after.k, b.pooled_after.n)}</td>
                    <td>{verdict_word(b.verdict_after)}</td>
                </tr>
            }
        })
        .collect_view();
    let sequence = std::iter::once(format!(
        "{}/{}",
        first.pooled_before.k, first.pooled_before.n
    ))
    .chain(
        record
            .extensions
            .iter()
            .map(|b| format!("{}/{}", b.pooled_after.k, b.pooled_after.n)),
    )
    .collect::<Vec<_>>()
    .join(", ");
    Some(view! {
        <section class="extensions">
            <h3>"Extension batches"</h3>
            <p>{start}</p>
            <p class="sequence">{format!("Pooled sequence: {sequence}")}</p>
            <table>
                <thead><tr>
                    <th scope="col">"Batch"</th><th scope="col">"Gate"</th>
                    <th scope="col">"Tasks added"</th><th scope="col">"Trials added"</th>
                    <th scope="col">"Pooled after"</th><th scope="col">"Verdict after"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    })
}

fn gate_ledger(record: &RunRecord) -> impl IntoView + use<> {
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

/// A link into this run's replay, filtered to one trial (`corr_id`).
pub fn evidence_href(run_id: &str, corr_id: &str) -> String {
    let corr: String = js_sys::encode_uri_component(corr_id).into();
    format!("?run={run_id}&view=replay&corr={corr}")
}

fn probes_view(record: &RunRecord) -> impl IntoView + use<> {
    let (passed, failed, unknown) = record.probes.tally();
    let run_id = record.run.id.clone();
    let rows = record
        .probes
        .findings
        .iter()
        .map(|p| {
            let (status, class) = match &p.status {
                fitness_shared::record::ProbeStatus::Pass => ("pass".to_owned(), "pass"),
                fitness_shared::record::ProbeStatus::Fail => ("fail: server fault".to_owned(), "server-fault"),
                // The reason is printed once: in the status when it adds to the detail.
                fitness_shared::record::ProbeStatus::Unknown { reason } if *reason != p.detail => (format!("unknown: {reason}"), "unknown"),
                fitness_shared::record::ProbeStatus::Unknown { .. } => ("unknown".to_owned(), "unknown"),
            };
            let evidence = if p.evidence.is_empty() {
                view! { <span class="none">"none recorded"</span> }.into_any()
            } else {
                p.evidence
                    .iter()
                    .map(|c| {
                        view! { <a class="evidence" href=evidence_href(&run_id, c)>{c.clone()}</a>" " }
                    })
                    .collect_view()
                    .into_any()
            };
            view! {
                <tr class=class><th scope="row">{p.id.clone()}</th><td>{status}</td><td>{p.detail.clone()}</td><td>{evidence}</td></tr>
            }
        })
        .collect_view();
    view! {
        <section class="probes-section">
            <h3>"Protocol probes"</h3>
            <p>{format!(
                "Spec revision negotiated: {}. Checks passed {passed} of {}; {unknown} unknown, counted apart.",
                record.probes.spec_currency.clone().unwrap_or_else(|| "not recorded".to_owned()),
                passed + failed
            )}</p>
            <div class="scroll"><table>
                <thead><tr><th scope="col">"Probe"</th><th scope="col">"Status"</th><th scope="col">"Detail"</th><th scope="col">"Evidence in the replay"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
        </section>
    }
}

fn cost_view(cost: &Cost) -> impl IntoView + use<> {
    match cost.clone() {
        Cost::Total { usd, .. } => {
            view! { <p>{format!("${usd:.2}, a total: nothing known is missing from it.")}</p> }
                .into_any()
        }
        Cost::Floor { usd, reasons, .. } => view! {
            <p>{format!("At least ${usd:.2}. It is a floor because:")}</p>
            <ul>{reasons.into_iter().map(|r| view! { <li>{r}</li> }).collect_view()}</ul>
        }
        .into_any(),
        Cost::None { why } => view! { <p>{format!("No figure: {why}")}</p> }.into_any(),
    }
}

fn notes_view(record: &RunRecord) -> impl IntoView + use<> {
    let standing = match record.notes.standing.as_ref() {
        Some(s) => {
            let text = format!(
                "This run also carries {} standing notes, published once as the set ",
                s.count
            );
            let link = crate::api::standing_notes_path(&s.set_id)
                .map(|href| {
                    view! { <a class="standing-notes" href=crate::api::site_url(&href)>{s.set_id.clone()}</a> }.into_any()
                })
                .unwrap_or_else(|| view! { <code>{s.set_id.clone()}</code> }.into_any());
            let board = crate::api::site_url(&format!(
                "./#{}",
                fitness_shared::board::StandingNotes::anchor(&s.set_id)
            ));
            view! {
                {text} {link} ". "
                <a class="standing-on-board" href=board>"Read them in the board's methods section"</a> "."
            }
            .into_any()
        }
        None => "This run carries no standing notes.".into_any(),
    };
    let own = record
        .notes
        .own
        .iter()
        .chain(record.notes.score.iter())
        .map(|n| view! { <li>{n.clone()}</li> })
        .collect_view();
    view! {
        <section class="notes">
            <h3>"Notes"</h3>
            <p>{standing}</p>
            <ul>{own}</ul>
        </section>
    }
}

fn tasks_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    let score = record.score.as_ref()?;
    let tasks = score
        .tasks
        .iter()
        .map(|t| {
            let yes = |b: bool| if b { "yes" } else { "no" };
            view! {
                <tr>
                    <th scope="row"><code>{t.task_id.clone()}</code></th>
                    <td>{yes(t.first_try_success)}</td>
                    <td>{yes(t.success)}</td>
                    <td>{t.tool_calls}</td>
                    <td>{t.failure.clone().unwrap_or_default()}</td>
                </tr>
            }
        })
        .collect_view();
    let tools = score
        .tools
        .iter()
        .map(|t| view! {
            <tr><th scope="row"><code>{t.tool.clone()}</code></th><td>{t.calls}</td><td>{t.errors}</td></tr>
        })
        .collect_view();
    Some(view! {
        <section class="tasks">
            <h3>"Per task"</h3>
            <div class="scroll"><table>
                <thead><tr><th scope="col">"Task"</th><th scope="col">"First try"</th><th scope="col">"Eventually"</th><th scope="col">"Tool calls"</th><th scope="col">"Failure"</th></tr></thead>
                <tbody>{tasks}</tbody>
            </table></div>
            <h3>"Per tool"</h3>
            <div class="scroll"><table>
                <thead><tr><th scope="col">"Tool"</th><th scope="col">"Calls"</th><th scope="col">"Errors"</th></tr></thead>
                <tbody>{tools}</tbody>
            </table></div>
        </section>
    })
}
