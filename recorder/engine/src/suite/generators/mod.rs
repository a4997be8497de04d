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
//! - [`judge_walk`]: `judge-walk/1`, the walk with a judge proposing its
//!   inputs and wording its tasks; the harness makes every call and check.
//! - [`walk`]: the parts both walks are built from (not a generator).
//! - [`seam`]: the interface, what a generator reads and what it returns.

pub mod judge_synth;
pub mod judge_walk;
pub mod schema_walk1;
pub mod schema_walk2;
pub mod seam;
pub mod walk;

pub use seam::{Candidates, GenerationInput, Generator};

use crate::suite::options::GeneratorId;

/// The generator behind `id`: the one list of generators.
pub fn generator(id: GeneratorId) -> &'static dyn Generator {
    match id {
        GeneratorId::SchemaWalk1 => &schema_walk1::SchemaWalk1,
        GeneratorId::SchemaWalk2 => &schema_walk2::SchemaWalk2,
        GeneratorId::JudgeSynth1 => &judge_synth::JudgeSynth1,
        GeneratorId::JudgeWalk1 => &judge_walk::JudgeWalk1,
    }
}
