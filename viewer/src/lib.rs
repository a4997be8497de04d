//! The Fitness Report viewer: the board, the run record page and the replay.
//!
//! Components shared by the pages live here; `api` is the only module that
//! fetches; each page is a module under `routes`. Every number shown is a
//! stored number from `board.json` or a run record: nothing is recomputed.

pub mod api;
pub mod routes;

use fitness_shared::board::{Row, RowCost, RowResult};
use fitness_shared::record::Interval;
use leptos::prelude::*;

use std::cell::Cell;

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

/// The page state read from the URL query (`?run=<id>`, `?tier=<tier>`,
/// `&view=replay`, `?trace=URL1;URL2`, `&event=<n>`, `&corr=<id>`,
/// `&arm=<arm>`, `&kind=<kind>`, `&embed=1`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlState {
    pub run: Option<String>,
    pub tier: Option<String>,
    pub view: Option<String>,
    pub trace: Vec<String>,
    pub event: Option<usize>,
    pub corr: Option<String>,
    pub arm: Option<String>,
    pub kind: Option<String>,
    /// Iframe mode: no masthead or footer.
    pub embed: bool,
}

impl UrlState {
    /// Read the state from the current location's query string.
    pub fn from_location() -> Self {
        let search = web_sys::window()
            .and_then(|w| w.location().search().ok())
            .unwrap_or_default();
        Self::parse(&search)
    }

    /// Parse a query string such as `?run=abc&tier=free`.
    pub fn parse(search: &str) -> Self {
        let mut state = UrlState::default();
        let Ok(params) = web_sys::UrlSearchParams::new_with_str(search) else {
            return state;
        };
        state.run = params.get("run").filter(|s| !s.is_empty());
        state.tier = params.get("tier").filter(|s| !s.is_empty());
        state.view = params.get("view").filter(|s| !s.is_empty());
        state.trace = params
            .get("trace")
            .map(|t| {
                t.split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        state.event = params.get("event").and_then(|e| e.parse().ok());
        state.corr = params.get("corr").filter(|s| !s.is_empty());
        state.arm = params.get("arm").filter(|s| !s.is_empty());
        state.kind = params.get("kind").filter(|s| !s.is_empty());
        state.embed = params.get("embed").is_some_and(|e| e == "1" || e == "true");
        state
    }

    fn replay_links(&self) -> routes::replay::ReplayLinks {
        routes::replay::ReplayLinks {
            event: self.event,
            corr: self.corr.clone(),
            arm: self.arm.clone(),
            kind: self.kind.clone(),
        }
    }
}

/// The page the state asks for, without the masthead.
pub fn page_for(state: &UrlState) -> AnyView {
    use routes::replay::{ReplayPage, ReplaySource};
    if !state.trace.is_empty() {
        let source = ReplaySource::Trace(state.trace.clone());
        return view! { <ReplayPage source=source links=state.replay_links() /> }.into_any();
    }
    match state.run.clone() {
        Some(run) if state.view.as_deref() == Some("replay") => {
            let source = ReplaySource::Run(run);
            view! { <ReplayPage source=source links=state.replay_links() /> }.into_any()
        }
        Some(run) => view! { <routes::record::RecordPage run=run /> }.into_any(),
        None => view! { <routes::board::BoardPage tier=state.tier.clone() /> }.into_any(),
    }
}

/// The application for a given state: with the masthead and footer, or
/// without them when embedded (`?embed=1`, or mounted by `embed.js`).
#[component]
pub fn AppWith(state: UrlState) -> impl IntoView {
    let page = page_for(&state);
    if state.embed {
        return view! {
            <div id="fitness-app" class="fitness-embed" data-ready="1">{page}</div>
        }
        .into_any();
    }
    view! {
        <main id="fitness-app" data-ready="1">
            <header class="masthead">
                <h1><a href="./">"Fitness Report"</a></h1>
                <p class="thesis">
                    "A leaderboard you can trust must be able to say: this measurement was not valid."
                </p>
            </header>
            {page}
            <footer>
                <p class="version">"viewer " {fitness_shared::VERSION}</p>
            </footer>
        </main>
    }
    .into_any()
}

/// The application shell. Its root element carries `id="fitness-app"` and
/// `data-ready="1"`, which only exist once the wasm has started and rendered.
/// Links between the viewer's own pages change the page in place (history
/// `pushState`), and Back and Forward return to the page they name.
#[component]
pub fn App() -> impl IntoView {
    let state = RwSignal::new(UrlState::from_location());
    install_navigation(state);
    move || view! { <AppWith state=state.get() /> }
}

/// Follow links to the viewer's own pages (same origin and path, another
/// query) without reloading: push the URL and render its page. A click
/// with a modifier key or another button, a link with a `target` or
/// `download`, a link elsewhere, and a fragment link on the same page are
/// left to the browser.
fn install_navigation(state: RwSignal<UrlState>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let Some(window) = web_sys::window() else {
        return;
    };
    let on_click = Closure::<dyn Fn(web_sys::MouseEvent)>::new(move |ev: web_sys::MouseEvent| {
        if ev.default_prevented()
            || ev.button() != 0
            || ev.meta_key()
            || ev.ctrl_key()
            || ev.shift_key()
            || ev.alt_key()
        {
            return;
        }
        let Some(link) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a[href]").ok().flatten())
        else {
            return;
        };
        if link.has_attribute("target") || link.has_attribute("download") {
            return;
        }
        let Some(window) = web_sys::window() else {
            return;
        };
        let (Ok(here), Some(href)) = (window.location().href(), link.get_attribute("href")) else {
            return;
        };
        let (Ok(to), Ok(from)) = (
            web_sys::Url::new_with_base(&href, &here),
            web_sys::Url::new(&here),
        ) else {
            return;
        };
        if to.origin() != from.origin()
            || to.pathname() != from.pathname()
            || to.search() == from.search()
        {
            return;
        }
        ev.prevent_default();
        let Ok(history) = window.history() else {
            return;
        };
        if history
            .push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&to.href()))
            .is_err()
        {
            return;
        }
        state.set(UrlState::parse(&to.search()));
        if to.hash().is_empty() {
            window.scroll_to_with_x_and_y(0.0, 0.0);
        }
    });
    let on_pop = Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
        state.set(UrlState::from_location());
    });
    let _ = window.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
    let _ = window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
    // Both live as long as the page.
    on_click.forget();
    on_pop.forget();
}

/// A stored fraction printed as a percentage with one decimal.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// "91.7% / 95% CI 74.2% to 97.7% / 22 of 24".
pub fn interval_text(i: &Interval) -> String {
    format!(
        "{} / 95% CI {} to {} / {} of {}",
        pct(i.rate),
        pct(i.low),
        pct(i.high),
        i.k,
        i.n
    )
}

/// Clamp a stored fraction onto the 0-100 axis for drawing.
fn axis_pos(x: f64) -> f64 {
    (x * 100.0).clamp(0.0, 100.0)
}

/// A Wilson band on the shared 0-100 axis with the point marked.
#[component]
pub fn IntervalBar(interval: Interval) -> impl IntoView {
    let low = axis_pos(interval.low);
    let high = axis_pos(interval.high);
    let point = axis_pos(interval.rate);
    let label = format!("First-try success {}", interval_text(&interval));
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

/// The result slot: the interval, or the refusal that replaced it.
#[component]
pub fn ResultSlot(result: RowResult) -> impl IntoView {
    match result {
        RowResult::Scored { first_try } => {
            let text = interval_text(&first_try);
            view! {
                <div class="result scored">
                    <IntervalBar interval=first_try />
                    <p class="interval-text">{text}</p>
                </div>
            }
            .into_any()
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
            view! {
                <div class="result refused">
                    <p class="refusal-head">
                        <span class="code">{code}</span>
                        " "
                        <span class="gate">{gate}</span>
                    </p>
                    <p class="teaser">{teaser}</p>
                    <p class="reason-line">"reason: " <span class=reason_class>{reason}</span></p>
                </div>
            }
            .into_any()
        }
    }
}

/// The cost slot text: a total, "at least" with its reasons, or none with why.
pub fn cost_view(cost: &RowCost) -> impl IntoView + use<> {
    match cost.clone() {
        RowCost::Total { usd } => view! {
            <span class="cost total">{format!("${usd:.2} total")}</span>
        }
        .into_any(),
        RowCost::Floor { usd, reasons } => {
            let why = reasons.join("; ");
            view! {
                <span class="cost floor" title=why.clone()>
                    {format!("at least ${usd:.2}")}
                    <span class="why">{format!(" ({why})")}</span>
                </span>
            }
            .into_any()
        }
        RowCost::None { why } => view! {
            <span class="cost none">"no figure: " {why}</span>
        }
        .into_any(),
    }
}

/// One board row: a published run, scored or refused.
#[component]
pub fn RowView(row: Row) -> impl IntoView {
    let outcome = match &row.result {
        RowResult::Scored { .. } => "SCORED".to_owned(),
        RowResult::Refused { code, .. } => code.clone(),
    };
    let record_href = api::site_url(&format!("?run={}", row.id));
    let generator = row
        .generator
        .clone()
        .unwrap_or_else(|| fitness_shared::board::GENERATOR_NOT_RECORDED.to_owned());
    let generator_class = if row.generator.is_some() {
        "chip generator"
    } else {
        "chip generator unrecorded"
    };
    let screened = match row.screened {
        Some(true) => "null-screened suite",
        Some(false) => "unscreened suite",
        None => "screen not recorded",
    };
    let attempt = if row.attempt.of > 1 {
        let others = row
            .attempt
            .others
            .iter()
            .map(|o| {
                let href = api::site_url(&format!("?run={}", o.id));
                let text = format!("run {} ({})", o.index, o.outcome);
                view! { <a class="other-attempt" href=href>{text}</a> }
            })
            .collect_view();
        Some(view! {
            <p class="attempt">
                {format!("run {} of {}; the others: ", row.attempt.index, row.attempt.of)}
                {others}
            </p>
        })
    } else {
        None
    };
    let probes = &row.probes;
    let probe_text = format!(
        "checks passed {} of {}{}",
        probes.passed,
        probes.applicable,
        if probes.unknown > 0 {
            format!(", {} unknown", probes.unknown)
        } else {
            String::new()
        }
    );
    let spec = probes
        .spec
        .clone()
        .unwrap_or_else(|| "revision not recorded".to_owned());
    let failed = probes
        .failed
        .iter()
        .map(|f| view! { <span class="chip server-fault" title="failed probe: a server fault, not a refusal">{f.clone()}</span> })
        .collect_view();
    let started = row.started_at.replace('T', " ");
    // The standing notes are printed once, in the methods section; the row
    // links there.
    let standing = row.standing.as_ref().map(|s| {
        let href = format!(
            "#{}",
            fitness_shared::board::StandingNotes::anchor(&s.set_id)
        );
        let text = match s.count {
            1 => "1 standing note".to_owned(),
            n => format!("{n} standing notes"),
        };
        view! { " · " <a class="standing-link" href=href>{text}</a> }
    });
    // Evidence: the recorded tapes, or a plain statement that none were published.
    let tapes = if row.tapes.is_empty() {
        view! { <span class="no-tapes">"No tapes were published for this run."</span> }.into_any()
    } else {
        row.tapes
            .iter()
            .map(|t| {
                let plane = match t.plane {
                    fitness_shared::record::TapePlane::Mcp => "MCP tape",
                    fitness_shared::record::TapePlane::Agent => "agent tape",
                };
                let title = format!("sha256 {}, {} bytes", t.sha256, t.bytes);
                let href = api::tape_path(&row.id, &t.path)
                    .map(|p| api::site_url(&p))
                    .unwrap_or_default();
                view! { <a class="tape" href=href title=title>{plane}</a>" " }
            })
            .collect_view()
            .into_any()
    };
    view! {
        <article class="row" data-run-id=row.id.clone() data-outcome=outcome>
            <div class="identity">
                <h3 class="server">{row.server.slug.clone()}</h3>
                <p class="target">{row.server.target.clone()}</p>
                <p class="chips">
                    <span class=generator_class>{generator}</span>
                    <span class="chip runner">{format!("runner {}", row.runner_model)}</span>
                    <span class="chip credential">{row.credential.clone()}</span>
                    <span class="chip screened">{screened}</span>
                </p>
                <p class="run-meta">
                    "suite " <code class="suite">{row.suite.clone()}</code>
                    " started " <time>{started}</time>
                    {standing}
                </p>
                {attempt}
            </div>
            <ResultSlot result=row.result.clone() />
            <div class="facts">
                <p class="probes">
                    <span class="spec">{format!("spec {spec}")}</span>
                    " · era " {row.server.era.clone()} " · "
                    <span class="checks">{probe_text}</span>
                    " " {failed}
                </p>
                {row.conformance.as_ref().map(|c| {
                    let text = match &c.error {
                        Some(why) => format!("official conformance suite: no result ({why})"),
                        None => format!("official conformance suite: {} passed, {} failed", c.passed, c.failed),
                    };
                    view! { <p class="conformance" title=c.suite.clone()>{text}</p> }
                })}
                <p class="cost-line">{cost_view(&row.cost)}</p>
                <p class="links">
                    <a class="open-record" href=record_href>"Open the record"</a>
                    " "
                    {(!row.tapes.is_empty()).then(|| view! {
                        <a class="replay" href=api::site_url(&format!("?run={}&view=replay", row.id))>"Replay"</a>
                    })}
                    " "
                    {tapes}
                </p>
            </div>
        </article>
    }
}
