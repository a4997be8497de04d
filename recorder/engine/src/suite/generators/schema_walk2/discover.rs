//! Discovery: what a person does before guessing. Each move is generic
//! (it reads the kind of a tool or of a server, never a server's name) and
//! is written in the ledger with what it tried and what it found:
//!
//! * **seed-calls**: the operator's calls ([`SeedCall`]), made first; the
//!   walk starts from their results.
//! * **resources**, **prompts**, **instructions**: what the server says
//!   about itself (`resources/list` and its templates, `resources/read` of
//!   what is listed, `prompts/list`, the handshake's instructions). Their
//!   names and values become handles, and the judge is shown them. A
//!   resource read is a read: on the wire tape, and a resource whose text
//!   the redaction policy would touch gives nothing.
//! * **catalogue**: a tool that takes a query language (SQL, by its
//!   parameter's name, the tool's words or its description) is asked for
//!   its tables in each dialect that exists until one answers, then for
//!   each table's columns and first rows; the walk and the judge then use
//!   real table and column names.
//! * **broad-search**: a search-like parameter (query, pattern, regex,
//!   filter, q, …) is first given values that match much (`.`, `*`, the
//!   empty string, a common letter, `%`) before any invented word.
//! * **operator-files**: a path parameter is offered the files in the
//!   server's reach, named as the operator would: those in its working
//!   directory by their relative names, those in the folders on its
//!   command line by their paths (names only, bounded; see
//!   `Target::operator_files`).
//! * **file-uri**, **root-paths**: a URI parameter gets `file://` URIs of
//!   the paths the operator gave and of the files under them; a relative
//!   path a listing gave is also tried under each root on the server's
//!   command line.

use fitness_shared::record::{DiscoveryMove, SeedCall};
use fitness_shared::tape::timeline::excerpt;
use rmcp::model::Tool;
use serde_json::Value;

use super::explore::Explorer;
use super::kinds::{broad_values, first_enum, search_slot, sql_slot, string_params, wants_uri};
use super::text::{Handle, harvest};
use crate::mcp::connect::Session;
use crate::suite::predicate::first_json_value;
use crate::suite::task::Origin;

/// Resources read at most, and the characters of each kept.
const RESOURCES_READ: usize = 8;
const RESOURCE_CHARS: usize = 64 * 1024;
/// The operator's files a broad search is repeated in, at most.
const BROAD_FILES: usize = 8;
/// Characters of the server's own description shown to a judge.
pub(super) const ABOUT_CHARS: usize = 3_000;

/// What the server said about itself: the text a judge is shown, and the
/// handles its names and values give.
#[derive(Debug, Default)]
pub(super) struct About {
    pub text: String,
    pub handles: Vec<Handle>,
}

impl About {
    fn line(&mut self, line: &str) {
        if self.text.len() < ABOUT_CHARS {
            self.text.push_str(line);
            self.text.push('\n');
        }
    }

    fn value(&mut self, value: &str, key: &str) {
        let n = value.chars().count();
        if (2..=200).contains(&n) && !value.contains('\n') && self.handles.len() < 500 {
            self.handles.push(Handle::unlinked(value, key));
        }
    }

    /// The handles a text names (resource contents, instructions); none
    /// from a text the redaction policy would touch.
    fn harvest(&mut self, text: &str) {
        let json = first_json_value(text);
        for mut h in harvest(text, json.as_ref(), 0) {
            h.from = None;
            if self.handles.len() < 500 {
                self.handles.push(h);
            }
        }
    }
}

/// Read what the server says about itself: its instructions, resources
/// (listed, templates, the first [`RESOURCES_READ`] read) and prompts, each
/// only where its capabilities declare it. The moves made are pushed.
pub(super) async fn read_about(
    session: &Session,
    instructions: Option<&str>,
    moves: &mut Vec<DiscoveryMove>,
    sensitive: &mut u64,
) -> About {
    let mut about = About::default();
    let policy = crate::secrets::policy();
    if let Some(i) = instructions.filter(|i| !i.trim().is_empty()) {
        about.line(&format!("Instructions: {}", excerpt(i, 600)));
        if !policy.finds(i) {
            let before = about.handles.len();
            for example in super::fit::documented_examples(i) {
                about.value(&example, "example");
            }
            moves.push(DiscoveryMove {
                name: "instructions".into(),
                tool: None,
                tried: "read the handshake's instructions".into(),
                found: format!(
                    "{} characters, {} quoted values",
                    i.chars().count(),
                    about.handles.len() - before
                ),
                worked: true,
            });
        }
    }
    let caps = session.facts().map(|f| f.capabilities).unwrap_or_default();
    if caps.get("resources").is_some_and(|r| !r.is_null()) {
        resources(session, &mut about, moves, sensitive).await;
    }
    if caps.get("prompts").is_some_and(|p| !p.is_null()) {
        match session.list_prompts().await {
            Ok(prompts) => {
                let mut names = Vec::new();
                for p in prompts.iter().take(40) {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                    let args: Vec<&str> = p
                        .get("arguments")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|a| a.get("name").and_then(Value::as_str))
                        .collect();
                    let description = p.get("description").and_then(Value::as_str).unwrap_or("");
                    about.line(&format!(
                        "Prompt {name}({}): {}",
                        args.join(", "),
                        excerpt(description, 160)
                    ));
                    names.push(format!("`{name}`"));
                }
                moves.push(DiscoveryMove {
                    name: "prompts".into(),
                    tool: None,
                    tried: "prompts/list".into(),
                    found: if names.is_empty() {
                        "none listed".into()
                    } else {
                        format!(
                            "{} listed ({}), shown to a judge",
                            names.len(),
                            names.join(", ")
                        )
                    },
                    worked: !names.is_empty(),
                });
            }
            Err(e) => moves.push(failed_move("prompts", "prompts/list", &e)),
        }
    }
    about
}

fn failed_move(name: &str, tried: &str, e: &anyhow::Error) -> DiscoveryMove {
    DiscoveryMove {
        name: name.into(),
        tool: None,
        tried: tried.into(),
        found: format!("failed: {}", excerpt(&format!("{e:#}"), 160)),
        worked: false,
    }
}

/// `resources/list`, its templates, and `resources/read` of the first text
/// resources.
async fn resources(
    session: &Session,
    about: &mut About,
    moves: &mut Vec<DiscoveryMove>,
    sensitive: &mut u64,
) {
    let policy = crate::secrets::policy();
    let listed = match session.list_resources().await {
        Ok(l) => l,
        Err(e) => {
            moves.push(failed_move("resources", "resources/list", &e));
            return;
        }
    };
    let templates = session.list_resource_templates().await.unwrap_or_default();
    for t in templates.iter().take(20) {
        let template = t.get("uriTemplate").and_then(Value::as_str).unwrap_or("");
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        about.line(&format!("Resource template {name}: {template}"));
    }
    let mut read = 0;
    let mut values_before = about.handles.len();
    for r in listed.iter().take(200) {
        let uri = r.get("uri").and_then(Value::as_str).unwrap_or("");
        let name = r.get("name").and_then(Value::as_str).unwrap_or("");
        about.value(uri, "uri");
        about.value(name, "name");
        let mime = r.get("mimeType").and_then(Value::as_str).unwrap_or("");
        let textual = mime.is_empty()
            || mime.starts_with("text/")
            || mime.contains("json")
            || mime.contains("xml")
            || mime.contains("yaml")
            || mime.contains("csv");
        if read >= RESOURCES_READ || !textual || uri.is_empty() {
            continue;
        }
        let Ok(result) = session.read_resource(uri).await else {
            continue;
        };
        read += 1;
        let text: String = result
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
            .chars()
            .take(RESOURCE_CHARS)
            .collect();
        if policy.finds(&text) {
            *sensitive += 1;
            about.line(&format!("Resource {name} ({uri})"));
            continue;
        }
        about.line(&format!("Resource {name} ({uri}): {}", excerpt(&text, 300)));
        about.harvest(&text);
    }
    if listed.is_empty() && templates.is_empty() {
        values_before = about.handles.len();
    }
    moves.push(DiscoveryMove {
        name: "resources".into(),
        tool: None,
        tried: format!(
            "resources/list and resources/templates/list, then resources/read of the first {RESOURCES_READ} text resources"
        ),
        found: if listed.is_empty() && templates.is_empty() {
            "none listed".into()
        } else {
            format!(
                "{} listed, {} templates, {read} read, {} values taken",
                listed.len(),
                templates.len(),
                about.handles.len() - values_before
            )
        },
        worked: !listed.is_empty() || !templates.is_empty(),
    });
}

impl Explorer<'_> {
    /// Every discovery move, before the walk's first round: the operator's
    /// seed calls, what the server says about itself, a catalogue of each
    /// query language, broad values for each search, `file://` URIs of
    /// the operator's paths.
    pub(super) async fn discover(
        &mut self,
        callable: &[&Tool],
        seed_calls: &[SeedCall],
        instructions: Option<&str>,
    ) {
        self.seed_calls(callable, seed_calls).await;
        let mut moves = Vec::new();
        let about = read_about(
            self.session,
            instructions,
            &mut moves,
            &mut self.stats.sensitive_results,
        )
        .await;
        self.stats.discovery.extend(moves);
        self.ex.about.push_str(&about.text);
        for h in about.handles {
            if let Some(i) = self.ex.add_handle(h) {
                self.ex.discovered.insert(i);
            }
        }
        self.operator_roots(callable);
        self.operator_files(callable);
        // `file://` URIs, where a tool takes a URI.
        if callable.iter().any(|t| {
            string_params(t)
                .iter()
                .any(|(k, _)| wants_uri(&crate::access::words(k)))
        }) {
            self.file_uris();
        }
        // The calls the descriptions show, before any guess.
        self.examples(callable).await;
        for tool in callable {
            if self.writers.contains(tool.name.as_ref()) {
                continue;
            }
            if let Some(slot) = sql_slot(tool) {
                self.catalogue(tool, &slot).await;
            } else if let Some(slot) = search_slot(tool) {
                self.broad_search(tool, &slot).await;
            }
        }
    }

    /// The operator's calls, made first; one not callable is said why.
    async fn seed_calls(&mut self, callable: &[&Tool], seeds: &[SeedCall]) {
        if seeds.is_empty() {
            return;
        }
        self.stats.seed_calls = seeds.len() as u64;
        // A seed call's own values are the operator's: later calls may take
        // them (a database's path another tool needs too).
        for s in seeds {
            for (k, v) in &s.arguments {
                if let Some(v) = v.as_str() {
                    self.ex.add_handle(Handle::unlinked(v, k.as_str()));
                }
            }
        }
        let mut answered = 0;
        let mut said = Vec::new();
        for s in seeds {
            if !callable.iter().any(|t| t.name == s.tool.as_str()) {
                let why = self
                    .stats
                    .not_called
                    .iter()
                    .find(|n| n["tool"] == s.tool.as_str())
                    .and_then(|n| n["why"].as_str())
                    .unwrap_or("the server lists no such tool")
                    .to_owned();
                said.push(format!("`{}` not called: {why}", s.tool));
                continue;
            }
            if self.writers.contains(s.tool.as_str()) {
                said.push(format!(
                    "`{}` not called: it may write, and generation does not",
                    s.tool
                ));
                continue;
            }
            let key = format!("{}\u{0}{}", s.tool, Value::Object(s.arguments.clone()));
            self.tried.insert(key);
            match self
                .made(&s.tool, s.arguments.clone(), Origin::Seeded, false)
                .await
            {
                Some(_) => answered += 1,
                None => said.push(format!(
                    "`{}` with {} gave nothing to read{}",
                    s.tool,
                    excerpt(&Value::Object(s.arguments.clone()).to_string(), 120),
                    self.last_said
                        .as_deref()
                        .map(|w| format!(": {}", excerpt(w, 120)))
                        .unwrap_or_default()
                )),
            }
        }
        self.stats.discovery.push(DiscoveryMove {
            name: "seed-calls".into(),
            tool: None,
            tried: format!("the operator's {} seed calls", seeds.len()),
            found: if said.is_empty() {
                format!("{answered} answered")
            } else {
                format!("{answered} answered; {}", said.join("; "))
            },
            worked: answered > 0,
        });
    }

    /// Give a search values that match much, before any invented word;
    /// the first that answers is kept.
    async fn broad_search(&mut self, tool: &Tool, slot: &str) {
        let name = tool.name.to_string();
        let mut tried = Vec::new();
        let mut answered = None;
        // Values that answered but named nothing (`{"results": []}`).
        let mut named_nothing = Vec::new();
        for v in broad_values(tool, slot) {
            let Some(args) = self.with_slot(tool, slot, v) else {
                break;
            };
            let key = format!("{name}\u{0}{}", Value::Object(args.clone()));
            if !self.tried.insert(key) {
                continue;
            }
            tried.push(format!("`{v}`"));
            // An answer that names nothing (`{"total": 0, "results": []}`)
            // is no match: the next value is tried.
            if let Some(i) = self.made(&name, args, Origin::Discovered, true).await {
                if self.ex.handles.iter().any(|h| h.from == Some(i)) {
                    answered = Some((v, i));
                    break;
                }
                named_nothing.push(format!("`{v}`"));
            }
        }
        // The value that answered, with each value of the tool's first
        // enumerated argument (a search over `table`, `column`, `index`…),
        // and in each of the operator's files where the tool also takes a
        // path (a grep over `paths`): a person searches every file they
        // have, not the first.
        let mut more = 0;
        if let Some((v, _)) = answered {
            let mut variations = first_enum(tool, slot);
            if let Some(key) = string_params(tool)
                .into_iter()
                .map(|(k, _)| k)
                .find(|k| k != slot && super::fit::takes_path(k))
            {
                variations.extend(
                    self.ex
                        .operator_files()
                        .into_iter()
                        .take(BROAD_FILES)
                        .map(|f| (key.clone(), Value::String(f))),
                );
            }
            for (key, value) in variations {
                let Some(mut args) = self.with_slot(tool, slot, v) else {
                    break;
                };
                args.insert(key, value);
                let key = format!("{name}\u{0}{}", Value::Object(args.clone()));
                if !self.tried.insert(key) {
                    continue;
                }
                if self
                    .made(&name, args, Origin::Discovered, true)
                    .await
                    .is_some()
                {
                    more += 1;
                }
            }
        }
        let found = match answered {
            Some((v, i)) if more > 0 => {
                let handles = self.ex.handles.iter().filter(|h| h.from >= Some(i)).count();
                format!(
                    "`{v}` answered, and with {more} values of its enumerated argument or the operator's files: {handles} values taken"
                )
            }
            Some((v, i)) => {
                let handles = self.ex.handles.iter().filter(|h| h.from == Some(i)).count();
                format!("`{v}` answered: {handles} values taken")
            }
            None if named_nothing.is_empty() => "none answered".into(),
            None => format!(
                "{} answered but named nothing a call could take",
                named_nothing.join(", ")
            ),
        };
        self.stats.discovery.push(DiscoveryMove {
            name: "broad-search".into(),
            tool: Some(name),
            tried: format!("`{slot}` given {}", tried.join(", ")),
            found,
            worked: answered.is_some(),
        });
    }

    /// The tools that only read and have a string parameter `takes` says
    /// yes to, named as the ledger names them.
    fn tools_taking(&self, callable: &[&Tool], takes: fn(&str) -> bool) -> Vec<String> {
        callable
            .iter()
            .filter(|t| !self.writers.contains(t.name.as_ref()))
            .filter(|t| string_params(t).iter().any(|(k, _)| takes(k)))
            .map(|t| format!("`{}`", t.name))
            .collect()
    }

    /// The folders the operator handed the server (its working folder, the
    /// paths on its command line), offered first to the tools that take a
    /// place: said in the ledger where a tool takes one.
    fn operator_roots(&mut self, callable: &[&Tool]) {
        let taking = self.tools_taking(callable, super::fit::takes_folder);
        if taking.is_empty() {
            return;
        }
        let roots = self.ex.operator_roots();
        self.stats.discovery.push(DiscoveryMove {
            name: "operator-roots".into(),
            tool: None,
            tried: format!(
                "the server's working folder and the folders on its command line, for the {} tools that take a place ({})",
                taking.len(),
                taking.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
            found: match roots.len() {
                0 => "no folder".into(),
                _ => format!(
                    "{} ({})",
                    roots.len(),
                    roots
                        .iter()
                        .take(3)
                        .map(|r| format!("`{r}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            worked: !roots.is_empty(),
        });
    }

    /// The files in the server's reach (its working directory, the folders
    /// on its command line), offered to the tools that take a path: said
    /// in the ledger where a tool takes one.
    fn operator_files(&mut self, callable: &[&Tool]) {
        let taking = self.tools_taking(callable, super::fit::takes_path);
        if taking.is_empty() {
            return;
        }
        let files = self.ex.operator_files();
        let named: Vec<String> = files.iter().take(3).map(|f| format!("`{f}`")).collect();
        self.stats.discovery.push(DiscoveryMove {
            name: "operator-files".into(),
            tool: None,
            tried: format!(
                "the files in the server's working directory and in the folders on its command line, for the {} tools that take a path ({})",
                taking.len(),
                taking.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
            found: match files.len() {
                0 => "no file".into(),
                n if n > named.len() => format!("{n} files ({}, …)", named.join(", ")),
                n => format!("{n} files ({})", named.join(", ")),
            },
            worked: !files.is_empty(),
        });
    }

    /// `file://` URIs of the operator's absolute paths and of the files
    /// under them, for the tools that take a URI.
    fn file_uris(&mut self) {
        let mut roots = self.ex.operator_roots();
        if roots.is_empty() {
            return;
        }
        roots.extend(
            self.ex
                .operator_files()
                .into_iter()
                .filter(|f| f.starts_with('/')),
        );
        let mut made = 0;
        for r in &roots {
            if let Some(i) = self
                .ex
                .add_handle(Handle::unlinked(format!("file://{r}"), "uri"))
            {
                self.ex.discovered.insert(i);
                made += 1;
            }
        }
        self.stats.discovery.push(DiscoveryMove {
            name: "file-uri".into(),
            tool: None,
            tried: format!(
                "`file://` URIs of the {} paths the operator gave",
                roots.len()
            ),
            found: format!("{made} URIs for parameters that take one"),
            worked: made > 0,
        });
    }
}
