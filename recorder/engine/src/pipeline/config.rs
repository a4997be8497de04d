//! What a run is registered with: sizes, floors, models, seed. A run is
//! asked for as [`RunSettings`] (raw values, from flags, a demo scenario or
//! a record to re-run), each default named once here or in the room that
//! owns it; [`RunConfig::from_settings`] is the one place that checks them
//! and derives the rest, so the pipeline only ever receives a checked
//! configuration. Flags may tighten a floor, never loosen one.

use std::path::PathBuf;
use std::time::Duration;

use fitness_shared::gates::{MAX_ERROR_RATE, MIN_ADMISSION_RATE, MIN_SUITE_SIZE, NULL_KILL_RATIO};
use fitness_shared::record::CredentialContext;

use super::sandbox::SandboxSettings;
use crate::mcp::connect::{DEFAULT_REQUEST_TIMEOUT, Target};
use crate::mcp::tap::DEFAULT_TAPE_CAP;
use crate::model::DEFAULT_MODEL_TIMEOUT;
use crate::model::agent::Budget;
use crate::model::types::{ModelId, ProviderKind};
use crate::suite::{DEFAULT_OVERGEN, GeneratorId};

/// The construct gate's floor: the reference agent must reach the answer
/// through the server at least this often.
pub const CONSTRUCT_THRESHOLD: f64 = 0.90;
/// The gates' significance level.
pub const ALPHA: f64 = fitness_shared::gates::DEFAULT_ALPHA;
/// The planned power of the construct test.
pub const PLANNED_POWER: f64 = fitness_shared::gates::DEFAULT_PLANNED_POWER;

/// Defaults, sized so a perfect reference agent can publish a PASS:
/// 12 tasks x 3 reps = 36 trials, and a perfect agent needs 35 at 0.90.
pub const DEFAULT_TASKS: u64 = 12;
pub const DEFAULT_REPS: u64 = 3;
pub const DEFAULT_EXTENSION_SIZE: u64 = 4;
pub const DEFAULT_MAX_EXTENSIONS: u64 = 2;
/// The seed a run registers when none is given.
pub const DEFAULT_SEED: u64 = 1;

/// The floors a run is held to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floors {
    pub min_suite: u64,
    pub min_admission_rate: f64,
    pub construct_threshold: f64,
    pub null_ratio: f64,
    pub alpha: f64,
    pub max_error_rate: f64,
}

impl Default for Floors {
    fn default() -> Self {
        Floors {
            min_suite: MIN_SUITE_SIZE,
            min_admission_rate: MIN_ADMISSION_RATE,
            construct_threshold: CONSTRUCT_THRESHOLD,
            null_ratio: NULL_KILL_RATIO,
            alpha: ALPHA,
            max_error_rate: MAX_ERROR_RATE,
        }
    }
}

impl Floors {
    /// The floors a pre-registration records; the default where it is
    /// silent (a record older than the field).
    pub fn registered(p: &fitness_shared::record::PreRegistration) -> Self {
        let d = Floors::default();
        Floors {
            min_suite: p.min_tasks.unwrap_or(d.min_suite),
            min_admission_rate: p.min_admission_rate.unwrap_or(d.min_admission_rate),
            construct_threshold: p.construct_threshold.unwrap_or(d.construct_threshold),
            null_ratio: p.null_kill_ratio.unwrap_or(d.null_ratio),
            alpha: p.alpha.unwrap_or(d.alpha),
            max_error_rate: p.max_error_rate.unwrap_or(d.max_error_rate),
        }
    }

    /// Errors, naming the flag, when any floor is looser than the default
    /// (or not a number in its domain).
    pub fn check(&self) -> anyhow::Result<()> {
        let d = Floors::default();
        let mut loosened = Vec::new();
        if self.min_suite < d.min_suite {
            loosened.push(format!(
                "--min-suite {} is below the floor of {}",
                self.min_suite, d.min_suite
            ));
        }
        let mut check = |flag: &str, value: f64, floor: f64, higher_is_tighter: bool| {
            if !(0.0..=1.0).contains(&value) || value.is_nan() {
                loosened.push(format!("{flag} {value} is not in [0, 1]"));
            } else if (higher_is_tighter && value < floor) || (!higher_is_tighter && value > floor)
            {
                let dir = if higher_is_tighter { "below" } else { "above" };
                loosened.push(format!("{flag} {value} is {dir} the floor of {floor}"));
            }
        };
        check(
            "--min-admission",
            self.min_admission_rate,
            d.min_admission_rate,
            true,
        );
        check(
            "--construct-threshold",
            self.construct_threshold,
            d.construct_threshold,
            true,
        );
        check("--null-ratio", self.null_ratio, d.null_ratio, false);
        check("--alpha", self.alpha, d.alpha, false);
        check(
            "--max-error-rate",
            self.max_error_rate,
            d.max_error_rate,
            false,
        );
        if self.null_ratio <= 0.0 || self.alpha <= 0.0 || self.construct_threshold >= 1.0 {
            loosened.push(
                "--null-ratio and --alpha must be above 0 and --construct-threshold below 1"
                    .to_owned(),
            );
        }
        if loosened.is_empty() {
            Ok(())
        } else {
            anyhow::bail!(
                "flags may tighten a floor, never loosen one: {}",
                loosened.join("; ")
            )
        }
    }
}

/// A run as it is asked for: raw values, not yet checked. [`RunSettings::new`]
/// fills every default; [`RunConfig::from_settings`] checks and derives.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub target: Target,
    /// The model under test.
    pub runner: ModelId,
    /// The judge that writes tasks (judge-synth/1).
    pub judge: Option<ModelId>,
    /// The generator; `None` chooses by [`default_generator`].
    pub generator: Option<GeneratorId>,
    pub tasks: u64,
    pub reps: u64,
    pub extension_size: u64,
    pub max_extensions: u64,
    pub credential: CredentialContext,
    /// What the credential was (its kind, header names, granted scopes),
    /// recorded as detail.
    pub credential_used: Option<fitness_shared::record::CredentialUsed>,
    pub seed: u64,
    pub floors: Floors,
    /// The generation-time null screen (registered either way).
    pub screen: bool,
    /// Candidates generated per driven task (registered).
    pub overgen_factor: f64,
    pub out_dir: PathBuf,
    /// A publisher key made by `fitness keygen`; unsigned runs say so.
    pub key: Option<PathBuf>,
    /// Any one MCP request.
    pub timeout: Duration,
    /// Any one model call attempt (registered).
    pub model_timeout: Duration,
    pub prices: Option<PathBuf>,
    /// Turns and tokens per trial.
    pub budget: Budget,
    /// A spend cap: the run stops (VOID) before a model call past this many.
    pub max_model_calls: Option<u64>,
    /// The label of the server on the board.
    pub label: Option<String>,
    /// A `suite.json` an earlier run wrote, driven instead of generating.
    pub fixed_suite: Option<PathBuf>,
    /// The size cap of each tape (registered).
    pub max_tape_bytes: u64,
    /// Appended to the run id (`fitness sweep` names the slot and attempt).
    pub run_tag: Option<String>,
    /// Run the official conformance suite after the probes, at the revision they negotiated (HTTP only).
    pub conformance: bool,
    /// The official suite's expected-failures baseline (its own YAML), when
    /// given: failures it lists pass the suite's gate, stale entries fail it.
    pub conformance_baseline: Option<PathBuf>,
    /// What the run may do to the server: read-only unless a sandbox
    /// (registered).
    pub sandbox: SandboxSettings,
    /// Trials in flight at once within a stage (registered); `None` asks for
    /// the runner's default, and a checked config always holds the value.
    pub concurrency: Option<u64>,
    /// What the operator told generation (`--seed-calls`, `--context`),
    /// registered.
    pub hints: fitness_shared::record::OperatorHints,
    /// How the server's elicitation requests are answered (registered).
    pub elicitation: fitness_shared::record::ElicitationPolicy,
    /// An OpenTelemetry collector's OTLP/HTTP traces endpoint the run's
    /// spans are sent to at its end (not registered: where the spans go
    /// changes nothing measured).
    pub otlp: Option<String>,
}

impl RunSettings {
    /// What the run needs from this machine before it starts: each model's
    /// key (or a local base URL) and the server's program. A missing one is
    /// the command line's fault, said before anything runs or is written.
    /// (A sweep's slots skip this: a target that cannot start is an honest
    /// VOID record beside the others.)
    pub fn ready(&self) -> anyhow::Result<()> {
        for id in std::iter::once(&self.runner).chain(&self.judge) {
            crate::model::client_for(id, &crate::model::ClientOptions::default())?;
        }
        if let Target::Stdio(s) = &self.target {
            s.check_program()?;
        }
        Ok(())
    }

    /// A run of `target` by `runner` with every default.
    pub fn new(target: Target, runner: ModelId) -> Self {
        RunSettings {
            target,
            runner,
            judge: None,
            generator: None,
            tasks: DEFAULT_TASKS,
            reps: DEFAULT_REPS,
            extension_size: DEFAULT_EXTENSION_SIZE,
            max_extensions: DEFAULT_MAX_EXTENSIONS,
            credential: CredentialContext::Anonymous,
            credential_used: None,
            seed: DEFAULT_SEED,
            floors: Floors::default(),
            screen: true,
            overgen_factor: DEFAULT_OVERGEN,
            out_dir: PathBuf::from("runs"),
            key: None,
            timeout: DEFAULT_REQUEST_TIMEOUT,
            model_timeout: DEFAULT_MODEL_TIMEOUT,
            prices: None,
            budget: Budget::default(),
            max_model_calls: None,
            label: None,
            fixed_suite: None,
            max_tape_bytes: DEFAULT_TAPE_CAP,
            run_tag: None,
            conformance: false,
            conformance_baseline: None,
            sandbox: SandboxSettings::default(),
            concurrency: None,
            hints: fitness_shared::record::OperatorHints::default(),
            elicitation: Default::default(),
            otlp: None,
        }
    }
}

/// Everything a run needs before it starts, checked: built only by
/// [`RunConfig::from_settings`]. The settings as asked for (their values
/// brought into range), and the generator they chose.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub generator: GeneratorId,
    pub settings: RunSettings,
}

impl RunConfig {
    /// Check `s` and derive the configuration a run starts with: the
    /// generator chosen, every floor and size checked, a reused suite read.
    /// A run that could only be refused by its own flags is not started.
    pub fn from_settings(mut s: RunSettings) -> anyhow::Result<RunConfig> {
        let generator = default_generator(s.generator, &s.runner, s.judge.as_ref())?;
        check_credential_label(
            s.credential,
            s.credential_used
                .as_ref()
                .map(fitness_shared::record::CredentialUsed::text)
                .as_deref(),
        )?;
        s.floors.check()?;
        anyhow::ensure!(s.tasks > 0, "--tasks must be at least 1");
        anyhow::ensure!(s.reps > 0, "--reps must be at least 1");
        anyhow::ensure!(
            s.tasks >= s.floors.min_suite,
            "--tasks {} is below the suite floor of {} (--min-suite): the structural gate could only refuse such a run, so it is not started",
            s.tasks,
            s.floors.min_suite
        );
        anyhow::ensure!(
            (1.0..=20.0).contains(&s.overgen_factor),
            "the over-generation factor must be between 1 and 20"
        );
        anyhow::ensure!(
            s.conformance_baseline.is_none() || s.conformance,
            "--conformance-baseline is the official suite's baseline: pass --conformance too"
        );
        if let Some(path) = &s.conformance_baseline {
            anyhow::ensure!(
                path.is_file(),
                "--conformance-baseline {}: there is no such file",
                path.display()
            );
        }
        anyhow::ensure!(
            !s.conformance || matches!(s.target, Target::Http(_)),
            "--conformance runs the official suite (server --url) against HTTP targets only; this target is a stdio command"
        );
        if let Some(tag) = &s.run_tag {
            check_run_tag(tag)?;
        }
        s.sandbox.check(&s.target)?;
        s.concurrency = Some(concurrency(&s)?);
        if let Some(path) = &s.fixed_suite {
            suite_fits(&crate::suite::hashed::load_suite(path)?, &s.sandbox, path)?;
            for index in 1..=s.max_extensions {
                let batch = path.with_file_name(fitness_shared::site::suite_batch_file(index));
                if batch.is_file() {
                    suite_fits(
                        &crate::suite::hashed::load_suite(&batch)?,
                        &s.sandbox,
                        &batch,
                    )?;
                }
            }
        }
        let second = Duration::from_secs(1);
        s.timeout = s.timeout.max(second);
        s.model_timeout = s.model_timeout.max(second);
        s.budget.max_turns = s.budget.max_turns.max(1);
        s.budget.max_calls_per_turn = s.budget.max_calls_per_turn.max(1);
        s.budget.max_output_tokens = s.budget.max_output_tokens.clamp(64, 65_536);
        s.max_tape_bytes = s.max_tape_bytes.clamp(1 << 20, 1 << 50);
        s.generator = Some(generator);
        Ok(RunConfig {
            generator,
            settings: s,
        })
    }
}

/// The most trials a run may have in flight at once.
pub const MAX_CONCURRENCY: u64 = 64;

/// The trials in flight at once: as asked, else the runner's default (8 for
/// a sim runner, 1 for a model served from this machine, 4 for a hosted
/// API). A sandbox runs one trial at a time: each starts from the state the
/// sandbox puts back.
fn concurrency(s: &RunSettings) -> anyhow::Result<u64> {
    if s.sandbox.enabled {
        anyhow::ensure!(
            s.concurrency.is_none_or(|n| n == 1),
            "--concurrency {} cannot be used with --sandbox: each trial starts from the state the sandbox puts back, so trials run one at a time",
            s.concurrency.unwrap_or(1)
        );
        return Ok(1);
    }
    if let Some(n) = s.concurrency {
        anyhow::ensure!(
            (1..=MAX_CONCURRENCY).contains(&n),
            "--concurrency must be between 1 and {MAX_CONCURRENCY}"
        );
        return Ok(n);
    }
    Ok(match s.runner.provider {
        ProviderKind::Sim => 8,
        ProviderKind::OpenAi if crate::model::openai::serves_locally() => 1,
        ProviderKind::OpenAi | ProviderKind::Anthropic => 4,
    })
}

/// A reused suite was made in this run's mode (when it says), and by a
/// generation that wrote nothing: one that wrote read its answer keys from
/// the state it left, which another run does not start from.
pub fn suite_fits(
    suite: &crate::suite::Suite,
    sandbox: &SandboxSettings,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    let mode = sandbox.mode();
    if let Some(made) = suite.config.get("access").and_then(|v| v.as_str()) {
        anyhow::ensure!(
            made == mode.as_str(),
            "the suite in {} was made {made}, and this run is {}: suites built read-only and in a sandbox are never read against each other",
            path.display(),
            mode.as_str()
        );
    }
    anyhow::ensure!(
        suite.config.get("writes") != Some(&serde_json::Value::Bool(true)),
        "the suite in {} was generated in a sandbox whose generation wrote to the server: its answer keys were read from the state that generation left, which this run does not start from; generate the suite again",
        path.display()
    );
    Ok(())
}

/// The generator a run registers. A real runner never gets a rehearsal
/// suite by default: a score on tasks that dictate the calls would measure
/// relaying a call, and a maintainer who did not ask for it would publish
/// it.
pub fn default_generator(
    asked: Option<GeneratorId>,
    runner: &ModelId,
    judge: Option<&ModelId>,
) -> anyhow::Result<GeneratorId> {
    let generator = match (asked, judge) {
        (Some(g), _) => g,
        (None, Some(_)) => GeneratorId::JudgeSynth1,
        (None, None) if runner.provider == ProviderKind::Sim => GeneratorId::SchemaWalk1,
        (None, None) => anyhow::bail!(
            "with the runner {runner}, choose how the tasks are made: --judge PROVIDER/MODEL (judge-synth/1 writes them) or --generator schema-walk/2 (offline, from the server's real answers). schema-walk/1 is not the default for a real model: its tasks dictate the calls, so its score measures relay, not fitness"
        ),
    };
    if generator.needs_judge() && judge.is_none() {
        anyhow::bail!("--generator {generator} needs a --judge PROVIDER/MODEL");
    }
    Ok(generator)
}

/// A run tag is a path segment and part of an id: 1 to 40 of `[a-z0-9-]`.
pub fn check_run_tag(tag: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        !tag.is_empty()
            && tag.len() <= 40
            && tag
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !tag.starts_with('-'),
        "--run-tag {tag:?}: use 1 to 40 lowercase letters, digits and dashes"
    );
    Ok(())
}

/// A run that carries a credential (a login, a bearer token, a header) is
/// never labelled anonymous: `--credential anonymous` with one is refused
/// before anything runs (`carried` names the credential, never its value).
pub fn check_credential_label(
    credential: CredentialContext,
    carried: Option<&str>,
) -> anyhow::Result<()> {
    if credential == CredentialContext::Anonymous
        && let Some(what) = carried
    {
        anyhow::bail!(
            "--credential anonymous, but the run carries a credential ({what}): drop the flag (a credential is then labelled owner-key) or say free-key or owner-key"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ModelId {
        s.parse().expect("a model id")
    }

    #[test]
    fn the_default_generator_follows_the_runner_and_the_judge() {
        let sim = id("sim/diligent");
        let real = id("openai/gpt-4o");
        let judge = id("anthropic/claude-sonnet-4-5");
        assert_eq!(
            default_generator(None, &sim, None).unwrap(),
            GeneratorId::SchemaWalk1
        );
        assert_eq!(
            default_generator(None, &real, Some(&judge)).unwrap(),
            GeneratorId::JudgeSynth1
        );
        assert!(default_generator(None, &real, None).is_err());
        assert_eq!(
            default_generator(Some(GeneratorId::SchemaWalk2), &real, None).unwrap(),
            GeneratorId::SchemaWalk2
        );
        assert!(default_generator(Some(GeneratorId::JudgeSynth1), &real, None).is_err());
    }

    #[test]
    fn a_run_tag_is_one_path_segment_of_a_z_0_9_and_dashes() {
        assert!(check_run_tag("ab12-a2").is_ok());
        assert!(check_run_tag("../x").is_err());
        assert!(check_run_tag("").is_err());
    }
}
