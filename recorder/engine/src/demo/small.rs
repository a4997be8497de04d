//! The small demo servers: `thin`, `broken`, `trivia` and `constant`.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::args::{boolean, choice, enum_schema, int, int_schema, object};
use super::facts::CAPITALS;
use super::good;
use super::kit::{read_only, text, tool, tool_error};

// ---- thin: two tools, no arguments ----

pub fn thin_tools() -> Vec<Tool> {
    let none = json!({"type": "object", "properties": {}, "additionalProperties": false});
    vec![
        tool(json!({
            "name": "server_version",
            "description": "The version and build of this server.",
            "inputSchema": none,
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "ping",
            "description": "Check that the server is alive.",
            "inputSchema": none,
            "annotations": read_only(),
        })),
    ]
}

pub fn thin_call(tool: &str, _args: &JsonObject) -> Result<CallToolResult, ErrorData> {
    Ok(match tool {
        "server_version" => text("fitness-demo-thin 1.4.2 (build 5521)"),
        _ => text("pong: alive for 86400 s"),
    })
}

// ---- broken: four of good's tools; the cut-off lives in the dispatcher ----

const BROKEN_TOOLS: &[&str] = &[
    "country_facts",
    "convert_length",
    "order_lookup",
    "prime_info",
];

pub fn broken_tools() -> Vec<Tool> {
    good::tools()
        .into_iter()
        .filter(|t| BROKEN_TOOLS.contains(&t.name.as_ref()))
        .collect()
}

pub fn broken_call(tool: &str, args: &JsonObject) -> Result<CallToolResult, ErrorData> {
    good::call(tool, args)
}

// ---- trivia: answers a tool-less agent already knows ----

/// Server instructions: the tasks are general knowledge.
pub const TRIVIA_INSTRUCTIONS: &str = "A general-knowledge server. `capital_of` answers \
\"What is the capital of COUNTRY?\"; `add` answers \"What is A + B?\". Both answers are \
common knowledge and need no lookup.";

pub const TRIVIA_ADD_MAX: i64 = 99;

pub fn trivia_tools() -> Vec<Tool> {
    let countries: Vec<&str> = CAPITALS.iter().map(|(c, _)| *c).collect();
    vec![
        tool(json!({
            "name": "capital_of",
            "description": "What is the capital of the country? Returns the capital city's name.",
            "inputSchema": object(&[("country", enum_schema(&countries, "The country, by its English name."))]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "add",
            "description": "What is a + b? Returns the sum.",
            "inputSchema": object(&[
                ("a", int_schema(0, TRIVIA_ADD_MAX, "First addend.")),
                ("b", int_schema(0, TRIVIA_ADD_MAX, "Second addend.")),
            ]),
            "annotations": read_only(),
        })),
    ]
}

/// The answer is exactly the fact: the capital's name, or the sum's digits.
pub fn trivia_call(tool: &str, args: &JsonObject) -> Result<CallToolResult, ErrorData> {
    let answer = match tool {
        "capital_of" => {
            let countries: Vec<&str> = CAPITALS.iter().map(|(c, _)| *c).collect();
            choice(args, "country", &countries).map(|country| {
                CAPITALS
                    .iter()
                    .find(|(c, _)| *c == country)
                    .map_or_else(String::new, |(_, capital)| (*capital).to_owned())
            })
        }
        _ => int(args, "a", 0, TRIVIA_ADD_MAX)
            .and_then(|a| Ok(a + int(args, "b", 0, TRIVIA_ADD_MAX)?))
            .map(|sum| sum.to_string()),
    };
    Ok(answer.map_or_else(tool_error, text))
}

// ---- constant: answers ignore the arguments ----

pub const CONSTANT_STATUS: &str = "status OK build 7731";
pub const CONSTANT_UPTIME: &str = "uptime 41 days, 0 incidents";

const REGIONS: &[&str] = &[
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
    "ca-central-1",
    "sa-east-1",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "eu-central-1",
    "eu-north-1",
    "ap-south-1",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-southeast-1",
    "ap-southeast-2",
];
const SERVICES: &[&str] = &[
    "api", "auth", "billing", "cache", "cdn", "dns", "email", "gateway", "ingest", "ledger",
    "metrics", "queue", "search", "storage", "web", "worker",
];

pub fn constant_tools() -> Vec<Tool> {
    vec![
        tool(json!({
            "name": "status",
            "description": "Service status for a region.",
            "inputSchema": object(&[
                ("verbose", json!({"type": "boolean", "description": "Include details."})),
                ("region", enum_schema(REGIONS, "The region to report on.")),
            ]),
            "annotations": read_only(),
        })),
        tool(json!({
            "name": "uptime",
            "description": "How long a service has been up.",
            "inputSchema": object(&[
                ("service", enum_schema(SERVICES, "The service.")),
                ("window_days", int_schema(1, 365, "Look-back window in days.")),
            ]),
            "annotations": read_only(),
        })),
    ]
}

/// The arguments are checked (a wrong call is still an error) and then ignored.
pub fn constant_call(tool: &str, args: &JsonObject) -> Result<CallToolResult, ErrorData> {
    let checked = match tool {
        "status" => boolean(args, "verbose")
            .and_then(|_| choice(args, "region", REGIONS))
            .map(|_| CONSTANT_STATUS),
        _ => choice(args, "service", SERVICES)
            .and_then(|_| int(args, "window_days", 1, 365))
            .map(|_| CONSTANT_UPTIME),
    };
    Ok(checked.map_or_else(tool_error, text))
}
