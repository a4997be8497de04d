//! Assembling, signing and writing the run record. The run's names and
//! pre-registration are `registration`'s, its score is `score`'s.

use std::path::Path;

use anyhow::Context as _;
use fitness_shared::integrity;
use fitness_shared::record::{
    self as rec, Gates, Notes, Outcome, RunIdentity, RunRecord, ServerIdentity, ServerTarget,
    StandingNotesRef, StandingNotesSet, TapeRef,
};
use fitness_shared::tape::Plane;
use fitness_shared::tape::{StatsBuilder, add_tape, merge_planes};
use serde_json::{Value, json};

use super::config::RunConfig;
use super::control::Interruption;
use super::registration::{judge_label, slug_for};
use super::run::{Run, RunOutput};
use crate::integrity::write_atomic;
use crate::mcp::connect::{Era, Target};
use crate::suite::GenerationReport;

/// What an extension batch lost at generation, by reason.
pub fn batch_drops(batch: &GenerationReport) -> rec::BatchDrops {
    let rule = |name: &str| {
        batch
            .ledger
            .rejected_by_rule
            .iter()
            .filter(|r| r.rule == name)
            .map(|r| r.count)
            .sum::<u64>()
    };
    let all: u64 = batch.ledger.rejected_by_rule.iter().map(|r| r.count).sum();
    let leak = rule("answer-leak");
    let dup = rule("duplicate");
    let screen = batch.ledger.null_screened.as_ref();
    let judge = batch.ledger.judge_calls.as_ref();
    rec::BatchDrops {
        null_screen: screen.map_or(0, |s| s.dropped),
        answer_leak: leak,
        duplicate: dup,
        admission: all - leak - dup,
        screen_calls: screen.map_or(0, |s| s.screened),
        screen_errors: screen.map_or(0, |s| s.errors),
        judge_calls: judge.map_or(0, |j| j.made),
        judge_errors: judge.map_or(0, |j| j.failed),
    }
}

/// The methods notes every run of this generator carries, published once.
fn standing_notes(generator: &str) -> StandingNotesSet {
    let mut notes = vec![
        "A refusal replaces the score whenever a validity gate does not pass; a refusal carries no score.".to_owned(),
        "Gates run cheapest first (free, cheap, paid) and the first that refuses stops the run; the pre-registration is written and hashed before the first model call.".to_owned(),
        "First-try success is the share of tasks the runner solved on its first attempt, shown with its Wilson 95% interval; eventual success counts any registered repetition.".to_owned(),
        "The null baseline runs three null models (no tools, tools stubbed empty, random schema-valid arguments at zero tokens); the run is refused when their 95th percentile pass rate reaches half the agent's rate.".to_owned(),
        "The construct gate hands a reference agent the answer key: it must reach the answer through the server (a correct answer and an ok call to an expected tool) in at least 90% of trials; errors are gated apart at 5%.".to_owned(),
        "Runners named sim/... are deterministic offline agents built into the recorder, not language models.".to_owned(),
    ];
    notes.push(match generator {
        g if g.starts_with("schema-walk") => "Tasks come from schema-walk: read-only tools are called with schema-valid arguments and each answer is taken from the server's real response; no model writes tasks.".to_owned(),
        g if g.starts_with("judge-synth") => "Tasks come from judge-synth: a judge model reads the tool schemas and instructions and writes tasks with machine-checkable predicates and the reason the server is required.".to_owned(),
        g => format!("Tasks come from the generator {g}."),
    });
    StandingNotesSet {
        generator: generator.to_owned(),
        notes,
    }
}

/// Write the standing-notes set beside the runs and return its reference.
fn publish_standing(out_dir: &Path, set: &StandingNotesSet) -> anyhow::Result<StandingNotesRef> {
    let value = serde_json::to_value(set)?;
    let bytes = integrity::canonical_json(&value)?;
    let hex = integrity::sha256_hex(&bytes);
    let dir = out_dir.join(fitness_shared::site::STANDING_NOTES_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let path = dir.join(format!("{hex}.json"));
    if !path.exists() {
        write_atomic(&path, &bytes)?;
    }
    Ok(StandingNotesRef {
        set_id: format!("sha256:{hex}"),
        count: set.notes.len() as u64,
    })
}

fn tape_ref(dir: &Path, name: &str, plane: Plane) -> anyhow::Result<TapeRef> {
    let bytes =
        std::fs::read(dir.join(name)).with_context(|| format!("failed to read the tape {name}"))?;
    Ok(TapeRef {
        plane,
        path: name.to_owned(),
        sha256: integrity::sha256_hex(&bytes),
        bytes: bytes.len() as u64,
    })
}

fn plane_stats(path: &Path) -> Option<fitness_shared::tape::Stats> {
    let file = std::fs::File::open(path).ok()?;
    let mut builder = StatsBuilder::new();
    add_tape(std::io::BufReader::new(file), &mut builder).ok()?;
    Some(builder.finish(None))
}

/// Earlier runs of the same server in the output directory.
fn attempt(out_dir: &Path, slug: &str, id: &str) -> Option<rec::Attempt> {
    // A run of this server is a run directory whose record names this
    // server's slug: a run id only starts with the slug, and `demo` is a
    // prefix of `demo-good`.
    let same_server = |name: &str| {
        let path = out_dir.join(name).join(fitness_shared::site::RECORD_FILE);
        let Ok(bytes) = std::fs::read(&path) else {
            return false;
        };
        #[derive(serde::Deserialize)]
        struct Server {
            slug: String,
        }
        #[derive(serde::Deserialize)]
        struct Head {
            server: Server,
        }
        serde_json::from_slice::<Head>(&bytes).is_ok_and(|h| h.server.slug == slug)
    };
    let mut others: Vec<String> = std::fs::read_dir(out_dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name != id && name.starts_with(&format!("{slug}-")) && same_server(name))
        .collect();
    others.sort();
    let index = others.len() as u32 + 1;
    Some(rec::Attempt {
        index,
        of: index,
        others,
    })
}

/// Close the tapes, build the record, sign it, write it atomically.
pub fn finish(mut run: Run<'_>, outcome: Outcome) -> anyhow::Result<RunOutput> {
    let cfg = run.cfg;
    // Before the redaction counts are gathered: the list is redacted too.
    let candidates_file = write_candidates(&mut run, cfg.generator.as_str())?;
    let (own, mut redacted) = close_tapes(&mut run, outcome);

    let slug = slug_for(cfg);
    let report = run.report.as_ref();
    let server = server_identity(
        cfg,
        report,
        run.instructions.clone(),
        &slug,
        run.surface_delta.clone(),
    );
    let probes = probes_of(report, run.unreachable.clone());
    let mut suite = run
        .generation
        .as_ref()
        .map_or_else(no_suite, |g| g.ledger.clone());
    let generator = cfg.generator.to_string();
    suite.candidates_file = candidates_file;
    let standing = publish_standing(&cfg.settings.out_dir, &standing_notes(&generator))?;
    let cost = run.cost.cost(&run.prices);
    let score_notes = score_notes(
        run.score.as_ref(),
        run.interrupted.as_ref(),
        run.refused_at.as_deref(),
        outcome,
    );
    let order = run.gates.iter().map(|g| g.id.clone()).collect();
    let (tapes, trace_stats) = tapes_of(&run.dir)?;
    let record = RunRecord {
        schema: fitness_shared::RECORD_SCHEMA.to_owned(),
        run: run_identity(&run, generator, &slug),
        server,
        probes,
        access: run.access_ledger.take(),
        preregistration: run.prereg.clone(),
        suite,
        gates: Gates {
            order,
            records: run.gates,
            refused_at: run.refused_at.clone(),
        },
        extensions: run.extensions,
        outcome,
        score: if outcome == Outcome::Scored {
            run.score
        } else {
            None
        },
        cost,
        tool_list: run.tool_list.take(),
        notes: Notes {
            standing: Some(standing),
            own,
            score: score_notes,
        },
        tapes,
        trace_links: None,
        trace_stats,
        imported: None,
        findings: run.findings,
        proposals: run.proposals,
        rewrite: None,
        redactions: None,
        conformance: run.conformance,
        input_requests: run.input_requests,
        traces: run.traces,
        signature: None,
    };
    record
        .validate()
        .map_err(|e| anyhow::anyhow!("the run built an invalid record: {e}"))?;
    let record = write_published(&record, &mut redacted, cfg, &run.dir)?;
    Ok(RunOutput {
        dir: run.dir,
        record,
        interrupted: run.interrupted,
    })
}

/// Which run this is: its id and start, the harness, the suite, the
/// models, the generator, its attempt among the server's runs, the budget.
fn run_identity(run: &Run<'_>, generator: String, slug: &str) -> RunIdentity {
    let cfg = run.cfg;
    RunIdentity {
        id: run.id.clone(),
        started_at: run.started_at.clone(),
        harness: rec::Producer {
            name: "fitness".to_owned(),
            version: fitness_shared::VERSION.to_owned(),
        },
        suite_hash: if run.suite_hash.is_empty() {
            "none".to_owned()
        } else {
            run.suite_hash.clone()
        },
        runner_model: cfg.settings.runner.to_string(),
        // A reply that names no model falls back to the registered model's
        // bare name: that is not a name the provider reported.
        runner_reported: run
            .runner_reported
            .clone()
            .filter(|r| *r != cfg.settings.runner.to_string() && *r != cfg.settings.runner.model),
        judge_model: judge_label(cfg),
        generator: Some(generator),
        attempt: attempt(&cfg.settings.out_dir, slug, &run.id),
        task_budget: Some(cfg.settings.budget.max_tokens),
        rate_waits: match run.meter.rate_waits() {
            (0, _) => None,
            (attempts, waited_ms) => Some(rec::RateWaits {
                attempts,
                waited_ms,
            }),
        },
    }
}

/// End both tapes with the outcome; the run's own notes, and what the
/// tapes and the suite files had redacted (the record adds its own).
fn close_tapes(run: &mut Run<'_>, outcome: Outcome) -> (Vec<String>, fitness_shared::redact::Hits) {
    let end_reason = match (&run.interrupted, outcome) {
        (Some(i), _) => i.reason().to_owned(),
        (None, o) => o.code().to_lowercase(),
    };
    let mut own = std::mem::take(&mut run.own_notes);
    if let Some(i) = &run.interrupted {
        own.push(i.note());
    }
    if let Some(reference) = &run.reference_model {
        own.push(format!(
            "The construct gate's reference agent: {reference}."
        ));
    }
    let event = json!({"outcome": outcome.code(), "refused_at": run.refused_at});
    run.mcp.event("fitness.outcome", event.clone(), None);
    run.agent.event("fitness.outcome", event, None);
    run.mcp.end(&end_reason);
    run.agent.end(&end_reason);
    let mut redacted = run.mcp.hits();
    redacted.merge(&run.agent.hits());
    redacted.merge(&run.redacted);

    (own, redacted)
}

/// The two tapes' references, and their statistics merged.
fn tapes_of(dir: &Path) -> anyhow::Result<(Vec<TapeRef>, Option<Value>)> {
    let mut tapes = vec![
        tape_ref(dir, fitness_shared::site::MCP_TAPE, Plane::Mcp)?,
        tape_ref(dir, fitness_shared::site::AGENT_TAPE, Plane::Agent)?,
    ];
    tapes.sort_by(|a, b| a.path.cmp(&b.path));
    let trace_stats = match (
        plane_stats(&dir.join(fitness_shared::site::MCP_TAPE)),
        plane_stats(&dir.join(fitness_shared::site::AGENT_TAPE)),
    ) {
        (Some(m), Some(a)) => serde_json::to_value(merge_planes(m, a, None)).ok(),
        _ => None,
    };
    Ok((tapes, trace_stats))
}

/// Who the server is, as the probes found it.
fn server_identity(
    cfg: &RunConfig,
    report: Option<&crate::mcp::report::Report>,
    instructions: Option<String>,
    slug: &str,
    surface_delta: Option<rec::SurfaceDelta>,
) -> ServerIdentity {
    ServerIdentity {
        target: match &cfg.settings.target {
            Target::Http(h) => ServerTarget::Url { url: h.url.clone() },
            Target::Stdio(s) => ServerTarget::Command {
                argv: s.command_line(),
            },
        },
        slug: slug.to_owned(),
        era: match report.map(|r| r.server.era) {
            Some(Era::Modern) => rec::Era::Modern,
            _ => rec::Era::Legacy,
        },
        negotiated_version: report.map(|r| r.server.negotiated_version.clone()),
        transport: match report.map(|r| r.server.transport_shape.as_str()) {
            Some("streamable-http+sse") => rec::TransportShape::HttpSse,
            Some("streamable-http+json" | "streamable-http") => rec::TransportShape::HttpJson,
            _ => rec::TransportShape::Stdio,
        },
        sessions: match report.and_then(|r| r.server.sessionful) {
            Some(false) => rec::Sessions::Sessionless,
            _ => rec::Sessions::Sessionful,
        },
        credential_context: cfg.settings.credential,
        credential: cfg.settings.credential_used.clone(),
        surface_delta,
        server_info: report.and_then(|r| r.server.server_info.clone()),
        capabilities: report.map(|r| r.server.capabilities.clone()),
        instructions,
        discover: None,
    }
}

/// The zero-token probes' findings.
fn probes_of(
    report: Option<&crate::mcp::report::Report>,
    unreachable: Option<String>,
) -> rec::Probes {
    rec::Probes {
        unreachable,
        spec_currency: report.map(|r| r.server.negotiated_version.clone()),
        findings: report
            .map(|r| {
                r.probes
                    .iter()
                    .map(|p| rec::Probe {
                        id: p.id.to_owned(),
                        status: p.status.clone(),
                        detail: p.detail.clone(),
                        evidence: p.evidence.clone(),
                        observed: None,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Every candidate admission rejected and every one the null screen
/// deleted (the suite's, then each extension batch's), each with its
/// prompt, tools and rule (the screen's with the reply that answered it),
/// written beside the record (`candidates.json`, redacted like
/// `suite.json`) and hashed so the signature covers it. `None` when
/// nothing was rejected or deleted.
fn write_candidates(run: &mut Run<'_>, generator: &str) -> anyhow::Result<Option<rec::FileRef>> {
    if run.rejected.is_empty() && run.screened_out.is_empty() {
        return Ok(None);
    }
    let list = rec::CandidateList {
        schema: rec::CANDIDATES_SCHEMA.to_owned(),
        generator: generator.to_owned(),
        rejected: std::mem::take(&mut run.rejected),
        screened_out: std::mem::take(&mut run.screened_out),
    };
    let path = run.dir.join(fitness_shared::site::CANDIDATES_FILE);
    run.write_json(&path, &list)?;
    let (sha256, bytes) = crate::integrity::hash_file(&path)
        .with_context(|| format!("failed to hash {}", path.display()))?;
    Ok(Some(rec::FileRef {
        path: fitness_shared::site::CANDIDATES_FILE.to_owned(),
        sha256,
        bytes,
    }))
}

/// The ledger of a run that stopped before generation.
fn no_suite() -> rec::SuiteLedger {
    rec::SuiteLedger {
        candidates: None,
        admitted: None,
        tasks: None,
        rejected_by_rule: Vec::new(),
        trimmed_surplus: None,
        null_screened: None,
        screen_skipped: None,
        candidates_file: None,
        quality: None,
        judge_calls: None,
        discovery: None,
        act: None,
        limitation: Some("no suite was generated: the run stopped before generation".to_owned()),
    }
}

/// The score's notes: the figures, or why there is none.
fn score_notes(
    score: Option<&rec::Score>,
    interrupted: Option<&Interruption>,
    refused_at: Option<&str>,
    outcome: Outcome,
) -> Vec<String> {
    let mut score_notes = Vec::new();
    if let Some(s) = score {
        score_notes.push(format!(
            "First-try success {} of {} tasks ({:.1}%, Wilson 95% {:.1}% to {:.1}%); eventual success {} of {}.",
            s.first_try.k,
            s.first_try.n,
            s.first_try.rate * 100.0,
            s.first_try.low * 100.0,
            s.first_try.high * 100.0,
            s.eventual.k,
            s.eventual.n
        ));
    } else if let Some(i) = interrupted {
        score_notes.push(format!("No score. {}", i.note()));
    } else {
        score_notes.push(format!(
            "No score: the run's outcome is {}{}.",
            outcome.code(),
            refused_at
                .map(|g| format!(", refused at the {g} gate"))
                .unwrap_or_default()
        ));
    }
    score_notes
}

/// Write the record (and sign it) in its published form: every string
/// through the policy, and the counts of what the run's files lost. The
/// record as it reads back from what was written.
fn write_published(
    record: &RunRecord,
    redacted: &mut fitness_shared::redact::Hits,
    cfg: &RunConfig,
    dir: &Path,
) -> anyhow::Result<RunRecord> {
    let mut value = serde_json::to_value(record)?;
    crate::secrets::redact_value(&mut value, redacted);
    if let Value::Object(map) = &mut value {
        map.insert(
            "redactions".to_owned(),
            serde_json::to_value(rec::Redactions::from_hits(redacted))?,
        );
    }
    let key = cfg
        .settings
        .key
        .clone()
        .or_else(|| std::env::var_os("FITNESS_SIGNING_KEY").map(Into::into));
    if let Some(path) = key {
        let seed = crate::integrity::read_secret(&path)?;
        crate::integrity::sign_value(&mut value, &seed)?;
    }
    let published = RunRecord::from_value(value.clone())
        .map_err(|e| anyhow::anyhow!("the redacted record does not read back: {e}"))?;
    let bytes =
        integrity::record_file_bytes(&value).context("failed to canonicalise the record")?;
    write_atomic(&dir.join(fitness_shared::site::RECORD_FILE), &bytes)?;
    Ok(published)
}
