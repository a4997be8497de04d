//! One trial as a conversation (`&trial=CORR_ID`): the task prompt, each
//! assistant turn's text and tool calls with their arguments, each tool
//! result (text, JSON folded, images counted), what the harness did, and
//! the verdict the stage gave it, each attempt in turn; beside it, the
//! trial's wire frames in order. Read by `shared`'s
//! [`conversation`](fitness_shared::tape::timeline::conversation) from the
//! tapes' own lines; every step opens its raw line in the detail pane.

use std::sync::Arc;

use fitness_shared::tape::timeline::{Attempt, Step, ToolResult, Verdict, conversation};
use leptos::prelude::*;

use super::links::replace_query;
use super::loader::{Loaded, TapeBytes};

/// Characters of one text shown before it is cut (the raw line has all).
const SHOWN_CHARS: usize = 4_000;

fn cut(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!(
            "{}\n… {} more characters: open the raw line for all of it.",
            &text[..at],
            text[at..].chars().count()
        ),
        None => text.to_owned(),
    }
}

fn raw_button<O>(entry: usize, open: O) -> impl IntoView
where
    O: Fn(usize) + Copy + Send + Sync + 'static,
{
    view! {
        <button class="raw-link" title="Open this line's raw JSON" on:click=move |_| open(entry)>
            {format!("raw #{entry}")}
        </button>
    }
}

fn turn_facts(
    input: Option<u64>,
    output: Option<u64>,
    ttft: Option<u64>,
    duration: Option<u64>,
) -> String {
    let mut parts = Vec::new();
    if let (Some(i), Some(o)) = (input, output) {
        parts.push(format!("{i} tokens in, {o} out"));
    }
    if let Some(t) = ttft {
        parts.push(format!("first token after {t} ms"));
    }
    if let Some(d) = duration {
        parts.push(format!("{d} ms in all"));
    }
    parts.join(" · ")
}

fn result_view(r: &ToolResult) -> impl IntoView + use<> {
    let class = if r.error { "result error" } else { "result" };
    let images = (r.images > 0).then(|| {
        view! { <p class="images">{format!("{} image(s) in the result (in the raw line)", r.images)}</p> }
    });
    let body = if r.json {
        leptos::either::Either::Left(view! {
            <details><summary>{format!("JSON result, {} characters", r.text.chars().count())}</summary>
                <pre>{cut(&r.text)}</pre></details>
        })
    } else {
        leptos::either::Either::Right(view! { <pre>{cut(&r.text)}</pre> })
    };
    view! {
        <div class=class>
            {r.error.then_some(view! { <p class="is-error">"The tool reported an error."</p> })}
            {body}
            {images}
        </div>
    }
}

fn step_view<O>(step: &Step, open: O) -> impl IntoView + use<O>
where
    O: Fn(usize) + Copy + Send + Sync + 'static,
{
    use leptos::either::EitherOf5 as E;
    match step.clone() {
        Step::System { entry, text } => E::A(view! {
            <li class="step system"><details><summary>"System text " {raw_button(entry, open)}</summary>
                <pre>{cut(&text)}</pre></details></li>
        }),
        Step::User { entry, text } => E::B(view! {
            <li class="step user"><h4>"Prompt " {raw_button(entry, open)}</h4><p class="text">{cut(&text)}</p></li>
        }),
        Step::Assistant {
            entry,
            text,
            calls,
            input_tokens,
            output_tokens,
            ttft_ms,
            duration_ms,
        } => {
            let facts = turn_facts(input_tokens, output_tokens, ttft_ms, duration_ms);
            let calls = calls
                .into_iter()
                .map(|c| {
                    view! { <div class="call"><code>{c.name}</code><pre>{cut(&c.input)}</pre></div> }
                })
                .collect_view();
            E::C(view! {
                <li class="step assistant">
                    <h4>"Assistant " <span class="facts">{facts}</span> " " {raw_button(entry, open)}</h4>
                    {(!text.is_empty()).then(|| view! { <p class="text">{cut(&text)}</p> })}
                    {calls}
                </li>
            })
        }
        Step::Results { entry, results } => {
            let results = results.iter().map(result_view).collect_view();
            E::D(view! {
                <li class="step results"><h4>"Tool results " {raw_button(entry, open)}</h4>{results}</li>
            })
        }
        Step::Event {
            entry,
            title,
            fault,
        } => E::E(view! {
            <li class=if fault { "step event fault" } else { "step event" }>
                <span>{title}</span>" "{raw_button(entry, open)}
            </li>
        }),
    }
}

fn verdict_view<O>(v: &Option<Verdict>, open: O) -> impl IntoView + use<O>
where
    O: Fn(usize) + Copy + Send + Sync + 'static,
{
    match v {
        Some(v) => {
            let check = match v.check {
                Some(true) => "the answer passed the task's check",
                Some(false) => "the answer did not pass the task's check",
                None => "no check recorded",
            };
            let text = match (&v.failure, v.success) {
                (_, true) => format!("Passed: {check}."),
                (Some(f), false) => format!("Failed ({f}): {check}."),
                (None, false) => format!("Failed: {check}."),
            };
            let class = if v.success {
                "verdict passed"
            } else {
                "verdict failed"
            };
            leptos::either::Either::Left(view! {
                <li class=class data-success=v.success.to_string()>{text}" "{raw_button(v.entry, open)}</li>
            })
        }
        None => leptos::either::Either::Right(view! {
            <li class="verdict none">"No verdict on the tapes for this attempt."</li>
        }),
    }
}

fn attempt_view<O>(i: usize, of: usize, a: &Attempt, open: O) -> impl IntoView + use<O>
where
    O: Fn(usize) + Copy + Send + Sync + 'static,
{
    let steps = a.steps.iter().map(|s| step_view(s, open)).collect_view();
    let heading = (of > 1)
        .then(|| view! { <h4 class="attempt-head">{format!("Attempt {} of {of}", i + 1)}</h4> });
    view! {
        <div class="attempt">
            {heading}
            <ol class="convo">{steps}{verdict_view(&a.verdict, open)}</ol>
        </div>
    }
}

/// The trial `trial` names, read from the tapes, with its wire frames.
#[component]
pub(super) fn TrialView<O>(
    loaded: RwSignal<Option<Arc<Loaded>>>,
    store: TapeBytes,
    trial: RwSignal<Option<String>>,
    open: O,
) -> impl IntoView
where
    O: Fn(usize) + Copy + Send + Sync + 'static,
{
    // A trial chosen (by a link or a click) is brought into view once drawn.
    Effect::new(move |_| {
        let ready = trial.with(Option::is_some)
            && loaded.with(|l| l.as_ref().is_some_and(|d| d.timeline.complete));
        if ready {
            leptos::task::spawn_local(async move {
                super::loader::next_tick().await;
                if let Some(el) = web_sys::window()
                    .and_then(|w| w.document())
                    .and_then(|d| d.get_element_by_id("trial"))
                {
                    el.scroll_into_view();
                }
            });
        }
    });
    move || {
        let data = loaded.get()?;
        let corr = trial.get()?;
        if !data.timeline.complete {
            return None;
        }
        let c = store.with_value(|tapes| conversation(&data.timeline, &corr, tapes));
        let steps: usize = c.attempts.iter().map(|a| a.steps.len()).sum();
        let passed = c
            .attempts
            .iter()
            .filter(|a| a.verdict.as_ref().is_some_and(|v| v.success))
            .count();
        let of = c.attempts.len();
        let attempts = c
            .attempts
            .iter()
            .enumerate()
            .map(|(i, a)| attempt_view(i, of, a, open))
            .collect_view();
        let wire = c
            .wire
            .iter()
            .map(|&n| {
                let e = &data.timeline.entries[n];
                let latency = e
                    .latency_ms
                    .map(|l| format!(" · {l:.0} ms"))
                    .unwrap_or_default();
                let class = if e.error.is_some() {
                    "wire-frame error"
                } else {
                    "wire-frame"
                };
                view! {
                    <li class=class><button on:click=move |_| open(n)>
                        {format!("#{n} {}{latency}", e.title)}
                    </button></li>
                }
            })
            .collect_view();
        let wire_count = c.wire.len();
        // A change's state check: the harness's reads after the trial.
        let state_check = corr.ends_with("::state");
        let empty = (of == 0).then(|| {
            let said = if state_check {
                "The state check of a change: the reads the harness made after the trial, on the wire tape only (never shown to the agent). The check is applied to what they read."
            } else {
                "This trial has no turns on the tapes (a trial of the random null arm makes tool calls only)."
            };
            view! { <p class="hint">{said}</p> }
        });
        Some(view! {
            <section class="trial" id="trial" data-trial=corr.clone() data-attempts=of
                data-steps=steps data-passed=passed>
                <header class="trial-head">
                    <h3>{format!("Trial {corr}")}</h3>
                    <button class="close" on:click=move |_| {
                        replace_query("trial", None);
                        trial.set(None);
                    }>"Close"</button>
                </header>
                <div class="trial-body">
                    <div class="conversation">{empty}{attempts}</div>
                    <aside class="trial-wire">
                        <h4>{format!("Wire frames ({wire_count})")}</h4>
                        <ol>{wire}</ol>
                    </aside>
                </div>
            </section>
        })
    }
}
