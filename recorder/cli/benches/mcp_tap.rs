//! Cost of the wire tap: sequential `tools/call` round trips to the in-tree
//! stdio fixture, tapped (our child bridge writing `mcp.jsonl`, flushed per
//! line) against untapped (rmcp's own `TokioChildProcess`, no bridge).
//!
//! `cargo bench -p fitness --bench mcp_tap [-- CALLS]` (default
//! 10,000 calls each). Both run in one process, interleaved in rounds so a
//! load spike on a shared machine hits both. Prints one JSON line with the
//! ratio tapped/untapped; the goal is at most 1.10.

use std::time::{Duration, Instant};

use fitness_recorder::mcp::stdio::{StdioChild, StdioTarget};
use fitness_recorder::mcp::tap::Tap;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;

const FITNESS: &str = env!("CARGO_BIN_EXE_fitness");
const ROUNDS: usize = 10;

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

async fn calls(client: &RunningService<RoleClient, ()>, n: usize) -> Duration {
    let mut args = serde_json::Map::new();
    args.insert("message".into(), "benchmark".into());
    let started = Instant::now();
    for _ in 0..n {
        let params = CallToolRequestParams::new("echo").with_arguments(args.clone());
        let result = client.call_tool(params).await;
        assert!(
            result.is_ok_and(|r| r.is_error != Some(true)),
            "echo failed"
        );
    }
    started.elapsed()
}

fn main() -> anyhow::Result<()> {
    let total: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let per_round = (total / ROUNDS).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let dir = tempfile::tempdir()?;
        let tape_path = dir.path().join("mcp.jsonl");
        let target = StdioTarget {
            program: FITNESS.into(),
            args: vec!["fixture-server".into(), "correct".into()],
            env: Vec::new(),
        };
        let tap = Tap::create(&tape_path, "bench", target.command_line())?;
        let (pipe, mut child) = StdioChild::spawn(&target, tap.clone(), Some("bench".into()))?;
        let tapped = ().serve_with_lifecycle(pipe, lifecycle()).await?;

        let mut cmd = tokio::process::Command::new(FITNESS);
        cmd.args(["fixture-server", "correct"]);
        let untapped = ().serve_with_lifecycle(TokioChildProcess::new(cmd)?, lifecycle()).await?;

        // Warm both paths before timing.
        calls(&tapped, 200).await;
        calls(&untapped, 200).await;
        let (mut t_tapped, mut t_untapped) = (Duration::ZERO, Duration::ZERO);
        for round in 0..ROUNDS {
            if round % 2 == 0 {
                t_tapped += calls(&tapped, per_round).await;
                t_untapped += calls(&untapped, per_round).await;
            } else {
                t_untapped += calls(&untapped, per_round).await;
                t_tapped += calls(&tapped, per_round).await;
            }
        }
        let _ = tapped.cancel().await;
        let _ = untapped.cancel().await;
        child.kill().await;
        tap.end("bench");
        let tape_lines = std::fs::read_to_string(&tape_path)?.lines().count();
        let n = per_round * ROUNDS;
        let ratio = t_tapped.as_secs_f64() / t_untapped.as_secs_f64();
        println!(
            "{}",
            serde_json::json!({
                "bench": "mcp_tap",
                "calls": n,
                "tappedMs": t_tapped.as_millis() as u64,
                "untappedMs": t_untapped.as_millis() as u64,
                "tappedUsPerCall": t_tapped.as_micros() as f64 / n as f64,
                "untappedUsPerCall": t_untapped.as_micros() as f64 / n as f64,
                "ratio": (ratio * 1000.0).round() / 1000.0,
                "goal": 1.10,
                "tapeLines": tape_lines,
            })
        );
        anyhow::Ok(())
    })
}
