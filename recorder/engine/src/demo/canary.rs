//! `canary`: one tool per hazard a run must surface, beside well-behaved
//! read-only tools so that a suite of eight or more tasks exists.
//!
//! | tool | hazard |
//! |---|---|
//! | `delete_note` | destructive, annotated `destructiveHint: true` |
//! | `purge_cache` | destructive, no annotations at all |
//! | `get_profile` | ambiguous parameter: `user` is a numeric id, typed as a string |
//! | `fetch_quote` | flaky: every third call fails with a transient `isError` |
//! | `list_items` | actionable `isError` when `limit` is over 50 (the schema has no maximum) |
//! | `slow_report` | takes half a second ([`SLOW_REPORT_DELAY`]) |
//! | `get_metrics` | `structuredContent` violates its declared `outputSchema` |
//! | `elevation_of`, `checksum` | well-behaved |

use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::json;

use super::args::{choice, enum_schema, int, int_at_least, int_schema, object, string};
use super::facts::INVENTORY;
use super::good::crc32;
use super::kit::{Reply, SLOW_REPORT_DELAY, read_only, text, tool, tool_error};

/// `fetch_quote` fails on every call whose number is a multiple of this.
pub const FLAKY_EVERY: u64 = 3;
/// `list_items` accepts at most this many.
pub const LIST_LIMIT: i64 = 50;
/// The transient failure text of `fetch_quote`.
pub const FLAKY_MESSAGE: &str = "quote service temporarily unavailable (transient); retry the call";

const SYMBOLS: &[&str] = &[
    "ACME", "BOLT", "CRUX", "DYNE", "EMBR", "FLUX", "GRID", "HELX", "IONQ", "JOLT", "KILN", "LUMA",
    "MOXI", "NOVA", "ORBT", "PYRE",
];
const SCOPES: &[&str] = &["all", "images", "sessions", "search", "thumbnails"];
const SERVICES: &[&str] = &[
    "api", "auth", "billing", "cache", "cdn", "dns", "email", "gateway", "ingest", "ledger",
    "metrics", "queue", "search", "storage", "web", "worker",
];
/// Cities and their elevation in metres.
const CITIES: &[(&str, i64)] = &[
    ("La Paz", 3640),
    ("Quito", 2850),
    ("Bogota", 2640),
    ("Addis Ababa", 2355),
    ("Mexico City", 2240),
    ("Sanaa", 2250),
    ("Nairobi", 1795),
    ("Denver", 1609),
    ("Johannesburg", 1753),
    ("Tehran", 1189),
    ("Madrid", 657),
    ("Munich", 519),
    ("Zurich", 408),
    ("Calgary", 1045),
    ("Salt Lake City", 1288),
    ("Kathmandu", 1400),
];

pub fn tools() -> Vec<Tool> {
    let cities: Vec<&str> = CITIES.iter().map(|(c, _)| *c).collect();
    vec![
        tool(json!({
            "name": "delete_note",
            "description": "Delete a note permanently.",
            "inputSchema": object(&[("note_id", int_schema(1, 500, "The note to delete."))]),
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true},
        })),
        tool(json!({
            "name": "purge_cache",
            "description": "Purge a cache.",
            "inputSchema": object(&[("scope", enum_schema(SCOPES, "Which cache."))]),
        })),
        tool(json!({
            "name": "get_profile",
            "description": "Get a user's profile.",
            "inputSchema": object(&[("user", json!({"type": "string", "description": "The user."}))]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "fetch_quote",
            "description": "The latest price of a stock symbol.",
            "inputSchema": object(&[("symbol", enum_schema(SYMBOLS, "Ticker symbol."))]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "list_items",
            "description": "List the first items of the inventory.",
            "inputSchema": object(&[("limit", json!({"type": "integer", "minimum": 1, "description": "How many items to list."}))]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "slow_report",
            "description": "Build an audit report (takes a moment).",
            "inputSchema": object(&[("id", int_schema(1, 100, "The report number."))]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "get_metrics",
            "description": "Current latency and error rate of a service.",
            "inputSchema": object(&[("service", enum_schema(SERVICES, "The service."))]),
            "outputSchema": {
                "type": "object",
                "properties": {
                    "latency_ms": {"type": "integer", "description": "Median latency in milliseconds."},
                    "error_rate": {"type": "number", "description": "Errors per request, 0 to 1."}
                },
                "required": ["latency_ms", "error_rate"]
            },
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "elevation_of",
            "description": "The elevation of a city above sea level.",
            "inputSchema": object(&[("city", enum_schema(&cities, "The city."))]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "checksum",
            "description": "The CRC-32 checksum of a string, in hex.",
            "inputSchema": object(&[("text", json!({"type": "string", "minLength": 1, "maxLength": 200, "description": "The text."}))]),
            "annotations": read_only(),
        })),
    ]
}

pub(super) fn call(tool: &str, args: &JsonObject, quotes: &AtomicU64) -> Result<Reply, ErrorData> {
    let now = |r: Result<String, String>| Ok(Reply::Now(r.map_or_else(tool_error, text)));
    match tool {
        "delete_note" => now(int(args, "note_id", 1, 500).map(|id| format!("Deleted note {id}."))),
        "purge_cache" => now(choice(args, "scope", SCOPES).map(|scope| {
            let entries = crc32(scope.as_bytes()) % 9000 + 1000;
            format!("Purged {entries} entries from the {scope} cache.")
        })),
        "get_profile" => now(string(args, "user").and_then(profile)),
        "fetch_quote" => {
            let n = quotes.fetch_add(1, Ordering::SeqCst) + 1;
            if n.is_multiple_of(FLAKY_EVERY) {
                return now(Err(FLAKY_MESSAGE.to_owned()));
            }
            now(choice(args, "symbol", SYMBOLS).map(|s| {
                let cents = crc32(s.as_bytes()) % 90_000 + 1_000;
                format!("{s} last traded at {}.{:02} USD", cents / 100, cents % 100)
            }))
        }
        "list_items" => now(int_at_least(args, "limit", 1).and_then(|limit| {
            if limit > LIST_LIMIT {
                return Err(format!(
                    "limit must be between 1 and {LIST_LIMIT}; you sent {limit}"
                ));
            }
            let items = &INVENTORY[..limit as usize];
            Ok(format!("{} items: {}", items.len(), items.join(", ")))
        })),
        "slow_report" => match int(args, "id", 1, 100) {
            Ok(id) => {
                let digest = crc32(format!("report-{id}").as_bytes());
                let findings = digest % 40 + 1;
                Ok(Reply::After(
                    SLOW_REPORT_DELAY,
                    text(format!(
                        "Report {id}: {findings} findings, digest {digest:08x}."
                    )),
                ))
            }
            Err(e) => now(Err(e)),
        },
        "get_metrics" => match choice(args, "service", SERVICES) {
            Ok(service) => {
                let h = crc32(service.as_bytes());
                let latency = h % 400 + 20;
                let errors = f64::from(h % 50) / 1000.0;
                // The fault: latency_ms is declared an integer but sent as a string.
                let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
                    "{service}: median latency {latency}ms, error rate {errors}"
                ))]);
                result.structured_content =
                    Some(json!({"latency_ms": format!("{latency}ms"), "error_rate": errors}));
                Ok(Reply::Now(result))
            }
            Err(e) => now(Err(e)),
        },
        "elevation_of" => {
            let cities: Vec<&str> = CITIES.iter().map(|(c, _)| *c).collect();
            now(choice(args, "city", &cities).map(|city| {
                let metres = CITIES
                    .iter()
                    .find(|(c, _)| *c == city)
                    .map_or(0, |(_, m)| *m);
                format!("{city} lies {metres} metres above sea level.")
            }))
        }
        _ => now(string(args, "text").map(|t| format!("crc32 {:08x}", crc32(t.as_bytes())))),
    }
}

/// `user` is a numeric id passed as a string; anything else is not found.
fn profile(user: &str) -> Result<String, String> {
    let id: u32 = user
        .trim()
        .parse()
        .ok()
        .filter(|id| (1..=9999).contains(id))
        .ok_or_else(|| format!("no user {user:?}: `user` is the numeric user id (1 to 9999)"))?;
    let h = crc32(&id.to_be_bytes());
    let plans = ["free", "team", "business", "enterprise"];
    Ok(format!(
        "User {id}: joined {}, plan {}, {} projects.",
        2015 + h % 11,
        plans[(h >> 8) as usize % plans.len()],
        h % 97
    ))
}
