//! How a person names what a server holds: a kind's noun (`books`, one
//! `book`), a field in words (`page_count` is "page count", `author_id`
//! the "author"), a record by its label (`the book "Kindred"`), a value
//! in a sentence. No raw key, no "exactly as the server gives it".

use super::fields::Scalar;

/// A kind's noun, one and many: `books` / `book`, `order_items` / `order
/// item`, `inventory` / `inventory record`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Noun {
    pub one: String,
    pub many: String,
}

impl Noun {
    pub fn of(kind: &str) -> Noun {
        // A kind held in a place (`functions in stats.rs`): the noun before
        // it, the place as it is written.
        if let Some((noun, place)) = kind.split_once(" in ")
            && !noun.is_empty()
            && !place.is_empty()
        {
            let n = Noun::of(noun);
            return Noun {
                one: format!("{} in {place}", n.one),
                many: format!("{} in {place}", n.many),
            };
        }
        let words = crate::access::words(kind);
        let phrase = if words.is_empty() {
            kind.to_owned()
        } else {
            words.join(" ")
        };
        let (head, last) = match phrase.rsplit_once(' ') {
            Some((h, l)) => (format!("{h} "), l.to_owned()),
            None => (String::new(), phrase.clone()),
        };
        let one = singular(&last);
        if one == last && !last.ends_with('s') {
            // A mass noun or a name (`inventory`, `staff`): its records.
            return Noun {
                one: format!("{phrase} record"),
                many: format!("{phrase} records"),
            };
        }
        Noun {
            one: format!("{head}{one}"),
            many: phrase,
        }
    }
}

/// A plural's singular, by the common English endings.
fn singular(w: &str) -> String {
    if w.len() > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..w.len() - 3]);
    }
    for end in ["sses", "shes", "ches", "xes", "zes"] {
        if w.len() > end.len() + 1 && w.ends_with(end) {
            return w[..w.len() - 2].to_owned();
        }
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        return w[..w.len() - 1].to_owned();
    }
    w.to_owned()
}

/// Units a field name may end in (`weight_kg` is "weight in kg").
const UNITS: &[&str] = &[
    "kg", "g", "mg", "lb", "lbs", "oz", "km", "m", "cm", "mm", "mi", "ft", "usd", "eur", "gbp",
    "ms", "sec", "secs", "min", "mins", "hrs", "pct", "percent", "kb", "mb", "gb", "tb", "kwh",
    "l", "ml",
];

/// A field's name in words: `page_count` is "page count", `createdAt`
/// "created at", `weight_kg` "weight in kg".
pub fn field(name: &str) -> String {
    // A column a query computed (`sum(position)`, `count(*)`): what it
    // computed, in words.
    if let Some((f, inner)) = name
        .trim()
        .strip_suffix(')')
        .and_then(|n| n.split_once('('))
    {
        let of = field(inner);
        let of = if of.is_empty() || inner.trim() == "*" {
            String::new()
        } else {
            format!(" {of}")
        };
        let said = match f.trim().to_lowercase().as_str() {
            "sum" | "total" => Some("total"),
            "avg" | "average" | "mean" => Some("average"),
            "max" => Some("largest"),
            "min" => Some("smallest"),
            "count" => Some("number of"),
            _ => None,
        };
        if let Some(said) = said {
            return if of.is_empty() {
                "count".to_owned()
            } else {
                format!("{said}{of}")
            };
        }
    }
    let mut words = crate::access::words(name);
    if words.is_empty() {
        return name.to_owned();
    }
    if words.len() > 1 && words.last().is_some_and(|w| UNITS.contains(&w.as_str())) {
        let unit = words.pop().unwrap_or_default();
        return format!("{} in {unit}", words.join(" "));
    }
    words.join(" ")
}

/// A date field in words, read as a date: `published` is "published
/// date", `created_at` "created date", `birth_date` "birth date".
pub fn date(name: &str) -> String {
    let mut words = crate::access::words(name);
    if words.len() > 1 && words.last().is_some_and(|w| w == "at" || w == "on") {
        words.pop();
    }
    if !words.last().is_some_and(|w| {
        ["date", "time", "day", "timestamp", "year", "datetime"].contains(&w.as_str())
    }) {
        words.push("date".to_owned());
    }
    words.join(" ")
}

/// A field that points at another record, in words: `author_id` is "author".
pub fn link(name: &str) -> String {
    let mut words = crate::access::words(name);
    while words
        .last()
        .is_some_and(|w| ["id", "key", "uuid", "ref", "fk", "no"].contains(&w.as_str()))
        && words.len() > 1
    {
        words.pop();
    }
    words.join(" ")
}

/// Is a field's name, in words, too bare to stand in a sentence as a
/// noun (`to`, `from`, `by`, `x`)?
pub fn bare(words: &str) -> bool {
    const PREPOSITIONS: &[&str] = &[
        "to", "from", "by", "in", "of", "at", "on", "for", "with", "into", "via", "src", "dst",
    ];
    words.chars().count() <= 2 || PREPOSITIONS.contains(&words)
}

/// A value in a sentence: quoted where it is text, plain where it is a
/// number or a date.
pub fn value(v: &Scalar) -> String {
    match v {
        Scalar::Text(t) => format!("\"{t}\""),
        other => other.text(),
    }
}

/// A record named by its label: `the book "Kindred"`, `the book with id 3`.
pub fn record(noun: &Noun, label_field: &str, label_is_key: bool, label: &Scalar) -> String {
    if label_is_key {
        format!(
            "the {} with {} {}",
            noun.one,
            field(label_field),
            label.text()
        )
    } else {
        format!("the {} {}", noun.one, value(label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_computed_column_is_named_by_what_it_computed() {
        assert_eq!(field("sum(position)"), "total position");
        assert_eq!(field("AVG(unit_price)"), "average unit price");
        assert_eq!(field("count(*)"), "count");
        assert_eq!(field("max(fee)"), "largest fee");
        // A name with brackets that computes nothing keeps its words.
        assert_eq!(field("size(kb)"), "size in kb");
    }

    #[test]
    fn kinds_and_fields_read_as_words() {
        assert_eq!(
            Noun::of("books"),
            Noun {
                one: "book".into(),
                many: "books".into()
            }
        );
        assert_eq!(Noun::of("order_items").one, "order item");
        assert_eq!(Noun::of("categories").one, "category");
        assert_eq!(Noun::of("boxes").one, "box");
        assert_eq!(Noun::of("inventory").many, "inventory records");
        assert_eq!(
            Noun::of("functions in binomial.rs").one,
            "function in binomial.rs"
        );
        assert_eq!(Noun::of("entries in meetings").many, "entries in meetings");
        assert_eq!(field("page_count"), "page count");
        assert_eq!(field("createdAt"), "created at");
        assert_eq!(field("weight_kg"), "weight in kg");
        assert_eq!(link("author_id"), "author");
        assert_eq!(link("id"), "id");
        assert_eq!(date("published"), "published date");
        assert_eq!(date("created_at"), "created date");
        assert_eq!(date("birth_date"), "birth date");
    }
}
