//! The agent loop end to end: against the in-tree fixture server (stdio) and
//! against `@modelcontextprotocol/server-everything`, with sim runners and
//! with the fake OpenAI-compatible server. The MCP tape and the agent tape
//! must agree on the tool calls (`fitness tape stats`) and the corr_ids must
//! line up.

use crate::common;
use crate::model_fake;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{FITNESS, require_tool, run_bounded};
use fitness_recorder::access::{Access, AccessMode};
use fitness_recorder::mcp::connect::{Session, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::model::agent::{
    AGENT_TAPE_KIND, Budget, CallFailure, ToolMode, TrialEnd, TrialOutcome, TrialSpec, run_trial,
};
use fitness_recorder::model::openai::OpenAiClient;
use fitness_recorder::model::sim::SimClient;
use fitness_recorder::model::types::{ModelClient, PlannedCall, ReferenceHint};
use fitness_recorder::model::{ClientOptions, client_for};
use model_fake::{FakeApi, Reply};
use serde_json::{Value, json};

struct Rig {
    dir: tempfile::TempDir,
    mcp: Tap,
    agent: Tap,
    session: Session,
    tools: Vec<rmcp::model::Tool>,
    /// A sandbox: every call is sent (the read-only test blocks its own).
    access: Access,
}

impl Rig {
    async fn start(program: &str, args: &[&str]) -> Rig {
        Rig::start_with(program, args, Duration::from_secs(30)).await
    }

    async fn start_with(program: &str, args: &[&str], timeout: Duration) -> Rig {
        let dir = tempfile::tempdir().expect("dir");
        let mcp = Tap::create(&dir.path().join("mcp.jsonl"), "test", vec![]).expect("mcp tape");
        let agent = Tap::create_kind(
            &dir.path().join("agent.jsonl"),
            "test",
            vec![],
            AGENT_TAPE_KIND,
        )
        .expect("agent tape");
        let target = Target::Stdio(StdioTarget {
            program: program.to_owned(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            env: vec![],
        });
        let session = Session::connect(&target, mcp.clone(), None, timeout)
            .await
            .expect("connects");
        let tools = session.list_tools().await.expect("tools");
        let access = Access {
            mode: AccessMode::Sandbox,
            writers: fitness_recorder::access::writers(&tools, &|_| false),
        };
        Rig {
            dir,
            mcp,
            agent,
            session,
            tools,
            access,
        }
    }

    async fn fixture() -> Rig {
        Rig::start(FITNESS, &["fixture-server", "correct"]).await
    }

    async fn trial(
        &self,
        model: &dyn ModelClient,
        corr_id: &str,
        prompt: &str,
        mode: ToolMode,
        reference: Option<&ReferenceHint>,
    ) -> TrialOutcome {
        let spec = TrialSpec {
            corr_id,
            access: &self.access,
            prompt,
            instructions: None,
            tools: &self.tools,
            mode,
            reference,
            budget: Budget::default(),
        };
        run_trial(model, Some(&self.session), &spec, &self.agent).await
    }

    async fn finish(self) -> (tempfile::TempDir, PathBuf, PathBuf) {
        self.session.close().await;
        self.mcp.end("done");
        self.agent.end("done");
        let mcp = self.dir.path().join("mcp.jsonl");
        let agent = self.dir.path().join("agent.jsonl");
        (self.dir, mcp, agent)
    }
}

fn sim(profile: &str, seed: u64) -> SimClient {
    SimClient::new(&format!("sim/{profile}").parse().expect("id"), seed).expect("sim")
}

/// `fitness tape stats --json MCP AGENT`: tool rows per plane.
fn plane_tools(mcp: &Path, agent: &Path) -> (Value, Value) {
    let out = run_bounded(
        &[
            "tape",
            "stats",
            "--json",
            mcp.to_str().expect("utf-8"),
            agent.to_str().expect("utf-8"),
        ],
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(stats["planes"]["mcp"]["session"]["skippedLines"], 0);
    assert_eq!(stats["planes"]["agent"]["session"]["skippedLines"], 0);
    (
        stats["planes"]["mcp"]["tools"].clone(),
        stats["planes"]["agent"]["tools"].clone(),
    )
}

/// (name, calls, errors) per tool row.
fn rows(tools: &Value) -> Vec<(String, u64, u64)> {
    let mut r: Vec<_> = tools
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("name").to_owned(),
                t["calls"].as_u64().expect("calls"),
                t["errors"].as_u64().expect("errors"),
            )
        })
        .collect();
    r.sort();
    r
}

/// Every tools/call request and response on the wire carries a corr_id,
/// and the set of those corr_ids matches the agent tape's tool_use corr_ids.
fn wire_corr_ids(mcp: &Path) -> Vec<String> {
    let wire = common::jsonl_lines(mcp);
    let mut call_ids = std::collections::HashMap::new();
    let mut out = Vec::new();
    for l in &wire {
        let raw = &l["raw"];
        if l["dir"] == "in" && raw["method"] == "tools/call" {
            call_ids.insert(raw["id"].to_string(), ());
            out.push(
                l["corr_id"]
                    .as_str()
                    .expect("tools/call has a corr_id")
                    .to_owned(),
            );
        }
        if l["dir"] == "out" && call_ids.contains_key(&raw["id"].to_string()) {
            out.push(l["corr_id"].as_str().expect("its response too").to_owned());
        }
        if l["dir"] == "in" && raw["method"] == "tools/list" {
            assert!(l.get("corr_id").is_none(), "list before any trial: {l}");
        }
    }
    out
}

fn agent_tool_use_corr_ids(agent: &Path) -> Vec<String> {
    common::jsonl_lines(agent)
        .iter()
        .filter(|l| l["type"] == "turn")
        .flat_map(|l| {
            let n = l["blocks"]
                .as_array()
                .expect("blocks")
                .iter()
                .filter(|b| b["type"] == "tool_use" || b["type"] == "tool_result")
                .count();
            std::iter::repeat_n(l["corr_id"].as_str().expect("corr_id").to_owned(), n)
        })
        .collect()
}

#[tokio::test]
async fn sim_diligent_against_the_fixture_tapes_agree_and_corr_ids_line_up() {
    let rig = Rig::fixture().await;
    let diligent = sim("diligent", 0);
    let a = rig
        .trial(
            &diligent,
            "t-add",
            "Use `add` with {\"a\": 40, \"b\": 2}.",
            ToolMode::Live,
            None,
        )
        .await;
    let b = rig
        .trial(
            &diligent,
            "t-echo",
            "Please call `echo` with {\"message\": \"hello there\"}",
            ToolMode::Live,
            None,
        )
        .await;
    // A required argument missing: the server rejects, the sim repairs.
    let c = rig
        .trial(
            &diligent,
            "t-rev",
            "Reverse something with `reverse`.",
            ToolMode::Live,
            None,
        )
        .await;
    assert_eq!(rig.session.corr_id(), None, "cleared after the trial");
    assert_eq!(
        (a.end, a.final_answer.as_deref()),
        (TrialEnd::Answered, Some("42"))
    );
    assert_eq!(b.final_answer.as_deref(), Some("hello there"));
    assert_eq!(c.calls.len(), 2);
    assert!(!c.calls[0].ok);
    assert_eq!(c.calls[0].failure, Some(CallFailure::SchemaReject));
    assert!(c.calls[1].ok, "{:?}", c.calls[1]);
    assert_eq!(c.calls[1].arguments, json!({"text": "example"}));
    assert_eq!(c.final_answer.as_deref(), Some("elpmaxe"));
    for o in [&a, &b, &c] {
        assert_eq!(o.model_reported.as_deref(), Some("sim/diligent"));
        assert_eq!(o.calls_without_usage, 0);
        assert!(o.usage.input_tokens > 0 && o.usage.output_tokens > 0);
        assert_eq!(o.model_calls, o.turns);
    }
    let (_dir, mcp, agent) = rig.finish().await;
    let (m, g) = plane_tools(&mcp, &agent);
    assert_eq!(rows(&m), rows(&g), "mcp {m:#} agent {g:#}");
    assert_eq!(
        rows(&m),
        [
            ("add".into(), 1, 0),
            ("echo".into(), 1, 0),
            ("reverse".into(), 2, 1)
        ]
    );
    assert_eq!(wire_corr_ids(&mcp), agent_tool_use_corr_ids(&agent));
    let agent_lines = common::jsonl_lines(&agent);
    for l in agent_lines
        .iter()
        .filter(|l| l["type"] == "turn" || l["dir"] == "event")
    {
        assert!(
            ["t-add", "t-echo", "t-rev"].contains(&l["corr_id"].as_str().expect("corr_id")),
            "{l}"
        );
    }
    let destructive = agent_lines
        .iter()
        .filter(|l| l["kind"] == "fitness.destructive_call")
        .count();
    // Unannotated: `add` and `reverse` (no reading verb) may write, `echo`
    // reads; a sandbox sends all three and marks each write.
    assert_eq!(
        destructive, 3,
        "one add and two reverse calls, each marked as a write"
    );
}

#[tokio::test]
async fn sim_reference_follows_the_plan_with_a_handle_then_answers_the_key() {
    let rig = Rig::fixture().await;
    let hint = ReferenceHint {
        answer: "cba-7xq".into(),
        expected_tools: vec!["echo".into(), "reverse".into()],
        plan: vec![
            PlannedCall {
                tool: "echo".into(),
                arguments: serde_json::from_value(json!({"message": "qx7-abc"})).expect("map"),
            },
            PlannedCall {
                tool: "reverse".into(),
                arguments: serde_json::from_value(json!({"text": "{{handle:token}}"}))
                    .expect("map"),
            },
        ],
    };
    let reference = sim("reference", 0);
    let o = rig
        .trial(
            &reference,
            "t1::construct",
            "Reverse the echoed token.",
            ToolMode::Live,
            Some(&hint),
        )
        .await;
    assert_eq!(o.final_answer.as_deref(), Some("cba-7xq"));
    assert_eq!(o.calls.len(), 2);
    assert_eq!(o.calls[1].arguments, json!({"text": "qx7-abc"}));
    assert!(o.calls.iter().all(|c| c.ok));
    // Without the hint it is diligent: no backticked tool, a bare word.
    let plain = rig
        .trial(&reference, "t2", "Just answer.", ToolMode::Live, None)
        .await;
    assert_eq!(plain.calls.len(), 0);
    assert_eq!(
        plain.final_answer.as_deref(),
        Some("I don't know which tool to use.")
    );
    let (_dir, mcp, agent) = rig.finish().await;
    let (m, g) = plane_tools(&mcp, &agent);
    assert_eq!(rows(&m), rows(&g));
    assert_eq!(wire_corr_ids(&mcp), agent_tool_use_corr_ids(&agent));
    // The system text is taped as each trial's first turn, the same for
    // both (the reference block follows the prompt, so the system text and
    // tools stay one cacheable prefix); the prompt turn is taped without the
    // reference block: the agent tape shows the calls and the answer, and
    // says that a key and plan were given, but not what they were.
    let text = std::fs::read_to_string(&agent).expect("tape");
    assert!(!text.contains("fitness-reference"));
    let turns: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .filter(|l| l["type"] == "turn")
        .collect();
    let systems: Vec<&Value> = turns.iter().filter(|l| l["role"] == "system").collect();
    assert_eq!(systems.len(), 2, "one system turn per trial");
    assert_eq!(systems[0]["blocks"], systems[1]["blocks"]);
    let prompts: Vec<String> = turns
        .iter()
        .filter(|l| l["role"] == "user" && l["blocks"].to_string().contains("\"text\""))
        .filter(|l| !l["blocks"].to_string().contains("tool_result"))
        .map(|l| l["blocks"].to_string())
        .collect();
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(prompts[0].contains("kept off the tape"), "{}", prompts[0]);
    assert!(!prompts[1].contains("kept off the tape"));
}

#[tokio::test]
async fn stubbed_and_toolless_modes_never_touch_the_server() {
    let rig = Rig::fixture().await;
    let diligent = sim("diligent", 0);
    let stub = rig
        .trial(
            &diligent,
            "s1",
            "Use `add` with {\"a\": 1, \"b\": 1}.",
            ToolMode::StubbedEmpty,
            None,
        )
        .await;
    assert_eq!(stub.calls.len(), 1);
    assert!(stub.calls[0].ok);
    assert_eq!(
        stub.final_answer.as_deref(),
        Some("The tool returned nothing.")
    );
    let none = rig
        .trial(&diligent, "n1", "What is 12 * 7?", ToolMode::None, None)
        .await;
    assert_eq!(none.calls.len(), 0);
    assert_eq!(none.final_answer.as_deref(), Some("84"));
    let (_dir, mcp, _agent) = rig.finish().await;
    let wire = std::fs::read_to_string(&mcp).expect("tape");
    assert!(!wire.contains("tools/call"), "no call reached the server");
}

#[tokio::test]
async fn a_turn_budget_ends_the_trial_and_unmade_calls_are_budget_exhausted() {
    let rig = Rig::fixture().await;
    let spec = TrialSpec {
        corr_id: "b1",
        access: &rig.access,
        prompt: "Use `add` with {\"a\": 1, \"b\": 1}.",
        instructions: Some("Numbers only."),
        tools: &rig.tools,
        mode: ToolMode::Live,
        reference: None,
        budget: Budget {
            max_turns: 1,
            ..Budget::default()
        },
    };
    let o = run_trial(&sim("diligent", 0), Some(&rig.session), &spec, &rig.agent).await;
    assert_eq!(o.end, TrialEnd::TurnBudget);
    assert_eq!(o.final_answer, None);
    assert_eq!(o.calls.len(), 1);
    assert_eq!(o.calls[0].failure, Some(CallFailure::BudgetExhausted));
    let tokens = TrialSpec {
        corr_id: "b2",
        budget: Budget {
            max_tokens: 10,
            ..Budget::default()
        },
        ..spec
    };
    let o = run_trial(&sim("diligent", 0), Some(&rig.session), &tokens, &rig.agent).await;
    assert_eq!(o.end, TrialEnd::TokenBudget);
    let (_dir, mcp, _agent) = rig.finish().await;
    assert!(
        !std::fs::read_to_string(&mcp)
            .expect("tape")
            .contains("tools/call")
    );
}

#[tokio::test]
async fn sim_careless_sometimes_fails_first_and_always_recovers() {
    let rig = Rig::fixture().await;
    let careless = sim("careless", 11);
    let mut first_try = 0;
    let mut eventually = 0;
    let mut first_args = Vec::new();
    for i in 0..20 {
        let o = rig
            .trial(
                &careless,
                &format!("c{i}"),
                "Use `add` with {\"a\": 2, \"b\": 5}.",
                ToolMode::Live,
                None,
            )
            .await;
        first_try += usize::from(o.calls.first().is_some_and(|c| c.ok));
        first_args.push(o.calls[0].arguments.clone());
        eventually += usize::from(o.final_answer.as_deref() == Some("7"));
    }
    assert_eq!(eventually, 20);
    assert!((8..20).contains(&first_try), "{first_try} of 20 first-try");
    // Deterministic: the same seed and corr_ids make the same choices.
    for (i, args) in first_args.iter().enumerate() {
        let again = rig
            .trial(
                &sim("careless", 11),
                &format!("c{i}"),
                "Use `add` with {\"a\": 2, \"b\": 5}.",
                ToolMode::Live,
                None,
            )
            .await;
        assert_eq!(&again.calls[0].arguments, args, "c{i}");
    }
    rig.finish().await;
}

#[tokio::test]
async fn sim_diligent_against_server_everything() {
    let bin = require_tool("mcp-server-everything");
    let rig = Rig::start(bin.to_str().expect("utf-8"), &[]).await;
    let model = client_for(
        &"sim/diligent".parse().expect("id"),
        &ClientOptions::default(),
    )
    .expect("sim client");
    let o = rig
        .trial(
            model.as_ref(),
            "ev-echo",
            "Call `echo` with {\"message\": \"fitness\"}",
            ToolMode::Live,
            None,
        )
        .await;
    assert_eq!(o.final_answer.as_deref(), Some("Echo: fitness"));
    let sum = rig
        .trial(
            model.as_ref(),
            "ev-sum",
            "Call `get-sum` with {\"a\": 2, \"b\": 3}",
            ToolMode::Live,
            None,
        )
        .await;
    assert!(
        sum.final_answer.as_deref().is_some_and(|a| a.contains('5')),
        "{sum:?}"
    );
    let (_dir, mcp, agent) = rig.finish().await;
    let (m, g) = plane_tools(&mcp, &agent);
    assert_eq!(rows(&m), rows(&g));
    assert_eq!(rows(&m).iter().map(|r| r.1).sum::<u64>(), 2);
    assert_eq!(wire_corr_ids(&mcp), agent_tool_use_corr_ids(&agent));
}

#[tokio::test]
async fn the_fake_openai_server_drives_the_fixture_and_tapes_agree() {
    let fake = FakeApi::start(vec![
        Reply::json(json!({"model": "gpt-4o-2024-08-06",
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 20, \"b\": 22}"}},
                {"id": "call_b", "type": "function", "function": {"name": "echo", "arguments": "{\"message\": 5"}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20}})),
        Reply::json(json!({"model": "gpt-4o-2024-08-06",
            "choices": [{"message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}]})),
    ])
    .await;
    let client = OpenAiClient::new(
        &"openai/gpt-4o".parse().expect("id"),
        Some("sk-test".into()),
        &format!("{}/v1", fake.base),
        &ClientOptions::default(),
    )
    .expect("client");
    let rig = Rig::fixture().await;
    let o = rig
        .trial(
            &client,
            "oa-1",
            "What is 20 + 22? Use the tools.",
            ToolMode::Live,
            None,
        )
        .await;
    assert_eq!(o.final_answer.as_deref(), Some("42"));
    assert_eq!(o.model_calls, 2);
    assert_eq!(o.calls_without_usage, 1, "the second reply had no usage");
    assert_eq!(o.usage.input_tokens, 300);
    assert_eq!(o.calls.len(), 2);
    assert!(o.calls[0].ok);
    assert_eq!(
        o.calls[1].failure,
        Some(CallFailure::SchemaReject),
        "invalid JSON arguments"
    );
    let seen = fake.seen();
    let msgs = seen[1].body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = msgs
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(msgs[3]["tool_call_id"], "call_a");
    assert_eq!(msgs[3]["content"], "42");
    assert_eq!(msgs[4]["tool_call_id"], "call_b");
    assert_eq!(
        msgs[2]["tool_calls"][1]["function"]["arguments"], "{\"message\": 5",
        "the model's invalid arguments go back as it wrote them"
    );
    let tool_names: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(tool_names.len(), 3);
    let (_dir, mcp, agent) = rig.finish().await;
    let (m, g) = plane_tools(&mcp, &agent);
    // The invalid call never reached the server: the agent plane has one
    // more (errored) echo call than the wire.
    assert_eq!(rows(&m), [("add".into(), 1, 0)]);
    assert_eq!(rows(&g), [("add".into(), 1, 0), ("echo".into(), 1, 1)]);
    let wire = wire_corr_ids(&mcp);
    assert_eq!(wire, ["oa-1", "oa-1"]);
    let agent_lines = common::jsonl_lines(&agent);
    let requests = agent_lines
        .iter()
        .filter(|l| l["kind"] == "llm.request")
        .count();
    assert_eq!(requests, 2);
    assert!(
        !std::fs::read_to_string(&agent)
            .expect("tape")
            .contains("sk-test")
    );
}

#[tokio::test]
async fn hanging_and_crashing_servers_are_protocol_errors_and_the_trial_still_ends() {
    for (fixture, corr) in [("hang", "h1"), ("crash", "x1")] {
        let rig = Rig::start_with(
            FITNESS,
            &["fixture-server", fixture],
            Duration::from_secs(2),
        )
        .await;
        let started = std::time::Instant::now();
        let o = rig
            .trial(
                &sim("diligent", 0),
                corr,
                "Use `add` with {\"a\": 1, \"b\": 2}.",
                ToolMode::Live,
                None,
            )
            .await;
        assert!(started.elapsed() < Duration::from_secs(20), "{fixture}");
        assert_eq!(o.end, TrialEnd::Answered, "{fixture}");
        assert!(!o.calls.is_empty(), "{fixture}");
        assert!(
            o.calls
                .iter()
                .all(|c| !c.ok && c.failure == Some(CallFailure::ProtocolError)),
            "{fixture}: {:?}",
            o.calls
        );
        let (_dir, _mcp, agent) = rig.finish().await;
        let text = std::fs::read_to_string(&agent).expect("tape");
        assert!(text.contains("\"is_error\":true"), "{fixture}");
    }
}

#[tokio::test]
async fn a_read_only_trial_withholds_every_call_that_may_write() {
    let mut rig = Rig::fixture().await;
    rig.access.mode = AccessMode::ReadOnly;
    assert!(rig.access.blocks("add"), "{:?}", rig.access.writers);
    let o = rig
        .trial(
            &sim("diligent", 0),
            "r1",
            "Use the `add` tool with arguments {\"a\": 2, \"b\": 3} and report the result.",
            ToolMode::Live,
            None,
        )
        .await;
    assert!(!o.calls.is_empty());
    assert!(
        o.calls.iter().all(|c| c.blocked && c.writes && !c.ok),
        "{:?}",
        o.calls
    );
    let (_dir, mcp, agent) = rig.finish().await;
    // Nothing reached the server.
    let wire = std::fs::read_to_string(&mcp).expect("tape");
    assert!(!wire.contains("tools/call"), "{wire}");
    // The agent was told why, the tape says so, and the tape statistics
    // count no tool error: the call never reached a tool.
    let agent_lines = common::jsonl_lines(&agent);
    let blocked: Vec<&Value> = agent_lines
        .iter()
        .filter(|l| l["kind"] == "fitness.blocked_call")
        .collect();
    assert_eq!(blocked.len(), o.calls.len());
    assert_eq!(blocked[0]["raw"]["tool"], "add");
    let result = agent_lines
        .iter()
        .flat_map(|l| l["blocks"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .expect("a tool result");
    assert!(
        result
            .to_string()
            .contains("blocked by the measurement harness"),
        "{result}"
    );
    let (_m, g) = plane_tools(&mcp, &agent);
    let errors: u64 = g
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["errors"].as_u64())
        .sum();
    assert_eq!(errors, 0, "a withheld call is not a tool error: {g:#}");
}

/// A reading tool given a statement that changes data (a tool that runs
/// any SQL would run it) is withheld in a read-only trial, and the agent is
/// told why; the same tool with a reading statement is called.
#[tokio::test]
async fn a_read_only_trial_withholds_a_call_whose_arguments_write() {
    let mut rig = Rig::fixture().await;
    rig.access.mode = AccessMode::ReadOnly;
    assert!(!rig.access.blocks("echo"), "{:?}", rig.access.writers);
    let o = rig
        .trial(
            &sim("diligent", 0),
            "s1",
            "Use `echo` with {\"message\": \"DELETE FROM orders WHERE id = 1\"}.",
            ToolMode::Live,
            None,
        )
        .await;
    assert!(!o.calls.is_empty());
    assert!(o.calls.iter().all(|c| c.blocked && !c.ok), "{:?}", o.calls);
    let o = rig
        .trial(
            &sim("diligent", 0),
            "s2",
            "Use `echo` with {\"message\": \"SELECT * FROM orders\"}.",
            ToolMode::Live,
            None,
        )
        .await;
    assert!(o.calls.iter().any(|c| c.ok && !c.blocked), "{:?}", o.calls);
    let (_dir, mcp, agent) = rig.finish().await;
    let wire = std::fs::read_to_string(&mcp).expect("tape");
    assert!(!wire.contains("DELETE FROM"), "{wire}");
    assert!(wire.contains("SELECT * FROM orders"), "{wire}");
    let told = std::fs::read_to_string(&agent).expect("tape");
    assert!(
        told.contains("carries a statement that changes data"),
        "{told}"
    );
}

#[tokio::test]
async fn a_turn_past_its_call_limit_has_the_surplus_refused_and_never_sent() {
    let calls: Vec<Value> = (0..5)
        .map(|i| {
            json!({"id": format!("call_{i}"), "type": "function",
            "function": {"name": "add", "arguments": format!("{{\"a\": {i}, \"b\": 1}}")}})
        })
        .collect();
    let fake = FakeApi::start(vec![
        Reply::json(json!({"model": "m",
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls},
                "finish_reason": "tool_calls"}]})),
        Reply::json(json!({"model": "m",
            "choices": [{"message": {"role": "assistant", "content": "2"}, "finish_reason": "stop"}]})),
    ])
    .await;
    let client = OpenAiClient::new(
        &"openai/m".parse().expect("id"),
        None,
        &format!("{}/v1", fake.base),
        &ClientOptions::default(),
    )
    .expect("client");
    let rig = Rig::fixture().await;
    let spec = TrialSpec {
        corr_id: "many",
        access: &rig.access,
        prompt: "Add.",
        instructions: None,
        tools: &rig.tools,
        mode: ToolMode::Live,
        reference: None,
        budget: Budget {
            max_calls_per_turn: 2,
            ..Budget::default()
        },
    };
    let o = run_trial(&client, Some(&rig.session), &spec, &rig.agent).await;
    assert_eq!(o.final_answer.as_deref(), Some("2"));
    assert_eq!(o.calls.len(), 5);
    assert!(o.calls[..2].iter().all(|c| c.ok));
    assert!(
        o.calls[2..]
            .iter()
            .all(|c| c.failure == Some(CallFailure::BudgetExhausted)),
        "{:?}",
        o.calls
    );
    // The model was told each surplus call was refused.
    let seen = fake.seen();
    let msgs = seen[1].body["messages"].as_array().expect("messages");
    let refused = msgs
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("refused by the harness"))
        })
        .count();
    assert_eq!(refused, 3);
    let (_dir, mcp, agent) = rig.finish().await;
    assert_eq!(
        wire_corr_ids(&mcp),
        ["many"; 4],
        "two calls and their responses reached the wire"
    );
    let events = common::jsonl_lines(&agent)
        .into_iter()
        .filter(|l| l["kind"] == "fitness.refused_call")
        .count();
    assert_eq!(events, 3);
    // The refused calls are no tool's errors in the tape statistics.
    let (_, g) = plane_tools(&mcp, &agent);
    assert_eq!(rows(&g), [("add".into(), 5, 0)]);
}
