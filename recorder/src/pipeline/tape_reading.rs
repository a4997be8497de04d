//! Reading the run's own wire tape: what one arm's trials put on the wire.
//! The construct gate prints this when it does not pass, so a reader sees
//! whether the server answered at all.

use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

use fitness_shared::record::TapeReading;
use fitness_shared::tape::TapeReader;
use serde_json::Value;

/// `tools/call` requests whose corr_id ends with `suffix`, how many were
/// answered with an error, and how many were never answered.
pub fn read(tape: &Path, suffix: &str) -> std::io::Result<TapeReading> {
    let file = std::fs::File::open(tape)?;
    let mut reader = TapeReader::new(BufReader::new(file));
    // (corr_id, request id) -> answered?
    let mut calls: HashMap<(String, String), bool> = HashMap::new();
    let mut errors = 0u64;
    while let Some(raw) = reader.next_raw()? {
        let Ok(line) = serde_json::from_slice::<Value>(raw.bytes) else {
            continue;
        };
        let Some(corr) = line.get("corr_id").and_then(Value::as_str) else {
            continue;
        };
        if !corr.ends_with(suffix) {
            continue;
        }
        let Some(frame) = line.get("raw") else {
            continue;
        };
        let Some(id) = frame.get("id").filter(|v| !v.is_null()) else {
            continue;
        };
        let key = (corr.to_owned(), id.to_string());
        match line.get("dir").and_then(Value::as_str) {
            Some("in") if frame.get("method").and_then(Value::as_str) == Some("tools/call") => {
                calls.insert(key, false);
            }
            Some("out") => {
                if let Some(answered) = calls.get_mut(&key) {
                    *answered = true;
                    let is_error = frame.get("error").is_some()
                        || frame
                            .get("result")
                            .and_then(|r| r.get("isError"))
                            .and_then(Value::as_bool)
                            == Some(true);
                    if is_error {
                        errors += 1;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(TapeReading {
        calls_recorded: calls.len() as u64,
        call_errors: errors,
        no_response: calls.values().filter(|a| !**a).count() as u64,
    })
}
