//! The exploration: every callable tool is called, first with schema-valid
//! arguments (each value of its first enumerated argument in turn), then
//! with handles harvested from earlier results in its string arguments. Only
//! calls that succeeded become observations; the others are counted.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::ControlFlow;

use fitness_shared::record::DiscoveryMove;
use fitness_shared::tape::timeline::excerpt;
use futures::future::LocalBoxFuture;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::config::WalkConfig2;
use super::exploration::{Exploration, Observation};
use super::fit::{Fits, Plan, first_round_args, fitted, handle_plans, identifier, replace_token};
use super::follow::follow_error;
use super::text::Handle;
use super::witness::Witnesses;
use crate::mcp::connect::Session;
use crate::suite::generators::seam::GenerationInput;
use crate::suite::generators::walk::{Taken, WalkStats, call_counted, drop_unsatisfiable};
use crate::suite::predicate::contains_token;
use crate::suite::reading::{reads_as_empty, reads_as_error, without_in_band_errors};
use crate::suite::schema_args::{Limits, valid_arguments_within};
use crate::suite::task::Origin;

/// Something that knows what a tool's arguments mean (a judge model) and
/// proposes argument sets the schema alone cannot: an `expression` of
/// `2+3`, a `query` over a table the walk has seen listed. Its proposals are
/// only ever called as the walk's own are: on callable tools, a tool that
/// may write only before any handle is harvested, each result kept only
/// when it succeeded.
pub trait Guide {
    /// Argument sets to call, as (tool, arguments).
    fn propose<'a>(&'a mut self, asked: Asked<'a>) -> LocalBoxFuture<'a, Vec<Proposed>>;
}

/// One proposed call: a tool and its arguments.
pub type Proposed = (String, Map<String, Value>);

/// What a guide is shown: the tools to propose for, the values the walk
/// has harvested so far (the operator's first), and what each tool last
/// said when a call of it failed.
pub struct Asked<'a> {
    pub tools: Vec<&'a Tool>,
    pub seen: Vec<&'a str>,
    pub errors: &'a BTreeMap<String, Vec<String>>,
    /// `true` on the second asking, after the walk's own rounds.
    pub again: bool,
    /// What the server says about itself and what discovery found.
    pub about: &'a str,
    /// What the operator says (`--context`).
    pub context: Option<&'a str>,
}

/// Follow-up calls the ledger names with the error that led to each.
const FOLLOW_REASONS: usize = 3;
/// Values shown to a guide at most, and the length of each.
const SEEN_SHOWN: usize = 40;
const SEEN_CHARS: usize = 80;

impl<'a> Explorer<'a> {
    /// An explorer holding its first handles (the operator's values, then
    /// the examples each tool's schema documents); a walk that only reads
    /// watches the state before its first call.
    pub(super) async fn open(
        input: &GenerationInput<'a>,
        callable: &[&Tool],
        config: &'a WalkConfig2,
        stats: &'a mut WalkStats,
    ) -> Explorer<'a> {
        let (session, writers, seeds, files, seed) = (
            input.session,
            input.writers,
            &input.opts.seed_handles,
            &input.opts.operator_files,
            input.opts.seed,
        );
        let mut explorer = Explorer {
            session,
            writers,
            config,
            limits: config.limits(),
            budget: config.call_budget(callable.len()),
            rng: ChaCha8Rng::seed_from_u64(seed),
            discovery_rng: ChaCha8Rng::seed_from_u64(seed ^ 0x6469_7363), // "disc"
            ex: Exploration::seeded(seeds, files, callable),
            tried: HashSet::new(),
            dead: HashSet::new(),
            covered: HashSet::new(),
            errors: BTreeMap::new(),
            failed_calls: Vec::new(),
            last_said: None,
            to_repair: Vec::new(),
            follows: Vec::new(),
            followed: BTreeMap::new(),
            refused: HashSet::new(),
            follow_calls: (0, 0),
            follow_reasons: Vec::new(),
            witness: None,
            stats,
        };
        if config.witness_state && !callable.iter().any(|t| writers.contains(t.name.as_ref())) {
            explorer.witness = Some(
                Witnesses::open(
                    session,
                    callable,
                    writers,
                    config.call_timeout,
                    &input.opts.watched,
                    explorer.stats,
                )
                .await,
            );
        }
        explorer
    }

    /// The walk after discovery. A `guide` is asked twice: before the first
    /// round (its calls are made first), and after the rounds for the tools
    /// that have not yet answered, shown what the walk harvested and what
    /// those tools said; when its second calls answer, the rounds go on from
    /// the new handles. Between the two, its failed calls are repaired
    /// ([`Explorer::repair`]).
    pub(super) async fn walk(
        &mut self,
        callable: &[&Tool],
        mut guide: Option<&mut dyn Guide>,
        context: Option<&str>,
    ) {
        let explorer = self;
        if let Some(g) = guide.as_deref_mut() {
            let asked = explorer.asked(callable.to_vec(), false, context);
            let proposed = g.propose(asked).await;
            explorer.guided(callable, proposed, false).await;
        }
        explorer.rounds(callable, 0).await;
        if guide.is_some() && explorer.repair(callable).await > 0 {
            explorer.rounds(callable, 1).await;
        }
        if let Some(g) = guide {
            let quiet: Vec<&Tool> = callable
                .iter()
                .copied()
                .filter(|t| {
                    !explorer.writers.contains(t.name.as_ref())
                        && !explorer.dead.contains(t.name.as_ref())
                        && explorer.answers(&t.name) < 2
                })
                .collect();
            if !quiet.is_empty() {
                let asked = explorer.asked(quiet, true, context);
                let proposed = g.propose(asked).await;
                if explorer.guided(callable, proposed, true).await > 0 {
                    explorer.rounds(callable, 1).await;
                }
            }
        }
        let (made, answered) = explorer.follow_calls;
        if made > 0 {
            explorer.stats.discovery.push(DiscoveryMove {
                name: "follow-errors".into(),
                tool: None,
                tried:
                    "the values failed calls' errors named or listed, in place of the refused ones"
                        .into(),
                found: if explorer.follow_reasons.is_empty() {
                    format!("{made} call(s) made, {answered} answered")
                } else {
                    format!(
                        "{made} call(s) made, {answered} answered; {}",
                        explorer.follow_reasons.join("; ")
                    )
                },
                worked: answered > 0,
            });
        }
    }

    /// Does the walk watch the state (the operator's places, or a listing
    /// that takes no argument)?
    pub(super) fn watching(&self) -> bool {
        self.witness.as_ref().is_some_and(Witnesses::watches)
    }

    /// After a setup step: the files it changed, the witnesses' answers
    /// taken as the state from now on ([`Witnesses::settle`]).
    pub(super) async fn settled(&mut self) -> Vec<String> {
        match self.witness.as_mut() {
            Some(w) => w.settle(self.session, self.stats).await,
            None => Vec::new(),
        }
    }

    /// What the exploration found, the witnesses closed.
    pub(super) async fn close(mut self) -> Exploration {
        if let Some(mut w) = self.witness.take() {
            w.close(self.session, self.stats).await;
            self.ex.created = w.created;
        }
        self.ex
    }
}

/// The exploration under way: what it has found, tried and dropped.
pub(super) struct Explorer<'a> {
    pub(super) session: &'a Session,
    /// Tools that may write (called only when generation may write).
    pub(super) writers: &'a BTreeSet<String>,
    pub(super) config: &'a WalkConfig2,
    pub(super) limits: Limits,
    /// Calls the walk may make ([`WalkConfig2::call_budget`]).
    pub(super) budget: usize,
    pub(super) rng: ChaCha8Rng,
    /// Discovery's own draws (the other arguments of its calls), apart
    /// from the walk's: a move never changes what the walk's rounds draw.
    pub(super) discovery_rng: ChaCha8Rng,
    pub(super) ex: Exploration,
    /// `tool NUL arguments` of every call made.
    pub(super) tried: HashSet<String>,
    /// Tools dropped: no valid arguments, or they stopped answering.
    dead: HashSet<String>,
    /// Tools a discovery move served (a query language whose catalogue
    /// answered): the walk's rounds leave them to it and to a guide.
    pub(super) covered: HashSet<String>,
    /// What the last failed call said.
    pub(super) last_said: Option<String>,
    /// The guide's calls that failed, with what the server said.
    to_repair: Vec<(String, Map<String, Value>, String)>,
    /// What each tool said when a call of it failed, the first
    /// [`ERRORS_KEPT`] distinct sayings (the guide's own calls come first).
    errors: BTreeMap<String, Vec<String>>,
    /// The failed calls, with what each said (the first
    /// [`FAILED_CALLS_KEPT`]): a step the server asks for made, the calls
    /// that asked are made again ([`super::setup`]).
    pub(super) failed_calls: Vec<(String, Map<String, Value>, String)>,
    /// Calls the walk's failed calls' errors point to, not yet made
    /// ([`follow_error`]).
    follows: Vec<Proposed>,
    /// Follow-up calls queued per tool, at most [`FOLLOWS_PER_TOOL`].
    followed: BTreeMap<String, usize>,
    /// `(argument, value)` pairs a server refused by naming the value in
    /// quotes: never planned again.
    refused: HashSet<(String, String)>,
    /// Follow-up calls made, and how many of them answered.
    follow_calls: (usize, usize),
    /// For the ledger: which error's words led to which follow-up call.
    follow_reasons: Vec<String>,
    /// The state witnesses of a walk that only reads.
    witness: Option<Witnesses>,
    pub(super) stats: &'a mut WalkStats,
}

impl Explorer<'_> {
    /// A call made by a move: the observation it added, marked with its
    /// origin (and as giving handles only, where its own answer is no
    /// task: a catalogue, a broad search).
    pub(super) async fn made(
        &mut self,
        tool: &str,
        args: Map<String, Value>,
        origin: Origin,
        handles_only: bool,
    ) -> Option<usize> {
        if self.stats.calls as usize >= self.budget {
            return None;
        }
        let before = self.ex.observations.len();
        let _ = self.call(tool, args, Vec::new()).await;
        if self.ex.observations.len() == before {
            return None;
        }
        let o = self.ex.observations.last_mut()?;
        o.origin = Some(origin);
        o.handles_only = handles_only;
        Some(o.index)
    }

    /// Arguments for `tool` with `slot` set to `value`: the required others
    /// schema-valid, a required path given the operator's first path.
    pub(super) fn with_slot(
        &mut self,
        tool: &Tool,
        slot: &str,
        value: &str,
    ) -> Option<Map<String, Value>> {
        let schema = Value::Object((*tool.input_schema).clone());
        let mut args =
            valid_arguments_within(&schema, &mut self.discovery_rng, &self.limits).ok()?;
        let required = super::fit::required_of(&schema);
        args.retain(|k, _| k == slot || required.contains(k));
        // Every other argument takes the operator's best-fitting value (a
        // path they gave, a seed call's own value), where one fits.
        for (k, v) in args.iter_mut() {
            if k == slot || !v.is_string() {
                continue;
            }
            let best = self
                .ex
                .handles
                .iter()
                .filter(|h| h.from.is_none() && !self.ex.discovered_value(&h.value))
                .filter_map(|h| super::fit::affinity(k, h).map(|a| (a, h)))
                .max_by_key(|(a, _)| *a)
                .filter(|(a, _)| *a >= 3);
            if let Some((_, h)) = best {
                *v = Value::String(h.value.clone());
            } else if let Some(named) = self.listed_as(k) {
                *v = Value::String(named);
            }
        }
        args.insert(slot.to_owned(), Value::String(value.to_owned()));
        Some(args)
    }

    /// The value a reading call's answer gave under the parameter's own
    /// name (`Connection: shop` for `connection`), the first where it gave
    /// several: the server named what the parameter takes.
    pub(super) fn listed_as(&self, param: &str) -> Option<String> {
        let words = crate::access::words(param);
        self.ex
            .handles
            .iter()
            .find(|h| {
                h.from.is_some_and(|f| !self.ex.observations[f].writes)
                    && crate::access::words(&h.key) == words
            })
            .map(|h| h.value.clone())
    }

    /// Rounds from `first` until one makes no new call or the calls are
    /// spent.
    pub(super) async fn rounds(&mut self, callable: &[&Tool], first: usize) {
        for round in first..self.config.max_rounds {
            self.stats.rounds += 1;
            let Some(made) = self.round(callable, round).await else {
                break;
            };
            if made + self.follow_up(callable).await == 0 {
                break;
            }
        }
    }

    /// Queue the calls a failed call's error points to (a tool that may
    /// write is never followed: its error is no invitation to call it on
    /// a harvested value).
    fn follow(&mut self, tool: &str, args: &Map<String, Value>, said: &str) {
        // A value the error quotes was refused in its argument.
        for (key, value) in args {
            if let Some(v) = value.as_str().filter(|v| v.chars().count() >= 2)
                && (said.contains(&format!("'{v}'")) || said.contains(&format!("\"{v}\"")))
            {
                self.refused.insert((key.clone(), v.to_owned()));
            }
        }
        let queued = self.followed.get(tool).copied().unwrap_or(0);
        if self.writers.contains(tool) || queued >= FOLLOWS_PER_TOOL {
            return;
        }
        let discovered = self
            .ex
            .handles
            .iter()
            .enumerate()
            .filter(|(i, _)| self.ex.discovered.contains(i));
        let others = self
            .ex
            .handles
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.ex.discovered.contains(i));
        let known: Vec<&Handle> = discovered
            .chain(others)
            .map(|(_, h)| h)
            .filter(|h| !h.value.is_empty() && !h.value.contains('\n'))
            .take(SEEN_SHOWN)
            .collect();
        let max = FOLLOWS_PER_ERROR.min(FOLLOWS_PER_TOOL - queued);
        let follows = follow_error(said, args, &known, max);
        // Which sentence led to which call, a few of them for the ledger:
        // the argument the follow-up changed and its new value.
        for a in &follows {
            if self.follow_reasons.len() >= FOLLOW_REASONS {
                break;
            }
            if let Some((k, v)) = a.iter().find(|(k, v)| args.get(*k) != Some(*v)) {
                self.follow_reasons.push(format!(
                    "`{}` led to `{tool}` with {k} = {}",
                    excerpt(said, 120),
                    excerpt(&v.to_string(), 80)
                ));
            }
        }
        *self.followed.entry(tool.to_owned()).or_default() += follows.len();
        self.follows
            .extend(follows.into_iter().map(|a| (tool.to_owned(), a)));
    }

    /// Make the queued follow-up calls; the number made.
    async fn follow_up(&mut self, callable: &[&Tool]) -> usize {
        let follows = std::mem::take(&mut self.follows);
        if follows.is_empty() {
            return 0;
        }
        let before = self.ex.observations.len();
        let made = self.guided(callable, follows, true).await;
        self.follow_calls.0 += made;
        self.follow_calls.1 += self.ex.observations.len() - before;
        made
    }

    /// What the server has said so far: what its failed calls said and
    /// the texts of its answers (each cut to its first 4,000 characters).
    pub(super) fn said(&self) -> Vec<String> {
        let mut out: Vec<String> = self.errors.values().flatten().cloned().collect();
        for o in &self.ex.observations {
            let text: String = o.text.chars().take(4000).collect();
            if !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }

    /// Keep what a failed call said, for a guide.
    fn failed(&mut self, tool: &str, args: &Map<String, Value>, said: &str) {
        self.last_said = Some(said.to_owned());
        if self.failed_calls.len() < FAILED_CALLS_KEPT {
            self.failed_calls
                .push((tool.to_owned(), args.clone(), excerpt(said, 2000)));
        }
        self.ex.failed_tools.insert(tool.to_owned());
        let kept = self.errors.entry(tool.to_owned()).or_default();
        let said = excerpt(said, SAID_CHARS);
        if kept.len() < ERRORS_KEPT && !kept.iter().any(|k| k.ends_with(&said)) {
            kept.push(format!(
                "called with {} it said: {said}",
                excerpt(&Value::Object(args.clone()).to_string(), SAID_CHARS)
            ));
        }
    }

    /// Successful calls of `tool` so far.
    fn answers(&self, tool: &str) -> usize {
        self.ex
            .observations
            .iter()
            .filter(|o| o.tool == tool)
            .count()
    }

    /// What a guide is shown about `tools`.
    fn asked<'t>(
        &'t self,
        tools: Vec<&'t Tool>,
        again: bool,
        context: Option<&'t str>,
    ) -> Asked<'t> {
        let seen = self
            .ex
            .handles
            .iter()
            .map(|h| h.value.as_str())
            .filter(|v| !v.is_empty() && v.chars().count() <= SEEN_CHARS && !v.contains('\n'))
            .take(SEEN_SHOWN)
            .collect();
        Asked {
            tools,
            seen,
            errors: &self.errors,
            again,
            about: &self.ex.about,
            context,
        }
    }

    /// Make a guide's proposed calls: only on callable tools, a tool that
    /// may write only on the first asking, each argument set fitted to the
    /// schema's names and types; a value the walk harvested is recorded as
    /// that handle, so a task can name it as the walk's own chains do. The
    /// number of new calls made.
    async fn guided(&mut self, callable: &[&Tool], proposed: Vec<Proposed>, again: bool) -> usize {
        let mut made = 0;
        for (name, args) in proposed {
            let Some(tool) = callable.iter().find(|t| t.name == name.as_str()) else {
                continue;
            };
            if self.dead.contains(&name) || (again && self.writers.contains(name.as_str())) {
                continue;
            }
            if self.stats.calls as usize >= self.budget {
                break;
            }
            let schema = Value::Object((*tool.input_schema).clone());
            let Some(args) = fitted(&schema, args) else {
                continue;
            };
            // A value the redaction policy would touch (a token, a key) is
            // never sent: it could reach neither the tape nor a suite whole.
            if crate::secrets::policy().finds(&Value::Object(args.clone()).to_string()) {
                self.stats.sensitive_results += 1;
                continue;
            }
            let key = format!("{name}\u{0}{}", Value::Object(args.clone()));
            if !self.tried.insert(key) {
                continue;
            }
            let inputs = args
                .iter()
                .filter_map(|(k, v)| {
                    let v = v.as_str()?;
                    let h = self.ex.handles.iter().position(|h| h.value == v)?;
                    Some((k.clone(), h))
                })
                .collect();
            made += 1;
            let before = self.ex.observations.len();
            let _ = self.call(&name, args.clone(), inputs).await;
            if self.ex.observations.len() == before
                && let Some(said) = self.last_said.take()
            {
                self.to_repair.push((name, args, said));
            }
        }
        made
    }

    /// The guide's failed calls, repaired by the harness: a word of an
    /// argument that the server named in its error (`products` in `no
    /// such table: products`) is replaced by each value the walk has
    /// harvested since (`orders`), [`REPAIRS_PER_CALL`] tries per call at
    /// most. The number of calls made.
    async fn repair(&mut self, callable: &[&Tool]) -> usize {
        let mut made = 0;
        let failed = std::mem::take(&mut self.to_repair);
        let handles: Vec<String> = self
            .ex
            .handles
            .iter()
            .map(|h| h.value.clone())
            .filter(|v| identifier(v))
            .take(SEEN_SHOWN)
            .collect();
        for (name, args, said) in failed {
            let mut proposed = Vec::new();
            for (k, v) in &args {
                let Some(v) = v.as_str() else { continue };
                for word in crate::access::words(v) {
                    if word.chars().count() < 3 || !contains_token(&said, &word) {
                        continue;
                    }
                    for h in &handles {
                        if proposed.len() >= REPAIRS_PER_CALL {
                            break;
                        }
                        if let Some(fixed) = replace_token(v, &word, h) {
                            let mut a = args.clone();
                            a.insert(k.clone(), Value::String(fixed));
                            proposed.push((name.clone(), a));
                        }
                    }
                }
            }
            // As on the second asking: a tool that may write is never
            // called on a harvested value.
            made += self.guided(callable, proposed, true).await;
        }
        // Repairs are not repaired again.
        self.to_repair.clear();
        made
    }

    /// One round over the callable tools: the new calls it made, or `None`
    /// when the calls are spent.
    async fn round(&mut self, callable: &[&Tool], round: usize) -> Option<usize> {
        let mut new_calls = 0;
        // In round 0, the tools that add state (where generation may
        // write) go first, then the ones that need no argument: what they
        // list (the languages, the projects) is what the others are then
        // given.
        let mut ordered: Vec<&Tool> = callable.to_vec();
        if round == 0 {
            ordered.sort_by_key(|t| {
                (
                    !self.writers.contains(t.name.as_ref()),
                    !super::fit::required_of(&Value::Object((*t.input_schema).clone())).is_empty(),
                )
            });
        }
        for tool in ordered {
            let name = tool.name.to_string();
            if self.dead.contains(&name) || self.covered.contains(&name) {
                continue;
            }
            // A tool that may write is called only to add fresh state
            // (round 0's schema-valid arguments), never on a handle: that
            // would change what is already there (check it out, append to
            // it) under the tasks' feet.
            if round > 0 && self.writers.contains(name.as_str()) {
                continue;
            }
            let Some(plans) = self.plans(tool, &name, round) else {
                continue;
            };
            for (args, inputs) in plans {
                if self.stats.calls as usize >= self.budget {
                    return None;
                }
                let key = format!("{name}\u{0}{}", Value::Object(args.clone()));
                if !self.tried.insert(key) {
                    continue;
                }
                new_calls += 1;
                if self.call(&name, args, inputs).await.is_break() {
                    break;
                }
            }
        }
        Some(new_calls)
    }

    /// Round 0's schema-valid sets, each string argument the server offers
    /// values for (a value a tool listed as what it lists: `list_languages`
    /// for `language`) given those values in turn instead of an invented
    /// word.
    fn offered_values(&self, sets: Vec<Map<String, Value>>) -> Vec<Plan> {
        sets.into_iter()
            .enumerate()
            .map(|(n, mut args)| {
                let mut inputs = Vec::new();
                let keys: Vec<String> = args.keys().cloned().collect();
                for key in keys {
                    if !args[&key].is_string() {
                        continue;
                    }
                    let offered: Vec<usize> = self
                        .ex
                        .handles
                        .iter()
                        .enumerate()
                        .filter(|(_, h)| {
                            h.noun.is_some() && super::fit::affinity(&key, h) == Some(4)
                        })
                        .map(|(i, _)| i)
                        .collect();
                    if let Some(&h) = offered.get(n % offered.len().max(1)) {
                        args.insert(key.clone(), Value::String(self.ex.handles[h].value.clone()));
                        inputs.push((key, h));
                    }
                }
                (args, inputs)
            })
            .collect()
    }

    /// This round's argument sets for a tool: schema-valid ones in round 0,
    /// harvested handles after; `None` (the tool is dropped) when no valid
    /// set fits the caps.
    fn plans(&mut self, tool: &Tool, name: &str, round: usize) -> Option<Vec<Plan>> {
        let schema = Value::Object((*tool.input_schema).clone());
        let samples = self.config.samples_per_tool;
        let planned = if round == 0 {
            first_round_args(&schema, &mut self.rng, samples, &self.limits)
                .map(|sets| self.offered_values(sets))
        } else {
            let worked: HashSet<(String, String)> = self
                .ex
                .observations
                .iter()
                .flat_map(|o| &o.inputs)
                .map(|(slot, h)| (slot.clone(), self.ex.handles[*h].value.clone()))
                .collect();
            let fits = Fits {
                handles: &self.ex.handles,
                worked: &worked,
                refused: &self.refused,
            };
            handle_plans(
                &schema,
                &fits,
                &mut self.rng,
                samples,
                &self.tried,
                name,
                &self.limits,
            )
        };
        drop_unsatisfiable(planned, name, self.stats, &mut self.dead)
    }

    /// Call a tool with one argument set and keep the call when it
    /// succeeded (not an error, not empty); `Break` when the tool is dead.
    pub(super) async fn call(
        &mut self,
        name: &str,
        args: Map<String, Value>,
        inputs: Vec<(String, usize)>,
    ) -> ControlFlow<()> {
        // A statement that changes data (`DELETE FROM ...` for a tool that
        // runs any SQL) is never sent by the walk, whatever the mode:
        // generation writes only by the tools that add.
        if crate::access::writes_by_arguments(&Value::Object(args.clone())) {
            self.stats.writing_arguments += 1;
            return ControlFlow::Continue(());
        }
        // Nor is a path that climbs or names the machine's own folders,
        // whoever proposed it (the walk, a judge): it is no data the
        // operator gave.
        if args.iter().any(|(k, v)| {
            super::fit::takes_path(k)
                && (v.as_str().is_some_and(super::fit::outside_any_data)
                    || v.as_array().is_some_and(|a| {
                        a.iter()
                            .any(|x| x.as_str().is_some_and(super::fit::outside_any_data))
                    }))
        }) {
            return ControlFlow::Continue(());
        }
        self.stats.calls += 1;
        let writes = self.writers.contains(name);
        if writes {
            self.stats.state_writes += 1;
        }
        let timeout = self.config.call_timeout;
        let taken = call_counted(self.session, name, &args, timeout, self.stats).await;
        if let Some(w) = self.witness.as_mut() {
            w.after(self.session, name, self.stats).await;
        }
        let text = match taken {
            Taken::Text(t) => t,
            Taken::Skip(said) => {
                if let Some(said) = said.filter(|s| !s.trim().is_empty()) {
                    self.failed(name, &args, &said);
                    self.follow(name, &args, &said);
                }
                return ControlFlow::Continue(());
            }
            Taken::Dead => {
                self.dead.insert(name.to_owned());
                return ControlFlow::Break(());
            }
        };
        if reads_as_error(&text) {
            self.stats.error_results += 1;
            self.failed(name, &args, &text);
            self.follow(name, &args, &text);
            return ControlFlow::Continue(());
        }
        if reads_as_empty(&text) {
            self.stats.empty_results += 1;
            return ControlFlow::Continue(());
        }
        // A call made with a value a seed call or a discovery gave is theirs.
        let origin = inputs.iter().fold(None, |origin, (_, h)| {
            let of_handle = if self.ex.discovered.contains(h) {
                Some(Origin::Discovered)
            } else {
                self.ex.handles[*h]
                    .from
                    .and_then(|f| self.ex.observations[f].origin)
            };
            Origin::stronger(origin, of_handle)
        });
        self.ex.observe(Observation {
            index: self.ex.observations.len(),
            tool: name.to_owned(),
            json: super::text::structured(&text).map(without_in_band_errors),
            args,
            text,
            inputs,
            writes,
            origin,
            handles_only: false,
            record: None,
            broad: false,
        });
        ControlFlow::Continue(())
    }
}

/// Follow-up calls one error may ask for, and one tool may get in a walk.
const FOLLOWS_PER_ERROR: usize = 3;
const FOLLOWS_PER_TOOL: usize = 6;

/// Repairs tried for one failed call of a guide's, at most.
const REPAIRS_PER_CALL: usize = 4;

/// Distinct failures of one tool kept for a guide.
const ERRORS_KEPT: usize = 2;
/// Failed calls kept with what they said.
const FAILED_CALLS_KEPT: usize = 300;
/// Characters of a failed call's arguments, and of what it said, shown.
const SAID_CHARS: usize = 200;
