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

/// Position of `ms` in the strip's coordinates (idle stretches drawn
/// short, as `shared` maps them).
fn x_of(shape: &Shape, ms: f64) -> f64 {
    (shape.position(ms) * WIDTH).clamp(0.0, WIDTH)
}

/// The narrowest axis the strip is laid out for, in CSS pixels (a 390 px
/// phone, less the lane labels and padding): labels are placed so that they
/// never overlap there, hence never on a wider one.
const NARROWEST_AXIS_PX: f64 = 220.0;
/// A label's width on that axis, as a share of it: a character of the
/// ticks' font (0.65rem) and the label's padding and border.
fn label_share(chars: usize) -> f64 {
    (chars as f64 * 7.0 + 8.0) / NARROWEST_AXIS_PX
}

/// Rows for labels at `items` (where each stands on the axis and its
/// width, as shares of it): each label starts at its point (or, near the
/// right edge, ends there: `flipped`) in the first row where it clears
/// the label before it. Returns (row, flipped) per item.
fn stack(items: &[(f64, f64)]) -> Vec<(usize, bool)> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|a, b| items[*a].0.total_cmp(&items[*b].0));
    let mut row_ends: Vec<f64> = Vec::new();
    let mut placed = vec![(0, false); items.len()];
    for i in order {
        let (x, w) = items[i];
        let flipped = x + w > 1.0;
        let left = if flipped { x - w } else { x };
        let row = match row_ends.iter().position(|end| *end <= left) {
            Some(r) => r,
            None => {
                row_ends.push(f64::NEG_INFINITY);
                row_ends.len() - 1
            }
        };
        row_ends[row] = left + w + 0.01;
        placed[i] = (row, flipped);
    }
    placed
}

/// The CSS that puts a label at `x` (a share of the axis) in `row`.
fn place(x: f64, (row, flipped): (usize, bool)) -> String {
    let top = row as f64 * 1.25;
    if flipped {
        format!("right:{:.2}%;top:{top}rem", (1.0 - x) * 100.0)
    } else {
        format!("left:{:.2}%;top:{top}rem", x * 100.0)
    }
}

/// The narrowest a mark is drawn, in the strip's units (a pixel on the
/// narrowest axis): an instant is still seen.
const MIN_MARK: f64 = 10.0;

/// One path's `d` for the marks of `lane` drawn in `class`: a rectangle per
/// run of marks that touch at the strip's resolution, at least
/// [`MIN_MARK`] wide.
fn path_of(shape: &Shape, lane: &Lane, class: &str) -> String {
    let mut d = String::new();
    let mut run: Option<(f64, f64)> = None;
    let flush = |d: &mut String, (a, b): (f64, f64)| {
        let w = (b - a).max(MIN_MARK);
        let a = a.min(WIDTH - w);
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
        // Idle stretches, drawn short across every lane.
        let breaks_in_lane: Vec<_> = shape
            .breaks
            .iter()
            .map(|b| {
                let (x0, x1) = (x_of(shape, b.start_ms), x_of(shape, b.end_ms));
                view! { <rect class="idle-break" x=format!("{x0:.1}") y="0"
                width=format!("{:.1}", (x1 - x0).max(1.0)) height="10" /> }
            })
            .collect();
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
                let breaks_in_lane = breaks_in_lane.clone();
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
                                let at = s.time_at(f);
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
                                if ((f1 - f0) * width).abs() < DRAG_PX {
                                    if let Some(m) = s.nearest(i, s.time_at(f1)) {
                                        open(m.entry);
                                    }
                                } else {
                                    let (a, b) = (
                                        s.time_at(f0.min(f1)) - s.start_ms,
                                        s.time_at(f0.max(f1)) - s.start_ms,
                                    );
                                    filters.pick_span(Some((a.floor() as u64, b.ceil() as u64)));
                                    scroll.reset();
                                }
                            }>
                            {breaks_in_lane.clone()}
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
        // On the axis: each verdict a numbered marker, each idle stretch
        // its duration; stacked in rows so that no two labels overlap. The
        // gates' names are in the list below, numbered alike.
        let breaks_text: Vec<String> = shape
            .breaks
            .iter()
            .map(|b| format!("{} idle", duration(b.ms())))
            .collect();
        let mut items: Vec<(f64, f64)> = shape
            .ticks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let chars = (i + 1).to_string().len();
                (x_of(shape, t.at_ms) / WIDTH, label_share(chars))
            })
            .collect();
        items.extend(shape.breaks.iter().zip(&breaks_text).map(|(b, text)| {
            (
                x_of(shape, b.start_ms) / WIDTH,
                label_share(text.chars().count()),
            )
        }));
        let placed = stack(&items);
        let rows = placed.iter().map(|(r, _)| r + 1).max().unwrap_or(1);
        let ticks = shape
            .ticks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let at = placed[i];
                let class = format!(
                    "strip-tick {}{}",
                    tick_class(t.state),
                    if at.1 { " end" } else { "" }
                );
                let style = place(items[i].0, at);
                let entry = t.entry;
                let label = format!("{} {} {}", i + 1, t.gate, t.state.verdict_word());
                view! {
                    <button class=class style=style
                        title=label data-gate=t.gate.clone() on:click=move |_| open(entry)>
                        {(i + 1).to_string()}
                    </button>
                }
            })
            .collect_view();
        let break_labels = breaks_text
            .iter()
            .enumerate()
            .map(|(j, text)| {
                let k = shape.ticks.len() + j;
                let class = if placed[k].1 {
                    "strip-break-label end"
                } else {
                    "strip-break-label"
                };
                view! {
                    <span class=class style=place(items[k].0, placed[k])>
                        {text.clone()}
                    </span>
                }
            })
            .collect_view();
        let gates = shape
            .ticks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let entry = t.entry;
                let class = format!("strip-gate {}", tick_class(t.state));
                view! {
                    <li><button class=class data-gate=t.gate.clone() data-state=t.state.word() on:click=move |_| open(entry)>
                        {format!("{} {} {}", i + 1, t.gate, t.state.verdict_word())}
                    </button></li>
                }
            })
            .collect_view();
        let idle_note = (!shape.breaks.is_empty()).then(|| {
            let total_idle: f64 = shape.breaks.iter().map(|b| b.ms()).sum();
            format!(
                " Hatched: {} idle stretch{} ({} in all), drawn short.",
                shape.breaks.len(),
                if shape.breaks.len() == 1 { "" } else { "es" },
                duration(total_idle)
            )
        });
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
                    {format!("The run's shape: {total} calls over {length}, one lane per stage in the order they ran.{} ", idle_note.unwrap_or_default())}
                    <span class="legend"><i class="mark-model"></i>"model call "<i class="mark-tool"></i>
                    "tool call "<i class="mark-protocol"></i>"other request "<i class="mark-fault"></i>
                    "error, destructive or withheld"</span>
                </figcaption>
                <div class="strip-ticks" style=format!("height:{}rem", rows as f64 * 1.25)>
                    {ticks}{break_labels}
                </div>
                {lanes}
                <ol class="strip-gates">{gates}</ol>
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

/// The class a gate's tick is coloured by: passed, refused, or undecided
/// (a gate that stopped nothing and decided nothing, drawn in neither).
fn tick_class(state: fitness_shared::gate_state::GateState) -> &'static str {
    match state {
        fitness_shared::gate_state::GateState::Passed => "pass",
        fitness_shared::gate_state::GateState::Failed => "fail",
        fitness_shared::gate_state::GateState::Undecided => "undecided",
    }
}
