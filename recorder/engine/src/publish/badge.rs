//! Shields-style SVG badges for a server's README: `fitness | 91.7% (74-98)`
//! or `fitness | refused: DEGENERATE`.

use fitness_shared::board::{Row, RowResult};

/// The right-hand text and colour of a row's badge.
pub fn badge_message(row: &Row) -> (String, &'static str) {
    match &row.result {
        RowResult::Scored { first_try, .. } => (
            format!(
                "{:.1}% ({:.0}-{:.0})",
                first_try.rate * 100.0,
                first_try.low * 100.0,
                first_try.high * 100.0
            ),
            "#2f6f4e",
        ),
        RowResult::Refused { code, .. } => (format!("refused: {code}"), "#6b5b95"),
    }
}

/// A flat two-part badge. Widths come from a fixed per-character estimate
/// (Verdana 11px averages about 6.5 px), which is what shields-style
/// generators without a font table do; the text is escaped.
pub fn badge_svg(label: &str, message: &str, colour: &str) -> String {
    let width = |s: &str| 10 + (s.chars().count() as u32 * 13).div_ceil(2);
    let (lw, mw) = (width(label), width(message));
    let total = lw + mw;
    let (label, message) = (escape(label), escape(message));
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{label}: {message}">
  <title>{label}: {message}</title>
  <rect width="{lw}" height="20" fill="#555"/>
  <rect x="{lw}" width="{mw}" height="20" fill="{colour}"/>
  <g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">
    <text x="{lx}" y="14">{label}</text>
    <text x="{mx}" y="14">{message}</text>
  </g>
</svg>
"##,
        lx = lw / 2,
        mx = lw + mw / 2,
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
