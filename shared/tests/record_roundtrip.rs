//! fitness-report/2 records: every type round-trips, refusals never carry a
//! score key, unknown fields are tolerated, and invalid records are refused.

use crate::record_common;

use fitness_shared::record::*;
use fitness_shared::tape::Plane;
use record_common::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Serialise, parse, compare; and the JSON is a fixed point too.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) {
    let text = serde_json::to_string(value).expect("serialises");
    let back: T = serde_json::from_str(&text).expect("parses back");
    assert_eq!(&back, value, "round trip changed the value: {text}");
    assert_eq!(serde_json::to_string(&back).expect("serialises"), text);
}

#[test]
fn scored_record_round_trips_through_the_validating_parser() {
    let record = scored_record();
    record.validate().expect("the sample is valid");
    let text = serde_json::to_string_pretty(&record).unwrap();
    let back = RunRecord::from_json(&text).expect("parses and validates");
    assert_eq!(back, record);
    round_trip(&record);
}

#[test]
fn every_refusal_round_trips_and_has_no_score_key() {
    for outcome in Outcome::ALL.into_iter().filter(|o| o.is_refusal()) {
        let record = refusal_record(outcome);
        let value = serde_json::to_value(&record).unwrap();
        assert!(
            value.get("score").is_none(),
            "{outcome:?} wrote a score key"
        );
        assert_eq!(value["outcome"], outcome.code());
        let back = RunRecord::from_value(value).expect("a refusal parses");
        assert_eq!(back, record);
    }
}

#[test]
fn every_enum_variant_round_trips_with_its_explicit_tag() {
    for o in Outcome::ALL {
        round_trip(&o);
        assert_eq!(serde_json::to_value(o).unwrap(), json!(o.code()));
    }
    for v in [
        VerdictOutcome::Pass,
        VerdictOutcome::Fail,
        VerdictOutcome::Extend,
        VerdictOutcome::Indeterminate,
    ] {
        round_trip(&v);
    }
    assert_eq!(
        serde_json::to_value(VerdictOutcome::Extend).unwrap(),
        json!("EXTEND")
    );
    for t in [CostTier::Free, CostTier::Cheap, CostTier::Paid] {
        round_trip(&t);
    }
    for e in [Era::Legacy, Era::Modern] {
        round_trip(&e);
    }
    for t in [
        TransportShape::Stdio,
        TransportShape::HttpSse,
        TransportShape::HttpJson,
    ] {
        round_trip(&t);
    }
    for s in [Sessions::Sessionful, Sessions::Sessionless] {
        round_trip(&s);
    }
    for c in [
        CredentialContext::Anonymous,
        CredentialContext::FreeKey,
        CredentialContext::OwnerKey,
    ] {
        round_trip(&c);
    }
    assert_eq!(
        serde_json::to_value(CredentialContext::FreeKey).unwrap(),
        json!("free-key")
    );
    for p in [Plane::Mcp, Plane::Agent] {
        round_trip(&p);
    }
    let statuses = [
        ProbeStatus::Pass,
        ProbeStatus::Fail,
        ProbeStatus::Unknown {
            reason: "stdio".into(),
        },
    ];
    for s in &statuses {
        round_trip(s);
    }
    assert_eq!(
        serde_json::to_value(&statuses[2]).unwrap(),
        json!({"result": "unknown", "reason": "stdio"})
    );
    let costs = [
        Cost::Total {
            usd: 1.25,
            runner_usd: Some(1.0),
            judge_usd: Some(0.25),
        },
        Cost::Floor {
            usd: 1.0,
            runner_usd: None,
            judge_usd: Some(1.0),
            reasons: vec!["judge usage is marked partial".into()],
        },
        Cost::None {
            why: "no price".into(),
        },
    ];
    for c in &costs {
        round_trip(c);
    }
    assert_eq!(
        serde_json::to_value(&costs[2]).unwrap(),
        json!({"kind": "none", "why": "no price"})
    );
    let targets = [
        ServerTarget::Url {
            url: "https://x.invalid/mcp".into(),
        },
        ServerTarget::Command {
            argv: vec!["srv".into()],
        },
    ];
    for t in &targets {
        round_trip(t);
    }
    assert_eq!(serde_json::to_value(&targets[0]).unwrap()["kind"], "url");
}

#[test]
fn every_gate_detail_and_struct_round_trips() {
    let record = scored_record();
    for g in &record.gates.records {
        round_trip(g);
        round_trip(&g.detail);
    }
    round_trip(&GateDetail::Unrecognised);
    round_trip(&record.run);
    round_trip(&record.server);
    round_trip(&record.probes);
    round_trip(&record.preregistration);
    round_trip(&record.suite);
    round_trip(&record.gates);
    round_trip(&record.extensions[0]);
    round_trip(record.score.as_ref().unwrap());
    round_trip(&record.cost);
    round_trip(&record.notes);
    round_trip(&record.tapes[0]);
    round_trip(record.trace_links.as_ref().unwrap());
    round_trip(record.imported.as_ref().unwrap());
    round_trip(&StandingNotesSet {
        generator: "schema-walk/1".into(),
        notes: vec!["a".into()],
    });
}

#[test]
fn unknown_fields_and_unknown_gate_kinds_are_tolerated() {
    let mut value = serde_json::to_value(refusal_record(Outcome::GateFailed)).unwrap();
    value["a_field_from_the_future"] = json!({"x": 1});
    value["run"]["another"] = json!(true);
    value["gates"]["records"][0]["detail"] = json!({"kind": "quantum_gate", "qubits": 3});
    let record = RunRecord::from_value(value).expect("a newer writer's record still reads");
    assert_eq!(record.gates.records[0].detail, GateDetail::Unrecognised);
    assert_eq!(record.gates.records[0].reason, "ok");
}

#[test]
fn a_refusal_with_a_score_key_is_rejected_even_when_null() {
    let scored = serde_json::to_value(scored_record()).unwrap();
    let mut value = serde_json::to_value(refusal_record(Outcome::Degenerate)).unwrap();
    value["score"] = scored["score"].clone();
    let err = RunRecord::from_value(value.clone()).unwrap_err();
    assert!(
        matches!(err, RecordError::RefusalWithScore("DEGENERATE")),
        "{err}"
    );
    value["score"] = Value::Null;
    let err = RunRecord::from_value(value).unwrap_err();
    assert!(matches!(err, RecordError::RefusalWithScore(_)), "{err}");
}

#[test]
fn a_scored_record_without_a_score_is_rejected() {
    let mut record = scored_record();
    record.score = None;
    assert!(matches!(
        record.validate(),
        Err(RecordError::ScoredWithoutScore)
    ));
    let value = serde_json::to_value(&record).unwrap();
    assert!(matches!(
        RunRecord::from_value(value),
        Err(RecordError::ScoredWithoutScore)
    ));
}

#[test]
fn a_refusal_must_name_a_gate_that_has_a_record() {
    let mut record = refusal_record(Outcome::GateFailed);
    record.gates.refused_at = None;
    assert!(matches!(
        record.validate(),
        Err(RecordError::RefusalWithoutGate("GATE_FAILED"))
    ));
    record.gates.refused_at = Some("nonexistent".into());
    assert!(matches!(
        record.validate(),
        Err(RecordError::UnknownRefusingGate(_))
    ));
    // VOID stopped short of its registered size: no gate refused it.
    let mut void = refusal_record(Outcome::Void);
    void.gates.refused_at = None;
    void.validate().expect("VOID needs no refusing gate");
}

#[test]
fn impossible_numbers_are_rejected() {
    let mut r = scored_record();
    r.score.as_mut().unwrap().first_try.k = 49;
    assert!(matches!(
        r.validate(),
        Err(RecordError::InvalidNumber { .. })
    ));

    let mut r = scored_record();
    r.score.as_mut().unwrap().first_try.low = 0.9; // above the point 0.833
    assert!(matches!(
        r.validate(),
        Err(RecordError::InvalidNumber { .. })
    ));

    // Consistency is stored once, from the per-task counts: a flattering
    // figure that does not follow from them is refused.
    let mut r = scored_record();
    r.score.as_mut().unwrap().tasks[0].reps_succeeded = Some(1);
    let err = r.validate().unwrap_err();
    assert!(err.to_string().contains("score.consistency"), "{err}");

    let mut r = scored_record();
    r.extensions[0].trials_added = 4; // pooled n moved by 12
    let err = r.validate().unwrap_err();
    assert!(err.to_string().contains("trials_added"), "{err}");

    let mut r = scored_record();
    r.gates.records[6].verdict.as_mut().unwrap().alpha = 1.5;
    assert!(matches!(
        r.validate(),
        Err(RecordError::InvalidNumber { .. })
    ));

    let mut r = scored_record();
    r.cost = Cost::Floor {
        usd: 1.0,
        runner_usd: None,
        judge_usd: None,
        reasons: vec![],
    };
    assert!(matches!(r.validate(), Err(RecordError::InvalidCost(_))));
}

#[test]
fn tape_paths_cannot_leave_the_record_directory() {
    for path in [
        "../mcp.jsonl",
        "/etc/passwd",
        "a//b",
        "C:/x",
        "a\\b",
        "",
        "a/../../b",
    ] {
        let mut r = scored_record();
        r.tapes[0].path = path.into();
        assert!(
            matches!(r.validate(), Err(RecordError::InvalidTape { .. })),
            "{path:?} accepted"
        );
    }
    let mut r = scored_record();
    r.tapes[0].sha256 = "ABC".into();
    assert!(matches!(r.validate(), Err(RecordError::InvalidTape { .. })));
}

#[test]
fn other_schemas_and_garbage_are_refused_with_a_reason() {
    let mut value = serde_json::to_value(scored_record()).unwrap();
    value["schema"] = json!("fitness-report/1");
    assert!(matches!(
        RunRecord::from_value(value),
        Err(RecordError::Schema { .. })
    ));
    assert!(matches!(
        RunRecord::from_json("{"),
        Err(RecordError::Json(_))
    ));
    assert!(matches!(
        RunRecord::from_slice(&[0xff, 0xfe]),
        Err(RecordError::Json(_))
    ));
    let err = RunRecord::from_json(r#"{"schema":"fitness-report/2"}"#).unwrap_err();
    assert!(matches!(err, RecordError::Shape(_)), "{err}");
}

#[test]
fn generator_chip_reads_not_recorded_when_absent() {
    let mut r = scored_record();
    assert_eq!(r.run.generator_label(), "schema-walk/1");
    r.run.generator = None;
    assert_eq!(r.run.generator_label(), "generator not recorded");
    assert!(
        serde_json::to_value(&r.run)
            .unwrap()
            .get("generator")
            .is_none()
    );
}

#[test]
fn probe_tally_never_counts_unknown_as_pass_nor_spec_currency_as_a_check() {
    // spec-currency (pass), bogus-version (fail), origin (unknown): the
    // currency is its own column, the checks are one fail and one unknown.
    let record = scored_record();
    assert_eq!(record.probes.tally(), (0, 1, 1));
    assert_eq!(record.probes.spec_current(), Some(true));
    let row = fitness_shared::board::row_for(&record, None);
    assert_eq!((row.probes.passed, row.probes.applicable), (0, 1));
    assert_eq!(row.probes.spec_current, Some(true));
    let mut stale = record.clone();
    stale.probes.findings[0].status = ProbeStatus::Fail;
    let row = fitness_shared::board::row_for(&stale, None);
    assert_eq!(row.probes.spec_current, Some(false));
    assert_eq!(
        row.probes.failed,
        vec!["bogus-version-accepted".to_owned()],
        "a stale revision is the currency column's, not a failed check"
    );
}

#[test]
fn the_redaction_counts_round_trip_and_a_record_without_them_still_reads() {
    let mut hits = fitness_shared::redact::Hits::default();
    for label in ["env API_KEY", "env API_KEY", "pattern jwt"] {
        hits.add(label);
    }
    let counts = Redactions::from_hits(&hits);
    assert_eq!(counts.policy, fitness_shared::redact::POLICY);
    assert_eq!(counts.total, 3);
    assert_eq!(
        counts.by_source,
        vec![
            RedactionCount {
                source: "env API_KEY".into(),
                count: 2
            },
            RedactionCount {
                source: "pattern jwt".into(),
                count: 1
            },
        ]
    );
    let mut record = scored_record();
    record.redactions = Some(counts);
    round_trip(&record);
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(value["redactions"]["by_source"][0]["source"], "env API_KEY");
    let back = RunRecord::from_value(value).expect("parses and validates");
    assert_eq!(back, record);
    // Written before the policy: the key is simply absent.
    let value = serde_json::to_value(scored_record()).unwrap();
    assert!(value.get("redactions").is_none());
    assert_eq!(RunRecord::from_value(value).unwrap().redactions, None);
}
