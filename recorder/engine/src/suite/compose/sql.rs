//! SQL as the composer writes it for a reference query: identifiers bare
//! (one that would need quoting, or is a reserved word, is not written:
//! quoting differs between dialects), text as a quoted literal, numbers
//! plain. Only what every dialect the catalogue reads shares: `COUNT`,
//! `SUM`, `AVG`, `MIN`, `MAX`, a subquery, an inner join.

use super::fields::Scalar;

/// Words no identifier may be written as unquoted in some dialect.
const RESERVED: &[&str] = &[
    "all",
    "and",
    "as",
    "asc",
    "between",
    "by",
    "case",
    "check",
    "column",
    "create",
    "default",
    "delete",
    "desc",
    "distinct",
    "drop",
    "else",
    "end",
    "exists",
    "from",
    "group",
    "having",
    "in",
    "index",
    "insert",
    "into",
    "is",
    "join",
    "key",
    "like",
    "limit",
    "not",
    "null",
    "offset",
    "on",
    "or",
    "order",
    "primary",
    "references",
    "select",
    "set",
    "table",
    "then",
    "to",
    "union",
    "unique",
    "update",
    "user",
    "using",
    "values",
    "when",
    "where",
    "with",
];

/// `name` as a bare identifier, or `None` where it would need quoting.
pub fn ident(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first = chars.next()?;
    let plain = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 63;
    (plain && !RESERVED.contains(&name.to_ascii_lowercase().as_str())).then(|| name.to_owned())
}

/// A value as a quoted literal, its quotes doubled. A number is quoted
/// too: every dialect read here compares a number column with a quoted
/// number, and a text column of digits (which the values may not tell
/// from a number) refuses a bare one.
pub fn literal(v: &Scalar) -> String {
    match v {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Num { .. } => format!("'{}'", v.text()),
        Scalar::Date(t) | Scalar::Text(t) => format!("'{}'", t.replace('\'', "''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_bare_or_not_written_and_text_is_quoted() {
        assert_eq!(ident("page_count").as_deref(), Some("page_count"));
        assert_eq!(ident("order"), None);
        assert_eq!(ident("first name"), None);
        assert_eq!(ident("2nd"), None);
        assert_eq!(literal(&Scalar::Text("O'Brien".into())), "'O''Brien'");
        assert_eq!(
            literal(&Scalar::Num {
                value: 12.5,
                decimals: 2
            }),
            "'12.5'"
        );
    }
}
