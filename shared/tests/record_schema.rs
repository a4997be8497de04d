//! The committed JSON Schema is the one generated from the record types.
//! Regenerate with `FITNESS_UPDATE_SCHEMA=1 cargo test -p fitness-shared --test shared record_schema`.

use fitness_shared::record::json_schema;

const COMMITTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/schema/fitness-report-2.schema.json"
);

#[test]
fn committed_schema_equals_generated_schema() {
    let generated = serde_json::to_string_pretty(&json_schema()).expect("schema serialises") + "\n";
    if std::env::var_os("FITNESS_UPDATE_SCHEMA").is_some() {
        std::fs::write(COMMITTED, &generated).expect("write the schema");
    }
    let committed = std::fs::read_to_string(COMMITTED).unwrap_or_else(|e| {
        panic!("cannot read {COMMITTED}: {e}; regenerate with FITNESS_UPDATE_SCHEMA=1")
    });
    assert!(
        committed == generated,
        "{COMMITTED} is stale: the record types changed. Regenerate with \
         FITNESS_UPDATE_SCHEMA=1 cargo test -p fitness-shared --test shared record_schema"
    );
}

#[test]
fn schema_names_every_outcome_and_requires_the_core_fields() {
    let schema = json_schema();
    let text = schema.to_string();
    for code in [
        "SCORED",
        "INSUFFICIENT_SURFACE",
        "DEGENERATE",
        "GATE_FAILED",
        "EXTEND_EXHAUSTED",
        "COMPROMISED",
        "VOID",
    ] {
        assert!(
            text.contains(&format!("\"{code}\"")),
            "schema lacks outcome {code}"
        );
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for key in ["schema", "run", "server", "outcome", "cost", "gates"] {
        assert!(required.contains(&key), "{key} should be required");
    }
    // The score is optional: on a refusal it does not exist.
    assert!(!required.contains(&"score"));
    assert_eq!(schema["$id"], fitness_shared::record::SCHEMA_ID);
}
