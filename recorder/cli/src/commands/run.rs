//! `fitness run TARGET --runner P/M ...`: one gated, recorded run.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use fitness_shared::record::{CredentialContext, Outcome};

use fitness_recorder::mcp::connect::DEFAULT_REQUEST_TIMEOUT;
use fitness_recorder::mcp::tap::DEFAULT_TAPE_CAP;
use fitness_recorder::model::DEFAULT_MODEL_TIMEOUT;
use fitness_recorder::model::agent::{
    Budget, DEFAULT_MAX_CALLS_PER_TURN, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TURNS,
};
use fitness_recorder::pipeline::config::{
    ALPHA, CONSTRUCT_THRESHOLD, DEFAULT_EXTENSION_SIZE, DEFAULT_MAX_EXTENSIONS, DEFAULT_REPS,
    DEFAULT_SEED, DEFAULT_TASKS, Floors,
};
use fitness_recorder::pipeline::{self, RunConfig, RunOutput, RunSettings};
use fitness_recorder::suite::DEFAULT_OVERGEN;
use fitness_shared::gates::{MAX_ERROR_RATE, MIN_ADMISSION_RATE, MIN_SUITE_SIZE, NULL_KILL_RATIO};

use crate::commands::target::{HintFlags, SandboxFlags, TargetArgs, parse_target};
use crate::process::{
    Bars, Exit, PhaseLines, cancel_on_signals, cancel_on_signals_or_stdin_end, runtime,
};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
fitness run --runner sim/diligent -- fitness demo-server good\n  \
fitness run https://example.com/mcp --runner anthropic/claude-sonnet-4-5 --judge anthropic/claude-sonnet-4-5\n  \
fitness run --runner openai/gpt-4o --generator schema-walk/2 -- npx -y @modelcontextprotocol/server-memory\n\n\
Writes OUT/<run-id>/{record.json, mcp.jsonl, agent.jsonl, suite.json}. Flags may tighten a floor, never loosen one.\n\
Keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY; a signing key from --key or FITNESS_SIGNING_KEY.")]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub sandbox: SandboxFlags,
    #[command(flatten)]
    pub hints: HintFlags,
    /// The model under test: anthropic/<model>, openai/<model> or sim/<profile>.
    #[arg(long, value_name = "P/M")]
    pub runner: String,
    /// How a server's `elicitation/create` requests are answered, no
    /// person being there (registered): decline, or accept with the values
    /// the request's own form gives (its defaults, else its first choices).
    /// A server's `sampling/createMessage` is answered by the runner model
    /// in the agent's trials.
    #[arg(long, value_name = "POLICY", default_value = "decline")]
    pub elicitation: fitness_shared::record::ElicitationPolicy,
    /// Send the run's spans (one trace a trial, a span a call, each call's
    /// `traceparent`) to an OpenTelemetry collector's OTLP/HTTP traces
    /// endpoint, e.g. http://127.0.0.1:4318/v1/traces, when the run ends.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// The judge that writes tasks (judge-synth/1) or guides the walk
    /// (judge-walk/1).
    #[arg(long, value_name = "P/M")]
    pub judge: Option<String>,
    /// The task generator: judge-synth/1 (needs --judge), judge-walk/1 (needs
    /// --judge: the walk, the judge proposing its inputs and wording its
    /// tasks), schema-walk/2 (offline, tasks that need the server's work) or
    /// schema-walk/1
    /// (rehearsal: the tasks dictate the calls). Default: judge-synth/1 with
    /// --judge; schema-walk/1 for a sim runner; otherwise required.
    #[arg(long)]
    pub generator: Option<String>,
    /// Tasks in the registered suite.
    #[arg(long, default_value_t = DEFAULT_TASKS)]
    pub tasks: u64,
    /// Repetitions of each task.
    #[arg(long, default_value_t = DEFAULT_REPS)]
    pub reps: u64,
    /// Tasks per extension batch.
    #[arg(long, default_value_t = DEFAULT_EXTENSION_SIZE)]
    pub extension_size: u64,
    /// Extension batches the registration buys.
    #[arg(long, default_value_t = DEFAULT_MAX_EXTENSIONS)]
    pub max_extensions: u64,
    /// The credentials the measurement runs under (default: owner-key with
    /// --login, a bearer token or a header, else anonymous).
    #[arg(long, value_enum)]
    pub credential: Option<Credential>,
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Where run directories go.
    #[arg(long, default_value = "runs")]
    pub out: PathBuf,
    /// A publisher key from `fitness keygen` (else FITNESS_SIGNING_KEY; else unsigned).
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Skip the generation-time null screen (registered either way).
    #[arg(long)]
    pub no_screen: bool,
    /// Candidates generated per driven task.
    #[arg(long, default_value_t = DEFAULT_OVERGEN)]
    pub overgen: f64,
    /// Minimum suite size (never below the default).
    #[arg(long, default_value_t = MIN_SUITE_SIZE)]
    pub min_suite: u64,
    /// Minimum admission rate (never below the default).
    #[arg(long, default_value_t = MIN_ADMISSION_RATE)]
    pub min_admission: f64,
    /// Construct threshold (never below the default).
    #[arg(long, default_value_t = CONSTRUCT_THRESHOLD)]
    pub construct_threshold: f64,
    /// Null kill ratio (never above the default).
    #[arg(long, default_value_t = NULL_KILL_RATIO)]
    pub null_ratio: f64,
    /// Significance level (never above the default).
    #[arg(long, default_value_t = ALPHA)]
    pub alpha: f64,
    /// Error-rate limit before COMPROMISED (never above the default).
    #[arg(long, default_value_t = MAX_ERROR_RATE)]
    pub max_error_rate: f64,
    /// A spend cap in model calls; the run is VOID if it is reached.
    #[arg(long)]
    pub max_model_calls: Option<u64>,
    /// Turns per trial.
    #[arg(long, default_value_t = DEFAULT_MAX_TURNS)]
    pub max_turns: u32,
    /// Tokens per trial.
    #[arg(long, default_value_t = DEFAULT_MAX_TOKENS)]
    pub max_tokens: u64,
    /// Tool calls one assistant turn may make (registered); the surplus is
    /// refused by the harness, taped, and never sent.
    #[arg(long, default_value_t = DEFAULT_MAX_CALLS_PER_TURN)]
    pub max_calls_per_turn: u32,
    /// Tokens the model may write in one agent turn (registered); a reply
    /// that repeats itself is cut sooner and fails its trial.
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_TOKENS)]
    pub max_output_tokens: u32,
    /// Trials in flight at once within a stage (registered). The stages
    /// still run in cost order. Default: 8 for a sim runner, 4 for a hosted
    /// API, 1 for a model served from this machine; 1 in a sandbox.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    pub concurrency: Option<u64>,
    /// Seconds to wait for any one MCP request.
    #[arg(long, default_value_t = DEFAULT_REQUEST_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// Seconds to wait for any one model call attempt (registered); a slow
    /// local model needs several minutes.
    #[arg(long, default_value_t = DEFAULT_MODEL_TIMEOUT.as_secs())]
    pub model_timeout: u64,
    /// A price table (TOML) merged over the bundled one.
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// The server's name on the board.
    #[arg(long)]
    pub label: Option<String>,
    /// Drive the tasks of this suite.json (written by an earlier run beside
    /// its record) instead of generating a suite; its hash is checked, and
    /// extension batches kept beside it (suite-x<N>.json) are reused too.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// The size cap of each tape, in MiB (registered): a server that fills
    /// a tape past it ends the run VOID, with readable tapes.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_TAPE_CAP >> 20)]
    pub max_tape_mb: u64,
    /// Print the final summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the run as JUnit XML (a test case per gate, then the
    /// outcome) for a CI system's test reporter.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run the official MCP conformance suite (`@modelcontextprotocol/conformance
    /// server --url`, Node 22) against an HTTP target after the probes, at the
    /// revision they negotiated (its frozen requirement set where the suite
    /// has one); its checks.json files and report are kept beside the tapes,
    /// hashed in the record.
    #[arg(long)]
    pub conformance: bool,
    /// The suite's expected-failures baseline (its own YAML: scenarios, or
    /// `scenario:check-id`): failures it lists pass the suite's gate, a
    /// stale entry fails it, as the suite reports them.
    #[arg(long, value_name = "FILE")]
    pub conformance_baseline: Option<PathBuf>,
    /// Appended to the run id (`<slug>-<time>-s<seed>-<TAG>`): lowercase
    /// letters, digits and dashes. `fitness sweep` tags each run with its
    /// roster slot and attempt, so ids stay unique without coordination.
    #[arg(long, value_name = "TAG")]
    pub run_tag: Option<String>,
    /// Run under `fitness sweep`: phases reported on stderr as lines, and the
    /// run stops (VOID) when stdin closes.
    #[arg(long, hide = true)]
    pub supervised: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Credential {
    Anonymous,
    FreeKey,
    OwnerKey,
}

impl From<Credential> for CredentialContext {
    fn from(c: Credential) -> Self {
        match c {
            Credential::Anonymous => CredentialContext::Anonymous,
            Credential::FreeKey => CredentialContext::FreeKey,
            Credential::OwnerKey => CredentialContext::OwnerKey,
        }
    }
}

impl RunArgs {
    /// The run these flags ask for, checked.
    pub fn config(&self) -> anyhow::Result<RunConfig> {
        let target = parse_target(&self.target)?;
        let credential_used = crate::commands::target::credential_used(&self.target, &target);
        let mut run = RunSettings::new(target, self.runner.parse()?);
        run.credential_used = credential_used;
        run.judge = self.judge.as_deref().map(str::parse).transpose()?;
        run.generator = self.generator.as_deref().map(str::parse).transpose()?;
        run.tasks = self.tasks;
        run.reps = self.reps;
        run.extension_size = self.extension_size;
        run.max_extensions = self.max_extensions;
        // A credential (a login, a bearer token, a header) is the operator's
        // own unless they say otherwise: never labelled anonymous.
        run.credential = match self.credential {
            Some(c) => c.into(),
            None if run.credential_used.is_some() => CredentialContext::OwnerKey,
            None => CredentialContext::Anonymous,
        };
        run.seed = self.seed;
        run.floors = Floors {
            min_suite: self.min_suite,
            min_admission_rate: self.min_admission,
            construct_threshold: self.construct_threshold,
            null_ratio: self.null_ratio,
            alpha: self.alpha,
            max_error_rate: self.max_error_rate,
        };
        run.screen = !self.no_screen;
        run.overgen_factor = self.overgen;
        run.out_dir = self.out.clone();
        run.key = self.key.clone();
        run.timeout = Duration::from_secs(self.timeout);
        run.model_timeout = Duration::from_secs(self.model_timeout);
        run.prices = self.prices.clone();
        run.budget = Budget {
            max_turns: self.max_turns,
            max_tokens: self.max_tokens,
            max_calls_per_turn: self.max_calls_per_turn,
            max_output_tokens: self.max_output_tokens,
        };
        run.concurrency = self.concurrency;
        run.max_model_calls = self.max_model_calls;
        run.label = self.label.clone();
        run.fixed_suite = self.suite.clone();
        run.max_tape_bytes = self.max_tape_mb.saturating_mul(1 << 20);
        run.run_tag = self.run_tag.clone();
        run.conformance = self.conformance;
        run.conformance_baseline = self.conformance_baseline.clone();
        run.sandbox = self.sandbox.settings();
        run.hints = self.hints.hints()?;
        run.elicitation = self.elicitation;
        run.otlp = self.otlp.clone();
        RunConfig::from_settings(run)
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    // Flags that cannot make a run, and (outside a sweep) a key or a
    // program that is not there, are the command line being wrong: said
    // now, exit 2, with nothing written.
    let wrong = |e: anyhow::Error| Exit::with_message(2, &format!("error: {e:#}"));
    let cfg = args.config().map_err(wrong)?;
    if !args.supervised {
        cfg.settings.ready().map_err(wrong)?;
    }
    let rt = runtime()?;
    let bars = Bars::new(args.json);
    let output = rt.block_on(async {
        if args.supervised {
            let cancel = cancel_on_signals_or_stdin_end();
            pipeline::execute(&cfg, cancel, &PhaseLines).await
        } else {
            let cancel = cancel_on_signals();
            pipeline::execute(&cfg, cancel, &bars).await
        }
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    let output = output?;
    print_summary(&output, args.json)?;
    if !args.supervised {
        report_to_ci(&output, args.junit.as_deref())?;
    }
    match &output.interrupted {
        Some(pipeline::Interruption::Cancelled) => Err(Exit::code(Exit::INTERRUPTED).into()),
        Some(_) => Err(Exit::code(Exit::INCOMPLETE).into()),
        None => Ok(()),
    }
}

/// The run as CI reads it: the JUnit file when asked, and under GitHub
/// Actions the job summary and the step's outputs (`record`, `outcome`,
/// `server` (the slug a pull-request comment is kept under), `low`,
/// `high`; the last two empty without a score).
fn report_to_ci(output: &RunOutput, junit: Option<&std::path::Path>) -> anyhow::Result<()> {
    let r = &output.record;
    if let Some(path) = junit {
        let suite = crate::ci::Suite {
            name: format!("fitness run {}", r.run.id),
            cases: crate::ci::record_cases(r, &format!("fitness.{}", r.server.slug)),
        };
        crate::ci::write_junit(path, "fitness run", &[suite])?;
    }
    crate::ci::step_summary(&crate::ci::record_markdown(r))?;
    let bound = |f: fn(&fitness_shared::record::Interval) -> f64| {
        fitness_shared::compare::stored_interval(r)
            .map_or_else(String::new, |i| format!("{:.4}", f(&i)))
    };
    crate::ci::outputs(&[
        (
            "record",
            output
                .dir
                .join(fitness_shared::site::RECORD_FILE)
                .display()
                .to_string(),
        ),
        ("outcome", r.outcome.code().to_owned()),
        ("server", r.server.slug.clone()),
        ("low", bound(|i| i.low)),
        ("high", bound(|i| i.high)),
    ])
}

pub fn print_summary(output: &RunOutput, json: bool) -> anyhow::Result<()> {
    let r = &output.record;
    if json {
        let summary = serde_json::json!({
            "run": r.run.id,
            "server": r.server.slug,
            "dir": output.dir,
            "outcome": r.outcome.code(),
            "refused_at": r.gates.refused_at,
            "score": r.score.as_ref().map(|s| &s.first_try),
            "suite_hash": r.run.suite_hash,
            "cost": r.cost,
            "signed": r.signature.is_some(),
        });
        crate::process::print_line(&fitness_recorder::secrets::pretty_json(&summary)?)?;
        return Ok(());
    }
    crate::process::outln!("run      {}", r.run.id);
    crate::process::outln!(
        "record   {}",
        output.dir.join(fitness_shared::site::RECORD_FILE).display()
    );
    match (&r.score, r.outcome) {
        (Some(s), Outcome::Scored) => {
            crate::process::outln!("outcome  SCORED: first try {} tasks", s.first_try.text())
        }
        (_, o) => {
            let gate = r.gates.refused_at.as_deref().unwrap_or("none");
            let reason = r
                .gates
                .refused_at
                .as_deref()
                .and_then(|g| r.gates.record(g))
                .map_or("", |g| g.reason.as_str());
            crate::process::outln!(
                "outcome  {} (gate {gate}{}{reason})",
                o.code(),
                if reason.is_empty() { "" } else { ": " }
            );
            if let Some(why) = r
                .gates
                .refused_at
                .as_deref()
                .and_then(|g| r.gates.record(g))
                .and_then(|g| g.detail.explain())
            {
                crate::process::outln!("why      {why}");
            }
        }
    }
    if let Some(i) = &output.interrupted {
        crate::process::outln!("stopped  {}", i.reason());
        crate::process::outln!("why      {}", fitness_recorder::secrets::redact(&i.note()));
    }
    crate::process::outln!(
        "signed   {}",
        if r.signature.is_some() {
            "yes"
        } else {
            "no (pass --key or set FITNESS_SIGNING_KEY)"
        }
    );
    Ok(())
}
