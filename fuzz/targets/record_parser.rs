//! Fuzz the record parser: arbitrary bytes through every entry point that
//! reads a record from outside (v2 parse + validate, v1 import, canonical
//! JSON, signature verification). None may panic; a record that parses must
//! serialise and parse again.
//!
//! One home for the target's check: `fuzz_targets/record_parser.rs` hands it
//! libFuzzer's inputs, and the e2e test `fuzz_corpus` replays the committed
//! corpus through it on the stable toolchain in every test run.

use fitness_shared::integrity;
use fitness_shared::record::RunRecord;
use fitness_shared::record::import::import_runs;

pub fn check(data: &[u8]) {
    if let Ok(record) = RunRecord::from_slice(data) {
        let text = serde_json::to_string(&record).expect("a parsed record serialises");
        if let Err(err) = RunRecord::from_json(&text) {
            panic!("a valid record did not read back after serialising: {err}");
        }
    }
    let _ = integrity::verify_record_bytes(data, None);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = import_runs(&value);
        if let Ok(bytes) = integrity::canonical_json(&value) {
            // Canonical form is a fixed point.
            let again: serde_json::Value =
                serde_json::from_slice(&bytes).expect("canonical JSON parses");
            assert_eq!(integrity::canonical_json(&again).ok(), Some(bytes));
        }
    }
}
