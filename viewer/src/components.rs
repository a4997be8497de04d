//! The components every page shares: the interval bar on the 0 to 100
//! axis, the result slot (a score or the refusal that replaced it), a board
//! row, the signature chip, the cost, and the helpers they format numbers
//! with; and whether the viewer is embedded in another page.

use fitness_shared::board::{Row, RowCost, RowEconomics, RowResult, ScoreCaveat};
use fitness_shared::integrity::SignatureState;
use fitness_shared::record::Interval;
use leptos::either::{Either, EitherOf3};
use leptos::prelude::*;

use std::cell::Cell;

use crate::api;

thread_local! {
    static EMBEDDED: Cell<bool> = const { Cell::new(false) };
}

/// Whether the viewer is mounted inside another page (script-tag embedding):
/// it then never rewrites the host page's URL.
pub fn embedded() -> bool {
    EMBEDDED.with(Cell::get)
}

/// Mark the viewer as mounted inside another page.
pub fn set_embedded(on: bool) {
    EMBEDDED.with(|e| e.set(on));
}

/// Show `render(source())`, and build it anew whenever `source` changes.
///
/// A page is never edited in place: it is replaced. Rendering through a
/// keyed list of one item, keyed by a fresh number on every change, says
/// exactly that, and spares the wasm the code that would diff a whole page
/// tree against another (tens of kilobytes for the board, the record and
/// the replay together).
pub fn anew<T, V>(
    source: impl Fn() -> T + Send + Sync + 'static,
    render: impl Fn(T) -> V + Send + Sync + Clone + 'static,
) -> impl IntoView
where
    T: Send + 'static,
    V: IntoView + 'static,
{
    let next = std::sync::atomic::AtomicU64::new(0);
    view! {
        <For
            each=move || {
                let value = source();
                [(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed), value)]
            }
            key=|(n, _)| *n
            children=move |(_, value)| render(value)
        />
    }
}

/// A stored fraction printed as a percentage with one decimal.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A count with thousands separators: `17,921`.
pub fn thousands(n: f64) -> String {
    // Rounded as `{:.0}` rounds (half to even), as the board always has.
    let whole = format!("{:.0}", n.max(0.0));
    fitness_shared::record::group_thousands(whole.parse().unwrap_or(i64::MAX))
}

/// Clamp a stored fraction onto the 0-100 axis for drawing.
fn axis_pos(x: f64) -> f64 {
    (x * 100.0).clamp(0.0, 100.0)
}

/// The shared 0 to 100 axis with its labels, drawn once above a column of
/// intervals.
#[component]
pub fn AxisLabels() -> impl IntoView {
    view! {
        <span class="axis-labels" aria-hidden="true">
            <span class="at0">"0"</span>
            <span class="at50">"50"</span>
            <span class="at100">"100"</span>
        </span>
    }
}

/// A Wilson band on the shared 0-100 axis with the point marked.
#[component]
pub fn IntervalBar(interval: Interval) -> impl IntoView {
    let low = axis_pos(interval.low);
    let high = axis_pos(interval.high);
    let point = axis_pos(interval.rate);
    let label = format!("First-try success {}", interval.text());
    view! {
        <div class="axis" role="img" aria-label=label>
            <span class="tick t0"></span>
            <span class="tick t50"></span>
            <span class="tick t100"></span>
            <span
                class="band"
                style=format!("left:{low:.2}%;width:{:.2}%", (high - low).max(0.4))
            ></span>
            <span class="point" style=format!("left:{point:.2}%")></span>
        </div>
    }
}

/// What the publication rule reads on an imported (or otherwise unresolved)
/// pass: the score stands as it was published, with this beside it (the
/// short form on a board row, the whole sentence on the record page).
#[component]
pub fn CaveatNote(caveat: ScoreCaveat, #[prop(optional)] full: bool) -> impl IntoView {
    let label = if caveat.imported {
        "Imported pass."
    } else {
        "Unresolved pass."
    };
    let text = if full {
        caveat.sentence()
    } else {
        caveat.summary()
    };
    view! {
        <p class="caveat" data-reads=caveat.reads.clone()>
            <span class="caveat-label">{label}</span>
            " "
            {text}
        </p>
    }
}

/// Calls, tokens and dollars per completed task.
pub fn economics_text(e: &RowEconomics) -> String {
    let mut parts = Vec::new();
    if let Some(c) = e.calls {
        parts.push(format!("{c:.1} calls"));
    }
    if let Some(t) = e.tokens {
        parts.push(format!("{} tokens", thousands(t)));
    }
    if let Some(u) = e.usd {
        parts.push(format!("${u:.4}"));
    }
    format!("{} per completed task", parts.join(", "))
}

/// The result slot: the interval, or the refusal that replaced it.
#[component]
pub fn ResultSlot(
    result: RowResult,
    #[prop(default = None)] economics: Option<RowEconomics>,
) -> impl IntoView {
    match result {
        RowResult::Scored { first_try, caveat } => {
            let text = first_try.text();
            Either::Left(view! {
                <div class="result scored">
                    <IntervalBar interval=first_try />
                    <p class="interval-text">{text}</p>
                    {economics.map(|e| view! { <p class="economics">{economics_text(&e)}</p> })}
                    {caveat.map(|c| view! { <CaveatNote caveat=c /> })}
                </div>
            })
        }
        RowResult::Refused {
            code,
            gate,
            reason,
            teaser,
            ..
        } => {
            let gate = gate
                .map(|g| format!("stopped at the {g} gate"))
                .unwrap_or_else(|| "no gate decided this run".to_owned());
            // A code-like reason (`below_threshold`) is set in monospace; a
            // sentence (a VOID run's score note) reads as prose.
            let reason_class = if reason.contains(' ') {
                "reason prose"
            } else {
                "reason"
            };
            Either::Right(view! {
                <div class="result refused">
                    <p class="refusal-head">
                        <span class="code">{code}</span>
                        " "
                        <span class="gate">{gate}</span>
                    </p>
                    <p class="teaser">{teaser}</p>
                    <p class="reason-line">"reason: " <span class=reason_class>{reason}</span></p>
                </div>
            })
        }
    }
}

/// The cost slot text: a total, "at least" with its reasons, or none with why.
pub fn cost_view(cost: &RowCost) -> impl IntoView + use<> {
    match cost.clone() {
        RowCost::Total { usd } => EitherOf3::A(view! {
            <span class="cost total">{format!("${usd:.2} total")}</span>
        }),
        RowCost::Floor { usd, reasons } => {
            let why = reasons.join("; ");
            EitherOf3::B(view! {
                <span class="cost floor" title=why.clone()>
                    {format!("at least ${usd:.2}")}
                    <span class="why">{format!(" ({why})")}</span>
                </span>
            })
        }
        RowCost::None { why } => EitherOf3::C(view! {
            <span class="cost none">"no figure: " {why}</span>
        }),
    }
}

/// The short label of a signature state, for a row or a record's chip.
pub fn signature_label(state: &SignatureState) -> String {
    match state {
        SignatureState::Verified { fingerprint } => format!("Verified · key {fingerprint}"),
        SignatureState::OtherKey { fingerprint, .. } => {
            format!("Not verified · another key {fingerprint}")
        }
        SignatureState::NoSiteKey { fingerprint } => {
            format!("Not verified · key {fingerprint}, no site key")
        }
        SignatureState::Unsigned => "Unsigned".to_owned(),
        SignatureState::Invalid { .. } => "Not verified · signature invalid".to_owned(),
    }
}

/// The signature state as a chip: the same words on a row, a record page
/// and (with the tapes checked too) the replay's badge.
#[component]
pub fn SignatureChip(state: SignatureState, site_key: bool) -> impl IntoView {
    view! {
        <span class=format!("chip signature {}", state.name()) data-signature=state.name()
            title=state.sentence(site_key)>
            {signature_label(&state)}
        </span>
    }
}

/// One board row: a published run, scored or refused. `site_key` says
/// whether the site publishes a publisher key.
#[component]
pub fn RowView(row: Row, #[prop(optional)] site_key: bool) -> impl IntoView {
    let outcome = match &row.result {
        RowResult::Scored { .. } => "SCORED".to_owned(),
        RowResult::Refused { code, .. } => code.clone(),
    };
    view! {
        <article class="row" data-run-id=row.id.clone() data-outcome=outcome
            data-signature=row.signature.name()>
            {row_identity(&row)}
            <ResultSlot result=row.result.clone() economics=row.economics />
            {row_facts(&row)}
            {row_evidence(&row, site_key)}
        </article>
    }
}

/// A row's run: the server, the chips that say how it was measured, when,
/// and where it stands among the server's runs.
fn row_identity(row: &Row) -> impl IntoView + use<> {
    let generator = row
        .generator
        .clone()
        .unwrap_or_else(|| fitness_shared::board::GENERATOR_NOT_RECORDED.to_owned());
    let generator_class = if row.generator.is_some() {
        "chip generator"
    } else {
        "chip generator unrecorded"
    };
    // A suite whose prompts name the tool and its arguments measures relay.
    let relay = row
        .generator
        .as_deref()
        .is_some_and(fitness_shared::generators::dictates_calls)
        .then(|| {
            view! {
                <span class="chip relay" title=fitness_shared::generators::RELAY_SENTENCE>
                    "relay: the tasks dictate the calls"
                </span>
            }
        });
    // A screened row points to the screen's bias, stated once on the
    // board; any other suite's chip is words alone.
    let screened = match (row.screened, row.screen_skipped) {
        (Some(true), false) => Either::Left(view! {
            <a class="chip screened" href=api::site_url(&format!("#{}", fitness_shared::reading::screen::BIAS_ANCHOR))
                title=fitness_shared::reading::screen::BIAS_TITLE>{row.screen_text()}</a>
        }),
        _ => Either::Right(view! { <span class="chip screened">{row.screen_text()}</span> }),
    };
    let history = api::server_page_url(&row.server.slug);
    let attempt = view! {
        <p class="attempt">
            <AttemptLine attempt=row.attempt.clone() />
            " "
            <a class="history" href=history>"Every run of this server"</a>
        </p>
    };
    let started = row.started_at.replace('T', " ");
    // The standing notes are printed once, in the board's methods section;
    // the row links there.
    let standing = row.standing.as_ref().map(|s| {
        let href = api::site_url(&format!(
            "#{}",
            fitness_shared::board::StandingNotes::anchor(&s.set_id)
        ));
        let text = match s.count {
            1 => "1 standing note".to_owned(),
            n => format!("{n} standing notes"),
        };
        view! { " · " <a class="standing-link" href=href>{text}</a> }
    });
    view! {
        <div class="identity">
            <h3 class="server">{row.server.slug.clone()}</h3>
            <p class="target">{row.server.target.clone()}</p>
            <p class="chips">
                <span class=generator_class>{generator}</span>
                {relay}
                <span class="chip runner">{format!("runner {}", row.runner_model)}</span>
                <span class="chip credential">{row.credential.clone()}</span>
                {row.access.clone().map(|a| view! { <span class="chip access">{a}</span> })}
                {row.kinds.as_ref().map(|k| view! { <span class="chip kinds">{k.text()}</span> })}
                {row.seeded.as_ref().map(|s| view! { <span class="chip seeded">{s.text()}</span> })}
                {screened}
            </p>
            {row.kinds.as_ref().filter(|k| !k.per_kind.is_empty()).map(|k| {
                view! { <p class="per-kind">{k.per_kind_lines().join("; ")}</p> }
            })}
            <p class="run-meta">
                "suite " <code class="suite">{row.suite.clone()}</code>
                " · started " <time>{started}</time>
                {standing}
            </p>
            {attempt}
        </div>
    }
}

/// A row's facts beside its result: probes, the official conformance suite
/// and the cost.
fn row_facts(row: &Row) -> impl IntoView + use<> {
    let probes = &row.probes;
    let probe_text = if probes.unreachable {
        "the server could not be reached".to_owned()
    } else {
        format!(
            "checks passed {} of {}{}",
            probes.passed,
            probes.applicable,
            if probes.unknown > 0 {
                format!(", {} unknown", probes.unknown)
            } else {
                String::new()
            }
        )
    };
    let spec = probes
        .spec
        .clone()
        .unwrap_or_else(|| "revision not recorded".to_owned());
    // Spec currency is its own column, never one of the checks counted.
    let currency = match probes.spec_current {
        Some(true) => " (current)",
        Some(false) => " (not the current revision)",
        None => "",
    };
    // A failed spec-currency probe is a server fault, coloured as the
    // record page colours it; never grey.
    let spec_class = if probes.spec_current == Some(false) {
        "spec chip server-fault"
    } else {
        "spec"
    };
    let failed = probes
        .failed
        .iter()
        .map(|f| view! { <span class="chip server-fault" title="failed probe: a server fault, not a refusal">{f.clone()}</span> })
        .collect_view();
    view! {
        <div class="facts">
            <p class="probes">
                <span class="field-label">"Probes "</span>
                <span class=spec_class title=(probes.spec_current == Some(false)).then_some("failed probe: a server fault, not a refusal")>{format!("spec {spec}{currency}")}</span>
                " · era " {row.server.era.clone()} " · "
                <span class="checks">{probe_text}</span>
                " " {failed}
            </p>
            {row.conformance.as_ref().map(|c| {
                let text = c.text();
                view! {
                    <p class="conformance" title=c.suite.clone()>
                        <span class="field-label">"Official conformance suite "</span>{text}
                    </p>
                }
            })}
            <p class="cost-line"><span class="field-label">"Cost "</span>{cost_view(&row.cost)}</p>
            {row.tool_list.as_ref().map(|t| view! {
                <p class="tool-list" title=format!("{}, median over {} paired first turns of the null arms", t.model, t.pairs)>
                    <span class="field-label">"Context "</span>{t.text()}
                </p>
            })}
        </div>
    }
}

/// A row's evidence: the record, the replay and the tapes, and who signed it.
fn row_evidence(row: &Row, site_key: bool) -> impl IntoView + use<> {
    let record_href = api::record_page_url(&row.id);
    // Evidence: the recorded tapes, or a plain statement that none were published.
    let tapes = if row.tapes.is_empty() {
        Either::Left(view! { <p class="no-tapes">"No tapes were published for this run."</p> })
    } else {
        let links = row
            .tapes
            .iter()
            .map(|t| {
                let plane = match t.plane {
                    fitness_shared::tape::Plane::Mcp => "MCP tape",
                    fitness_shared::tape::Plane::Agent => "agent tape",
                };
                let title = format!("sha256 {}, {} bytes", t.sha256, t.bytes);
                let href = fitness_shared::site::tape(&row.id, &t.path)
                    .map(|p| api::site_url(&p))
                    .unwrap_or_default();
                view! { <a class="tape" href=href title=title>{plane}</a>" " }
            })
            .collect_view();
        Either::Right(view! { <p class="tapes">{links}</p> })
    };
    let replay = (!row.tapes.is_empty()).then(|| {
        view! { <a class="replay button" href=api::replay_url(&row.id)>"Replay"</a> }
    });
    view! {
        <div class="evidence">
            <p class="links">
                <a class="open-record button" href=record_href>"Open the record"</a>
                {replay}
            </p>
            {tapes}
            <p class="signature-line"><SignatureChip state=row.signature.clone() site_key=site_key /></p>
        </div>
    }
}

/// Where a run stands among its server's runs, as the board counts them
/// when published ([`fitness_shared::board::RowAttempt::words`]): the same
/// words on the row and on the record page, each named run a link.
#[component]
pub fn AttemptLine(attempt: fitness_shared::board::RowAttempt) -> impl IntoView {
    let words = attempt.words();
    let last = words.named.len().saturating_sub(1);
    let named = words
        .named
        .into_iter()
        .enumerate()
        .map(|(i, (id, label))| {
            view! {
                <a class="other-attempt" href=api::record_page_url(&id)>{label}</a>
                {(i < last).then_some("; ")}
            }
        })
        .collect_view();
    view! { <span class="attempt-words">{words.lead}{named}{words.tail}</span> }
}
