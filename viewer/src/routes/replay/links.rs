//! What the replay's URL says: the tapes to replay, the entry and filters a
//! deep link opens on, and writing the reader's choices back into the query.

/// What to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplaySource {
    /// A published run: its record names the tapes and their hashes.
    Run(String),
    /// Tapes by URL, with no record to check them against.
    Trace(Vec<String>),
}

/// Deep-link and filter state read from the URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayLinks {
    pub event: Option<usize>,
    pub corr: Option<String>,
    pub arm: Option<String>,
    pub kind: Option<String>,
}

/// Replace the page's query (deep links) without reloading; not when embedded.
pub(super) fn replace_query(key: &str, value: Option<&str>) {
    if crate::embedded() {
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
