//! Schema-valid arguments from a tool's JSON Schema, drawn from a seeded RNG.
//!
//! Used by `schema-walk/1` to call tools and by the run's random-valid-args
//! null arm. Supported: `type` (one or a list; `null` is taken last), `enum`,
//! `const`, `default` (taken half the time), numeric `minimum`/`maximum`
//! (and the exclusive forms), `multipleOf` for integers, `minLength`/
//! `maxLength`, `minItems`/`maxItems`, `required` (always present; optional
//! properties appear half the time), nested objects and arrays, `anyOf`/
//! `oneOf` (the first branch), `allOf` (merged properties), and the formats
//! `date`, `date-time`, `time`, `uri`/`url`, `email`, `uuid`. `pattern` is not
//! solved: such strings are plain words.

use rand::{Rng, RngExt};
use serde_json::{Map, Number, Value, json};

/// Syllables for pronounceable, unlikely-to-be-guessed words (no digits, so
/// a number in a response never collides with a word argument).
const SYLLABLES: &[&str] = &[
    "ta", "vi", "mor", "ken", "lu", "sa", "ro", "bel", "din", "ka", "zo", "fi", "nel", "pra",
    "tor", "mi", "gal", "ve", "dru", "so", "lan", "qui", "ber", "nox",
];

/// Arguments valid under `schema` (an object schema; anything else yields `{}`).
pub fn valid_arguments(schema: &Value, rng: &mut impl Rng) -> Map<String, Value> {
    match value_for(schema, rng, 0) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A pronounceable random word of 2–3 syllables.
pub fn word(rng: &mut impl Rng) -> String {
    let n = rng.random_range(2..=3);
    (0..n)
        .map(|_| SYLLABLES[rng.random_range(0..SYLLABLES.len())])
        .collect()
}

fn value_for(schema: &Value, rng: &mut impl Rng, depth: usize) -> Value {
    let Some(obj) = schema.as_object() else {
        // `true` or a missing schema: anything goes; a word is valid.
        return Value::String(word(rng));
    };
    if let Some(c) = obj.get("const") {
        return c.clone();
    }
    if let Some(Value::Array(options)) = obj.get("enum")
        && !options.is_empty()
    {
        return options[rng.random_range(0..options.len())].clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get(key)
            && let Some(first) = branches
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .or(branches.first())
        {
            return value_for(&merge(obj, first, key), rng, depth);
        }
    }
    if let Some(Value::Array(parts)) = obj.get("allOf") {
        let mut merged = obj.clone();
        merged.remove("allOf");
        let mut merged = Value::Object(merged);
        for p in parts {
            if let Some(m) = merged.as_object() {
                merged = merge(m, p, "");
            }
        }
        return value_for(&merged, rng, depth);
    }
    if let Some(d) = obj.get("default")
        && rng.random_bool(0.5)
    {
        return d.clone();
    }
    match type_of(obj).as_deref() {
        Some("object") => object_for(obj, rng, depth),
        Some("array") => array_for(obj, rng, depth),
        Some("integer") => integer_for(obj, rng),
        Some("number") => number_for(obj, rng),
        Some("boolean") => Value::Bool(rng.random_bool(0.5)),
        Some("null") => Value::Null,
        _ => string_for(obj, rng),
    }
}

/// `schema` without `key`, with `branch`'s keys laid over it.
fn merge(schema: &Map<String, Value>, branch: &Value, key: &str) -> Value {
    let mut out = schema.clone();
    out.remove(key);
    if let Some(b) = branch.as_object() {
        for (k, v) in b {
            match (k.as_str(), out.get_mut(k), v) {
                ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                    for (pk, pv) in theirs {
                        mine.insert(pk.clone(), pv.clone());
                    }
                }
                ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                    for r in theirs {
                        if !mine.contains(r) {
                            mine.push(r.clone());
                        }
                    }
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Value::Object(out)
}

fn type_of(obj: &Map<String, Value>) -> Option<String> {
    match obj.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            names
                .iter()
                .find(|t| **t != "null")
                .or(names.first())
                .map(|t| (*t).to_owned())
        }
        _ if obj.contains_key("properties") => Some("object".into()),
        _ if obj.contains_key("items") => Some("array".into()),
        _ => None,
    }
}

fn object_for(obj: &Map<String, Value>, rng: &mut impl Rng, depth: usize) -> Value {
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(Value::Object(props)) = obj.get("properties") {
        for (name, sub) in props {
            let needed = required.contains(&name.as_str());
            // Optional properties half the time; never deeper than 6 levels.
            if needed || (depth < 6 && rng.random_bool(0.5)) {
                out.insert(name.clone(), value_for(sub, rng, depth + 1));
            }
        }
    }
    // A required name with no property schema still has to be present.
    for name in required {
        if !out.contains_key(name) {
            out.insert(name.to_owned(), Value::String(word(rng)));
        }
    }
    Value::Object(out)
}

fn array_for(obj: &Map<String, Value>, rng: &mut impl Rng, depth: usize) -> Value {
    let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(1) as usize;
    let max = obj
        .get("maxItems")
        .and_then(Value::as_u64)
        .map_or(min.max(1) + 2, |m| m as usize)
        .max(min);
    let n = if depth >= 6 {
        min
    } else {
        rng.random_range(min..=max.min(min + 3))
    };
    let items = obj.get("items").cloned().unwrap_or(Value::Bool(true));
    let unique = obj.get("uniqueItems").and_then(Value::as_bool) == Some(true);
    let mut out: Vec<Value> = Vec::with_capacity(n);
    let mut attempts = 0;
    while out.len() < n && attempts < n * 10 + 10 {
        attempts += 1;
        let v = value_for(&items, rng, depth + 1);
        if unique && out.contains(&v) {
            continue;
        }
        out.push(v);
    }
    Value::Array(out)
}

fn bounds(obj: &Map<String, Value>) -> (f64, f64) {
    let mut lo = obj.get("minimum").and_then(Value::as_f64);
    let mut hi = obj.get("maximum").and_then(Value::as_f64);
    if let Some(x) = obj.get("exclusiveMinimum").and_then(Value::as_f64) {
        lo = Some(lo.map_or(x + 1.0, |l| l.max(x + 1.0)));
    }
    if let Some(x) = obj.get("exclusiveMaximum").and_then(Value::as_f64) {
        hi = Some(hi.map_or(x - 1.0, |h| h.min(x - 1.0)));
    }
    // Unbounded sides: small, human-sized values.
    let (lo, hi) = match (lo, hi) {
        (Some(l), Some(h)) => (l, h),
        (Some(l), None) => (l, l + 100.0),
        (None, Some(h)) => ((h - 100.0).max(if h >= 1.0 { 1.0 } else { h - 100.0 }), h),
        (None, None) => (1.0, 100.0),
    };
    if hi < lo { (lo, lo) } else { (lo, hi) }
}

fn integer_for(obj: &Map<String, Value>, rng: &mut impl Rng) -> Value {
    let (lo, hi) = bounds(obj);
    let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
    let mut v = if hi <= lo {
        lo
    } else {
        rng.random_range(lo..=hi)
    };
    if let Some(m) = obj.get("multipleOf").and_then(Value::as_i64)
        && m > 0
    {
        v = (v / m) * m;
        if v < lo {
            v += m;
        }
    }
    json!(v)
}

fn number_for(obj: &Map<String, Value>, rng: &mut impl Rng) -> Value {
    let (lo, hi) = bounds(obj);
    // Whole numbers when the range allows: their sums and products print
    // exactly, so an answer key taken from a response is unambiguous.
    let (l, h) = (lo.ceil(), hi.floor());
    if h >= l {
        let v = if h > l {
            rng.random_range(l as i64..=h as i64)
        } else {
            l as i64
        };
        return json!(v);
    }
    let f = if hi > lo {
        rng.random_range(lo..=hi)
    } else {
        lo
    };
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn string_for(obj: &Map<String, Value>, rng: &mut impl Rng) -> Value {
    let format = obj.get("format").and_then(Value::as_str).unwrap_or("");
    let s = match format {
        "date" => format!(
            "20{:02}-{:02}-{:02}",
            rng.random_range(18..=25),
            rng.random_range(1..=12),
            rng.random_range(1..=28)
        ),
        "date-time" => format!(
            "20{:02}-{:02}-{:02}T{:02}:{:02}:00Z",
            rng.random_range(18..=25),
            rng.random_range(1..=12),
            rng.random_range(1..=28),
            rng.random_range(0..=23),
            rng.random_range(0..=59)
        ),
        "time" => format!(
            "{:02}:{:02}:00",
            rng.random_range(0..=23),
            rng.random_range(0..=59)
        ),
        "uri" | "url" | "iri" => format!("https://example.com/{}", word(rng)),
        "email" | "idn-email" => format!("{}@example.com", word(rng)),
        "uuid" => {
            let b: [u8; 16] = rng.random();
            format!(
                "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
                u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                u16::from_be_bytes([b[4], b[5]]),
                u16::from_be_bytes([b[6], b[7]]) & 0x0fff,
                u16::from_be_bytes([b[8], b[9]]) & 0x0fff,
                u64::from_be_bytes([0, 0, b[10], b[11], b[12], b[13], b[14], b[15]])
            )
        }
        _ => word(rng),
    };
    let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = obj
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let mut s = s;
    while s.chars().count() < min {
        s.push_str(&word(rng));
    }
    if let Some(max) = max
        && s.chars().count() > max
    {
        s = s.chars().take(max).collect();
    }
    Value::String(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    #[test]
    fn required_types_and_bounds_hold() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 5, "maximum": 9},
                "b": {"type": "number", "exclusiveMinimum": 0, "maximum": 3},
                "name": {"type": "string", "minLength": 12, "maxLength": 14},
                "kind": {"type": "string", "enum": ["x", "y"]},
                "fixed": {"const": 42},
                "when": {"type": "string", "format": "date"},
                "mail": {"type": "string", "format": "email"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
                "nested": {"type": "object", "properties": {"deep": {"type": "boolean"}}, "required": ["deep"]}
            },
            "required": ["a", "b", "name", "kind", "fixed", "when", "mail", "tags", "nested"]
        });
        for seed in 0..50 {
            let args = valid_arguments(&schema, &mut rng(seed));
            let a = args["a"].as_i64().expect("a is an integer");
            assert!((5..=9).contains(&a), "{a}");
            let b = args["b"].as_f64().expect("b is a number");
            assert!(b > 0.0 && b <= 3.0, "{b}");
            let name = args["name"].as_str().expect("name");
            assert!((12..=14).contains(&name.chars().count()), "{name}");
            assert!(["x", "y"].contains(&args["kind"].as_str().expect("kind")));
            assert_eq!(args["fixed"], json!(42));
            let when = args["when"].as_str().expect("date");
            assert_eq!(when.len(), 10);
            assert_eq!(&when[4..5], "-");
            assert!(args["mail"].as_str().expect("mail").contains('@'));
            assert_eq!(args["tags"].as_array().expect("tags").len(), 2);
            assert!(args["nested"]["deep"].is_boolean());
        }
    }

    #[test]
    fn any_of_takes_the_first_non_null_branch_and_seed_fixes_output() {
        let schema = json!({
            "type": "object",
            "properties": {"v": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 1000, "maximum": 1001}]}},
            "required": ["v"]
        });
        let args = valid_arguments(&schema, &mut rng(3));
        assert!(args["v"].as_i64().is_some_and(|v| v >= 1000));
        let one = valid_arguments(
            &json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}),
            &mut rng(9),
        );
        let two = valid_arguments(
            &json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}),
            &mut rng(9),
        );
        assert_eq!(one, two);
    }
}
