//! Wall-clock timestamps for tape lines, in the ISO 8601 UTC form every
//! mcp-tape consumer parses (`2026-07-28T12:00:00.000Z`).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as a tape timestamp with millisecond precision.
pub fn now() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format_unix_ms(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// Format milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_unix_ms(ms: u64) -> String {
    fitness_shared::time::format_iso_ms(i64::try_from(ms).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_unix_ms(0), "1970-01-01T00:00:00.000Z");
        // 2026-07-28T12:34:56.789Z
        assert_eq!(
            format_unix_ms(1_785_242_096_789),
            "2026-07-28T12:34:56.789Z"
        );
        assert_eq!(format_unix_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
