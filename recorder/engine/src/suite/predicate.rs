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
            Predicate::Number { value, given, .. } => {
                if !value.is_finite() || given.iter().any(|g| !g.is_finite()) {
                    return Err(format!("number: value {value} is not finite"));
                }
                Ok(())
            }
            Predicate::Date { value } => super::written::ymd(value)
                .map(|_| ())
                .ok_or_else(|| format!("date: {value:?} is not YYYY-MM-DD")),
            Predicate::Set { members, others } => {
                if members.is_empty() || members.iter().any(|m| m.trim().is_empty()) {
                    return Err("set: a member is empty, or there are none".into());
                }
                if let Some(o) = others
                    .iter()
                    .find(|o| members.iter().any(|m| contains_token(m, o)))
                {
                    return Err(format!("set: {o:?} is both a member and not one"));
                }
                Ok(())
            }
            Predicate::Text { value, others, .. } => {
                if value.trim().is_empty() {
                    return Err("text: the value is empty".into());
                }
                if others.iter().any(|o| contains_token(value, o)) {
                    return Err(format!("text: {value:?} names one of the others"));
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
            Predicate::Number {
                value,
                decimals,
                given,
            } => number_answers(answer, *value, *decimals, given),
            Predicate::Date { value } => super::written::writes_date(answer, value),
            Predicate::Set { members, others } => {
                !members.is_empty()
                    && members.iter().all(|m| contains_token(answer, m))
                    && !others.iter().any(|o| contains_token(answer, o))
            }
            Predicate::Text {
                value,
                others,
                max_others,
            } => {
                !value.trim().is_empty()
                    && contains_token(answer, value)
                    && others.iter().filter(|o| contains_token(answer, o)).count() <= *max_others
            }
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
            Predicate::Number { .. } | Predicate::Date { .. } => false,
            Predicate::Set { members, .. } => members.iter().all(|m| m.trim().chars().count() <= 1),
            Predicate::Text { value, .. } => value.trim().chars().count() <= 1,
        };
        structural || GENERIC_ANSWERS.iter().any(|g| self.check(g))
    }
}

/// Other numbers a reply may write beside the answer: a sentence or two of
/// context (a year, a count), never a record dumped whole.
const MAX_OTHER_NUMBERS: usize = 4;

/// Does `answer` give the number `value` (known to `decimals` decimals) as
/// its answer: written as a person writes it, and not one number among a
/// dump of many? Numbers the question states (`given`) count for neither.
fn number_answers(answer: &str, value: f64, decimals: u32, given: &[f64]) -> bool {
    if !value.is_finite() {
        return false;
    }
    let written = super::written::numbers(answer);
    let is_given = |w: &super::written::Written| given.iter().any(|g| (g - w.value).abs() < 1e-9);
    if !written
        .iter()
        .any(|w| super::written::writes(*w, value, decimals))
    {
        return false;
    }
    let mut others: Vec<f64> = written
        .iter()
        .filter(|w| !super::written::writes(**w, value, decimals) && !is_given(w))
        .map(|w| w.value)
        .collect();
    others.sort_by(f64::total_cmp);
    others.dedup();
    others.len() <= MAX_OTHER_NUMBERS
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

    #[test]
    fn a_number_is_right_however_a_person_writes_it_and_never_in_a_dump() {
        let p = Predicate::Number {
            value: 1234.0,
            decimals: 0,
            given: vec![12.0],
        };
        assert!(p.check("There are 1,234 of them."));
        assert!(p.check("1234.0"));
        assert!(p.check("In shelf 12 there are 1234 items."));
        assert!(!p.check("1233"));
        assert!(!p.check("item_1234"));
        // A record dumped where one value was asked.
        assert!(!p.check("id 7, pages 1234, year 1979, price 12.5, stock 40, rating 4.1"));
        let avg = Predicate::Number {
            value: 3.4567,
            decimals: 4,
            given: vec![],
        };
        assert!(avg.check("about 3.46"));
        assert!(!avg.check("about 3"));
    }

    #[test]
    fn a_set_is_right_in_any_order_on_word_boundaries_and_with_nothing_else() {
        let p = Predicate::Set {
            members: vec!["open".into(), "Kindred".into()],
            others: vec!["Beloved".into()],
        };
        assert!(p.validate().is_ok());
        assert!(p.check("Kindred and open"));
        assert!(p.check("- open\n- kindred"));
        assert!(
            !p.check("reopened, Kindred"),
            "a member only inside a longer word"
        );
        assert!(
            !p.check("open, Kindred, Beloved"),
            "a member that is not one"
        );
    }

    #[test]
    fn a_text_is_right_on_word_boundaries_and_not_among_every_candidate() {
        let p = Predicate::Text {
            value: "open".into(),
            others: vec!["closed".into(), "blocked".into()],
            max_others: 1,
        };
        assert!(p.check("It is open."));
        assert!(p.check("open, not closed"));
        assert!(!p.check("it was reopened"));
        assert!(!p.check("open, closed or blocked"));
        let d = Predicate::Date {
            value: "2024-03-05".into(),
        };
        assert!(d.check("March 5, 2024"));
        assert!(!d.check("2024-03-15"));
    }
}
