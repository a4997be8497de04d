//! The replay (`?run=<id>&view=replay`, or `?trace=URL1;URL2` for any
//! mcp-tape v1 tapes): both tapes fetched when the page opens, checked
//! against the record (sha256 and byte count of each tape, the record's
//! signature against the site's publisher key), merged into one timeline by
//! [`fitness_shared::tape::timeline`], and shown as a virtualised list with a
//! detail pane.
//!
//! One module per concern, each used only from above: [`links`] (what the
//! URL says), [`loader`] (fetching and streaming the tapes), [`integrity`]
//! (checking them), [`strip`] (the run's shape drawn to scale), [`trial`]
//! (one trial as a conversation), [`filters`],
//! [`list`] (the timeline), [`detail`] (one entry) and [`counts`] (per
//! tape); this page puts them together.
//!
//! Safety: tape content is only ever set as text (Leptos text nodes and
//! attributes); nothing here writes HTML.

mod counts;
mod detail;
mod filters;
mod integrity;
mod links;
mod list;
mod loader;
mod strip;
mod trial;

use std::sync::Arc;

use leptos::either::Either;
use leptos::prelude::*;

use crate::url_state::{ReplayLinks, ReplaySource};
pub use integrity::Integrity;
pub use list::ROW_HEIGHT;
pub use loader::{Loaded, TapeBytes, TapeInfo, next_tick};

use crate::api;
use counts::TapeCounts;
use detail::DetailPane;
use filters::{FilterControls, Filters};
use integrity::IntegrityBadge;
use list::{Scroll, TimelineList};
use strip::TimelineStrip;
use trial::TrialView;

#[component]
pub fn ReplayPage(source: ReplaySource, links: ReplayLinks) -> impl IntoView {
    let status = RwSignal::new("Opening the replay.".to_owned());
    let error = RwSignal::new(None::<String>);
    let integrity = RwSignal::new(None::<Integrity>);
    let loaded = RwSignal::new(None::<Arc<Loaded>>);
    let selected = RwSignal::new(links.event);
    let filters = Filters::new(&links);
    let trial = RwSignal::new(links.trial.clone());
    let scroll = Scroll::new();

    let heading = heading(&source);
    let back = back_links(&source);

    let store: TapeBytes = StoredValue::new_local(Vec::new());
    loader::start(source, store, status, error, integrity, loaded);

    let filtered = filters.passing(loaded);
    list::follow_deep_link(loaded, selected, filtered, filters, scroll);
    let open = list::opener(selected, filtered, filters, scroll);

    view! {
        {back}
        <section class="replay" data-complete=move || {
            if loaded.with(|l| l.as_ref().is_some_and(|d| d.timeline.complete)) { "1" } else { "0" }
        }>
            <h2>{heading}</h2>
            <IntegrityBadge integrity=integrity />
            <p class="loading" id="replay-status">{move || status.get()}</p>
            {move || error.get().map(|e| view! { <p class="error" id="replay-error">{e}</p> })}
            <TapeCounts loaded=loaded store=store />
            <TimelineStrip loaded=loaded filtered=filtered selected=selected filters=filters
                scroll=scroll />
            <TrialView loaded=loaded store=store trial=trial open=open />
            <FilterControls loaded=loaded filtered=filtered filters=filters
                reset_scroll=move || scroll.reset() />
            <div class="replay-body">
                <TimelineList loaded=loaded filtered=filtered selected=selected
                    filters=filters scroll=scroll />
                <DetailPane loaded=loaded selected=selected store=store trial=trial />
            </div>
        </section>
    }
}

fn heading(source: &ReplaySource) -> String {
    match source {
        ReplaySource::Run(id) => format!("Replay of run {id}"),
        ReplaySource::Trace(urls) => format!("Replay of {}", urls.join(", ")),
    }
}

/// Back to the record and the board, or, for tapes opened by URL, the board.
fn back_links(source: &ReplaySource) -> impl IntoView + use<> {
    match source {
        ReplaySource::Run(id) => Either::Left(view! {
            <nav class="back">
                <a href=api::record_page_url(id)>"Back to the record"</a>
                " · "
                <a href=api::site_url("./")>"the board"</a>
            </nav>
        }),
        ReplaySource::Trace(_) => Either::Right(
            view! { <nav class="back"><a href=api::site_url("./")>"Back to the board"</a></nav> },
        ),
    }
}
