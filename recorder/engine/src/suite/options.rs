//! What a suite is generated with: the generator (its id, the chip on
//! every row), the size, the seed, the
//! credential context, the screen, and what earlier batches wrote.

use std::fmt;
use std::str::FromStr;

use fitness_shared::record::{AccessMode, CredentialContext, OperatorHints, SeedCall};

/// A generator and its version: the chip on every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeneratorId {
    SchemaWalk1,
    SchemaWalk2,
    JudgeSynth1,
    JudgeWalk1,
}

impl GeneratorId {
    pub fn as_str(self) -> &'static str {
        match self {
            GeneratorId::SchemaWalk1 => "schema-walk/1",
            GeneratorId::SchemaWalk2 => "schema-walk/2",
            GeneratorId::JudgeSynth1 => "judge-synth/1",
            GeneratorId::JudgeWalk1 => "judge-walk/1",
        }
    }

    /// The generator cannot run without a judge model.
    pub fn needs_judge(self) -> bool {
        matches!(self, GeneratorId::JudgeSynth1 | GeneratorId::JudgeWalk1)
    }

    /// The mix of shapes the generator aims at when it trims its
    /// candidates: the composing generators aim at
    /// [`AimedMix::COMPOSED`](fitness_shared::record::AimedMix::COMPOSED);
    /// the others aim at none.
    pub fn aimed_mix(self) -> Option<fitness_shared::record::AimedMix> {
        matches!(self, GeneratorId::SchemaWalk2 | GeneratorId::JudgeWalk1)
            .then_some(fitness_shared::record::AimedMix::COMPOSED)
    }

    /// A rehearsal generator: its prompts name the tool and dictate the
    /// arguments, so a score on its suite measures relaying a call.
    pub fn dictates_calls(self) -> bool {
        fitness_shared::generators::dictates_calls(self.as_str())
    }
}

impl FromStr for GeneratorId {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s {
            "schema-walk/1" => Ok(GeneratorId::SchemaWalk1),
            "schema-walk/2" => Ok(GeneratorId::SchemaWalk2),
            "judge-synth/1" => Ok(GeneratorId::JudgeSynth1),
            "judge-walk/1" => Ok(GeneratorId::JudgeWalk1),
            other => anyhow::bail!(
                "unknown generator {other:?}: use schema-walk/2 (offline, zero spend, tasks that need the server's work), judge-walk/1 (the walk, with a judge model proposing its inputs and wording its tasks), judge-synth/1 (a judge model writes the tasks) or schema-walk/1 (rehearsal: the tasks dictate the calls)"
            ),
        }
    }
}

impl fmt::Display for GeneratorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Candidates generated per task asked for, unless the operator says
/// otherwise (registered).
pub const DEFAULT_OVERGEN: f64 = 2.0;

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub generator: GeneratorId,
    pub n_tasks: usize,
    /// Candidates asked for = ceil(n_tasks × factor); registered. Default 2.0.
    pub overgen_factor: f64,
    pub seed: u64,
    pub credential: CredentialContext,
    /// Run the generation-time null screen (needs a screen runner).
    pub screen: bool,
    /// `t` for the suite, `x1-` for extension batch 1.
    pub id_prefix: String,
    /// Prompts of earlier tasks: a repeat is a `duplicate`.
    pub exclude_prompts: Vec<String>,
    /// Values the operator gave the server (absolute paths on a stdio
    /// server's command line): schema-walk/2's first handles.
    pub seed_handles: Vec<String>,
    /// The files in the server's reach, named as the operator would
    /// ([`Target::operator_files`](crate::mcp::connect::Target::operator_files)):
    /// schema-walk/2 offers them to parameters that take a path.
    pub operator_files: Vec<String>,
    /// The operator's places on disk, watched while a walk only reads
    /// ([`crate::watch`]; not hashed: where the server's files are is no
    /// part of what the suite asks).
    pub watched: crate::watch::Watched,
    /// What the suite must reach for its run to go on: the screen is never
    /// paid for a suite that can no longer reach it. `None`: no floors
    /// (`fitness suite`), the screen always runs.
    pub must_reach: Option<SuiteFloors>,
    /// What the run may do to the server (hashed into the suite's config):
    /// suites built read-only and in a sandbox are never read against
    /// each other.
    pub access: AccessMode,
    /// Generation may call tools that may write, and admit tasks whose
    /// solution writes: only in a sandbox whose trials start from the state
    /// generation left (`--sandbox-copy`, or nothing to restore it). Never
    /// in read-only mode.
    pub writes: bool,
    /// Screen calls in flight at once (not hashed: the suite is the same at
    /// any width).
    pub concurrency: usize,
    /// What the operator told generation: calls that succeed (a walk
    /// starts from their results) and words for the judge (hashed).
    pub hints: OperatorHints,
    /// The server, to start again (stdio) or open a new session with
    /// (HTTP): composed answers are read again from a fresh process
    /// before admission. `None`: they are not, and the ledger says so.
    pub fresh: Option<crate::mcp::connect::Target>,
}

/// Seed calls a file holds at most, and its size at most.
const MAX_SEED_CALLS: usize = 200;
const MAX_SEED_FILE: u64 = 1 << 20;
/// Characters of `--context` at most.
const MAX_CONTEXT: usize = 4_000;

/// The operator's seed calls (`--seed-calls FILE`): one JSON object a line,
/// `{"tool": NAME, "arguments": {...}}`; blank lines and lines starting
/// with `#` are skipped. A line that is not such an object is an error that
/// names it.
pub fn read_seed_calls(path: &std::path::Path) -> anyhow::Result<Vec<SeedCall>> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot read --seed-calls {}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_SEED_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|e| anyhow::anyhow!("cannot read --seed-calls {}: {e}", path.display()))?;
    anyhow::ensure!(
        text.len() as u64 <= MAX_SEED_FILE,
        "--seed-calls {} is over {} MiB: give the calls you know succeed, a few lines",
        path.display(),
        MAX_SEED_FILE >> 20
    );
    let mut calls = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let call: SeedCall = serde_json::from_str(line).map_err(|e| {
            anyhow::anyhow!(
                "--seed-calls {} line {}: not a call ({e}); write one object a line, {{\"tool\": \"NAME\", \"arguments\": {{...}}}}",
                path.display(),
                n + 1
            )
        })?;
        anyhow::ensure!(
            !call.tool.trim().is_empty(),
            "--seed-calls {} line {}: the tool's name is empty",
            path.display(),
            n + 1
        );
        calls.push(call);
        anyhow::ensure!(
            calls.len() <= MAX_SEED_CALLS,
            "--seed-calls {} holds over {MAX_SEED_CALLS} calls: give a few that reach what the server holds",
            path.display()
        );
    }
    anyhow::ensure!(
        !calls.is_empty(),
        "--seed-calls {} holds no call",
        path.display()
    );
    Ok(calls)
}

/// `--context` as registered: trimmed, bounded; `None` when empty.
pub fn checked_context(context: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(c) = context.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    anyhow::ensure!(
        c.chars().count() <= MAX_CONTEXT,
        "--context is over {MAX_CONTEXT} characters: say in a few sentences what the server holds"
    );
    Ok(Some(c.to_owned()))
}

/// The floors a suite is held to after generation (the free gates'), known
/// before the screen is paid for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuiteFloors {
    /// Tasks the suite must hold (the registered size, at least the floor).
    pub tasks: u64,
    /// The admission-rate floor.
    pub admission_rate: f64,
    /// The error limit our own judge's calls are held to.
    pub max_error_rate: f64,
}

impl GenerateOptions {
    pub fn new(generator: GeneratorId, n_tasks: usize, seed: u64) -> Self {
        GenerateOptions {
            generator,
            n_tasks,
            overgen_factor: DEFAULT_OVERGEN,
            seed,
            credential: CredentialContext::Anonymous,
            screen: false,
            id_prefix: "t".into(),
            exclude_prompts: Vec::new(),
            seed_handles: Vec::new(),
            operator_files: Vec::new(),
            watched: Default::default(),
            must_reach: None,
            access: AccessMode::ReadOnly,
            writes: false,
            concurrency: 1,
            hints: OperatorHints::default(),
            fresh: None,
        }
    }
}
