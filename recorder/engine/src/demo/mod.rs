//! The bundled demo MCP servers behind the hidden `fitness demo-server NAME`
//! subcommand (SPEC §10). Each is a stdio rmcp server whose behaviour is built
//! to land a run in one outcome family:
//!
//! - `good`: enough varied, non-echoing surface for a score;
//! - `thin`: two argument-less tools (INSUFFICIENT_SURFACE);
//! - `broken`: answers the first N calls, then never again (construct gate);
//! - `trivia`: every answer is a fact the no-tools null arm knows (DEGENERATE);
//! - `constant`: answers ignore the arguments (null baseline gate);
//! - `canary`: destructive, ambiguous, flaky, actionable-error, slow and
//!   schema-violating tools next to well-behaved ones.
//!
//! Every output is a pure function of the arguments, except where a server's
//! purpose is call-order behaviour (`broken`'s cut-off, `canary`'s flaky tool).

mod args;
mod canary;
pub mod facts;
mod good;
mod kit;
use kit::Reply;
pub use kit::SLOW_REPORT_DELAY;
mod small;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

/// Every demo server: its name and its one-line purpose, in the order
/// `fitness demo` runs them.
pub const DEMO_SERVERS: &[(&str, &str)] = &[
    (
        "good",
        "seven read-only tools with rich argument spaces: expected to be SCORED",
    ),
    (
        "thin",
        "two argument-less tools: expected INSUFFICIENT_SURFACE",
    ),
    (
        "broken",
        "answers its first 40 tool calls, then never answers again: expected GATE_FAILED at construct",
    ),
    (
        "trivia",
        "answers are capitals and sums a tool-less agent knows: expected DEGENERATE",
    ),
    (
        "constant",
        "answers ignore their arguments: expected GATE_FAILED at null_baseline",
    ),
    (
        "canary",
        "destructive, ambiguous, flaky, actionable-error, slow and schema-violating tools beside well-behaved ones",
    ),
];

/// Which demo server to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoName {
    Good,
    Thin,
    Broken,
    Trivia,
    Constant,
    Canary,
}

impl DemoName {
    /// Every demo server, in the order of [`DEMO_SERVERS`].
    pub const ALL: &[DemoName] = &[
        DemoName::Good,
        DemoName::Thin,
        DemoName::Broken,
        DemoName::Trivia,
        DemoName::Constant,
        DemoName::Canary,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DemoName::Good => "good",
            DemoName::Thin => "thin",
            DemoName::Broken => "broken",
            DemoName::Trivia => "trivia",
            DemoName::Constant => "constant",
            DemoName::Canary => "canary",
        }
    }
}

/// `broken`'s default cut-off: calls answered before it goes silent.
pub const DEFAULT_ANSWER_FIRST: u64 = 40;

impl std::str::FromStr for DemoName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        DemoName::ALL
            .iter()
            .copied()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| format!("unknown demo server {s:?}"))
    }
}

/// How a demo server is started.
#[derive(Debug, Clone)]
pub struct DemoServerOptions {
    pub name: DemoName,
    /// `broken` only: answer this many `tools/call` requests, then never
    /// answer another.
    pub answer_first: u64,
    /// `broken` only: count calls in this file (one byte appended per call),
    /// so the cut-off spans every process started with the same file (a run
    /// that starts a fresh server per phase or per trial).
    pub count_file: Option<PathBuf>,
    /// Answer every `tools/call` this late (a slow server; any demo).
    pub delay: Duration,
}

/// Serve a demo server on stdin/stdout until stdin closes.
pub async fn serve(opts: DemoServerOptions) -> anyhow::Result<()> {
    anyhow::ensure!(
        opts.name == DemoName::Broken
            || (opts.answer_first == DEFAULT_ANSWER_FIRST && opts.count_file.is_none()),
        "--answer-first and --count-file apply to the broken demo server only"
    );
    let mut server = DemoServer::new(opts.name, opts.answer_first);
    if let Some(file) = opts.count_file {
        server = server.with_count_file(file)?;
    }
    server.delay = opts.delay;
    let service = server.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// The tools a demo server advertises, in `tools/list` order.
pub fn tools(name: DemoName) -> Vec<Tool> {
    match name {
        DemoName::Good => good::tools(),
        DemoName::Thin => small::thin_tools(),
        DemoName::Broken => small::broken_tools(),
        DemoName::Trivia => small::trivia_tools(),
        DemoName::Constant => small::constant_tools(),
        DemoName::Canary => canary::tools(),
    }
}

/// Call-order state (the only state any demo server keeps).
#[derive(Default)]
struct Counters {
    /// Every `tools/call` received.
    calls: AtomicU64,
    /// `canary`'s `fetch_quote` calls.
    quotes: AtomicU64,
}

/// One demo server: a fixed tool list and a dispatcher.
#[derive(Clone)]
pub struct DemoServer {
    name: DemoName,
    tools: Arc<Vec<Tool>>,
    answer_first: u64,
    counters: Arc<Counters>,
    count_file: Option<Arc<Mutex<File>>>,
    /// Added to every `tools/call` answer.
    pub delay: Duration,
}

impl DemoServer {
    pub fn new(name: DemoName, answer_first: u64) -> Self {
        DemoServer {
            name,
            tools: Arc::new(tools(name)),
            answer_first,
            counters: Arc::default(),
            count_file: None,
            delay: Duration::ZERO,
        }
    }

    /// Count calls in `path` (shared by every process given the same file)
    /// rather than in this process alone.
    pub fn with_count_file(mut self, path: PathBuf) -> anyhow::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("failed to open the count file {}", path.display()))?;
        self.count_file = Some(Arc::new(Mutex::new(file)));
        Ok(self)
    }

    /// The 1-based number of this call: in the count file when there is one
    /// (append one byte, then read the length: appends are atomic, so two
    /// processes never both see a number below the cut-off for one slot).
    fn next_call(&self) -> Result<u64, ErrorData> {
        let Some(file) = &self.count_file else {
            return Ok(self.counters.calls.fetch_add(1, Ordering::SeqCst) + 1);
        };
        let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(b".")
            .and_then(|()| file.metadata())
            .map(|m| m.len())
            .map_err(|e| ErrorData::internal_error(format!("the count file failed: {e}"), None))
    }

    fn reply(&self, tool: &str, args: &JsonObject) -> Result<Reply, ErrorData> {
        let call = self.next_call()?;
        let now = |r: Result<CallToolResult, ErrorData>| r.map(Reply::Now);
        match self.name {
            DemoName::Good => now(good::call(tool, args)),
            DemoName::Thin => now(small::thin_call(tool, args)),
            DemoName::Broken if call > self.answer_first => Ok(Reply::Never),
            DemoName::Broken => now(small::broken_call(tool, args)),
            DemoName::Trivia => now(small::trivia_call(tool, args)),
            DemoName::Constant => now(small::constant_call(tool, args)),
            DemoName::Canary => canary::call(tool, args, &self.counters.quotes),
        }
    }
}

impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                format!("fitness-demo-{}", self.name.as_str()),
                fitness_shared::VERSION,
            ));
        match self.name {
            DemoName::Trivia => config.with_instructions(small::TRIVIA_INSTRUCTIONS),
            _ => config,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.get_tool(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        match self.reply(&request.name, &args)? {
            Reply::Now(result) => Ok(result.into()),
            Reply::After(delay, result) => {
                tokio::time::sleep(delay).await;
                Ok(result.into())
            }
            Reply::Never => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{Map, Value, json};

    use super::*;

    /// The i-th schema-valid argument object for `tool`: enum values, integers
    /// spread across their range, short strings, alternating booleans.
    fn sample(tool: &Tool, i: u64) -> JsonObject {
        let mut args = Map::new();
        let props = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object);
        for (k, (key, schema)) in props.into_iter().flatten().enumerate() {
            let salt = i * 7 + k as u64 * 13;
            let value = if let Some(options) = schema.get("enum").and_then(Value::as_array) {
                options[(salt as usize * 31 + i as usize) % options.len()].clone()
            } else {
                match schema["type"].as_str() {
                    Some("integer") => {
                        let lo = schema["minimum"].as_i64().unwrap_or(0);
                        let hi = schema["maximum"].as_i64().unwrap_or(lo + 49);
                        json!(lo + ((salt * 7919) % (hi - lo + 1) as u64) as i64)
                    }
                    Some("boolean") => json!(salt.is_multiple_of(2)),
                    _ => json!(format!("sample text {salt}")),
                }
            };
            args.insert(key.clone(), value);
        }
        args
    }

    fn answer(server: &DemoServer, tool: &str, args: &JsonObject) -> CallToolResult {
        match server.reply(tool, args) {
            Ok(Reply::Now(r) | Reply::After(_, r)) => r,
            Ok(Reply::Never) => panic!("{tool} never answered"),
            Err(e) => panic!("{tool} failed: {e:?}"),
        }
    }

    fn result_text(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn every_listed_demo_server_exists_and_has_tools() {
        assert_eq!(DEMO_SERVERS.len(), DemoName::ALL.len());
        for (name, purpose) in DEMO_SERVERS {
            let parsed: DemoName = name.parse().expect("a DemoName");
            assert_eq!(parsed.as_str(), *name);
            assert!(!tools(parsed).is_empty(), "{name}");
            assert!(!purpose.is_empty());
        }
    }

    #[test]
    fn schema_valid_arguments_always_get_an_answer() {
        for name in [
            DemoName::Good,
            DemoName::Thin,
            DemoName::Trivia,
            DemoName::Constant,
        ] {
            let server = DemoServer::new(name, u64::MAX);
            for tool in tools(name) {
                for i in 0..40 {
                    let args = sample(&tool, i);
                    let r = answer(&server, &tool.name, &args);
                    assert_ne!(
                        r.is_error,
                        Some(true),
                        "{name:?} {} {args:?}: {}",
                        tool.name,
                        result_text(&r)
                    );
                }
            }
        }
    }

    #[test]
    fn good_yields_many_distinct_answers_that_do_not_echo_arguments() {
        let server = DemoServer::new(DemoName::Good, u64::MAX);
        let mut answers = BTreeSet::new();
        for tool in tools(DemoName::Good) {
            assert_eq!(
                tool.annotations.as_ref().and_then(|a| a.read_only_hint),
                Some(true)
            );
            let mut per_tool = BTreeSet::new();
            let mut fresh_per_answer = Vec::new();
            for i in 0..8 {
                let args = sample(&tool, i);
                let text = result_text(&answer(&server, &tool.name, &args));
                // Some token of the answer is in neither the arguments nor
                // the tool's description: an answer key that does not leak.
                let known = format!(
                    "{} {} {}",
                    tool.name,
                    tool.description.as_deref().unwrap_or(""),
                    serde_json::to_string(&args).unwrap_or_default()
                );
                let tokens = |s: &str| -> BTreeSet<String> {
                    s.split(|c: char| !c.is_alphanumeric())
                        .filter(|t| t.len() >= 2 || t.chars().all(|c| c.is_ascii_digit()))
                        .map(str::to_lowercase)
                        .collect()
                };
                let fresh: BTreeSet<String> =
                    tokens(&text).difference(&tokens(&known)).cloned().collect();
                fresh_per_answer.push((text.clone(), fresh));
                per_tool.insert(text.clone());
                answers.insert(text);
            }
            assert!(per_tool.len() >= 6, "{}: {per_tool:?}", tool.name);
            // ... and that token is salient: most other answers lack it
            // (template words like "the" or "passage" do not count).
            for (text, fresh) in &fresh_per_answer {
                let salient = fresh.iter().any(|t| {
                    fresh_per_answer
                        .iter()
                        .filter(|(_, f)| f.contains(t))
                        .count()
                        <= 2
                });
                assert!(salient, "{}: {text} has no salient new token", tool.name);
            }
        }
        assert!(answers.len() >= 40, "{}", answers.len());
    }

    #[test]
    fn pure_servers_answer_the_same_arguments_the_same_way() {
        for name in [DemoName::Good, DemoName::Trivia, DemoName::Constant] {
            let a = DemoServer::new(name, u64::MAX);
            let b = DemoServer::new(name, u64::MAX);
            for tool in tools(name) {
                let args = sample(&tool, 5);
                assert_eq!(
                    result_text(&answer(&a, &tool.name, &args)),
                    result_text(&answer(&b, &tool.name, &args))
                );
            }
        }
    }

    #[test]
    fn trivia_answers_are_exactly_the_shared_facts() {
        let server = DemoServer::new(DemoName::Trivia, u64::MAX);
        for (country, capital) in facts::CAPITALS {
            let args = json!({"country": country})
                .as_object()
                .cloned()
                .unwrap_or_default();
            assert_eq!(result_text(&answer(&server, "capital_of", &args)), *capital);
        }
        let args = json!({"a": 17, "b": 25})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(result_text(&answer(&server, "add", &args)), "42");
    }

    #[test]
    fn broken_goes_silent_after_its_cut_off() {
        let server = DemoServer::new(DemoName::Broken, 2);
        let args = json!({"n": 10, "query": "nth_prime"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(matches!(
            server.reply("prime_info", &args),
            Ok(Reply::Now(_))
        ));
        assert!(matches!(
            server.reply("prime_info", &args),
            Ok(Reply::Now(_))
        ));
        assert!(matches!(
            server.reply("prime_info", &args),
            Ok(Reply::Never)
        ));
    }

    #[test]
    fn a_count_file_spans_server_instances() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("calls");
        let args = json!({"n": 10, "query": "nth_prime"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let first = DemoServer::new(DemoName::Broken, 3)
            .with_count_file(file.clone())
            .expect("count file");
        let second = DemoServer::new(DemoName::Broken, 3)
            .with_count_file(file.clone())
            .expect("count file");
        let answered = |s: &DemoServer| matches!(s.reply("prime_info", &args), Ok(Reply::Now(_)));
        assert!(answered(&first));
        assert!(answered(&second));
        assert!(answered(&first));
        assert!(
            !answered(&second),
            "the fourth call overall is not answered"
        );
        assert!(!answered(&first));
        assert_eq!(std::fs::metadata(&file).expect("the file").len(), 5);
    }
}
