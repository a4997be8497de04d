//! The board: masthead numbers, the outcome ledger by cost tier, and the
//! groups of rows. The tier filter lives in the URL (`?tier=free`).

use std::collections::BTreeMap;

use fitness_shared::board::{Board, Group, Row, StandingNotes};
use leptos::prelude::*;

use crate::RowView;
use crate::api::fetch_board;

/// The ledger's tiers, in cost order, with the sentence each one means.
const TIERS: [(&str, &str); 5] = [
    ("free", "Refused at a free gate"),
    ("cheap", "Refused at the cheap gate"),
    ("paid", "Refused at the paid gate"),
    ("scored", "Scored"),
    ("unattributed", "Ended before any gate decided"),
];

/// Rows a group renders before its "show the other runs" button.
pub const FIRST_PAINT_ROWS: usize = 50;

#[component]
pub fn BoardPage(tier: Option<String>) -> impl IntoView {
    let board = LocalResource::new(fetch_board);
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading the board."</p> }>
            {move || {
                board
                    .get()
                    .map(|result| match result {
                        Ok(board) => view! { <BoardView board=board tier=tier.clone() /> }.into_any(),
                        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                    })
            }}
        </Suspense>
    }
}

#[component]
pub fn BoardView(board: Board, tier: Option<String>) -> impl IntoView {
    let counts = board.counts.clone();
    let headline = format!(
        "{} of {} published runs published no score.",
        counts.refused, counts.runs
    );
    let sub = format!(
        "{} scored. Each refusal sits in the slot a score would have occupied.",
        counts.scored
    );
    let rows: BTreeMap<String, Row> = board
        .rows
        .iter()
        .map(|r| (r.id.clone(), r.clone()))
        .collect();
    let groups: Vec<Group> = board
        .groups
        .iter()
        .filter(|g| tier.as_deref().is_none_or(|t| t == g.tier.as_str()))
        .cloned()
        .collect();
    // A deep link to a section of the board (`./#standing-<hex>`, from a
    // record page) is rendered only after the board loads, so the browser's
    // own jump to the fragment finds nothing: do it once the rows are in.
    if !crate::embedded() {
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
    let ledger = TIERS
        .iter()
        .map(|(t, label)| {
            let outcomes = counts.by_tier.get(*t).cloned().unwrap_or_default();
            let total: u64 = outcomes.values().sum();
            let cells = outcomes
                .into_iter()
                .map(|(code, n)| view! { <li><span class="code">{code}</span> " " {n}</li> })
                .collect_view();
            let selected = tier.as_deref() == Some(*t);
            let href = format!("?tier={t}");
            view! {
                <tr data-tier=*t class:selected=selected>
                    <th scope="row"><a href=href>{*label}</a></th>
                    <td class="total">{total}</td>
                    <td><ul class="outcomes">{cells}</ul></td>
                </tr>
            }
        })
        .collect_view();
    let filter_note = tier.clone().map(|t| {
        view! {
            <p class="filter-note">
                {format!("Showing the {t} tier only. ")}
                <a href="./">"Show every tier"</a>
            </p>
        }
    });
    view! {
        <section class="summary">
            <p class="headline">{headline}</p>
            <p class="sub">{sub}</p>
            <p class="published">{format!("Published {}", board.published_at)}</p>
        </section>
        <section class="ledger">
            <h2>"Outcomes by the tier that decided them"</h2>
            <table>
                <thead><tr><th scope="col">"Tier"</th><th scope="col">"Runs"</th><th scope="col">"Outcomes"</th></tr></thead>
                <tbody>{ledger}</tbody>
            </table>
            {filter_note}
        </section>
        <For
            each=move || groups.clone()
            key=|g| g.id.clone()
            children=move |g| {
                let members: Vec<Row> = g.rows.iter().filter_map(|id| rows.get(id).cloned()).collect();
                view! { <GroupView group=g rows=members /> }
            }
        />
        <Methods standing=board.standing_notes.clone() />
    }
}

#[component]
fn GroupView(group: Group, rows: Vec<Row>) -> impl IntoView {
    let heading = group.title.clone();
    // Large groups paint their first rows at once; the rest are one click
    // away, and the button says how many there are.
    let total = rows.len();
    let shown = RwSignal::new(total.min(FIRST_PAINT_ROWS));
    let rows_shown = StoredValue::new(rows);
    view! {
        <section class="group" data-tier=group.tier.as_str() data-group-id=group.id.clone()>
            <h2>{heading}</h2>
            <p class="statement">{group.statement.clone()}</p>
            {(group.tier.as_str() == "scored").then(|| view! {
                <div class="axis-legend" aria-hidden="true">
                    <span>"0"</span><span>"50"</span><span>"100"</span>
                </div>
            })}
            <For
                each=move || rows_shown.with_value(|rows| rows[..shown.get()].to_vec())
                key=|r| r.id.clone()
                children=|r| view! { <RowView row=r /> }
            />
            {move || {
                let hidden = total - shown.get();
                (hidden > 0).then(|| view! {
                    <button class="show-all" on:click=move |_| shown.set(total)>
                        {format!("Show the other {hidden} runs of this group")}
                    </button>
                })
            }}
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
    let file = crate::api::standing_notes_path(&set.set_id).map(|p| {
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
        <section class="methods">
            <h2>"How to read this board"</h2>
            <p>"Conformance asks whether the server speaks MCP correctly. Fitness Report asks whether an agent can actually get the job done with it."</p>
            <p>"Validity gates run before anything is scored, cheapest first. When the measurement itself is invalid, no score is emitted, and the refusal is published here in the slot a number would have occupied. A refusal is a result, never a blank cell."</p>
            <p>"First-try success is drawn as its Wilson 95% interval on a shared 0 to 100 axis, with the point estimate marked inside it. The interval is the finding, not the point. There are no positions on this page. Rows built by different generators or driven by different runner models are never read against each other."</p>
            <p>"A failed protocol probe is a fact about the server and is shown as a server fault, never as a refusal. A probe that does not apply is counted as unknown, apart from the passes."</p>
            <p>"A dollar figure is called a total only when nothing known is missing from it. Every other figure is a floor, printed as at least, with its reasons."</p>
            <p>"Reruns are separate attempts, not a best of. Every run of a server is published and names the others."</p>
            {sets}
        </section>
    }
}
