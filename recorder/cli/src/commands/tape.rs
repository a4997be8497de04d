//! `fitness tape …`: read mcp-tape files.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use fitness_shared::tape::stats::{ModelsBlock, Stats, StatsBuilder, merge_planes};
use fitness_shared::tape::{SkipReport, TapeReader, add_tape};
use fitness_shared::wire_name::wire_name;

#[derive(Debug, Args)]
pub struct TapeCommand {
    #[command(subcommand)]
    pub action: TapeAction,
}

#[derive(Debug, Subcommand)]
pub enum TapeAction {
    /// Pairing statistics of one or more tapes (mcp-tape.stats/1).
    ///
    /// One file gives that tape's block. Several files give one merged block
    /// with a block per plane under `planes`: tapes whose meta says
    /// `kind: "llm"` form the agent plane, all others the mcp plane.
    Stats(StatsArgs),
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Tape files (JSONL).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the mcp-tape.stats/1 JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: TapeCommand) -> Result<()> {
    match cmd.action {
        TapeAction::Stats(args) => stats(&args),
    }
}

fn open(path: &Path) -> Result<BufReader<File>> {
    let file = File::open(path).with_context(|| format!("failed to open {}", path.display()))?;
    Ok(BufReader::with_capacity(256 * 1024, file))
}

/// Whether a tape belongs to the agent plane: its first line is a meta line
/// with `kind: "llm"`.
fn is_agent_plane(path: &Path) -> Result<bool> {
    let mut reader = TapeReader::new(open(path)?);
    let first = reader
        .next_raw()
        .with_context(|| format!("failed to read {}", path.display()))?;
    let Some(first) = first else { return Ok(false) };
    #[derive(serde::Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow, default)]
        ty: Option<&'a str>,
        #[serde(borrow, default)]
        kind: Option<&'a str>,
    }
    Ok(serde_json::from_slice::<Kind<'_>>(first.bytes)
        .is_ok_and(|k| k.ty == Some("meta") && k.kind == Some("llm")))
}

fn add_file(path: &Path, builder: &mut StatsBuilder) -> Result<()> {
    let skips = add_tape(open(path)?, builder)
        .with_context(|| format!("failed to read {}", path.display()))?;
    report_skips(path, &skips);
    Ok(())
}

fn report_skips(path: &Path, skips: &SkipReport) {
    if skips.count == 0 {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "{}: skipped {} line(s)",
        path.display(),
        skips.count
    );
    for skip in &skips.explained {
        let _ = writeln!(
            stderr,
            "  {}:{}: {}",
            path.display(),
            skip.line,
            skip.reason
        );
    }
    let unexplained = skips.count - skips.explained.len() as u64;
    if unexplained > 0 {
        let _ = writeln!(stderr, "  … and {unexplained} more");
    }
}

fn plane_stats(files: &[&PathBuf]) -> Result<Stats> {
    let mut builder = StatsBuilder::new();
    for path in files {
        add_file(path, &mut builder)?;
    }
    let file = match files {
        [only] => Some(only.display().to_string()),
        _ => None,
    };
    Ok(builder.finish(file))
}

fn stats(args: &StatsArgs) -> Result<()> {
    let mut out = String::new();
    if let [path] = args.files.as_slice() {
        let stats = plane_stats(&[path])?;
        if args.json {
            out = serde_json::to_string_pretty(&stats)?;
            out.push('\n');
        } else {
            render_plane(&mut out, &stats);
        }
    } else {
        let (mut agent, mut mcp) = (Vec::new(), Vec::new());
        for path in &args.files {
            if is_agent_plane(path)? {
                agent.push(path);
            } else {
                mcp.push(path);
            }
        }
        let merged = merge_planes(plane_stats(&mcp)?, plane_stats(&agent)?, None);
        if args.json {
            out = serde_json::to_string_pretty(&merged)?;
            out.push('\n');
        } else {
            render_plane(&mut out, &merged.merged);
            for (name, plane) in [("mcp", &merged.planes.mcp), ("agent", &merged.planes.agent)] {
                let _ = writeln!(out, "\n== {name} plane ==");
                render_plane(&mut out, plane);
            }
        }
    }
    crate::process::print(&out)
}

fn or_na<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "n/a".to_owned(), |v| v.to_string())
}

fn js(v: Option<fitness_shared::tape::stats::JsNum>) -> String {
    or_na(v.map(|n| fitness_shared::tape::js::number_to_string(n.0)))
}

/// The readable table.
fn render_plane(out: &mut String, s: &Stats) {
    let session = &s.session;
    if let Some(file) = &s.file {
        let _ = writeln!(out, "file      {file}");
    }
    let _ = writeln!(
        out,
        "session   {} ({}), producer {}",
        or_na(session.label.as_deref()),
        or_na(session.kind.as_deref()),
        or_na(session.producer.as_deref())
    );
    let _ = writeln!(
        out,
        "time      {} to {}, {} ms, ended {}",
        or_na(session.started_at.as_deref()),
        or_na(session.ended_at.as_deref()),
        js(session.duration_ms),
        or_na(session.end_reason.as_deref())
    );
    let r = &session.records;
    let _ = writeln!(
        out,
        "records   {} lines: {} meta, {} message, {} event, {} turn, {} end, {} other; {} skipped",
        r.total, r.meta, r.message, r.event, r.turn, r.end, r.other, session.skipped_lines
    );
    if !s.tools.is_empty() {
        render_tools(out, &s.tools);
    }
    if let Some(models) = &s.models {
        render_models(out, models);
    }
    if !s.errors.is_empty() {
        render_errors(out, &s.errors);
    }
}

/// The per-tool table.
fn render_tools(out: &mut String, tools: &[fitness_shared::tape::stats::ToolStats]) {
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        out,
        "\n{:<width$}  {:>5}  {:>6}  {:>7}  {:>8}  {:>8}  origin",
        "tool", "calls", "errors", "pending", "p50 ms", "p95 ms"
    );
    for t in tools {
        let origin = wire_name(&t.origin).unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<width$}  {:>5}  {:>6}  {:>7}  {:>8}  {:>8}  {origin}",
            t.name,
            t.calls,
            t.errors,
            t.pending,
            js(t.p50_ms),
            js(t.p95_ms)
        );
    }
}

/// The errors, each cut to 120 characters.
fn render_errors(out: &mut String, errors: &[fitness_shared::tape::stats::ErrorStats]) {
    let _ = writeln!(out, "\nerrors ({})", errors.len());
    for e in errors {
        let source = wire_name(&e.source).unwrap_or_default();
        let message: String = e.message.chars().take(120).collect();
        let ellipsis = if message.len() < e.message.len() {
            "…"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {}  {source}  {}: {message}{ellipsis}",
            or_na(e.t.as_deref()),
            e.name
        );
    }
}

fn render_models(out: &mut String, m: &ModelsBlock) {
    let width = m
        .per_model
        .iter()
        .map(|p| p.model.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "\n{:<width$}  {:>5}  {:>10}  {:>10}  {:>10}  {:>10}  est. cost USD",
        "model", "calls", "input", "output", "cache read", "cache write"
    );
    for p in &m.per_model {
        let _ = writeln!(
            out,
            "{:<width$}  {:>5}  {:>10}  {:>10}  {:>10}  {:>10}  {}",
            p.model,
            p.calls,
            js(p.input_tokens),
            js(p.output_tokens),
            js(p.cache_read_tokens),
            js(p.cache_creation_tokens),
            if p.priced {
                js(p.est_cost_usd)
            } else {
                "unpriced".to_owned()
            }
        );
    }
    let s = &m.summary;
    let _ = writeln!(
        out,
        "turns     {} ({} assistant, {} echoed and not counted)",
        s.turns, s.assistant_turns, s.echoed_turns
    );
    let c = &m.cost;
    let total = match (c.total_usd, c.partial) {
        (None, _) => "no figure: no model has a price".to_owned(),
        (Some(t), false) => format!("${}", fitness_shared::tape::js::number_to_string(t.0)),
        (Some(t), true) => format!(
            "at least ${} (unpriced: {})",
            fitness_shared::tape::js::number_to_string(t.0),
            c.unpriced_models.join(", ")
        ),
    };
    let _ = writeln!(
        out,
        "cost      {total}, list prices ({}, as of {})",
        c.source,
        or_na(c.as_of.as_deref())
    );
}
