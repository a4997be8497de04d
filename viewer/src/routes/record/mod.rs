//! One run's record (`runs/<id>/`, or `?run=<id>`): pre-rendered by
//! `fitness publish`, or fetched when the page is opened in place. It opens
//! on the numbers the deciding gate saw, and says who vouches for the
//! record: its signature, read against the key the site publishes.

use std::sync::Arc;

use fitness_shared::board::Row;
use fitness_shared::integrity::{SignatureState, signature_state_of_bytes};
use fitness_shared::record::{CandidateList, Cost, GateRecord, RunRecord};
use leptos::either::{Either, EitherOf3};
use leptos::prelude::*;

use crate::api;
mod gates;
mod suite;
mod words;

use gates::{DecidingGate, gate_ledger};
use suite::{SuiteFates, discovery_view, extensions_view, rejected_view, tasks_view};

use crate::components::{AttemptLine, AxisLabels, CaveatNote, IntervalBar, SignatureChip};

/// A record as the page shows it.
#[derive(Clone)]
pub struct LoadedRecord {
    pub record: Arc<RunRecord>,
    /// The signature state as the browser checked it (the record file's
    /// bytes against the site's key).
    pub signature: SignatureState,
    /// The state the board row states (as the page was rendered), if the
    /// board has the run.
    pub published: Option<SignatureState>,
    /// Whether the site publishes a publisher key.
    pub site_key: bool,
    /// The run's board row, if the board has the run.
    pub row: Option<Arc<Row>>,
    /// The candidates its admission rejected, when its record names the
    /// list (and the site serves it).
    pub candidates: Option<Arc<CandidateList>>,
}

/// Fetch a run's record file and the board, and check the signature. The
/// record must be the record of the run asked for.
pub async fn load_record(run: String) -> Result<LoadedRecord, String> {
    let bytes = api::fetch_record_bytes(&run).await?;
    let record: RunRecord = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the record of {run} is not a run record: {e}"))?;
    if record.run.id != run {
        return Err(format!(
            "the record file of run {run} holds the record of run {}",
            record.run.id
        ));
    }
    let board = api::fetch_board().await.ok();
    let key = board.as_ref().and_then(|b| b.publisher_key.clone());
    let row = board
        .as_ref()
        .and_then(|b| b.rows.iter().find(|r| r.id == run).cloned())
        .map(Arc::new);
    let candidates = match &record.suite.candidates_file {
        Some(_) => api::fetch_candidates(&run).await.ok().map(Arc::new),
        None => None,
    };
    Ok(LoadedRecord {
        signature: signature_state_of_bytes(&bytes, key.as_deref()),
        published: row.as_ref().map(|r| r.signature.clone()),
        site_key: key.is_some(),
        record: Arc::new(record),
        row,
        candidates,
    })
}

/// The record page's link back to the board.
#[component]
pub fn BackToBoard() -> impl IntoView {
    view! { <nav class="back"><a href=api::site_url("./")>"Back to the board"</a></nav> }
}

#[component]
pub fn RecordView(
    record: Arc<RunRecord>,
    signature: RwSignal<SignatureState>,
    site_key: bool,
    #[prop(default = None)] row: Option<Arc<Row>>,
    #[prop(default = None)] candidates: Option<Arc<CandidateList>>,
) -> impl IntoView {
    let shared = record;
    let record: &RunRecord = &shared;
    let outcome = record.outcome.code();
    let deciding = deciding_gate(record);
    let headline = headline(record, outcome, deciding.as_ref());
    let why_no_gate = why_no_gate(record, deciding.is_none());
    let score_bar = record
        .score
        .as_ref()
        .map(|s| view! { <div class="result scored"><IntervalBar interval=s.first_try /><AxisLabels /></div> });
    let deciding_view = deciding.map(|g| view! { <DecidingGate gate=g record=shared.clone() /> });
    let caveat =
        fitness_shared::board::score_caveat(record).map(|c| view! { <CaveatNote caveat=c /> });
    let economics = economics_view(record);
    let consistency = consistency_view(record);
    let per_kind = fitness_shared::board::RowKinds::of(record).map(|k| {
        let lines = k.per_kind_lines().join("; ");
        view! { <p class="economics per-kind">{format!("{}. {lines}", k.text())}</p> }
    });
    let tool_list = tool_list_view(record);
    let signature_view = signature_line(signature, site_key);
    let suite_view = view! { <SuiteFates record=shared.clone() /> };
    let discovery = discovery_view(record);
    let rejected = rejected_view(record, candidates);
    let access = access_view(record);
    let extensions = extensions_view(record);
    let ledger = gate_ledger(record);
    let tasks = tasks_view(record);
    let probes = probes_view(record);
    let findings = super::findings::findings_view(record);
    let replay_link = replay_links(record);
    let cost = cost_view(&record.cost);
    let rate_waits = record
        .run
        .rate_waits
        .map(|w| view! { <p class="rate-waits">{w.text()}</p> });
    let notes = notes_view(record);
    let registered = registered_view(record);
    let identity = identity_view(record, row.as_deref());
    view! {
        <article class="record" data-run-id=record.run.id.clone() data-outcome=outcome>
            <h2>{record.server.slug.clone()}</h2>
            <p class="target">{record.server.target.display()}</p>
            <p class="headline">{headline}</p>
            {why_no_gate}
            {score_bar}
            {economics}
            {consistency}
            {per_kind}
            {tool_list}
            {caveat}
            {signature_view}
            {replay_link}
            {deciding_view}
            {suite_view}
            {discovery}
            {access}
            {rejected}
            {extensions}
            {registered}
            {ledger}
            {findings}
            {tasks}
            {probes}
            <section class="cost-section"><h3>"Cost"</h3>{cost}{rate_waits}</section>
            {notes}
            {identity}
        </article>
    }
}

/// The gate the page opens on: the one that refused the run, or, for a
/// scored run, the construct gate that let it through.
fn deciding_gate(record: &RunRecord) -> Option<GateRecord> {
    record
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
        .cloned()
}

fn headline(record: &RunRecord, outcome: &str, deciding: Option<&GateRecord>) -> String {
    match (&record.score, deciding) {
        (Some(score), _) => format!("Scored: first-try success {}", score.first_try.text()),
        (None, Some(g)) if record.outcome == fitness_shared::record::Outcome::Compromised => {
            let title = fitness_shared::board::compromised_title(&g.id);
            format!(
                "{outcome}: {}",
                title.strip_prefix("Compromised: ").unwrap_or(&title)
            )
        }
        (None, Some(g)) => format!(
            "{outcome}: stopped at the {} gate, reason {}",
            g.id, g.reason
        ),
        (None, None) => {
            format!("{outcome}: no gate decided this run.")
        }
    }
}

/// A run no gate decided (VOID) says why right under its headline, in the
/// record's own score notes.
fn why_no_gate(record: &RunRecord, no_gate: bool) -> Option<impl IntoView + use<>> {
    (record.score.is_none() && no_gate).then(|| {
        let why = if record.notes.score.is_empty() {
            "The record does not say why the run ended.".to_owned()
        } else {
            record.notes.score.join(" ")
        };
        view! { <p class="why-no-score">{why}</p> }
    })
}

fn economics_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    record.score.as_ref().map(|s| {
        let e = fitness_shared::board::RowEconomics {
            calls: s.mean_calls_per_completed_task,
            tokens: s.mean_tokens_per_completed_task,
            usd: s.mean_cost_per_completed_task_usd,
        };
        view! { <p class="economics">{crate::components::economics_text(&e)}</p> }
    })
}

/// How each task's repetitions agree, beside first-try success: the share
/// of tasks every repetition answered (pass^k) and the tasks that flip.
/// Read from the record's own figure; never a rank.
fn consistency_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    let c = record.score.as_ref()?.consistency.as_ref()?;
    let text = if c.reps < 2 {
        "Consistency: one repetition per task, so there is no agreement between repetitions to read.".to_owned()
    } else {
        format!(
            "Consistency over {} repetitions per task: pass^{} (every repetition answered) {} tasks; {} of {} tasks flip between repetitions ({:.0}%), {} never answered. A reading of reliability, not a rank.",
            c.reps,
            c.reps,
            c.every_rep.text(),
            c.flipping,
            c.tasks,
            c.flip_rate() * 100.0,
            c.never
        )
    };
    Some(view! { <p class="economics consistency">{text}</p> })
}

/// What the tool list costs the runner on every turn, measured between the
/// null arms (or why it could not be).
fn tool_list_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    let t = record.tool_list.as_ref()?;
    let how = match t.tokens_per_turn {
        Some(_) => format!(
            " The median over {} tasks of the first turn's input tokens (cache reads and writes included) with the tool list, less without it: the stubbed-empty and no-tools null arms send the same system text and prompt. Counted by {}{}.",
            t.pairs,
            t.model,
            if t.estimate {
                ", an estimate from characters, not a provider's tokenizer"
            } else {
                "'s own tokenizer, as the provider reported"
            }
        ),
        None => String::new(),
    };
    Some(view! { <p class="economics tool-list">{format!("{}.{how}", capitalised(&t.text()))}</p> })
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The signature state, as the browser last checked it.
fn signature_line(signature: RwSignal<SignatureState>, site_key: bool) -> impl IntoView + use<> {
    move || {
        let state = signature.get();
        let sentence = state.sentence(site_key);
        let name = state.name();
        view! {
            <p class="signature-state" data-signature=name>
                <SignatureChip state=state site_key=site_key />
                " "
                <span class="signature-sentence">{sentence}</span>
            </p>
        }
    }
}

/// The replay link and each tape, or a plain statement that none were
/// published.
fn replay_links(record: &RunRecord) -> impl IntoView + use<> {
    if record.tapes.is_empty() {
        Either::Left(
            view! { <p class="no-tapes">"No tapes were published for this run, so there is no replay."</p> },
        )
    } else {
        let href = api::replay_url(&record.run.id);
        let tapes = record
            .tapes
            .iter()
            .map(|t| {
                let href = fitness_shared::site::tape(&record.run.id, &t.path)
                    .map(|p| api::site_url(&p))
                    .unwrap_or_default();
                view! { " " <a class="tape" href=href title=format!("sha256 {}, {} bytes", t.sha256, t.bytes)>{t.path.clone()}</a> }
            })
            .collect_view();
        Either::Right(view! {
            <p class="replay-links">
                <a class="open-replay button" href=href>"Replay the recorded session"</a>
                " Tapes:" {tapes}
            </p>
        })
    }
}

/// What the run registered before its first call: the null screen and the
/// extension policy.
fn registered_view(record: &RunRecord) -> impl IntoView + use<> {
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
        prereg
            .screen_protocol
            .clone()
            .map(|p| format!("Null screen protocol, in the run's own words: {p}"))
            .unwrap_or_else(|| "The record states no null screen protocol.".to_owned()),
        fitness_shared::reading::extensions::policy_text(prereg),
        prereg
            .extension_protocol
            .clone()
            .map(|p| format!("Extension protocol, in the run's own words: {p}"))
            .unwrap_or_else(|| "The record states no extension protocol.".to_owned()),
    ];
    let zero_policy = fitness_shared::board::zero_policy_note(record)
        .map(|note| view! { <p class="limitation">{note}</p> });
    // A screened suite points to the screen's bias, stated once on the
    // board: its passed baseline is not the evidence an unscreened one is.
    let bias = fitness_shared::reading::screen::ran(record).then(|| {
        let href = api::site_url(&format!("./#{}", fitness_shared::reading::screen::BIAS_ANCHOR));
        view! {
            <p class="screen-bias">
                "A null baseline met by a screened suite reads lower than on an unscreened one, so a pass here is not the same evidence. "
                <a class="screen-bias-link" href=href>{fitness_shared::reading::screen::BIAS_TITLE}</a>
                ", on the board."
            </p>
        }
    });
    view! {
        <section>
            <h3>"Registered before the first call"</h3>
            <ul>{protocol.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
            {bias}
            {zero_policy}
        </section>
    }
}

/// The run's identity, and where it stands among the server's runs: as the
/// board counts them when it was published (the row's attempt, the nearest
/// others named with their outcome and group), and as the record counted
/// them when it was recorded.
fn identity_view(record: &RunRecord, row: Option<&Row>) -> impl IntoView + use<> {
    let published =
        row.map(|r| view! { <p class="attempt"><AttemptLine attempt=r.attempt.clone() /></p> });
    let recorded = record.run.attempt.as_ref().map(|a| {
        view! {
            <p class="attempt-recorded">{match a.others.len() {
                0 => "When it was recorded, it was the first run of this server in its output directory.".to_owned(),
                n => format!("When it was recorded, it was run {} in its output directory, after {n} earlier.", a.index),
            }}</p>
        }
    });
    view! {
        <section class="identity">
            <h3>"Identity"</h3>
            <dl>
                <dt>"Run"</dt><dd>{record.run.id.clone()}</dd>
                <dt>"Started"</dt><dd>{record.run.started_at.clone()}</dd>
                <dt>"Suite hash"</dt><dd><code>{record.run.suite_hash.clone()}</code></dd>
                <dt>"Generator"</dt><dd>{record.run.generator_label().to_owned()}{fitness_shared::generators::dictates_calls(record.run.generator_label()).then(|| view! { <span class="relay-note">" — "{fitness_shared::generators::RELAY_SENTENCE}</span> })}</dd>
                <dt>"Runner model"</dt><dd>{record.run.runner_text()}</dd>
                <dt>"Judge model"</dt><dd>{record.run.judge_model.clone()}</dd>
                <dt>"Credentials"</dt><dd>{record.server.credential_context.label().to_owned()}{record.server.credential.as_ref().map(|c| view! { <span class="credential-detail">" — "{c.text()}</span> })}</dd>
                {record.server.surface_delta.as_ref().map(|d| view! { <dt>"Tool surface"</dt><dd class="surface-delta">{d.text()}</dd> })}
                <dt>"Access"</dt><dd class="access">{access_text(record)}</dd>
            </dl>
            {published}
            {recorded}
            <p><a class="history" href=api::server_page_url(&record.server.slug)>"Every run of this server"</a></p>
        </section>
    }
}

/// What the run was allowed to do to the server, in the words the row
/// uses.
fn access_text(record: &RunRecord) -> String {
    record.access.as_ref().map_or_else(
        || {
            format!(
                "{} (recorded before runs were read-only by default)",
                fitness_shared::record::ACCESS_NOT_RECORDED
            )
        },
        fitness_shared::record::AccessLedger::text,
    )
}

/// What the run did to the server: every call the harness withheld (by
/// tool, with the trials that saw one), every write it made, and the
/// trials whose later keys may be stale.
fn access_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    let a = record.access.as_ref()?;
    let mode = match a.mode {
        fitness_shared::record::AccessMode::ReadOnly => format!(
            "Read-only: no call that may write reached the server. Tools that may write: {}.",
            if a.writers.is_empty() {
                "none".to_owned()
            } else {
                a.writers.join(", ")
            }
        ),
        fitness_shared::record::AccessMode::Sandbox => format!(
            "Sandbox ({}): the operator declared the target may be written to{}.",
            a.text(),
            if a.copied_paths.is_empty() {
                String::new()
            } else {
                format!(
                    "; the server ran over copies of {}, never the originals",
                    a.copied_paths.join(", ")
                )
            }
        ),
    };
    let blocked = (!a.blocked.is_empty()).then(|| {
        view! {
            <p>"Calls the harness withheld (never sent, never a server error):"</p>
            <ul class="blocked">{a.blocked.iter().map(|b| view! {
                <li>{format!("{}: {} call{}, in {}", b.tool, b.calls, if b.calls == 1 { "" } else { "s" }, b.trials.join(", "))}</li>
            }).collect_view()}</ul>
        }
    });
    let writes = (!a.writes.is_empty()).then(|| {
        let more = a.writes_total.saturating_sub(a.writes.len() as u64);
        view! {
            <p>{format!("Every write the run made ({}):", a.writes_total)}</p>
            <ol class="writes">{a.writes.iter().map(|w| view! {
                <li><code>{w.tool.clone()}</code>" "{w.corr_id.clone().unwrap_or_default()}" "<code class="arguments">{fitness_shared::tape::timeline::excerpt(&w.arguments.to_string(), 160)}</code></li>
            }).collect_view()}</ol>
            {(more > 0).then(|| view! { <p>{format!("… and {more} more, on the wire tape.")}</p> })}
        }
    });
    let stale = (!a.stale_trials.is_empty()).then(|| view! {
        <p class="limitation">{format!("Nothing restored the state between trials: {} trial(s) wrote ({}), so the answer keys of trials after them may be stale.", a.stale_trials.len(), a.stale_trials.join(", "))}</p>
    });
    Some(view! {
        <section class="access">
            <h3>"What the run was allowed to do"</h3>
            <p>{mode}</p>
            {blocked}
            {writes}
            {stale}
        </section>
    })
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
                Either::Left(view! { <span class="none">"none recorded"</span> })
            } else {
                Either::Right(p.evidence
                    .iter()
                    .map(|c| {
                        view! { <a class="evidence" href=api::replay_trial_url(&run_id, c)>{c.clone()}</a>" " }
                    })
                    .collect_view())
            };
            view! {
                <tr class=class><th scope="row">{p.id.clone()}</th><td>{status}</td><td>{p.detail.clone()}</td><td>{evidence}</td></tr>
            }
        })
        .collect_view();
    view! {
        <section class="probes-section">
            <h3>"Protocol probes"</h3>
            <p>{match &record.probes.unreachable {
                Some(why) => format!("The probes could not run: {why}."),
                None => format!(
                    "Spec revision negotiated: {}. Checks passed {passed} of {}; {unknown} unknown, counted apart.",
                    record.probes.spec_currency.clone().unwrap_or_else(|| "not recorded".to_owned()),
                    passed + failed
                ),
            }}</p>
            <div class="scroll"><table>
                <thead><tr><th scope="col">"Probe"</th><th scope="col">"Status"</th><th scope="col">"Detail"</th><th scope="col">"Evidence in the replay"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
        </section>
    }
}

fn cost_view(cost: &Cost) -> impl IntoView + use<> {
    match cost.clone() {
        Cost::Total { usd, .. } => EitherOf3::A(
            view! { <p>{format!("${usd:.2}, a total: nothing known is missing from it.")}</p> },
        ),
        Cost::Floor { usd, reasons, .. } => EitherOf3::B(view! {
            <p>{format!("At least ${usd:.2}. It is a floor because:")}</p>
            <ul>{reasons.into_iter().map(|r| view! { <li>{r}</li> }).collect_view()}</ul>
        }),
        Cost::None { why } => EitherOf3::C(view! { <p>{format!("No figure: {why}")}</p> }),
    }
}

fn notes_view(record: &RunRecord) -> impl IntoView + use<> {
    let standing = match record.notes.standing.as_ref() {
        Some(s) => {
            let text = format!(
                "This run also carries {} standing notes, published once as the set ",
                s.count
            );
            let link = fitness_shared::site::standing_notes(&s.set_id)
                .map(|href| {
                    Either::Left(view! { <a class="standing-notes" href=api::site_url(&href)>{s.set_id.clone()}</a> })
                })
                .unwrap_or_else(|| Either::Right(view! { <code>{s.set_id.clone()}</code> }));
            let board = api::site_url(&format!(
                "./#{}",
                fitness_shared::board::StandingNotes::anchor(&s.set_id)
            ));
            Either::Left(view! {
                {text} {link} ". "
                <a class="standing-on-board" href=board>"Read them in the board's methods section"</a> "."
            })
        }
        None => Either::Right("This run carries no standing notes."),
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
