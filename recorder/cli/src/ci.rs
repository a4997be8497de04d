//! Where a command meets the CI system that runs it: JUnit XML (`--junit
//! FILE`, read by GitLab's and GitHub's test reporters) and, when GitHub
//! Actions sets `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT`, the job summary
//! in Markdown and the step's outputs. `run`, `sweep` and `compare` write
//! them; this binary is their one author (the action's script writes none
//! of its own).
//!
//! A record reads as one test case per gate of the pipeline: a gate that
//! passed passes, the gate that refused fails with the refusal's reason
//! string as its message, a gate the run never reached is skipped; then one
//! case for the outcome (a score passes; a refusal or a VOID fails, saying
//! why).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use fitness_shared::record::{Outcome, RunRecord};

/// One test case.
#[derive(Debug, Clone)]
pub struct Case {
    pub classname: String,
    pub name: String,
    pub verdict: Verdict,
    /// Printed in the case's `<system-out>`.
    pub out: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Verdict {
    Pass,
    Failure { kind: String, message: String },
    Skipped { message: String },
}

/// A named group of cases (`<testsuite>`).
#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
}

/// The cases a record reads as: one per gate, then its outcome.
pub fn record_cases(record: &RunRecord, classname: &str) -> Vec<Case> {
    let gates = &record.gates;
    let reached = |id: &str| gates.order.iter().any(|g| g == id);
    // The gates reached, in the order they ran; then those of the pipeline
    // this run never reached.
    let mut ids: Vec<&str> = gates.order.iter().map(String::as_str).collect();
    ids.extend(
        fitness_shared::gates::PIPELINE
            .iter()
            .copied()
            .filter(|id| !reached(id)),
    );
    // Where in the pipeline the run got to: a gate before it that did not
    // run was never registered (a screen turned off, no judge to audit).
    let rank = |id: &str| {
        fitness_shared::gates::PIPELINE
            .iter()
            .position(|g| *g == id)
            .unwrap_or(0)
    };
    let last_reached = gates.order.iter().map(|g| rank(g)).max().unwrap_or(0);
    let mut cases: Vec<Case> = ids
        .into_iter()
        .map(|id| {
            let verdict = match gates.record(id) {
                Some(g) if g.ok => Verdict::Pass,
                Some(g) => Verdict::Failure {
                    kind: "refusal".to_owned(),
                    message: g.reason.clone(),
                },
                None if reached(id) => Verdict::Skipped {
                    message: "reached, with no gate record".to_owned(),
                },
                None => Verdict::Skipped {
                    message: match &gates.refused_at {
                        _ if rank(id) < last_reached => "not part of this run".to_owned(),
                        Some(at) => format!("did not run: the run was refused at {at}"),
                        None if record.outcome == Outcome::Void => {
                            "did not run: the run stopped first (VOID)".to_owned()
                        }
                        None => "not part of this run".to_owned(),
                    },
                },
            };
            let out = gates
                .record(id)
                .and_then(|g| g.detail.explain())
                .map(fitness_recorder::secrets::redact);
            Case {
                classname: classname.to_owned(),
                name: format!("gate {id}"),
                verdict,
                out,
            }
        })
        .collect();
    // The official conformance suite, as its own gate for maintainers: it
    // passes when the suite exits 0 (every scored check passed, or every
    // failure is in the baseline and no entry is stale).
    // Only the scenarios for what the server declared count against it;
    // the suite's own counts are printed beside them.
    if let Some(c) = &record.conformance {
        let split = c.split(
            record
                .server
                .capabilities
                .as_ref()
                .unwrap_or(&serde_json::Value::Null),
        );
        let applies_held = c.error.is_none() && c.baseline.is_none() && split.failed == 0;
        let verdict = if c.held() || applies_held {
            Verdict::Pass
        } else {
            Verdict::Failure {
                kind: "conformance".to_owned(),
                message: match (&c.error, &c.baseline) {
                    (Some(why), _) => format!("the suite gave no result: {why}"),
                    (None, Some(b)) => b.verdict_text(),
                    (None, None) => format!(
                        "{} checks failed in the scenarios for what the server declares",
                        split.failed
                    ),
                },
            }
        };
        let mut out = format!(
            "{}: {} (as the suite counts them: {} passed, {} failed)",
            c.suite,
            split.text(),
            c.passed,
            c.failed
        );
        if let Some(set) = c.set_text() {
            out.push_str(&format!(" ({set})"));
        }
        if let Some(b) = &c.baseline {
            for (what, list) in [("unexpected", &b.unexpected), ("stale", &b.stale)] {
                if !list.is_empty() {
                    out.push_str(&format!("\n{what}: {}", list.join(", ")));
                }
            }
        }
        cases.push(Case {
            classname: classname.to_owned(),
            name: "conformance".to_owned(),
            verdict,
            out: Some(out),
        });
    }
    let refusal_reason = gates
        .refused_at
        .as_deref()
        .and_then(|g| gates.record(g))
        .map(|g| g.reason.clone());
    let verdict = match (&record.score, record.outcome) {
        (Some(_), Outcome::Scored) => Verdict::Pass,
        (_, outcome) => Verdict::Failure {
            kind: outcome.code().to_owned(),
            message: match refusal_reason {
                Some(reason) => reason,
                None => record
                    .notes
                    .score
                    .first()
                    .map(|n| fitness_recorder::secrets::redact(n))
                    .unwrap_or_else(|| format!("{}: no score", outcome.code())),
            },
        },
    };
    cases.push(Case {
        classname: classname.to_owned(),
        name: "outcome".to_owned(),
        verdict,
        out: Some(result_text(record)),
    });
    cases
}

/// A record's result in a line: the interval, or the refusal and its gate.
pub fn result_text(record: &RunRecord) -> String {
    match (&record.score, record.outcome) {
        (Some(s), Outcome::Scored) => format!("first try {}", s.first_try.text()),
        (_, o) => match &record.gates.refused_at {
            Some(gate) => format!("{} at the {gate} gate", o.code()),
            None => o.code().to_owned(),
        },
    }
}

/// The JUnit XML document of `suites`.
pub fn junit_xml(name: &str, suites: &[Suite]) -> String {
    let count =
        |f: fn(&Verdict) -> bool, cases: &[Case]| cases.iter().filter(|c| f(&c.verdict)).count();
    let failed = |v: &Verdict| matches!(v, Verdict::Failure { .. });
    let skipped = |v: &Verdict| matches!(v, Verdict::Skipped { .. });
    let all: Vec<Case> = suites.iter().flat_map(|s| s.cases.clone()).collect();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
        attr(name),
        all.len(),
        count(failed, &all),
        count(skipped, &all)
    );
    for (id, suite) in suites.iter().enumerate() {
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" id=\"{id}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
            attr(&suite.name),
            suite.cases.len(),
            count(failed, &suite.cases),
            count(skipped, &suite.cases)
        );
        for case in &suite.cases {
            let _ = write!(
                xml,
                "    <testcase name=\"{}\" classname=\"{}\">",
                attr(&case.name),
                attr(&case.classname)
            );
            match &case.verdict {
                Verdict::Pass => {}
                Verdict::Failure { kind, message } => {
                    let _ = write!(
                        xml,
                        "\n      <failure message=\"{}\" type=\"{}\">{}</failure>",
                        attr(message),
                        attr(kind),
                        text(message)
                    );
                }
                Verdict::Skipped { message } => {
                    let _ = write!(xml, "\n      <skipped message=\"{}\"/>", attr(message));
                }
            }
            if let Some(out) = &case.out {
                let _ = write!(xml, "\n      <system-out>{}</system-out>", text(out));
            }
            let close = if matches!(case.verdict, Verdict::Pass) && case.out.is_none() {
                ""
            } else {
                "\n    "
            };
            let _ = writeln!(xml, "{close}</testcase>");
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Write `suites` as JUnit XML to `path`, whole or not at all.
pub fn write_junit(path: &Path, name: &str, suites: &[Suite]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
    }
    fitness_recorder::integrity::write_atomic(path, junit_xml(name, suites).as_bytes())
        .with_context(|| format!("failed to write the JUnit file {}", path.display()))
}

/// Text as XML 1.0 may carry it: the five specials escaped, and the
/// characters it cannot carry at all (most controls) dropped.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// An attribute value: as [`text`], with line breaks kept as references.
fn attr(s: &str) -> String {
    text(s)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// Append `markdown` to the GitHub job summary, when there is one.
pub fn step_summary(markdown: &str) -> anyhow::Result<()> {
    append_env_file("GITHUB_STEP_SUMMARY", &format!("{markdown}\n"))
}

/// Set the step's outputs, when GitHub asks for them (`GITHUB_OUTPUT`).
/// Each value is one line (a line break would end it early, so none is
/// kept).
pub fn outputs(pairs: &[(&str, String)]) -> anyhow::Result<()> {
    let mut lines = String::new();
    for (key, value) in pairs {
        let value = value.replace(['\n', '\r'], " ");
        let _ = writeln!(lines, "{key}={value}");
    }
    append_env_file("GITHUB_OUTPUT", &lines)
}

fn append_env_file(var: &str, text: &str) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("failed to open {var} ({})", Path::new(&path).display()))?;
    file.write_all(fitness_recorder::secrets::redact(text).as_bytes())
        .with_context(|| format!("failed to write {var}"))
}

/// A record as the job summary reads it: the outcome, the interval or the
/// refusal's reason, and the gates in order.
pub fn record_markdown(record: &RunRecord) -> String {
    let mut out = format!(
        "### Fitness Report run: `{}`, {}\n\n{}\n\n",
        record.server.slug,
        record.outcome.code(),
        result_text(record)
    );
    out.push_str("| gate | result | reason |\n| --- | --- | --- |\n");
    for case in record_cases(record, "") {
        let (result, reason) = match &case.verdict {
            Verdict::Pass => ("passed", String::new()),
            Verdict::Failure { message, .. } => ("failed", message.clone()),
            Verdict::Skipped { message } => ("skipped", message.clone()),
        };
        let _ = writeln!(
            out,
            "| {} | {result} | {} |",
            case.name,
            reason.replace('|', "\\|")
        );
    }
    let _ = writeln!(out, "\nRun `{}`.", record.run.id);
    fitness_recorder::secrets::redact(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_the_xml_cannot_carry_is_escaped_or_dropped() {
        assert_eq!(text("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(attr("one\ntwo"), "one&#10;two");
    }
}
