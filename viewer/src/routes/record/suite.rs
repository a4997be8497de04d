//! The record page's suite: the candidates' fates, how the suite was found
//! (discovery's moves and the operator's seeds), the rejected candidates,
//! extension batches, and each task's and tool's result.

use std::sync::Arc;

use fitness_shared::gates::suite_size_text;
use fitness_shared::record::{CandidateList, RunRecord};
use leptos::prelude::*;

use super::words::{opt_u, verdict_word};
use crate::api;
use crate::components::pct;

#[component]
pub(super) fn SuiteFates(record: Arc<RunRecord>) -> impl IntoView {
    let s = &record.suite;
    let rules = s
        .rejected_by_rule
        .iter()
        .map(|r| view! { <li>{format!("{}: {}", r.rule, r.count)}</li> })
        .collect_view();
    let floor = record.preregistration.min_admission_rate;
    // A suite the screen emptied says where its admitted candidates went.
    let size = fitness_shared::reading::screen::emptied(&record).map_or_else(
        || {
            suite_size_text(
                s.tasks.unwrap_or(0),
                record.preregistration.n_tasks,
                record.preregistration.min_tasks,
            )
        },
        |e| e.size,
    );
    view! {
        <section class="fates">
            <h3>"Candidate tasks and their fates"</h3>
            <ul>
                <li>{format!("Candidates generated: {}", opt_u(s.candidates))}</li>
                <li>{format!("Admitted: {}{}", opt_u(s.admitted), floor.map(|f| format!(" (admission floor {})", pct(f))).unwrap_or_default())}</li>
                <li>{format!("Suite size: {size}")}</li>
                <li>{format!("Trimmed as surplus after admission: {}", opt_u(s.trimmed_surplus))}</li>
                <li class="screen-count">{fitness_shared::reading::screen::ledger_text(s, &record.preregistration)}</li>
                {s.quality.as_ref().and_then(|q| q.mix_text()).map(|m| view! { <li class="suite-mix">{format!("What the suite asks: {m}")}</li> })}
                {s.quality.as_ref().filter(|q| !q.per_shape.is_empty()).zip(record.preregistration.aimed_mix).map(|(q, aim)| view! { <li class="suite-aim">{format!("Registered mix: {}", q.against_text(&aim))}</li> })}
            </ul>
            {(!s.rejected_by_rule.is_empty()).then(|| view! { <p>"Rejected by admission, per rule:"</p><ul>{rules}</ul> })}
            {s.limitation.clone().map(|l| view! { <p class="limitation">{l}</p> })}
        </section>
    }
}

/// Every candidate admission rejected, with its prompt, tools and rule,
/// from the list the record names (hashed in the record, so its signature
/// covers it); the list's own file is a link away.
pub(super) fn rejected_view(
    record: &RunRecord,
    candidates: Option<Arc<CandidateList>>,
) -> Option<impl IntoView + use<>> {
    let file = record.suite.candidates_file.as_ref()?;
    let href = fitness_shared::site::candidates_json(&record.run.id).map(|p| api::site_url(&p));
    let screened = candidates
        .as_ref()
        .filter(|l| !l.screened_out.is_empty())
        .map(|l| screen_ledger(&l.screened_out));
    let rows = candidates.filter(|l| !l.rejected.is_empty()).map(|list| {
        list.rejected
            .iter()
            .map(|c| {
                view! {
                    <tr>
                        <th scope="row">{c.id.clone()}</th>
                        <td>{c.rule.clone()}</td>
                        <td>{c.prompt.clone().unwrap_or_else(|| "(did not parse as a task)".to_owned())}</td>
                        <td>{c.tools.join(", ")}</td>
                        <td>{c.detail.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
    });
    let listed = rows.is_some();
    Some(view! {
        <section class="rejected">
            <h3>"Candidates rejected or deleted, each with why"</h3>
            <p>
                {format!("The list is kept beside the record ({} bytes, sha256 {}). ", file.bytes, &file.sha256[..file.sha256.len().min(12)])}
                <a class="candidates-file" href=href>"The list as JSON"</a>
            </p>
            {listed.then(|| view! {
                <h4>"Rejected by admission, each with the rule that rejected it"</h4>
                <div class="scroll"><table>
                    <thead><tr><th scope="col">"Candidate"</th><th scope="col">"Rule"</th><th scope="col">"Prompt"</th><th scope="col">"Tools"</th><th scope="col">"What the rule saw"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table></div>
            })}
            {screened}
        </section>
    })
}

/// The screen's ledger: each candidate the null screen deleted, with the
/// reply that answered it with no tools.
fn screen_ledger(deleted: &[fitness_shared::record::ListedCandidate]) -> impl IntoView + use<> {
    let rows = deleted
        .iter()
        .map(|c| {
            view! {
                <tr>
                    <th scope="row">{c.id.clone()}</th>
                    <td>{c.prompt.clone().unwrap_or_default()}</td>
                    <td>{c.tools.join(", ")}</td>
                    <td>{c.detail.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <h4 class="screen-ledger">{format!("Deleted by the null screen: {}, each with what the runner answered with no tools", deleted.len())}</h4>
        <div class="scroll"><table class="screened-out">
            <thead><tr><th scope="col">"Candidate"</th><th scope="col">"Prompt"</th><th scope="col">"Tools"</th><th scope="col">"What the screen saw"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table></div>
    }
}

pub(super) fn extensions_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
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
                    <td class="tasks">{b.tasks_added}{b.short.then(|| view! { <span class="short">{format!(" short: {} of the {} registered", b.tasks_added, record.preregistration.extension_size)}</span> })}</td>
                    <td class="trials">{b.trials_added}</td>
                    <td class="pooled">{format!("{}/{}", b.pooled_after.k, b.pooled_after.n)}</td>
                    <td class="resolved">{fitness_shared::reading::extensions::resolved_after_text(record, b)}</td>
                    <td class="dropped">{b.dropped.as_ref().map(fitness_shared::record::BatchDrops::text).unwrap_or_default()}</td>
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
    let end = fitness_shared::reading::extensions::resolution_text(record, &first.gate)
        .map(|t| view! { <p class="resolution">{t}</p> });
    Some(view! {
        <section class="extensions">
            <h3>"Extension batches"</h3>
            <p>{start}</p>
            <p class="sequence">{format!("Pooled sequence: {sequence}")}</p>
            <div class="scroll"><table>
                <thead><tr>
                    <th scope="col">"Batch"</th><th scope="col">"Gate"</th>
                    <th scope="col">"Tasks added"</th><th scope="col">"Trials added"</th>
                    <th scope="col">"Pooled after"</th><th scope="col">"Resolved to"</th><th scope="col">"Dropped, failed calls"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
            {end}
        </section>
    })
}

pub(super) fn tasks_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    let score = record.score.as_ref()?;
    let replayable = !record.tapes.is_empty();
    let tasks = score
        .tasks
        .iter()
        .map(|t| {
            let yes = |b: bool| if b { "yes" } else { "no" };
            // The drive's trials of a task carry the task's id as corr_id.
            let read = replayable.then(|| {
                let href = api::replay_conversation_url(&record.run.id, &t.task_id);
                view! { " " <a class="read-trial" href=href>"read it"</a> }
            });
            // A change is checked by reads the harness made after the
            // trial, on the wire tape under `<task>::state`.
            let act = (t.kind() == "act").then(|| {
                let state = replayable.then(|| {
                    let href = api::replay_conversation_url(
                        &record.run.id,
                        &format!("{}::state", t.task_id),
                    );
                    view! { " " <a class="read-state" href=href>"its state check"</a> }
                });
                view! { " " <span class="kind act">"act"</span> {state} }
            });
            view! {
                <tr>
                    <th scope="row"><code>{t.task_id.clone()}</code>{act}{read}</th>
                    <td>{t.shape.map_or("not recorded", |s| s.words())}</td>
                    <td>{yes(t.first_try_success)}</td>
                    <td>{yes(t.success)}</td>
                    <td>{match (t.reps_succeeded, t.reps) {
                        (Some(k), Some(n)) => format!("{k} of {n}"),
                        _ => "not recorded".to_owned(),
                    }}</td>
                    <td>{t.tool_calls}</td>
                    <td>{t.failure.clone().unwrap_or_default()}</td>
                </tr>
            }
        })
        .collect_view();
    // First-try success per shape, from the record's own intervals.
    let shapes = (!score.per_shape.is_empty()).then(|| {
        let rows = score
            .per_shape
            .iter()
            .map(|s| {
                let i = &s.first_try;
                view! {
                    <tr>
                        <th scope="row">{s.shape.words()}</th>
                        <td>{s.tasks}</td>
                        <td>{format!("{} of {}", i.k, i.n)}</td>
                        <td>{format!("{} ({} to {})", pct(i.rate), pct(i.low), pct(i.high))}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <h3>"Per shape"</h3>
            <p>"What each task asks of the server: a value looked up, a link followed, a count or total, a rank or comparison, a set, a change. First-try success with its Wilson 95% interval, per shape."</p>
            <div class="scroll"><table class="per-shape">
                <thead><tr><th scope="col">"Shape"</th><th scope="col">"Tasks"</th><th scope="col">"First try"</th><th scope="col">"Rate (95% interval)"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
        }
    });
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
                <thead><tr><th scope="col">"Task"</th><th scope="col">"Shape"</th><th scope="col">"First try"</th><th scope="col">"Eventually"</th><th scope="col">"Repetitions answered"</th><th scope="col">"Tool calls"</th><th scope="col">"Failure"</th></tr></thead>
                <tbody>{tasks}</tbody>
            </table></div>
            {shapes}
            <h3>"Per tool"</h3>
            <div class="scroll"><table>
                <thead><tr><th scope="col">"Tool"</th><th scope="col">"Calls"</th><th scope="col">"Errors"</th></tr></thead>
                <tbody>{tools}</tbody>
            </table></div>
        </section>
    })
}

/// How the suite was found: what the operator gave (seed calls, context)
/// and each move discovery made with what it found, so a maintainer whose
/// server gave a short suite knows what to seed.
pub(super) fn discovery_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    let ledger = record.suite.discovery.clone();
    let hints = record.preregistration.operator_hints.clone();
    if ledger.is_none() && hints.as_ref().is_none_or(|h| h.is_empty()) {
        return None;
    }
    let seeded = fitness_shared::board::RowSeeded::of(record).map(|s| {
        let calls = hints
            .iter()
            .flat_map(|h| h.seed_calls.iter())
            .map(|c| {
                let args = serde_json::Value::Object(c.arguments.clone()).to_string();
                view! { <li><code>{c.tool.clone()}</code>" "<code class="args">{args}</code></li> }
            })
            .collect_view();
        let context = hints
            .as_ref()
            .and_then(|h| h.context.clone())
            .map(|c| view! { <p class="context">{format!("Context given to the judge: {c}")}</p> });
        view! {
            <p class="seeded">{s.text()}</p>
            <ul class="seed-calls">{calls}</ul>
            {context}
        }
    });
    let counts = ledger.as_ref().map(|l| {
        format!(
            "Tasks from the operator's seed calls: {}; tasks from discovery's moves: {}.",
            l.seeded_tasks, l.discovered_tasks
        )
    });
    let moves = ledger
        .iter()
        .flat_map(|l| l.moves.iter())
        .map(|m| {
            view! {
                <tr class=if m.worked { "worked" } else { "found-nothing" }>
                    <th scope="row">{m.name.clone()}</th>
                    <td>{m.tool.clone().map(|t| view! { <code>{t}</code> })}</td>
                    <td>{m.tried.clone()}</td>
                    <td>{m.found.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let any_move = ledger.as_ref().is_some_and(|l| !l.moves.is_empty());
    let sentence = ledger
        .as_ref()
        .filter(|l| l.moves.is_empty())
        .map(|l| l.sentence());
    Some(view! {
        <section class="discovery">
            <h3>"How the suite was found"</h3>
            {seeded}
            {counts.map(|c| view! { <p class="origins">{c}</p> })}
            {sentence.map(|s| view! { <p>{s}</p> })}
            {any_move.then(|| view! {
                <div class="scroll"><table>
                    <thead><tr><th scope="col">"Move"</th><th scope="col">"Tool"</th><th scope="col">"Tried"</th><th scope="col">"Found"</th></tr></thead>
                    <tbody>{moves}</tbody>
                </table></div>
            })}
        </section>
    })
}
