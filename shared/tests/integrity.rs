//! Canonical JSON (RFC 8785), sha256, and ed25519 record signatures.

use crate::record_common;

use fitness_shared::integrity::signing::{public_key_b64, sign_record};
use fitness_shared::integrity::*;
use fitness_shared::record::Outcome;
use proptest::prelude::*;
use serde_json::{Value, json};

const SEED: [u8; 32] = [7; 32];
const OTHER_SEED: [u8; 32] = [9; 32];

fn canon(v: &Value) -> String {
    String::from_utf8(canonical_json(v).expect("canonicalises")).expect("utf-8")
}

#[test]
fn rfc8785_number_vectors() {
    // RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
    let vectors: [(u64, &str); 27] = [
        (0x0000000000000000, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af5, "9.999999999999997e+22"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
        (0x444b1ae4d6e2ef4e, "999999999999999700000"),
        (0x444b1ae4d6e2ef4f, "999999999999999900000"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555553, "333333333.3333332"),
        (0x41b3de4355555554, "333333333.33333325"),
        (0x41b3de4355555555, "333333333.3333333"),
        (0x41b3de4355555556, "333333333.3333334"),
        (0x41b3de4355555557, "333333333.33333343"),
        (0xbecbf647612f3696, "-0.0000033333333333333333"),
        (0x43143ff3c1cb0959, "1424953923781206.2"),
        (0x3ff0000000000000, "1"),
        (0x3fb999999999999a, "0.1"),
        (0x4415af1d78b58c40, "100000000000000000000"),
    ];
    for (bits, expected) in vectors {
        let f = f64::from_bits(bits);
        assert_eq!(ecmascript_number(f), expected, "bits {bits:#018x}");
    }
}

#[test]
fn rfc8785_example_document() {
    // RFC 8785 §3.2.2, input as JSON text.
    let input = r#"{
        "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
        "literals": [null, true, false]
    }"#;
    let value: Value = serde_json::from_str(input).unwrap();
    assert_eq!(
        canon(&value),
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
    );
}

#[test]
fn rfc8785_keys_sort_by_utf16_code_units() {
    let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
    let value: Value = serde_json::from_str(input).unwrap();
    let text = canon(&value);
    let order: Vec<&str> = [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small",
        "Euro Sign",
        "Emoji",
        "Hebrew",
    ]
    .into_iter()
    .collect();
    let positions: Vec<usize> = order.iter().map(|s| text.find(s).expect(s)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn integers_that_would_change_are_refused_not_rounded() {
    assert_eq!(canon(&json!(9007199254740992u64)), "9007199254740992");
    assert_eq!(
        canon(&json!(10000000000000000000u64)),
        "10000000000000000000"
    );
    // Large integers whose text is already their double's canonical text.
    assert_eq!(
        canon(&json!(-7739471490556924000i64)),
        "-7739471490556924000"
    );
    // i64::MIN is an exact double, but its RFC 8785 text differs from its digits.
    assert!(matches!(
        canonical_json(&json!(i64::MIN)),
        Err(IntegrityError::IntegerOutOfRange(_))
    ));
    assert!(matches!(
        canonical_json(&json!(9007199254740993u64)),
        Err(IntegrityError::IntegerOutOfRange(_))
    ));
    assert!(matches!(
        canonical_json(&json!(u64::MAX)),
        Err(IntegrityError::IntegerOutOfRange(_))
    ));
    assert!(matches!(
        canonical_json(&json!(i64::MAX)),
        Err(IntegrityError::IntegerOutOfRange(_))
    ));
}

#[test]
fn sha256_of_known_inputs() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let mut s = Sha256Stream::new();
    s.update(b"a");
    s.update(b"bc");
    assert_eq!(s.finish(), (sha256_hex(b"abc"), 3));
}

fn signed_file(seed: &[u8; 32]) -> Vec<u8> {
    let record = record_common::refusal_record(Outcome::GateFailed);
    let mut value = serde_json::to_value(record).unwrap();
    sign_record(&mut value, seed).unwrap();
    record_file_bytes(&value).unwrap()
}

#[test]
fn a_signed_record_verifies_and_names_its_key() {
    let bytes = signed_file(&SEED);
    let (value, by) = verify_record_bytes(&bytes, None).expect("verifies");
    assert_eq!(value["signature"]["algorithm"], "ed25519");
    assert_eq!(value["signature"]["canonicalization"], "RFC8785");
    assert_eq!(
        value["signature"]["public_key"],
        public_key_b64(&SEED).as_str()
    );
    assert_eq!(by.fingerprint.len(), 16);
    verify_record_bytes(&bytes, Some(&public_key_b64(&SEED))).expect("pinned key verifies");
    // Without the trailing newline too.
    verify_record_bytes(&bytes[..bytes.len() - 1], None).expect("no newline is fine");
    // Re-signing replaces the old signature rather than signing it.
    let mut again = value.clone();
    sign_record(&mut again, &SEED).unwrap();
    assert_eq!(again, value, "ed25519 is deterministic");
}

#[test]
fn a_record_signed_by_another_key_fails_a_pinned_check() {
    let bytes = signed_file(&OTHER_SEED);
    verify_record_bytes(&bytes, None).expect("self-consistent");
    let err = verify_record_bytes(&bytes, Some(&public_key_b64(&SEED))).unwrap_err();
    assert!(matches!(err, IntegrityError::WrongKey { .. }), "{err}");
}

#[test]
fn unsigned_pretty_or_swapped_key_records_fail() {
    let record = serde_json::to_value(record_common::refusal_record(Outcome::Degenerate)).unwrap();
    let bytes = record_file_bytes(&record).unwrap();
    assert_eq!(
        verify_record_bytes(&bytes, None).unwrap_err(),
        IntegrityError::Unsigned
    );

    let mut signed = record.clone();
    sign_record(&mut signed, &SEED).unwrap();
    let pretty = serde_json::to_vec_pretty(&signed).unwrap();
    assert_eq!(
        verify_record_bytes(&pretty, None).unwrap_err(),
        IntegrityError::NotCanonical
    );
    // The canonical content of the pretty file is still signed correctly.
    verify_record(&serde_json::from_slice(&pretty).unwrap(), None).expect("same content");

    // Someone swaps in their own public key but keeps the old signature.
    let mut swapped = signed.clone();
    swapped["signature"]["public_key"] = public_key_b64(&OTHER_SEED).into();
    let bytes = record_file_bytes(&swapped).unwrap();
    assert_eq!(
        verify_record_bytes(&bytes, None).unwrap_err(),
        IntegrityError::SignatureMismatch
    );

    // A changed outcome with the old signature.
    let mut tampered = signed.clone();
    tampered["outcome"] = "SCORED".into();
    assert_eq!(
        verify_record(&tampered, None).unwrap_err(),
        IntegrityError::SignatureMismatch
    );

    assert_eq!(
        verify_record_bytes(b"not json", None).unwrap_err(),
        IntegrityError::NotJson
    );
    assert_eq!(
        verify_record(&json!([1]), None).unwrap_err(),
        IntegrityError::NotAnObject
    );
}

#[test]
fn flipping_any_single_byte_of_a_signed_record_fails_verification() {
    let bytes = signed_file(&SEED);
    verify_record_bytes(&bytes, None).expect("the original verifies");
    let mut checked = 0;
    for i in 0..bytes.len() {
        // Every byte with two masks; a third (case flips) on every 8th byte to
        // keep the debug-build run short.
        let masks: &[u8] = if i % 8 == 0 {
            &[0x01, 0x80, 0x20]
        } else {
            &[0x01, 0x80]
        };
        for &mask in masks {
            let mut flipped = bytes.clone();
            flipped[i] ^= mask;
            assert!(
                verify_record_bytes(&flipped, None).is_err(),
                "flipping byte {i} with {mask:#04x} still verified"
            );
            checked += 1;
        }
    }
    assert!(checked >= bytes.len() * 2);
}

#[test]
fn only_the_sites_own_key_reads_as_verified() {
    let site = public_key_b64(&SEED);
    let fingerprint = |seed: &[u8; 32]| {
        let key = decode_public_key(&public_key_b64(seed)).unwrap();
        key_fingerprint(key.as_bytes())
    };
    let ours = signed_file(&SEED);
    assert_eq!(
        signature_state_of_bytes(&ours, Some(&site)),
        SignatureState::Verified {
            fingerprint: fingerprint(&SEED)
        }
    );
    // A valid signature by someone else's key is not this site's.
    let theirs = signed_file(&OTHER_SEED);
    let state = signature_state_of_bytes(&theirs, Some(&site));
    assert_eq!(
        state,
        SignatureState::OtherKey {
            fingerprint: fingerprint(&OTHER_SEED),
            site: fingerprint(&SEED),
        }
    );
    assert!(
        state.sentence(true).starts_with("Not verified"),
        "{}",
        state.sentence(true)
    );
    // A site that publishes no key vouches for nothing.
    let state = signature_state_of_bytes(&ours, None);
    assert_eq!(state.name(), "no-site-key");
    assert!(state.sentence(false).contains(&fingerprint(&SEED)));
    // Unsigned, with and without a site key.
    let unsigned = record_file_bytes(
        &serde_json::to_value(record_common::refusal_record(Outcome::Degenerate)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        signature_state_of_bytes(&unsigned, Some(&site)),
        SignatureState::Unsigned
    );
    assert!(
        SignatureState::Unsigned
            .sentence(true)
            .starts_with("Not verified")
    );
    // One byte changed, a pretty-printed file, a bad site key.
    let mut flipped = ours.clone();
    let at = flipped.iter().position(|&b| b == b'G').unwrap();
    flipped[at] = b'H';
    assert_eq!(
        signature_state_of_bytes(&flipped, Some(&site)).name(),
        "invalid"
    );
    let pretty =
        serde_json::to_vec_pretty(&serde_json::from_slice::<Value>(&ours).unwrap()).unwrap();
    assert_eq!(
        signature_state_of_bytes(&pretty, Some(&site)).name(),
        "invalid"
    );
    assert_eq!(
        signature_state_of_bytes(&ours, Some("not a key")).name(),
        "invalid"
    );
    for state in [
        signature_state_of_bytes(&theirs, Some(&site)),
        signature_state_of_bytes(&ours, None),
        SignatureState::Unsigned,
        signature_state_of_bytes(&flipped, Some(&site)),
    ] {
        assert!(!state.sentence(true).contains("Verified"), "{state:?}");
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i / 4096)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,6}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn canonical_json_is_a_fixed_point_and_ignores_key_order(value in arb_json()) {
        let bytes = canonical_json(&value).unwrap();
        let again: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(canonical_json(&again).unwrap(), bytes.clone());
        // Reversing every object's member order does not change the bytes.
        fn reversed(v: &Value) -> Value {
            match v {
                Value::Object(m) => Value::Object(m.iter().rev().map(|(k, v)| (k.clone(), reversed(v))).collect()),
                Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
                other => other.clone(),
            }
        }
        prop_assert_eq!(canonical_json(&reversed(&value)).unwrap(), bytes);
    }

    #[test]
    fn ecmascript_numbers_read_back_to_the_same_double(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let text = ecmascript_number(f);
        let back: f64 = text.parse().unwrap();
        prop_assert_eq!(back, if f == 0.0 { 0.0 } else { f });
        let via_json: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(via_json.as_f64(), Some(back));
    }
}
