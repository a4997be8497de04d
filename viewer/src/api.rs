//! The only place that builds data URLs and fetches them.
//!
//! Site paths come from [`fitness_shared::site`] and are joined onto a base
//! that leads to the site's root: `""` on the board, `"../../"` on a page
//! one directory pair down (`runs/<id>/`), the site's URL when the viewer
//! is embedded in another origin's page ([`set_base`]).

use std::cell::RefCell;
use std::sync::Arc;

use fitness_shared::board::Board;
use fitness_shared::record::CandidateList;
use fitness_shared::site;
use gloo_net::http::Request;

thread_local! {
    static BASE: RefCell<String> = const { RefCell::new(String::new()) };
    /// The board index, once read, by the URL it was read from: every page
    /// of the site reads the same one.
    static BOARD: RefCell<Option<(String, Arc<Board>)>> = const { RefCell::new(None) };
}

/// Resolve site paths against `base` (`""`, `"../../"`, or a site URL such
/// as `https://site.example/`) from now on.
pub fn set_base(base: &str) {
    let mut base = base.to_owned();
    if !base.is_empty() && !base.ends_with('/') {
        base.push('/');
    }
    BASE.with(|b| *b.borrow_mut() = base);
}

/// The base site paths are resolved against (empty: the page's own).
pub fn base() -> String {
    BASE.with(|b| b.borrow().clone())
}

/// A site path ([`fitness_shared::site`]) as a URL to fetch or link to.
pub fn site_url(path: &str) -> String {
    site::join(&base(), path)
}

/// The link to a run's record page.
pub fn record_page_url(run_id: &str) -> String {
    site::run_dir(run_id)
        .map(|p| site_url(&p))
        .unwrap_or_default()
}

/// The link to a run's replay.
pub fn replay_url(run_id: &str) -> String {
    site::replay(run_id)
        .map(|p| site_url(&p))
        .unwrap_or_default()
}

/// The link to a run's replay opened on one trial (`corr_id`).
pub fn replay_trial_url(run_id: &str, corr_id: &str) -> String {
    site::replay(run_id)
        .map(|p| site_url(&format!("{p}&corr={}", site::query_value(corr_id))))
        .unwrap_or_default()
}

/// The link to a run's replay opened on one trial read as a conversation.
pub fn replay_conversation_url(run_id: &str, corr_id: &str) -> String {
    site::replay_trial(run_id, corr_id)
        .map(|p| site_url(&p))
        .unwrap_or_default()
}

/// The link to a server's history page.
pub fn server_page_url(slug: &str) -> String {
    site::server_page(slug)
        .map(|p| site_url(&p))
        .unwrap_or_default()
}

/// GET `url` (used as given); an HTTP error status is an error.
async fn get(url: &str) -> Result<gloo_net::http::Response, String> {
    let response = Request::get(url)
        .send()
        .await
        .map_err(|e| format!("failed to fetch {url}: {e}"))?;
    if !response.ok() {
        return Err(format!("failed to fetch {url}: HTTP {}", response.status()));
    }
    Ok(response)
}

/// The bytes at `url` (a full URL or a site-relative one, used as given).
pub async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    get(url)
        .await?
        .binary()
        .await
        .map_err(|e| format!("failed to read {url}: {e}"))
}

/// A response body read chunk by chunk as it arrives (fetch's ReadableStream).
pub struct BodyReader {
    url: String,
    reader: Option<web_sys::ReadableStreamDefaultReader>,
    /// The `Content-Length` the server announced, if any.
    pub length: Option<u64>,
}

impl BodyReader {
    /// Start fetching `url` (used as given).
    pub async fn open(url: &str) -> Result<Self, String> {
        use wasm_bindgen::JsCast;
        let response = get(url).await?;
        let length = response
            .headers()
            .get("content-length")
            .and_then(|v| v.parse().ok());
        let reader = response.body().map(|body| {
            body.get_reader()
                .unchecked_into::<web_sys::ReadableStreamDefaultReader>()
        });
        Ok(Self {
            url: url.to_owned(),
            reader,
            length,
        })
    }

    /// Append the next chunk to `out`; `false` once the body has ended.
    pub async fn next_chunk(&mut self, out: &mut Vec<u8>) -> Result<bool, String> {
        let Some(reader) = &self.reader else {
            return Ok(false);
        };
        let result = wasm_bindgen_futures::JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("failed to read {}: {e:?}", self.url))?;
        let done = js_sys::Reflect::get(&result, &"done".into())
            .map(|v| v.is_truthy())
            .unwrap_or(true);
        if done {
            self.reader = None;
            return Ok(false);
        }
        let value = js_sys::Reflect::get(&result, &"value".into())
            .map_err(|e| format!("failed to read {}: {e:?}", self.url))?;
        let chunk = js_sys::Uint8Array::new(&value);
        let start = out.len();
        out.resize(start + chunk.length() as usize, 0);
        chunk.copy_to(&mut out[start..]);
        Ok(true)
    }
}

/// Fetch and parse JSON. Every JSON document the viewer reads goes through
/// `serde_json::from_slice`: one reader type means one copy of each
/// deserializer in the wasm (a `from_str` path beside it doubled them).
pub async fn fetch_json<T: serde::de::DeserializeOwned>(path: &str) -> Result<T, String> {
    let path = &site_url(path);
    let bytes = fetch_bytes(path).await?;
    serde_json::from_slice(&bytes).map_err(|e| format!("failed to read {path}: {e}"))
}

/// The board index (read once per site URL, then shared by every page).
pub async fn fetch_board() -> Result<Arc<Board>, String> {
    let url = site_url(site::BOARD_JSON);
    let absolute = absolute(&url);
    if let Some(board) = BOARD.with(|b| {
        b.borrow()
            .as_ref()
            .filter(|(at, _)| *at == absolute)
            .map(|(_, board)| board.clone())
    }) {
        return Ok(board);
    }
    let bytes = fetch_bytes(&url).await?;
    let board: Arc<Board> =
        Arc::new(serde_json::from_slice(&bytes).map_err(|e| format!("failed to read {url}: {e}"))?);
    BOARD.with(|b| *b.borrow_mut() = Some((absolute, board.clone())));
    Ok(board)
}

/// `url` resolved against the page, so two spellings of one file compare equal.
fn absolute(url: &str) -> String {
    web_sys::window()
        .and_then(|w| w.location().href().ok())
        .and_then(|here| web_sys::Url::new_with_base(url, &here).ok())
        .map(|u| u.href())
        .unwrap_or_else(|| url.to_owned())
}

/// The candidates a run's admission rejected (the list its record names).
pub async fn fetch_candidates(run_id: &str) -> Result<CandidateList, String> {
    let path = site::candidates_json(run_id).ok_or_else(|| format!("not a run id: {run_id}"))?;
    fetch_json(&path).await
}

/// The bytes of one run's record file (its signature covers these bytes).
pub async fn fetch_record_bytes(run_id: &str) -> Result<Vec<u8>, String> {
    let path = site::record_json(run_id).ok_or_else(|| format!("not a run id: {run_id}"))?;
    fetch_bytes(&site_url(&path)).await
}
