//! One run's record (`runs/<id>/`, or `?run=<id>`): pre-rendered by
//! `fitness publish`, or fetched when the page is opened in place. It opens
//! on the numbers the deciding gate saw, and says who vouches for the
//! record: its signature, read against the key the site publishes.

use std::sync::Arc;

use fitness_shared::board::Row;
use fitness_shared::gates::suite_size_text;
use fitness_shared::integrity::{SignatureState, signature_state_of_bytes};
use fitness_shared::record::{
    CandidateList, Cost, GateDetail, GateRecord, NullRate, RunRecord, VerdictOutcome,
};
use leptos::either::{Either, EitherOf3, EitherOf10};
use leptos::prelude::*;

use crate::api;
use crate::components::{AttemptLine, AxisLabels, CaveatNote, IntervalBar, SignatureChip, pct};

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
    let zero_policy = fitness_shared::board::zero_policy_note(record)
        .map(|note| view! { <p class="limitation">{note}</p> });
    view! {
        <section>
            <h3>"Registered before the first call"</h3>
            <ul>{protocol.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
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
                <dt>"Runner model"</dt><dd>{match &record.run.runner_reported { Some(r) => format!("{} (the provider reported {r})", record.run.runner_model), None => record.run.runner_model.clone() }}</dd>
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

#[component]
fn DecidingGate(gate: GateRecord, record: Arc<RunRecord>) -> impl IntoView {
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
fn gate_family(detail: &GateDetail, record: &RunRecord) -> impl IntoView + use<> {
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
fn our_calls_text(detail: &GateDetail) -> (String, Option<String>) {
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
fn null_baseline_view(
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
fn construct_tape_counts(record: &RunRecord) -> impl IntoView + use<> {
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

#[component]
fn SuiteFates(record: Arc<RunRecord>) -> impl IntoView {
    let s = &record.suite;
    let rules = s
        .rejected_by_rule
        .iter()
        .map(|r| view! { <li>{format!("{}: {}", r.rule, r.count)}</li> })
        .collect_view();
    let floor = record.preregistration.min_admission_rate;
    let size = suite_size_text(
        s.tasks.unwrap_or(0),
        record.preregistration.n_tasks,
        record.preregistration.min_tasks,
    );
    view! {
        <section class="fates">
            <h3>"Candidate tasks and their fates"</h3>
            <ul>
                <li>{format!("Candidates generated: {}", opt_u(s.candidates))}</li>
                <li>{format!("Admitted: {}{}", opt_u(s.admitted), floor.map(|f| format!(" (admission floor {})", pct(f))).unwrap_or_default())}</li>
                <li>{format!("Suite size: {size}")}</li>
                <li>{format!("Trimmed as surplus after admission: {}", opt_u(s.trimmed_surplus))}</li>
                <li>{match (&s.null_screened, &s.screen_skipped) {
                    (Some(c), _) if c.errors > 0 => format!("Null screen at generation: {} screened, {} deleted as answerable without the server; {} screen calls failed, so {} candidates were kept unscreened", c.screened, c.dropped, c.errors, c.unscreened()),
                    (Some(c), _) => format!("Null screen at generation: {} screened, {} deleted as answerable without the server", c.screened, c.dropped),
                    (None, Some(why)) => format!("Null screen at generation: registered, {why}"),
                    (None, None) if record.preregistration.null_screen == Some(false) => "Null screen at generation: not registered".to_owned(),
                    (None, None) => "Null screen at generation: not recorded".to_owned(),
                }}</li>
            </ul>
            {(!s.rejected_by_rule.is_empty()).then(|| view! { <p>"Rejected by admission, per rule:"</p><ul>{rules}</ul> })}
            {s.limitation.clone().map(|l| view! { <p class="limitation">{l}</p> })}
        </section>
    }
}

/// Every candidate admission rejected, with its prompt, tools and rule,
/// from the list the record names (hashed in the record, so its signature
/// covers it); the list's own file is a link away.
fn rejected_view(
    record: &RunRecord,
    candidates: Option<Arc<CandidateList>>,
) -> Option<impl IntoView + use<>> {
    let file = record.suite.candidates_file.as_ref()?;
    let href = fitness_shared::site::candidates_json(&record.run.id).map(|p| api::site_url(&p));
    let rows = candidates.map(|list| {
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
            <h3>"Rejected candidates, each with the rule that rejected it"</h3>
            <p>
                {format!("The list is kept beside the record ({} bytes, sha256 {}). ", file.bytes, &file.sha256[..file.sha256.len().min(12)])}
                <a class="candidates-file" href=href>"The list as JSON"</a>
            </p>
            {listed.then(|| view! {
                <div class="scroll"><table>
                    <thead><tr><th scope="col">"Candidate"</th><th scope="col">"Rule"</th><th scope="col">"Prompt"</th><th scope="col">"Tools"</th><th scope="col">"What the rule saw"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table></div>
            })}
        </section>
    })
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
                    <td class="tasks">{b.tasks_added}{b.short.then(|| view! { <span class="short">{format!(" short: {} of the {} registered", b.tasks_added, record.preregistration.extension_size)}</span> })}</td>
                    <td class="trials">{b.trials_added}</td>
                    <td class="pooled">{format!("{}/{}", b.pooled_after.k, b.pooled_after.n)}</td>
                    <td>{verdict_word(b.verdict_after)}</td>
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
    Some(view! {
        <section class="extensions">
            <h3>"Extension batches"</h3>
            <p>{start}</p>
            <p class="sequence">{format!("Pooled sequence: {sequence}")}</p>
            <table>
                <thead><tr>
                    <th scope="col">"Batch"</th><th scope="col">"Gate"</th>
                    <th scope="col">"Tasks added"</th><th scope="col">"Trials added"</th>
                    <th scope="col">"Pooled after"</th><th scope="col">"Verdict after"</th><th scope="col">"Dropped, failed calls"</th>
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

fn tasks_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
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
                <thead><tr><th scope="col">"Task"</th><th scope="col">"First try"</th><th scope="col">"Eventually"</th><th scope="col">"Repetitions answered"</th><th scope="col">"Tool calls"</th><th scope="col">"Failure"</th></tr></thead>
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
