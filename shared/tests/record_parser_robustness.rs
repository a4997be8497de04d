//! The record parser never panics: arbitrary bytes, and real records with one
//! value replaced anywhere, either parse and validate or fail with an error.
//! (The long-running search is the cargo-fuzz target record_parser in fuzz/.)

use crate::record_common;

use fitness_shared::integrity::{canonical_json, verify_record_bytes};
use fitness_shared::record::RunRecord;
use fitness_shared::record::import::import_runs;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Every JSON pointer in a value.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<u64>().prop_map(|u| json!(u)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,8}".prop_map(Value::String),
        Just(json!([])),
        Just(json!({})),
        Just(json!("SCORED")),
        Just(json!("unknown")),
    ]
}

fn exercise(value: &Value) {
    let text = serde_json::to_string(value).expect("serialises");
    if let Ok(record) = RunRecord::from_json(&text) {
        let again = serde_json::to_string(&record).expect("serialises");
        RunRecord::from_json(&again).expect("a valid record reads back");
    }
    let _ = verify_record_bytes(text.as_bytes(), None);
    let _ = canonical_json(value);
}

/// runs.json parsed once for all cases.
fn anchor() -> &'static Value {
    static RUNS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    RUNS.get_or_init(record_common::anchor_runs)
}

fn v2_sample() -> Value {
    serde_json::to_value(record_common::scored_record()).expect("serialises")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = RunRecord::from_slice(&bytes);
        let _ = verify_record_bytes(&bytes, None);
    }

    #[test]
    fn a_v2_record_with_one_value_replaced_never_panics(pick in any::<prop::sample::Index>(), new in replacement()) {
        let mut value = v2_sample();
        let mut all = Vec::new();
        pointers(&value, String::new(), &mut all);
        let at = pick.get(&all).clone();
        if let Some(slot) = value.pointer_mut(&at) {
            *slot = new;
        }
        exercise(&value);
    }

    #[test]
    fn a_v1_record_with_one_value_replaced_never_panics(pick in any::<prop::sample::Index>(), new in replacement(), which in 0usize..33) {
        let mut value = anchor()[which].clone();
        let mut all = Vec::new();
        pointers(&value, String::new(), &mut all);
        let at = pick.get(&all).clone();
        if let Some(slot) = value.pointer_mut(&at) {
            *slot = new;
        }
        let _ = import_runs(&value);
    }
}

#[test]
fn removing_any_single_field_of_a_v2_record_never_panics() {
    let value = v2_sample();
    let mut all = Vec::new();
    pointers(&value, String::new(), &mut all);
    let mut rejected = 0;
    for at in all.iter().filter(|p| !p.is_empty()) {
        let (parent, key) = at.rsplit_once('/').expect("pointer has a parent");
        let mut v = value.clone();
        match v.pointer_mut(parent) {
            Some(Value::Object(map)) => {
                map.shift_remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            Some(Value::Array(items)) => {
                if let Ok(i) = key.parse::<usize>() {
                    items.remove(i);
                }
            }
            _ => continue,
        }
        if RunRecord::from_value(v).is_err() {
            rejected += 1;
        }
    }
    // Required fields exist, so some removals must be refused.
    assert!(rejected > 10, "only {rejected} removals were refused");
}
