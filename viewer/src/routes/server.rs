//! Every run of one server (`servers/<slug>/`), oldest first: where a
//! board row's "every run of this server" leads. The rows are the board's
//! own rows, read from `board.json`.

use std::collections::BTreeMap;
use std::sync::Arc;

use fitness_shared::board::{Board, Row, RowResult};
use leptos::prelude::*;

use crate::components::RowView;
use crate::routes::board::BoardHead;
use fitness_shared::board::outcome_counts;

#[component]
pub fn ServerView(board: Arc<Board>, slug: String) -> impl IntoView {
    let runs: Vec<Row> = board
        .rows
        .iter()
        .filter(|r| r.server.slug == slug)
        .cloned()
        .collect();
    let site_key = board.publisher_key.is_some();
    let mut by_outcome: BTreeMap<String, u32> = BTreeMap::new();
    for r in &runs {
        let code = match &r.result {
            RowResult::Scored { .. } => "SCORED".to_owned(),
            RowResult::Refused { code, .. } => code.clone(),
        };
        *by_outcome.entry(code).or_default() += 1;
    }
    let statement = match runs.len() {
        0 => "This board has no run of this server.".to_owned(),
        1 => format!(
            "1 run of this server: {}. Every run a publisher makes is published.",
            outcome_counts(&by_outcome)
        ),
        n => format!(
            "{n} runs of this server, oldest first: {}. Reruns are separate attempts, not a best of; each row is read on its own.",
            outcome_counts(&by_outcome)
        ),
    };
    let target = runs.last().map(|r| r.server.target.clone());
    let rows = runs
        .into_iter()
        .map(|r| view! { <RowView row=r site_key=site_key /> })
        .collect_view();
    view! {
        <section class="server-history" data-server=slug.clone()>
            <h2>{format!("Every run of {slug}")}</h2>
            {target.map(|t| view! { <p class="target">{t}</p> })}
            <p class="statement">{statement}</p>
            <BoardHead />
            <div class="rows">{rows}</div>
        </section>
    }
}
