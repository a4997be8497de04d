//! One entry's detail: its facts, and the raw tape lines behind it, each
//! pretty-printed when it is JSON.

use std::sync::Arc;

use fitness_shared::tape::timeline::Entry;
use leptos::either::Either;
use leptos::prelude::*;

use super::loader::{Loaded, TapeBytes, plane_word};

/// The detail pane: the chosen entry, or a hint to choose one.
#[component]
pub(super) fn DetailPane(
    loaded: RwSignal<Option<Arc<Loaded>>>,
    selected: RwSignal<Option<usize>>,
    store: TapeBytes,
    trial: RwSignal<Option<String>>,
) -> impl IntoView {
    let detail = move || {
        let data = loaded.get()?;
        let n = selected.get()?;
        let entry = data.timeline.entries.get(n)?;
        Some(detail_view(entry, &data, store, trial))
    };
    view! {
        <aside class="detail" id="detail" aria-live="polite">
            {move || match detail() {
                Some(d) => Either::Left(d),
                None => Either::Right(view! {
                    <p class="hint">"Choose an entry to see its raw JSON."</p>
                }),
            }}
        </aside>
    }
}

fn pretty(raw: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(v) => serde_json::to_string_pretty(&v)
            .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned()),
        Err(_) => String::from_utf8_lossy(raw).into_owned(),
    }
}

fn detail_view(
    e: &Entry,
    data: &Loaded,
    store: TapeBytes,
    trial: RwSignal<Option<String>>,
) -> impl IntoView + use<> {
    let mut facts = vec![
        ("Entry", format!("#{}", e.n)),
        ("Time", e.t.clone().unwrap_or_else(|| "not recorded".into())),
        ("Kind", e.kind.as_str().to_owned()),
        ("Arm", e.arm.as_str().to_owned()),
        (
            "Trial",
            e.corr_id.clone().unwrap_or_else(|| "no corr_id".into()),
        ),
        ("Plane", plane_word(e.plane).to_owned()),
        ("Summary", e.title.clone()),
    ];
    if !e.detail.is_empty() {
        facts.push(("Detail", e.detail.clone()));
    }
    if let Some(l) = e.latency_ms {
        facts.push(("Latency", format!("{l:.0} ms")));
    }
    if e.pending && data.timeline.complete {
        facts.push(("Response", "none on the tape".into()));
    } else if e.pending {
        facts.push((
            "Response",
            "not read yet: the tapes are still loading".into(),
        ));
    }
    if let Some(err) = &e.error {
        facts.push(("Error", err.clone()));
    }
    if e.destructive {
        facts.push(("Destructive", "a destructive call".into()));
    }
    let dl = facts
        .into_iter()
        .map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> })
        .collect_view();
    let raws = e
        .lines
        .iter()
        .map(|l| {
            let name = data
                .tapes
                .get(l.tape)
                .map(|t| t.name.clone())
                .unwrap_or_default();
            let text = store
                .with_value(|b| {
                    b.get(l.tape)
                        .and_then(|t| t.get(l.start..l.end))
                        .map(pretty)
                })
                .unwrap_or_default();
            view! {
                <h4>{format!("{name} line {}", l.line)}</h4>
                <pre class="raw">{text}</pre>
            }
        })
        .collect_view();
    let link = format!("#event-{}", e.n);
    let read = e.corr_id.clone().map(|c| {
        view! {
            <button class="read-trial" on:click=move |_| {
                super::links::replace_query("trial", Some(&c));
                trial.set(Some(c.clone()));
            }>"Read this trial as a conversation"</button>
        }
    });
    view! {
        <div class="detail-body" data-n=e.n id=link.trim_start_matches('#').to_owned()>
            <h3>{format!("Entry #{}", e.n)}</h3>
            {read}
            <dl>{dl}</dl>
            {raws}
        </div>
    }
}
