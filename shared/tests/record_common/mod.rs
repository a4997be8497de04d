//! Shared helpers for the record and integrity tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::PathBuf;

use fitness_shared::record::*;
use fitness_shared::tape::Plane;
use serde_json::json;

/// The anchor board fixtures beside the project root. Fails loudly if absent.
pub fn anchor_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/anchor-board"
    ));
    assert!(
        dir.join("runs.json").is_file(),
        "anchor fixtures missing: expected {}/runs.json (fixtures/anchor-board at the workspace root)",
        dir.display()
    );
    dir
}

pub fn anchor_runs() -> serde_json::Value {
    let path = anchor_dir().join("runs.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("runs.json is JSON")
}

pub fn interval(k: u64, n: u64, low: f64, high: f64) -> Interval {
    Interval {
        rate: k as f64 / n as f64,
        low,
        high,
        k,
        n,
    }
}

/// A scored record that uses every optional field.
pub fn scored_record() -> RunRecord {
    RunRecord {
        schema: fitness_shared::RECORD_SCHEMA.to_owned(),
        run: RunIdentity {
            id: "demo-good-2026-11-30T00-00-00-000Z".into(),
            started_at: "2026-11-30T00:00:00.000Z".into(),
            harness: Producer {
                name: "fitness".into(),
                version: "0.1.0".into(),
            },
            suite_hash: "ab".repeat(32),
            runner_model: "sim/good".into(),
            runner_reported: None,
            judge_model: "sim/judge".into(),
            generator: Some("schema-walk/1".into()),
            attempt: Some(Attempt {
                index: 2,
                of: 2,
                others: vec!["demo-good-2026-11-29T00-00-00-000Z".into()],
            }),
            task_budget: Some(20_000),
            rate_waits: None,
        },
        server: ServerIdentity {
            target: ServerTarget::Command {
                argv: vec!["demo-server".into(), "--good".into()],
            },
            slug: "demo-good".into(),
            era: Era::Modern,
            negotiated_version: Some("2026-07-28".into()),
            transport: TransportShape::Stdio,
            sessions: Sessions::Sessionless,
            credential_context: CredentialContext::OwnerKey,
            credential: None,
            surface_delta: None,
            server_info: Some(json!({"name": "demo", "version": "1"})),
            capabilities: Some(json!({"tools": {}})),
            instructions: Some("Be kind.".into()),
            discover: Some(json!({"ttlMs": 0, "cacheScope": "private"})),
        },
        probes: Probes {
            unreachable: None,
            spec_currency: Some("2026-07-28".into()),
            findings: vec![
                Probe {
                    id: "spec-currency".into(),
                    status: ProbeStatus::Pass,
                    detail: "negotiated 2026-07-28".into(),
                    evidence: vec!["probe::spec-currency".into()],
                    observed: None,
                },
                Probe {
                    id: "bogus-version-accepted".into(),
                    status: ProbeStatus::Fail,
                    detail: "echoed 1999-01-01 back".into(),
                    evidence: vec!["probe::bogus-version".into()],
                    observed: Some(json!({"status": 200})),
                },
                Probe {
                    id: "origin-check".into(),
                    status: ProbeStatus::Unknown {
                        reason: "stdio has no Origin header".into(),
                    },
                    detail: "not applicable to stdio".into(),
                    evidence: vec![],
                    observed: None,
                },
            ],
        },
        access: None,
        tool_list: Some(ToolListCost::measure(
            "sim/good",
            true,
            &[(900, 300), (910, 305)],
        )),
        preregistration: PreRegistration {
            hash: Some("cd".repeat(32)),
            n_tasks: Some(12),
            reps: Some(3),
            alpha: Some(0.05),
            construct_threshold: Some(0.9),
            null_kill_ratio: Some(0.5),
            min_admission_rate: Some(0.25),
            min_tasks: Some(8),
            detectable_rate: Some(0.8),
            planned_power: Some(0.8),
            extension_size: 6,
            max_extensions: 2,
            seed: Some(42),
            runner_model: Some("sim/good".into()),
            judge_model: Some("sim/judge".into()),
            generator: Some("schema-walk/1".into()),
            aimed_mix: None,
            null_screen: Some(true),
            conformance: None,
            conformance_baseline: None,
            credential_context: Some(CredentialContext::OwnerKey),
            access: None,
            restore: None,
            operator_hints: None,
            input: None,
            screen_protocol: Some("the screen".into()),
            extension_protocol: Some("6 tasks per batch, at most 2.".into()),
            max_error_rate: Some(0.05),
            max_turns: Some(12),
            max_tokens: Some(200_000),
            max_calls_per_turn: Some(16),
            max_output_tokens: Some(1024),
            concurrency: Some(4),
            overgen_factor: Some(2.0),
            request_timeout_ms: Some(20_000),
            model_timeout_ms: Some(120_000),
            max_model_calls: None,
            max_tape_bytes: Some(256 * 1024 * 1024),
        },
        suite: SuiteLedger {
            candidates: Some(30),
            admitted: Some(20),
            tasks: Some(12),
            rejected_by_rule: vec![
                RuleRejection {
                    rule: "answer-leak".into(),
                    count: 4,
                    example: None,
                },
                RuleRejection {
                    rule: "unknown-tool".into(),
                    count: 6,
                    example: None,
                },
            ],
            trimmed_surplus: Some(7),
            null_screened: Some(NullScreenCount {
                screened: 20,
                dropped: 1,
                errors: 0,
            }),
            screen_skipped: None,
            candidates_file: None,
            quality: None,
            judge_calls: None,
            discovery: None,
            act: None,
            limitation: None,
        },
        gates: Gates {
            order: vec![
                "protocol_hygiene".into(),
                "structural".into(),
                "answer_leak".into(),
                "suite_size".into(),
                "plan_power".into(),
                "null_baseline".into(),
                "construct".into(),
            ],
            records: vec![
                gate(
                    "protocol_hygiene",
                    CostTier::Free,
                    GateDetail::ProtocolHygiene {
                        failed: vec!["bogus-version-accepted".into()],
                    },
                ),
                gate(
                    "structural",
                    CostTier::Free,
                    GateDetail::Structural {
                        n_requested: Some(30),
                        n_generated: Some(20),
                        n_tasks: Some(12),
                        admission_rate: Some(0.6667),
                        min_admission_rate: Some(0.25),
                        min_generated: Some(8),
                        explain: Some("ok".into()),
                    },
                ),
                gate(
                    "answer_leak",
                    CostTier::Free,
                    GateDetail::AnswerLeak {
                        leaks: vec![],
                        at_generation: vec![json!({"taskId": "t1", "phrase": "42"})],
                    },
                ),
                gate(
                    "suite_size",
                    CostTier::Free,
                    GateDetail::SuiteSize {
                        n_tasks: 12,
                        min_tasks: 8,
                        tool_count: Some(4),
                    },
                ),
                gate(
                    "plan_power",
                    CostTier::Free,
                    GateDetail::PlanPower {
                        required_n: 78,
                        actual_n: 36,
                        threshold: 0.9,
                        detectable_rate: 0.8,
                        achieved_power: 0.5,
                        explain: Some(
                            "A flawless reference agent can publish a pass at 36 pooled trials."
                                .into(),
                        ),
                    },
                ),
                gate(
                    "null_baseline",
                    CostTier::Cheap,
                    GateDetail::NullBaseline {
                        rates: vec![NullRate {
                            label: "no-tools".into(),
                            k: 0,
                            n: 36,
                            rate: 0.0,
                            errors: 0,
                        }],
                        t_null: Some(0.0),
                        t_agent: Some(0.9),
                        kill_threshold: Some(0.45),
                        ratio: Some(0.5),
                        percentile: Some(95),
                        decision: Some("PROCEED".into()),
                        explain: None,
                    },
                ),
                GateRecord {
                    verdict: Some(GateVerdict {
                        outcome: VerdictOutcome::Pass,
                        k: 47,
                        n: 48,
                        threshold: 0.9,
                        alpha: 0.05,
                        p_value: 0.99,
                    }),
                    ..gate(
                        "construct",
                        CostTier::Paid,
                        GateDetail::Construct {
                            n: 48,
                            n_intended: Some(48),
                            errors: 0,
                            max_error_rate: Some(0.05),
                            compromised: false,
                            reps: Some(3),
                            published: Some(PublishedVerdict {
                                outcome: VerdictOutcome::Pass,
                                raw_outcome: VerdictOutcome::Pass,
                                downgraded: false,
                                wilson_low: 0.89,
                                wilson_high: 0.99,
                                required_n: 78,
                                achieved_power: 0.6,
                                reason: "ok".into(),
                            }),
                            pooled: Some(Count { k: 47, n: 48 }),
                            extensions_consumed: 1,
                            tape_reading: None,
                        },
                    )
                },
            ],
            refused_at: None,
        },
        extensions: vec![ExtensionBatch {
            index: 1,
            gate: "construct".into(),
            tasks_added: 4,
            trials_added: 12,
            pooled_before: Count { k: 33, n: 36 },
            pooled_after: Count { k: 44, n: 48 },
            verdict_before: VerdictOutcome::Extend,
            verdict_after: VerdictOutcome::Pass,
            seed: Some(1001),
            batch_suite_hash: Some("ef".repeat(32)),
            task_ids: vec!["e1-a".into(), "e1-b".into(), "e1-c".into(), "e1-d".into()],
            generated: Some(6),
            dropped: Some(BatchDrops {
                null_screen: 1,
                answer_leak: 0,
                admission: 1,
                duplicate: 0,
                screen_calls: 4,
                screen_errors: 1,
                judge_calls: 0,
                judge_errors: 0,
            }),
            short: false,
        }],
        outcome: Outcome::Scored,
        score: Some(Score {
            runner_model: "sim/good".into(),
            first_try: interval(40, 48, 0.7, 0.92),
            eventual: interval(45, 48, 0.83, 0.98),
            mean_calls_per_completed_task: Some(1.5),
            mean_tokens_per_completed_task: Some(1234.5),
            mean_cost_per_completed_task_usd: Some(0.01),
            destructive_without_confirmation: 1,
            tools: vec![ToolScore {
                tool: "search".into(),
                calls: 60,
                errors: 2,
                failure_classes: json!({"protocol-error": 1, "execution-error-recovered": 1})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                p50_ms: Some(12),
                p95_ms: Some(80),
                declared_destructive: false,
            }],
            tasks: vec![TaskResult {
                task_id: "t1".into(),
                first_try_success: true,
                success: true,
                tool_calls: 2,
                mrtr_rounds: 0,
                input_tokens: 1000,
                output_tokens: 100,
                cost_usd: Some(0.002),
                failure: None,
                destructive_without_confirmation: 0,
                reps: Some(2),
                reps_succeeded: Some(2),
                first_try_by_rep: vec![true, false],
                kind: None,
                shape: None,
            }],
            consistency: Some(Consistency {
                tasks: 1,
                reps: 2,
                every_rep: fitness_shared::stats::wilson(1, 1, 0.95),
                flipping: 0,
                never: 0,
            }),
            per_kind: Vec::new(),
            per_shape: Vec::new(),
            ambiguous_parameters: vec![json!({"tool": "search", "param": "q"})],
            schema_drift: Some(json!({"checked": true, "drifted": false})),
        }),
        cost: Cost::Floor {
            usd: 0.5,
            runner_usd: Some(0.4),
            judge_usd: Some(0.1),
            reasons: vec!["2 judge calls threw before reporting usage".into()],
        },
        notes: Notes {
            standing: Some(StandingNotesRef {
                set_id: format!("sha256:{}", "01".repeat(32)),
                count: 3,
            }),
            own: vec!["The screen deleted 1 of 20 candidates.".into()],
            score: vec!["Scored on the pooled suite.".into()],
        },
        tapes: vec![
            TapeRef {
                plane: Plane::Mcp,
                path: "mcp.jsonl".into(),
                sha256: "0".repeat(64),
                bytes: 10,
            },
            TapeRef {
                plane: Plane::Agent,
                path: "tapes/agent.jsonl".into(),
                sha256: "f".repeat(64),
                bytes: 20,
            },
        ],
        trace_links: Some(TraceLinks {
            mcp: Some("https://example.invalid/mcp.jsonl".into()),
            agent: Some("https://example.invalid/agent.jsonl".into()),
            viewer: None,
        }),
        trace_stats: Some(json!({"schema": "mcp-tape.stats/1", "planes": {}})),
        imported: Some(ImportProvenance {
            from_schema: "fitness-report/1".into(),
            source_sha256: "9".repeat(64),
            kept: json!({"judgeUsage": {"calls": 1}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        }),
        findings: Vec::new(),
        proposals: Vec::new(),
        rewrite: None,
        redactions: None,
        conformance: None,
        input_requests: None,
        traces: None,
        signature: None,
    }
}

pub fn gate(id: &str, cost_tier: CostTier, detail: GateDetail) -> GateRecord {
    GateRecord {
        id: id.into(),
        cost_tier,
        ok: true,
        verdict: None,
        reason: "ok".into(),
        detail,
        source_detail: None,
    }
}

/// The scored record turned into a refusal at the construct gate.
pub fn refusal_record(outcome: Outcome) -> RunRecord {
    let mut r = scored_record();
    r.outcome = outcome;
    r.score = None;
    r.gates.refused_at = Some("construct".into());
    if let Some(g) = r.gates.records.iter_mut().find(|g| g.id == "construct") {
        g.ok = false;
        g.reason = "below_min_rate".into();
        g.verdict = Some(GateVerdict {
            outcome: VerdictOutcome::Fail,
            k: 0,
            n: 12,
            threshold: 0.9,
            alpha: 0.05,
            p_value: 1e-12,
        });
    }
    r.cost = Cost::None {
        why: "the sim runner has no price".into(),
    };
    r
}
