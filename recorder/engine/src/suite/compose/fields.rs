//! What each field of a kind is, read from its values over every record:
//! a number (and the decimals the data writes it to), a date, a short text
//! that repeats (a category to filter on), a text unique to each record (a
//! label to name it by), a key. Read from the values and the field's
//! words, never from a server's name.

use serde_json::{Map, Value};

use crate::suite::holdings::RecordKind;
use crate::suite::written;

/// One value as the composer reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Num { value: f64, decimals: u32 },
    Date(String),
    Text(String),
    Bool(bool),
}

impl Scalar {
    /// A record's value as a scalar: numbers written as text are numbers
    /// (`"12.50"`), ISO dates are dates; nulls, empty strings, objects and
    /// lists are none.
    pub fn of(v: &Value) -> Option<Scalar> {
        match v {
            Value::Number(n) => {
                let value = n.as_f64()?;
                Some(Scalar::Num {
                    value,
                    decimals: written::decimals_of(&n.to_string()),
                })
            }
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::String(s) => {
                let t = s.trim();
                if t.is_empty() {
                    return None;
                }
                if let Some((y, m, d)) = written::ymd(t) {
                    return Some(Scalar::Date(format!("{y:04}-{m:02}-{d:02}")));
                }
                if number_text(t) {
                    return Some(Scalar::Num {
                        value: t.parse().ok()?,
                        decimals: written::decimals_of(t),
                    });
                }
                // An amount with its currency or unit (`3400.00 EUR`,
                // `$1,234.50`, `12 kg`, `45%`) is its number.
                if let Some(n) = amount(t) {
                    return Some(n);
                }
                Some(Scalar::Text(t.to_owned()))
            }
            _ => None,
        }
    }

    /// As a question states it, and as a reply writes it.
    pub fn text(&self) -> String {
        match self {
            Scalar::Num { value, decimals } => number_text_of(*value, *decimals),
            Scalar::Date(d) | Scalar::Text(d) => d.clone(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// A number as text: no exponent, no leading zeros, a sign at most, and no
/// identifier that happens to be digits (`007`, a zip code).
fn number_text(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty()
        && digits.len() <= 15
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1
        && !digits.starts_with('.')
        && !digits.ends_with('.')
        && !(digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0."))
}

/// An amount written with its currency or unit: the number.
fn amount(t: &str) -> Option<Scalar> {
    static AMOUNT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(?:[$€£¥]\s?)?(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(?:\s?(?:[A-Za-z]{1,4}|%))?$")
            .expect("the amount pattern compiles")
    });
    // An amount in brackets (a ledger's position, `(640.50 EUR)`).
    let t = t
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(t)
        .trim();
    let c = AMOUNT.captures(t)?;
    // A bare number is [`number_text`]'s; here only one that carries more.
    if c[1].len() == t.len() {
        return None;
    }
    let digits = c[1].replace(',', "");
    Some(Scalar::Num {
        value: digits.parse().ok()?,
        decimals: written::decimals_of(&digits),
    })
}

/// `value` written to `decimals` decimals, trailing zeros of a whole
/// number dropped (`12`, `12.5`, `3.4567`).
pub fn number_text_of(value: f64, decimals: u32) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{}", value as i64);
    }
    let s = format!("{value:.*}", decimals.clamp(1, 6) as usize);
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// What a field is, over every record of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Text unique to each record: what a question names a record by.
    Label,
    /// A unique identifier (`id`, `book_id`, a code).
    Key,
    /// A number worth totalling, averaging and ranking.
    Measure,
    /// A calendar date.
    Date,
    /// A short value that repeats: a category to filter on.
    Category,
    /// Anything else (long text, mixed values, blobs).
    Other,
}

/// A field with its role and the facts the composer needs.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub role: Role,
    /// Distinct values, in the order first read.
    pub distinct: Vec<Scalar>,
    /// The largest decimals the data writes its numbers to.
    pub decimals: u32,
}

/// Words of a field name that say it identifies (never a measure).
const KEY_WORDS: &[&str] = &[
    "id", "uuid", "guid", "key", "code", "sku", "isbn", "zip", "postcode", "phone", "ref", "hash",
    "sha", "no", "num", "number", "pk", "fk", "version", "rev", "port",
];
/// Last words of a field name that say a number is a place in a text
/// (`line`, `end_line`, `offset`): no measure to total or average (a
/// ledger's `position` is an amount, and stays one).
const POSITION_WORDS: &[&str] = &[
    "line", "lineno", "column", "col", "offset", "index", "idx", "start", "end",
];
/// Words of a field name that say a whole number is a year.
const YEAR_WORDS: &[&str] = &[
    "year",
    "born",
    "founded",
    "established",
    "built",
    "since",
    "died",
];
/// Words of a field name that say it names its record.
const NAME_WORDS: &[&str] = &[
    "name", "title", "label", "subject", "heading", "summary", "display", "handle", "username",
    "login", "slug",
];

/// The fields of `kind`, each with its role.
pub fn profile(kind: &RecordKind) -> Vec<Field> {
    let n = kind.records.len();
    kind.fields
        .iter()
        .map(|name| {
            let values: Vec<Option<Scalar>> = kind
                .records
                .iter()
                .map(|r| r.get(name).and_then(Scalar::of))
                .collect();
            let mut distinct: Vec<Scalar> = Vec::new();
            let mut decimals = 0;
            for v in values.iter().flatten() {
                if let Scalar::Num { decimals: d, .. } = v {
                    decimals = decimals.max(*d);
                }
                if !distinct.contains(v) {
                    distinct.push(v.clone());
                }
            }
            let role = role_of(name, &values, &distinct, n);
            Field {
                name: name.clone(),
                role,
                distinct,
                decimals,
            }
        })
        .collect()
}

fn role_of(name: &str, values: &[Option<Scalar>], distinct: &[Scalar], n: usize) -> Role {
    let present: Vec<&Scalar> = values.iter().flatten().collect();
    if present.is_empty() {
        return Role::Other;
    }
    let words = crate::access::words(name);
    let keyish = words
        .last()
        .is_some_and(|w| KEY_WORDS.contains(&w.as_str()))
        || words.iter().any(|w| w == "id" || w == "uuid");
    let unique = present.len() == n && distinct.len() == n;
    let all = |f: fn(&Scalar) -> bool| present.iter().all(|s| f(s));
    if all(|s| matches!(s, Scalar::Num { .. })) {
        if words
            .last()
            .is_some_and(|w| POSITION_WORDS.contains(&w.as_str()))
        {
            return Role::Other;
        }
        // A year (`born`, `founded`, `year`): ranked as a date, never
        // totalled.
        let years = present.iter().all(|s| {
            matches!(s, Scalar::Num { value, decimals: 0 } if (1000.0..=2200.0).contains(value))
        });
        if years && words.iter().any(|w| YEAR_WORDS.contains(&w.as_str())) {
            return if distinct.len() >= 2 {
                Role::Date
            } else {
                Role::Other
            };
        }
        if keyish {
            return if unique { Role::Key } else { Role::Other };
        }
        // A few small whole numbers that repeat (a rating, a floor) are a
        // category as much as a measure; three or more values make a rank.
        return if distinct.len() >= 3 {
            Role::Measure
        } else if distinct.len() >= 2 {
            Role::Category
        } else {
            Role::Other
        };
    }
    if all(|s| matches!(s, Scalar::Date(_))) {
        return if distinct.len() >= 2 {
            Role::Date
        } else {
            Role::Other
        };
    }
    if all(|s| matches!(s, Scalar::Text(_))) {
        let short = present
            .iter()
            .all(|s| (2..=100).contains(&s.text().chars().count()) && !s.text().contains('\n'));
        // A hash or an id in hex (`a83ff01f…`, a UUID) identifies; a
        // person names the record otherwise.
        let hex = present.iter().all(|s| {
            let t = s.text();
            t.len() >= 7
                && t.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
                && t.chars().any(|c| c.is_ascii_digit())
        });
        if (keyish || hex) && unique {
            return Role::Key;
        }
        if unique && short {
            return Role::Label;
        }
        let repeats = distinct.len() < present.len();
        let few = distinct.len() >= 2 && distinct.len() <= 12.max(n / 4);
        let brief = present.iter().all(|s| s.text().chars().count() <= 40);
        if repeats && few && brief && !keyish {
            return Role::Category;
        }
    }
    Role::Other
}

/// The field a question names a record by: a label whose words say it
/// names (`name`, `title`), else the first label, else a key.
pub fn label_field(fields: &[Field]) -> Option<&Field> {
    let named = |f: &&Field| {
        crate::access::words(&f.name)
            .iter()
            .any(|w| NAME_WORDS.contains(&w.as_str()))
    };
    fields
        .iter()
        .filter(|f| f.role == Role::Label)
        .find(named)
        .or_else(|| fields.iter().find(|f| f.role == Role::Label))
        .or_else(|| fields.iter().find(|f| f.role == Role::Key))
}

/// A record's value of `field` as a scalar.
pub fn value(record: &Map<String, Value>, field: &str) -> Option<Scalar> {
    record.get(field).and_then(Scalar::of)
}

/// The number a record holds in `field`.
pub fn number(record: &Map<String, Value>, field: &str) -> Option<f64> {
    match value(record, field)? {
        Scalar::Num { value, .. } => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(rows: Value) -> RecordKind {
        RecordKind::of_rows("books", rows)
    }

    #[test]
    fn a_year_is_ranked_as_a_date_and_a_place_in_a_text_is_no_measure() {
        let k = kind(json!([
            {"name": "Chinua Achebe", "born": 1930, "line": 12, "pages": 209},
            {"name": "Ursula K. Le Guin", "born": 1929, "line": 40, "pages": 304},
            {"name": "Olga Tokarczuk", "born": 1962, "line": 77, "pages": 403},
        ]));
        let role = |name: &str| {
            profile(&k)
                .into_iter()
                .find(|f| f.name == name)
                .unwrap()
                .role
        };
        assert_eq!(role("born"), Role::Date);
        assert_eq!(role("line"), Role::Other);
        assert_eq!(role("pages"), Role::Measure);
    }

    #[test]
    fn each_field_is_read_for_what_its_values_are() {
        let k = kind(json!([
            {"id": 1, "title": "Kindred", "shelf": "B-12", "pages": 264, "price": "9.50", "out": "2024-03-05"},
            {"id": 2, "title": "Beloved", "shelf": "M-03", "pages": 324, "price": "12.00", "out": "2024-01-10"},
            {"id": 3, "title": "Dawn", "shelf": "B-12", "pages": 248, "price": "8.25", "out": "2023-11-30"},
        ]));
        let f = profile(&k);
        let role = |n: &str| f.iter().find(|x| x.name == n).unwrap().role;
        assert_eq!(role("id"), Role::Key);
        assert_eq!(role("title"), Role::Label);
        assert_eq!(role("shelf"), Role::Category);
        assert_eq!(role("pages"), Role::Measure);
        assert_eq!(role("price"), Role::Measure);
        assert_eq!(role("out"), Role::Date);
        assert_eq!(f.iter().find(|x| x.name == "price").unwrap().decimals, 2);
        assert_eq!(label_field(&f).unwrap().name, "title");
        assert_eq!(number_text_of(12.0, 2), "12");
        assert_eq!(
            Scalar::of(&json!("3,400.00 EUR")),
            Some(Scalar::Num {
                value: 3400.0,
                decimals: 2
            })
        );
        assert_eq!(
            Scalar::of(&json!("B-12")),
            Some(Scalar::Text("B-12".into()))
        );
        assert_eq!(number_text_of(3.45678, 4), "3.4568");
    }
}
