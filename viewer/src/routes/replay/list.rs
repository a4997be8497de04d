//! The timeline list: virtualised (only the rows in view, and
//! [`OVERSCAN`] around them, are on the page), each row an entry with its
//! chips; a row opens its entry in the detail pane, and a deep link's entry
//! is scrolled into the list once it is there.

use std::sync::Arc;

use fitness_shared::tape::timeline::Entry;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::filters::{Filters, is_flagged};
use super::links::replace_query;
use super::loader::{Loaded, next_tick, plane_word};

/// Height of one timeline row, in CSS pixels (the list is virtualised).
pub const ROW_HEIGHT: f64 = 46.0;
/// Rows rendered beyond the visible ones, above and below.
const OVERSCAN: usize = 8;

/// Where the list is scrolled to, and how tall its window is.
#[derive(Clone, Copy)]
pub(super) struct Scroll {
    top: RwSignal<f64>,
    viewport: RwSignal<f64>,
    list: NodeRef<leptos::html::Div>,
}

impl Scroll {
    pub fn new() -> Self {
        Self {
            top: RwSignal::new(0.0f64),
            viewport: RwSignal::new(560.0f64),
            list: NodeRef::<leptos::html::Div>::new(),
        }
    }

    /// Back to the list's top: a filter change starts the list from there.
    pub fn reset(self) {
        if let Some(el) = self.list.get_untracked() {
            let el: &web_sys::Element = el.as_ref();
            el.set_scroll_top(0);
        }
        self.top.set(0.0);
    }

    /// Once the page has painted, scroll the row at `position` into the
    /// list, two rows below its top, and the list into the page.
    pub fn reveal(self, position: usize) {
        leptos::task::spawn_local(async move {
            next_tick().await;
            if let Some(el) = self.list.get_untracked() {
                let el: &web_sys::Element = el.as_ref();
                let top = (position as f64 * ROW_HEIGHT - 2.0 * ROW_HEIGHT).max(0.0);
                el.set_scroll_top(top as i32);
                self.top.set(top);
                self.viewport.set(el.client_height() as f64);
                el.scroll_into_view_with_bool(false);
            }
        });
    }

    fn on_scroll(self, ev: leptos::ev::Event) {
        if let Some(el) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        {
            self.top.set(el.scroll_top() as f64);
            self.viewport.set(el.client_height() as f64);
        }
    }
}

/// Open entry `n`: select it (the detail pane shows it, the URL says so),
/// and scroll it into the list, clearing the filters if they hide it.
pub(super) fn opener(
    selected: RwSignal<Option<usize>>,
    filtered: Memo<Vec<usize>>,
    filters: Filters,
    scroll: Scroll,
) -> impl Fn(usize) + Copy + Send + Sync + 'static {
    move |n: usize| {
        selected.set(Some(n));
        replace_query("event", Some(&n.to_string()));
        if filtered.with_untracked(|f| !f.contains(&n)) {
            filters.clear();
        }
        let position = filtered.with_untracked(|f| f.iter().position(|&i| i == n));
        scroll.reveal(position.unwrap_or(n));
    }
}

/// Deep link: once the entry is on the page (in a preview or the whole
/// timeline), scroll it into the list, once. When the filters hide it,
/// they are cleared.
pub(super) fn follow_deep_link(
    loaded: RwSignal<Option<Arc<Loaded>>>,
    selected: RwSignal<Option<usize>>,
    filtered: Memo<Vec<usize>>,
    filters: Filters,
    scroll: Scroll,
) {
    let deep_link_done = StoredValue::new(false);
    Effect::new(move |_| {
        let Some(data) = loaded.get() else { return };
        let Some(n) = selected.get_untracked() else {
            return;
        };
        if deep_link_done.get_value() || n >= data.timeline.entries.len() {
            return;
        }
        deep_link_done.set_value(true);
        let position = filtered.with_untracked(|f| f.iter().position(|&i| i == n));
        let position = match position {
            Some(p) => p,
            None => {
                // The filters hide it: show everything instead.
                filters.clear();
                n
            }
        };
        scroll.reveal(position);
    });
}

/// The list: a spacer as tall as every entry that passes the filters, and
/// on it the rows in view.
#[component]
pub(super) fn TimelineList(
    loaded: RwSignal<Option<Arc<Loaded>>>,
    filtered: Memo<Vec<usize>>,
    selected: RwSignal<Option<usize>>,
    filters: Filters,
    scroll: Scroll,
) -> impl IntoView {
    let select = move |n: usize| {
        selected.set(Some(n));
        replace_query("event", Some(&n.to_string()));
    };
    let pick_corr = move |c: Option<String>| {
        filters.pick_corr(c);
        scroll.reset();
    };
    let rows = move || {
        let Some(data) = loaded.get() else {
            return Vec::new();
        };
        let top = scroll.top.get();
        let height = scroll.viewport.get().max(ROW_HEIGHT);
        let first = ((top / ROW_HEIGHT).floor() as usize).saturating_sub(OVERSCAN);
        let count = (height / ROW_HEIGHT).ceil() as usize + 2 * OVERSCAN;
        let sel = selected.get();
        filtered.with(|f| {
            f.iter()
                .enumerate()
                .skip(first)
                .take(count)
                .map(|(pos, &n)| {
                    let e = &data.timeline.entries[n];
                    row_view(
                        e,
                        data.timeline.complete,
                        pos,
                        sel == Some(n),
                        select,
                        pick_corr,
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    let spacer_height = move || format!("height:{}px", filtered.with(Vec::len) as f64 * ROW_HEIGHT);
    view! {
        <div class="vlist" node_ref=scroll.list on:scroll=move |ev| scroll.on_scroll(ev)
            role="list" aria-label="Timeline" tabindex="0">
            <div class="vlist-spacer" style=spacer_height>{rows}</div>
        </div>
    }
}

fn row_view<S, P>(
    e: &Entry,
    complete: bool,
    pos: usize,
    selected: bool,
    select: S,
    pick_corr: P,
) -> impl IntoView + use<S, P>
where
    S: Fn(usize) + Copy + Send + Sync + 'static,
    P: Fn(Option<String>) + Copy + Send + Sync + 'static,
{
    let n = e.n;
    let mut class = format!("tl-row {} plane-{}", e.kind.as_str(), plane_word(e.plane));
    if selected {
        class.push_str(" selected");
    }
    if is_flagged(e, complete) {
        class.push_str(" flagged");
    }
    let mut flags = Vec::new();
    if e.pending && complete {
        flags.push(("flag pending", "no response".to_owned()));
    } else if e.pending {
        flags.push(("flag unsettled", "response not read yet".to_owned()));
    }
    if let Some(err) = &e.error {
        flags.push(("flag error", format!("error: {err}")));
    }
    if e.destructive {
        flags.push(("flag destructive", "destructive call".to_owned()));
    }
    let flags = flags
        .into_iter()
        .map(|(c, t)| view! { <span class=c>{t}</span> })
        .collect_view();
    let latency = e.latency_ms.map(|l| format!("{l:.0} ms"));
    let corr_chip = e.corr_id.clone().map(|c| {
        let c2 = c.clone();
        view! {
            <button class="chip corr" title="Show only this trial"
                on:click=move |ev| { ev.stop_propagation(); pick_corr(Some(c2.clone())); }>{c}</button>
        }
    });
    view! {
        <div class=class role="listitem" data-n=n data-kind=e.kind.as_str() data-arm=e.arm.as_str()
            style=format!("top:{}px;height:{}px", pos as f64 * ROW_HEIGHT, ROW_HEIGHT)
            tabindex="0"
            on:click=move |_| select(n)
            on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    select(n);
                }
            }>
            <div class="tl-line1">
                <span class="n">{format!("#{n}")}</span>
                <time>{time_of_day(&e.t)}</time>
                <span class="chip kind">{e.kind.as_str()}</span>
                <span class="title">{e.title.clone()}</span>
            </div>
            <div class="tl-line2">
                <span class="chip arm">{e.arm.as_str()}</span>
                {corr_chip}
                <span class="latency">{latency}</span>
                {flags}
                <span class="sub">{e.detail.clone()}</span>
            </div>
        </div>
    }
}

fn time_of_day(t: &Option<String>) -> String {
    t.as_deref()
        .and_then(|t| t.get(11..23))
        .unwrap_or("")
        .to_owned()
}
