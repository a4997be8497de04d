//! `fitness compare BEFORE AFTER`: read two records (or run directories)
//! against each other for CI, as text, Markdown (a pull-request comment) or
//! JSON. The comparison itself is `fitness_shared::compare`.
//!
//! Exit codes: 0 no regression established (unchanged, improved, or both
//! refused); 1 a record could not be read; 2 the command line was wrong;
//! 3 the runs are not comparable (different runner model, generator or
//! credential context); 4 regressed (the after interval lies entirely below
//! the before interval, or the server lost its score to a refusal the wire
//! tape pins on it); 5 inconclusive (one of the runs is VOID or
//! COMPROMISED, or a scored server's after run was refused for a reason
//! about the measurement: a thin surface, a null baseline, an unresolved
//! gate).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use fitness_shared::compare::explain;
use fitness_shared::compare::{Comparison, Side, Verdict, compare};
use fitness_shared::record::{Interval, RunRecord};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
fitness compare baseline/record.json runs/my-server-20261201T101500000-s1\n  \
fitness compare BEFORE AFTER --format markdown >> \"$GITHUB_STEP_SUMMARY\"\n\n\
Exit codes: 0 no regression established, 1 unreadable input, 2 usage, 3 not comparable, 4 regressed, 5 inconclusive (VOID, COMPROMISED, or a refusal of the measurement).")]
pub struct CompareArgs {
    /// The baseline: a record.json or a run directory.
    pub before: PathBuf,
    /// The new run: a record.json or a run directory.
    pub after: PathBuf,
    /// How to print the comparison.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write the comparison as JUnit XML: a case for comparability and
    /// one for regression (a regression fails; what could not be judged is
    /// skipped, saying why).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let before = read(&args.before)?;
    let after = read(&args.after)?;
    let comparison = compare(&before, &after);
    let text = match args.format {
        Format::Text => text(&comparison),
        Format::Markdown => markdown(&comparison),
        Format::Json => {
            let mut value = serde_json::to_value(&comparison)?;
            value["exit_code"] = comparison.verdict.exit_code().into();
            format!("{}\n", serde_json::to_string_pretty(&value)?)
        }
    };
    crate::process::print(&text)?;
    report_to_ci(&comparison, args.junit.as_deref())?;
    match comparison.verdict.exit_code() {
        0 => Ok(()),
        code => Err(crate::process::Exit::code(code).into()),
    }
}

/// The comparison as CI reads it: the JUnit file when asked, and under
/// GitHub Actions the job summary (the Markdown) and the outputs `verdict`
/// and `exit-code`.
fn report_to_ci(c: &Comparison, junit: Option<&Path>) -> anyhow::Result<()> {
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
    crate::ci::step_summary(&markdown(c))?;
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
    if c.incomparable.is_empty() {
        out.push_str(&format!("intervals   {}\n", explain(&c.delta)));
    }
    out.push_str(&format!(
        "verdict     {}: {}\n",
        c.verdict.as_str(),
        c.reason
    ));
    out.push_str(&format!("exit        {}\n", c.verdict.exit_code()));
    out
}

pub fn markdown(c: &Comparison) -> String {
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
    if c.incomparable.is_empty() {
        out.push_str(&format!(
            "\nIntervals separated: **{}**. {}\n",
            if c.delta.separated { "yes" } else { "no" },
            explain(&c.delta)
        ));
        out.push_str(&format!("\nMeasured with {}.\n", measured_under(c)));
    }
    out
}
