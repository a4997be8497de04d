//! The application: the masthead and footer around the page the URL names.
//!
//! One tree serves three ways of starting: rendered to HTML by
//! `fitness publish` (with [`Preloaded`] data), hydrated in the browser over
//! that HTML (with the same data, so the tree matches), and rendered in the
//! browser from nothing (the replay, a filtered board, an embed, a page
//! reached in place).

use std::sync::Arc;

use fitness_shared::board::{Board, Row};
use fitness_shared::integrity::SignatureState;
use fitness_shared::record::CandidateList;
use fitness_shared::record::RunRecord;
use leptos::either::{Either, EitherOf5};
use leptos::prelude::*;

use crate::routes;
use crate::url_state::{ReplayLinks, ReplaySource};
use crate::url_state::{UrlState, View};

/// The data a pre-rendered page was rendered from. The first render takes
/// it, so hydration builds exactly the tree the HTML holds; later pages
/// fetch their own.
#[derive(Clone)]
pub enum Preloaded {
    /// The board index: the board and every server page render from it.
    Board(Arc<Board>),
    /// A record, and its signature state: as the board row states it when
    /// the page is rendered or hydrated, then as the browser checks it.
    Record {
        record: Arc<RunRecord>,
        signature: RwSignal<SignatureState>,
        site_key: bool,
        /// The run's board row, when the board has it: the attempts as the
        /// board counts them when published.
        row: Option<Arc<Row>>,
        /// The candidates its admission rejected, when its record names the
        /// list.
        candidates: Option<Arc<CandidateList>>,
    },
}

/// A fingerprint of the sources the views are built from (see `build.rs`):
/// a pre-rendered page carries the one it was rendered with.
pub const VIEW_BUILD: &str = env!("FITNESS_VIEW_BUILD");

/// The page's title, for the document head.
pub fn page_title(view: &View) -> String {
    let what = match view {
        View::Board => return "Fitness Report".to_owned(),
        View::Record(id) => id.clone(),
        View::Server(slug) => format!("Every run of {slug}"),
        View::Replay(ReplaySource::Run(id)) => format!("Replay of {id}"),
        View::Replay(ReplaySource::Trace(_)) => "Replay".to_owned(),
    };
    format!("{what} · Fitness Report")
}

/// The application. `ready` turns on `data-ready="1"` on the root element
/// once the page is interactive (at once when rendered in the browser,
/// after hydration over a pre-rendered page, never in static HTML).
#[component]
pub fn App(
    state: RwSignal<UrlState>,
    #[prop(default = None)] preloaded: Option<Preloaded>,
    ready: RwSignal<bool>,
) -> impl IntoView {
    // The page is rebuilt only when the view changes; the board's tier
    // filter changes in place.
    let page = Memo::new(move |_| state.with(|s| (s.view.clone(), s.embed)));
    let tier = Memo::new(move |_| state.with(|s| s.tier.clone()));
    let preloaded = StoredValue::new(preloaded);
    crate::components::anew(
        move || page.get(),
        move |(view, embed)| {
            let data = preloaded.try_update_value(Option::take).flatten();
            let links = state.with_untracked(|s| s.links.clone());
            shell(view, embed, links, tier.into(), data, ready)
        },
    )
}

fn shell(
    view: View,
    embed: bool,
    links: ReplayLinks,
    tier: Signal<Option<String>>,
    data: Option<Preloaded>,
    ready: RwSignal<bool>,
) -> impl IntoView + use<> {
    let (kind, id) = match &view {
        View::Board => ("board", None),
        View::Record(id) => ("record", Some(id.clone())),
        View::Server(slug) => ("server", Some(slug.clone())),
        View::Replay(ReplaySource::Run(id)) => ("replay", Some(id.clone())),
        View::Replay(ReplaySource::Trace(_)) => ("trace", None),
    };
    let page = page_view(view, links, tier, data);
    let ready_attr = move || ready.get().then_some("1");
    if embed {
        return Either::Left(view! {
            <div id="fitness-app" class="fitness-embed" data-page=kind data-id=id data-ready=ready_attr>
                {page}
            </div>
        });
    }
    Either::Right(view! {
        <main id="fitness-app" data-page=kind data-id=id data-build=VIEW_BUILD data-ready=ready_attr>
            <header class="masthead">
                <h1 class="wordmark"><a href=crate::api::site_url("./")>"Fitness Report"</a></h1>
                <p class="thesis">
                    "A leaderboard you can trust must be able to say: this measurement was not valid."
                </p>
            </header>
            {page}
            <footer>
                <p class="version">"viewer " {fitness_shared::VERSION}</p>
            </footer>
        </main>
    })
}

fn page_view(
    view: View,
    links: ReplayLinks,
    tier: Signal<Option<String>>,
    data: Option<Preloaded>,
) -> impl IntoView + use<> {
    use routes::{board, record, replay, server};
    match (view, data) {
        (View::Board, Some(Preloaded::Board(b))) => {
            EitherOf5::A(view! { <board::BoardView board=b tier=tier /> })
        }
        (
            View::Record(_),
            Some(Preloaded::Record {
                record,
                signature,
                site_key,
                row,
                candidates,
            }),
        ) => EitherOf5::B(view! {
            <record::BackToBoard />
            <record::RecordView record=record signature=signature site_key=site_key row=row candidates=candidates />
        }),
        (View::Server(slug), Some(Preloaded::Board(b))) => EitherOf5::C(view! {
            <record::BackToBoard />
            <server::ServerView board=b slug=slug />
        }),
        (View::Replay(source), _) => {
            EitherOf5::D(view! { <replay::ReplayPage source=source links=links /> })
        }
        (view, _) => EitherOf5::E(fetched_page(view, tier)),
    }
}

/// A page rendered in the browser from what it fetches.
#[derive(Clone)]
enum Fetched {
    Board(Arc<Board>),
    Record(routes::record::LoadedRecord),
    Server(Arc<Board>, String),
}

async fn fetch_page(view: View) -> Result<Fetched, String> {
    match view {
        View::Record(id) => routes::record::load_record(id).await.map(Fetched::Record),
        View::Server(slug) => Ok(Fetched::Server(crate::api::fetch_board().await?, slug)),
        View::Board | View::Replay(_) => Ok(Fetched::Board(crate::api::fetch_board().await?)),
    }
}

/// The board, a record or a server's history, fetched in the browser (one
/// loader for the three, so the wasm carries one).
fn fetched_page(view: View, tier: Signal<Option<String>>) -> impl IntoView + use<> {
    use routes::{board, record, server};
    let back = matches!(view, View::Record(_) | View::Server(_));
    let loading = match &view {
        View::Record(_) => "Loading the record.",
        View::Server(_) => "Loading the server's runs.",
        _ => "Loading the board.",
    };
    let page = LocalResource::new(move || fetch_page(view.clone()));
    let body = crate::components::anew(
        move || page.get(),
        move |page| match page {
            None => EitherOf5::A(view! { <p class="loading">{loading}</p> }),
            Some(Ok(Fetched::Board(b))) => {
                EitherOf5::B(view! { <board::BoardView board=b tier=tier fragment=true /> })
            }
            Some(Ok(Fetched::Record(r))) => EitherOf5::C(view! {
                <record::RecordView record=r.record signature=RwSignal::new(r.signature) site_key=r.site_key row=r.row candidates=r.candidates />
            }),
            Some(Ok(Fetched::Server(b, slug))) => {
                EitherOf5::D(view! { <server::ServerView board=b slug=slug /> })
            }
            Some(Err(e)) => EitherOf5::E(view! { <p class="error">{e}</p> }),
        },
    );
    view! {
        {back.then(|| view! { <record::BackToBoard /> })}
        {body}
    }
}
