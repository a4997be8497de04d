//! `fitness sweep ROSTER.toml`: every slot of a roster (target x runner x
//! rerun) measured by an ordinary `fitness run`, `-j N` at a time, with one
//! progress display and a summary table at the end.
//!
//! Each run is its own `fitness run` process (one misbehaving target cannot
//! take the others down) writing an ordinary run directory under `--out`;
//! the sweep reads nothing back but the files. Resuming is running the same
//! sweep again: a slot with a completed attempt is skipped, an interrupted
//! one is re-run as a new attempt (see [`attempts`]). `--shard I/N` takes a
//! deterministic slice of the slots, so any fan-out engine runs a sweep
//! without coordination, and run ids carry the slot's tag and attempt, so
//! they are unique without coordination too.
//!
//! Exit codes: 0 every slot of the shard has a completed run (whatever its
//! outcome); 1 some slot has none (it could not start, or its run failed
//! without a record); 130 the sweep was interrupted (Ctrl-C, SIGTERM).

pub mod attempts;
mod display;
pub mod roster;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use fitness_shared::record::RunRecord;
use serde::Serialize;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};

use crate::process::{Exit, PROGRESS_PREFIX};

use attempts::{AttemptState, Plan};
use display::Display;
use roster::{Shard, Slot};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
fitness sweep roster.toml -j 4 --out runs\n  \
fitness sweep roster.toml --shard 1/3 --out runs/shard-1\n\n\
Every run is an ordinary run directory under --out; publish them with `fitness publish`.\n\
Run the same command again to resume: completed slots are skipped, interrupted ones re-run as a new attempt.\n\
Exit codes: 0 every slot has a completed run, 1 some slot has none, 130 interrupted.")]
pub struct SweepArgs {
    /// The roster (TOML): targets, runners, reruns and run flags.
    pub roster: PathBuf,
    /// Runs at a time.
    #[arg(short = 'j', long = "jobs", default_value_t = 2)]
    pub jobs: usize,
    /// Take shard I of N (0-based): slot k belongs to shard k mod N.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Where run directories go (one per attempt).
    #[arg(long, default_value = "runs")]
    pub out: PathBuf,
    /// A publisher key from `fitness keygen` for every run (else FITNESS_SIGNING_KEY).
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Seconds one run may take before it is interrupted (VOID, re-run on resume).
    #[arg(long, value_name = "SECS")]
    pub run_timeout: Option<u64>,
    /// List the slots this shard would run, and what it would do with each, then exit.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the sweep as JUnit XML: a test suite per slot, its cases
    /// the slot's run gate by gate (a slot with no completed run fails).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// What happened to one slot in this sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SlotSummary {
    pub index: usize,
    pub label: String,
    pub runner: String,
    pub rerun: u32,
    pub reruns: u32,
    pub tag: String,
    /// `ran`, `skipped`, `re-run`, `failed`, `interrupted` or `not-started`.
    pub status: &'static str,
    /// The status in words (which attempt, why).
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

impl SlotSummary {
    fn new(slot: &Slot, status: &'static str, detail: String) -> SlotSummary {
        SlotSummary {
            index: slot.index,
            label: slot.label.clone(),
            runner: slot.runner.clone(),
            rerun: slot.rerun,
            reruns: slot.reruns,
            tag: slot.tag.clone(),
            status,
            detail,
            run_id: None,
            outcome: None,
            result: None,
            seconds: None,
        }
    }

    fn with_record(mut self, record: &RunRecord) -> SlotSummary {
        self.run_id = Some(record.run.id.clone());
        self.outcome = Some(record.outcome.code().to_owned());
        self.result = Some(crate::ci::result_text(record));
        self
    }

    /// A completed run exists for this slot (whatever its outcome).
    fn completed(&self) -> bool {
        matches!(self.status, "ran" | "skipped" | "re-run")
    }
}

/// The whole sweep's summary (`OUT/.sweep/summary[-shard-I-of-N].json`).
#[derive(Debug, Serialize)]
pub struct Summary {
    pub roster: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub slots: Vec<SlotSummary>,
    pub seconds: f64,
    pub interrupted: bool,
}

pub fn run(args: SweepArgs) -> anyhow::Result<()> {
    let roster = roster::load(&args.roster)?;
    anyhow::ensure!(args.jobs >= 1, "-j must be at least 1");
    let mine: Vec<Slot> = roster::slots(&roster)
        .into_iter()
        .filter(|s| args.shard.is_none_or(|sh| sh.owns(s)))
        .collect();
    if args.dry_run {
        for slot in &mine {
            let plan = attempts::plan(attempts::scan(&args.out, &slot.tag));
            let what = match plan {
                Plan::Skip { attempt } => format!("skip (completed: {})", attempt.dir.display()),
                Plan::Run { number, .. } => format!("run attempt {number}"),
            };
            crate::process::print_line(&format!(
                "{:>4}  {}  {}  {what}",
                slot.index,
                slot.tag,
                slot.describe()
            ))?;
        }
        return Ok(());
    }
    std::fs::create_dir_all(args.out.join(".sweep/logs"))
        .with_context(|| format!("failed to create {}", args.out.display()))?;
    let lock = Lock::take(&args.out.join(".sweep").join(lock_name(args.shard)))?;
    let started = Instant::now();
    let rt = crate::process::runtime()?;
    let (slots, interrupted) = rt.block_on(sweep(&args, mine));
    rt.shutdown_timeout(Duration::from_secs(2));
    let summary = Summary {
        roster: args.roster.display().to_string(),
        shard: args.shard.map(|s| s.to_string()),
        slots,
        seconds: started.elapsed().as_secs_f64(),
        interrupted,
    };
    let path = args.out.join(".sweep").join(summary_name(args.shard));
    fitness_recorder::integrity::write_atomic(&path, &serde_json::to_vec_pretty(&summary)?)?;
    if args.json {
        crate::process::print_line(&serde_json::to_string_pretty(&summary)?)?;
    } else {
        crate::process::print(&table(&summary))?;
    }
    drop(lock);
    report_to_ci(&summary, &args)?;
    if interrupted {
        return Err(Exit::code(Exit::INTERRUPTED).into());
    }
    if summary.slots.iter().any(|s| !s.completed()) {
        return Err(Exit::code(Exit::INCOMPLETE).into());
    }
    Ok(())
}

fn lock_name(shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("lock-shard-{}-of-{}", s.index, s.count),
        None => "lock".to_owned(),
    }
}

fn summary_name(shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("summary-shard-{}-of-{}.json", s.index, s.count),
        None => "summary.json".to_owned(),
    }
}

/// Run the slots; returns their summaries in slot order and whether the
/// sweep was interrupted.
async fn sweep(args: &SweepArgs, slots: Vec<Slot>) -> (Vec<SlotSummary>, bool) {
    let display = Arc::new(Display::new(slots.len() as u64, args.json));
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    spawn_signal_watch(stop_tx);
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            let why = format!("cannot find the fitness binary: {e}");
            return (
                slots
                    .iter()
                    .map(|s| SlotSummary::new(s, "failed", why.clone()))
                    .collect(),
                false,
            );
        }
    };
    let ctx = Arc::new(Ctx {
        exe,
        out: args.out.clone(),
        key: args.key.clone(),
        run_timeout: args.run_timeout.map(Duration::from_secs),
        display: display.clone(),
        stop,
        jobs: tokio::sync::Semaphore::new(args.jobs),
        running: AtomicUsize::new(0),
    });
    let handles: Vec<_> = slots
        .into_iter()
        .map(|slot| tokio::spawn(settle_slot(ctx.clone(), slot)))
        .collect();
    let mut out = Vec::new();
    for handle in handles {
        match handle.await {
            Ok(s) => out.push(s),
            Err(e) => display.message(&format!("a slot's task failed: {e}")),
        }
    }
    display.close();
    out.sort_by_key(|s| s.index);
    let interrupted = *ctx.stop.borrow();
    (out, interrupted)
}

/// One slot from its plan to its summary: skipped when completed earlier,
/// refused when its environment is missing, else run when a job is free.
async fn settle_slot(ctx: Arc<Ctx>, slot: Slot) -> SlotSummary {
    let name = slot.describe();
    let (number, interrupted) = match attempts::plan(attempts::scan(&ctx.out, &slot.tag)) {
        Plan::Skip { attempt } => {
            let summary = skipped_summary(&slot, &attempt);
            ctx.display.settled(&name, "skipped: completed earlier");
            return summary;
        }
        Plan::Run {
            number,
            interrupted,
        } => (number, interrupted),
    };
    if let Some(why) = missing_env_text(&slot) {
        ctx.display.settled(&name, &why);
        return SlotSummary::new(&slot, "failed", why);
    }
    let Ok(_permit) = ctx.jobs.acquire().await else {
        return SlotSummary::new(&slot, "not-started", "the sweep stopped".to_owned());
    };
    if *ctx.stop.borrow() {
        ctx.display
            .settled(&name, "not started: the sweep was interrupted");
        return SlotSummary::new(
            &slot,
            "not-started",
            "the sweep was interrupted before this slot started".to_owned(),
        );
    }
    ctx.display
        .running(ctx.running.fetch_add(1, Ordering::SeqCst) + 1);
    let summary = run_slot(&ctx, &slot, number, &interrupted).await;
    ctx.display
        .running(ctx.running.fetch_sub(1, Ordering::SeqCst) - 1);
    summary
}

/// The summary of a slot skipped because an earlier attempt completed.
fn skipped_summary(slot: &Slot, attempt: &attempts::Attempt) -> SlotSummary {
    match &attempt.state {
        AttemptState::Completed(record) => SlotSummary::new(
            slot,
            "skipped",
            format!("completed earlier (attempt {})", attempt.number),
        )
        .with_record(record),
        AttemptState::Interrupted { .. } => SlotSummary::new(
            slot,
            "failed",
            "internal: a skipped slot without a completed attempt".to_owned(),
        ),
    }
}

/// Why a slot cannot start when environment variables it names are unset.
fn missing_env_text(slot: &Slot) -> Option<String> {
    let missing = slot.missing_env();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "not started: the environment variable{} {} {} not set",
        if missing.len() > 1 { "s" } else { "" },
        missing.join(", "),
        if missing.len() > 1 { "are" } else { "is" }
    ))
}

/// What every slot's task shares: how to start a run, where it writes, and
/// the sweep's stop signal, job slots and running count.
struct Ctx {
    exe: PathBuf,
    out: PathBuf,
    key: Option<PathBuf>,
    run_timeout: Option<Duration>,
    display: Arc<Display>,
    stop: tokio::sync::watch::Receiver<bool>,
    /// One permit per run allowed at a time (`-j`).
    jobs: tokio::sync::Semaphore,
    /// Runs going now, for the display.
    running: AtomicUsize,
}

/// Set `stop` on Ctrl-C or SIGTERM.
fn spawn_signal_watch(stop: tokio::sync::watch::Sender<bool>) {
    tokio::spawn(async move {
        crate::process::stop_requested().await;
        let _ = stop.send(true);
    });
}

/// How long an interrupted run gets to write its VOID record.
const GRACE: Duration = Duration::from_secs(30);

/// Why the sweep stopped a run when the sweep itself was interrupted.
const STOPPED_BY_SWEEP: &str = "the sweep was interrupted";

/// Run one attempt of a slot as a supervised `fitness run` and summarize
/// what it left.
async fn run_slot(
    ctx: &Ctx,
    slot: &Slot,
    number: u32,
    interrupted: &[attempts::Attempt],
) -> SlotSummary {
    let name = slot.describe();
    let tag = attempts::run_tag(&slot.tag, number);
    let line = ctx.display.start(&name, number);
    let started = Instant::now();
    let mut child = match run_command(ctx, slot, &tag).spawn() {
        Ok(c) => c,
        Err(e) => {
            let why = format!("could not start fitness run: {e}");
            ctx.display.finish(line, &why);
            return SlotSummary::new(slot, "failed", why);
        }
    };
    let ended = supervise(ctx, &mut child, &tag, &line).await;
    let seconds = started.elapsed().as_secs_f64();
    let mut summary = attempt_summary(&ctx.out, slot, number, interrupted, &ended);
    summary.seconds = Some(seconds);
    let what = match (&summary.outcome, summary.status) {
        (Some(o), "ran" | "re-run") => format!("{o} ({:.0} s)", seconds),
        _ => summary.detail.clone(),
    };
    ctx.display.finish(line, &what);
    summary
}

/// The `fitness run` command for one attempt of a slot.
fn run_command(ctx: &Ctx, slot: &Slot, tag: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&ctx.exe);
    cmd.arg("run")
        .arg("--out")
        .arg(&ctx.out)
        .arg("--run-tag")
        .arg(tag)
        .arg("--json")
        .arg("--supervised");
    if let Some(key) = &ctx.key {
        cmd.arg("--key").arg(key);
    }
    cmd.args(slot.run_args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// How a supervised run ended: its exit status, why the sweep stopped it
/// (when it did), and the last lines of its stderr.
struct Ended {
    status: std::io::Result<std::process::ExitStatus>,
    stopped_by: Option<&'static str>,
    tail: Vec<String>,
}

impl Ended {
    /// The status of an attempt that did not complete: `interrupted` when
    /// the sweep was, else `failed`.
    fn unfinished_status(&self) -> &'static str {
        if self.stopped_by == Some(STOPPED_BY_SWEEP) {
            "interrupted"
        } else {
            "failed"
        }
    }

    /// The exit code in words, or that a signal ended it.
    fn exit_text(&self) -> String {
        self.status
            .as_ref()
            .ok()
            .and_then(|s| s.code())
            .map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"))
    }

    /// The stderr line that best says why: the last `error:` line, else the last line.
    fn last_words(&self) -> String {
        self.tail
            .iter()
            .rev()
            .find(|l| l.starts_with("error:"))
            .or(self.tail.last())
            .cloned()
            .unwrap_or_default()
    }
}

/// Wait for a started run to end, logging its stderr and following its
/// progress; stop it when the sweep is interrupted or `--run-timeout` passes.
async fn supervise(
    ctx: &Ctx,
    child: &mut tokio::process::Child,
    tag: &str,
    line: &display::SlotLine,
) -> Ended {
    // Closing the child's stdin asks it to stop (it writes a VOID record).
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let log_path = ctx.out.join(".sweep/logs").join(format!("{tag}.log"));
    let log = std::fs::File::create(&log_path).ok();
    let stderr_task = tokio::spawn(follow_stderr(
        stderr,
        log,
        ctx.display.clone(),
        line.clone(),
    ));
    let stdout_task = tokio::spawn(drain(stdout));
    let mut stop = ctx.stop.clone();
    let mut stopped_by: Option<&'static str> = None;
    let status = tokio::select! {
        s = child.wait() => s,
        () = async { let _ = stop.wait_for(|s| *s).await; } => {
            stopped_by = Some(STOPPED_BY_SWEEP);
            drop(stdin.take());
            wait_or_kill(child).await
        }
        _ = sleep_or_forever(ctx.run_timeout) => {
            stopped_by = Some("it ran past --run-timeout");
            drop(stdin.take());
            wait_or_kill(child).await
        }
    };
    drop(stdin);
    let tail = stderr_task.await.unwrap_or_default();
    let _ = stdout_task.await;
    Ended {
        status,
        stopped_by,
        tail,
    }
}

/// Read a run's stderr to its end: progress lines move the slot's phase,
/// every other line goes to the log; returns the last 20 of those.
async fn follow_stderr(
    stderr: Option<tokio::process::ChildStderr>,
    log: Option<std::fs::File>,
    display: Arc<Display>,
    line: display::SlotLine,
) -> Vec<String> {
    let mut tail: Vec<String> = Vec::new();
    let (Some(stderr), Some(mut log)) = (stderr, log) else {
        return tail;
    };
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(text)) = lines.next_line().await {
        if let Some(event) = text.strip_prefix(PROGRESS_PREFIX) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(event)
                && let Some(phase) = v.get("phase").and_then(|p| p.as_str())
            {
                display.phase(&line, phase);
            }
            continue;
        }
        let _ = writeln!(log, "{text}");
        tail.push(text);
        if tail.len() > 20 {
            tail.remove(0);
        }
    }
    tail
}

/// Read a run's stdout to its end, so it never blocks on a full pipe.
async fn drain(stdout: Option<tokio::process::ChildStdout>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(mut out) = stdout {
        let _ = out.read_to_end(&mut buf).await;
    }
    buf
}

/// The summary of an attempt from what it left in `out`: a completed
/// record, an interrupted run directory, or nothing.
fn attempt_summary(
    out: &Path,
    slot: &Slot,
    number: u32,
    interrupted: &[attempts::Attempt],
    ended: &Ended,
) -> SlotSummary {
    let found = attempts::scan(out, &slot.tag)
        .into_iter()
        .find(|a| a.number == number);
    let earlier = earlier_text(interrupted);
    match found.map(|a| (a.state, a.dir)) {
        Some((AttemptState::Completed(record), _)) => {
            let status = if interrupted.is_empty() {
                "ran"
            } else {
                "re-run"
            };
            SlotSummary::new(slot, status, format!("attempt {number}{earlier}"))
                .with_record(&record)
        }
        Some((AttemptState::Interrupted { why }, dir)) => {
            let s = SlotSummary::new(
                slot,
                ended.unfinished_status(),
                format!(
                    "attempt {number} did not complete ({}): {why}{earlier}",
                    ended.stopped_by.unwrap_or("it stopped early")
                ),
            );
            match std::fs::read_to_string(dir.join(fitness_shared::site::RECORD_FILE))
                .ok()
                .and_then(|text| RunRecord::from_json(&text).ok())
            {
                Some(record) => s.with_record(&record),
                None => s,
            }
        }
        None => SlotSummary::new(
            slot,
            ended.unfinished_status(),
            format!(
                "attempt {number} left no run directory ({}): {}{earlier}",
                ended.exit_text(),
                ended.last_words()
            ),
        ),
    }
}

/// The note on earlier interrupted attempts (`; earlier attempts 1, 2
/// interrupted`), empty when there were none.
fn earlier_text(interrupted: &[attempts::Attempt]) -> String {
    if interrupted.is_empty() {
        return String::new();
    }
    format!(
        "; earlier attempt{} {} interrupted",
        if interrupted.len() > 1 { "s" } else { "" },
        interrupted
            .iter()
            .map(|a| a.number.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

async fn sleep_or_forever(limit: Option<Duration>) {
    match limit {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

async fn wait_or_kill(
    child: &mut tokio::process::Child,
) -> std::io::Result<std::process::ExitStatus> {
    match tokio::time::timeout(GRACE, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            let _ = child.start_kill();
            child.wait().await
        }
    }
}

/// The result column: a score with its interval, or the refusal.
/// The sweep as CI reads it: the JUnit file when asked (a suite per slot)
/// and, under GitHub Actions, the summary table in the job summary.
fn report_to_ci(summary: &Summary, args: &SweepArgs) -> anyhow::Result<()> {
    use crate::ci::{Case, Suite, Verdict};
    if let Some(path) = &args.junit {
        let suites: Vec<Suite> = summary
            .slots
            .iter()
            .map(|slot| {
                let classname = format!("fitness.sweep.{}", slot.tag);
                let record = slot.run_id.as_ref().and_then(|id| {
                    let file = args.out.join(id).join(fitness_shared::site::RECORD_FILE);
                    let text = std::fs::read_to_string(file).ok()?;
                    RunRecord::from_json(&text).ok()
                });
                let cases = match record {
                    Some(record) if slot.completed() => {
                        crate::ci::record_cases(&record, &classname)
                    }
                    _ => vec![Case {
                        classname,
                        name: "run".to_owned(),
                        verdict: Verdict::Failure {
                            kind: slot.status.to_owned(),
                            message: format!("no completed run: {}: {}", slot.status, slot.detail),
                        },
                        out: None,
                    }],
                };
                Suite {
                    name: format!(
                        "{} (run {} of {}) with {}",
                        slot.label, slot.rerun, slot.reruns, slot.runner
                    ),
                    cases,
                }
            })
            .collect();
        crate::ci::write_junit(path, "fitness sweep", &suites)?;
    }
    let mut markdown = format!(
        "### Fitness Report sweep: {} slots\n\n| # | target | runner | status | result | run |\n| --- | --- | --- | --- | --- | --- |\n",
        summary.slots.len()
    );
    for s in &summary.slots {
        let cells = [
            s.index.to_string(),
            format!("{} (run {} of {})", s.label, s.rerun, s.reruns),
            s.runner.clone(),
            format!("{}: {}", s.status, s.detail),
            s.result.clone().unwrap_or_default(),
            s.run_id
                .as_deref()
                .map(|id| format!("`{id}`"))
                .unwrap_or_default(),
        ];
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        markdown.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    crate::ci::step_summary(&markdown)
}

/// The summary table printed at the end.
pub fn table(summary: &Summary) -> String {
    let mut rows: Vec<[String; 6]> = vec![[
        "#".into(),
        "target".into(),
        "runner".into(),
        "status".into(),
        "result".into(),
        "run".into(),
    ]];
    for s in &summary.slots {
        rows.push([
            s.index.to_string(),
            format!("{} (run {} of {})", s.label, s.rerun, s.reruns),
            s.runner.clone(),
            format!("{}: {}", s.status, s.detail),
            s.result.clone().unwrap_or_default(),
            s.run_id.clone().unwrap_or_default(),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let count = |status: &str| summary.slots.iter().filter(|s| s.status == status).count();
    out.push_str(&format!(
        "\n{} slots in {:.0} s: {} ran, {} skipped (completed earlier), {} re-run (earlier attempt interrupted), {} failed, {} interrupted, {} not started\n",
        summary.slots.len(),
        summary.seconds,
        count("ran"),
        count("skipped"),
        count("re-run"),
        count("failed"),
        count("interrupted"),
        count("not-started"),
    ));
    out
}

/// One sweep at a time per output directory (and shard): a lock file with
/// the holder's pid, taken over when that process is gone.
struct Lock {
    path: PathBuf,
}

impl Lock {
    fn take(path: &Path) -> anyhow::Result<Lock> {
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut f) => {
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(Lock {
                        path: path.to_owned(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(path).unwrap_or_default();
                    let alive = holder
                        .trim()
                        .parse::<u32>()
                        .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
                    anyhow::ensure!(
                        !alive,
                        "another sweep (pid {}) is writing to this output directory ({})",
                        holder.trim(),
                        path.display()
                    );
                    let _ = std::fs::remove_file(path);
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("failed to take {}", path.display()));
                }
            }
        }
        anyhow::bail!("failed to take the sweep lock {}", path.display())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
