//! The timeline's filters: by trial, arm, kind, and flagged entries only;
//! which entries pass them, and the controls that set them (each choice is
//! written into the URL, so a link opens on the same view).

use std::sync::Arc;

use fitness_shared::tape::timeline::{Arm, Entry, EntryKind};
use leptos::prelude::*;

use super::links::replace_query;
use super::loader::Loaded;
use crate::url_state::ReplayLinks;

/// Trials named in the trial filter's list (the rest by their row chips).
const TRIAL_OPTIONS: usize = 200;

/// The filters' state.
#[derive(Clone, Copy)]
pub(super) struct Filters {
    pub corr: RwSignal<Option<String>>,
    pub arm: RwSignal<Option<Arm>>,
    pub kind: RwSignal<Option<EntryKind>>,
    pub flagged_only: RwSignal<bool>,
    /// A span of the strip, milliseconds from the run's start.
    pub span: RwSignal<Option<(u64, u64)>>,
}

impl Filters {
    /// The filters a deep link names; unknown arms and kinds filter nothing.
    pub fn new(links: &ReplayLinks) -> Self {
        Self {
            corr: RwSignal::new(links.corr.clone()),
            arm: RwSignal::new(links.arm.clone().and_then(|a| Arm::parse(&a))),
            kind: RwSignal::new(links.kind.clone().and_then(|k| EntryKind::parse(&k))),
            flagged_only: RwSignal::new(false),
            span: RwSignal::new(links.span),
        }
    }

    /// Show everything.
    pub fn clear(self) {
        self.corr.set(None);
        self.arm.set(None);
        self.kind.set(None);
        self.flagged_only.set(false);
        self.pick_span(None);
    }

    /// Show only the entries of a span of the strip (all for `None`), and
    /// say so in the URL.
    pub fn pick_span(self, span: Option<(u64, u64)>) {
        replace_query("span", span.map(|(a, b)| format!("{a}-{b}")).as_deref());
        self.span.set(span);
    }

    /// Show only trial `c` (every trial for `None`), and say so in the URL.
    pub fn pick_corr(self, c: Option<String>) {
        replace_query("corr", c.as_deref());
        self.corr.set(c);
    }

    /// Entry indices that pass the filters.
    pub fn passing(self, loaded: RwSignal<Option<Arc<Loaded>>>) -> Memo<Vec<usize>> {
        Memo::new(move |_| {
            let Some(data) = loaded.get() else {
                return Vec::new();
            };
            let corr = self.corr.get();
            let arm = self.arm.get();
            let kind = self.kind.get();
            let flagged = self.flagged_only.get();
            let complete = data.timeline.complete;
            let origin = data.shape.start_ms;
            let span = self
                .span
                .get()
                .map(|(a, b)| (origin + a as f64, origin + b as f64));
            data.timeline
                .entries
                .iter()
                .filter(|e| corr.is_none() || e.corr_id == corr)
                .filter(|e| arm.is_none_or(|a| e.arm == a))
                .filter(|e| kind.is_none_or(|k| e.kind == k))
                .filter(|e| !flagged || is_flagged(e, complete))
                .filter(|e| span.is_none_or(|(a, b)| e.t_ms.is_some_and(|t| t >= a && t <= b)))
                .map(|e| e.n)
                .collect::<Vec<usize>>()
        })
    }
}

/// Pending, an error, or destructive. While the tapes are still being read
/// (`complete` false) a call without its response is not flagged: the
/// response may be in the part not read yet.
pub(super) fn is_flagged(e: &Entry, complete: bool) -> bool {
    (complete && e.pending) || e.error.is_some() || e.destructive
}

/// The filters, once there is a timeline, and how many entries pass them.
/// Each change starts the list from its top (`reset_scroll`).
#[component]
pub(super) fn FilterControls<R>(
    loaded: RwSignal<Option<Arc<Loaded>>>,
    filtered: Memo<Vec<usize>>,
    filters: Filters,
    reset_scroll: R,
) -> impl IntoView
where
    R: Fn() + Copy + Send + Sync + 'static,
{
    move || {
        let data = loaded.get()?;
        let total = data.timeline.entries.len();
        let trial = trial_select(&data, filters, reset_scroll);
        let shown = filtered.with(Vec::len);
        Some(view! {
            <div class="filters" role="group" aria-label="Filter the timeline">
                {arm_select(filters, reset_scroll)}
                {kind_select(filters, reset_scroll)}
                {trial}
                <label>
                    <input type="checkbox" id="filter-flagged" prop:checked=filters.flagged_only
                        on:change=move |ev| {
                            filters.flagged_only.set(event_target_checked(&ev));
                            reset_scroll();
                        } />
                    " only flagged (pending, errors, destructive)"
                </label>
                <p id="shown-count" data-shown=shown data-total=total>
                    {if data.timeline.complete {
                        format!("Showing {shown} of {total} entries.")
                    } else {
                        format!("Showing {shown} of the {total} entries settled so far.")
                    }}
                </p>
            </div>
        })
    }
}

fn arm_select<R>(filters: Filters, reset_scroll: R) -> impl IntoView + use<R>
where
    R: Fn() + Copy + Send + Sync + 'static,
{
    let arm = filters.arm;
    let arms = Arm::ALL
        .into_iter()
        .map(|a| {
            let is = arm.get() == Some(a);
            view! { <option value=a.as_str() selected=is>{a.as_str()}</option> }
        })
        .collect_view();
    view! {
        <label>"Arm "
            <select id="filter-arm" on:change=move |ev| {
                let v = event_target_value(&ev);
                arm.set(Arm::parse(&v));
                replace_query("arm", Arm::parse(&v).map(Arm::as_str));
                reset_scroll();
            }>
                <option value="" selected=arm.get().is_none()>"all arms"</option>
                {arms}
            </select>
        </label>
    }
}

fn kind_select<R>(filters: Filters, reset_scroll: R) -> impl IntoView + use<R>
where
    R: Fn() + Copy + Send + Sync + 'static,
{
    let kind = filters.kind;
    let kinds = EntryKind::ALL
        .into_iter()
        .map(|k| {
            let is = kind.get() == Some(k);
            view! { <option value=k.as_str() selected=is>{k.as_str()}</option> }
        })
        .collect_view();
    view! {
        <label>"Kind "
            <select id="filter-kind" on:change=move |ev| {
                let v = event_target_value(&ev);
                kind.set(EntryKind::parse(&v));
                replace_query("kind", EntryKind::parse(&v).map(EntryKind::as_str));
                reset_scroll();
            }>
                <option value="" selected=kind.get().is_none()>"all kinds"</option>
                {kinds}
            </select>
        </label>
    }
}

/// The trial filter, and the hint that its list is cut short.
///
/// A list of thousands of options costs more to build than the whole
/// timeline and cannot be read: the first TRIAL_OPTIONS, and the chosen
/// trial wherever it is. Every row's trial chip filters too.
fn trial_select<R>(data: &Loaded, filters: Filters, reset_scroll: R) -> impl IntoView + use<R>
where
    R: Fn() + Copy + Send + Sync + 'static,
{
    let corr = filters.corr;
    let chosen = corr.get();
    let all_trials = &data.timeline.trials;
    let trials = all_trials
        .iter()
        .enumerate()
        .filter(|(i, (c, _, _))| *i < TRIAL_OPTIONS || chosen.as_deref() == Some(c.as_str()))
        .map(|(_, (c, a, count))| {
            let label = format!("{c} ({}, {count})", a.as_str());
            let value = c.clone();
            let is = chosen.as_deref() == Some(c.as_str());
            view! { <option value=value selected=is>{label}</option> }
        })
        .collect_view();
    let more_trials = (all_trials.len() > TRIAL_OPTIONS).then(|| {
        view! {
            <p class="hint" id="more-trials">{format!(
                "The list names the first {TRIAL_OPTIONS} of {} trials; a row's trial chip shows only its trial.",
                all_trials.len()
            )}</p>
        }
    });
    view! {
        <label>"Trial "
            <select id="filter-corr" on:change=move |ev| {
                let v = event_target_value(&ev);
                filters.pick_corr(Some(v).filter(|v| !v.is_empty()));
                reset_scroll();
            }>
                <option value="" selected=corr.get().is_none()>"all trials"</option>
                {trials}
            </select>
        </label>
        {more_trials}
    }
}
