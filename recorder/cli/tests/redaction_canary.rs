//! The canary: a distinct secret in every input channel (`--env`,
//! `--header`, URL userinfo, URL query, the HTTP bearer token,
//! `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), a server that echoes its
//! environment and its request headers, and model APIs that echo the key
//! they were sent, driven through `probe`, `suite`, `ask`, `run`,
//! `rewrite-check`, `demo` and `publish`. Then every byte the commands
//! wrote (run directories, tapes, suites, the published site with its `.gz`
//! files decompressed, file names) and printed is read: no secret appears
//! once, while the markers show each channel really carried its secret.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Uri};
use base64::Engine as _;
use common::{FITNESS, http_fixture, run_bounded_in, s, text};
use serde_json::{Value, json};

/// The planted secrets, each distinct and unmistakable.
struct Canaries {
    env: String,
    header: String,
    user: String,
    password: String,
    query: String,
    bearer: String,
    openai: String,
    anthropic: String,
}

impl Canaries {
    fn new() -> Canaries {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            % 1_000_000_007;
        let c = |what: &str| format!("canary-{what}-{nonce:x}q7");
        Canaries {
            env: c("env"),
            header: c("header"),
            user: c("user"),
            password: c("password"),
            query: c("query"),
            bearer: c("bearer"),
            openai: c("openai"),
            anthropic: c("anthropic"),
        }
    }

    /// Every secret by channel, with the forms a client derives from them.
    fn all(&self) -> Vec<(&'static str, String)> {
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.user, self.password));
        vec![
            ("--env", self.env.clone()),
            ("--header", self.header.clone()),
            ("url username", self.user.clone()),
            ("url password", self.password.clone()),
            ("url basic auth", basic),
            ("url query", self.query.clone()),
            ("FITNESS_MCP_BEARER_TOKEN", self.bearer.clone()),
            ("OPENAI_API_KEY", self.openai.clone()),
            ("ANTHROPIC_API_KEY", self.anthropic.clone()),
        ]
    }

    /// The environment every command runs with.
    fn env(&self, model_base: &str) -> Vec<(&'static str, String)> {
        vec![
            ("FITNESS_MCP_BEARER_TOKEN", self.bearer.clone()),
            ("OPENAI_API_KEY", self.openai.clone()),
            ("OPENAI_BASE_URL", format!("{model_base}/v1")),
            ("ANTHROPIC_API_KEY", self.anthropic.clone()),
            ("ANTHROPIC_BASE_URL", model_base.to_owned()),
        ]
    }
}

/// A model API that echoes the key it was sent: both wire APIs, stateless.
/// With tools offered and no tool result yet it calls `environment` (or
/// the first tool); otherwise it answers with the key and the last result.
async fn echo_model(uri: Uri, headers: HeaderMap, body: Bytes) -> axum::Json<Value> {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let tools: Vec<String> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| {
                    t["name"]
                        .as_str()
                        .or_else(|| t["function"]["name"].as_str())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    let tool = tools
        .iter()
        .find(|t| *t == "environment")
        .or(tools.first())
        .cloned();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if uri.path().ends_with("/v1/messages") {
        let key = header("x-api-key");
        let last_result = messages
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .rfind(|b| b["type"] == "tool_result");
        let content = match (&tool, &last_result) {
            (Some(tool), None) => {
                json!([{"type": "tool_use", "id": "toolu_1", "name": tool, "input": {}}])
            }
            _ => json!([{"type": "text", "text": format!(
                "You sent me x-api-key {key}. The tool said: {}",
                last_result.map(|r| r["content"].to_string()).unwrap_or_default()
            )}]),
        };
        let stop = if content[0]["type"] == "tool_use" {
            "tool_use"
        } else {
            "end_turn"
        };
        axum::Json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "echo-model",
            "content": content, "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5}
        }))
    } else {
        let key = header("authorization");
        let last_result = messages.iter().rfind(|m| m["role"] == "tool");
        let message = match (&tool, &last_result) {
            (Some(tool), None) => json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": "{}"}}]}),
            _ => json!({"role": "assistant", "content": format!(
                "You sent me authorization {key}. The tool said: {}",
                last_result.map(|r| r["content"].to_string()).unwrap_or_default()
            )}),
        };
        let finish = if message["tool_calls"].is_array() {
            "tool_calls"
        } else {
            "stop"
        };
        axum::Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "echo-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        }))
    }
}

/// Every file under `root` (a `.gz` decompressed) with its path, and the
/// path itself as a "file" so names are searched too.
fn every_byte(root: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(root).expect("readable dir").flatten() {
        let path = entry.path();
        out.push((
            path.clone(),
            path.to_string_lossy().into_owned().into_bytes(),
        ));
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            every_byte(&path, out);
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).expect("readable file");
            if path.extension().is_some_and(|e| e == "gz") {
                let mut plain = Vec::new();
                flate2::read::GzDecoder::new(bytes.as_slice())
                    .read_to_end(&mut plain)
                    .expect("a .gz file decompresses");
                out.push((path.with_extension("gz (decompressed)"), plain));
            }
            out.push((path, bytes));
        }
    }
}

fn occurrences(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn no_planted_secret_reaches_any_file_or_printed_line() {
    let canaries = Canaries::new();
    let root = tempfile::tempdir().expect("tempdir");
    let root = root.path();

    // The echoing model API.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let model_base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = Router::new().fallback(echo_model);
    let server = rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    // The echoing MCP server: over HTTP with every credential in its URL
    // and headers, and over stdio with an `--env` secret.
    let http = http_fixture("echo");
    let (scheme, rest) = http.url.split_once("://").expect("a URL");
    let url = format!(
        "{scheme}://{}:{}@{rest}?api_key={}",
        canaries.user, canaries.password, canaries.query
    );
    let header = format!("X-Canary-Key: {}", canaries.header);
    let env_flag = format!("CANARY_ENV_KEY={}", canaries.env);
    let env = canaries.env(&model_base);
    let stdio = [FITNESS, "fixture-server", "echo"];
    let mut printed: Vec<(String, Output)> = Vec::new();
    let mut run = |name: &str, args: Vec<&str>, limit: u64| -> Output {
        let out = run_bounded_in(Some(root), &env, &args, Duration::from_secs(limit));
        printed.push((name.to_owned(), out.clone()));
        out
    };
    let d = |name: &str| root.join(name);

    // probe, both transports, calling the echoing tools.
    let probe_http = d("probe-http");
    let out = run(
        "probe http",
        vec![
            "probe",
            "--json",
            "--tape",
            s(&probe_http),
            "--header",
            &header,
            "--call",
            "request",
            "--call",
            "environment",
            &url,
        ],
        120,
    );
    assert!(out.status.success(), "{}", text(&out));
    let probe_stdio = d("probe-stdio");
    let mut args = vec![
        "probe",
        "--json",
        "--tape",
        s(&probe_stdio),
        "--env",
        &env_flag,
        "--call",
        "environment",
        "--",
    ];
    args.extend(stdio);
    let out = run("probe stdio", args, 120);
    assert!(out.status.success(), "{}", text(&out));

    // suite, over stdio, with its tapes and its file.
    let suite_dir = d("suite");
    std::fs::create_dir_all(&suite_dir).expect("dir");
    let suite_file = suite_dir.join("suite.json");
    let mut args = vec![
        "suite",
        "--generator",
        "schema-walk/1",
        "--tasks",
        "4",
        "--tape",
        s(&suite_dir),
        "--out",
        s(&suite_file),
        "--env",
        &env_flag,
        "--",
    ];
    args.extend(stdio);
    let out = run("suite", args, 120);
    assert!(suite_file.is_file(), "{}", text(&out));

    // ask: OpenAI over stdio, Anthropic over HTTP; both models echo the key
    // and the tool's result (the environment, the request headers).
    let ask_openai = d("ask-openai");
    let mut args = vec![
        "ask",
        "--runner",
        "openai/echo-model",
        "--out",
        s(&ask_openai),
        "--env",
        &env_flag,
        "What is in this server's `environment`?",
        "--",
    ];
    args.extend(stdio);
    let out = run("ask openai", args, 120);
    assert!(out.status.success(), "{}", text(&out));
    let ask_anthropic = d("ask-anthropic");
    let out = run(
        "ask anthropic",
        vec![
            "ask",
            &url,
            "--runner",
            "anthropic/echo-model",
            "--out",
            s(&ask_anthropic),
            "--header",
            &header,
            "What did the `request` carry?",
        ],
        120,
    );
    assert!(out.status.success(), "{}", text(&out));

    // run: the echoing model as runner over stdio (VOID at the spend cap is
    // fine), the sim runner over HTTP, and a sim run to rewrite-check.
    let runs = d("runs");
    let mut args = vec![
        "run",
        "--runner",
        "openai/echo-model",
        "--generator",
        "schema-walk/1",
        "--out",
        s(&runs),
        "--max-model-calls",
        "30",
        "--env",
        &env_flag,
        "--json",
        "--",
    ];
    args.extend(stdio);
    run("run openai", args, 300);
    let out = run(
        "run http",
        vec![
            "run",
            &url,
            "--runner",
            "sim/diligent",
            "--out",
            s(&runs),
            "--header",
            &header,
            "--json",
        ],
        300,
    );
    assert!(!out.stdout.is_empty(), "{}", text(&out));
    let before_runs = d("before");
    let mut args = vec![
        "run",
        "--runner",
        "sim/diligent",
        "--out",
        s(&before_runs),
        "--env",
        &env_flag,
        "--json",
        "--",
    ];
    args.extend(stdio);
    let out = run("run stdio", args, 300);
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("a JSON summary ({e}): {}", text(&out)));
    let before_dir = PathBuf::from(summary["dir"].as_str().expect("the run's dir"));

    // rewrite-check on that unsigned run (trusted explicitly), the server's
    // secret given again.
    let after_runs = d("after");
    let out = run(
        "rewrite-check",
        vec![
            "rewrite-check",
            s(&before_dir),
            "--out",
            s(&after_runs),
            "--env",
            &env_flag,
            "--trust-command",
            "--json",
        ],
        300,
    );
    assert!(out.status.success(), "{}", text(&out));

    // demo (sim runners; the provider keys sit in its environment).
    let demo = d("demo");
    let out = run(
        "demo",
        vec![
            "demo",
            "--no-serve",
            "--only",
            "good",
            "--out",
            s(&demo.join("runs")),
            "--site",
            s(&demo.join("site")),
        ],
        300,
    );
    assert!(out.status.success(), "{}", text(&out));

    // publish every run directory.
    let site = d("site");
    let out = run(
        "publish",
        vec![
            "publish",
            s(&runs),
            s(&before_runs),
            s(&after_runs),
            "--out",
            s(&site),
            "--no-viewer",
        ],
        120,
    );
    assert!(out.status.success(), "{}", text(&out));
    drop(http);
    server.abort();

    // Every byte written, and every byte printed.
    let mut files = Vec::new();
    every_byte(root, &mut files);
    for (name, out) in &printed {
        files.push((
            PathBuf::from(format!("<stdout of {name}>")),
            out.stdout.clone(),
        ));
        files.push((
            PathBuf::from(format!("<stderr of {name}>")),
            out.stderr.clone(),
        ));
    }
    let mut found: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut total = 0usize;
    for (channel, secret) in canaries.all() {
        for (path, bytes) in &files {
            let n = occurrences(bytes, secret.as_bytes());
            if n > 0 {
                total += n;
                found
                    .entry(channel)
                    .or_default()
                    .push(format!("{} ({n})", path.display()));
            }
        }
    }
    let bytes_read: usize = files.iter().map(|(_, b)| b.len()).sum();
    println!(
        "canary: {} files and outputs, {bytes_read} bytes read, {total} secret occurrences",
        files.len()
    );
    assert_eq!(total, 0, "planted secrets found: {found:#?}");

    // Each channel carried its secret to where it was redacted.
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let wire = read(&probe_http.join("mcp.jsonl"));
    for marker in [
        "[redacted:header X-Canary-Key]",
        "[redacted:env FITNESS_MCP_BEARER_TOKEN]",
        "[redacted:url password]",
        "[redacted:url query api_key]",
    ] {
        assert!(wire.contains(marker), "{marker} not on the HTTP probe tape");
    }
    assert!(read(&probe_stdio.join("mcp.jsonl")).contains("[redacted:env CANARY_ENV_KEY]"));
    let agent = read(&ask_openai.join("agent.jsonl"));
    assert!(
        agent.contains("[redacted:env OPENAI_API_KEY]"),
        "the model's echo"
    );
    assert!(
        agent.contains("[redacted:env CANARY_ENV_KEY]"),
        "the tool result"
    );
    let agent = read(&ask_anthropic.join("agent.jsonl"));
    assert!(
        agent.contains("[redacted:env ANTHROPIC_API_KEY]"),
        "the model's echo"
    );
    // Records count what they lost, by source, and name the host only.
    let mut records = Vec::new();
    for dir in [&runs, &before_runs, &after_runs] {
        for entry in std::fs::read_dir(dir).expect("runs").flatten() {
            let record = entry.path().join("record.json");
            if record.is_file() {
                let v: Value = serde_json::from_str(&read(&record)).expect("record JSON");
                assert_eq!(v["redactions"]["policy"], "fitness-redact/1", "{record:?}");
                records.push((entry.file_name().to_string_lossy().into_owned(), v));
            }
        }
    }
    assert!(records.len() >= 4, "{}", records.len());
    let http_run = records
        .iter()
        .find(|(_, v)| v["server"]["target"]["kind"] == "url")
        .expect("the HTTP run's record");
    assert!(http_run.0.starts_with("127-0-0-1-"), "{}", http_run.0);
    assert_eq!(http_run.1["server"]["slug"], "127-0-0-1");
    let by_source: Vec<&str> = http_run.1["redactions"]["by_source"]
        .as_array()
        .expect("counts")
        .iter()
        .filter_map(|c| c["source"].as_str())
        .collect();
    assert!(by_source.contains(&"url password"), "{by_source:?}");
    let openai_run = records
        .iter()
        .find(|(_, v)| {
            v["run"]["runner_model"]
                .as_str()
                .is_some_and(|m| m.contains("echo"))
        })
        .expect("the OpenAI run's record");
    assert!(openai_run.1["redactions"]["total"].as_u64() > Some(0));
    assert!(site.join("data/board.json.gz").is_file());
}

/// A URL's user name is a credential where it stands; elsewhere a word
/// such as `postgres` stays readable (in the command, the paths printed,
/// the tools' names), while a token-shaped one is gone from every file and
/// every printed line.
#[test]
fn a_user_name_that_is_a_word_stays_readable_and_one_that_is_a_token_is_gone() {
    let fixture = http_fixture("correct");
    let work = tempfile::tempdir().expect("tempdir");
    let token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
    for user in ["postgres", token] {
        let dir = work.path().join(if user == token { "token" } else { user });
        std::fs::create_dir_all(&dir).unwrap();
        let url = fixture
            .url
            .replacen("http://", &format!("http://{user}@"), 1);
        let out = dir.join(if user == token {
            "suite.json".to_owned()
        } else {
            format!("{user}-suite.json")
        });
        let tape = dir.join("tape");
        let output = run_bounded_in(
            Some(&dir),
            &[],
            &[
                "suite",
                &url,
                "--generator",
                "schema-walk/2",
                "--out",
                s(&out),
                "--tape",
                s(&tape),
            ],
            Duration::from_secs(120),
        );
        let printed = text(&output);
        assert!(output.status.success(), "{printed}");
        let mut files = Vec::new();
        every_byte(&dir, &mut files);
        if user == "postgres" {
            assert!(printed.contains("postgres-suite.json"), "{printed}");
            let wire = std::fs::read_to_string(tape.join("mcp.jsonl")).expect("wire tape");
            let meta = wire.lines().next().expect("meta line");
            assert!(meta.contains("[redacted:url username]@"), "{meta}");
            assert!(!meta.contains("postgres@"), "{meta}");
        } else {
            let mut seen: Vec<String> = files
                .iter()
                .filter(|(_, bytes)| occurrences(bytes, token.as_bytes()) > 0)
                .map(|(p, _)| p.display().to_string())
                .collect();
            if printed.contains(token) {
                seen.push("printed".to_owned());
            }
            assert!(seen.is_empty(), "the token is in {seen:?}");
        }
    }
}
