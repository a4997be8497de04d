//! The state of one run in flight ([`Run`]), what the stages decide
//! ([`Flow`]), and what a finished run leaves ([`RunOutput`]). The stages
//! (`free_gates`, `null_gate`, `construct`, `drive`, `findings`) are
//! `impl Run` blocks of their own rooms; `mod.rs` runs them in cost order.

use std::path::PathBuf;

use fitness_shared::gates::NullArm;
use fitness_shared::record::{self as rec, ExtensionBatch, GateRecord, Outcome, RunRecord};
use rmcp::model::Tool;

use super::config::RunConfig;
use super::control::{Cancel, Interruption, Progress};
use crate::mcp::connect::Session;
use crate::mcp::report::Report;
use crate::mcp::tap::Tap;
use crate::model::ClientOptions;
use crate::model::cost::{CostLedger, Role as Spender};
use crate::model::price::PriceTable;
use crate::model::types::ModelId;
use crate::suite::GenerationReport;
use crate::suite::task::Task;

/// Where the run stands: go on, or stop with this outcome at this gate.
#[derive(Debug)]
pub(super) enum Flow {
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
pub(super) struct Run<'a> {
    pub(super) cfg: &'a RunConfig,
    pub(super) id: String,
    pub(super) dir: PathBuf,
    pub(super) started_at: String,
    pub(super) mcp: Tap,
    pub(super) agent: Tap,
    pub(super) progress: &'a dyn Progress,
    pub(super) cancel: Cancel,
    pub(super) gates: Vec<GateRecord>,
    pub(super) refused_at: Option<String>,
    pub(super) extensions: Vec<ExtensionBatch>,
    pub(super) own_notes: Vec<String>,
    pub(super) cost: CostLedger,
    pub(super) prices: PriceTable,
    pub(super) prereg: rec::PreRegistration,
    pub(super) report: Option<Report>,
    /// Why the probes could not reach the server (a run refused on its
    /// registration probes anyway and keeps going to its record).
    pub(super) unreachable: Option<String>,
    pub(super) instructions: Option<String>,
    /// The tools listed with the run's credential against those listed
    /// without it.
    pub(super) surface_delta: Option<rec::SurfaceDelta>,
    pub(super) generation: Option<GenerationReport>,
    pub(super) suite_hash: String,
    pub(super) runner_reported: Option<String>,
    pub(super) score: Option<rec::Score>,
    pub(super) null_arms: Vec<NullArm>,
    /// Trials of each null arm the model API failed (random, no tools, stubbed).
    pub(super) null_errors: [u64; 3],
    /// The tool list's cost per turn, from the two null arms that ask.
    pub(super) tool_list: Option<fitness_shared::record::ToolListCost>,
    pub(super) interrupted: Option<Interruption>,
    /// Every model call of the run is reserved here before it is sent.
    pub(super) meter: std::sync::Arc<crate::model::meter::SpendMeter>,
    pub(super) reference_model: Option<String>,
    /// The tools as listed (empty when the run stopped before tools/list).
    pub(super) tools: Vec<Tool>,
    /// Every task checked or driven: the suite, then extension batches.
    pub(super) tasks: Vec<Task>,
    pub(super) findings: Vec<rec::Finding>,
    /// Every candidate admission rejected, the suite's then each batch's.
    pub(super) rejected: Vec<rec::ListedCandidate>,
    /// Every candidate the null screen deleted, with the reply that
    /// answered it: the screen's ledger.
    pub(super) screened_out: Vec<rec::ListedCandidate>,
    pub(super) proposals: Vec<rec::Proposal>,
    /// What redaction replaced in the files written beside the tapes
    /// (suite.json and its extension batches).
    pub(super) redacted: fitness_shared::redact::Hits,
    /// The official conformance suite's result (`--conformance`).
    pub(super) conformance: Option<rec::Conformance>,
    /// What the run may do to the server, once its tools are known.
    pub(super) access: Option<crate::access::Access>,
    /// The originals a sandbox copy stood in for.
    pub(super) copied_paths: Vec<String>,
    /// The record's access ledger, read from the tapes at the end.
    pub(super) access_ledger: Option<rec::AccessLedger>,
    /// The server's requests for input, when it made any.
    pub(super) input_requests: Option<rec::InputRequests>,
    /// The trace context every call carries: one trace per trial.
    pub(super) tracer: crate::mcp::trace::Tracer,
    /// Each trial's trace id, by corr_id, once the run is over.
    pub(super) traces: Option<std::collections::BTreeMap<String, String>>,
}

/// What a run is given at its start, before any stage.
pub(super) struct Start {
    pub(super) id: String,
    pub(super) dir: PathBuf,
    pub(super) started_at: String,
    pub(super) prereg: rec::PreRegistration,
    pub(super) prices: PriceTable,
}

impl<'a> Run<'a> {
    /// A run that has written nothing but its two tapes' headers.
    pub(super) fn new(
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
        let tracer = crate::mcp::trace::Tracer::new(&id);
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
            unreachable: None,
            instructions: None,
            surface_delta: None,
            generation: None,
            suite_hash: String::new(),
            runner_reported: None,
            score: None,
            null_arms: Vec::new(),
            null_errors: [0; 3],
            tool_list: None,
            interrupted: None,
            meter: crate::model::meter::SpendMeter::new(cfg.settings.max_model_calls),
            reference_model: None,
            tools: Vec::new(),
            tasks: Vec::new(),
            findings: Vec::new(),
            rejected: Vec::new(),
            screened_out: Vec::new(),
            proposals: Vec::new(),
            redacted: fitness_shared::redact::Hits::default(),
            conformance: None,
            input_requests: None,
            tracer,
            traces: None,
            access: None,
            copied_paths: Vec::new(),
            access_ledger: None,
        }
    }
}

/// Serde's name for a unit enum value (`snake_case` reasons).
pub(super) fn name_of<T: serde::Serialize>(value: &T) -> String {
    fitness_shared::wire_name::wire_name(value).unwrap_or_else(|| "unknown".to_owned())
}

impl Run<'_> {
    /// Write a file beside the tapes (a suite, the pre-registration) in its
    /// published form, counting what redaction replaced. A suite that loses
    /// a secret here no longer matches its hash, so it cannot be re-driven
    /// (`load_suite` says why); the run itself drives the tasks in memory.
    pub(super) fn write_json<T: serde::Serialize>(
        &mut self,
        path: &std::path::Path,
        item: &T,
    ) -> anyhow::Result<()> {
        let mut value = serde_json::to_value(item)?;
        crate::secrets::redact_value(&mut value, &mut self.redacted);
        crate::integrity::write_atomic(path, &serde_json::to_vec_pretty(&value)?)
    }

    pub(super) fn options(&self) -> ClientOptions {
        ClientOptions {
            seed: self.cfg.settings.seed,
            timeout: self.cfg.settings.model_timeout,
            ..ClientOptions::default()
        }
    }

    pub(super) fn add_spend(&mut self, spend: &[crate::suite::PhaseSpend]) {
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
        }
    }

    /// A server that is gone ends the run VOID (a lost server), naming why,
    /// rather than counting every later call against its surface.
    pub(super) fn ensure_server(&mut self, session: &Session) -> anyhow::Result<()> {
        match session.lost() {
            None => Ok(()),
            Some(why) => {
                self.interrupted = Some(Interruption::Failed(why.clone()));
                anyhow::bail!(why)
            }
        }
    }

    pub(super) fn push_gate(&mut self, gate: GateRecord) {
        // On the tape as well, when it was decided: the replay draws the
        // gates' verdicts on its timeline from the tapes alone.
        self.agent.event(
            "fitness.gate",
            serde_json::json!({"gate": gate.id, "ok": gate.ok, "reason": gate.reason}),
            None,
        );
        if let Some(existing) = self.gates.iter_mut().find(|g| g.id == gate.id) {
            *existing = gate;
        } else {
            self.gates.push(gate);
        }
    }

    /// The run cannot go on (a sandbox could not put the state back):
    /// record why, and the error that ends the stage under way.
    pub(super) fn failed(&mut self, e: anyhow::Error) -> anyhow::Error {
        let why = format!("{e:#}");
        self.interrupted = Some(Interruption::Failed(why.clone()));
        anyhow::anyhow!(why)
    }

    /// The operator stopped the run: record why, and the error that ends
    /// the stage under way.
    pub(super) fn cancelled(&mut self) -> anyhow::Error {
        self.interrupted = Some(Interruption::Cancelled);
        anyhow::anyhow!("interrupted")
    }

    /// Trials in flight at once (the checked config always holds it).
    pub(super) fn width(&self) -> usize {
        usize::try_from(self.cfg.settings.concurrency.unwrap_or(1).max(1)).unwrap_or(1)
    }

    /// End the stage under way when a call was refused by the spend cap:
    /// the run cannot complete its registered size.
    pub(super) fn check_spend(&mut self) -> anyhow::Result<()> {
        if let Some(calls) = self.meter.reached() {
            self.interrupted = Some(Interruption::SpendCap { calls });
            anyhow::bail!("spend cap reached");
        }
        Ok(())
    }

    /// End the stage under way when the operator has stopped the run.
    pub(super) fn stop_if_cancelled(&mut self) -> anyhow::Result<()> {
        if self.cancel.is_cancelled() {
            return Err(self.cancelled());
        }
        Ok(())
    }

    /// What a suite that must hold `tasks` tasks must reach for the run to
    /// go on: the screen is never paid for a suite that cannot.
    pub(super) fn suite_floors(&self, tasks: u64) -> crate::suite::options::SuiteFloors {
        let floors = &self.cfg.settings.floors;
        crate::suite::options::SuiteFloors {
            tasks,
            admission_rate: floors.min_admission_rate,
            max_error_rate: floors.max_error_rate,
        }
    }
}
