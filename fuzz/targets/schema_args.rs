//! Schema-valid argument generation over arbitrary JSON Schemas (a tool's
//! `inputSchema` comes from the server): nothing may panic, generation ends
//! within its step and time budget, and what it returns is never larger than
//! its byte cap.
//!
//! One home for the target's check: `fuzz_targets/schema_args.rs` hands it
//! libFuzzer's inputs, and the e2e test `fuzz_corpus` replays the committed
//! corpus through it on the stable toolchain in every test run.

use std::time::{Duration, Instant};

use fitness_recorder::suite::schema_args::{Limits, valid_arguments_within};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use serde_json::{Value, json};

pub fn check(data: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // Smaller caps than a run's, so the fuzzer reaches them quickly.
    let limits = Limits {
        max_string_chars: 2_000,
        max_items: 20,
        max_depth: 32,
        max_bytes: 16 * 1024,
        max_steps: 20_000,
        max_time: Duration::from_secs(1),
    };
    let seed = data
        .iter()
        .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(*b));
    // The schema itself, and as the one required property of a tool.
    for schema in [
        schema.clone(),
        json!({"type": "object", "properties": {"p": schema}, "required": ["p"]}),
    ] {
        let started = Instant::now();
        let drawn = valid_arguments_within(&schema, &mut ChaCha8Rng::seed_from_u64(seed), &limits);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "generation outran its budget: {:?}",
            started.elapsed()
        );
        match drawn {
            Ok(args) => {
                let size = serde_json::to_vec(&args)
                    .expect("arguments serialise")
                    .len();
                assert!(size <= limits.max_bytes, "{size} bytes");
            }
            Err(why) => {
                let _ = why.to_string();
            }
        }
    }
}
