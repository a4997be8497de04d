//! Schema-valid arguments from a tool's JSON Schema, drawn from a seeded RNG.
//!
//! Used by `schema-walk/1` to call tools and by the run's random-valid-args
//! null arm. Supported: `type` (one or a list; `null` is taken last), `enum`,
//! `const`, `default` (taken half the time), numeric `minimum`/`maximum`
//! (and the exclusive forms), `multipleOf` for integers, `minLength`/
//! `maxLength`, `minItems`/`maxItems`, `uniqueItems`, `required` (always
//! present; optional properties appear half the time), nested objects and
//! arrays, `anyOf`/`oneOf` (the first branch), `allOf` (merged properties),
//! and the formats `date`, `date-time`, `time`, `uri`/`url`, `email`,
//! `uuid`. `pattern` is not solved: such strings are plain words.
//!
//! A tool's schema comes from the server, so generation is bounded: the
//! [`Limits`] cap string length, array length, nesting, the serialised size
//! of the argument set, the work spent on the schema and the wall time. A
//! schema that cannot be satisfied within them, or not at all, is an
//! [`Unsatisfiable`] naming why; all arithmetic on schema numbers is checked.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rand::{Rng, RngExt};
use serde_json::{Map, Number, Value, json};

/// The names an object schema's `required` lists (pass it
/// `schema.get("required")`): its strings, anything else passed over.
pub fn required_names(required: Option<&Value>) -> Vec<&str> {
    required
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Syllables for pronounceable, unlikely-to-be-guessed words (no digits, so
/// a number in a response never collides with a word argument).
const SYLLABLES: &[&str] = &[
    "ta", "vi", "mor", "ken", "lu", "sa", "ro", "bel", "din", "ka", "zo", "fi", "nel", "pra",
    "tor", "mi", "gal", "ve", "dru", "so", "lan", "qui", "ber", "nox",
];

/// Below this data depth optional properties may appear and arrays may
/// grow past their minimum; deeper, only what is required is generated.
const OPTIONAL_DEPTH: usize = 6;

/// Caps on one generated argument set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest string (in characters) a `minLength` may ask for.
    pub max_string_chars: usize,
    /// The most items a `minItems` may ask for.
    pub max_items: usize,
    /// How deeply schemas may nest where a value is required (data levels
    /// and `anyOf`/`oneOf`/`allOf` levels both count).
    pub max_depth: usize,
    /// The serialised JSON size of the whole argument set.
    pub max_bytes: usize,
    /// Schema nodes visited plus schema entries merged or compared.
    pub max_steps: usize,
    /// Wall time for one argument set.
    pub max_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_string_chars: 10_000,
            max_items: 100,
            max_depth: 64,
            max_bytes: 256 * 1024,
            max_steps: 200_000,
            max_time: Duration::from_secs(2),
        }
    }
}

impl Limits {
    /// The same caps with the wall time cut to `time` when that is shorter
    /// (a run's `--timeout`).
    pub fn within(self, time: Duration) -> Limits {
        Limits {
            max_time: self.max_time.min(time),
            ..self
        }
    }

    /// The caps as registered in a generator's config.
    pub fn to_json(&self) -> Value {
        json!({
            "max_string_chars": self.max_string_chars,
            "max_items": self.max_items,
            "max_depth": self.max_depth,
            "max_bytes": self.max_bytes,
            "max_steps": self.max_steps,
            "max_time_ms": u64::try_from(self.max_time.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// Why no valid argument set was generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsatisfiable {
    #[error("`{keyword}` asks for {asked}, over the cap of {cap}")]
    OverCap {
        keyword: &'static str,
        asked: String,
        cap: usize,
    },
    #[error("values are required more than {0} schema levels deep")]
    TooDeep(usize),
    #[error("the arguments would take more than {0} bytes")]
    TooLarge(usize),
    #[error("the schema takes more than {0} steps to satisfy")]
    TooComplex(usize),
    #[error("no argument set within {0:?}")]
    OutOfTime(Duration),
    #[error("{0}")]
    Impossible(String),
}

/// Arguments valid under `schema` (an object schema; anything else yields
/// `{}`), within the default [`Limits`].
pub fn valid_arguments(
    schema: &Value,
    rng: &mut impl Rng,
) -> Result<Map<String, Value>, Unsatisfiable> {
    valid_arguments_within(schema, rng, &Limits::default())
}

/// [`valid_arguments`] within `limits`. The serialised result is never
/// larger than `limits.max_bytes`.
pub fn valid_arguments_within(
    schema: &Value,
    rng: &mut impl Rng,
    limits: &Limits,
) -> Result<Map<String, Value>, Unsatisfiable> {
    let mut g = Gen {
        rng,
        limits,
        bytes: 0,
        steps: 0,
        deadline: Instant::now().checked_add(limits.max_time),
    };
    let map = match g.value_for(schema, 0, 0)? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    // The running count is an estimate; this is the promise.
    if json_size(&map, limits.max_bytes).is_none() {
        return Err(Unsatisfiable::TooLarge(limits.max_bytes));
    }
    Ok(map)
}

/// A pronounceable random word of 2–3 syllables.
pub fn word(rng: &mut impl Rng) -> String {
    let n = rng.random_range(2..=3);
    (0..n)
        .map(|_| SYLLABLES[rng.random_range(0..SYLLABLES.len())])
        .collect()
}

/// The serialised size of `v`, or `None` once it passes `limit` (the count
/// stops there, so a huge value costs no more than `limit` bytes of work).
fn json_size(v: &impl serde::Serialize, limit: usize) -> Option<usize> {
    struct Count {
        n: usize,
        limit: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n = self.n.saturating_add(buf.len());
            if self.n > self.limit {
                Err(std::io::Error::other("over the limit"))
            } else {
                Ok(buf.len())
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { n: 0, limit };
    serde_json::to_writer(&mut count, v).ok()?;
    Some(count.n)
}

/// One generation: the RNG, the caps and what has been spent of them.
struct Gen<'a, R> {
    rng: &'a mut R,
    limits: &'a Limits,
    /// Estimated serialised bytes generated so far.
    bytes: usize,
    steps: usize,
    /// `None` when `max_time` is too long to represent: no deadline.
    deadline: Option<Instant>,
}

impl<R: Rng> Gen<'_, R> {
    /// Spend `cost` steps of work; fails once the steps or the time run out.
    fn tick(&mut self, cost: usize) -> Result<(), Unsatisfiable> {
        self.steps = self.steps.saturating_add(cost.max(1));
        if self.steps > self.limits.max_steps {
            return Err(Unsatisfiable::TooComplex(self.limits.max_steps));
        }
        if self.deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Unsatisfiable::OutOfTime(self.limits.max_time));
        }
        Ok(())
    }

    /// Count `bytes` more of output against the size cap.
    fn charge(&mut self, bytes: usize) -> Result<(), Unsatisfiable> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.limits.max_bytes {
            Err(Unsatisfiable::TooLarge(self.limits.max_bytes))
        } else {
            Ok(())
        }
    }

    /// A value taken from the schema itself (`const`, `enum`, `default`),
    /// charged at its serialised size.
    fn copied(&mut self, v: &Value) -> Result<Value, Unsatisfiable> {
        let left = self.limits.max_bytes.saturating_sub(self.bytes);
        let size = json_size(v, left).ok_or(Unsatisfiable::TooLarge(self.limits.max_bytes))?;
        self.tick(size / 64)?;
        self.charge(size)?;
        Ok(v.clone())
    }

    /// `depth` counts data levels (objects and arrays), `level` every
    /// schema level a value is required through.
    fn value_for(
        &mut self,
        schema: &Value,
        depth: usize,
        level: usize,
    ) -> Result<Value, Unsatisfiable> {
        if level > self.limits.max_depth {
            return Err(Unsatisfiable::TooDeep(self.limits.max_depth));
        }
        self.tick(1)?;
        let Some(obj) = schema.as_object() else {
            // `true` or a missing schema: anything goes; a word is valid.
            return self.word_value();
        };
        if let Some(c) = obj.get("const") {
            return self.copied(c);
        }
        if let Some(Value::Array(options)) = obj.get("enum")
            && !options.is_empty()
        {
            let pick = &options[self.rng.random_range(0..options.len())];
            return self.copied(pick);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                self.tick(branches.len())?;
                if let Some(first) = branches
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                    .or(branches.first())
                {
                    self.nodes(schema)?;
                    let mut merged = obj.clone();
                    merged.remove(key);
                    self.merge_into(&mut merged, first)?;
                    return self.value_for(&Value::Object(merged), depth, level + 1);
                }
            }
        }
        if let Some(Value::Array(parts)) = obj.get("allOf") {
            self.nodes(schema)?;
            let mut merged = obj.clone();
            merged.remove("allOf");
            for p in parts {
                self.merge_into(&mut merged, p)?;
            }
            return self.value_for(&Value::Object(merged), depth, level + 1);
        }
        if let Some(d) = obj.get("default")
            && self.rng.random_bool(0.5)
        {
            return self.copied(d);
        }
        match type_of(obj).as_deref() {
            Some("object") => self.object_for(obj, depth, level),
            Some("array") => self.array_for(obj, depth, level),
            Some("integer") => self.integer_for(obj),
            Some("number") => self.number_for(obj),
            Some("boolean") => {
                self.charge(5)?;
                Ok(Value::Bool(self.rng.random_bool(0.5)))
            }
            Some("null") => {
                self.charge(4)?;
                Ok(Value::Null)
            }
            _ => self.string_for(obj),
        }
    }

    fn word_value(&mut self) -> Result<Value, Unsatisfiable> {
        let w = word(self.rng);
        self.charge(w.len() + 2)?;
        Ok(Value::String(w))
    }

    /// Spend a step per node of `v`: what copying it costs.
    fn nodes(&mut self, v: &Value) -> Result<(), Unsatisfiable> {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            self.tick(1)?;
            match v {
                Value::Array(a) => stack.extend(a),
                Value::Object(o) => stack.extend(o.values()),
                _ => {}
            }
        }
        Ok(())
    }

    /// Lay `branch`'s keys over `out`: `properties` and `required` are
    /// united, any other key replaced.
    fn merge_into(
        &mut self,
        out: &mut Map<String, Value>,
        branch: &Value,
    ) -> Result<(), Unsatisfiable> {
        let Some(b) = branch.as_object() else {
            return Ok(());
        };
        self.nodes(branch)?;
        for (k, v) in b {
            match (k.as_str(), out.get_mut(k), v) {
                ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                    for (pk, pv) in theirs {
                        mine.insert(pk.clone(), pv.clone());
                    }
                }
                ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                    self.tick(mine.len().saturating_mul(theirs.len()))?;
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
        Ok(())
    }

    fn object_for(
        &mut self,
        obj: &Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Result<Value, Unsatisfiable> {
        let required = required_names(obj.get("required"));
        self.tick(required.len())?;
        let needed: HashSet<&str> = required.iter().copied().collect();
        self.charge(2)?;
        let mut out = Map::new();
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, sub) in props {
                self.tick(1)?;
                // Optional properties half the time, and only near the top.
                if needed.contains(name.as_str())
                    || (depth < OPTIONAL_DEPTH && self.rng.random_bool(0.5))
                {
                    self.charge(name.len() + 4)?;
                    let v = self.value_for(sub, depth + 1, level + 1)?;
                    out.insert(name.clone(), v);
                }
            }
        }
        // A required name with no property schema still has to be present.
        for name in required {
            if !out.contains_key(name) {
                self.tick(1)?;
                self.charge(name.len() + 4)?;
                let v = self.word_value()?;
                out.insert(name.to_owned(), v);
            }
        }
        Ok(Value::Object(out))
    }

    fn array_for(
        &mut self,
        obj: &Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Result<Value, Unsatisfiable> {
        let cap = self.limits.max_items;
        let max_items = obj.get("maxItems").and_then(Value::as_u64);
        let min = match obj.get("minItems").and_then(Value::as_u64) {
            Some(m) if m > cap as u64 => {
                return Err(Unsatisfiable::OverCap {
                    keyword: "minItems",
                    asked: m.to_string(),
                    cap,
                });
            }
            Some(m) => m as usize,
            // One item by default, unless `maxItems` allows none.
            None => max_items.map_or(1, |m| m.min(1) as usize),
        };
        let max = match max_items {
            Some(m) if m < min as u64 => {
                return Err(Unsatisfiable::Impossible(format!(
                    "`maxItems` {m} is below `minItems` {min}"
                )));
            }
            Some(m) => usize::try_from(m).unwrap_or(usize::MAX),
            None => min.max(1) + 2,
        };
        let n = if depth >= OPTIONAL_DEPTH {
            min
        } else {
            let hi = max.min(min + 3).min(cap.max(min));
            self.rng.random_range(min..=hi)
        };
        let items = obj.get("items").cloned().unwrap_or(Value::Bool(true));
        let unique = obj.get("uniqueItems").and_then(Value::as_bool) == Some(true);
        self.charge(2)?;
        let mut out: Vec<Value> = Vec::with_capacity(n);
        let mut attempts = 0;
        while out.len() < n && attempts < n * 10 + 10 {
            attempts += 1;
            let v = self.value_for(&items, depth + 1, level + 1)?;
            if unique {
                self.tick(out.len())?;
                if out.contains(&v) {
                    continue;
                }
            }
            self.charge(1)?;
            out.push(v);
        }
        if out.len() < min {
            return Err(Unsatisfiable::Impossible(format!(
                "`uniqueItems` with `minItems` {min}: only {} distinct items were found",
                out.len()
            )));
        }
        Ok(Value::Array(out))
    }

    fn integer_for(&mut self, obj: &Map<String, Value>) -> Result<Value, Unsatisfiable> {
        let (lo, hi) = bounds(obj);
        // An integer range past what i64 holds cannot be met by the values
        // we write; a rounded-off bound would be silently wrong.
        let range = i64::MIN as f64..=i64::MAX as f64;
        if !range.contains(&lo.ceil()) || !range.contains(&hi.floor()) {
            return Err(Unsatisfiable::Impossible(format!(
                "the integer range {lo} to {hi} is beyond 64-bit integers"
            )));
        }
        let (raw_lo, raw_hi) = (lo, hi);
        let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
        if hi < lo {
            return Err(Unsatisfiable::Impossible(format!(
                "no integer lies from {raw_lo} to {raw_hi}"
            )));
        }
        let mut v = if hi == lo {
            lo
        } else {
            self.rng.random_range(lo..=hi)
        };
        if let Some(m) = obj.get("multipleOf").and_then(Value::as_i64)
            && m > 0
        {
            // The multiple at or below v, else the one above it.
            let r = v.rem_euclid(m);
            let down = v.checked_sub(r).filter(|d| *d >= lo);
            let up = if r == 0 {
                Some(v)
            } else {
                v.checked_add(m - r)
            };
            v = match down.or(up) {
                Some(x) if x >= lo && x <= hi => x,
                _ => {
                    return Err(Unsatisfiable::Impossible(format!(
                        "no multiple of {m} lies from {lo} to {hi}"
                    )));
                }
            };
        }
        self.charge(20)?;
        Ok(json!(v))
    }

    fn number_for(&mut self, obj: &Map<String, Value>) -> Result<Value, Unsatisfiable> {
        let (lo, hi) = bounds(obj);
        self.charge(24)?;
        // Whole numbers when the range allows: their sums and products print
        // exactly, so an answer key taken from a response is unambiguous.
        let (l, h) = (lo.ceil(), hi.floor());
        let whole = i64::MIN as f64..=i64::MAX as f64;
        if h >= l && whole.contains(&l) && whole.contains(&h) {
            let v = if h > l {
                self.rng.random_range(l as i64..=h as i64)
            } else {
                l as i64
            };
            return Ok(json!(v));
        }
        let f = if hi > lo {
            if (hi - lo).is_finite() {
                self.rng.random_range(lo..=hi)
            } else {
                // The span overflows a double: the midpoint is in range.
                lo / 2.0 + hi / 2.0
            }
        } else {
            lo
        };
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn string_for(&mut self, obj: &Map<String, Value>) -> Result<Value, Unsatisfiable> {
        let cap = self.limits.max_string_chars;
        let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0);
        if min > cap as u64 {
            return Err(Unsatisfiable::OverCap {
                keyword: "minLength",
                asked: min.to_string(),
                cap,
            });
        }
        let min = min as usize;
        let max = obj.get("maxLength").and_then(Value::as_u64);
        if let Some(max) = max
            && max < min as u64
        {
            return Err(Unsatisfiable::Impossible(format!(
                "`maxLength` {max} is below `minLength` {min}"
            )));
        }
        let rng = &mut *self.rng;
        let format = obj.get("format").and_then(Value::as_str).unwrap_or("");
        let mut s = match format {
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
        // Every piece is ASCII, so bytes are characters.
        while s.len() < min {
            self.tick(1)?;
            s.push_str(&word(self.rng));
        }
        if let Some(max) = max
            && s.len() as u64 > max
        {
            s.truncate(max as usize);
        }
        self.charge(s.len() + 2)?;
        Ok(Value::String(s))
    }
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
            let args = valid_arguments(&schema, &mut rng(seed)).expect("satisfiable");
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
        let args = valid_arguments(&schema, &mut rng(3)).expect("satisfiable");
        assert!(args["v"].as_i64().is_some_and(|v| v >= 1000));
        let one = valid_arguments(
            &json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}),
            &mut rng(9),
        )
        .expect("satisfiable");
        let two = valid_arguments(
            &json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}),
            &mut rng(9),
        )
        .expect("satisfiable");
        assert_eq!(one, two);
    }

    fn args(schema: Value) -> Result<Map<String, Value>, Unsatisfiable> {
        valid_arguments(&schema, &mut rng(1))
    }

    fn one(property: Value) -> Value {
        json!({"type": "object", "properties": {"p": property}, "required": ["p"]})
    }

    #[test]
    fn a_min_items_past_any_cap_is_refused_not_a_panic() {
        let err =
            args(one(json!({"type": "array", "minItems": u64::MAX}))).expect_err("unsatisfiable");
        assert_eq!(
            err.to_string(),
            "`minItems` asks for 18446744073709551615, over the cap of 100"
        );
        // maxItems near u64::MAX is only an upper bound: it is fine.
        let ok = args(one(
            json!({"type": "array", "items": {"type": "integer"}, "maxItems": u64::MAX}),
        ))
        .expect("satisfiable");
        assert!(
            ok["p"]
                .as_array()
                .is_some_and(|a| !a.is_empty() && a.len() <= 4)
        );
    }

    #[test]
    fn a_twenty_million_character_min_length_is_refused_at_once() {
        let started = Instant::now();
        let err = args(one(json!({"type": "string", "minLength": 20_000_000})))
            .expect_err("unsatisfiable");
        assert!(
            matches!(
                err,
                Unsatisfiable::OverCap {
                    keyword: "minLength",
                    ..
                }
            ),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        // Within the cap it is met exactly, in linear time.
        let long = args(one(
            json!({"type": "string", "minLength": 10_000, "maxLength": 10_000}),
        ))
        .expect("satisfiable");
        assert_eq!(long["p"].as_str().map(str::len), Some(10_000));
    }

    #[test]
    fn nesting_growth_and_merges_stop_at_their_caps() {
        // Required values 100 levels deep.
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = one(deep);
        }
        assert_eq!(args(deep), Err(Unsatisfiable::TooDeep(64)));
        // 100^4 leaves: the size cap stops it long before.
        let mut wide = json!({"type": "string", "minLength": 50});
        for _ in 0..4 {
            wide = json!({"type": "array", "items": wide, "minItems": 100});
        }
        assert_eq!(args(one(wide)), Err(Unsatisfiable::TooLarge(256 * 1024)));
        // allOf of 50,000 parts, each merged into a growing schema.
        let parts: Vec<Value> = (0..50_000)
            .map(|i| json!({"properties": {format!("k{i}"): {"type": "integer"}}}))
            .collect();
        let started = Instant::now();
        let err = args(one(json!({"allOf": parts}))).expect_err("too much work");
        assert_eq!(err, Unsatisfiable::TooComplex(200_000));
        assert!(started.elapsed() < Duration::from_secs(5));
        // A huge const is refused by size, not copied.
        let big = "x".repeat(300_000);
        assert_eq!(
            args(one(json!({"const": big}))),
            Err(Unsatisfiable::TooLarge(256 * 1024))
        );
    }

    #[test]
    fn the_time_budget_ends_generation() {
        let limits = Limits {
            max_steps: usize::MAX,
            max_bytes: usize::MAX,
            ..Limits::default()
        }
        .within(Duration::ZERO);
        let mut wide = json!({"type": "integer"});
        for _ in 0..3 {
            wide = json!({"type": "array", "items": wide, "minItems": 50});
        }
        let err = valid_arguments_within(&one(wide), &mut rng(1), &limits).expect_err("no time");
        assert_eq!(err, Unsatisfiable::OutOfTime(Duration::ZERO));
    }

    #[test]
    fn extreme_numbers_stay_in_range_without_overflow() {
        let schema = json!({"type": "object", "required": ["f", "g", "i", "m", "n"], "properties": {
            "f": {"type": "number", "minimum": -1.7e308, "maximum": 1.7e308},
            "g": {"type": "number", "minimum": 1e300, "maximum": 2e300},
            "i": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
            "m": {"type": "integer", "minimum": i64::MIN, "maximum": -9_000_000_000_000_000_000_i64, "multipleOf": 7},
            "n": {"type": "integer", "minimum": -12, "maximum": -6, "multipleOf": 5}
        }});
        for seed in 0..20 {
            let a = valid_arguments(&schema, &mut rng(seed)).expect("satisfiable");
            let f = a["f"].as_f64().expect("f");
            assert!((-1.7e308..=1.7e308).contains(&f));
            let g = a["g"].as_f64().expect("g");
            assert!((1e300..=2e300).contains(&g), "{g}");
            assert!(a["i"].is_i64());
            let m = a["m"].as_i64().expect("m");
            assert_eq!(m % 7, 0);
            assert!(m <= -9_000_000_000_000_000_000);
            assert_eq!(a["n"], json!(-10));
        }
        for (bad, why) in [
            (
                json!({"type": "integer", "minimum": 1e300}),
                "beyond 64-bit",
            ),
            (
                json!({"type": "integer", "minimum": 1, "maximum": 4, "multipleOf": 5}),
                "no multiple of 5",
            ),
            (
                json!({"type": "integer", "minimum": 1.2, "maximum": 1.8}),
                "no integer",
            ),
            (
                json!({"type": "string", "minLength": 5, "maxLength": 2}),
                "below `minLength`",
            ),
            (
                json!({"type": "array", "minItems": 3, "maxItems": 2}),
                "below `minItems`",
            ),
            (
                json!({"type": "array", "minItems": 3, "uniqueItems": true, "items": {"enum": [1, 2]}}),
                "distinct",
            ),
        ] {
            let err = args(one(bad.clone())).expect_err("unsatisfiable");
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn output_never_exceeds_the_size_cap() {
        let limits = Limits {
            max_bytes: 4096,
            ..Limits::default()
        };
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "array", "minItems": 30, "items": {"type": "string", "minLength": 100}},
            "b": {"type": "string", "minLength": 2000}
        }, "required": ["a", "b"]});
        for seed in 0..10 {
            match valid_arguments_within(&schema, &mut rng(seed), &limits) {
                Ok(a) => assert!(Value::Object(a).to_string().len() <= 4096),
                Err(e) => assert_eq!(e, Unsatisfiable::TooLarge(4096)),
            }
        }
    }
}
