//! Reading the run's own wire tape: what one arm's trials put on the wire.
//! The construct gate prints this when it does not pass, so a reader sees
//! whether the server answered at all.

use std::io::BufReader;
use std::path::Path;

use fitness_shared::record::TapeReading;
use fitness_shared::tape::pairing::{AfterAnswer, Pairing, Reach, Repeat, RequestFate, Rules};
use fitness_shared::tape::{LineView, TapeReader};

/// `tools/call` requests whose corr_id ends with `suffix`, how many were
/// answered with an error, and how many were never answered.
pub fn read(tape: &Path, suffix: &str) -> std::io::Result<TapeReading> {
    let file = std::fs::File::open(tape)?;
    let mut reader = TapeReader::new(BufReader::new(file));
    // Keyed by (corr_id, request id), in tape order: a repeated request is
    // one call (the latest counts), and every answer to an open call counts
    // its error, a repeated answer too.
    let mut pairing = Pairing::new(Rules {
        reach: Reach::InOrder {
            early_answers: None,
        },
        repeat: Repeat::Replace,
        after_answer: AfterAnswer::StayOpen,
    });
    // By response number: whether it is an error.
    let mut response_errors: Vec<bool> = Vec::new();
    while let Some(raw) = reader.next_raw()? {
        let mut spill = None;
        let Ok(line) = LineView::read(raw.bytes, &mut spill) else {
            continue;
        };
        let Some(corr) = line.corr_id.get() else {
            continue;
        };
        if !corr.ends_with(suffix) {
            continue;
        }
        let Some(frame) = line.raw.0.as_ref() else {
            continue;
        };
        let Some(id) = frame.id.as_ref().filter(|v| !v.is_null()) else {
            continue;
        };
        let key = (corr.to_owned(), id.to_string());
        match line.dir.get() {
            Some("in") if frame.method.is("tools/call") => {
                pairing.request(key, raw.number);
            }
            Some("out") => {
                pairing.response(key, raw.number);
                response_errors.push(
                    frame.error.is_some() || frame.result.0.as_ref().is_some_and(|r| r.is_error.0),
                );
            }
            _ => {}
        }
    }
    let paired = pairing.finish();
    let calls = paired
        .requests
        .iter()
        .filter(|f| **f != RequestFate::Replaced);
    Ok(TapeReading {
        calls_recorded: calls.clone().count() as u64,
        call_errors: paired
            .responses
            .iter()
            .zip(&response_errors)
            .filter(|(answers, error)| answers.is_some() && **error)
            .count() as u64,
        no_response: calls.filter(|f| **f == RequestFate::Unanswered).count() as u64,
    })
}
