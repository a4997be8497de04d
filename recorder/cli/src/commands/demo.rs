//! `fitness demo`: no key, no network. Runs the bundled demo servers with
//! the offline `sim` runners and `schema-walk/1`, publishes the board, and
//! serves it on 127.0.0.1. Every outcome family appears on it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use fitness_shared::record::Outcome;

use crate::process::{cancel_on_signals, runtime};
use fitness_recorder::mcp::connect::Target;
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::pipeline::config::DEFAULT_MAX_EXTENSIONS;
use fitness_recorder::pipeline::{self, RunConfig, RunSettings};
use fitness_recorder::suite::GeneratorId;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where the demo's run directories go (replaced on each demo).
    #[arg(long, default_value = "fitness-demo/runs")]
    pub out: PathBuf,
    /// Where the published site goes.
    #[arg(long, default_value = "fitness-demo/site")]
    pub site: PathBuf,
    /// The viewer's release build (default `dist/`); without one the board is
    /// published as data only.
    #[arg(long)]
    pub viewer: Option<PathBuf>,
    /// Where to serve the board.
    #[arg(long, default_value = super::serve::DEFAULT_ADDR)]
    pub addr: SocketAddr,
    /// Run and publish, then exit instead of serving.
    #[arg(long)]
    pub no_serve: bool,
    /// Only these scenarios (by name); repeatable.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
    /// A signing key for the runs and the site (from `fitness keygen`).
    /// Default: the demo's own key, `fitness-demo/demo.key`, made on first
    /// use, so the demo board reads as verified.
    #[arg(long)]
    pub key: Option<PathBuf>,
}

/// The demo's signing key, beside its runs directory, made on first use.
pub const DEMO_KEY: &str = "demo.key";

/// The key the demo signs with: `--key`, or the demo's own key beside the
/// runs directory (`fitness-demo/demo.key`), made when it is missing.
fn demo_key(args: &DemoArgs) -> anyhow::Result<PathBuf> {
    if let Some(key) = &args.key {
        return Ok(key.clone());
    }
    let dir = match args.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let path = dir.join(DEMO_KEY);
    if !path.exists() {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        let (_, fingerprint) = fitness_recorder::integrity::generate(&path)?;
        eprintln!(
            "made the demo's signing key {} (fingerprint {fingerprint})",
            path.display()
        );
    }
    Ok(path)
}

/// One demo run: which server, which runner, what it is registered with,
/// and the outcome family it shows.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub server: &'static str,
    pub server_args: &'static [&'static str],
    pub runner: &'static str,
    pub max_extensions: u64,
    pub max_model_calls: Option<u64>,
    /// Seconds to wait for any one MCP request.
    pub timeout_secs: u64,
    pub expect: Outcome,
    pub shows: &'static str,
}

impl Scenario {
    /// The usual scenario: the demo server of its own name with no
    /// arguments, the diligent sim runner, the default extensions, no spend
    /// cap, 3 s per MCP request.
    const fn usual(name: &'static str, expect: Outcome, shows: &'static str) -> Scenario {
        Scenario {
            name,
            server: name,
            server_args: &[],
            runner: "sim/diligent",
            max_extensions: DEFAULT_MAX_EXTENSIONS,
            max_model_calls: None,
            timeout_secs: 3,
            expect,
            shows,
        }
    }
}

pub const SCENARIOS: &[Scenario] = &[
    Scenario::usual(
        "good",
        Outcome::Scored,
        "enough surface, every gate passes: a score with its interval",
    ),
    Scenario::usual(
        "thin",
        Outcome::InsufficientSurface,
        "two tools: too few tasks to measure",
    ),
    Scenario::usual(
        "trivia",
        Outcome::Degenerate,
        "every task answerable without the server: the null screen empties the suite",
    ),
    Scenario::usual(
        "constant",
        Outcome::Degenerate,
        "answers that ignore the arguments: random arguments pass, the null baseline kills",
    ),
    Scenario {
        timeout_secs: 1,
        ..Scenario::usual(
            "broken",
            Outcome::GateFailed,
            "stops answering calls: the reference agent cannot reach the answers",
        )
    },
    Scenario {
        max_extensions: 0,
        ..Scenario::usual(
            "canary",
            Outcome::ExtendExhausted,
            "a flaky tool leaves the construct gate unresolved, and no extension was registered",
        )
    },
    Scenario {
        server: "good",
        runner: "sim/unstable",
        ..Scenario::usual(
            "unstable-api",
            Outcome::Compromised,
            "the model API fails too often: errors over 5% compromise the measurement",
        )
    },
    Scenario {
        server: "good",
        max_model_calls: Some(60),
        ..Scenario::usual(
            "spend-cap",
            Outcome::Void,
            "the spend cap runs out mid-run: VOID, nothing scored or refused",
        )
    },
];

/// The registration of one scenario.
pub fn scenario_config(
    s: &Scenario,
    out: &std::path::Path,
    key: Option<PathBuf>,
) -> anyhow::Result<RunConfig> {
    let exe = std::env::current_exe()
        .context("cannot find the fitness binary to start the demo servers")?;
    let mut args = vec!["demo-server".to_owned(), s.server.to_owned()];
    args.extend(s.server_args.iter().map(|a| (*a).to_owned()));
    let target = Target::Stdio(StdioTarget {
        program: exe.display().to_string(),
        args,
        env: Vec::new(),
    });
    let mut run = RunSettings::new(target, s.runner.parse()?);
    run.generator = Some(GeneratorId::SchemaWalk1);
    run.max_extensions = s.max_extensions;
    run.seed = 7;
    run.out_dir = out.to_owned();
    run.key = key;
    run.timeout = Duration::from_secs(s.timeout_secs);
    run.budget.max_turns = 8;
    run.max_model_calls = s.max_model_calls;
    run.label = Some(format!("demo-{}", s.name));
    RunConfig::from_settings(run)
}

/// The scenarios `--only` names, or all of them.
fn chosen(args: &DemoArgs) -> anyhow::Result<Vec<&'static Scenario>> {
    let scenarios: Vec<&Scenario> = SCENARIOS
        .iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|o| o == s.name))
        .collect();
    anyhow::ensure!(
        !scenarios.is_empty(),
        "no demo scenario is called {:?}; there are: {}",
        args.only,
        SCENARIOS
            .iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(scenarios)
}

/// The progress of one scenario among the others running at once: no
/// bars, which would draw over each other; its notes under its name.
struct ScenarioNotes(&'static str);

impl pipeline::Progress for ScenarioNotes {
    fn note(&self, text: &str) {
        crate::process::errln!("demo {:<13} {text}", self.0);
    }
}

/// Publish the demo's runs, signed, as the demo board.
fn publish(args: &DemoArgs, key: PathBuf) -> anyhow::Result<()> {
    let viewer = args.viewer.clone().unwrap_or_else(|| PathBuf::from("dist"));
    let has_viewer = viewer.join("index.html").is_file();
    if !has_viewer {
        crate::process::errln!(
            "no viewer build at {} (run `trunk build --release`): publishing the board as data only",
            viewer.display()
        );
    }
    let published =
        fitness_recorder::publish::publish(&fitness_recorder::publish::PublishOptions {
            runs: vec![args.out.clone()],
            import: None,
            traces: None,
            out: args.site.clone(),
            viewer: has_viewer.then_some(viewer),
            no_viewer: !has_viewer,
            sign_key: Some(key),
            published_at: None,
            // The demo's runs are replaced on each demo, and so is its board.
            replace: true,
        })?;
    crate::process::outln!(
        "published {} runs ({} scored, {} refused) to {}",
        published.board.counts.runs,
        published.board.counts.scored,
        published.board.counts.refused,
        published.site.display()
    );
    Ok(())
}

pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let scenarios = chosen(&args)?;
    if args.out.exists() {
        std::fs::remove_dir_all(&args.out)
            .with_context(|| format!("failed to clear {}", args.out.display()))?;
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("failed to create {}", args.out.display()))?;
    let key = demo_key(&args)?;
    let rt = runtime()?;
    let configs = scenarios
        .iter()
        .map(|s| {
            crate::process::errln!("demo {:<13} {}", s.name, s.shows);
            scenario_config(s, &args.out, Some(key.clone()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // The scenarios share nothing (a server process each) and mostly wait,
    // the broken one on its timeouts: they run at once, and the demo takes
    // as long as its slowest.
    let outputs = rt.block_on(async {
        let cancel = cancel_on_signals();
        let notes: Vec<ScenarioNotes> = scenarios.iter().map(|s| ScenarioNotes(s.name)).collect();
        futures::future::join_all(
            configs
                .iter()
                .zip(&notes)
                .map(|(cfg, notes)| pipeline::execute(cfg, cancel.clone(), notes)),
        )
        .await
    });
    let mut lines = Vec::new();
    for (s, output) in scenarios.iter().zip(outputs) {
        let output = output?;
        if output.interrupted == Some(pipeline::Interruption::Cancelled) {
            anyhow::bail!("the demo was interrupted");
        }
        let got = output.record.outcome;
        let mark = if got == s.expect {
            ""
        } else {
            "  (expected another outcome: see the record)"
        };
        lines.push(format!(
            "{:<13} {:<21} {}{mark}",
            s.name,
            got.code(),
            output.dir.display()
        ));
    }
    rt.shutdown_timeout(Duration::from_secs(2));
    crate::process::outln!();
    for line in &lines {
        crate::process::outln!("{line}");
    }
    publish(&args, key)?;
    if args.no_serve {
        return Ok(());
    }
    super::serve::run(super::serve::ServeArgs {
        site: args.site,
        addr: args.addr,
    })
}
