//! What each tape held, counted once the whole timeline is built: lines by
//! record kind, request/response pairs and calls with no response.

use std::sync::Arc;

use leptos::prelude::*;

use super::loader::{Loaded, TapeBytes, plane_word};

/// Per-tape counts, only for the whole timeline: a preview's are partial.
#[component]
pub(super) fn TapeCounts(loaded: RwSignal<Option<Arc<Loaded>>>, store: TapeBytes) -> impl IntoView {
    move || {
        let data = loaded.get().filter(|d| d.timeline.complete)?;
        let items = data
            .timeline
            .tapes
            .iter()
            .zip(data.tapes.iter())
            .enumerate()
            .map(|(i, (s, t))| {
                let r = &s.records;
                let text = format!(
                    "{} ({} plane, {} bytes): {} lines; {} meta, {} wire messages, {} events, {} turns, {} end, {} other; {} skipped. {} request/response pairs; tools/call {} calls, {} with no response.",
                    t.name,
                    plane_word(t.plane),
                    store.with_value(|b| b.get(i).map_or(0, Vec::len)),
                    r.total,
                    r.meta,
                    r.message,
                    r.event,
                    r.turn,
                    r.end,
                    r.other,
                    s.skipped,
                    s.pairs,
                    s.tool_calls,
                    s.tool_pending
                );
                view! {
                    <li class="tape-count" data-tape=t.name.clone() data-plane=plane_word(t.plane)
                        data-message=r.message data-event=r.event data-turn=r.turn
                        data-meta=r.meta data-end=r.end data-other=r.other
                        data-pairs=s.pairs data-tool-calls=s.tool_calls
                        data-tool-pending=s.tool_pending data-skipped=s.skipped>
                        {text}
                    </li>
                }
            })
            .collect_view();
        Some(view! { <ul class="tape-counts">{items}</ul> })
    }
}
