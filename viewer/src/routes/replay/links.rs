//! Writing the reader's choices back into the replay's query (what the URL
//! says, `ReplaySource` and `ReplayLinks`, is read in `url_state`).

/// Replace the page's query (deep links) without reloading; not when embedded.
pub(super) fn replace_query(key: &str, value: Option<&str>) {
    if crate::components::embedded() {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(search) = window.location().search() else {
        return;
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return;
    };
    match value {
        Some(v) => params.set(key, v),
        None => params.delete(key),
    }
    let query: String = params.to_string().into();
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("?{query}")),
        );
    }
}
