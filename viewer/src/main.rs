//! Entry point of the viewer's wasm: mount the app on the page body, unless
//! `embed.js` loaded this module into a third party's page; then the host
//! calls [`mount_embed`] for each element that asks for the viewer.

use wasm_bindgen::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    // embed.js sets this flag before it loads the module: the host page's
    // body is not ours to mount on.
    let embedding = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &JsValue::from_str("__fitnessEmbed")).ok())
        .is_some_and(|v| v.is_truthy());
    if !embedding {
        leptos::mount::mount_to_body(fitness_viewer::App);
    }
}

/// Mount the viewer into `el`. `kind` is `board`, `run` or `replay`; `src` is
/// a viewer URL on the publishing site (for example
/// `https://site.example/?run=<id>&view=replay`): its directory is where the
/// data is fetched from, its query says what to show.
#[wasm_bindgen]
pub fn mount_embed(el: web_sys::HtmlElement, kind: &str, src: &str) -> Result<(), JsValue> {
    console_error_panic_hook::set_once();
    let url = web_sys::Url::new(src)?;
    let mut state = fitness_viewer::UrlState::parse(&url.search());
    let path = url.pathname();
    let dir = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    fitness_viewer::api::set_base(&format!("{}{dir}", url.origin()));
    fitness_viewer::set_embedded(true);
    state.embed = true;
    match kind {
        "board" => {
            state.run = None;
            state.trace.clear();
        }
        "run" => {
            state.view = None;
            state.trace.clear();
            if state.run.is_none() {
                return Err(JsValue::from_str(
                    "data-fitness=\"run\" needs ?run=<id> in data-src",
                ));
            }
        }
        "replay" => {
            if state.run.is_some() {
                state.view = Some("replay".to_owned());
            } else if state.trace.is_empty() {
                return Err(JsValue::from_str(
                    "data-fitness=\"replay\" needs ?run=<id> or ?trace=URL in data-src",
                ));
            }
        }
        other => {
            return Err(JsValue::from_str(&format!(
                "data-fitness must be board, run or replay, not {other:?}"
            )));
        }
    }
    let handle = leptos::mount::mount_to(el, move || {
        leptos::view! { <fitness_viewer::AppWith state=state.clone() /> }
    });
    handle.forget();
    Ok(())
}

/// Bytes of the wasm's linear memory (benchmarks read it).
#[wasm_bindgen]
pub fn wasm_memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| {
            m.buffer()
                .unchecked_into::<js_sys::ArrayBuffer>()
                .byte_length() as f64
        })
        .unwrap_or(0.0)
}
