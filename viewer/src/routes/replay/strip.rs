//! The run's shape at a glance, above the list: one lane per phase or arm
//! in the order the stages ran ([`Shape`], computed in `shared` from the
//! tapes), each lane one SVG path per kind of mark (never a node per mark:
//! marks closer than a tenth of a per-mille of the run are drawn as one),
//! the gates' verdicts as labelled ticks. Hovering names the nearest mark;
//! a click opens it in the list; a drag selects that span of the run, and
//! the list shows only its entries (`&span=`).

use std::sync::Arc;

use fitness_shared::tape::timeline::{Lane, Mark, MarkKind, Shape};
use leptos::prelude::*;

use super::filters::Filters;
use super::list::Scroll;
use super::loader::Loaded;

/// Width of the strip's coordinate space (the SVG scales it to the page).
const WIDTH: f64 = 1000.0;
/// A drag shorter than this many CSS pixels is a click.
const DRAG_PX: f64 = 4.0;

/// The class of a mark's path: its kind, or a fault whatever its kind.
fn class_of(m: &Mark) -> &'static str {
    match (m.fault, m.kind) {
        (true, _) => "mark-fault",
        (false, MarkKind::Model) => "mark-model",
        (false, MarkKind::Tool) => "mark-tool",
        (false, MarkKind::Protocol) => "mark-protocol",
    }
}

const CLASSES: [&str; 4] = ["mark-protocol", "mark-tool", "mark-model", "mark-fault"];

/// Position of `ms` in the strip's coordinates.
fn x_of(shape: &Shape, ms: f64) -> f64 {
    let span = (shape.end_ms - shape.start_ms).max(1.0);
    ((ms - shape.start_ms) / span * WIDTH).clamp(0.0, WIDTH)
}

/// One path's `d` for the marks of `lane` drawn in `class`: a rectangle per
/// run of marks that touch at the strip's resolution, at least 1 unit wide.
fn path_of(shape: &Shape, lane: &Lane, class: &str) -> String {
    let mut d = String::new();
    let mut run: Option<(f64, f64)> = None;
    let flush = |d: &mut String, (a, b): (f64, f64)| {
        let w = (b - a).max(1.0);
        d.push_str(&format!("M{a:.1} 0h{w:.1}v10h-{w:.1}z"));
    };
    for m in lane.marks.iter().filter(|m| class_of(m) == class) {
        let (a, b) = (x_of(shape, m.start_ms), x_of(shape, m.end_ms));
        run = match run {
            Some((ra, rb)) if a <= rb + 0.1 => Some((ra, rb.max(b))),
            Some(done) => {
                flush(&mut d, done);
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some(done) = run {
        flush(&mut d, done);
    }
    d
}

/// Milliseconds as a short duration.
fn duration(ms: f64) -> String {
    if ms >= 60_000.0 {
        format!(
            "{:.0} min {:.0} s",
            (ms / 60_000.0).floor(),
            (ms % 60_000.0) / 1000.0
        )
    } else if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// Where a pointer is along an element, as a fraction of its width.
fn fraction(ev: &leptos::ev::PointerEvent) -> Option<(f64, f64)> {
    use wasm_bindgen::JsCast;
    let el = ev.current_target()?.dyn_into::<web_sys::Element>().ok()?;
    let rect = el.get_bounding_client_rect();
    let width = rect.width().max(1.0);
    Some((
        ((ev.client_x() as f64 - rect.left()) / width).clamp(0.0, 1.0),
        width,
    ))
}

#[component]
pub(super) fn TimelineStrip(
    loaded: RwSignal<Option<Arc<Loaded>>>,
    filtered: Memo<Vec<usize>>,
    selected: RwSignal<Option<usize>>,
    filters: Filters,
    scroll: Scroll,
) -> impl IntoView {
    let hover = RwSignal::new(String::new());
    // Where a drag began (fraction of the width, and the width in pixels).
    let pressed = StoredValue::new(None::<(f64, f64)>);
    let open = super::list::opener(selected, filtered, filters, scroll);
    move || {
        let data = loaded.get()?;
        if !data.timeline.complete || data.shape.lanes.is_empty() {
            return None;
        }
        let shape = &data.shape;
        let total = shape.marks();
        let lanes = shape
            .lanes
            .iter()
            .enumerate()
            .map(|(i, lane)| {
                let paths = CLASSES
                    .iter()
                    .map(|c| view! { <path class=*c d=path_of(shape, lane, c) /> })
                    .collect_view();
                let faults = lane.marks.iter().filter(|m| m.fault).count();
                let data_for_hover = Arc::clone(&data);
                let data_for_up = Arc::clone(&data);
                let data_for_span = Arc::clone(&data);
                let name = lane.arm.as_str();
                view! {
                    <div class="strip-lane" data-lane=name data-marks=lane.marks.len()
                        data-faults=faults>
                        <span class="strip-label">{name}</span>
                        <svg class="strip-svg" viewBox="0 0 1000 10" preserveAspectRatio="none"
                            role="img" aria-label=format!("{name}: {} calls", lane.marks.len())
                            on:pointermove=move |ev| {
                                let Some((f, _)) = fraction(&ev) else { return };
                                let s = &data_for_hover.shape;
                                let at = s.start_ms + f * (s.end_ms - s.start_ms);
                                if let Some(m) = s.nearest(i, at) {
                                    let e = &data_for_hover.timeline.entries[m.entry];
                                    let took = m.end_ms - m.start_ms;
                                    let took = if took > 0.0 {
                                        format!("{} ", duration(took))
                                    } else {
                                        String::new()
                                    };
                                    hover.set(format!(
                                        "{name} · #{} {} · {took}at {}",
                                        m.entry,
                                        e.title,
                                        duration(m.start_ms - s.start_ms)
                                    ));
                                }
                            }
                            on:pointerdown=move |ev| pressed.set_value(fraction(&ev))
                            on:pointerup=move |ev| {
                                let Some((f1, width)) = fraction(&ev) else { return };
                                let Some((f0, _)) = pressed.get_value() else { return };
                                pressed.set_value(None);
                                let s = &data_for_up.shape;
                                let len = s.end_ms - s.start_ms;
                                if ((f1 - f0) * width).abs() < DRAG_PX {
                                    if let Some(m) = s.nearest(i, s.start_ms + f1 * len) {
                                        open(m.entry);
                                    }
                                } else {
                                    let (a, b) = (f0.min(f1) * len, f0.max(f1) * len);
                                    filters.pick_span(Some((a.floor() as u64, b.ceil() as u64)));
                                    scroll.reset();
                                }
                            }>
                            {paths}
                            {move || filters.span.get().map(|(a, b)| {
                                let (x0, x1) = (
                                    x_of(&data_for_span.shape, data_for_span.shape.start_ms + a as f64),
                                    x_of(&data_for_span.shape, data_for_span.shape.start_ms + b as f64),
                                );
                                view! { <rect class="span-sel" x=format!("{x0:.1}") y="0"
                                    width=format!("{:.1}", (x1 - x0).max(1.0)) height="10" /> }
                            })}
                        </svg>
                    </div>
                }
            })
            .collect_view();
        let ticks = shape
            .ticks
            .iter()
            .map(|t| {
                let left = x_of(shape, t.at_ms) / WIDTH * 100.0;
                // A label near the right edge reads leftwards, inside the strip.
                let class = format!(
                    "strip-tick {}{}",
                    if t.ok { "pass" } else { "fail" },
                    if left > 80.0 { " end" } else { "" }
                );
                let entry = t.entry;
                let label = format!("{} {}", t.gate, if t.ok { "passed" } else { "refused" });
                view! {
                    <button class=class style=format!("left:{left:.2}%") title=label.clone()
                        data-gate=t.gate.clone() on:click=move |_| open(entry)>
                        <span>{t.gate.clone()}</span>
                    </button>
                }
            })
            .collect_view();
        let length = duration(shape.end_ms - shape.start_ms);
        let span = move || {
            filters.span.get().map(|(a, b)| {
                view! {
                    <p class="strip-span" id="strip-span">
                        {format!("Showing {} to {} of the run. ", duration(a as f64), duration(b as f64))}
                        <button on:click=move |_| { filters.pick_span(None); scroll.reset(); }>
                            "Show the whole run"
                        </button>
                    </p>
                }
            })
        };
        Some(view! {
            <figure class="strip" id="timeline-strip" data-lanes=shape.lanes.len()
                data-marks=total>
                <figcaption>
                    {format!("The run's shape: {total} calls over {length}, one lane per stage in the order they ran. ")}
                    <span class="legend"><i class="mark-model"></i>"model call "<i class="mark-tool"></i>
                    "tool call "<i class="mark-protocol"></i>"other request "<i class="mark-fault"></i>
                    "error, destructive or withheld"</span>
                </figcaption>
                <div class="strip-ticks">{ticks}</div>
                {lanes}
                <p class="strip-hover" id="strip-hover" aria-live="polite">
                    {move || {
                        let h = hover.get();
                        if h.is_empty() {
                            "Point at a lane to name a call; click to open it; drag to show a span.".to_owned()
                        } else {
                            h
                        }
                    }}
                </p>
                {span}
            </figure>
        })
    }
}
