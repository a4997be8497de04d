//! `fitness compare BEFORE AFTER`: read two records (or run directories)
//! against each other for CI, as text, Markdown (a pull-request comment) or
//! JSON; `fitness compare --plan BASELINE`: what a paired rerun of the
//! baseline's suite can establish before it is paid for. The comparison
//! and the plan are `fitness_shared::compare`; this module renders them.
//!
//! Exit codes: 0 no regression established (unchanged, improved, or both
//! refused); 1 a record could not be read; 2 the command line was wrong;
//! 3 the runs are not comparable (different servers, runner model,
//! generator or credential context); 4 regressed (one suite: the paired
//! interval of the drop lies entirely above 0; two suites: the after
//! interval lies entirely below the before interval; or the server lost
//! its score to a refusal the wire tape pins on it); 5 inconclusive (one of
//! the runs is VOID or COMPROMISED, or a scored server's after run was
//! refused for a reason about the measurement: a thin surface, a null
//! baseline, an unresolved gate).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use fitness_shared::compare::{
    Comparison, Flip, PairedPlan, PairedReading, Reading, Side, Verdict, compare, explain,
};
use fitness_shared::record::{Interval, RunRecord};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
fitness compare baseline/record.json runs/my-server-20261201T101500000-s1\n  \
fitness compare BEFORE AFTER --format markdown --site https://example.org/board/ >> \"$GITHUB_STEP_SUMMARY\"\n  \
fitness compare --plan baseline/record.json --discordance 0.2 --drop 0.1\n\n\
Exit codes: 0 no regression established, 1 unreadable input, 2 usage, 3 not comparable, 4 regressed, 5 inconclusive (VOID, COMPROMISED, or a refusal of the measurement).")]
pub struct CompareArgs {
    /// The baseline: a record.json or a run directory.
    pub before: PathBuf,
    /// The new run: a record.json or a run directory.
    #[arg(required_unless_present = "plan")]
    pub after: Option<PathBuf>,
    /// How to print the comparison.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write the comparison as JUnit XML: a case for comparability and
    /// one for regression (a regression fails; what could not be judged is
    /// skipped, saying why).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The published site the runs are on (`fitness publish`): the
    /// Markdown links each flipped task to its trials' replays there.
    /// Without it the links are paths from the site's root.
    #[arg(long, value_name = "URL")]
    pub site: Option<String>,
    /// Compare nothing: print the smallest drop a paired rerun of BEFORE's
    /// suite (same tasks, same trials) establishes at its registered alpha
    /// and power, and the size a chosen drop would need.
    #[arg(long, conflicts_with_all = ["after", "junit"])]
    pub plan: bool,
    /// With --plan: the stated share of pairs expected to disagree (pass
    /// one time, fail the other), 0 to 1.
    #[arg(long, requires = "plan", default_value_t = 0.2, value_parser = share)]
    pub discordance: f64,
    /// With --plan: the drop in first-try success to size a rerun for
    /// (0.1 is ten points), 0 to 1.
    #[arg(long, requires = "plan", default_value_t = 0.1, value_parser = share)]
    pub drop: f64,
}

/// A share in (0, 1].
fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err(format!("{s} is not a share above 0 and at most 1")),
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let before = read(&args.before)?;
    let Some(after_path) = &args.after else {
        let plan = fitness_shared::compare::plan(&before, args.discordance, args.drop);
        return crate::process::print(&plan_text(&plan, args.format)?);
    };
    let after = read(after_path)?;
    let comparison = compare(&before, &after);
    let links = Links::new(args.site.as_deref());
    let text = match args.format {
        Format::Text => text(&comparison),
        Format::Markdown => markdown(&comparison, &links),
        Format::Json => {
            let mut value = serde_json::to_value(&comparison)?;
            value["exit_code"] = comparison.verdict.exit_code().into();
            format!("{}\n", serde_json::to_string_pretty(&value)?)
        }
    };
    crate::process::print(&text)?;
    report_to_ci(&comparison, &links, args.junit.as_deref())?;
    match comparison.verdict.exit_code() {
        0 => Ok(()),
        code => Err(crate::process::Exit::code(code).into()),
    }
}

/// The plan as asked: its sentences, a Markdown list, or JSON.
fn plan_text(plan: &PairedPlan, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Text => plan.lines().join("\n") + "\n",
        Format::Markdown => {
            let mut out = format!("### Fitness Report plan: `{}`\n\n", plan.run);
            for line in plan.lines() {
                out.push_str(&format!("- {line}\n"));
            }
            out
        }
        Format::Json => format!("{}\n", serde_json::to_string_pretty(plan)?),
    })
}

/// The comparison as CI reads it: the JUnit file when asked, and under
/// GitHub Actions the job summary (the Markdown) and the outputs `verdict`
/// and `exit-code`.
fn report_to_ci(c: &Comparison, links: &Links, junit: Option<&Path>) -> anyhow::Result<()> {
    use crate::ci::{Case, Suite, Verdict as V};
    if let Some(path) = junit {
        let classname = format!("fitness.compare.{}", c.after.run);
        let comparable = if c.incomparable.is_empty() {
            V::Pass
        } else {
            let why: Vec<String> = c.incomparable.iter().map(ToString::to_string).collect();
            V::Failure {
                kind: "incomparable".to_owned(),
                message: why.join("; "),
            }
        };
        let regression = match c.verdict {
            Verdict::Regressed => V::Failure {
                kind: "regressed".to_owned(),
                message: c.reason.clone(),
            },
            Verdict::Incomparable | Verdict::Inconclusive => V::Skipped {
                message: c.reason.clone(),
            },
            Verdict::Improved | Verdict::NoChangeEstablished | Verdict::OutcomeChanged => V::Pass,
        };
        let case = |name: &str, verdict: V| Case {
            classname: classname.clone(),
            name: name.to_owned(),
            verdict,
            out: None,
        };
        let suite = Suite {
            name: format!("fitness compare {} {}", c.before.run, c.after.run),
            cases: vec![
                case("comparable", comparable),
                Case {
                    out: Some(format!("{}: {}", c.verdict.as_str(), c.reason)),
                    ..case("no regression", regression)
                },
            ],
        };
        crate::ci::write_junit(path, "fitness compare", &[suite])?;
    }
    crate::ci::step_summary(&markdown(c, links))?;
    let verdict = serde_json::to_value(c.verdict)?;
    crate::ci::outputs(&[
        ("verdict", verdict.as_str().unwrap_or_default().to_owned()),
        ("exit-code", c.verdict.exit_code().to_string()),
    ])
}

/// A record file, or the `record.json` in a run directory.
pub fn read(path: &Path) -> anyhow::Result<RunRecord> {
    let file = if path.is_dir() {
        path.join(fitness_shared::site::RECORD_FILE)
    } else {
        path.to_owned()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("failed to read the record {}", file.display()))?;
    RunRecord::from_json(&text)
        .with_context(|| format!("{} is not a valid fitness-report/2 record", file.display()))
}

fn outcome_text(side: &Side, interval: Option<&Interval>) -> String {
    match (interval, &side.refused_at) {
        (Some(i), _) => format!("SCORED, first try {}", i.text()),
        (None, Some(gate)) => format!("{}, refused at the {gate} gate", side.outcome.code()),
        (None, None) => side.outcome.code().to_owned(),
    }
}

fn measured_under(c: &Comparison) -> String {
    format!(
        "runner {}, generator {}",
        c.after.runner_model, c.after.generator
    )
}

/// Where a trial's replay is: under the published site when it is given,
/// else the path from the site's root.
pub struct Links {
    site: Option<String>,
}

impl Links {
    pub fn new(site: Option<&str>) -> Self {
        Links {
            site: site.map(|s| {
                let s = s.trim();
                if s.ends_with('/') {
                    s.to_owned()
                } else {
                    format!("{s}/")
                }
            }),
        }
    }

    fn replay(&self, run: &str, task: &str) -> Option<String> {
        let path = fitness_shared::site::replay_trial(run, task)?;
        Some(fitness_shared::site::join(
            self.site.as_deref().unwrap_or_default(),
            &path,
        ))
    }
}

/// Trials numbered from 1, in words: `trial 2`, `trials 1, 3`.
fn trials_text(trials: &[u64]) -> String {
    let list: Vec<String> = trials.iter().map(ToString::to_string).collect();
    match trials {
        [_] => format!("trial {}", list[0]),
        _ => format!("trials {}", list.join(", ")),
    }
}

/// Flipped tasks on one line: `t3 (trials 1, 2); t7 (trial 3)`.
fn flips_line(flips: &[Flip]) -> String {
    if flips.is_empty() {
        return "none".to_owned();
    }
    flips
        .iter()
        .map(|f| format!("{} ({})", f.task_id, trials_text(&f.trials)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The paired reading's lines of the text output.
fn paired_text(p: &PairedReading) -> String {
    format!(
        "table       both passed {}, before only {}, after only {}, neither {} ({} pairs)\n\
         drop        {}\n\
         p           {}\n\
         lost        {}\n\
         gained      {}\n",
        p.both,
        p.before_only,
        p.after_only,
        p.neither,
        p.pairs,
        p.drop_text(),
        p.p_line(),
        flips_line(&p.lost),
        flips_line(&p.gained),
    )
}

pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let comparable = if c.incomparable.is_empty() {
        format!("yes ({})", measured_under(c))
    } else {
        let why: Vec<String> = c.incomparable.iter().map(ToString::to_string).collect();
        format!("no: {}", why.join("; "))
    };
    out.push_str(&format!("comparable  {comparable}\n"));
    out.push_str(&format!(
        "before      {}  {}\n",
        c.before.run,
        outcome_text(&c.before, c.delta.before.as_ref())
    ));
    out.push_str(&format!(
        "after       {}  {}\n",
        c.after.run,
        outcome_text(&c.after, c.delta.after.as_ref())
    ));
    match &c.reading {
        Some(Reading::Paired(p)) => {
            out.push_str(&format!("reading     paired: {}\n", p.pairs_text()));
            out.push_str(&paired_text(p));
        }
        Some(Reading::Independent { why }) => {
            out.push_str(&format!(
                "reading     independent samples: {why}\nintervals   {}\n",
                explain(&c.delta)
            ));
        }
        None if c.incomparable.is_empty() => {
            out.push_str(&format!("intervals   {}\n", explain(&c.delta)));
        }
        None => {}
    }
    out.push_str(&format!(
        "verdict     {}: {}\n",
        c.verdict.as_str(),
        c.reason
    ));
    out.push_str(&format!("exit        {}\n", c.verdict.exit_code()));
    out
}

/// Flipped tasks as a Markdown list, each linked to its trials' replays
/// in both runs.
fn flips_markdown(title: &str, flips: &[Flip], c: &Comparison, links: &Links) -> String {
    if flips.is_empty() {
        return String::new();
    }
    let tasks = match flips.len() {
        1 => "1 task".to_owned(),
        n => format!("{n} tasks"),
    };
    let mut out = format!("\n{title} ({tasks}):\n\n");
    for f in flips {
        let replay = |side: &str, run: &str| {
            links
                .replay(run, &f.task_id)
                .map(|url| format!("[{side}]({url})"))
                .unwrap_or_else(|| side.to_owned())
        };
        out.push_str(&format!(
            "- `{}`, {}: replay {} · {}\n",
            f.task_id,
            trials_text(&f.trials),
            replay("before", &c.before.run),
            replay("after", &c.after.run)
        ));
    }
    out
}

/// The paired reading in Markdown: what was paired, the 2x2 table, the
/// drop with its interval and p, and the tasks that flipped each way.
fn paired_markdown(p: &PairedReading, c: &Comparison, links: &Links) -> String {
    let mut out = format!(
        "\n**Read pair by pair**: {}.\n\n\
         | | after passed | after failed | total |\n| --- | --- | --- | --- |\n\
         | **before passed** | {} | {} | {} |\n\
         | **before failed** | {} | {} | {} |\n\
         | **total** | {} | {} | {} |\n\n\
         Drop in first-try success: {}. {}.\n",
        p.pairs_text(),
        p.both,
        p.before_only,
        p.both + p.before_only,
        p.after_only,
        p.neither,
        p.after_only + p.neither,
        p.both + p.after_only,
        p.before_only + p.neither,
        p.pairs,
        p.drop_text(),
        p.p_line(),
    );
    out.push_str(&flips_markdown(
        "Passed before, failed after",
        &p.lost,
        c,
        links,
    ));
    out.push_str(&flips_markdown(
        "Failed before, passed after",
        &p.gained,
        c,
        links,
    ));
    out
}

pub fn markdown(c: &Comparison, links: &Links) -> String {
    let mut out = format!(
        "### Fitness Report: {}\n\n{}\n\n",
        c.verdict.as_str(),
        c.reason
    );
    if !c.incomparable.is_empty() {
        out.push_str("Not comparable:\n\n");
        for why in &c.incomparable {
            out.push_str(&format!("- {why}\n"));
        }
        out.push('\n');
    }
    out.push_str("| | run | outcome | first-try success (95% CI) |\n| --- | --- | --- | --- |\n");
    for (name, side, interval) in [
        ("before", &c.before, c.delta.before.as_ref()),
        ("after", &c.after, c.delta.after.as_ref()),
    ] {
        let outcome = match &side.refused_at {
            Some(gate) => format!("{} at `{gate}`", side.outcome.code()),
            None => side.outcome.code().to_owned(),
        };
        out.push_str(&format!(
            "| {name} | `{}` | {outcome} | {} |\n",
            side.run,
            interval.map_or_else(|| "no score".to_owned(), Interval::text)
        ));
    }
    match &c.reading {
        Some(Reading::Paired(p)) => out.push_str(&paired_markdown(p, c, links)),
        Some(Reading::Independent { why }) => out.push_str(&format!(
            "\nRead as independent samples ({why}). Intervals separated: **{}**. {}\n",
            if c.delta.separated { "yes" } else { "no" },
            explain(&c.delta)
        )),
        None if c.incomparable.is_empty() => out.push_str(&format!(
            "\nIntervals separated: **{}**. {}\n",
            if c.delta.separated { "yes" } else { "no" },
            explain(&c.delta)
        )),
        None => {}
    }
    if c.incomparable.is_empty() {
        out.push_str(&format!("\nMeasured with {}.\n", measured_under(c)));
    }
    out
}
