//! Harvesting: strings from earlier responses, put into the free string
//! arguments of later rounds.

use rand::RngExt;
use rand::rngs::ChaCha8Rng;
use serde_json::{Map, Value, json};

use crate::suite::predicate::first_json_value;
use crate::suite::schema_args::{Limits, Unsatisfiable, valid_arguments_within};

/// Arguments for `schema` with harvested strings in its free string slots.
pub fn harvest_args(
    schema: &Value,
    rng: &mut ChaCha8Rng,
    harvested: &[String],
    limits: &Limits,
) -> Result<Map<String, Value>, Unsatisfiable> {
    let mut args = valid_arguments_within(schema, rng, limits)?;
    let props = schema.get("properties").and_then(Value::as_object);
    for (k, v) in args.iter_mut() {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            continue;
        };
        let free = |p: &Value| {
            p.get("type").and_then(Value::as_str) == Some("string")
                && p.get("enum").is_none()
                && p.get("const").is_none()
                && p.get("format").is_none()
                && p.get("pattern").is_none()
        };
        let pick = |rng: &mut ChaCha8Rng| harvested[rng.random_range(0..harvested.len())].clone();
        if free(p) {
            *v = Value::String(pick(rng));
        } else if p.get("type").and_then(Value::as_str) == Some("array")
            && p.get("items").is_some_and(free)
        {
            *v = json!([pick(rng)]);
        }
    }
    Ok(args)
}

/// Strings worth trying as arguments: JSON string leaves of a response.
pub fn harvest(text: &str, into: &mut Vec<String>) {
    fn walk(v: &Value, into: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                let n = s.chars().count();
                if (3..=60).contains(&n) && !into.contains(s) {
                    into.push(s.clone());
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, into)),
            Value::Object(o) => o.values().for_each(|x| walk(x, into)),
            _ => {}
        }
    }
    if let Some(v) = first_json_value(text) {
        walk(&v, into);
    }
}
