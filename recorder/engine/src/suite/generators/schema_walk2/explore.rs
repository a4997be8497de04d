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
use super::fit::{
    Fits, Plan, documented_examples, first_round_args, fitted, follow_error, handle_plans,
    identifier, replace_token,
};
use super::text::{Handle, harvest};
use super::witness::Witnesses;
use crate::mcp::connect::Session;
use crate::suite::generators::seam::GenerationInput;
use crate::suite::generators::walk::{Taken, WalkStats, call_counted, drop_unsatisfiable};
use crate::suite::predicate::contains_token;
use crate::suite::reading::{reads_as_empty, reads_as_error, without_in_band_errors};
use crate::suite::schema_args::Limits;
use crate::suite::task::Origin;

/// One successful call.
#[derive(Debug, Clone)]
pub struct Observation {
    pub index: usize,
    pub tool: String,
    pub args: Map<String, Value>,
    /// What an agent reads from the result.
    pub text: String,
    /// The structured content, else the first JSON value of the text.
    pub json: Option<Value>,
    /// Arguments filled with a harvested handle: (argument, handle index).
    pub inputs: Vec<(String, usize)>,
    /// The tool is not declared read-only: its calls may change state.
    pub writes: bool,
    /// Where the call came from, when not the walk's own guess: the
    /// operator's seed calls, a discovery move, or a value either gave.
    pub origin: Option<Origin>,
    /// Its result gives handles but no task (a catalogue, a broad search:
    /// its own request is no goal a user states).
    pub handles_only: bool,
    /// What its records are, where a discovery move knows (a table's
    /// name): a task names the record by it.
    pub record: Option<String>,
    /// A broad discovery call (a search given `.` or `%`, a table's first
    /// rows): it returns everything, so a task from it names a record of its result, never
    /// its arguments ("for query `.`" is no goal a user states).
    pub broad: bool,
}

impl Observation {
    /// Is `p` another call of this tool that a task must be told apart
    /// from? A discovery call (a search for everything, a catalogue)
    /// returns every value and tells nothing apart: its answers never make
    /// another call's answer a constant.
    pub fn told_apart_from(&self, p: &Observation) -> bool {
        p.tool == self.tool && p.index != self.index && !p.handles_only && !p.broad
    }
}

/// Everything the exploration found.
#[derive(Debug, Default)]
pub struct Exploration {
    pub observations: Vec<Observation>,
    pub handles: Vec<Handle>,
    /// Words the state witnesses said only after the walk began: state
    /// the walk created ([`super::witness`]).
    pub created: BTreeSet<String>,
    /// What the server says about itself and what discovery found (its
    /// tables and columns), as a judge is shown it.
    pub about: String,
    /// Handles only a discovery move found (a resource's values, a table,
    /// a `file://` URI): a call made with one is discovered.
    pub discovered: BTreeSet<usize>,
    /// Tools some call of which failed: what they answer depends on what
    /// they are given.
    pub failed_tools: BTreeSet<String>,
}

/// The key of a handle that is one of the operator's files.
pub(super) const OPERATOR_FILE: &str = "file";

impl Exploration {
    /// Must a task from `o` be told apart from `p`'s answer? As
    /// [`Observation::told_apart_from`], except that the same answer to a
    /// call given some of the same values, by a tool that fails on other
    /// values, is that call's answer again: the values they differ in were
    /// not read (excel-mcp-polars answers a CSV file whatever `sheet_name`
    /// says), and its values are no constant of the tool.
    pub(super) fn tells_apart(&self, o: &Observation, p: &Observation) -> bool {
        let same_answer_again = self.failed_tools.contains(&o.tool)
            && p.text == o.text
            && o.args.iter().any(|(k, v)| p.args.get(k) == Some(v));
        o.told_apart_from(p) && !same_answer_again
    }

    /// The absolute paths the operator gave the server (on its command
    /// line).
    pub(super) fn operator_roots(&self) -> Vec<String> {
        self.handles
            .iter()
            .filter(|h| h.from.is_none() && h.key == "path" && h.value.starts_with('/'))
            .map(|h| h.value.clone())
            .collect()
    }

    /// The operator's files by the names they were offered under.
    pub(super) fn operator_files(&self) -> Vec<String> {
        self.handles
            .iter()
            .filter(|h| h.from.is_none() && h.key == OPERATOR_FILE)
            .map(|h| h.value.clone())
            .collect()
    }

    /// Is `value` a handle only discovery found (not the operator's own)?
    pub(super) fn discovered_value(&self, value: &str) -> bool {
        self.handles
            .iter()
            .position(|h| h.value == value)
            .is_some_and(|i| self.discovered.contains(&i))
    }

    /// The handle index for `value`, adding it when new.
    pub(super) fn add_handle(&mut self, handle: Handle) -> Option<usize> {
        if self.handles.len() >= MAX_HANDLES {
            return None;
        }
        if let Some(i) = self.handles.iter().position(|h| h.value == handle.value) {
            return Some(i);
        }
        self.handles.push(handle);
        Some(self.handles.len() - 1)
    }
}

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

/// Values shown to a guide at most, and the length of each.
const SEEN_SHOWN: usize = 40;
const SEEN_CHARS: usize = 80;

/// Handles kept at most: the exploration stays bounded whatever a server
/// lists.
const MAX_HANDLES: usize = 2_000;

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
            last_said: None,
            to_repair: Vec::new(),
            follows: Vec::new(),
            followed: BTreeMap::new(),
            refused: HashSet::new(),
            follow_calls: (0, 0),
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
        self,
        callable: &[&Tool],
        mut guide: Option<&mut dyn Guide>,
        context: Option<&str>,
    ) -> Exploration {
        let mut explorer = self;
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
                found: format!("{made} call(s) made, {answered} answered"),
                worked: answered > 0,
            });
        }
        if let Some(mut w) = explorer.witness.take() {
            w.close(explorer.session, explorer.stats).await;
            explorer.ex.created = w.created;
        }
        explorer.ex
    }
}

impl Exploration {
    /// An exploration holding its first handles: the operator's values,
    /// then the examples each tool's schema documents.
    fn seeded(seeds: &[String], files: &[String], callable: &[&Tool]) -> Exploration {
        let mut ex = Exploration::default();
        // The recorder's working folder, which a stdio server shares, is a
        // place to hand a parameter that takes a folder (`project_path`,
        // `repo`), never a file's path; the paths on the command line are
        // the operator's paths.
        let working = std::env::current_dir()
            .ok()
            .map(|d| d.to_string_lossy().into_owned());
        for s in seeds {
            let key = if working.as_deref() == Some(s.as_str()) {
                super::text::WORKING_FOLDER
            } else {
                "path"
            };
            ex.add_handle(Handle::unlinked(s.as_str(), key));
        }
        // The files in the server's reach, as the operator names them.
        for f in files {
            ex.add_handle(Handle::unlinked(f.as_str(), OPERATOR_FILE));
        }
        // The examples a tool's own schema documents (`e.g. 'Europe/London'`)
        // are values the server says it takes.
        for tool in callable {
            for (key, p) in tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let description = p.get("description").and_then(Value::as_str).unwrap_or("");
                for example in documented_examples(description) {
                    ex.add_handle(Handle::unlinked(example, key.as_str()));
                }
            }
        }
        ex
    }

    /// Keep a successful call with the handles its result gives; a bare
    /// entry name listed for a path is also that path joined with the name.
    fn observe(&mut self, o: Observation) {
        let path_arg = o.args.iter().find_map(|(k, v)| {
            super::fit::takes_path(k)
                .then(|| v.as_str().map(str::to_owned))
                .flatten()
        });
        let parent = path_arg
            .as_ref()
            .and_then(|p| self.handles.iter().position(|h| &h.value == p));
        let policy = crate::secrets::policy();
        for mut h in harvest(&o.text, o.json.as_ref(), o.index) {
            // A value that holds a secret is never sent back (a path the
            // server resolved under the folder given with `--env`): no
            // task could name the call it would be in.
            if policy.finds(&h.value) {
                continue;
            }
            // A file's name (`boardgames.db`) holds no entries to join.
            if let Some(p) = &path_arg
                && !h.value.contains('/')
                && h.key_is_entry()
                && !super::text::file_name_like(p)
            {
                let joined = format!("{}/{}", p.trim_end_matches('/'), h.value);
                self.add_handle(Handle {
                    value: joined,
                    from: Some(o.index),
                    key: "path".to_owned(),
                    alias: Some(("name".to_owned(), h.value.clone())),
                    parent,
                });
            }
            h.from = Some(o.index);
            // A file a result names by its relative path is also its bare
            // name, for a parameter that takes a file's name apart from its
            // folder (`filename` beside `subfolder`).
            let bare = (!h.value.starts_with('/') && super::text::file_name_like(&h.value))
                .then(|| h.value.rsplit_once('/').map(|(_, name)| name.to_owned()))
                .flatten();
            let path = h.value.clone();
            self.add_handle(h);
            if let Some(name) = bare {
                self.add_handle(Handle {
                    value: name,
                    from: Some(o.index),
                    key: "filename".to_owned(),
                    alias: Some(("path".to_owned(), path)),
                    parent: None,
                });
            }
        }
        // A relative path a listing gave is also tried under each folder
        // the operator gave the server.
        let roots = self.operator_roots();
        if !roots.is_empty() {
            for (joined, relative) in super::fit::rooted(o.index, &self.handles, &roots) {
                if let Some(i) = self.add_handle(Handle {
                    value: joined,
                    from: Some(o.index),
                    key: "path".to_owned(),
                    alias: Some(("path".to_owned(), relative)),
                    parent: None,
                }) {
                    self.discovered.insert(i);
                }
            }
        }
        self.observations.push(o);
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
    /// The state witnesses of a walk that only reads.
    witness: Option<Witnesses>,
    pub(super) stats: &'a mut WalkStats,
}

impl Explorer<'_> {
    /// Rounds from `first` until one makes no new call or the calls are
    /// spent.
    async fn rounds(&mut self, callable: &[&Tool], first: usize) {
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

    /// Keep what a failed call said, for a guide.
    fn failed(&mut self, tool: &str, args: &Map<String, Value>, said: &str) {
        self.last_said = Some(said.to_owned());
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
        for tool in callable {
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

    /// This round's argument sets for a tool: schema-valid ones in round 0,
    /// harvested handles after; `None` (the tool is dropped) when no valid
    /// set fits the caps.
    fn plans(&mut self, tool: &Tool, name: &str, round: usize) -> Option<Vec<Plan>> {
        let schema = Value::Object((*tool.input_schema).clone());
        let samples = self.config.samples_per_tool;
        let planned = if round == 0 {
            first_round_args(&schema, &mut self.rng, samples, &self.limits)
                .map(|sets| sets.into_iter().map(|a| (a, Vec::new())).collect())
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
/// Characters of a failed call's arguments, and of what it said, shown.
const SAID_CHARS: usize = 200;
