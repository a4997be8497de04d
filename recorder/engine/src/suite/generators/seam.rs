//! The one interface every generator has ([`Generator`]): what it reads
//! ([`GenerationInput`]) and what it proposes ([`Candidates`]).

use std::collections::BTreeMap;

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

use super::walk;
use crate::mcp::connect::Session;
use crate::mcp::tap::Tap;
use crate::model::types::ModelClient;
use crate::suite::destructive::ToolDestructiveness;
use crate::suite::options::GenerateOptions;
use crate::suite::spend::PhaseSpend;
use crate::suite::task::Candidate;

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

/// What candidates are made from: the live server, its tools with their
/// destructiveness labels, its instructions, the options, and how many
/// candidates are wanted.
pub struct GenerationInput<'a> {
    pub session: &'a Session,
    pub tools: &'a [rmcp::model::Tool],
    pub labels: &'a [ToolDestructiveness],
    /// The tools that may write ([`crate::suite::destructive::writers`]):
    /// never called unless `opts.writes`.
    pub writers: &'a std::collections::BTreeSet<String>,
    pub instructions: Option<&'a str>,
    pub opts: &'a GenerateOptions,
    pub want: usize,
    /// The judge model, when the run has one (a generator that needs one
    /// refuses to run without it).
    pub judge: Option<&'a dyn ModelClient>,
    /// The agent tape every model call of generation is written to.
    pub tape: &'a Tap,
}

impl<'a> GenerationInput<'a> {
    /// What decides which tools generation may call.
    pub fn surface(&self) -> walk::Surface<'a> {
        walk::Surface {
            tools: self.tools,
            labels: self.labels,
            writers: self.writers,
            opts: self.opts,
        }
    }
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
    /// The model of what the server holds, where the generator built one:
    /// hashed into the suite's config.
    pub holdings: Option<Value>,
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
            holdings: walk.holdings,
        }
    }
}
