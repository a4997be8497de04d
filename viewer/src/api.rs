//! The only place that builds data URLs and fetches them.
//!
//! Site paths are relative to a base: empty for the site's own pages (the
//! browser resolves them against the page), the site's URL when the viewer is
//! embedded in another origin's page ([`set_base`]).

use std::cell::RefCell;

use fitness_shared::board::Board;
use fitness_shared::record::RunRecord;
use gloo_net::http::Request;

thread_local! {
    static BASE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Resolve site paths against `base` (e.g. `https://site.example/`) from now on.
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

/// A site path as a URL to fetch or link to.
pub fn site_url(path: &str) -> String {
    format!("{}{path}", base())
}

/// Site-relative path of the board index.
pub const BOARD_PATH: &str = "data/board.json";

/// Site-relative path of one run's record. Ids are restricted to the
/// characters run ids use, so a query string cannot point elsewhere.
pub fn record_path(run_id: &str) -> Option<String> {
    let ok = !run_id.is_empty()
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !run_id.contains("..");
    ok.then(|| format!("runs/{run_id}/record.json"))
}

/// Site-relative path of a standing-notes set, from its id (`sha256:<hex>`).
pub fn standing_notes_path(set_id: &str) -> Option<String> {
    let hex = set_id.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("standing-notes/{hex}.json"))
}

/// Site-relative path of a tape a run's record names (`tapes[].path`, which is
/// relative to the record's directory). Refuses paths that could leave it.
pub fn tape_path(run_id: &str, tape: &str) -> Option<String> {
    let dir = record_path(run_id)?;
    let dir = dir.strip_suffix("record.json")?;
    let ok = !tape.is_empty()
        && !tape.starts_with('/')
        && !tape.contains('\\')
        && !tape.contains(':')
        && tape
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    ok.then(|| format!("{dir}{tape}"))
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

/// The board index.
pub async fn fetch_board() -> Result<Board, String> {
    fetch_json(BOARD_PATH).await
}

/// One run's full record, fetched only when its page is opened.
pub async fn fetch_record(run_id: String) -> Result<RunRecord, String> {
    let path = record_path(&run_id).ok_or_else(|| format!("not a run id: {run_id}"))?;
    fetch_json(&path).await
}
