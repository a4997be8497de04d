//! What a run is registered with: sizes, floors, models, seed. Flags may
//! tighten a floor, never loosen one.

use std::path::PathBuf;
use std::time::Duration;

use fitness_shared::gates::{MAX_ERROR_RATE, MIN_ADMISSION_RATE, MIN_SUITE_SIZE, NULL_KILL_RATIO};
use fitness_shared::record::CredentialContext;

use crate::mcp::connect::Target;
use crate::model::types::ModelId;
use crate::suite::GeneratorId;

/// The construct gate's floor: the reference agent must reach the answer
/// through the server at least this often.
pub const CONSTRUCT_THRESHOLD: f64 = 0.90;
/// The gates' significance level.
pub const ALPHA: f64 = 0.05;
/// The planned power of the construct test.
pub const PLANNED_POWER: f64 = fitness_shared::gates::DEFAULT_PLANNED_POWER;

/// Defaults, sized so a perfect reference agent can publish a PASS:
/// 12 tasks x 3 reps = 36 trials, and a perfect agent needs 35 at 0.90.
pub const DEFAULT_TASKS: u64 = 12;
pub const DEFAULT_REPS: u64 = 3;
pub const DEFAULT_EXTENSION_SIZE: u64 = 4;
pub const DEFAULT_MAX_EXTENSIONS: u64 = 2;

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

/// Everything a run needs before it starts.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub runner: ModelId,
    pub judge: Option<ModelId>,
    pub generator: GeneratorId,
    pub n_tasks: u64,
    pub reps: u64,
    pub extension_size: u64,
    pub max_extensions: u64,
    pub credential: CredentialContext,
    pub seed: u64,
    pub floors: Floors,
    /// The generation-time null screen (registered).
    pub screen: bool,
    /// Candidates generated per driven task (registered).
    pub overgen_factor: f64,
    pub out_dir: PathBuf,
    /// A publisher key made by `fitness keygen`; unsigned runs say so.
    pub key: Option<PathBuf>,
    /// Any one MCP request.
    pub timeout: Duration,
    /// Any one model call attempt (registered): a slow local model needs
    /// minutes where a hosted API needs seconds.
    pub model_timeout: Duration,
    pub prices: Option<PathBuf>,
    pub max_turns: u32,
    pub max_tokens: u64,
    /// A spend cap: the run stops (VOID) before a model call past this many.
    pub max_model_calls: Option<u64>,
    /// The label of the server on the board, when the target's own name
    /// should not be used.
    pub label: Option<String>,
    /// A `suite.json` an earlier run wrote: its tasks are driven instead of
    /// generating a suite (its hash must match its contents), and the
    /// extension batches kept beside it (`suite-x<N>.json`) are consumed
    /// instead of generating batch N.
    pub fixed_suite: Option<PathBuf>,
    /// The size cap of each tape (registered): past it the run is VOID.
    pub max_tape_bytes: u64,
    /// Appended to the run id (`fitness sweep` names the slot and attempt).
    pub run_tag: Option<String>,
    /// Run the official conformance suite before the probes (HTTP only).
    pub conformance: bool,
}
