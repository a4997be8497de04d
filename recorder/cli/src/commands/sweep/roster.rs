//! The roster a sweep reads (`ROSTER.toml`), and the slots it expands to.
//!
//! A roster names targets (a stdio command or a URL), the runner models each
//! target runs under, how many numbered reruns each (target, runner) pair
//! gets, and the run flags. Credentials never appear in a roster: headers
//! and environment variables are given as the NAME of an environment
//! variable of the sweep's own process, read only when the run starts.
//!
//! A slot is one run to make: target x runner x rerun, in roster order. Its
//! key is the canonical JSON of everything that defines it, so editing a
//! target's flags makes new slots and leaves the old runs as they were; its
//! tag (the key's hash) names its run directories without coordination.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, bail};
use fitness_shared::integrity;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The roster format this reader reads.
pub const ROSTER_FORMAT: u64 = 1;

/// A roster as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roster {
    /// The roster format (1); optional.
    #[serde(default)]
    pub format: Option<u64>,
    /// Runner models every target runs under, unless it names its own.
    #[serde(default)]
    pub runners: Vec<String>,
    /// The judge (judge-synth/1 writes the tasks with it).
    #[serde(default)]
    pub judge: Option<String>,
    /// Numbered reruns per target and runner (default 1).
    #[serde(default)]
    pub runs: Option<u32>,
    /// The run flags of every target.
    #[serde(default)]
    pub run: RunFlags,
    #[serde(default, rename = "target")]
    pub targets: Vec<RosterTarget>,
}

/// One target of the roster.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RosterTarget {
    /// The server's name on the board (also its run directories' prefix).
    pub label: String,
    /// A stdio server's command line.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// A streamable HTTP server's URL.
    #[serde(default)]
    pub url: Option<String>,
    /// `anonymous` (default; `owner-key` with `login` or headers), `free-key` or `owner-key`.
    #[serde(default)]
    pub credential: Option<String>,
    /// Use the token `fitness login URL` stored (an HTTP target).
    #[serde(default)]
    pub login: bool,
    /// HTTP headers: header name -> NAME of the environment variable holding its value.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The stdio server's environment: variable -> NAME of the environment
    /// variable holding its value.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Runner models for this target instead of the roster's.
    #[serde(default)]
    pub runners: Option<Vec<String>>,
    /// Reruns for this target instead of the roster's.
    #[serde(default)]
    pub runs: Option<u32>,
    /// Run flags over the roster's.
    #[serde(default)]
    pub run: RunFlags,
}

/// The `fitness run` flags a roster may set. Every field maps to the flag of
/// the same name (underscores become dashes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFlags {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u64>,
    /// The first rerun's seed; rerun r uses `seed + r - 1` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_extensions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_calls: Option<u64>,
    /// Trials in flight at once within a stage (registered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls_per_turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Seconds for any one MCP request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Seconds for any one model call attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overgen: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_screen: Option<bool>,
    /// Run the official conformance suite first (HTTP targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<bool>,
    /// The official suite's expected-failures baseline (with `conformance`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance_baseline: Option<String>,
    /// The target may be written to (`--sandbox`); read-only otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// With `sandbox`: the command that restores the server's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<String>,
    /// With `sandbox`: paths the server runs over copies of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_copy: Option<Vec<String>>,
}

impl RunFlags {
    /// `self` with every field `over` sets replaced.
    fn merged(&self, over: &RunFlags) -> RunFlags {
        RunFlags {
            generator: over.generator.clone().or_else(|| self.generator.clone()),
            tasks: over.tasks.or(self.tasks),
            reps: over.reps.or(self.reps),
            seed: over.seed.or(self.seed),
            extension_size: over.extension_size.or(self.extension_size),
            max_extensions: over.max_extensions.or(self.max_extensions),
            max_model_calls: over.max_model_calls.or(self.max_model_calls),
            concurrency: over.concurrency.or(self.concurrency),
            max_calls_per_turn: over.max_calls_per_turn.or(self.max_calls_per_turn),
            max_output_tokens: over.max_output_tokens.or(self.max_output_tokens),
            max_turns: over.max_turns.or(self.max_turns),
            max_tokens: over.max_tokens.or(self.max_tokens),
            timeout: over.timeout.or(self.timeout),
            model_timeout: over.model_timeout.or(self.model_timeout),
            overgen: over.overgen.or(self.overgen),
            no_screen: over.no_screen.or(self.no_screen),
            conformance: over.conformance.or(self.conformance),
            conformance_baseline: over
                .conformance_baseline
                .clone()
                .or_else(|| self.conformance_baseline.clone()),
            sandbox: over.sandbox.or(self.sandbox),
            reset: over.reset.clone().or_else(|| self.reset.clone()),
            sandbox_copy: over
                .sandbox_copy
                .clone()
                .or_else(|| self.sandbox_copy.clone()),
        }
    }

    /// The flags as `fitness run` arguments, for rerun `rerun` (1-based).
    fn args(&self, rerun: u32) -> Vec<String> {
        let mut out = Vec::new();
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                out.push(format!("--{name}"));
                out.push(v);
            }
        };
        flag("generator", self.generator.clone());
        flag("tasks", self.tasks.map(|v| v.to_string()));
        flag("reps", self.reps.map(|v| v.to_string()));
        let seed = self.seed.unwrap_or(1).saturating_add(u64::from(rerun) - 1);
        flag("seed", Some(seed.to_string()));
        flag("extension-size", self.extension_size.map(|v| v.to_string()));
        flag("max-extensions", self.max_extensions.map(|v| v.to_string()));
        flag(
            "max-model-calls",
            self.max_model_calls.map(|v| v.to_string()),
        );
        flag("concurrency", self.concurrency.map(|v| v.to_string()));
        flag(
            "max-calls-per-turn",
            self.max_calls_per_turn.map(|v| v.to_string()),
        );
        flag(
            "max-output-tokens",
            self.max_output_tokens.map(|v| v.to_string()),
        );
        flag("max-turns", self.max_turns.map(|v| v.to_string()));
        flag("max-tokens", self.max_tokens.map(|v| v.to_string()));
        flag("timeout", self.timeout.map(|v| v.to_string()));
        flag("model-timeout", self.model_timeout.map(|v| v.to_string()));
        flag("overgen", self.overgen.map(|v| v.to_string()));
        if self.no_screen == Some(true) {
            out.push("--no-screen".to_owned());
        }
        if self.conformance == Some(true) {
            out.push("--conformance".to_owned());
        }
        if let Some(path) = &self.conformance_baseline {
            out.push("--conformance-baseline".to_owned());
            out.push(path.clone());
        }
        if self.sandbox == Some(true) {
            out.push("--sandbox".to_owned());
        }
        if let Some(cmd) = &self.reset {
            out.push("--reset".to_owned());
            out.push(cmd.clone());
        }
        for path in self.sandbox_copy.iter().flatten() {
            out.push("--sandbox-copy".to_owned());
            out.push(path.clone());
        }
        out
    }
}

/// How a slot reaches its server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotTarget {
    Command(Vec<String>),
    Url(String),
}

/// One run to make: a target under one runner, one numbered rerun.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// 0-based position in the expanded roster (the shard arithmetic's index).
    pub index: usize,
    pub label: String,
    pub target: SlotTarget,
    pub runner: String,
    pub judge: Option<String>,
    pub credential: String,
    /// With `fitness login`'s stored token.
    pub login: bool,
    /// Header name -> environment variable NAME.
    pub headers: BTreeMap<String, String>,
    /// Child variable -> environment variable NAME.
    pub env: BTreeMap<String, String>,
    pub flags: RunFlags,
    /// 1-based rerun number, of `reruns`.
    pub rerun: u32,
    pub reruns: u32,
    /// Canonical JSON of everything above but `index`.
    pub key: String,
    /// The first 10 hex digits of the key's sha256: names its run directories.
    pub tag: String,
}

impl Slot {
    /// The `fitness run` arguments of this slot (before `--out` and the tag).
    pub fn run_args(&self) -> Vec<String> {
        let mut args = vec![
            "--runner".to_owned(),
            self.runner.clone(),
            "--label".to_owned(),
            self.label.clone(),
            "--credential".to_owned(),
            self.credential.clone(),
        ];
        if let Some(judge) = &self.judge {
            args.extend(["--judge".to_owned(), judge.clone()]);
        }
        if self.login {
            args.push("--login".to_owned());
        }
        args.extend(self.flags.args(self.rerun));
        for (name, var) in &self.headers {
            args.extend(["--header-env".to_owned(), format!("{name}={var}")]);
        }
        for (name, var) in &self.env {
            args.extend(["--env-from".to_owned(), format!("{name}={var}")]);
        }
        match &self.target {
            SlotTarget::Url(url) => args.push(url.clone()),
            SlotTarget::Command(argv) => {
                args.push("--".to_owned());
                args.extend(argv.iter().cloned());
            }
        }
        args
    }

    /// The environment variables this slot reads that are not set.
    pub fn missing_env(&self) -> Vec<String> {
        self.headers
            .values()
            .chain(self.env.values())
            .filter(|var| std::env::var_os(var).is_none_or(|v| v.is_empty()))
            .cloned()
            .collect()
    }

    /// `label · runner · run r of R`, for the display and the summary.
    pub fn describe(&self) -> String {
        format!(
            "{} · {} · run {} of {}",
            self.label, self.runner, self.rerun, self.reruns
        )
    }
}

/// Read and check a roster file.
pub fn load(path: &Path) -> anyhow::Result<Roster> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read the roster {}", path.display()))?;
    parse(&text).with_context(|| format!("the roster {} is not valid", path.display()))
}

/// Parse and check a roster.
pub fn parse(text: &str) -> anyhow::Result<Roster> {
    let roster: Roster = toml::from_str(text)?;
    if let Some(f) = roster.format
        && f != ROSTER_FORMAT
    {
        bail!("roster format {f} is not one this reader knows (it reads {ROSTER_FORMAT})");
    }
    if roster.targets.is_empty() {
        bail!("the roster names no [[target]]");
    }
    let mut labels = std::collections::BTreeSet::new();
    for t in &roster.targets {
        check_target(t)?;
        if !labels.insert(t.label.as_str()) {
            bail!("the label {:?} is used by two targets", t.label);
        }
        let runners = t.runners.as_ref().unwrap_or(&roster.runners);
        if runners.is_empty() {
            bail!(
                "target {:?} has no runner: set runners = [...] in the roster or the target",
                t.label
            );
        }
        if t.runs.or(roster.runs) == Some(0) {
            bail!("target {:?}: runs must be at least 1", t.label);
        }
    }
    Ok(roster)
}

fn check_target(t: &RosterTarget) -> anyhow::Result<()> {
    let label = &t.label;
    if label.trim().is_empty() {
        bail!("a target has an empty label");
    }
    match (&t.command, &t.url) {
        (Some(c), None) if c.is_empty() || c[0].is_empty() => {
            bail!("target {label:?}: command is empty")
        }
        (Some(_), None) => {
            if !t.headers.is_empty() {
                bail!("target {label:?}: headers are for URL targets; a command takes env");
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("target {label:?}: url must be http(s)");
            }
            if url_has_credentials(url) {
                bail!(
                    "target {label:?}: the url carries credentials; give them as a header whose value names an environment variable"
                );
            }
            if !t.env.is_empty() {
                bail!("target {label:?}: env is for command targets; a URL takes headers");
            }
        }
        (Some(_), Some(_)) => bail!("target {label:?}: give a command or a url, not both"),
        (None, None) => bail!("target {label:?}: give a command or a url"),
    }
    for (kind, map) in [("headers", &t.headers), ("env", &t.env)] {
        for (name, var) in map {
            if name.is_empty() || name.contains(['=', ':', '\n']) {
                bail!("target {label:?}: {kind} has an invalid name {name:?}");
            }
            if !is_env_name(var) {
                bail!(
                    "target {label:?}: {kind}.{name} must be the NAME of an environment variable holding the value (letters, digits, underscores), never the value itself"
                );
            }
        }
    }
    if let Some(c) = &t.credential {
        credential_ok(label, c)?;
        // A slot that carries a credential is never labelled anonymous.
        if c == "anonymous" && (t.login || !t.headers.is_empty()) {
            bail!(
                "target {label:?}: credential \"anonymous\", but it carries a credential ({}): drop the credential line (it is then owner-key) or say free-key or owner-key",
                if t.login {
                    "login".to_owned()
                } else {
                    format!(
                        "the header(s) {}",
                        t.headers.keys().cloned().collect::<Vec<_>>().join(", ")
                    )
                }
            );
        }
    }
    if t.login && t.url.is_none() {
        bail!(
            "target {label:?}: login is for a url target (a stdio server takes its credentials in env)"
        );
    }
    Ok(())
}

fn credential_ok(label: &str, c: &str) -> anyhow::Result<()> {
    match c {
        "anonymous" | "free-key" | "owner-key" => Ok(()),
        other => {
            bail!("target {label:?}: credential {other:?} is not anonymous, free-key or owner-key")
        }
    }
}

/// `user:pass@` (or any userinfo) in a URL's authority.
fn url_has_credentials(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.contains('@')
}

/// A portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every slot of the roster, in order: targets as listed, then runners as
/// listed, then reruns 1..=R.
pub fn slots(roster: &Roster) -> Vec<Slot> {
    let mut out = Vec::new();
    for t in &roster.targets {
        let runners = t.runners.clone().unwrap_or_else(|| roster.runners.clone());
        let reruns = t.runs.or(roster.runs).unwrap_or(1);
        let flags = roster.run.merged(&t.run);
        let target = match (&t.command, &t.url) {
            (Some(c), _) => SlotTarget::Command(c.clone()),
            (None, Some(u)) => SlotTarget::Url(u.clone()),
            (None, None) => continue,
        };
        let credential = t.credential.clone().unwrap_or_else(|| {
            if t.login || !t.headers.is_empty() {
                "owner-key"
            } else {
                "anonymous"
            }
            .to_owned()
        });
        for runner in &runners {
            for rerun in 1..=reruns {
                let key = json!({
                    "label": t.label,
                    "target": target,
                    "runner": runner,
                    "judge": roster.judge,
                    "credential": credential,
                    "headers": t.headers,
                    "env": t.env,
                    "flags": flags,
                    "rerun": rerun,
                });
                // Only a login changes the key: rosters written before it
                // keep their slots' tags (and their resumable directories).
                let mut key = key;
                if t.login {
                    key["login"] = json!(true);
                }
                let key = integrity::canonical_json(&key)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_else(|_| key.to_string());
                let tag = integrity::sha256_hex(key.as_bytes())[..10].to_owned();
                out.push(Slot {
                    index: out.len(),
                    label: t.label.clone(),
                    target: target.clone(),
                    runner: runner.clone(),
                    judge: roster.judge.clone(),
                    credential: credential.clone(),
                    login: t.login,
                    headers: t.headers.clone(),
                    env: t.env.clone(),
                    flags: flags.clone(),
                    rerun,
                    reruns,
                    key,
                    tag,
                });
            }
        }
    }
    out
}

/// `--shard I/N`: shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Shard> {
        let (i, n) = s
            .split_once('/')
            .with_context(|| format!("--shard {s:?} is not I/N (e.g. 0/3)"))?;
        let index: usize = i
            .trim()
            .parse()
            .with_context(|| format!("--shard {s:?}: {i:?} is not a number"))?;
        let count: usize = n
            .trim()
            .parse()
            .with_context(|| format!("--shard {s:?}: {n:?} is not a number"))?;
        if count == 0 || index >= count {
            bail!("--shard {s:?}: I must be in 0..N and N at least 1");
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Slot `k` belongs to shard `k mod N`: every slot to exactly one shard,
    /// shards differing in size by at most one, decided by the roster alone.
    pub fn owns(&self, slot: &Slot) -> bool {
        slot.index % self.count == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROSTER: &str = r#"
runners = ["sim/diligent", "sim/careless"]
runs = 2
[run]
generator = "schema-walk/1"
seed = 5

[[target]]
label = "good"
command = ["fitness", "demo-server", "good"]

[[target]]
label = "remote"
url = "https://mcp.example/mcp"
credential = "owner-key"
headers = { Authorization = "REMOTE_MCP_AUTH" }
runners = ["sim/diligent"]
[target.run]
tasks = 16
concurrency = 3
"#;

    #[test]
    fn slots_expand_targets_runners_and_reruns_in_order() {
        let roster = parse(ROSTER).unwrap();
        let slots = slots(&roster);
        let names: Vec<String> = slots.iter().map(Slot::describe).collect();
        assert_eq!(
            names,
            [
                "good · sim/diligent · run 1 of 2",
                "good · sim/diligent · run 2 of 2",
                "good · sim/careless · run 1 of 2",
                "good · sim/careless · run 2 of 2",
                "remote · sim/diligent · run 1 of 2",
                "remote · sim/diligent · run 2 of 2",
            ]
        );
        let tags: std::collections::BTreeSet<&str> = slots.iter().map(|s| s.tag.as_str()).collect();
        assert_eq!(tags.len(), slots.len(), "every slot has its own tag");
        // Reruns step the seed; target flags override the roster's.
        let args = slots[1].run_args();
        assert!(args.windows(2).any(|w| w == ["--seed", "6"]), "{args:?}");
        let remote = slots[4].run_args();
        assert!(remote.windows(2).any(|w| w == ["--tasks", "16"]));
        assert!(remote.windows(2).any(|w| w == ["--concurrency", "3"]));
        assert!(!args.iter().any(|a| a == "--concurrency"), "{args:?}");
        assert!(
            remote
                .windows(2)
                .any(|w| w == ["--header-env", "Authorization=REMOTE_MCP_AUTH"])
        );
        assert_eq!(remote.last().unwrap(), "https://mcp.example/mcp");
    }

    #[test]
    fn a_slot_key_changes_with_its_flags_and_not_with_others() {
        let a = slots(&parse(ROSTER).unwrap());
        let edited = ROSTER.replace("tasks = 16", "tasks = 20");
        let b = slots(&parse(&edited).unwrap());
        assert_eq!(a[0].tag, b[0].tag, "an untouched target keeps its slots");
        assert_ne!(a[4].tag, b[4].tag, "an edited target gets new slots");
    }

    #[test]
    fn a_login_target_runs_with_its_stored_token_as_the_owner() {
        let before = slots(&parse(ROSTER).unwrap());
        let login = ROSTER.replace(
            "credential = \"owner-key\"\nheaders = { Authorization = \"REMOTE_MCP_AUTH\" }",
            "login = true",
        );
        let after = slots(&parse(&login).unwrap());
        let args = after[4].run_args();
        assert!(args.iter().any(|a| a == "--login"), "{args:?}");
        assert!(
            args.windows(2).any(|w| w == ["--credential", "owner-key"]),
            "{args:?}"
        );
        assert!(!before[4].run_args().iter().any(|a| a == "--login"));
        // A roster without a login keeps its slots' tags.
        assert_eq!(before[0].tag, after[0].tag);
        let stdio = ROSTER.replace(
            "command = [\"fitness\", \"demo-server\", \"good\"]",
            "command = [\"fitness\", \"demo-server\", \"good\"]\nlogin = true",
        );
        let err = format!("{:#}", parse(&stdio).unwrap_err());
        assert!(err.contains("login is for a url target"), "{err}");
    }

    #[test]
    fn a_slot_that_carries_a_credential_is_never_labelled_anonymous() {
        let lying = ROSTER.replace("credential = \"owner-key\"", "credential = \"anonymous\"");
        let err = format!("{:#}", parse(&lying).unwrap_err());
        assert!(err.contains("credential \"anonymous\", but it carries a credential (the header(s) Authorization)"), "{err}");
        let login = ROSTER.replace(
            "credential = \"owner-key\"\nheaders = { Authorization = \"REMOTE_MCP_AUTH\" }",
            "credential = \"anonymous\"\nlogin = true",
        );
        assert!(format!("{:#}", parse(&login).unwrap_err()).contains("(login)"));
        // Unlabelled, a header is the operator's own key.
        let unlabelled = ROSTER.replace("credential = \"owner-key\"\n", "");
        let slots = slots(&parse(&unlabelled).unwrap());
        assert!(
            slots[4]
                .run_args()
                .windows(2)
                .any(|w| w == ["--credential", "owner-key"]),
            "{:?}",
            slots[4].run_args()
        );
    }

    #[test]
    fn values_where_names_belong_are_refused() {
        let bad = ROSTER.replace("\"REMOTE_MCP_AUTH\"", "\"Bearer sk-live-123\"");
        let err = format!("{:#}", parse(&bad).unwrap_err());
        assert!(err.contains("NAME of an environment variable"), "{err}");
        let creds = ROSTER.replace("https://mcp.example", "https://user:pw@mcp.example");
        assert!(
            format!("{:#}", parse(&creds).unwrap_err()).contains("credentials"),
            "a URL with userinfo is refused"
        );
        let typo = ROSTER.replace("runs = 2", "rusn = 2");
        assert!(parse(&typo).is_err(), "unknown keys are refused");
    }

    #[test]
    fn shards_partition_the_slots() {
        let roster = parse(ROSTER).unwrap();
        let all = slots(&roster);
        for n in 1..=7 {
            let mut seen = vec![0u32; all.len()];
            let mut sizes = Vec::new();
            for i in 0..n {
                let shard = Shard { index: i, count: n };
                let mine: Vec<&Slot> = all.iter().filter(|s| shard.owns(s)).collect();
                sizes.push(mine.len());
                for s in mine {
                    seen[s.index] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n={n}: {seen:?}");
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1, "n={n}: {sizes:?}");
        }
        assert!("3/3".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
        assert_eq!(
            "1/3".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 3 }
        );
    }
}
