//! The few JavaScript semantics the `mcp-tape.stats/1` figures depend on.
//!
//! The reference implementation computes its stats in JavaScript, so ids are
//! keyed with `String(id)`, texts are trimmed with `String.prototype.trim`,
//! timestamps are read with `Date.parse` and lists are ordered with
//! `localeCompare`. Reproducing the anchor's blocks exactly means reproducing
//! those rules; each function here names the one it mirrors.

use std::cmp::Ordering;

use serde_json::Value;

use crate::time::days_from_civil;

/// `String(n)` for a finite number: integers print without a fraction,
/// exponents appear below 1e-6 and from 1e21 (ECMA-262 Number::toString).
pub fn number_to_string(n: f64) -> String {
    if n == 0.0 {
        return "0".to_owned();
    }
    if !n.is_finite() {
        return if n.is_nan() {
            "NaN".to_owned()
        } else if n > 0.0 {
            "Infinity".to_owned()
        } else {
            "-Infinity".to_owned()
        };
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // Rust's `{:e}` prints the shortest round-tripping digits, as JS does.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let k = digits.len() as i64;
    let n_exp = exp + 1; // position of the decimal point after the first digit
    let body = if k <= n_exp && n_exp <= 21 {
        format!("{digits}{}", "0".repeat((n_exp - k) as usize))
    } else if 0 < n_exp && n_exp <= 21 {
        let (int, frac) = digits.split_at(n_exp as usize);
        format!("{int}.{frac}")
    } else if -6 < n_exp && n_exp <= 0 {
        format!("0.{}{digits}", "0".repeat((-n_exp) as usize))
    } else {
        let e = n_exp - 1;
        let e_sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{e_sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{e_sign}{}", e.abs())
        }
    };
    format!("{sign}{body}")
}

fn json_number(n: &serde_json::Number) -> f64 {
    // JSON.parse reads every number as a double; so do we.
    n.as_f64().unwrap_or(0.0)
}

/// `String(value)` for a value read by `JSON.parse`.
pub fn to_js_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_to_string(json_number(n)),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => to_js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// `JSON.stringify(value)`: compact, keys in source order, JS number text.
pub fn json_stringify(value: &Value) -> String {
    let mut out = String::new();
    stringify_into(value, &mut out);
    out
}

fn stringify_into(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_to_string(json_number(n))),
        Value::String(s) => quote_into(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                stringify_into(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                quote_into(k, out);
                out.push(':');
                stringify_into(v, out);
            }
            out.push('}');
        }
    }
}

fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// JS truthiness of a JSON value (`if (x)`).
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => json_number(n) != 0.0,
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `String.prototype.trim`: ECMAScript white space and line terminators.
pub fn trim(s: &str) -> &str {
    fn is_js_space(c: char) -> bool {
        matches!(
            c,
            '\u{9}'
                | '\u{a}'
                | '\u{b}'
                | '\u{c}'
                | '\u{d}'
                | ' '
                | '\u{a0}'
                | '\u{1680}'
                | '\u{2000}'
                ..='\u{200a}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
        )
    }
    s.trim_matches(is_js_space)
}

/// `s.length`: UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `a < b` on JS strings: UTF-16 code unit order.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Primary collation weight of one character, `None` when it is ignorable.
///
/// Mirrors the CLDR root order that `localeCompare` uses for ASCII: white
/// space, then punctuation and symbols in a fixed order, digits, then letters
/// with case set aside. Other control characters are ignorable. Characters
/// beyond ASCII sort after all of these by code point: an approximation, since
/// the full Unicode collation table is not bundled.
fn primary(c: char) -> Option<u32> {
    const PUNCT: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    let code = c as u32;
    match c {
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' => Some(code),
        '0'..='9' => Some(100 + code - '0' as u32),
        'a'..='z' => Some(200 + code - 'a' as u32),
        'A'..='Z' => Some(200 + code - 'A' as u32),
        c if c.is_ascii_control() => None,
        c if c.is_ascii() => PUNCT.find(c).map(|i| 20 + i as u32),
        _ => Some(0x1000 + code),
    }
}

/// `a.localeCompare(b)` in the root locale, as far as [`primary`] goes:
/// compare primary weights first, then case (lower before upper), and report
/// equal when both agree, as ICU does.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let pa = a.chars().filter_map(primary);
    let pb = b.chars().filter_map(primary);
    match pa.cmp(pb) {
        Ordering::Equal => {}
        other => return other,
    }
    let tertiary = |c: char| primary(c).map(|_| c.is_ascii_uppercase());
    a.chars()
        .filter_map(tertiary)
        .cmp(b.chars().filter_map(tertiary))
}

/// `Date.parse` for the ECMAScript date time string format
/// (`YYYY[-MM[-DD]][THH:mm[:ss[.sss…]]][Z|±HH:mm]`), in milliseconds since
/// the epoch. `T` may be `t` or a space and `Z` may be `z`, as V8 accepts.
/// Days run to 31 in every month and roll over, as in V8. A date-time with no
/// offset is read as UTC here (JS would use the local zone). Other
/// free-form dates V8 guesses at give `None`.
pub fn parse_date_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let mut i = 0usize;
    let (year, month, day) = parse_date_part(b, &mut i)?;
    let (mut hour, mut minute, mut second, mut millis, mut offset_min) = (0, 0, 0, 0, 0);
    if i < b.len() {
        if !matches!(b[i], b'T' | b't' | b' ') {
            return None;
        }
        i += 1;
        (hour, minute, second, millis) = parse_time_part(b, &mut i)?;
        offset_min = parse_offset(b, &mut i)?;
        if i != b.len() {
            return None;
        }
        let midnight = hour == 24 && minute == 0 && second == 0 && millis == 0;
        if (hour > 23 && !midnight) || minute > 59 || second > 59 {
            return None;
        }
    }
    let days = days_from_civil(year, month, 1) + (day - 1);
    let ms = days * 86_400_000 + ((hour * 60 + minute - offset_min) * 60 + second) * 1000 + millis;
    // The ECMAScript time range is ±8.64e15 ms.
    (ms.abs() <= 8_640_000_000_000_000).then_some(ms)
}

/// `n` ASCII digits at `b[*i..]` as a number, `i` moved past them.
fn digits(b: &[u8], i: &mut usize, n: usize) -> Option<i64> {
    let part = b.get(*i..*i + n)?;
    if !part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *i += n;
    Some(
        part.iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')),
    )
}

/// `YYYY[-MM[-DD]]` or `±YYYYYY[-MM[-DD]]` (not `-000000`): year, month
/// (1 to 12) and day (1 to 31).
fn parse_date_part(b: &[u8], i: &mut usize) -> Option<(i64, i64, i64)> {
    let year = match b.first()? {
        b'+' | b'-' => {
            let neg = b[0] == b'-';
            *i = 1;
            let y = digits(b, i, 6)?;
            if neg && y == 0 {
                return None;
            }
            if neg { -y } else { y }
        }
        _ => digits(b, i, 4)?,
    };
    let (mut month, mut day) = (1, 1);
    if b.get(*i) == Some(&b'-') {
        *i += 1;
        month = digits(b, i, 2)?;
        if b.get(*i) == Some(&b'-') {
            *i += 1;
            day = digits(b, i, 2)?;
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some((year, month, day))
}

/// `HH:mm[:ss[.sss…]]`: hour, minute, second and milliseconds (the first
/// three fraction digits; the rest are read and dropped). Ranges are
/// checked by the caller.
fn parse_time_part(b: &[u8], i: &mut usize) -> Option<(i64, i64, i64, i64)> {
    let (mut second, mut millis) = (0, 0);
    let hour = digits(b, i, 2)?;
    if b.get(*i) != Some(&b':') {
        return None;
    }
    *i += 1;
    let minute = digits(b, i, 2)?;
    if b.get(*i) == Some(&b':') {
        *i += 1;
        second = digits(b, i, 2)?;
        if b.get(*i) == Some(&b'.') {
            *i += 1;
            let start = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            if *i == start {
                return None;
            }
            let frac = &b[start..(*i).min(start + 3)];
            let mut ms = 0i64;
            for k in 0..3 {
                ms = ms * 10 + frac.get(k).map_or(0, |d| i64::from(d - b'0'));
            }
            millis = ms;
        }
    }
    Some((hour, minute, second, millis))
}

/// An optional `Z`, `z` or `±HH:mm` offset, in minutes east of UTC; `None`
/// when something else follows the time.
fn parse_offset(b: &[u8], i: &mut usize) -> Option<i64> {
    match b.get(*i) {
        None => Some(0),
        Some(b'Z' | b'z') => {
            *i += 1;
            Some(0)
        }
        Some(&sign @ (b'+' | b'-')) => {
            *i += 1;
            let oh = digits(b, i, 2)?;
            if b.get(*i) != Some(&b':') {
                return None;
            }
            *i += 1;
            let om = digits(b, i, 2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            Some((oh * 60 + om) * if sign == b'+' { 1 } else { -1 })
        }
        Some(_) => None,
    }
}

/// `Math.max(0, Date.parse(b) - Date.parse(a))`, `None` when either is not a
/// non-empty string that parses.
pub fn ms_between(a: Option<&str>, b: Option<&str>) -> Option<f64> {
    let a = parse_date_ms(a.filter(|s| !s.is_empty())?)?;
    let b = parse_date_ms(b.filter(|s| !s.is_empty())?)?;
    Some((b - a).max(0) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_javascript_does() {
        for (n, s) in [
            (1.0, "1"),
            (-0.0, "0"),
            (0.106106, "0.106106"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1.5e-10, "1.5e-10"),
            (-42.5, "-42.5"),
        ] {
            assert_eq!(number_to_string(n), s, "{n}");
        }
    }

    #[test]
    fn dates_parse_as_v8_does() {
        // Figures printed by node 20 for the same strings.
        for (s, ms) in [
            ("2026-02-30T00:00:00Z", Some(1772409600000)),
            ("2026-08-19T20:56:17.2589Z", Some(1787172977258)),
            ("2026-08-19T20:56Z", Some(1787172960000)),
            ("2026-08-19T24:00:00Z", Some(1787184000000)),
            ("2026-08-19T24:00:01Z", None),
            ("2026-08", Some(1785542400000)),
            ("+002026-08-19T00:00:00Z", Some(1787097600000)),
            ("2026-08-19T20:56:17.258+02:00", Some(1787165777258)),
            ("2026-08-19 20:56:17Z", Some(1787172977000)),
            ("2026-13-01", None),
            ("2026-08-19T20:56:17.Z", None),
            ("-000000-01-01T00:00:00Z", None),
        ] {
            assert_eq!(parse_date_ms(s), ms, "{s}");
        }
        assert_eq!(
            crate::time::format_iso_ms(1787172977258),
            "2026-08-19T20:56:17.258Z"
        );
    }

    #[test]
    fn collation_follows_the_root_locale_for_ascii() {
        let mut v = vec!["b", "B", "a_b", "ab", "a-b", "a b", "A_b", "a", "A"];
        v.sort_by(|a, b| locale_compare(a, b));
        // node 20: [...].sort((a, b) => a.localeCompare(b))
        assert_eq!(v, ["a", "A", "a b", "a_b", "A_b", "a-b", "ab", "b", "B"]);
        assert_eq!(locale_compare("x\u{1}y", "xy"), Ordering::Equal);
        assert_eq!(locale_compare("a1", "a01"), Ordering::Greater);
    }
}
