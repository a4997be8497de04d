//! Checking a final answer against a task's predicate, and the admission-time
//! checks on the predicate itself (valid, not too permissive).

use serde_json::Value;

use super::task::Predicate;

/// Answers any plausible checker should refuse: a predicate accepting one of
/// these accepts a guess (`check-too-permissive`).
const GENERIC_ANSWERS: &[&str] = &[
    "",
    "I don't know.",
    "yes",
    "no",
    "true",
    "false",
    "null",
    "none",
    "N/A",
    "0",
    "1",
];

impl Predicate {
    /// A check for the number `value`: exact for an integer, within a
    /// millionth of it otherwise.
    pub fn number_near(value: f64) -> Predicate {
        let tolerance = if value.fract() == 0.0 {
            0.0
        } else {
            (value.abs() * 1e-6).max(1e-9)
        };
        Predicate::NumberWithin { value, tolerance }
    }

    /// Can this predicate be evaluated at all? (`check-invalid` when not.)
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Predicate::Substring { value, .. } => {
                if value.is_empty() {
                    return Err("substring: the value is empty".into());
                }
                Ok(())
            }
            Predicate::Regex { pattern } => regex::Regex::new(pattern)
                .map(|_| ())
                .map_err(|e| format!("regex {pattern:?} does not compile: {e}")),
            Predicate::JsonPath { path, .. } => parse_path(path).map(|_| ()),
            Predicate::NumberWithin { value, tolerance } => {
                if !value.is_finite() {
                    return Err(format!("number_within: value {value} is not finite"));
                }
                if !tolerance.is_finite() || *tolerance < 0.0 {
                    return Err(format!(
                        "number_within: tolerance {tolerance} must be finite and >= 0"
                    ));
                }
                Ok(())
            }
            Predicate::AllOf { of } => {
                for (i, p) in of.iter().enumerate() {
                    p.validate().map_err(|e| format!("all_of[{i}]: {e}"))?;
                }
                Ok(())
            }
        }
    }

    /// Does `answer` satisfy the predicate? An invalid predicate accepts
    /// nothing.
    pub fn check(&self, answer: &str) -> bool {
        match self {
            Predicate::Substring {
                value,
                case_insensitive,
            } => {
                if value.is_empty() {
                    return false;
                }
                if *case_insensitive {
                    answer.to_lowercase().contains(&value.to_lowercase())
                } else {
                    answer.contains(value.as_str())
                }
            }
            Predicate::Regex { pattern } => {
                regex::Regex::new(pattern).is_ok_and(|re| re.is_match(answer))
            }
            Predicate::JsonPath { path, equals } => {
                let Ok(steps) = parse_path(path) else {
                    return false;
                };
                let Some(doc) = first_json_value(answer) else {
                    return false;
                };
                select(&doc, &steps).is_some_and(|v| json_equal(v, equals))
            }
            Predicate::NumberWithin { value, tolerance } => {
                if !value.is_finite() || !tolerance.is_finite() {
                    return false;
                }
                numbers_in(answer)
                    .into_iter()
                    .any(|n| (n - value).abs() <= *tolerance)
            }
            Predicate::AllOf { of } => !of.is_empty() && of.iter().all(|p| p.check(answer)),
        }
    }

    /// Would this predicate accept answers that carry no knowledge? An empty
    /// or one-character substring, a regex matching the empty string or
    /// everything, a tolerance accepting both 0 and 1,000,000, an `all_of`
    /// of nothing (or of only permissive parts), or acceptance of a generic
    /// non-answer such as "I don't know." or "0".
    pub fn is_too_permissive(&self) -> bool {
        let structural = match self {
            Predicate::Substring { value, .. } => value.trim().chars().count() <= 1,
            Predicate::Regex { pattern } => match regex::Regex::new(pattern) {
                Ok(re) => {
                    re.is_match("")
                        || ["x", "The answer is 42.", "zzzz qqqq", "\n"]
                            .iter()
                            .all(|s| re.is_match(s))
                }
                Err(_) => false,
            },
            Predicate::JsonPath { .. } => false,
            Predicate::NumberWithin { value, tolerance } => {
                (0.0 - value).abs() <= *tolerance && (1_000_000.0 - value).abs() <= *tolerance
            }
            Predicate::AllOf { of } => of.is_empty() || of.iter().all(Predicate::is_too_permissive),
        };
        structural || GENERIC_ANSWERS.iter().any(|g| self.check(g))
    }
}

/// One step of a `$.a.b[0]` path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let rest = path
        .trim()
        .strip_prefix('$')
        .ok_or_else(|| format!("json_path {path:?} must start with `$`"))?;
    let chars: Vec<char> = rest.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j] != '.' && chars[j] != '[' {
                    j += 1;
                }
                if j == start {
                    return Err(format!("json_path {path:?}: empty key after `.`"));
                }
                steps.push(Step::Key(chars[start..j].iter().collect()));
                i = j;
            }
            '[' => {
                let close = chars[i..]
                    .iter()
                    .position(|c| *c == ']')
                    .map(|p| p + i)
                    .ok_or_else(|| format!("json_path {path:?}: `[` without `]`"))?;
                let inner: String = chars[i + 1..close].iter().collect();
                let inner = inner.trim();
                if let Some(quoted) = inner
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                {
                    steps.push(Step::Key(quoted.to_owned()));
                } else {
                    let n = inner.parse::<usize>().map_err(|_| {
                        format!("json_path {path:?}: `[{inner}]` is not an index or a quoted key")
                    })?;
                    steps.push(Step::Index(n));
                }
                i = close + 1;
            }
            c => return Err(format!("json_path {path:?}: unexpected {c:?}")),
        }
    }
    Ok(steps)
}

fn select<'a>(doc: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    let mut cur = doc;
    for step in steps {
        cur = match step {
            Step::Key(k) => cur.as_object()?.get(k)?,
            Step::Index(n) => cur.as_array()?.get(*n)?,
        };
    }
    Some(cur)
}

fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The answer parsed as JSON, or else the first JSON object or array inside it.
pub fn first_json_value(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        return Some(v);
    }
    for (i, c) in text.char_indices() {
        if c == '{' || c == '[' {
            let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = stream.next() {
                return Some(v);
            }
        }
    }
    None
}

/// Every number written in `text` (`1,234.5`, `-3`, `2e3`).
pub fn numbers_in(text: &str) -> Vec<f64> {
    static NUMBER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
            .expect("the number pattern compiles")
    });
    NUMBER
        .find_iter(text)
        .filter_map(|m| m.as_str().replace(',', "").parse::<f64>().ok())
        .filter(|f| f.is_finite())
        .collect()
}

/// Case-insensitive: does `needle` occur in `hay` not flanked by a letter or
/// digit on either side?
pub fn contains_token(hay: &str, needle: &str) -> bool {
    let hay = hay.to_lowercase();
    let needle = needle.to_lowercase();
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(pos) = hay[from..].find(&needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        let after = hay[end..].chars().next();
        let edge_ok = |c: Option<char>, inner: Option<char>| match (c, inner) {
            (Some(c), Some(i)) => !(c.is_alphanumeric() && i.is_alphanumeric()),
            _ => true,
        };
        if edge_ok(before, needle.chars().next()) && edge_ok(after, needle.chars().next_back()) {
            return true;
        }
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sub(v: &str, ci: bool) -> Predicate {
        Predicate::Substring {
            value: v.into(),
            case_insensitive: ci,
        }
    }

    #[test]
    fn substring_respects_case_flag() {
        assert!(sub("Paris", true).check("it is paris"));
        assert!(!sub("Paris", false).check("it is paris"));
        assert!(sub("Paris", false).check("it is Paris"));
    }

    #[test]
    fn regex_is_compiled_and_checked() {
        let p = Predicate::Regex {
            pattern: r"\bv\d+\.\d+\b".into(),
        };
        assert!(p.validate().is_ok());
        assert!(p.check("version v2.13 shipped"));
        assert!(!p.check("version 2"));
        let bad = Predicate::Regex {
            pattern: "(unclosed".into(),
        };
        assert!(bad.validate().is_err());
        assert!(!bad.check("(unclosed"));
    }

    #[test]
    fn json_path_reads_the_first_json_value() {
        let p = Predicate::JsonPath {
            path: "$.a.b[1]".into(),
            equals: json!(7),
        };
        assert!(p.check(r#"Here you go: {"a": {"b": [1, 7.0]}} done"#));
        assert!(!p.check(r#"{"a": {"b": [7]}}"#));
        assert!(!p.check("no json"));
        let q = Predicate::JsonPath {
            path: "$['weird key'][0]".into(),
            equals: json!("x"),
        };
        assert!(q.check(r#"{"weird key": ["x"]}"#));
        // Only the first JSON value counts.
        assert!(!q.check(r#"[1] {"weird key": ["x"]}"#));
        assert!(
            Predicate::JsonPath {
                path: "a.b".into(),
                equals: json!(1)
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn number_within_accepts_any_number_in_tolerance() {
        let p = Predicate::NumberWithin {
            value: 1234.5,
            tolerance: 0.5,
        };
        assert!(p.check("The total is 1,234.9 units (3 items)."));
        assert!(!p.check("The total is 1236 units."));
        assert!(!p.check("none"));
    }

    #[test]
    fn all_of_needs_every_part_and_at_least_one() {
        let p = Predicate::AllOf {
            of: vec![sub("alpha", true), sub("beta", true)],
        };
        assert!(p.check("Alpha and BETA"));
        assert!(!p.check("alpha only"));
        assert!(!Predicate::AllOf { of: vec![] }.check("anything"));
    }

    #[test]
    fn permissive_predicates_are_flagged() {
        assert!(sub("a", true).is_too_permissive());
        assert!(sub(" ", true).is_too_permissive());
        assert!(sub("yes", true).is_too_permissive());
        assert!(!sub("tavimor", true).is_too_permissive());
        assert!(
            Predicate::Regex {
                pattern: ".*".into()
            }
            .is_too_permissive()
        );
        assert!(
            Predicate::Regex {
                pattern: "x?".into()
            }
            .is_too_permissive()
        );
        assert!(
            !Predicate::Regex {
                pattern: "^tavi".into()
            }
            .is_too_permissive()
        );
        assert!(
            Predicate::NumberWithin {
                value: 500.0,
                tolerance: 1e7
            }
            .is_too_permissive()
        );
        assert!(
            !Predicate::NumberWithin {
                value: 49.0,
                tolerance: 0.0
            }
            .is_too_permissive()
        );
        assert!(Predicate::AllOf { of: vec![] }.is_too_permissive());
    }
}
