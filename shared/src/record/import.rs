//! Import of `fitness-report/1` records into `fitness-report/2`.
//!
//! Everything the board and the record page show survives: outcome, every
//! gate with its numbers and reason (plus its original detail verbatim),
//! probes, intervals, cost (total or floor, with reasons), generator and
//! runner, extension ledger, notes, trace links and trace statistics. Nothing
//! is guessed: a field the source did not carry stays absent.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::*;
use super::v1::*;
use crate::integrity::{self, IntegrityError};

/// Why a v1 record could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("input is not a JSON array of records or a single record")]
    NotRecords,
    #[error("record {index}: not a fitness-report/1 record: {source}")]
    Shape {
        index: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("record {index}: schema is {found:?}, expected \"fitness-report/1\"")]
    Schema { index: usize, found: String },
    #[error("run {run}: {what}")]
    Field { run: String, what: String },
    #[error("run {run}: {source}")]
    Integrity {
        run: String,
        #[source]
        source: IntegrityError,
    },
    #[error("run {run}: imported record fails validation: {source}")]
    Invalid {
        run: String,
        #[source]
        source: super::RecordError,
    },
}

/// The result of importing a set of v1 records.
#[derive(Debug, Clone)]
pub struct ImportSet {
    /// In source order.
    pub records: Vec<RunRecord>,
    /// Standing-notes sets by set id (`sha256:<hex>`).
    pub standing_notes: BTreeMap<String, StandingNotesSet>,
}

/// Import a `runs.json` document: an array of v1 records (or one record).
///
/// Standing notes and attempts are properties of the set, so the set is
/// imported together: a note is standing when every run of the same generator
/// carries it and there are at least two such runs; attempts are numbered per
/// server slug, oldest first.
pub fn import_runs(doc: &Value) -> Result<ImportSet, ImportError> {
    let items: Vec<&Value> = match doc {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![doc],
        _ => return Err(ImportError::NotRecords),
    };
    let mut parsed = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let found = item.get("schema").and_then(Value::as_str).unwrap_or("");
        if found != crate::RECORD_SCHEMA_V1 {
            return Err(ImportError::Schema {
                index,
                found: found.to_owned(),
            });
        }
        let record: RecordV1 = serde_json::from_value((*item).clone())
            .map_err(|source| ImportError::Shape { index, source })?;
        parsed.push(record);
    }
    let standing = standing_notes(&parsed)?;
    let attempts = attempts(&parsed);
    let mut records = Vec::with_capacity(parsed.len());
    for (i, (source, value)) in parsed.iter().zip(items).enumerate() {
        let set = standing.by_generator.get(generator_label(source));
        let record = convert(source, value, set, attempts[i].clone())?;
        records.push(record);
    }
    Ok(ImportSet {
        records,
        standing_notes: standing.sets,
    })
}

fn generator_label(r: &RecordV1) -> &str {
    r.run
        .generator_version
        .as_deref()
        .filter(|g| !g.is_empty())
        .unwrap_or("generator not recorded")
}

struct Standing {
    sets: BTreeMap<String, StandingNotesSet>,
    /// generator label -> (set id, notes)
    by_generator: BTreeMap<String, (String, Vec<String>)>,
}

fn standing_notes(runs: &[RecordV1]) -> Result<Standing, ImportError> {
    let mut groups: BTreeMap<&str, Vec<&RecordV1>> = BTreeMap::new();
    for r in runs {
        groups.entry(generator_label(r)).or_default().push(r);
    }
    let mut sets = BTreeMap::new();
    let mut by_generator = BTreeMap::new();
    for (generator, group) in groups {
        if group.len() < 2 {
            continue;
        }
        let mut common: Vec<String> = Vec::new();
        for note in &group[0].methods {
            if !common.contains(note) && group.iter().all(|r| r.methods.contains(note)) {
                common.push(note.clone());
            }
        }
        if common.is_empty() {
            continue;
        }
        let set = StandingNotesSet {
            generator: generator.to_owned(),
            notes: common.clone(),
        };
        let value = serde_json::to_value(&set).unwrap_or(Value::Null);
        let hash = integrity::record_hash(&value).map_err(|source| ImportError::Integrity {
            run: format!("standing notes of {generator}"),
            source,
        })?;
        let id = format!("sha256:{hash}");
        sets.insert(id.clone(), set);
        by_generator.insert(generator.to_owned(), (id, common));
    }
    Ok(Standing { sets, by_generator })
}

fn attempts(runs: &[RecordV1]) -> Vec<Option<Attempt>> {
    let mut by_slug: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        by_slug.entry(r.server.slug.as_str()).or_default().push(i);
    }
    let mut out = vec![None; runs.len()];
    for (_, mut idx) in by_slug {
        // Oldest first; ties keep file order (the sort is stable).
        idx.sort_by(|a, b| runs[*a].run.started_at.cmp(&runs[*b].run.started_at));
        let of = idx.len() as u32;
        for (pos, &i) in idx.iter().enumerate() {
            let others = idx
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| runs[j].run.id.clone())
                .collect();
            out[i] = Some(Attempt {
                index: pos as u32 + 1,
                of,
                others,
            });
        }
    }
    out
}

fn field(run: &str, what: impl Into<String>) -> ImportError {
    ImportError::Field {
        run: run.to_owned(),
        what: what.into(),
    }
}

fn convert(
    r: &RecordV1,
    source: &Value,
    standing: Option<&(String, Vec<String>)>,
    attempt: Option<Attempt>,
) -> Result<RunRecord, ImportError> {
    let id = r.run.id.as_str();
    let outcome = parse_outcome(&r.outcome)
        .ok_or_else(|| field(id, format!("unknown outcome {:?}", r.outcome)))?;
    let source_sha256 =
        integrity::record_hash(source).map_err(|source| ImportError::Integrity {
            run: id.to_owned(),
            source,
        })?;
    let gates = convert_gates(r)?;
    let extensions = convert_extensions(r)?;
    let (own, standing_ref) = match standing {
        Some((set_id, notes)) => {
            let own: Vec<String> = r
                .methods
                .iter()
                .filter(|n| !notes.contains(n))
                .cloned()
                .collect();
            let count = (r.methods.len() - own.len()) as u64;
            (
                own,
                Some(StandingNotesRef {
                    set_id: set_id.clone(),
                    count,
                }),
            )
        }
        None => (r.methods.clone(), None),
    };
    let mut kept = serde_json::Map::new();
    if let Some(usage) = source.pointer("/run/judgeUsage") {
        kept.insert("judgeUsage".to_owned(), usage.clone());
    }
    let record = RunRecord {
        schema: crate::RECORD_SCHEMA.to_owned(),
        run: RunIdentity {
            id: id.to_owned(),
            started_at: r.run.started_at.clone(),
            harness: Producer {
                name: "fitness-report (TypeScript reference)".to_owned(),
                version: r
                    .run
                    .harness_version
                    .clone()
                    .unwrap_or_else(|| "unrecorded".to_owned()),
            },
            suite_hash: r.run.suite_hash.clone(),
            runner_model: r.run.runner_model.clone(),
            runner_reported: None,
            judge_model: r.run.judge_model.clone(),
            generator: r.run.generator_version.clone().filter(|g| !g.is_empty()),
            attempt,
            task_budget: r.run.task_budget,
        },
        server: convert_server(r)?,
        probes: Probes {
            spec_currency: r.probes.spec_currency.clone(),
            findings: r.probes.findings.iter().map(convert_probe).collect(),
        },
        preregistration: convert_prereg(r),
        suite: convert_suite(r),
        gates,
        extensions,
        outcome,
        score: r.score.as_ref().map(convert_score),
        cost: convert_cost(r),
        notes: Notes {
            standing: standing_ref,
            own,
            score: r.score_notes.clone(),
        },
        tapes: Vec::new(),
        trace_links: r.trace_links.as_ref().map(|t| TraceLinks {
            mcp: t.mcp.clone(),
            agent: t.agent.clone(),
            viewer: t.viewer.clone(),
        }),
        trace_stats: r.trace_stats.clone(),
        imported: Some(ImportProvenance {
            from_schema: crate::RECORD_SCHEMA_V1.to_owned(),
            source_sha256,
            kept,
        }),
        findings: Vec::new(),
        proposals: Vec::new(),
        rewrite: None,
        redactions: None,
        conformance: None,
        signature: None,
    };
    record.validate().map_err(|source| ImportError::Invalid {
        run: id.to_owned(),
        source,
    })?;
    Ok(record)
}

fn parse_outcome(s: &str) -> Option<Outcome> {
    Outcome::ALL.into_iter().find(|o| o.code() == s)
}

fn parse_verdict(s: &str) -> Option<VerdictOutcome> {
    Some(match s {
        "PASS" => VerdictOutcome::Pass,
        "FAIL" => VerdictOutcome::Fail,
        "EXTEND" => VerdictOutcome::Extend,
        "INDETERMINATE" => VerdictOutcome::Indeterminate,
        _ => return None,
    })
}

fn convert_server(r: &RecordV1) -> Result<ServerIdentity, ImportError> {
    let id = r.run.id.as_str();
    let s = &r.server;
    let target = match (&s.url, &s.command) {
        (Some(url), _) => ServerTarget::Url { url: url.clone() },
        (None, Some(argv)) => ServerTarget::Command { argv: argv.clone() },
        (None, None) => return Err(field(id, "server has neither url nor command")),
    };
    let era = match s.era.as_str() {
        "legacy" => Era::Legacy,
        "modern" => Era::Modern,
        other => return Err(field(id, format!("unknown era {other:?}"))),
    };
    let transport = match (s.transport_shape.as_str(), &target) {
        ("stdio", _) | (_, ServerTarget::Command { .. }) => TransportShape::Stdio,
        ("sse", _) => TransportShape::HttpSse,
        ("json", _) => TransportShape::HttpJson,
        (other, _) => return Err(field(id, format!("unknown transport shape {other:?}"))),
    };
    let credential_context = parse_credential(&s.credential_context).ok_or_else(|| {
        field(
            id,
            format!("unknown credential context {:?}", s.credential_context),
        )
    })?;
    Ok(ServerIdentity {
        target,
        slug: s.slug.clone(),
        era,
        negotiated_version: s.negotiated_version.clone(),
        transport,
        sessions: if s.sessionful {
            Sessions::Sessionful
        } else {
            Sessions::Sessionless
        },
        credential_context,
        server_info: s.server_info.clone(),
        capabilities: s.capabilities.clone(),
        instructions: s.instructions.clone(),
        discover: s.discover.clone(),
    })
}

fn parse_credential(s: &str) -> Option<CredentialContext> {
    Some(match s {
        "anonymous" => CredentialContext::Anonymous,
        "free-key" => CredentialContext::FreeKey,
        "owner-key" => CredentialContext::OwnerKey,
        _ => return None,
    })
}

fn convert_probe(p: &ProbeFindingV1) -> Probe {
    let status = match p.pass {
        Some(true) => ProbeStatus::Pass,
        Some(false) => ProbeStatus::Fail,
        None => ProbeStatus::Unknown {
            reason: if p.detail.is_empty() {
                "not applicable to this connection".to_owned()
            } else {
                p.detail.clone()
            },
        },
    };
    Probe {
        id: p.id.clone(),
        status,
        detail: p.detail.clone(),
        // v1 recorded the probe's observations, not the frames' corr_ids.
        evidence: Vec::new(),
        observed: p.evidence.clone(),
    }
}

fn gate_detail<'a>(r: &'a RecordV1, gate: &str) -> Option<&'a Value> {
    r.gates
        .records
        .iter()
        .find(|g| g.gate == gate)
        .map(|g| &g.detail)
}

fn f(v: Option<&Value>, key: &str) -> Option<f64> {
    v?.get(key)?.as_f64()
}

fn u(v: Option<&Value>, key: &str) -> Option<u64> {
    v?.get(key)?.as_u64()
}

fn s(v: Option<&Value>, key: &str) -> Option<String> {
    Some(v?.get(key)?.as_str()?.to_owned())
}

fn convert_prereg(r: &RecordV1) -> PreRegistration {
    let construct = r.gates.records.iter().find(|g| g.gate == "construct");
    let verdict = construct.and_then(|g| g.verdict.as_ref());
    let construct_detail = construct.map(|g| &g.detail);
    let plan = gate_detail(r, "plan_power");
    let structural = gate_detail(r, "structural");
    let suite_size = gate_detail(r, "suite_size");
    let null = gate_detail(r, "null_baseline");
    let policy = r.gates.extension_policy.as_ref();
    PreRegistration {
        hash: None,
        n_tasks: u(suite_size, "nTasks"),
        reps: u(construct_detail, "reps"),
        alpha: verdict.map(|v| v.alpha),
        construct_threshold: verdict
            .map(|v| v.threshold)
            .or_else(|| f(plan, "threshold")),
        null_kill_ratio: f(null, "ratio"),
        min_admission_rate: f(structural, "minAdmissionRate"),
        min_tasks: u(suite_size, "minTasks"),
        detectable_rate: f(plan, "detectableRate"),
        // v1 records the power at the required n, not the planned power.
        planned_power: None,
        extension_size: policy.map_or(0, |p| p.extension_size),
        max_extensions: policy.map_or(0, |p| p.max_extensions),
        seed: None,
        runner_model: Some(r.run.runner_model.clone()),
        judge_model: Some(r.run.judge_model.clone()),
        generator: r.run.generator_version.clone().filter(|g| !g.is_empty()),
        null_screen: r.run.null_screen_enabled,
        conformance: None,
        credential_context: parse_credential(&r.server.credential_context),
        extension_protocol: s(construct_detail, "extensionProtocol"),
        // fitness-report/1 did not register the budgets and timeouts.
        ..PreRegistration::default()
    }
}

fn convert_suite(r: &RecordV1) -> SuiteLedger {
    let structural = gate_detail(r, "structural");
    let synthesis = structural.and_then(|d| d.get("synthesis"));
    let yield_ = synthesis.and_then(|s| s.get("yield"));
    let tasks = u(gate_detail(r, "suite_size"), "nTasks");
    match yield_ {
        Some(y) => {
            let mut rejected_by_rule = Vec::new();
            if let Some(Value::Object(rules)) = synthesis.and_then(|s| s.get("dropsByRule")) {
                for (rule, count) in rules {
                    // The null screen is its own fate, counted below.
                    if rule == "null_screen" {
                        continue;
                    }
                    if let Some(count) = count.as_u64() {
                        rejected_by_rule.push(RuleRejection {
                            rule: rule.clone(),
                            count,
                            example: None,
                        });
                    }
                }
            }
            let screen = synthesis.and_then(|s| s.get("nullScreen"));
            let null_screened = match (u(screen, "screened"), u(screen, "dropped")) {
                (Some(screened), Some(dropped)) => Some(NullScreenCount { screened, dropped }),
                _ => None,
            };
            SuiteLedger {
                candidates: u(Some(y), "candidates"),
                admitted: u(Some(y), "admitted"),
                tasks,
                rejected_by_rule,
                trimmed_surplus: u(Some(y), "trimmed"),
                null_screened,
                quality: None,
                judge_calls: None,
                limitation: None,
            }
        }
        None => SuiteLedger {
            candidates: u(structural, "nRequested"),
            admitted: u(structural, "nGenerated"),
            tasks,
            rejected_by_rule: Vec::new(),
            trimmed_surplus: None,
            null_screened: None,
            quality: None,
            judge_calls: None,
            limitation: Some(
                "This run's generator did not serialise per-candidate reasons, so rejections by rule, trimmed surplus and null-screen deletions are not broken down."
                    .to_owned(),
            ),
        },
    }
}

fn convert_gates(r: &RecordV1) -> Result<Gates, ImportError> {
    let id = r.run.id.as_str();
    let mut records = Vec::with_capacity(r.gates.records.len());
    for g in &r.gates.records {
        let cost_tier = match g.cost_tier.as_deref() {
            Some("free") => CostTier::Free,
            Some("cheap") => CostTier::Cheap,
            Some("paid") => CostTier::Paid,
            other => {
                return Err(field(
                    id,
                    format!("gate {}: unknown cost tier {other:?}", g.gate),
                ));
            }
        };
        let verdict = match &g.verdict {
            None => None,
            Some(v) => Some(GateVerdict {
                outcome: parse_verdict(&v.outcome).ok_or_else(|| {
                    field(
                        id,
                        format!("gate {}: unknown verdict {:?}", g.gate, v.outcome),
                    )
                })?,
                k: v.k,
                n: v.n,
                threshold: v.threshold,
                alpha: v.alpha,
                p_value: v.p_value,
            }),
        };
        records.push(GateRecord {
            id: g.gate.clone(),
            cost_tier,
            ok: g.ok,
            verdict,
            reason: g.reason.clone(),
            detail: convert_gate_detail(&g.gate, &g.detail),
            source_detail: Some(g.detail.clone()),
        });
    }
    Ok(Gates {
        order: r.gates.order.clone(),
        records,
        refused_at: r.gates.refused_at.clone(),
    })
}

fn convert_gate_detail(gate: &str, d: &Value) -> GateDetail {
    let d = Some(d);
    let strings = |key: &str| -> Vec<String> {
        d.and_then(|d| d.get(key))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let values = |key: &str| -> Vec<Value> {
        d.and_then(|d| d.get(key))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match gate {
        "protocol_hygiene" => GateDetail::ProtocolHygiene {
            failed: strings("failed"),
        },
        "structural" => GateDetail::Structural {
            n_requested: u(d, "nRequested"),
            n_generated: u(d, "nGenerated"),
            admission_rate: f(d, "admissionRate"),
            min_admission_rate: f(d, "minAdmissionRate"),
            min_generated: u(d, "minGenerated"),
            explain: s(d, "explain"),
        },
        "answer_leak" => GateDetail::AnswerLeak {
            leaks: values("leaks"),
            at_generation: values("leaksFoundAtGeneration"),
        },
        "suite_size" => match (u(d, "nTasks"), u(d, "minTasks")) {
            (Some(n_tasks), Some(min_tasks)) => GateDetail::SuiteSize {
                n_tasks,
                min_tasks,
                tool_count: u(d, "toolCount"),
            },
            _ => GateDetail::Unrecognised,
        },
        "plan_power" => match (
            u(d, "requiredN"),
            u(d, "actualN"),
            f(d, "threshold"),
            f(d, "detectableRate"),
            f(d, "power"),
        ) {
            (
                Some(required_n),
                Some(actual_n),
                Some(threshold),
                Some(detectable_rate),
                Some(achieved_power),
            ) => GateDetail::PlanPower {
                required_n,
                actual_n,
                threshold,
                detectable_rate,
                achieved_power,
                explain: None,
            },
            _ => GateDetail::Unrecognised,
        },
        "null_baseline" => GateDetail::NullBaseline {
            rates: values("rates")
                .iter()
                .filter_map(|r| {
                    Some(NullRate {
                        label: r.get("label")?.as_str()?.to_owned(),
                        k: r.get("k")?.as_u64()?,
                        n: r.get("n")?.as_u64()?,
                        rate: r.get("rate")?.as_f64()?,
                    })
                })
                .collect(),
            t_null: f(d, "tNull"),
            t_agent: f(d, "tAblate"),
            kill_threshold: f(d, "killThreshold"),
            ratio: f(d, "ratio"),
            percentile: u(d, "percentile"),
            decision: s(d, "outcome"),
            explain: s(d, "explain"),
        },
        "construct" => {
            let published = d.and_then(|d| d.get("published")).and_then(|p| {
                let p = Some(p);
                Some(PublishedVerdict {
                    outcome: parse_verdict(&s(p, "outcome")?)?,
                    raw_outcome: parse_verdict(&s(p, "rawOutcome")?)?,
                    downgraded: p?.get("downgraded")?.as_bool()?,
                    wilson_low: f(p, "wilsonLow")?,
                    wilson_high: f(p, "wilsonHigh")?,
                    required_n: u(p, "requiredN")?,
                    achieved_power: f(p, "achievedPower")?,
                    reason: s(p, "reason")?,
                })
            });
            let pooled = d.and_then(|d| d.get("pooled")).and_then(|p| {
                Some(Count {
                    k: p.get("k")?.as_u64()?,
                    n: p.get("n")?.as_u64()?,
                })
            });
            match (u(d, "n"), u(d, "errors")) {
                (Some(n), Some(errors)) => GateDetail::Construct {
                    n,
                    n_intended: u(d, "nIntended"),
                    errors,
                    max_error_rate: f(d, "maxErrorRate"),
                    compromised: d
                        .and_then(|d| d.get("compromised"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    reps: u(d, "reps"),
                    published,
                    pooled,
                    extensions_consumed: u(d, "extensionsConsumed").unwrap_or(0),
                    tape_reading: None,
                },
                _ => GateDetail::Unrecognised,
            }
        }
        _ => GateDetail::Unrecognised,
    }
}

fn convert_extensions(r: &RecordV1) -> Result<Vec<ExtensionBatch>, ImportError> {
    let id = r.run.id.as_str();
    r.gates
        .extensions
        .iter()
        .map(|e| {
            let trials_added = e
                .pooled_after
                .n
                .checked_sub(e.pooled_before.n)
                .ok_or_else(|| field(id, format!("extension {}: pooled n shrank", e.index)))?;
            let verdict = |s: &str| {
                parse_verdict(s).ok_or_else(|| {
                    field(id, format!("extension {}: unknown verdict {s:?}", e.index))
                })
            };
            Ok(ExtensionBatch {
                index: e.index,
                gate: e.gate.clone(),
                tasks_added: e.admitted,
                trials_added,
                pooled_before: Count {
                    k: e.pooled_before.k,
                    n: e.pooled_before.n,
                },
                pooled_after: Count {
                    k: e.pooled_after.k,
                    n: e.pooled_after.n,
                },
                verdict_before: verdict(&e.verdict_before)?,
                verdict_after: verdict(&e.verdict_after)?,
                seed: e.seed,
                batch_suite_hash: e.batch_suite_hash.clone(),
                task_ids: e.task_ids.clone(),
                generated: e.generated,
                dropped: e.dropped.as_ref().map(|d| BatchDrops {
                    null_screen: d.null_screen,
                    answer_leak: d.answer_leak,
                    admission: d.admission,
                    duplicate: d.duplicate,
                }),
                short: e.short,
            })
        })
        .collect()
}

fn convert_interval(i: &IntervalV1) -> Interval {
    Interval {
        rate: i.rate,
        low: i.low,
        high: i.high,
        k: i.k,
        n: i.n,
    }
}

fn convert_score(s: &ScoreV1) -> Score {
    Score {
        runner_model: s.runner_model.clone(),
        first_try: convert_interval(&s.first_try_success),
        eventual: convert_interval(&s.eventual_success),
        mean_calls_per_completed_task: s.mean_calls_per_completed_task,
        mean_tokens_per_completed_task: s.mean_tokens_per_completed_task,
        mean_cost_per_completed_task_usd: s.mean_cost_per_completed_task_usd,
        destructive_without_confirmation: s.destructive_without_confirmation,
        tools: s
            .tools
            .iter()
            .map(|t| ToolScore {
                tool: t.tool.clone(),
                calls: t.calls,
                errors: t.errors,
                failure_classes: t.failure_classes.clone(),
                p50_ms: t.p50_ms,
                p95_ms: t.p95_ms,
                declared_destructive: t.declared_destructive,
            })
            .collect(),
        tasks: s
            .tasks
            .iter()
            .map(|t| TaskResult {
                task_id: t.task_id.clone(),
                first_try_success: t.first_try_success,
                success: t.success,
                tool_calls: t.tool_calls,
                mrtr_rounds: t.mrtr_rounds,
                input_tokens: t.input_tokens,
                output_tokens: t.output_tokens,
                cost_usd: t.cost_usd,
                failure: t.failure.clone(),
                destructive_without_confirmation: t.destructive_without_confirmation,
            })
            .collect(),
        ambiguous_parameters: s.ambiguous_parameters.clone(),
        schema_drift: s.schema_drift.clone(),
    }
}

/// The run's cost from what the v1 record measured: the runner's tape cost
/// plus judge usage. A total only when nothing known is missing from it.
fn convert_cost(r: &RecordV1) -> Cost {
    let tape_cost = r
        .trace_stats
        .as_ref()
        .and_then(|t| t.pointer("/models/cost"))
        .filter(|c| c.is_object());
    let runner_usd = tape_cost
        .and_then(|c| c.get("totalUsd"))
        .and_then(Value::as_f64);
    let judge = r.run.judge_usage.as_ref();
    let judge_usd = judge.and_then(|j| j.est_cost_usd);
    let mut reasons = Vec::new();
    match (judge, judge_usd) {
        (None, _) => reasons.push(
            "judge spend is not recorded in this record, so it is outside the figure and not estimated".to_owned(),
        ),
        (Some(_), None) => reasons.push(
            "judge usage is recorded without a price, so no judge dollars are in the figure".to_owned(),
        ),
        _ => {}
    }
    if let Some(j) = judge {
        if j.partial {
            reasons.push(
                "judge usage is marked partial, so the judge dollars are a lower bound".to_owned(),
            );
        }
        let unpriced: Vec<&str> = j
            .by_model
            .iter()
            .filter(|m| m.est_cost_usd.is_none())
            .map(|m| m.model.as_deref().unwrap_or("unnamed model"))
            .collect();
        if !unpriced.is_empty() {
            reasons.push(format!(
                "judge usage of {} has no price on file and is not in the figure",
                unpriced.join(", ")
            ));
        }
        if let Some(n) = j.uncounted_calls.filter(|n| *n > 0) {
            reasons.push(format!("{n} judge call(s) returned no usage block"));
        }
        if let Some(n) = j.failed_calls.filter(|n| *n > 0) {
            reasons.push(format!("{n} judge call(s) threw before reporting usage"));
        }
    }
    let screen = gate_detail(r, "structural")
        .and_then(|d| d.pointer("/synthesis/nullScreen"))
        .filter(|s| s.get("enabled").and_then(Value::as_bool) == Some(true));
    if let Some(screened) = screen
        .and_then(|s| s.get("screened"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
    {
        reasons.push(format!(
            "the generation-time null screen made {screened} runner call(s) written to neither tape"
        ));
    }
    if let Some(unpriced) = tape_cost
        .and_then(|c| c.get("unpricedModels"))
        .and_then(Value::as_array)
    {
        let names: Vec<&str> = unpriced
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        if !names.is_empty() {
            reasons.push(format!(
                "model(s) on the tape have no price on file: {}",
                names.join(", ")
            ));
        }
    }
    if tape_cost
        .and_then(|c| c.get("partial"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        reasons.push("the tape's cost block is marked partial".to_owned());
    }
    let usd = match (runner_usd, judge_usd) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    match usd {
        None => Cost::None {
            why: "no priced model usage is recorded: the tapes carry no model cost and the record carries no priced judge usage".to_owned(),
        },
        Some(usd) if reasons.is_empty() => Cost::Total {
            usd,
            runner_usd,
            judge_usd,
        },
        Some(usd) => Cost::Floor {
            usd,
            runner_usd,
            judge_usd,
            reasons,
        },
    }
}
