//! The only place that builds data URLs and fetches them.

use fitness_shared::board::Board;
use fitness_shared::record::RunRecord;
use gloo_net::http::Request;

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

async fn fetch_json<T: serde::de::DeserializeOwned>(path: &str) -> Result<T, String> {
    let response = Request::get(path)
        .send()
        .await
        .map_err(|e| format!("failed to fetch {path}: {e}"))?;
    if !response.ok() {
        return Err(format!(
            "failed to fetch {path}: HTTP {}",
            response.status()
        ));
    }
    response
        .json::<T>()
        .await
        .map_err(|e| format!("failed to read {path}: {e}"))
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
