//! Entry point of the viewer's wasm: hydrate or render the page (see
//! [`fitness_viewer::client`]), unless `embed.js` loaded this module into a
//! third party's page; then the host calls [`mount_embed`] for each element
//! that asks for the viewer.

use fitness_viewer::{UrlState, View};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    // embed.js sets this flag before it loads the module: the host page's
    // body is not ours to mount on.
    let embedding = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &JsValue::from_str("__fitnessEmbed")).ok())
        .is_some_and(|v| v.is_truthy());
    if !embedding {
        fitness_viewer::client::start();
    }
}

/// Mount the viewer into `el`. `kind` is `board`, `run` or `replay`; `src` is
/// a viewer URL on the publishing site (for example
/// `https://site.example/runs/<id>/?view=replay`): the site it names is
/// where the data is fetched from, its path and query say what to show.
#[wasm_bindgen]
pub fn mount_embed(el: web_sys::HtmlElement, kind: &str, src: &str) -> Result<(), JsValue> {
    use fitness_viewer::url_state::ReplaySource;
    console_error_panic_hook::set_once();
    let url = web_sys::Url::new(src)?;
    let (root, page) = fitness_viewer::client::split_path(&url.pathname());
    let mut state = UrlState::parse(Some(&page), &url.search());
    fitness_viewer::api::set_base(&format!("{}{root}", url.origin()));
    fitness_viewer::set_embedded(true);
    state.embed = true;
    let run = match &state.view {
        View::Record(id) | View::Replay(ReplaySource::Run(id)) => Some(id.clone()),
        _ => None,
    };
    state.view = match (kind, run, state.view.clone()) {
        ("board", _, _) => View::Board,
        ("run", Some(id), _) => View::Record(id),
        ("run", None, _) => {
            return Err(JsValue::from_str(
                "data-fitness=\"run\" needs a run (runs/<id>/ or ?run=<id>) in data-src",
            ));
        }
        ("replay", Some(id), _) => View::Replay(ReplaySource::Run(id)),
        ("replay", None, view @ View::Replay(ReplaySource::Trace(_))) => view,
        ("replay", None, _) => {
            return Err(JsValue::from_str(
                "data-fitness=\"replay\" needs a run or ?trace=URL in data-src",
            ));
        }
        (other, _, _) => {
            return Err(JsValue::from_str(&format!(
                "data-fitness must be board, run or replay, not {other:?}"
            )));
        }
    };
    let state = RwSignal::new(state);
    let ready = RwSignal::new(true);
    let handle = leptos::mount::mount_to(el, move || {
        view! { <fitness_viewer::App state=state ready=ready /> }
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
