//! The record page's findings, rewrite proposals and before/after link:
//! what the tapes show about the server's tools, each claim with the tape
//! lines behind it, and what a re-run with the proposed descriptions changed.

use fitness_shared::record::{
    EvidenceLink, Finding, Proposal, RewriteLink, RewriteRole, RunRecord,
};
use fitness_shared::site::tape_file;
use leptos::prelude::*;

use crate::api;

fn kind_words(kind: &str) -> String {
    kind.replace('_', " ")
}

/// One evidence link: the tape line, and the trial it belongs to in the replay.
fn evidence_list(run_id: &str, evidence: &[EvidenceLink]) -> impl IntoView + use<> {
    let items = evidence
        .iter()
        .map(|e| {
            let label = format!("{} line {}", tape_file(e.tape), e.line);
            let href = match &e.corr_id {
                Some(c) => api::replay_trial_url(run_id, c),
                None => api::replay_url(run_id),
            };
            let trial = e
                .corr_id
                .clone()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            view! { <li><a class="evidence" href=href>{label}</a>{trial}</li> }
        })
        .collect_view();
    view! { <ul class="evidence-list">{items}</ul> }
}

/// Findings and proposals; nothing when the record has neither.
pub fn findings_view(record: &RunRecord) -> Option<impl IntoView + use<>> {
    if record.findings.is_empty() && record.proposals.is_empty() && record.rewrite.is_none() {
        return None;
    }
    let run_id = record.run.id.clone();
    let findings = record
        .findings
        .iter()
        .map(|f| finding_item(&run_id, f))
        .collect_view();
    let proposals = record
        .proposals
        .iter()
        .map(|p| proposal_item(&run_id, p))
        .collect_view();
    let rewrite = record.rewrite.as_ref().map(rewrite_view);
    Some(view! {
        <section class="findings">
            <h3>"What the tapes show about the tools"</h3>
            {rewrite}
            {(!record.findings.is_empty()).then(|| view! { <h4>"Findings"</h4> })}
            <ul class="finding-list">{findings}</ul>
            {(!record.proposals.is_empty()).then(|| view! { <h4>"Proposed rewrites"</h4> })}
            <ul class="proposal-list">{proposals}</ul>
        </section>
    })
}

/// One finding: its kind, the tool (and parameter) it is about, and the
/// tape lines behind it.
fn finding_item(run_id: &str, f: &Finding) -> impl IntoView + use<> {
    let kind = fitness_shared::wire_name::wire_name(&f.kind)
        .map(|k| kind_words(&k))
        .unwrap_or_default();
    let target = match &f.parameter {
        Some(p) => format!("{}.{p}", f.tool),
        None => f.tool.clone(),
    };
    view! {
        <li class="finding" id=format!("finding-{}", f.id)>
            <span class="chip">{kind}</span>" "
            <code>{target}</code>": "{f.summary.clone()}
            {evidence_list(run_id, &f.evidence)}
        </li>
    }
}

/// One proposed rewrite: what it changes, the findings it answers, why,
/// and the tape lines behind it.
fn proposal_item(run_id: &str, p: &Proposal) -> impl IntoView + use<> {
    let mut changes = Vec::new();
    if let Some(d) = &p.change.description {
        changes.push(format!("Description becomes: {d}"));
    }
    if let Some(d) = &p.change.append_description {
        changes.push(format!("Description gains: {d}"));
    }
    for (param, d) in &p.change.parameter_descriptions {
        changes.push(format!("Parameter {param} is described as: {d}"));
    }
    for (name, v) in &p.change.annotations {
        changes.push(format!("Annotation {name} = {v}"));
    }
    let answers = p
        .answers
        .iter()
        .map(|a| view! { <a href=format!("#finding-{a}")>{a.clone()}</a>" " })
        .collect_view();
    view! {
        <li class="proposal">
            <p><code>{p.tool.clone()}</code>" "<span class="chip">{p.source.clone()}</span>" answers "{answers}</p>
            <ul>{changes.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}</ul>
            <p class="rationale">{p.rationale.clone()}</p>
            {evidence_list(run_id, &p.evidence)}
        </li>
    }
}

/// The before/after link of a rewrite check, and what the re-run changed.
fn rewrite_view(r: &RewriteLink) -> impl IntoView + use<> {
    let role = match r.role {
        RewriteRole::Before => {
            "This run is the before side of a rewrite check; the after run drove the same suite with the proposed descriptions."
        }
        RewriteRole::After => {
            "This run is the after side of a rewrite check: the same suite, driven with the proposed descriptions substituted."
        }
    };
    let side = |i: &Option<fitness_shared::stats::Interval>| {
        i.as_ref()
            .map(fitness_shared::stats::Interval::text)
            .unwrap_or_else(|| "no interval (the run did not score)".to_owned())
    };
    let difference = r
        .delta
        .difference
        .map(|d| format!("{:+.1} points", d * 100.0))
        .unwrap_or_else(|| "no difference to state".to_owned());
    let separated = if r.delta.separated {
        "The intervals are separated."
    } else {
        "The intervals overlap: no change is established."
    };
    view! {
        <div class="rewrite-link">
            <p>{role}" "<a class="other-run" href=api::record_page_url(&r.other_run)>{format!("Open the other run ({})", r.other_run)}</a></p>
            <ul>
                <li>{format!("Before: {}", side(&r.delta.before))}</li>
                <li>{format!("After: {}", side(&r.delta.after))}</li>
                <li>{format!("Difference: {difference}. {separated}")}</li>
            </ul>
            <p>{r.explain.clone()}</p>
        </div>
    }
}
