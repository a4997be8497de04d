//! Reading tool arguments and writing input schemas. An argument that does not
//! fit its schema is answered with a tool error that says what was expected.

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// An integer argument within `lo..=hi`.
pub fn int(args: &JsonObject, key: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let value = args
        .get(key)
        .ok_or_else(|| format!("missing argument `{key}` (an integer from {lo} to {hi})"))?;
    let n = value
        .as_i64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0)
                .map(|f| f as i64)
        })
        .ok_or_else(|| format!("`{key}` must be an integer from {lo} to {hi}; you sent {value}"))?;
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "`{key}` must be between {lo} and {hi}; you sent {n}"
        ))
    }
}

/// An integer argument with only a lower bound.
pub fn int_at_least(args: &JsonObject, key: &str, lo: i64) -> Result<i64, String> {
    int(args, key, lo, i64::MAX)
}

/// One of `options`.
pub fn choice<'a>(args: &JsonObject, key: &str, options: &[&'a str]) -> Result<&'a str, String> {
    let value = args
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string argument `{key}`"))?;
    options
        .iter()
        .find(|o| **o == value)
        .copied()
        .ok_or_else(|| {
            format!(
                "`{key}` must be one of {}; you sent {value:?}",
                options.join(", ")
            )
        })
}

/// A string argument.
pub fn string<'a>(args: &'a JsonObject, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string argument `{key}`"))
}

/// A boolean argument.
pub fn boolean(args: &JsonObject, key: &str) -> Result<bool, String> {
    args.get(key)
        .and_then(Value::as_bool)
        .ok_or_else(|| format!("missing boolean argument `{key}`"))
}

/// `{"type": "integer", "minimum": lo, "maximum": hi}` with a description.
pub fn int_schema(lo: i64, hi: i64, description: &str) -> Value {
    json!({"type": "integer", "minimum": lo, "maximum": hi, "description": description})
}

/// `{"type": "string", "enum": [...]}` with a description.
pub fn enum_schema(options: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": options, "description": description})
}

/// An object schema whose properties are all required.
pub fn object(properties: &[(&str, Value)]) -> Value {
    let required: Vec<&str> = properties.iter().map(|(k, _)| *k).collect();
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// A number with at most six significant digits, trailing zeros trimmed.
pub fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (5 - magnitude).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn integers_are_range_checked_with_an_actionable_message() {
        let args = obj(json!({"n": 7, "big": 99, "f": 3.0, "s": "x"}));
        assert_eq!(int(&args, "n", 1, 10), Ok(7));
        assert_eq!(int(&args, "f", 1, 10), Ok(3));
        assert_eq!(
            int(&args, "big", 1, 50),
            Err("`big` must be between 1 and 50; you sent 99".to_owned())
        );
        assert!(int(&args, "s", 1, 10).unwrap_err().contains("integer"));
        assert!(int(&args, "absent", 1, 10).unwrap_err().contains("missing"));
    }

    #[test]
    fn choices_name_the_options() {
        let args = obj(json!({"u": "ft", "v": "parsec"}));
        assert_eq!(choice(&args, "u", &["m", "ft"]), Ok("ft"));
        assert!(
            choice(&args, "v", &["m", "ft"])
                .unwrap_err()
                .contains("m, ft")
        );
    }

    #[test]
    fn six_significant_digits() {
        assert_eq!(significant(376.123_2), "376.123");
        assert_eq!(significant(1000.0), "1000");
        assert_eq!(significant(0.000_207_123_99), "0.000207124");
        assert_eq!(significant(24_140_160_000.0), "24140160000");
    }
}
