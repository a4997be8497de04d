//! The run (R-RUN): connect and probe, register, generate the suite, then
//! the gates in cost order, stopping at the first that refuses; the drive
//! and the score only when every gate passed. Every run ends in a record:
//! a score, the refusal that replaced it, or VOID when the run could not
//! complete its registered size (interrupted, spend cap, lost server).

pub mod config;
mod construct;
mod control;
mod drive;
mod findings;
mod free_gates;
mod null_gate;
mod record;
mod suite_files;
mod tape_reading;
mod trials;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use fitness_shared::gates::NullArm;
use fitness_shared::record::{self as rec, ExtensionBatch, GateRecord, Outcome, RunRecord};
use rmcp::model::Tool;
use serde_json::json;

pub use config::{Floors, RunConfig, RunSettings};
pub use control::{Cancel, Interruption, Progress, Quiet};
pub use suite_files::{batch_file, load_suite};

use crate::mcp::connect::Session;
use crate::mcp::report::{self, Report};
use crate::mcp::tap::Tap;
use crate::model::agent::Budget;
use crate::model::cost::{CostLedger, Role as Spender};
use crate::model::price::PriceTable;
use crate::model::types::{ModelClient, ModelId, ProviderKind};
use crate::model::{ClientOptions, client_for};
use crate::suite::task::Task;
use crate::suite::{GenerateOptions, GenerationReport};
use trials::Trials;

/// Where the run stands: go on, or stop with this outcome at this gate.
#[derive(Debug)]
enum Flow {
    Continue,
    Stop { outcome: Outcome, gate: String },
}

/// What a finished run left behind.
#[derive(Debug)]
pub struct RunOutput {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub interrupted: Option<Interruption>,
}

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
    let prereg = record::preregistration(cfg)?;
    let prices = match &cfg.prices {
        Some(path) => PriceTable::load(path)?,
        None => PriceTable::bundled(),
    };
    let started_at = crate::clock::now();
    let slug = record::slug_for(cfg);
    let id = record::run_id(&slug, &started_at, cfg.seed, cfg.run_tag.as_deref());
    let dir = cfg.out_dir.join(&id);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("failed to create the run directory {}", dir.display()))?;
    let command: Vec<String> = std::env::args().collect();
    let label = format!("fitness run {id}");
    let (mcp, agent) =
        Tap::create_pair(&dir, &label, command, crate::model::agent::AGENT_TAPE_KIND)?;
    mcp.set_cap(cfg.max_tape_bytes);
    agent.set_cap(cfg.max_tape_bytes);
    let stop = stop_signal(&cancel, &mcp, &agent, cfg.max_tape_bytes);
    let start = Start {
        id,
        dir,
        started_at,
        prereg,
        prices,
    };
    let mut run = Run::new(cfg, start, (mcp, agent), progress, cancel);
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

/// What a run is given at its start, before any stage.
struct Start {
    id: String,
    dir: PathBuf,
    started_at: String,
    prereg: rec::PreRegistration,
    prices: PriceTable,
}

impl<'a> Run<'a> {
    /// A run that has written nothing but its two tapes' headers.
    fn new(
        cfg: &'a RunConfig,
        start: Start,
        (mcp, agent): (Tap, Tap),
        progress: &'a dyn Progress,
        cancel: Cancel,
    ) -> Self {
        let Start {
            id,
            dir,
            started_at,
            prereg,
            prices,
        } = start;
        Run {
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
        }
    }
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

/// Serde's name for a unit enum value (`snake_case` reasons).
fn name_of<T: serde::Serialize>(value: &T) -> String {
    fitness_shared::wire_name::wire_name(value).unwrap_or_else(|| "unknown".to_owned())
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
            () = cancel.cancelled() => return Err(self.cancelled()),
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
            seed_handles: cfg.target.operator_paths(),
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

    // One piece: the gates in their cost order, one numbered step each, so
    // the order a reader must trust is in one place.
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
        let tasks = self.keep_generation(generation)?;

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
        let clients = construct::Clients {
            runner: runner.as_ref(),
            reference: reference.as_ref(),
            judge: judge.as_deref(),
        };
        let flow = self
            .construct(session, &clients, &trials, &mut driven)
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

    /// Keep what generation produced: its spend, `suite.json`, the suite
    /// hash and tasks, a note per tool the walk dropped; the suite's tasks.
    fn keep_generation(&mut self, generation: GenerationReport) -> anyhow::Result<Vec<Task>> {
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
        Ok(tasks)
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
}

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
