//! The run (R-RUN): connect and probe, register, generate the suite, then
//! the gates in cost order, stopping at the first that refuses; the drive
//! and the score only when every gate passed. Every run ends in a record:
//! a score, the refusal that replaced it, or VOID when the run could not
//! complete its registered size (interrupted, spend cap, lost server).

mod access;
pub mod config;
mod construct;
mod control;
mod drive;
mod findings;
mod free_gates;
pub mod input;
mod null_gate;
mod record;
mod registration;
mod run;
pub mod sandbox;
mod score;
mod suite_files;
mod tape_reading;
mod traces;
mod trials;

use std::sync::Arc;

use anyhow::Context as _;
use fitness_shared::record::{self as rec, Outcome};
use rmcp::model::Tool;
use serde_json::json;

pub use config::{Floors, RunConfig, RunSettings};
pub use control::{Cancel, Interruption, Progress, Quiet};
pub use run::RunOutput;
use run::{Flow, Run, Start};
pub use sandbox::SandboxSettings;
use sandbox::{Sandbox, Server};

use crate::mcp::input::{InputDesk, Serves};
use crate::mcp::report;
use crate::mcp::tap::Tap;
use crate::model::client_for;
use crate::model::price::PriceTable;
use crate::model::types::{ModelClient, ModelId, ProviderKind};
use crate::suite::task::Task;
use crate::suite::{GenerateOptions, GenerationReport, Rejection};
use trials::Trials;

/// Run the whole pipeline and write `out_dir/<run-id>/record.json` with its
/// two tapes. Errors only when nothing could be written at all (bad flags,
/// the output directory, the tapes); every other failure becomes a VOID
/// record that says why.
pub async fn execute(
    cfg: &RunConfig,
    cancel: Cancel,
    progress: &dyn Progress,
) -> anyhow::Result<RunOutput> {
    let prereg = registration::preregistration(cfg)?;
    let prices = match &cfg.settings.prices {
        Some(path) => PriceTable::load(path)?,
        None => PriceTable::bundled(),
    };
    let started_at = crate::clock::now();
    let slug = registration::slug_for(cfg);
    let id = registration::run_id(
        &slug,
        &started_at,
        cfg.settings.seed,
        cfg.settings.run_tag.as_deref(),
    );
    let dir = cfg.settings.out_dir.join(&id);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("failed to create the run directory {}", dir.display()))?;
    let command: Vec<String> = std::env::args().collect();
    let label = format!("fitness run {id}");
    let (mcp, agent) =
        Tap::create_pair(&dir, &label, command, crate::model::agent::AGENT_TAPE_KIND)?;
    mcp.set_cap(cfg.settings.max_tape_bytes);
    agent.set_cap(cfg.settings.max_tape_bytes);
    let stop = stop_signal(&cancel, &mcp, &agent, cfg.settings.max_tape_bytes);
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
    run.access_ledger = run.access_ledger();
    run.export_traces().await;
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

impl Run<'_> {
    async fn stages(&mut self) -> anyhow::Result<Flow> {
        let cfg = self.cfg;
        // 1. The pre-registration, written and hashed before anything else,
        // and the gate that reads nothing but it: a registration that could
        // never publish is refused with zero model calls, after the
        // zero-token probes (a refused run still reports them; a server
        // that cannot be reached leaves the refusal standing, its probes
        // recorded as unreachable).
        self.register()?;
        // A sandbox copy stands in for the operator's paths from the first
        // connection on: the originals are never written, not even by a
        // server's start.
        let (sandbox, target) = Sandbox::prepare(&cfg.settings.sandbox, &cfg.settings.target)?;
        if let Flow::Stop { outcome, gate } = self.plan_power()? {
            self.progress.phase("probe", 1);
            match report::probe(&target, self.mcp.clone(), cfg.settings.timeout, &[]).await {
                Ok(report) => {
                    self.progress
                        .finish_phase(&format!("{} probes", report.probes.len()));
                    self.report = Some(report);
                }
                Err(e) => {
                    let why = format!("the server could not be reached: {e:#}");
                    self.progress.finish_phase(&why);
                    self.unreachable = Some(why);
                }
            }
            return Ok(Flow::Stop { outcome, gate });
        }

        // 2. Connect and probe: zero tokens.
        self.progress.phase("probe", 1);
        let report = report::probe(&target, self.mcp.clone(), cfg.settings.timeout, &[])
            .await
            .context("the server could not be reached")?;
        self.progress.finish_phase(&format!(
            "{} probes, protocol {}",
            report.probes.len(),
            report.server.negotiated_version
        ));
        let negotiated = report.server.negotiated_version.clone();
        self.report = Some(report);

        // 3. The official conformance suite, when asked: at the revision the
        // probes negotiated, counted apart from them.
        if cfg.settings.conformance {
            self.official_conformance(&negotiated).await?;
        }

        // The server's requests for input: sampling answered by the runner
        // in the agent's trials, elicitation by the registered policy.
        let desk = InputDesk::new(Serves {
            sampling: true,
            elicitation: true,
        });
        let answers = Arc::new(input::RunnerAnswers {
            runner: self
                .meter
                .wrap(client_for(&cfg.settings.runner, &self.options())?),
            tape: self.agent.clone(),
            policy: cfg.settings.elicitation,
            max_output_tokens: cfg.settings.budget.max_output_tokens,
            spent: Default::default(),
        });
        desk.set(Some(answers.clone()));
        let server = Server::new(target, sandbox, self.mcp.clone(), cfg.settings.timeout)
            .serving(desk.clone())
            .tracing(self.tracer.clone());
        server.before_generation().await?;
        let session = server
            .connect()
            .await
            .context("the server could not be reached after probing")?;
        self.instructions = session
            .service
            .peer_info()
            .and_then(|i| i.instructions.clone());
        let listed = session.list_tools().await;
        drop(session);
        // Under a credential, the tools listed with none (zero tokens).
        if let Ok(tools) = &listed {
            self.surface_delta = crate::mcp::surface::delta(
                &self.cfg.settings.target,
                tools,
                self.mcp.clone(),
                cfg.settings.timeout,
            )
            .await;
        }
        let result = match listed {
            Ok(tools) => self.with_session(&server, &tools).await,
            Err(e) => Err(e.context("tools/list failed")),
        };
        self.copied_paths = server.sandbox().copied_paths();
        self.cost.absorb(&answers.spent());
        let asked = desk.counts();
        if asked.any() {
            self.input_requests = Some(rec::InputRequests {
                sampling: asked.sampling,
                sampling_answered: asked.sampling_answered,
                elicitation: asked.elicitation,
                elicitation_accepted: asked.elicitation_accepted,
                elicitation_declined: asked.elicitation_declined,
            });
        }
        if let Err(e) = server.close().await {
            self.own_notes.push(format!("After the run: {e:#}"));
        }
        result
    }

    async fn official_conformance(&mut self, negotiated: &str) -> anyhow::Result<()> {
        let crate::mcp::connect::Target::Http(http) = &self.cfg.settings.target else {
            anyhow::bail!("--conformance runs the official suite against HTTP targets only");
        };
        self.progress.phase("conformance", 1);
        let mut cancel = self.cancel.clone();
        let result = tokio::select! {
            r = crate::conformance::run(
                &http.url,
                &self.dir,
                negotiated,
                self.cfg.settings.conformance_baseline.as_deref(),
            ) => r,
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
        let path = self.dir.join(fitness_shared::site::PREREGISTRATION_FILE);
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

    async fn with_session(&mut self, server: &Server, tools: &[Tool]) -> anyhow::Result<Flow> {
        let cfg = self.cfg;
        let opts = self.options();
        // Every model call is reserved on the run's meter before it is sent.
        let runner = self.meter.wrap(client_for(&cfg.settings.runner, &opts)?);
        let judge = match &cfg.settings.judge {
            Some(id) => Some(self.meter.wrap(client_for(id, &opts)?)),
            None => None,
        };
        let reference_id = reference_model(&cfg.settings.runner);
        let reference = self.meter.wrap(client_for(&reference_id, &opts)?);
        self.reference_model = Some(reference_id.to_string());

        self.tools = tools.to_vec();
        self.access = Some(crate::access::Access {
            mode: cfg.settings.sandbox.mode(),
            writers: crate::access::writers(tools, &|_| false),
        });
        self.announce_access(tools);

        // 3. Suite generation with its ledger (or the reused suite).
        self.progress.phase("generate", 1);
        if let Some(path) = &cfg.settings.fixed_suite {
            let generation = self
                .reuse_suite(path, tools, judge.as_deref(), "generate")
                .await?;
            return self
                .after_generation(generation, server, tools, &runner, &reference, &judge)
                .await;
        }
        let gen_opts = GenerateOptions {
            generator: cfg.generator,
            n_tasks: cfg.settings.tasks as usize,
            overgen_factor: cfg.settings.overgen_factor,
            seed: cfg.settings.seed,
            credential: cfg.settings.credential,
            screen: cfg.settings.screen,
            id_prefix: "t".to_owned(),
            exclude_prompts: Vec::new(),
            seed_handles: server
                .target()
                .operator_roots(!cfg.settings.sandbox.writes_at_generation()),
            operator_files: server
                .target()
                .operator_files(!cfg.settings.sandbox.writes_at_generation()),
            watched: server.target().watched(vec![self.dir.clone()]),
            must_reach: Some(
                self.suite_floors(cfg.settings.tasks.max(cfg.settings.floors.min_suite)),
            ),
            access: cfg.settings.sandbox.mode(),
            writes: cfg.settings.sandbox.writes_at_generation(),
            concurrency: self.width(),
            hints: cfg.settings.hints.clone(),
            fresh: Some(server.target().clone()),
        };
        let session = server.session()?;
        session.set_corr_id(Some("generate"));
        let generation = crate::suite::generate(
            &session,
            tools,
            self.instructions.as_deref(),
            &gen_opts,
            judge.as_deref(),
            cfg.settings.screen.then_some(runner.as_ref()),
            &self.agent,
        )
        .await;
        session.set_corr_id(None);
        self.check_spend()?;
        let mut generation = generation.context("suite generation failed")?;
        self.ensure_server(&session)?;
        drop(session);
        server.generated()?;
        // Changes asked of the server, where the sandbox puts the state back.
        crate::suite::add_act_tasks(
            &mut generation,
            tools,
            &gen_opts,
            cfg.settings.sandbox.restore(),
            server,
            cfg.settings.timeout,
            judge.as_deref().map(|j| (j, &self.agent)),
        )
        .await
        .context("act generation failed")?;
        self.after_generation(generation, server, tools, &runner, &reference, &judge)
            .await
    }

    // One piece: the gates in their cost order, one numbered step each, so
    // the order a reader must trust is in one place.
    async fn after_generation(
        &mut self,
        generation: GenerationReport,
        server: &Server,
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
        if let Flow::Stop { outcome, gate } = self.screen_errors() {
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
        let access = crate::access::Access {
            mode: cfg.settings.sandbox.mode(),
            writers: generation_writers(self.generation.as_ref(), tools),
        };
        self.access = Some(access.clone());
        let trials = Trials {
            tools,
            access: &access,
            instructions: instructions.as_deref(),
            budget: cfg.settings.budget,
        };

        // 6. Cheap gate: the three null arms.
        if let Flow::Stop { outcome, gate } = self
            .null_gate(server, tools, runner.as_ref(), &trials, &tasks)
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
        let flow = self.construct(server, &clients, &trials, &mut driven).await;
        self.tasks = driven.clone();
        if let Flow::Stop { outcome, gate } = flow? {
            return Ok(Flow::Stop { outcome, gate });
        }

        // 8. The drive.
        if let Flow::Stop { outcome, gate } = self
            .drive(server, tools, runner.as_ref(), &trials, &driven)
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
        self.write_json(
            &self.dir.join(fitness_shared::site::SUITE_FILE),
            &generation.suite,
        )?;
        self.suite_hash = generation.suite.hash.clone();
        self.rejected
            .extend(generation.rejections.iter().map(Rejection::listed));
        self.screened_out
            .extend(generation.screen_deletions.iter().cloned());
        self.progress.finish_phase(&format!(
            "{} tasks from {} candidates",
            generation.suite.tasks.len(),
            generation.ledger.candidates.unwrap_or(0)
        ));
        let tasks = generation.suite.tasks.clone();
        self.tasks = tasks.clone();
        // A suite short of what was asked says what discovery tried, so a
        // maintainer knows what to seed.
        if let Some(d) = &generation.ledger.discovery
            && (tasks.len() as u64) < self.cfg.settings.tasks
        {
            self.own_notes.push(format!(
                "Suite: {} tasks where {} were asked for. {}",
                tasks.len(),
                self.cfg.settings.tasks,
                d.sentence()
            ));
        }
        if let Some(d) = &generation.ledger.discovery
            && d.seeded_tasks > 0
        {
            self.own_notes.push(format!(
                "Suite: {} of {} tasks seeded by the operator (from {} seed calls), {} from discovery.",
                d.seeded_tasks,
                tasks.len(),
                d.seed_calls,
                d.discovered_tasks
            ));
        }
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
}

/// The tools that may write, as generation labelled them (the judge's
/// labels only add); by the rule alone when nothing was generated.
fn generation_writers(
    generation: Option<&GenerationReport>,
    tools: &[Tool],
) -> std::collections::BTreeSet<String> {
    match generation {
        Some(g) => g.writers.clone(),
        None => crate::access::writers(tools, &|_| false),
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
