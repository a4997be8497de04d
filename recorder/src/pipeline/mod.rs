//! The run (R-RUN): connect and probe, register, generate the suite, then
//! the gates in cost order, stopping at the first that refuses; the drive
//! and the score only when every gate passed. Every run ends in a record:
//! a score, the refusal that replaced it, or VOID when the run could not
//! complete its registered size (interrupted, spend cap, lost server).

pub mod config;
mod record;
mod tape_reading;
mod trials;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use fitness_shared::gates::{
    self, AgentSignal, BatchCounts, ExtensionDecision, NullArm, NullBaseline, NullOutcome,
    SuiteFates,
};
use fitness_shared::record::{
    self as rec, CostTier, ExtensionBatch, GateDetail, GateRecord, GateVerdict, Outcome, RunRecord,
    VerdictOutcome,
};
use rmcp::model::Tool;
use serde_json::json;

pub use config::{Floors, RunConfig};

use crate::mcp::connect::Session;
use crate::mcp::report::{self, Report};
use crate::mcp::tap::Tap;
use crate::model::agent::{Budget, TrialOutcome};
use crate::model::cost::{CostLedger, Role as Spender};
use crate::model::price::PriceTable;
use crate::model::types::{ModelClient, ModelId, ProviderKind};
use crate::model::{ClientOptions, client_for};
use crate::suite::task::Task;
use crate::suite::{GenerateOptions, GenerationReport};
use trials::{TrialKind, Trials};

/// Where the run stands: go on, or stop with this outcome at this gate.
#[derive(Debug)]
enum Flow {
    Continue,
    Stop { outcome: Outcome, gate: String },
}

/// A request to stop the run early (Ctrl-C, SIGTERM).
#[derive(Clone)]
pub struct Cancel(tokio::sync::watch::Receiver<bool>);

impl Cancel {
    pub fn new() -> (tokio::sync::watch::Sender<bool>, Cancel) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (tx, Cancel(rx))
    }

    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves when cancelled; never, if the sender is gone uncancelled.
    pub async fn cancelled(&mut self) {
        loop {
            if *self.0.borrow() {
                return;
            }
            if self.0.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Why the run stopped short of its registered size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interruption {
    Cancelled,
    SpendCap {
        calls: u64,
    },
    /// A tape reached its registered size cap (the server flooded it).
    TapeCap {
        tape: &'static str,
        limit: u64,
    },
    Failed(String),
}

impl Interruption {
    fn note(&self) -> String {
        match self {
            Interruption::Cancelled => "The run was interrupted by the operator before it completed its registered size; nothing is scored or refused.".to_owned(),
            Interruption::SpendCap { calls } => format!("The run reached its spend cap of {calls} model calls before it completed its registered size; nothing is scored or refused."),
            Interruption::TapeCap { tape, limit } => format!("The {tape} tape reached its registered cap of {limit} bytes before the run completed its registered size (the server sent more than a run can record); the run stopped there and nothing is scored or refused."),
            Interruption::Failed(why) => format!("The run could not complete its registered size: {why}"),
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Interruption::Cancelled => "interrupted",
            Interruption::SpendCap { .. } => "spend_cap",
            Interruption::TapeCap { .. } => "tape_cap",
            Interruption::Failed(_) => "failed",
        }
    }
}

/// What a finished run left behind.
#[derive(Debug)]
pub struct RunOutput {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub interrupted: Option<Interruption>,
}

/// Observers of a run's progress (the CLI draws bars from these).
pub trait Progress: Send + Sync {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self) {}
    fn finish_phase(&self, _summary: &str) {}
}

/// No progress output.
pub struct Quiet;
impl Progress for Quiet {}

/// The state of one run in flight.
struct Run<'a> {
    cfg: &'a RunConfig,
    id: String,
    dir: PathBuf,
    started_at: String,
    mcp: Tap,
    agent: Tap,
    progress: &'a dyn Progress,
    cancel: Cancel,
    gates: Vec<GateRecord>,
    refused_at: Option<String>,
    extensions: Vec<ExtensionBatch>,
    own_notes: Vec<String>,
    cost: CostLedger,
    prices: PriceTable,
    prereg: rec::PreRegistration,
    report: Option<Report>,
    instructions: Option<String>,
    generation: Option<GenerationReport>,
    suite_hash: String,
    runner_reported: Option<String>,
    score: Option<rec::Score>,
    null_arms: Vec<NullArm>,
    interrupted: Option<Interruption>,
    model_calls: u64,
    reference_model: Option<String>,
    /// The tools as listed (empty when the run stopped before tools/list).
    tools: Vec<Tool>,
    /// Every task checked or driven: the suite, then extension batches.
    tasks: Vec<Task>,
    findings: Vec<rec::Finding>,
    proposals: Vec<rec::Proposal>,
    /// What redaction replaced in the files written beside the tapes
    /// (suite.json and its extension batches).
    redacted: fitness_shared::redact::Hits,
    /// The official conformance suite's result (`--conformance`).
    conformance: Option<rec::Conformance>,
}

/// Run the whole pipeline and write `out_dir/<run-id>/record.json` with its
/// two tapes. Errors only when nothing could be written at all (bad flags,
/// the output directory, the tapes); every other failure becomes a VOID
/// record that says why.
pub async fn execute(
    cfg: &RunConfig,
    cancel: Cancel,
    progress: &dyn Progress,
) -> anyhow::Result<RunOutput> {
    cfg.floors.check()?;
    anyhow::ensure!(cfg.n_tasks > 0, "--tasks must be at least 1");
    anyhow::ensure!(cfg.reps > 0, "--reps must be at least 1");
    anyhow::ensure!(
        cfg.n_tasks >= cfg.floors.min_suite,
        "--tasks {} is below the suite floor of {} (--min-suite): the structural gate could only refuse such a run, so it is not started",
        cfg.n_tasks,
        cfg.floors.min_suite
    );
    anyhow::ensure!(
        (1.0..=20.0).contains(&cfg.overgen_factor),
        "the over-generation factor must be between 1 and 20"
    );
    if let Some(path) = &cfg.fixed_suite {
        load_suite(path)?;
        for index in 1..=cfg.max_extensions {
            let batch = path.with_file_name(batch_file(index));
            if batch.is_file() {
                load_suite(&batch)?;
            }
        }
    }
    let prereg = record::preregistration(cfg)?;
    let prices = match &cfg.prices {
        Some(path) => PriceTable::load(path)?,
        None => PriceTable::bundled(),
    };
    let started_at = crate::mcp::clock::now();
    let slug = record::slug_for(cfg);
    if let Some(tag) = &cfg.run_tag {
        record::check_run_tag(tag)?;
    }
    let id = record::run_id(&slug, &started_at, cfg.seed, cfg.run_tag.as_deref());
    let dir = cfg.out_dir.join(&id);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("failed to create the run directory {}", dir.display()))?;
    let command: Vec<String> = std::env::args().collect();
    let label = format!("fitness run {id}");
    let mcp = Tap::create(
        &dir.join(fitness_shared::site::MCP_TAPE),
        &label,
        command.clone(),
    )?;
    let agent = Tap::create_kind(
        &dir.join(fitness_shared::site::AGENT_TAPE),
        &label,
        command,
        crate::model::agent::AGENT_TAPE_KIND,
    )?;
    mcp.set_cap(cfg.max_tape_bytes);
    agent.set_cap(cfg.max_tape_bytes);
    let stop = stop_signal(&cancel, &mcp, &agent, cfg.max_tape_bytes);
    let mut run = Run {
        cfg,
        id,
        dir,
        started_at,
        mcp,
        agent,
        progress,
        cancel,
        gates: Vec::new(),
        refused_at: None,
        extensions: Vec::new(),
        own_notes: Vec::new(),
        cost: CostLedger::default(),
        prices,
        prereg,
        report: None,
        instructions: None,
        generation: None,
        suite_hash: String::new(),
        runner_reported: None,
        score: None,
        null_arms: Vec::new(),
        interrupted: None,
        model_calls: 0,
        reference_model: None,
        tools: Vec::new(),
        tasks: Vec::new(),
        findings: Vec::new(),
        proposals: Vec::new(),
        redacted: fitness_shared::redact::Hits::default(),
        conformance: None,
    };
    // Ctrl-C or a full tape ends the run wherever it is (probing,
    // generating, driving); dropping the stages kills the server. A trial
    // notices Ctrl-C itself first, and says so on the agent tape.
    let stages = tokio::select! {
        biased;
        result = run.stages() => result,
        why = stop => {
            run.mcp.event("fitness.interrupted", json!({"reason": why.reason()}), None);
            run.agent.event("fitness.interrupted", json!({"reason": why.reason()}), None);
            let message = why.note();
            run.interrupted.get_or_insert(why);
            Err(anyhow::anyhow!(message))
        }
    };
    let outcome = match stages {
        Ok(Flow::Continue) => Outcome::Scored,
        Ok(Flow::Stop { outcome, gate }) => {
            if outcome != Outcome::Void {
                run.refused_at = Some(gate);
            }
            outcome
        }
        Err(e) => {
            if run.interrupted.is_none() {
                run.interrupted = Some(Interruption::Failed(format!("{e:#}")));
            }
            Outcome::Void
        }
    };
    if outcome != Outcome::Scored {
        run.score = None;
    }
    run.findings_and_proposals().await;
    record::finish(run, outcome)
}

/// Resolves with why the run must stop: Ctrl-C, or a tape at its cap.
fn stop_signal(
    cancel: &Cancel,
    mcp: &Tap,
    agent: &Tap,
    limit: u64,
) -> impl Future<Output = Interruption> + use<> {
    let mut cancel = cancel.clone();
    let (mcp, agent) = (mcp.cap_reached(), agent.cap_reached());
    async move {
        async fn reached(cap: Option<tokio::sync::watch::Receiver<bool>>) {
            match cap {
                Some(mut cap) => {
                    if cap.wait_for(|r| *r).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = cancel.cancelled() => Interruption::Cancelled,
            () = reached(mcp) => Interruption::TapeCap { tape: "wire (mcp.jsonl)", limit },
            () = reached(agent) => Interruption::TapeCap { tape: "agent (agent.jsonl)", limit },
        }
    }
}

fn verdict_outcome(o: gates::Outcome) -> VerdictOutcome {
    match o {
        gates::Outcome::Pass => VerdictOutcome::Pass,
        gates::Outcome::Fail => VerdictOutcome::Fail,
        gates::Outcome::Extend => VerdictOutcome::Extend,
    }
}

/// Serde's name for a unit enum value (`snake_case` reasons).
fn name_of<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "unknown".to_owned(),
    }
}

impl Run<'_> {
    async fn stages(&mut self) -> anyhow::Result<Flow> {
        let cfg = self.cfg;
        // 1. The pre-registration, written and hashed before anything else,
        // and the gate that reads nothing but it: a registration that could
        // never publish is refused before the server is touched and before
        // any model call.
        self.register()?;
        if let Flow::Stop { outcome, gate } = self.plan_power()? {
            return Ok(Flow::Stop { outcome, gate });
        }

        // 2. The official conformance suite, when asked: before our probes,
        // counted apart from them.
        if cfg.conformance {
            self.official_conformance().await?;
        }

        // 3. Connect and probe: zero tokens.
        self.progress.phase("probe", 1);
        let report = report::probe(&cfg.target, self.mcp.clone(), cfg.timeout, &[])
            .await
            .context("the server could not be reached")?;
        self.progress.finish_phase(&format!(
            "{} probes, protocol {}",
            report.probes.len(),
            report.server.negotiated_version
        ));
        self.report = Some(report);

        let session = Session::connect(&cfg.target, self.mcp.clone(), None, cfg.timeout)
            .await
            .context("the server could not be reached after probing")?;
        self.instructions = session
            .service
            .peer_info()
            .and_then(|i| i.instructions.clone());
        let result = match session.list_tools().await {
            Ok(tools) => self.with_session(&session, &tools).await,
            Err(e) => Err(e.context("tools/list failed")),
        };
        session.close().await;
        result
    }

    /// Write a file beside the tapes (a suite, the pre-registration) in its
    /// published form, counting what redaction replaced. A suite that loses
    /// a secret here no longer matches its hash, so it cannot be re-driven
    /// (`load_suite` says why); the run itself drives the tasks in memory.
    fn write_json<T: serde::Serialize>(
        &mut self,
        path: &std::path::Path,
        item: &T,
    ) -> anyhow::Result<()> {
        let mut value = serde_json::to_value(item)?;
        crate::secrets::redact_value(&mut value, &mut self.redacted);
        crate::integrity::write_atomic(path, &serde_json::to_vec_pretty(&value)?)
    }

    async fn official_conformance(&mut self) -> anyhow::Result<()> {
        let crate::mcp::connect::Target::Http(http) = &self.cfg.target else {
            anyhow::bail!("--conformance runs the official suite against HTTP targets only");
        };
        self.progress.phase("conformance", 1);
        let mut cancel = self.cancel.clone();
        let result = tokio::select! {
            r = crate::conformance::run(&http.url, &self.dir) => r,
            () = cancel.cancelled() => {
                self.interrupted = Some(Interruption::Cancelled);
                anyhow::bail!("interrupted");
            }
        };
        let summary = match &result.error {
            Some(why) => format!("the official suite gave no result: {why}"),
            None => format!(
                "official suite: {} passed, {} failed",
                result.passed, result.failed
            ),
        };
        self.mcp.event(
            "fitness.conformance",
            json!({
                "suite": result.suite,
                "passed": result.passed,
                "failed": result.failed,
                "other": result.other,
                "error": result.error,
            }),
            None,
        );
        self.progress.finish_phase(&summary);
        self.conformance = Some(result);
        Ok(())
    }

    fn register(&mut self) -> anyhow::Result<()> {
        let value = serde_json::to_value(&self.prereg)?;
        let path = self.dir.join("preregistration.json");
        self.write_json(&path, &value)?;
        let event = json!({
            "hash": self.prereg.hash,
            "preregistration": value,
        });
        self.mcp
            .event("fitness.preregistration", event.clone(), None);
        self.agent.event("fitness.preregistration", event, None);
        Ok(())
    }

    fn options(&self) -> ClientOptions {
        ClientOptions {
            seed: self.cfg.seed,
            timeout: self.cfg.model_timeout,
            ..ClientOptions::default()
        }
    }

    async fn with_session(&mut self, session: &Session, tools: &[Tool]) -> anyhow::Result<Flow> {
        let cfg = self.cfg;
        let opts = self.options();
        let runner = client_for(&cfg.runner, &opts)?;
        let judge = match &cfg.judge {
            Some(id) => Some(client_for(id, &opts)?),
            None => None,
        };
        let reference_id = reference_model(&cfg.runner);
        let reference = client_for(&reference_id, &opts)?;
        self.reference_model = Some(reference_id.to_string());

        self.tools = tools.to_vec();

        // 3. Suite generation with its ledger (or the reused suite).
        self.progress.phase("generate", 1);
        if let Some(path) = &cfg.fixed_suite {
            let generation = self
                .reuse_suite(path, tools, judge.as_deref(), "generate")
                .await?;
            return self
                .after_generation(generation, session, tools, &runner, &reference, &judge)
                .await;
        }
        let gen_opts = GenerateOptions {
            generator: cfg.generator,
            n_tasks: cfg.n_tasks as usize,
            overgen_factor: cfg.overgen_factor,
            seed: cfg.seed,
            credential: cfg.credential,
            screen: cfg.screen,
            id_prefix: "t".to_owned(),
            exclude_prompts: Vec::new(),
            seed_handles: crate::suite::schema_walk2::seed_handles(&cfg.target),
        };
        session.set_corr_id(Some("generate"));
        let generation = crate::suite::generate(
            session,
            tools,
            self.instructions.as_deref(),
            &gen_opts,
            judge.as_deref(),
            cfg.screen.then_some(runner.as_ref()),
            &self.agent,
        )
        .await;
        session.set_corr_id(None);
        let generation = generation.context("suite generation failed")?;
        self.ensure_server(session)?;
        self.after_generation(generation, session, tools, &runner, &reference, &judge)
            .await
    }

    /// Load a suite.json, check its hash, and stand it in for generation:
    /// the ledger counts its tasks and says the suite was reused.
    async fn reuse_suite(
        &mut self,
        path: &std::path::Path,
        tools: &[Tool],
        judge: Option<&dyn ModelClient>,
        corr: &str,
    ) -> anyhow::Result<GenerationReport> {
        let suite = load_suite(path)?;
        anyhow::ensure!(
            suite.generator == self.cfg.generator.as_str(),
            "the suite in {} was made by {} but this run registers the generator {}",
            path.display(),
            suite.generator,
            self.cfg.generator
        );
        let (labels, spend) = crate::suite::destructive::assess(tools, judge, &self.agent).await;
        let n = suite.tasks.len() as u64;
        self.agent.event(
            "fitness.suite_reused",
            json!({"path": path.display().to_string(), "hash": suite.hash, "tasks": n}),
            Some(corr),
        );
        Ok(GenerationReport {
            ledger: rec::SuiteLedger {
                candidates: Some(n),
                admitted: Some(n),
                tasks: Some(n),
                rejected_by_rule: Vec::new(),
                trimmed_surplus: Some(0),
                null_screened: None,
                quality: None,
                judge_calls: None,
                limitation: Some(format!(
                    "the suite was reused, not generated in this run: {n} tasks from {} (suite hash {}); candidates and admitted count those tasks",
                    path.file_name().map_or_else(
                        || path.display().to_string(),
                        |f| f.to_string_lossy().into_owned()
                    ),
                    suite.hash
                )),
            },
            suite,
            rejections: Vec::new(),
            screened_out: Vec::new(),
            screen_errors: 0,
            spend: spend.into_iter().collect(),
            destructiveness: labels,
            leaks_at_generation: Vec::new(),
            degenerate: false,
            observed: Default::default(),
            walk: None,
        })
    }

    async fn after_generation(
        &mut self,
        generation: GenerationReport,
        session: &Session,
        tools: &[Tool],
        runner: &Arc<dyn ModelClient>,
        reference: &Arc<dyn ModelClient>,
        judge: &Option<Arc<dyn ModelClient>>,
    ) -> anyhow::Result<Flow> {
        let cfg = self.cfg;
        self.add_spend(&generation.spend);
        self.write_json(&self.dir.join("suite.json"), &generation.suite)?;
        self.suite_hash = generation.suite.hash.clone();
        self.progress.finish_phase(&format!(
            "{} tasks from {} candidates",
            generation.suite.tasks.len(),
            generation.ledger.candidates.unwrap_or(0)
        ));
        let tasks = generation.suite.tasks.clone();
        self.tasks = tasks.clone();
        for u in generation.walk.iter().flat_map(|w| &w.unsatisfiable) {
            self.own_notes.push(format!(
                "Suite: the tool `{}` was dropped from the walk: {}.",
                u["tool"].as_str().unwrap_or("?"),
                u["why"].as_str().unwrap_or("")
            ));
        }
        self.generation = Some(generation);

        // 4. Our own failures first: a judge that could not write the
        // suite is not the server's thin surface.
        if let Flow::Stop { outcome, gate } = self.synthesis_errors() {
            return Ok(Flow::Stop { outcome, gate });
        }
        // 5. Free gates.
        if let Flow::Stop { outcome, gate } = self.structural()? {
            return Ok(Flow::Stop { outcome, gate });
        }
        if let Flow::Stop { outcome, gate } = self.answer_leak(&tasks, tools) {
            return Ok(Flow::Stop { outcome, gate });
        }

        let instructions = self.instructions.clone();
        let trials = Trials {
            tools,
            instructions: instructions.as_deref(),
            budget: Budget {
                max_turns: cfg.max_turns,
                max_tokens: cfg.max_tokens,
            },
        };

        // 6. Cheap gate: the three null arms.
        if let Flow::Stop { outcome, gate } = self
            .null_gate(session, tools, runner.as_ref(), &trials, &tasks)
            .await?
        {
            return Ok(Flow::Stop { outcome, gate });
        }

        // 7. Paid gate: construct, with its extensions.
        let mut driven = tasks.clone();
        let flow = self
            .construct(
                session,
                tools,
                reference.as_ref(),
                judge.as_deref(),
                runner.as_ref(),
                &trials,
                &mut driven,
            )
            .await;
        self.tasks = driven.clone();
        if let Flow::Stop { outcome, gate } = flow? {
            return Ok(Flow::Stop { outcome, gate });
        }

        // 8. The drive.
        if let Flow::Stop { outcome, gate } = self
            .drive(session, tools, runner.as_ref(), &trials, &driven)
            .await?
        {
            return Ok(Flow::Stop { outcome, gate });
        }

        // 9. The null gate again, now that the agent's rate exists.
        self.null_redecide()
    }

    fn add_spend(&mut self, spend: &[crate::suite::PhaseSpend]) {
        for phase in spend {
            let role = if phase.phase == "screen" {
                Spender::Runner
            } else {
                Spender::Judge
            };
            let Ok(model) = phase.model.parse::<ModelId>() else {
                continue;
            };
            self.cost.add_calls(
                role,
                &model,
                &phase.usage,
                phase.calls,
                phase.calls_without_usage,
                phase.calls_that_threw,
            );
            self.model_calls += phase.calls + phase.calls_that_threw;
        }
    }

    /// A server that is gone ends the run VOID (a lost server), naming why,
    /// rather than counting every later call against its surface.
    fn ensure_server(&mut self, session: &Session) -> anyhow::Result<()> {
        match session.lost() {
            None => Ok(()),
            Some(why) => {
                let why = format!("lost the server: {why}");
                self.interrupted = Some(Interruption::Failed(why.clone()));
                anyhow::bail!(why)
            }
        }
    }

    fn push_gate(&mut self, gate: GateRecord) {
        if let Some(existing) = self.gates.iter_mut().find(|g| g.id == gate.id) {
            *existing = gate;
        } else {
            self.gates.push(gate);
        }
    }

    /// The judge's synthesis calls, gated like the drive's model errors:
    /// over the error limit the run is COMPROMISED at `synthesis`, our
    /// measurement's failure, never INSUFFICIENT_SURFACE.
    fn synthesis_errors(&mut self) -> Flow {
        let Some(calls) = self
            .generation
            .as_ref()
            .and_then(|g| g.ledger.judge_calls.clone())
        else {
            return Flow::Continue;
        };
        let check = gates::compromised(
            calls.made.saturating_sub(calls.failed),
            calls.failed,
            self.cfg.floors.max_error_rate,
        );
        let explain = format!(
            "The judge was asked {} times for candidate tasks and {} calls failed{}; the limit is {}.",
            calls.made,
            calls.failed,
            calls
                .last_error
                .as_deref()
                .map(|e| format!(" (last: {e})"))
                .unwrap_or_default(),
            pct(Some(check.max_error_rate))
        );
        if calls.failed > 0 {
            self.own_notes.push(format!("Synthesis: {explain}"));
        }
        self.push_gate(GateRecord {
            id: "synthesis".to_owned(),
            cost_tier: CostTier::Cheap,
            ok: !check.compromised,
            verdict: None,
            reason: if check.compromised {
                "judge_failed"
            } else {
                "ok"
            }
            .to_owned(),
            detail: GateDetail::Synthesis {
                calls: calls.made,
                failures: calls.failed,
                max_error_rate: check.max_error_rate,
                compromised: check.compromised,
                explain: Some(explain),
            },
            source_detail: None,
        });
        if check.compromised {
            Flow::Stop {
                outcome: Outcome::Compromised,
                gate: "synthesis".to_owned(),
            }
        } else {
            Flow::Continue
        }
    }

    fn structural(&mut self) -> anyhow::Result<Flow> {
        let generation = self.generation.as_ref().context("no suite")?;
        let ledger = &generation.ledger;
        let fates = SuiteFates {
            candidates: ledger.candidates.unwrap_or(0),
            rejected_by_rule: ledger
                .rejected_by_rule
                .iter()
                .map(|r| (r.rule.clone(), r.count))
                .collect(),
            trimmed_surplus: ledger.trimmed_surplus.unwrap_or(0),
            null_screened: ledger.null_screened.as_ref().map_or(0, |s| s.dropped),
            suite_size: generation.suite.tasks.len() as u64,
        };
        // The registered size is the floor the suite must reach: a suite
        // smaller than registered cannot run the registered test.
        let min_suite = self.cfg.floors.min_suite.max(self.cfg.n_tasks);
        let report = gates::structural_with(&fates, min_suite, self.cfg.floors.min_admission_rate)?;
        let explain = format!(
            "{} candidates: {} rejected by rule, {} trimmed as surplus, {} deleted by the null screen, {} in the suite (registered {}, floor {}); admission rate {} against a floor of {}.",
            fates.candidates,
            report.rejected,
            fates.trimmed_surplus,
            fates.null_screened,
            fates.suite_size,
            self.cfg.n_tasks,
            self.cfg.floors.min_suite,
            report
                .admission_rate
                .map_or("undefined".to_owned(), |r| format!("{r:.2}")),
            report.min_admission_rate
        );
        // A judge writes judge-synth's candidates: what admission rejected
        // says as much about the judge as about the server.
        let judged: u64 = fates
            .rejected_by_rule
            .iter()
            .filter(|(rule, _)| !["destructive-excluded", "error-answer"].contains(&rule.as_str()))
            .map(|(_, n)| n)
            .sum();
        let explain = if self.cfg.generator == crate::suite::GeneratorId::JudgeSynth1 && judged > 0
        {
            format!(
                "{explain} The candidates are the judge's: {judged} were rejected for how the judge wrote them (malformed, a check that cannot match, an answer the server did not return, ...), which measures the judge ({}) as much as the server's surface.",
                self.cfg
                    .judge
                    .as_ref()
                    .map_or_else(|| "none".to_owned(), ToString::to_string)
            )
        } else {
            explain
        };
        self.own_notes.push(format!("Suite: {explain}"));
        self.push_gate(GateRecord {
            id: "structural".to_owned(),
            cost_tier: CostTier::Free,
            ok: report.ok,
            verdict: None,
            reason: name_of(&report.reason),
            detail: GateDetail::Structural {
                n_requested: Some(self.cfg.n_tasks),
                n_generated: Some(fates.candidates),
                admission_rate: report.admission_rate,
                min_admission_rate: Some(report.min_admission_rate),
                min_generated: Some(min_suite),
                explain: Some(explain),
            },
            source_detail: None,
        });
        Ok(match report.refusal {
            Some(code) => Flow::Stop {
                outcome: code,
                gate: "structural".to_owned(),
            },
            None => Flow::Continue,
        })
    }

    /// The driven suite re-checked: no answer key in a prompt, in the
    /// solution's arguments, or in the instructions and tool descriptions.
    fn answer_leak(&mut self, tasks: &[Task], tools: &[Tool]) -> Flow {
        let mut surfaces: Vec<(String, String)> = Vec::new();
        if let Some(i) = &self.instructions {
            surfaces.push(("instructions".to_owned(), i.to_lowercase()));
        }
        for t in tools {
            if let Some(d) = &t.description {
                surfaces.push((format!("description of {}", t.name), d.to_lowercase()));
            }
        }
        let mut leaks = Vec::new();
        for task in tasks {
            let key = task.answer_key.trim().to_lowercase();
            if key.len() < 2 {
                continue;
            }
            if task.prompt.to_lowercase().contains(&key) {
                leaks.push(json!({"task": task.id, "where": "prompt"}));
                continue;
            }
            if task.solution.iter().any(|c| {
                serde_json::Value::Object(c.arguments.clone())
                    .to_string()
                    .to_lowercase()
                    .contains(&key)
            }) {
                leaks.push(json!({"task": task.id, "where": "solution arguments"}));
                continue;
            }
            if let Some((place, _)) = surfaces.iter().find(|(_, text)| text.contains(&key)) {
                leaks.push(json!({"task": task.id, "where": place}));
            }
        }
        let at_generation = self
            .generation
            .as_ref()
            .map(|g| g.leaks_at_generation.clone())
            .unwrap_or_default();
        let ok = leaks.is_empty();
        self.push_gate(GateRecord {
            id: "answer_leak".to_owned(),
            cost_tier: CostTier::Free,
            ok,
            verdict: None,
            reason: if ok { "ok" } else { "answer_in_task" }.to_owned(),
            detail: GateDetail::AnswerLeak {
                leaks,
                at_generation,
            },
            source_detail: None,
        });
        if ok {
            Flow::Continue
        } else {
            Flow::Stop {
                outcome: Outcome::Degenerate,
                gate: "answer_leak".to_owned(),
            }
        }
    }

    fn gate_prereg(&self) -> gates::PreRegistration {
        let f = &self.cfg.floors;
        gates::PreRegistration {
            n_tasks: self.cfg.n_tasks,
            reps: self.cfg.reps,
            alpha: f.alpha,
            threshold: f.construct_threshold,
            detectable: gates::default_detectable(f.construct_threshold),
            planned_power: config::PLANNED_POWER,
            extension_size: self.cfg.extension_size,
            max_extensions: self.cfg.max_extensions,
        }
    }

    fn plan_power(&mut self) -> anyhow::Result<Flow> {
        let prereg = self.gate_prereg();
        let report = gates::plan_power_gate(&prereg)?;
        let actual_n = prereg.max_trials();
        let required_n = report.required_n.unwrap_or(0);
        let explain = if report.ok {
            format!(
                "A flawless reference agent can publish a pass at {} pooled trials; the registration reaches up to {actual_n}.",
                report.publishable_at.unwrap_or(actual_n)
            )
        } else {
            let sizes = gates::publishable_sizes(&prereg)?;
            let mut would = Vec::new();
            if let Some(t) = sizes.min_tasks {
                would.push(format!("--tasks {t} --reps {}", prereg.reps));
            }
            if let Some(r) = sizes.min_reps {
                would.push(format!("--tasks {} --reps {r}", prereg.n_tasks));
            }
            format!(
                "This registration ({} tasks x {} reps, {} extension batches of {} tasks) reaches at most {actual_n} pooled trials; a flawless reference agent needs {} for a pass to be published at threshold {}, so the run could only refuse. Refused before connecting to the server and before any model call. Publishable with {}.",
                prereg.n_tasks,
                prereg.reps,
                prereg.max_extensions,
                prereg.extension_size,
                report
                    .perfect_agent_min_trials
                    .map_or("more than 10,000".to_owned(), |n| n.to_string()),
                prereg.threshold,
                if would.is_empty() {
                    "no size up to 10,000 trials".to_owned()
                } else {
                    would.join(", or ")
                }
            )
        };
        if !report.ok {
            self.own_notes.push(format!("Plan power: {explain}"));
        }
        self.push_gate(GateRecord {
            id: "plan_power".to_owned(),
            cost_tier: CostTier::Free,
            ok: report.ok,
            verdict: None,
            reason: name_of(&report.reason),
            detail: GateDetail::PlanPower {
                required_n,
                actual_n,
                threshold: prereg.threshold,
                detectable_rate: prereg.detectable,
                achieved_power: gates::achieved_power(
                    actual_n,
                    prereg.threshold,
                    prereg.detectable,
                    prereg.alpha,
                ),
                explain: Some(explain),
            },
            source_detail: None,
        });
        Ok(match report.refusal {
            Some(code) => Flow::Stop {
                outcome: code,
                gate: "plan_power".to_owned(),
            },
            None => Flow::Continue,
        })
    }

    /// One model-driven trial with the run's bookkeeping: cancellation, the
    /// spend cap, and the cost ledger.
    async fn trial(
        &mut self,
        model: &dyn ModelClient,
        role: &str,
        session: &Session,
        trials: &Trials<'_>,
        task: &Task,
        kind: TrialKind,
    ) -> anyhow::Result<TrialOutcome> {
        if let Some(cap) = self.cfg.max_model_calls
            && self.model_calls >= cap
        {
            self.interrupted = Some(Interruption::SpendCap { calls: cap });
            anyhow::bail!("spend cap reached");
        }
        let mut cancel = self.cancel.clone();
        if cancel.is_cancelled() {
            self.interrupted = Some(Interruption::Cancelled);
            anyhow::bail!("interrupted");
        }
        self.ensure_server(session)?;
        let outcome = tokio::select! {
            outcome = trials.run(model, session, task, kind, &self.agent) => outcome,
            () = cancel.cancelled() => {
                self.interrupted = Some(Interruption::Cancelled);
                self.agent.event("fitness.interrupted", json!({"during": kind.corr_id(&task.id)}), Some(&kind.corr_id(&task.id)));
                anyhow::bail!("interrupted");
            }
        };
        let threw = outcome.model_errors.len() as u64;
        self.model_calls += u64::from(outcome.model_calls) + threw;
        self.cost.add_calls(
            Spender::Runner,
            model.id(),
            &outcome.usage,
            u64::from(outcome.model_calls),
            u64::from(outcome.calls_without_usage),
            threw,
        );
        if role == "runner"
            && let Some(m) = &outcome.model_reported
        {
            self.runner_reported = Some(m.clone());
        }
        self.progress.advance();
        Ok(outcome)
    }

    async fn null_gate(
        &mut self,
        session: &Session,
        tools: &[Tool],
        runner: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<Flow> {
        let labels = [
            TrialKind::NullRandom,
            TrialKind::NullNoTools,
            TrialKind::NullStubbedEmpty,
        ];
        self.null_arms = labels
            .iter()
            .map(|k| NullArm {
                label: k.null_label().to_owned(),
                k: 0,
                n: 0,
            })
            .collect();
        let mut errored = [0u64; 3];
        for (i, kind) in labels.into_iter().enumerate() {
            self.progress
                .phase(&format!("null {}", kind.null_label()), tasks.len() as u64);
            let (mut k, mut n) = (0, 0);
            for task in tasks {
                let passed = if kind == TrialKind::NullRandom {
                    if self.cancel.is_cancelled() {
                        self.interrupted = Some(Interruption::Cancelled);
                        anyhow::bail!("interrupted");
                    }
                    self.ensure_server(session)?;
                    let r = self.random_arm(session, tools, task, i as u64).await;
                    self.progress.advance();
                    r
                } else {
                    let outcome = self
                        .trial(runner, "runner", session, trials, task, kind)
                        .await?;
                    if trials::errored(&outcome) {
                        errored[i] += 1;
                        continue;
                    }
                    trials::answered(task, &outcome)
                };
                n += 1;
                k += u64::from(passed);
            }
            self.null_arms[i].k = k;
            self.null_arms[i].n = n;
            self.progress.finish_phase(&format!("{k} of {n} passed"));
            // Early kill: decided before the next arm when already certain.
            let decision = gates::null_baseline_with_ratio(
                &self.null_arms,
                AgentSignal::NotYetMeasured,
                self.cfg.floors.null_ratio,
            )?;
            if decision.outcome == NullOutcome::Kill {
                return Ok(self.record_null(&decision, &errored));
            }
        }
        let decision = gates::null_baseline_with_ratio(
            &self.null_arms,
            AgentSignal::NotYetMeasured,
            self.cfg.floors.null_ratio,
        )?;
        Ok(self.record_null(&decision, &errored))
    }

    /// The zero-token null: the expected tool called with random
    /// schema-valid arguments; its result text is the answer.
    async fn random_arm(
        &mut self,
        session: &Session,
        tools: &[Tool],
        task: &Task,
        arm: u64,
    ) -> bool {
        use rand::SeedableRng as _;
        use rand::rngs::ChaCha8Rng;
        let corr = TrialKind::NullRandom.corr_id(&task.id);
        let Some(tool) = task
            .expected_tools
            .iter()
            .find_map(|name| tools.iter().find(|t| t.name == name.as_str()))
        else {
            return false;
        };
        let seed = self.cfg.seed ^ record::stable_hash(&corr) ^ arm;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let schema = serde_json::Value::Object((*tool.input_schema).clone());
        let limits = crate::suite::schema_args::Limits::default().within(session.timeout());
        let args =
            match crate::suite::schema_args::valid_arguments_within(&schema, &mut rng, &limits) {
                Ok(args) => args,
                // No valid arguments, no call: the arm cannot pass this task.
                Err(why) => {
                    self.mcp.event(
                        "fitness.arguments_unsatisfiable",
                        json!({"tool": tool.name, "why": why.to_string()}),
                        Some(&corr),
                    );
                    return false;
                }
            };
        session.set_corr_id(Some(&corr));
        let result = session.call_tool(&tool.name, args).await;
        session.set_corr_id(None);
        match result {
            Ok(r) if r.is_error != Some(true) => {
                task.check.check(&crate::model::agent::result_text(&r))
            }
            _ => false,
        }
    }

    fn record_null(&mut self, decision: &NullBaseline, errored: &[u64; 3]) -> Flow {
        let explain = match decision.outcome {
            NullOutcome::Kill => format!(
                "The null models' 95th percentile pass rate {} reaches the line {}: the suite can be passed without the server.",
                pct(decision.t_null),
                pct(decision.kill_threshold)
            ),
            NullOutcome::Deferred => format!(
                "The null models' 95th percentile pass rate {} is below 0.5; decided again against the agent's rate after the drive.",
                pct(decision.t_null)
            ),
            NullOutcome::Proceed => format!(
                "The null models' 95th percentile pass rate {} is below the line {} ({} x the agent's {}).",
                pct(decision.t_null),
                pct(decision.kill_threshold),
                decision.ratio,
                pct(decision.t_agent)
            ),
            NullOutcome::Indeterminate => {
                "The null baseline could not be decided (a null arm or the agent's rate is missing, or the agent passed nothing): it halts like a kill.".to_owned()
            }
        };
        let errors: u64 = errored.iter().sum();
        let explain = if errors > 0 {
            format!("{explain} {errors} null trials errored and are not counted.")
        } else {
            explain
        };
        let halts = decision.halts;
        self.push_gate(GateRecord {
            id: "null_baseline".to_owned(),
            cost_tier: CostTier::Cheap,
            ok: !halts,
            verdict: None,
            reason: name_of(&decision.reason),
            detail: GateDetail::NullBaseline {
                rates: decision
                    .rates
                    .iter()
                    .map(|r| rec::NullRate {
                        label: r.label.clone(),
                        k: r.k,
                        n: r.n,
                        rate: r.rate.unwrap_or(0.0),
                    })
                    .collect(),
                t_null: decision.t_null,
                t_agent: decision.t_agent,
                kill_threshold: decision.kill_threshold,
                ratio: Some(decision.ratio),
                percentile: Some(decision.percentile as u64),
                decision: Some(name_of(&decision.outcome)),
                explain: Some(explain),
            },
            source_detail: None,
        });
        match decision.refusal {
            Some(code) if halts => Flow::Stop {
                outcome: code,
                gate: "null_baseline".to_owned(),
            },
            _ => Flow::Continue,
        }
    }

    /// Reference trials over a batch of tasks; counts for the ledger.
    async fn construct_batch(
        &mut self,
        session: &Session,
        reference: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<BatchCounts> {
        let mut counts = BatchCounts {
            tasks: tasks.len() as u64,
            ..BatchCounts::default()
        };
        for task in tasks {
            for _ in 0..self.cfg.reps {
                let outcome = self
                    .trial(
                        reference,
                        "reference",
                        session,
                        trials,
                        task,
                        TrialKind::Construct,
                    )
                    .await?;
                if trials::errored(&outcome) {
                    counts.errors += 1;
                } else {
                    counts.trials += 1;
                    counts.successes += u64::from(trials::reached_through_server(task, &outcome));
                }
            }
        }
        Ok(counts)
    }

    #[allow(clippy::too_many_arguments)]
    async fn construct(
        &mut self,
        session: &Session,
        tools: &[Tool],
        reference: &dyn ModelClient,
        judge: Option<&dyn ModelClient>,
        runner: &dyn ModelClient,
        trials: &Trials<'_>,
        driven: &mut Vec<Task>,
    ) -> anyhow::Result<Flow> {
        let prereg = self.gate_prereg();
        self.progress.phase("construct", prereg.registered_trials());
        let first = self
            .construct_batch(session, reference, trials, &driven.clone())
            .await?;
        let mut ledger = vec![first];
        let mut batch_info: Vec<BatchInfo> = Vec::new();
        let resolution = loop {
            let res =
                gates::resolve_extensions_with(&prereg, &ledger, self.cfg.floors.max_error_rate)?;
            match res.decision {
                ExtensionDecision::ConsumeBatch { index } => {
                    self.progress.finish_phase(&format!(
                        "unresolved at {} of {}: extension batch {index}",
                        res.pooled.successes, res.pooled.trials
                    ));
                    let seed = self.cfg.seed.wrapping_add(index);
                    let opts = GenerateOptions {
                        generator: self.cfg.generator,
                        n_tasks: self.cfg.extension_size as usize,
                        overgen_factor: self.cfg.overgen_factor,
                        seed,
                        credential: self.cfg.credential,
                        screen: self.cfg.screen,
                        id_prefix: format!("x{index}-"),
                        exclude_prompts: driven.iter().map(|t| t.prompt.clone()).collect(),
                        seed_handles: crate::suite::schema_walk2::seed_handles(&self.cfg.target),
                    };
                    let corr = format!("generate::x{index}");
                    // A reused suite brings its extension batches along.
                    let kept = self
                        .cfg
                        .fixed_suite
                        .as_ref()
                        .map(|p| p.with_file_name(batch_file(index)))
                        .filter(|p| p.is_file());
                    session.set_corr_id(Some(&corr));
                    let batch = match &kept {
                        Some(path) => self.reuse_suite(path, tools, judge, &corr).await,
                        None => {
                            crate::suite::generate(
                                session,
                                tools,
                                self.instructions.as_deref(),
                                &opts,
                                judge,
                                self.cfg.screen.then_some(runner),
                                &self.agent,
                            )
                            .await
                        }
                    };
                    session.set_corr_id(None);
                    let batch = batch
                        .with_context(|| format!("generating extension batch {index} failed"))?;
                    self.add_spend(&batch.spend);
                    self.write_json(&self.dir.join(batch_file(index)), &batch.suite)?;
                    let drops = record::batch_drops(&batch);
                    let tasks = batch.suite.tasks.clone();
                    batch_info.push((
                        tasks.iter().map(|t| t.id.clone()).collect(),
                        batch.ledger.candidates.unwrap_or(0),
                        Some(batch.suite.hash.clone()),
                        drops,
                        seed,
                    ));
                    self.progress.phase(
                        &format!("extension {index}"),
                        tasks.len() as u64 * self.cfg.reps,
                    );
                    let counts = self
                        .construct_batch(session, reference, trials, &tasks)
                        .await?;
                    driven.extend(tasks);
                    ledger.push(counts);
                }
                _ => break res,
            }
        };
        for (step, (ids, generated, hash, drops, seed)) in resolution.steps.iter().zip(batch_info) {
            self.extensions.push(ExtensionBatch {
                index: step.index as u32,
                gate: "construct".to_owned(),
                tasks_added: step.tasks_added,
                trials_added: step.trials_added,
                pooled_before: rec::Count {
                    k: step.pooled_before.k,
                    n: step.pooled_before.n,
                },
                pooled_after: rec::Count {
                    k: step.pooled_after.k,
                    n: step.pooled_after.n,
                },
                verdict_before: verdict_outcome(step.verdict_before),
                verdict_after: verdict_outcome(step.verdict_after),
                seed: Some(seed),
                batch_suite_hash: hash,
                short: step.tasks_added < self.cfg.extension_size,
                task_ids: ids,
                generated: Some(generated),
                dropped: Some(drops),
            });
        }
        let (outcome, reason) = match resolution.decision {
            ExtensionDecision::Passed => (None, "ok".to_owned()),
            ExtensionDecision::Refused { outcome, reason } => (Some(outcome), name_of(&reason)),
            ExtensionDecision::ConsumeBatch { .. } => unreachable!("the loop consumes every batch"),
        };
        let tape_reading = if outcome.is_some() {
            tape_reading::read(
                &self.dir.join(fitness_shared::site::MCP_TAPE),
                "::construct",
            )
            .ok()
        } else {
            None
        };
        let pooled = resolution.pooled;
        let verdict = resolution.verdict.as_ref();
        self.progress.finish_phase(&format!(
            "{} of {} reached the answer through the server",
            pooled.successes, pooled.trials
        ));
        if let Some(reading) = &tape_reading {
            self.own_notes.push(format!(
                "Construct gate, read from the tape: {} tools/call requests recorded for the reference trials, {} answered with an error, {} never answered.",
                reading.calls_recorded, reading.call_errors, reading.no_response
            ));
        }
        self.push_gate(GateRecord {
            id: "construct".to_owned(),
            cost_tier: CostTier::Paid,
            ok: outcome.is_none(),
            verdict: verdict.map(|v| GateVerdict {
                outcome: verdict_outcome(v.outcome),
                k: v.k,
                n: v.n,
                threshold: v.threshold,
                alpha: v.alpha,
                p_value: v.p_value,
            }),
            reason,
            detail: GateDetail::Construct {
                n: pooled.trials,
                n_intended: Some(prereg.registered_trials()),
                errors: pooled.errors,
                max_error_rate: Some(resolution.errors.max_error_rate),
                compromised: resolution.errors.compromised,
                reps: Some(self.cfg.reps),
                published: verdict.map(|v| rec::PublishedVerdict {
                    outcome: verdict_outcome(v.outcome),
                    raw_outcome: verdict_outcome(v.raw_outcome),
                    downgraded: v.downgraded,
                    wilson_low: v.wilson_low,
                    wilson_high: v.wilson_high,
                    required_n: v.required_n.unwrap_or(0),
                    achieved_power: v.achieved_power,
                    reason: name_of(&v.reason),
                }),
                pooled: Some(rec::Count {
                    k: pooled.successes,
                    n: pooled.trials,
                }),
                extensions_consumed: resolution.steps.len() as u64,
                tape_reading,
            },
            source_detail: None,
        });
        Ok(match outcome {
            None => Flow::Continue,
            Some(code) => Flow::Stop {
                outcome: code,
                gate: "construct".to_owned(),
            },
        })
    }

    async fn drive(
        &mut self,
        session: &Session,
        tools: &[Tool],
        runner: &dyn ModelClient,
        trials: &Trials<'_>,
        tasks: &[Task],
    ) -> anyhow::Result<Flow> {
        self.progress
            .phase("drive", tasks.len() as u64 * self.cfg.reps);
        let mut results = Vec::with_capacity(tasks.len());
        let mut errors = 0u64;
        let mut completed = 0u64;
        for task in tasks {
            let mut reps = Vec::with_capacity(self.cfg.reps as usize);
            for _ in 0..self.cfg.reps {
                let outcome = self
                    .trial(runner, "runner", session, trials, task, TrialKind::Drive)
                    .await?;
                if trials::errored(&outcome) {
                    errors += 1;
                } else {
                    completed += 1;
                }
                reps.push(outcome);
            }
            results.push((task, reps));
        }
        let check = gates::compromised(completed, errors, self.cfg.floors.max_error_rate);
        self.push_gate(GateRecord {
            id: "drive".to_owned(),
            cost_tier: CostTier::Paid,
            ok: !check.compromised,
            verdict: None,
            reason: if check.compromised {
                "compromised"
            } else {
                "ok"
            }
            .to_owned(),
            detail: GateDetail::Drive {
                trials: completed,
                errors,
                max_error_rate: check.max_error_rate,
                compromised: check.compromised,
            },
            source_detail: None,
        });
        if check.compromised {
            return Ok(Flow::Stop {
                outcome: Outcome::Compromised,
                gate: "drive".to_owned(),
            });
        }
        let runner_model = self
            .runner_reported
            .clone()
            .unwrap_or_else(|| self.cfg.runner.to_string());
        let score = record::score(&runner_model, tools, &results, &self.prices);
        self.progress.finish_phase(&format!(
            "first try {} of {}",
            score.first_try.k, score.first_try.n
        ));
        self.score = Some(score);
        Ok(Flow::Continue)
    }

    fn null_redecide(&mut self) -> anyhow::Result<Flow> {
        let Some(score) = &self.score else {
            return Ok(Flow::Continue);
        };
        let agent = AgentSignal::Measured {
            k: score.first_try.k,
            n: score.first_try.n,
        };
        let decision =
            gates::null_baseline_with_ratio(&self.null_arms, agent, self.cfg.floors.null_ratio)?;
        Ok(self.record_null(&decision, &[0; 3]))
    }
}

/// What an extension batch's generation left for the ledger: task ids,
/// candidates, batch suite hash, drops, seed.
type BatchInfo = (Vec<String>, u64, Option<String>, rec::BatchDrops, u64);

/// The construct gate's reference agent: the runner itself, handed the
/// answer key; for the offline sim runners, `sim/reference` (or the same
/// unstable profile, so an unstable API stays unstable).
fn reference_model(runner: &ModelId) -> ModelId {
    match runner.provider {
        ProviderKind::Sim if runner.model != "unstable" => ModelId {
            provider: ProviderKind::Sim,
            model: "reference".to_owned(),
        },
        _ => runner.clone(),
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("unmeasured".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// The file an extension batch's suite is kept in, beside `suite.json`.
pub fn batch_file(index: u64) -> String {
    format!("suite-x{index}.json")
}

/// Read a `suite.json` and check that its hash is the hash of its contents.
pub fn load_suite(path: &std::path::Path) -> anyhow::Result<crate::suite::Suite> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("failed to read the suite {}", path.display()))?;
    let suite: crate::suite::Suite = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a suite.json", path.display()))?;
    let hash = crate::suite::suite_hash(&suite.config, suite.seed, &suite.tasks);
    anyhow::ensure!(
        hash == suite.hash || !bytes.windows(10).any(|w| w == b"[redacted:"),
        "the suite in {} held a secret when it was written, and the copy on disk has it redacted, so its tasks are no longer the ones its hash {} names; generate a new suite instead",
        path.display(),
        suite.hash
    );
    anyhow::ensure!(
        hash == suite.hash,
        "the suite in {} does not match its hash: it says {} but its config, seed and tasks hash to {}",
        path.display(),
        suite.hash,
        hash
    );
    anyhow::ensure!(
        !suite.tasks.is_empty(),
        "the suite in {} has no tasks",
        path.display()
    );
    Ok(suite)
}

impl Run<'_> {
    /// Findings from the tapes and a proposal per finding, for every
    /// outcome. A failure here never costs the record: it becomes a note.
    async fn findings_and_proposals(&mut self) {
        if self.tools.is_empty() {
            return;
        }
        let labels = match &self.generation {
            Some(g) => g.destructiveness.clone(),
            None => crate::rewrite::rule_labels(&self.tools),
        };
        let inputs = crate::rewrite::findings::Inputs {
            dir: &self.dir,
            tools: &self.tools,
            tasks: &self.tasks,
            destructiveness: &labels,
        };
        let wire = match crate::rewrite::findings::read_wire(
            &self.dir.join(fitness_shared::site::MCP_TAPE),
        ) {
            Ok(w) => w,
            Err(e) => {
                self.own_notes.push(format!(
                    "No findings: the wire tape could not be read: {e:#}"
                ));
                return;
            }
        };
        self.findings = crate::rewrite::findings::from_wire(&wire, &inputs);
        if self.findings.is_empty() {
            return;
        }
        let ctx = crate::rewrite::proposals::Context {
            tools: &self.tools,
            tasks: &self.tasks,
            wire: &wire,
        };
        let judge = match (&self.cfg.judge, &self.interrupted) {
            (Some(id), None) => client_for(id, &self.options()).ok(),
            _ => None,
        };
        let within_cap = self
            .cfg
            .max_model_calls
            .is_none_or(|cap| self.model_calls < cap);
        self.proposals = match judge {
            Some(judge)
                if within_cap
                    && !crate::rewrite::proposals::rules_stand_in(Some(judge.as_ref())) =>
            {
                let (proposals, spend) = crate::rewrite::proposals::by_judge(
                    judge.as_ref(),
                    &self.findings,
                    &ctx,
                    &self.agent,
                )
                .await;
                self.add_spend(std::slice::from_ref(&spend));
                proposals
            }
            _ => crate::rewrite::proposals::by_rules(&self.findings, &ctx),
        };
    }
}
