//! What the run may do to the server, said before it starts, and what it
//! did, read from its own tapes for the record: the calls the harness
//! withheld (`fitness.blocked_call` on the agent tape) and every call that
//! may write that reached the server (`tools/call` on the wire tape).

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::Path;

use fitness_shared::record::{
    AccessLedger, AccessMode, BlockedTool, RestoreKind, WRITES_LISTED, WriteCall,
};
use fitness_shared::tape::{LineView, TapeReader};
use rmcp::model::Tool;

use super::run::Run;

impl Run<'_> {
    /// Say, before generation, what the run may do and which tools it
    /// will never call.
    pub(super) fn announce_access(&self, tools: &[Tool]) {
        let writers = crate::access::writers(tools, &|_| false);
        let sandbox = &self.cfg.settings.sandbox;
        self.progress.note(&crate::access::announcement(
            sandbox.mode(),
            &writers,
            sandbox.restore(),
        ));
    }

    /// The record's access ledger: the mode, and what the tapes show.
    pub(super) fn access_ledger(&mut self) -> Option<AccessLedger> {
        let access = self.access.clone()?;
        let sandbox = &self.cfg.settings.sandbox;
        let mut ledger = AccessLedger {
            mode: access.mode,
            restore: sandbox.restore(),
            reset_command: sandbox
                .reset
                .as_deref()
                .filter(|_| sandbox.enabled)
                .map(crate::secrets::redact),
            copied_paths: self.copied_paths.clone(),
            writers: access.writers.iter().cloned().collect(),
            setup_steps: self
                .generation
                .as_ref()
                .and_then(|g| g.walk.as_ref())
                .map(|w| w.setup_steps.clone())
                .unwrap_or_default(),
            blocked: Vec::new(),
            writes: Vec::new(),
            writes_total: 0,
            stale_trials: Vec::new(),
        };
        let agent = self.dir.join(fitness_shared::site::AGENT_TAPE);
        let wire = self.dir.join(fitness_shared::site::MCP_TAPE);
        if let Err(e) = read_blocked(&agent, &mut ledger) {
            self.own_notes.push(format!(
                "Access: the agent tape could not be read for blocked calls: {e}"
            ));
        }
        if let Err(e) = read_writes(&wire, &access.writers, &mut ledger) {
            self.own_notes.push(format!(
                "Access: the wire tape could not be read for writes: {e}"
            ));
        }
        if ledger.mode == AccessMode::Sandbox && ledger.restore == Some(RestoreKind::None) {
            let mut stale: Vec<String> = Vec::new();
            for w in &ledger.writes {
                if let Some(c) = &w.corr_id
                    && !c.starts_with("generate")
                    && !c.starts_with("probe")
                    && !stale.contains(c)
                {
                    stale.push(c.clone());
                }
            }
            ledger.stale_trials = stale;
        }
        Some(ledger)
    }
}

/// Every `fitness.blocked_call` on the agent tape, by tool, with the
/// trials that saw one.
fn read_blocked(agent: &Path, ledger: &mut AccessLedger) -> std::io::Result<()> {
    let mut by_tool: BTreeMap<String, BlockedTool> = BTreeMap::new();
    let mut reader = TapeReader::new(BufReader::new(std::fs::File::open(agent)?));
    while let Some(raw) = reader.next_raw()? {
        let mut spill = None;
        let Ok(line) = LineView::read(raw.bytes, &mut spill) else {
            continue;
        };
        if !line.kind.is("fitness.blocked_call") {
            continue;
        }
        let tool = line
            .raw
            .0
            .as_ref()
            .and_then(|r| r.tool.get())
            .unwrap_or("(unknown)")
            .to_owned();
        let entry = by_tool.entry(tool.clone()).or_insert_with(|| BlockedTool {
            tool,
            calls: 0,
            trials: Vec::new(),
        });
        entry.calls += 1;
        if let Some(corr) = line.corr_id.get()
            && !entry.trials.iter().any(|t| t == corr)
        {
            entry.trials.push(corr.to_owned());
        }
    }
    ledger.blocked = by_tool.into_values().collect();
    Ok(())
}

/// Every `tools/call` of a tool that may write on the wire tape.
fn read_writes(
    wire: &Path,
    writers: &std::collections::BTreeSet<String>,
    ledger: &mut AccessLedger,
) -> std::io::Result<()> {
    let mut reader = TapeReader::new(BufReader::new(std::fs::File::open(wire)?));
    while let Some(raw) = reader.next_raw()? {
        let mut spill = None;
        let Ok(line) = LineView::read(raw.bytes, &mut spill) else {
            continue;
        };
        if !line.dir.is("in") {
            continue;
        }
        let Some(frame) = line.raw.0.as_ref() else {
            continue;
        };
        if !frame.method.is("tools/call") {
            continue;
        }
        let Some(params) = frame.params.0.as_ref() else {
            continue;
        };
        let Some(tool) = params.name.get().filter(|n| writers.contains(*n)) else {
            continue;
        };
        ledger.writes_total += 1;
        if ledger.writes.len() < WRITES_LISTED {
            ledger.writes.push(WriteCall {
                tool: tool.to_owned(),
                arguments: params
                    .arguments
                    .and_then(|a| serde_json::from_str(a.get()).ok())
                    .unwrap_or(serde_json::Value::Null),
                corr_id: line.corr_id.get().map(str::to_owned),
            });
        }
    }
    Ok(())
}
