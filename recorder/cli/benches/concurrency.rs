//! A run in minutes: `fitness run` at `--concurrency 1, 4, 8, 16` against a
//! model API with a hosted model's latency, in one process run.
//!
//! `cargo bench -p fitness --bench concurrency [-- SCALE]`. A fake
//! Anthropic Messages API on 127.0.0.1 answers each request computed from
//! the request itself (the built-in competent agent, `sim/diligent`, and
//! `sim/reference` for the construct gate's reference agent): right tool,
//! right answer. It waits as a hosted model does: first token after 0.8 s,
//! then 60 tokens/s, plus a random 0-0.5 s, all times SCALE (default 1).
//! It keeps a prompt cache as the provider does: a request whose marked
//! prefix (tools and system text) was seen before reads it from the cache.
//!
//! The runs drive the demo's good server (a real MCP server over stdio) at
//! default sizes. Printed, one JSON line per width and one summary line:
//! wall time, the ratio to sequential, the bound at each N (per stage, the
//! larger of its longest trial and its total trial time over N, summed,
//! plus the sequential run's time outside trials), and the input tokens
//! billed at full price with caching against without (every input token).
//! Goals: at N = 8, at most 0.25x of sequential and within 1.5x of the
//! bound; full-price input at most 0.3x of without caching.

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use fitness_recorder::model::sim::SimClient;
use fitness_recorder::model::types::{
    ChatRequest, ContentBlock, Message, ModelClient, Role, ToolSpec,
};
use serde_json::{Value, json};

const FITNESS: &str = env!("CARGO_BIN_EXE_fitness");
const WIDTHS: [u64; 4] = [1, 4, 8, 16];

/// What the fake API billed, summed over a run.
#[derive(Default, Clone, Copy)]
struct Billed {
    calls: u64,
    /// Input tokens billed at full price (not read from or written to the
    /// cache).
    full_price: u64,
    cache_read: u64,
    cache_write: u64,
}

impl Billed {
    fn all_input(&self) -> u64 {
        self.full_price + self.cache_read + self.cache_write
    }
}

struct Fake {
    scale: f64,
    cache: Mutex<HashSet<u64>>,
    billed: Mutex<Billed>,
    diligent: SimClient,
    reference: SimClient,
}

fn tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

fn hash(v: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The Anthropic request read back into the provider-neutral conversation.
fn chat_request(body: &Value) -> ChatRequest {
    let block = |b: &Value| -> Option<ContentBlock> {
        Some(match b["type"].as_str()? {
            "text" => ContentBlock::Text {
                text: b["text"].as_str()?.to_owned(),
            },
            "tool_use" => ContentBlock::ToolUse {
                id: b["id"].as_str()?.to_owned(),
                name: b["name"].as_str()?.to_owned(),
                input: b["input"].clone(),
            },
            "tool_result" => ContentBlock::ToolResult {
                tool_use_id: b["tool_use_id"].as_str()?.to_owned(),
                content: text_of(&b["content"]),
                is_error: b["is_error"].as_bool().unwrap_or(false),
            },
            _ => return None,
        })
    };
    let messages = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| Message {
            role: if m["role"] == "assistant" {
                Role::Assistant
            } else {
                Role::User
            },
            content: match &m["content"] {
                Value::String(s) => vec![ContentBlock::Text { text: s.clone() }],
                Value::Array(blocks) => blocks.iter().filter_map(block).collect(),
                _ => Vec::new(),
            },
        })
        .collect();
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| ToolSpec {
            name: t["name"].as_str().unwrap_or_default().to_owned(),
            description: t["description"].as_str().map(str::to_owned),
            input_schema: t["input_schema"].clone(),
        })
        .collect();
    ChatRequest {
        system: Some(text_of(&body["system"])),
        messages,
        tools,
        max_tokens: 1024,
        temperature: None,
        corr_id: None,
        json_object: false,
    }
}

async fn messages(State(fake): State<Arc<Fake>>, body: String) -> axum::Json<Value> {
    let started = Instant::now();
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let chat = chat_request(&request);
    let agent = if body.contains("fitness-reference") {
        &fake.reference
    } else {
        &fake.diligent
    };
    let reply = agent.complete(&chat).await.expect("the sim answers");
    // The prompt cache: the prefix up to the last breakpoint (tools, then
    // system text) is read from the cache when seen before.
    let prefix = format!("{}{}", request["tools"], request["system"]);
    let marked = prefix.contains("cache_control");
    let all = tokens(body.len());
    let prefix_tokens = if marked {
        tokens(prefix.len()).min(all)
    } else {
        0
    };
    let output = reply.usage.as_ref().map_or(20, |u| u.output_tokens.max(1));
    let (read, write) = {
        let mut cache = fake.cache.lock().expect("cache");
        match (marked, cache.insert(hash(&prefix))) {
            (false, _) => (0, 0),
            (true, true) => (0, prefix_tokens),
            (true, false) => (prefix_tokens, 0),
        }
    };
    {
        let mut b = fake.billed.lock().expect("billed");
        b.calls += 1;
        b.full_price += all - prefix_tokens;
        b.cache_read += read;
        b.cache_write += write;
    }
    // A hosted model's time: first token, then the reply's tokens.
    let jitter = (hash(&format!("{body}{:?}", started)) % 500) as f64 / 1000.0;
    let wait = (0.8 + output as f64 / 60.0 + jitter) * fake.scale;
    tokio::time::sleep(Duration::from_secs_f64(wait).saturating_sub(started.elapsed())).await;
    let content: Vec<Value> = reply
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::ToolUse { id, name, input } => {
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            _ => None,
        })
        .collect();
    let stop = if content.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    };
    axum::Json(json!({
        "id": "msg_bench", "type": "message", "role": "assistant",
        "model": "claude-bench-1",
        "content": content, "stop_reason": stop,
        "usage": {"input_tokens": all - prefix_tokens, "output_tokens": output,
                  "cache_read_input_tokens": read, "cache_creation_input_tokens": write}
    }))
}

/// Milliseconds since the epoch of an agent tape's `t`.
fn ms(t: &str) -> Option<i64> {
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let days = fitness_shared::time::days_from_civil(d.next()??, d.next()??, d.next()??);
    let time = time.trim_end_matches('Z');
    let mut h = time.split(':');
    let (hh, mm) = (
        h.next()?.parse::<i64>().ok()?,
        h.next()?.parse::<i64>().ok()?,
    );
    let secs: f64 = h.next()?.parse().ok()?;
    Some(days * 86_400_000 + (hh * 3600 + mm * 60) * 1000 + (secs * 1000.0) as i64)
}

/// Per stage, every trial's time on the agent tape (first to last line; a
/// trial's system turn starts it, so the repetitions of one task, which
/// share a corr_id, are trials apart).
fn stage_trials(agent: &Path) -> BTreeMap<String, Vec<i64>> {
    let mut open: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut done: Vec<(String, i64)> = Vec::new();
    let text = std::fs::read_to_string(agent).expect("agent tape");
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("tape line");
        let (Some(corr), Some(t)) = (v["corr_id"].as_str(), v["t"].as_str().and_then(ms)) else {
            continue;
        };
        if v["type"] == "turn"
            && v["role"] == "system"
            && let Some((a, b)) = open.remove(corr)
        {
            done.push((corr.to_owned(), b - a));
        }
        let span = open.entry(corr.to_owned()).or_insert((t, t));
        span.1 = span.1.max(t);
    }
    done.extend(open.into_iter().map(|(corr, (a, b))| (corr, b - a)));
    let mut stages: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (corr, took) in done {
        if corr.starts_with("generate") {
            continue;
        }
        let stage = corr.split_once("::").map_or("drive", |(_, s)| s).to_owned();
        stages.entry(stage).or_default().push(took);
    }
    stages
}

struct Measured {
    wall: Duration,
    outcome: String,
    billed: Billed,
    stages: BTreeMap<String, Vec<i64>>,
}

fn run(fake: &Arc<Fake>, addr: SocketAddr, width: u64) -> Measured {
    *fake.billed.lock().expect("billed") = Billed::default();
    fake.cache.lock().expect("cache").clear();
    let out = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let output = Command::new(FITNESS)
        .args([
            "run",
            "--runner",
            "anthropic/claude-bench-1",
            // The demo's own generator: the good server is built for it.
            "--generator",
            "schema-walk/1",
            "--concurrency",
            &width.to_string(),
            "--seed",
            "7",
            "--json",
            "--out",
        ])
        .arg(out.path())
        .args(["--", FITNESS, "demo-server", "good"])
        .env("ANTHROPIC_BASE_URL", format!("http://{addr}"))
        .env("ANTHROPIC_API_KEY", "bench-key")
        .output()
        .expect("fitness runs");
    let wall = started.elapsed();
    let summary: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no summary: {}", String::from_utf8_lossy(&output.stderr)));
    let dir = Path::new(summary["dir"].as_str().expect("dir")).to_owned();
    Measured {
        wall,
        outcome: summary["outcome"].as_str().unwrap_or("?").to_owned(),
        billed: *fake.billed.lock().expect("billed"),
        stages: stage_trials(&dir.join("agent.jsonl")),
    }
}

fn main() {
    let scale: f64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1.0);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let fake = Arc::new(Fake {
        scale,
        cache: Mutex::new(HashSet::new()),
        billed: Mutex::new(Billed::default()),
        diligent: SimClient::new(&"sim/diligent".parse().expect("id"), 7).expect("sim"),
        reference: SimClient::new(&"sim/reference".parse().expect("id"), 7).expect("sim"),
    });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = Router::new()
        .route("/v1/messages", post(messages))
        .with_state(Arc::clone(&fake));
    runtime.spawn(async move { axum::serve(listener, app).await });

    let mut first: Option<Measured> = None;
    for width in WIDTHS {
        let m = run(&fake, addr, width);
        let base = first.as_ref().unwrap_or(&m);
        // The bound: per stage, the longest trial or the stage's trial time
        // spread over N, whichever is larger; plus the sequential run's
        // time outside trials.
        let trial_ms: i64 = base.stages.values().flatten().sum();
        let outside = base.wall.as_millis() as i64 - trial_ms;
        let bound_ms: i64 = outside
            + base
                .stages
                .values()
                .map(|t| {
                    let longest = t.iter().copied().max().unwrap_or(0);
                    longest.max(t.iter().sum::<i64>() / width as i64)
                })
                .sum::<i64>();
        let wall_ms = m.wall.as_millis() as i64;
        println!(
            "{}",
            json!({
                "bench": "concurrency",
                "concurrency": width,
                "outcome": m.outcome,
                "wall_s": wall_ms as f64 / 1000.0,
                "ratio_to_sequential": wall_ms as f64 / base.wall.as_millis() as f64,
                "bound_s": bound_ms as f64 / 1000.0,
                "ratio_to_bound": wall_ms as f64 / bound_ms.max(1) as f64,
                "model_calls": m.billed.calls,
                "input_tokens_full_price": m.billed.full_price,
                "input_tokens_cache_read": m.billed.cache_read,
                "input_tokens_cache_write": m.billed.cache_write,
                "input_tokens_without_caching": m.billed.all_input(),
                "full_price_ratio": m.billed.full_price as f64 / m.billed.all_input().max(1) as f64,
                "scale": scale,
            })
        );
        if first.is_none() {
            first = Some(m);
        }
    }
}
