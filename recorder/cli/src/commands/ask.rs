//! `fitness ask TARGET --runner PROVIDER/MODEL PROMPT`: one agent task
//! against a server, both tapes written (`mcp.jsonl`, `agent.jsonl`), the
//! answer, the calls and the cost printed. The tool a maintainer reaches for
//! when a run looks wrong.
//!
//! Exit codes: 0 when the trial ran to an answer or a budget; 1 when the
//! server could not be reached or the model failed (the tapes still say why).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fitness_shared::record::Cost;

use crate::commands::target::ConnectFlags;
use fitness_recorder::clock;
use fitness_recorder::mcp::connect::Session;
use fitness_recorder::mcp::input::{InputDesk, Serves};
use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::model::agent::{
    AGENT_TAPE_KIND, Budget, ToolMode, TrialEnd, TrialOutcome, TrialSpec, run_trial,
};
use fitness_recorder::model::cost::{CostLedger, Role};
use fitness_recorder::model::price::PriceTable;
use fitness_recorder::model::{ClientOptions, ModelId, client_for};
use fitness_recorder::pipeline::input::RunnerAnswers;

/// The corr_id of the one trial `ask` runs.
pub const ASK_CORR_ID: &str = "ask";

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fitness ask http://127.0.0.1:3001/mcp --runner anthropic/claude-sonnet-4-5 \"What is 2+3? Use `add`.\"\n  \
fitness ask --runner sim/diligent 'Call `echo` with {\"message\": \"hi\"}' -- npx mcp-server-everything\n\n\
Keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY (base URLs from ANTHROPIC_BASE_URL / OPENAI_BASE_URL);\n\
an HTTP server's bearer token from FITNESS_MCP_BEARER_TOKEN. Credentials are never taped."
)]
pub struct AskArgs {
    /// `URL PROMPT` for an HTTP server, or `PROMPT` with `-- CMD ARGS...` for stdio.
    #[arg(value_name = "TARGET PROMPT", num_args = 1..=2, required = true)]
    pub positionals: Vec<String>,
    /// The runner: anthropic/<model>, openai/<model> or sim/<profile>.
    #[arg(long, value_name = "PROVIDER/MODEL")]
    pub runner: String,
    /// Write the tapes here (default: a new directory under ./fitness-ask/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub connect: ConnectFlags,
    /// A price file merged over the bundled table.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Seconds to wait for any one MCP request or model attempt.
    #[arg(long, default_value_t = fitness_recorder::model::DEFAULT_MODEL_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// Seed for sim runners (and `seed` for OpenAI-compatible servers).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Model turns before the trial stops.
    #[arg(long, default_value_t = Budget::default().max_turns)]
    pub max_turns: u32,
    /// Let the model's calls that may write reach the server. Without it
    /// they are withheld, and the model is told the harness blocked them.
    #[arg(long)]
    pub sandbox: bool,
    /// How a server's `elicitation/create` is answered: decline, or accept
    /// with the values its own form gives. A `sampling/createMessage` is
    /// answered by the runner, on the agent tape and in the cost.
    #[arg(long, value_name = "POLICY", default_value = "decline")]
    pub elicitation: fitness_shared::record::ElicitationPolicy,
    /// The stdio server's command line.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(args: AskArgs) -> anyhow::Result<()> {
    let (url, prompt) = match args.positionals.as_slice() {
        [prompt] => (None, prompt.clone()),
        [url, prompt] => (Some(url.clone()), prompt.clone()),
        _ => anyhow::bail!("give `URL PROMPT`, or `PROMPT -- CMD ARGS...`"),
    };
    anyhow::ensure!(!prompt.trim().is_empty(), "the prompt is empty");
    let target = args.connect.target(url.as_deref(), &args.command)?;
    let runner: ModelId = args.runner.parse()?;
    let prices = match &args.prices {
        Some(p) => PriceTable::load(p)?,
        None => PriceTable::bundled(),
    };
    let timeout = Duration::from_secs(args.timeout.max(1));
    let opts = ClientOptions {
        seed: args.seed,
        timeout,
        ..ClientOptions::default()
    };
    let model = client_for(&runner, &opts)?;
    let dir = match args.out {
        Some(d) => d,
        None => default_dir(),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let (mcp_tap, agent_tap) =
        Tap::create_pair(&dir, "fitness ask", target.describe(), AGENT_TAPE_KIND)?;
    let runtime = crate::process::runtime()?;
    let budget = Budget {
        max_turns: args.max_turns.max(1),
        ..Budget::default()
    };
    // The server's requests for input: sampling by the runner, on the
    // agent tape and in the cost; elicitation by the policy.
    let answers = std::sync::Arc::new(RunnerAnswers {
        runner: model.clone(),
        tape: agent_tap.clone(),
        policy: args.elicitation,
        max_output_tokens: budget.max_output_tokens,
        spent: Default::default(),
    });
    let desk = InputDesk::new(Serves {
        sampling: true,
        elicitation: true,
    });
    desk.set(Some(answers.clone()));
    let result = runtime.block_on(crate::process::until_interrupted(ask(
        &target,
        (&mcp_tap, &agent_tap),
        timeout,
        model.as_ref(),
        &prompt,
        budget,
        (args.sandbox, desk.clone()),
    )));
    runtime.shutdown_timeout(Duration::from_secs(2));
    let Some(result) = result else {
        return Err(crate::process::interrupted(&[&mcp_tap, &agent_tap]));
    };
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            mcp_tap.end("unreachable");
            agent_tap.end("unreachable");
            return Err(e);
        }
    };
    let reason = end_reason(&outcome.end);
    mcp_tap.end(reason);
    agent_tap.end(reason);
    let mut ledger = CostLedger::new();
    ledger_from(&mut ledger, &runner, &outcome);
    ledger.absorb(&answers.spent());
    let asked = desk.counts();
    let cost = ledger.cost(&prices);
    // The answer and the calls quote the server and the model: redacted.
    let mut printed = summary(&runner, &outcome, &ledger, &cost, &prices, &dir);
    if asked.any() {
        printed.push_str(&format!(
            "requests for input: {} sampling ({} answered by {runner}), {} elicitation ({} accepted, {} declined)\n",
            asked.sampling,
            asked.sampling_answered,
            asked.elicitation,
            asked.elicitation_accepted,
            asked.elicitation_declined
        ));
    }
    crate::process::print(&fitness_recorder::secrets::redact(&printed))?;
    if outcome.end == TrialEnd::ModelFailed {
        let why = outcome
            .model_errors
            .last()
            .map(|e| e.to_string())
            .unwrap_or_default();
        anyhow::bail!("the model failed: {why}");
    }
    Ok(())
}

/// One trial of the prompt against the server: connect, list the tools, let
/// the model work, close.
async fn ask(
    target: &fitness_recorder::mcp::target::Target,
    (mcp_tap, agent_tap): (&Tap, &Tap),
    timeout: Duration,
    model: &dyn fitness_recorder::model::ModelClient,
    prompt: &str,
    budget: Budget,
    (sandbox, desk): (bool, InputDesk),
) -> anyhow::Result<TrialOutcome> {
    let session = Session::connect_serving(target, mcp_tap.clone(), None, timeout, desk).await?;
    let tools = match session.list_tools().await {
        Ok(t) => t,
        Err(e) => {
            session.close().await;
            return Err(e);
        }
    };
    let instructions = session
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone());
    let access = fitness_recorder::access::Access {
        mode: if sandbox {
            fitness_recorder::access::AccessMode::Sandbox
        } else {
            fitness_recorder::access::AccessMode::ReadOnly
        },
        writers: fitness_recorder::access::writers(&tools, &|_| false),
    };
    let spec = TrialSpec {
        corr_id: ASK_CORR_ID,
        access: &access,
        prompt,
        instructions: instructions.as_deref(),
        tools: &tools,
        mode: ToolMode::Live,
        reference: None,
        budget,
    };
    let outcome = run_trial(model, Some(&session), &spec, agent_tap).await;
    session.close().await;
    Ok(outcome)
}

/// How the trial ended, as the tapes' end lines say it.
fn end_reason(end: &TrialEnd) -> &'static str {
    match end {
        TrialEnd::Answered => "answered",
        TrialEnd::TurnBudget => "turn budget",
        TrialEnd::TokenBudget => "token budget",
        TrialEnd::ModelFailed => "model failed",
        TrialEnd::Runaway => "cut short: the reply repeated itself",
        TrialEnd::MalformedReply => {
            "the model's reply could not be read by its API (a malformed tool call)"
        }
    }
}

/// Charge a trial's model calls to the runner.
pub fn ledger_from(ledger: &mut CostLedger, runner: &ModelId, outcome: &TrialOutcome) {
    ledger.add_calls(
        Role::Runner,
        runner,
        &outcome.usage,
        u64::from(outcome.model_calls),
        u64::from(outcome.calls_without_usage),
        outcome.model_errors.len() as u64,
    );
}

fn default_dir() -> PathBuf {
    let stamp: String = clock::now()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == 'T')
        .collect();
    Path::new("fitness-ask").join(stamp)
}

fn summary(
    runner: &ModelId,
    outcome: &TrialOutcome,
    ledger: &CostLedger,
    cost: &Cost,
    prices: &PriceTable,
    dir: &Path,
) -> String {
    let mut s = String::new();
    match &outcome.final_answer {
        Some(a) => {
            let _ = writeln!(s, "answer: {a}");
        }
        None => {
            let _ = writeln!(s, "answer: (none; the trial ended: {:?})", outcome.end);
        }
    }
    let _ = writeln!(
        s,
        "model: {runner}, reported as {} ({} call(s), {} turn(s))",
        outcome.model_reported.as_deref().unwrap_or("(no response)"),
        outcome.model_calls,
        outcome.turns
    );
    let _ = writeln!(s, "tool calls: {}", outcome.calls.len());
    for c in &outcome.calls {
        let status = match (c.ok, c.failure) {
            (true, _) => "ok".to_owned(),
            (false, Some(f)) => {
                fitness_shared::wire_name::wire_name(&f).unwrap_or_else(|| "failed".to_owned())
            }
            (false, None) => "failed".to_owned(),
        };
        let _ = writeln!(
            s,
            "  {} {} {} ms{} {}",
            c.tool,
            status,
            c.latency_ms,
            match (c.blocked, c.writes) {
                (true, _) => " blocked (may write; give --sandbox)",
                (false, true) => " writes",
                (false, false) => "",
            },
            c.arguments
        );
    }
    // Every call charged: the agent's turns and the runner's answers to
    // the server's sampling requests.
    let mut t = fitness_shared::cost::Tokens::default();
    for line in ledger.spend_lines(prices) {
        t.input += line.tokens.input;
        t.output += line.tokens.output;
        t.cache_read += line.tokens.cache_read;
        t.cache_write += line.tokens.cache_write;
    }
    let _ = writeln!(
        s,
        "tokens: {} in, {} out, {} cache read, {} cache write",
        t.input, t.output, t.cache_read, t.cache_write
    );
    match cost {
        Cost::Total { usd, .. } => {
            let _ = writeln!(s, "cost: ${usd:.6} (list prices as of {})", prices.as_of);
        }
        Cost::Floor { usd, reasons, .. } => {
            let _ = writeln!(
                s,
                "cost: at least ${usd:.6} (list prices as of {}): {}",
                prices.as_of,
                reasons.join("; ")
            );
        }
        Cost::None { why } => {
            let _ = writeln!(s, "cost: none ({why})");
        }
    }
    for e in &outcome.model_errors {
        let _ = writeln!(s, "model error: {e}");
    }
    let _ = writeln!(
        s,
        "tapes: {} {}",
        dir.join(fitness_shared::site::MCP_TAPE).display(),
        dir.join(fitness_shared::site::AGENT_TAPE).display()
    );
    s
}
