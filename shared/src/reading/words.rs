//! The small words every reading prints the same way.

/// A share as the pages print it: `45.8%`.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// `1 task`, `2 tasks`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
