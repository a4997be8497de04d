//! How people write numbers and dates in a reply: `1,234`, `1234.0`,
//! `12 kg`; `2024-03-05`, `March 5, 2024`, `5 Mar 2024`, `3/5/2024`. The
//! typed checks ([`super::task::Predicate::Number`],
//! [`super::task::Predicate::Date`]) read replies with these.

use std::sync::LazyLock;

use regex::Regex;

/// A number written in a reply, with the decimals it was written to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Written {
    pub value: f64,
    pub decimals: u32,
}

/// Every number a reply writes as a number of its own: never a digit run
/// inside a word or an identifier (`B-12`, `v2`, `x86`), a part of a date
/// or a version (`2024-03-05`, `1.2.3`). Thousands may be grouped with
/// commas or thin spaces.
pub fn numbers(text: &str) -> Vec<Written> {
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"-?(?:\d{1,3}(?:[,\u{202f}\u{a0}]\d{3})+|\d+)(?:\.\d+)?")
            .expect("the number pattern compiles")
    });
    let mut out = Vec::new();
    for m in NUMBER.find_iter(text) {
        let mut start = m.start();
        let mut s = m.as_str();
        let before = text[..start].chars().next_back();
        // A minus joined to a word is a hyphen (`B-12`): the digits after
        // it are part of that word too.
        if s.starts_with('-') && before.is_some_and(|c| c.is_alphanumeric()) {
            continue;
        }
        if s.starts_with('-') && before.is_some_and(|c| c == '-') {
            start += 1;
            s = &s[1..];
        }
        let before = text[..start].chars().next_back();
        let after = text[m.end()..].chars().next();
        let after2 = text[m.end()..].chars().nth(1);
        let joined = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        // Inside an identifier, a path, a date or a version.
        if joined(before)
            || before.is_some_and(|c| matches!(c, '.' | '/' | '-' | ':' | '#'))
            || after.is_some_and(|c| c == '_')
            || (matches!(after, Some('.' | '-' | '/' | ':'))
                && after2.is_some_and(|c| c.is_ascii_digit()))
        {
            continue;
        }
        let plain: String = s
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
            .collect();
        let Ok(value) = plain.parse::<f64>() else {
            continue;
        };
        if !value.is_finite() {
            continue;
        }
        let decimals = plain.split_once('.').map_or(0, |(_, d)| d.len() as u32);
        out.push(Written { value, decimals });
    }
    out
}

/// Does `w` write `value`, known to `decimals` decimals? Rounded to the
/// reply's own precision, and no coarser than the data's unless within
/// half a percent (`3.46` and `3.457` for 3.4567, not `3`; `1235` for
/// 1234.5).
pub fn writes(w: Written, value: f64, decimals: u32) -> bool {
    let diff = (w.value - value).abs();
    let rounding = 0.5 * 10f64.powi(-(w.decimals.min(12) as i32));
    let exact = 1e-9 * value.abs().max(1.0);
    if diff <= exact {
        return true;
    }
    diff <= rounding + exact && (diff <= 0.005 * value.abs() || w.decimals >= decimals.min(2))
}

/// The decimals a value is written to in the data (`12.50` is 2).
pub fn decimals_of(text: &str) -> u32 {
    text.trim().split_once('.').map_or(0, |(_, d)| {
        d.chars().take_while(char::is_ascii_digit).count() as u32
    })
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A date's year, month and day, from `YYYY-MM-DD` (a time after it is
/// left aside).
pub fn ymd(value: &str) -> Option<(u32, u32, u32)> {
    static ISO: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])").expect("the date pattern compiles")
    });
    let c = ISO.captures(value.trim())?;
    let (y, m, d) = (c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

/// Does `text` write the date `value` (`YYYY-MM-DD`) in a common form?
/// ISO with dashes or slashes, the month named before or after the day
/// (`March 5, 2024`, `5 Mar 2024`, `Mar. 5th 2024`), `M/D/YYYY` and
/// `D.M.YYYY`. Any case.
pub fn writes_date(text: &str, value: &str) -> bool {
    let Some((y, m, d)) = ymd(value) else {
        return false;
    };
    let month = MONTHS[(m - 1) as usize];
    let short = &month[..3];
    let day = format!(r"0?{d}(?:st|nd|rd|th)?");
    let name = format!(r"(?:{month}|{short}\.?)");
    let forms = [
        format!(r"{y}[-/]0?{m}[-/]0?{d}"),
        format!(r"{name}\s+{day},?\s+{y}"),
        format!(r"{day}\s+(?:of\s+)?{name},?\s+{y}"),
        format!(r"0?{m}/0?{d}/{y}"),
        format!(r"0?{d}\.0?{m}\.{y}"),
    ];
    let lower = text.to_lowercase();
    forms.iter().any(|f| {
        Regex::new(&format!(r"(?:^|[^\w]){f}(?:$|[^\w])")).is_ok_and(|re| re.is_match(&lower))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<f64> {
        numbers(text).into_iter().map(|w| w.value).collect()
    }

    #[test]
    fn numbers_are_read_as_written_and_never_from_inside_a_word() {
        assert_eq!(values("There are 1,234 rows."), vec![1234.0]);
        assert_eq!(values("1234.0 in all"), vec![1234.0]);
        assert_eq!(values("shelf B-12 holds 3 books"), vec![3.0]);
        assert_eq!(values("v2 on x86_64, item_7"), Vec::<f64>::new());
        assert_eq!(values("on 2024-03-05 at 10:30"), Vec::<f64>::new());
        assert_eq!(values("version 1.2.3"), Vec::<f64>::new());
        assert_eq!(values("it fell by -4.5 (to 12kg)"), vec![-4.5, 12.0]);
        assert_eq!(numbers("3.460")[0].decimals, 3);
    }

    #[test]
    fn a_rounded_number_is_right_at_the_precision_shown_and_no_coarser() {
        let w = |v: f64, d: u32| Written {
            value: v,
            decimals: d,
        };
        assert!(writes(w(3.46, 2), 3.4567, 4));
        assert!(writes(w(3.457, 3), 3.4567, 4));
        assert!(!writes(w(3.0, 0), 3.4567, 4));
        assert!(!writes(w(3.5, 1), 3.4567, 4));
        assert!(writes(w(1234.0, 1), 1234.0, 0));
        assert!(writes(w(1235.0, 0), 1234.5, 1));
        assert!(!writes(w(1236.0, 0), 1234.5, 1));
        assert!(!writes(w(1233.0, 0), 1234.0, 0));
    }

    #[test]
    fn a_date_is_read_in_its_common_forms() {
        let d = "2024-03-05";
        for text in [
            "It was 2024-03-05.",
            "on 2024/3/5",
            "March 5, 2024",
            "on mar. 5th 2024",
            "the 5th of March 2024",
            "5 Mar 2024",
            "3/5/2024",
            "05.03.2024",
        ] {
            assert!(writes_date(text, d), "{text}");
        }
        for text in ["2024-03-15", "March 15, 2024", "13/5/2024", "2024"] {
            assert!(!writes_date(text, d), "{text}");
        }
        assert!(writes_date("2024-03-05", "2024-03-05T10:00:00Z"));
    }
}
