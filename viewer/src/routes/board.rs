//! The board: the masthead numbers and measured spend, the outcome ledger by
//! cost tier, the tier filter, the column headings over the shared axis,
//! and the groups of rows. The tier filter lives in the URL (`?tier=free`)
//! and changes the board in place.

use std::collections::BTreeMap;
use std::sync::Arc;

use fitness_shared::board::{Board, Counts, Group, Row, Spend, StandingNotes};
use leptos::prelude::*;

use crate::components::{AxisLabels, RowView};

/// The ledger's tiers, in cost order: id, card title, filter label, and the
/// sentence each one means.
const TIERS: [(&str, &str, &str, &str); 6] = [
    (
        "free",
        "Free gate stopped it",
        "Free gate",
        "Deterministic checks that spend no model tokens. They run first.",
    ),
    (
        "cheap",
        "Cheap gate stopped it",
        "Cheap gate",
        "Null models, no server in the loop: the null baselines, and the screen when it deletes every task.",
    ),
    (
        "paid",
        "Paid gate stopped it",
        "Paid gate",
        "A reference agent handed the answer key must still reach it through the server.",
    ),
    (
        "compromised",
        "The measurement did not complete",
        "Compromised",
        "Too many of one stage's calls failed: no gate's verdict, our measurement's failure.",
    ),
    (
        "scored",
        "Reached a score",
        "Scored",
        "Every gate passed; first-try success is published with its interval.",
    ),
    (
        "unattributed",
        "No gate decided",
        "No gate decided",
        "The run ended before it completed its registered size.",
    ),
];

/// Rows a group shows before the rest fold away behind "show the other
/// runs" (a `<details>`, so it opens without JavaScript too, and the
/// browser lays out none of the rows until it is opened).
pub const FIRST_PAINT_ROWS: usize = 50;

/// "at least $22.11" or "$3.10 total", and why it is a floor.
fn spend_view(spend: &Spend) -> impl IntoView + use<> {
    let runs = spend.total_runs + spend.floor_runs + spend.none_runs;
    let (figure, kind) = if spend.is_total() {
        (format!("${:.2} total", spend.usd), "total")
    } else {
        (format!("at least ${:.2}", spend.usd), "floor")
    };
    let note = if spend.is_total() {
        format!(
            "Every one of the {runs} runs reports a total, so nothing known is missing from the sum."
        )
    } else {
        let mut parts: Vec<String> = Vec::new();
        if spend.floor_runs > 0 {
            parts.push(format!(
                "{} of {runs} runs report a floor",
                spend.floor_runs
            ));
        }
        if spend.none_runs > 0 {
            parts.push(format!(
                "{} of {runs} runs carry no figure",
                spend.none_runs
            ));
        }
        format!(
            "A floor: {}. Nothing missing is estimated.",
            parts.join(" and ")
        )
    };
    let reasons = spend
        .reasons
        .iter()
        .take(4)
        .map(|r| {
            let runs = match r.runs {
                1 => "1 run".to_owned(),
                n => format!("{n} runs"),
            };
            view! { <li>{format!("{runs}: {}", r.reason)}</li> }
        })
        .collect_view();
    let more = spend.reasons.len().saturating_sub(4);
    view! {
        <div class=format!("spend {kind}")>
            <p class="spend-line">
                <span class="spend-label">"Measured model spend"</span>
                " "
                <strong class="spend-figure">{figure}</strong>
            </p>
            <p class="spend-note">{note}</p>
            {(!spend.reasons.is_empty()).then(|| view! {
                <ul class="spend-reasons">
                    {reasons}
                    {(more > 0).then(|| view! { <li>{format!("and {more} other reasons, on each run's record")}</li> })}
                </ul>
            })}
        </div>
    }
}

/// The board. `fragment`: once it is on the page, jump to the URL's
/// fragment (a board rendered in the browser, reached by a link such as
/// `./#standing-<hex>` from a record page: the browser's own jump ran
/// before the rows were there).
#[component]
pub fn BoardView(
    board: Arc<Board>,
    tier: Signal<Option<String>>,
    #[prop(optional)] fragment: bool,
) -> impl IntoView {
    let counts = board.counts.clone();
    let headline = format!(
        "{} of {} published runs published no score.",
        counts.refused, counts.runs
    );
    let sub = format!(
        "{} scored. Each refusal sits in the slot a score would have occupied.",
        counts.scored
    );
    let site_key = board.publisher_key.is_some();
    let rows: BTreeMap<&str, &Row> = board.rows.iter().map(|r| (r.id.as_str(), r)).collect();
    #[cfg(target_arch = "wasm32")]
    if fragment {
        scroll_to_fragment();
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = fragment;
    let cards = tier_cards(&counts);
    let filters = tier_filters(&counts, tier);
    let groups = board
        .groups
        .iter()
        .map(|g| {
            let members: Vec<Row> = g
                .rows
                .iter()
                .filter_map(|id| rows.get(id.as_str()).map(|r| (*r).clone()))
                .collect();
            view! { <GroupView group=g.clone() rows=members tier=tier site_key=site_key /> }
        })
        .collect_view();
    view! {
        <section class="summary" aria-label="Summary">
            <div class="summary-lead">
                <p class="headline">{headline}</p>
                <p class="sub">{sub}</p>
                <p class="published">{format!("Published {}", board.published_at.replace('T', " "))}</p>
            </div>
            {spend_view(&board.spend)}
        </section>
        <section class="ledger" aria-labelledby="ledger-heading">
            <h2 id="ledger-heading">"Outcomes by the tier that decided them"</h2>
            <ol class="tier-cards">{cards}</ol>
        </section>
        <section class="board" id="board" aria-labelledby="board-heading">
            <div class="board-top">
                <h2 id="board-heading">"The board"</h2>
                <nav class="filters" aria-label="Filter the board by the tier that decided each run">
                    {filters}
                </nav>
            </div>
            <BoardHead />
            {groups}
        </section>
        <Methods standing=board.standing_notes.clone() />
    }
}

/// Runs a tier decided.
fn tier_total(counts: &Counts, t: &str) -> u64 {
    counts
        .by_tier
        .get(t)
        .map(|o| o.values().sum())
        .unwrap_or_default()
}

/// The ledger: one card per tier, with its outcomes (the compromised and
/// unattributed tiers only when they decided a run).
fn tier_cards(counts: &Counts) -> impl IntoView + use<> {
    TIERS
        .iter()
        .filter(|(t, ..)| !["unattributed", "compromised"].contains(t) || tier_total(counts, t) > 0)
        .map(|(t, title, _, means)| {
            let outcomes = counts.by_tier.get(*t).cloned().unwrap_or_default();
            let cells = outcomes
                .into_iter()
                .map(|(code, n)| view! { <li><span class="code">{code}</span> " " {n}</li> })
                .collect_view();
            let t = *t;
            view! {
                <li class="tier-card" data-tier=t>
                    <h3>{*title}</h3>
                    <p class="tier-count">{tier_total(counts, t)}</p>
                    <ul class="outcomes">{cells}</ul>
                    <p class="means">{*means}</p>
                </li>
            }
        })
        .collect_view()
}

/// The tier filter: every run, and each tier that decided one.
fn tier_filters(counts: &Counts, tier: Signal<Option<String>>) -> impl IntoView + use<> {
    std::iter::once(("", "All", counts.runs))
        .chain(
            TIERS
                .iter()
                .filter(|(t, ..)| tier_total(counts, t) > 0)
                .map(|(t, _, label, _)| (*t, *label, tier_total(counts, t))),
        )
        .map(|(t, label, n)| {
            let href = if t.is_empty() {
                crate::api::site_url("./")
            } else {
                crate::api::site_url(&format!("?tier={t}"))
            };
            let current = move || {
                let on = tier.get().as_deref().unwrap_or("") == t;
                on.then_some("true")
            };
            view! {
                <a class="filter" href=href data-tier=t aria-current=current>
                    {label} " " <span class="n">{n}</span>
                </a>
            }
        })
        .collect_view()
}

/// The column headings, with the shared 0 to 100 axis labelled once over
/// the result column.
#[component]
pub fn BoardHead() -> impl IntoView {
    view! {
        <div class="board-head" aria-hidden="true">
            <span class="bh-run">"Run"</span>
            <span class="bh-result">"First-try success, Wilson 95% interval" <AxisLabels /></span>
            <span class="bh-facts">"Probes and cost"</span>
            <span class="bh-evidence">"Evidence"</span>
        </div>
    }
}

/// Jump to the URL's fragment once the rows are there.
#[cfg(target_arch = "wasm32")]
fn scroll_to_fragment() {
    if crate::components::embedded() {
        return;
    }
    request_animation_frame(|| {
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let hash = document
            .location()
            .and_then(|l| l.hash().ok())
            .unwrap_or_default();
        if let Some(el) = hash
            .strip_prefix('#')
            .filter(|id| !id.is_empty())
            .and_then(|id| document.get_element_by_id(id))
        {
            el.scroll_into_view();
        }
    });
}

#[component]
fn GroupView(
    group: Group,
    rows: Vec<Row>,
    tier: Signal<Option<String>>,
    site_key: bool,
) -> impl IntoView {
    let heading = group.title.clone();
    let group_tier = group.tier.as_str();
    let hidden = move || tier.get().is_some_and(|t| t != group_tier);
    let mut rows = rows;
    let rest = rows.split_off(rows.len().min(FIRST_PAINT_ROWS));
    let first = rows
        .into_iter()
        .map(|r| view! { <RowView row=r site_key=site_key /> })
        .collect_view();
    // Large groups show their first rows; the rest fold away behind a
    // summary that says how many there are (and opens without JavaScript).
    let more = (!rest.is_empty()).then(|| {
        let label = format!("Show the other {} runs of this group", rest.len());
        let rows = rest
            .into_iter()
            .map(|r| view! { <RowView row=r site_key=site_key /> })
            .collect_view();
        view! {
            <details class="more">
                <summary class="show-all">{label}</summary>
                {rows}
            </details>
        }
    });
    view! {
        <section class="group" data-tier=group_tier data-group-id=group.id.clone() hidden=hidden>
            <h2>{heading}</h2>
            <p class="statement">{group.statement.clone()}</p>
            {(group_tier == "scored").then(|| view! {
                <p class="axis-legend" aria-hidden="true"><AxisLabels /></p>
            })}
            <div class="rows">{first}</div>
            {more}
        </section>
    }
}

/// One standing-notes set, printed once, with the runs that carry it.
#[component]
fn StandingSet(set: StandingNotes) -> impl IntoView {
    let anchor = StandingNotes::anchor(&set.set_id);
    let carried = match set.runs {
        1 => "1 run on this board carries these notes".to_owned(),
        n => format!("{n} runs on this board carry these notes"),
    };
    let count = match set.notes.len() {
        1 => "1 standing note".to_owned(),
        n => format!("{n} standing notes"),
    };
    let file = fitness_shared::site::standing_notes(&set.set_id).map(|p| {
        view! { " (" <a class="standing-file" href=crate::api::site_url(&p)>"the set as JSON"</a> ")" }
    });
    let notes = set
        .notes
        .iter()
        .map(|n| view! { <li>{n.clone()}</li> })
        .collect_view();
    view! {
        <section class="standing-set" id=anchor data-set-id=set.set_id.clone()>
            <h3>{format!("Standing notes of {}", set.generator)}</h3>
            <p class="standing-meta">
                {format!("{count}; {carried}. They are printed here once instead of on every row. Set ")}
                <code class="set-id">{set.set_id.clone()}</code>
                {file}
                "."
            </p>
            <ol class="standing-notes">{notes}</ol>
        </section>
    }
}

#[component]
fn Methods(standing: Vec<StandingNotes>) -> impl IntoView {
    let sets = (!standing.is_empty()).then(|| {
        let sets = standing
            .into_iter()
            .map(|set| view! { <StandingSet set=set /> })
            .collect_view();
        view! {
            <h2 id="standing-notes">"Standing notes"</h2>
            <p>"Every run of a generator carries the same method notes. Each set is printed once below; a row links to the set it carries."</p>
            {sets}
        }
    });
    view! {
        <section class="methods" id="methods">
            <h2>"How to read this board"</h2>
            <p>"Conformance asks whether the server speaks MCP correctly. Fitness Report asks whether an agent can actually get the job done with it."</p>
            <p>"Validity gates run before anything is scored, cheapest first. When the measurement itself is invalid, no score is emitted, and the refusal is published here in the slot a number would have occupied. A refusal is a result, never a blank cell."</p>
            <p>"First-try success is drawn as its Wilson 95% interval on a shared 0 to 100 axis, with the point estimate marked inside it. The interval is the finding, not the point. There are no positions on this page. Rows built by different generators or driven by different runner models are never read against each other."</p>
            <p>"A failed protocol probe is a fact about the server and is shown as a server fault, never as a refusal. A probe that does not apply is counted as unknown, apart from the passes."</p>
            <p>"A dollar figure is called a total only when nothing known is missing from it. Every other figure is a floor, printed as at least, with its reasons. The masthead's spend is the sum of the runs' figures, and a floor when any of them is."</p>
            <p>"A pass imported from the reference implementation keeps its published number. Where this schema's publication rule reads its construct gate otherwise (a Wilson low below the threshold and too few trials to be powered), the row and the record say so."</p>
            <p>"Verified means one thing: the record is signed by the key this site publishes, and the signature checks. A record signed by another key, or on a site that publishes no key, never reads as verified. The replay also checks each tape's sha256 against the record."</p>
            <p>"Reruns are separate attempts, not a best of. Every run of a server is published; a row counts the others by outcome and links the server's history."</p>
            <section class="screen-bias" id=fitness_shared::reading::screen::BIAS_ANCHOR>
                <h3>{fitness_shared::reading::screen::BIAS_TITLE}</h3>
                {fitness_shared::reading::screen::BIAS_STATEMENT.iter().map(|p| view! { <p>{*p}</p> }).collect_view()}
            </section>
            {sets}
        </section>
    }
}
