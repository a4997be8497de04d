//! The task generators, behind one seam. A generator reads the live server
//! (its tools, labels, instructions, and calls where it makes them) and
//! proposes candidates with their ledger ([`Candidates`]); admission, the
//! null screen and trimming are the shared steps after every generator
//! (`suite::generate`). Each generator is one room implementing
//! [`Generator`], listed once in [`generator`]: a new generator is a new
//! room and a line there (and its id in `fitness_shared::generators` where
//! the board reads a property of it).
//!
//! - [`schema_walk1`]: `schema-walk/1`, the rehearsal walk (tasks dictate the calls).
//! - [`schema_walk2`]: `schema-walk/2`, the offline walk whose tasks need the server's work.
//! - [`judge_synth`]: `judge-synth/1`, a judge model writes the tasks.
//! - [`walk`]: the parts both walks are built from (not a generator).

pub mod judge_synth;
pub mod schema_walk1;
pub mod schema_walk2;
pub mod walk;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

use super::task::Candidate;
use super::{GenerateOptions, PhaseSpend, ToolDestructiveness};
use crate::mcp::connect::Session;
use crate::mcp::tap::Tap;
use crate::model::types::ModelClient;

/// A generator and its version: the chip on every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeneratorId {
    SchemaWalk1,
    SchemaWalk2,
    JudgeSynth1,
}

impl GeneratorId {
    pub fn as_str(self) -> &'static str {
        match self {
            GeneratorId::SchemaWalk1 => "schema-walk/1",
            GeneratorId::SchemaWalk2 => "schema-walk/2",
            GeneratorId::JudgeSynth1 => "judge-synth/1",
        }
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
            other => anyhow::bail!(
                "unknown generator {other:?}: use schema-walk/2 (offline, zero spend, tasks that need the server's work), judge-synth/1 (a judge model writes the tasks) or schema-walk/1 (rehearsal: the tasks dictate the calls)"
            ),
        }
    }
}

impl fmt::Display for GeneratorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The one interface every generator has: what it is run with (hashed into
/// the suite's config) and what it proposes.
pub trait Generator: Sync {
    /// What this generator is run with, for the suite's config (and so its
    /// hash).
    fn config(&self, input: &GenerationInput<'_>) -> Map<String, Value>;

    /// Up to `input.want` candidates, each with the result its answer was
    /// read from, and what the generator counted and spent. An error only
    /// when the generator cannot run at all (a judge-written generator with
    /// no judge).
    fn propose<'a>(
        &'a self,
        input: &'a GenerationInput<'a>,
    ) -> LocalBoxFuture<'a, anyhow::Result<Candidates>>;
}

/// The generator behind `id`: the one list of generators.
pub fn generator(id: GeneratorId) -> &'static dyn Generator {
    match id {
        GeneratorId::SchemaWalk1 => &schema_walk1::SchemaWalk1,
        GeneratorId::SchemaWalk2 => &schema_walk2::SchemaWalk2,
        GeneratorId::JudgeSynth1 => &judge_synth::JudgeSynth1,
    }
}

/// What candidates are made from: the live server, its tools with their
/// destructiveness labels, its instructions, the options, and how many
/// candidates are wanted.
pub struct GenerationInput<'a> {
    pub session: &'a Session,
    pub tools: &'a [rmcp::model::Tool],
    pub labels: &'a [ToolDestructiveness],
    pub instructions: Option<&'a str>,
    pub opts: &'a GenerateOptions,
    pub want: usize,
    /// The judge model, when the run has one (a generator that needs one
    /// refuses to run without it).
    pub judge: Option<&'a dyn ModelClient>,
    /// The agent tape every model call of generation is written to.
    pub tape: &'a Tap,
}

/// What a generator proposed, before admission: the candidates with their
/// ledger.
#[derive(Debug, Default)]
pub struct Candidates {
    pub candidates: Vec<Candidate>,
    /// Where each candidate's answer was read from, by candidate id.
    pub observed: BTreeMap<String, String>,
    /// What a walk called and skipped.
    pub walk: Option<walk::WalkStats>,
    /// The judge's calls, made and failed (a judge-written generator).
    pub judge_calls: Option<fitness_shared::record::JudgeCalls>,
    /// The judge's synthesis spend.
    pub synthesis: Option<PhaseSpend>,
}

impl Candidates {
    /// What a schema walk proposed.
    pub fn walked(walk: walk::WalkOutcome) -> Candidates {
        Candidates {
            candidates: walk.candidates,
            observed: walk.observed,
            walk: Some(walk.stats),
            judge_calls: None,
            synthesis: None,
        }
    }
}
