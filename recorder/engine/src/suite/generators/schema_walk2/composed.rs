//! The walk's model of what the server holds, handed to the composer
//! ([`crate::suite::compose`]): the questions it composes, proved against
//! the server (each reference query run, everything read again in a fresh
//! process, opened by the walk), as candidates ahead of the walk's own. The ledger gets two
//! moves: what was modelled, and what was composed and proved.

use std::collections::BTreeMap;

use fitness_shared::record::DiscoveryMove;

use super::exploration::Exploration;
use crate::mcp::connect::Session;
use crate::suite::compose::{self, prove};
use crate::suite::generators::seam::GenerationInput;
use crate::suite::generators::walk::WalkStats;
use crate::suite::task::Candidate;

/// The composed candidates (those a rule already refuses among them, so
/// admission rejects them by name), and what each answer was read from.
pub(super) async fn composed(
    input: &GenerationInput<'_>,
    ex: &Exploration,
    want: usize,
    stats: &mut WalkStats,
    fresh: Result<&Session, &String>,
) -> (Vec<Candidate>, BTreeMap<String, String>) {
    let mut model = ex.holdings.clone();
    model.setup = ex.setup.clone();
    let holdings = &model;
    if holdings.kinds.is_empty() && holdings.notes.is_empty() {
        return (Vec::new(), BTreeMap::new());
    }
    stats.discovery.push(DiscoveryMove {
        name: "model".into(),
        tool: None,
        tried: format!(
            "{} kind{} of record read whole",
            holdings.kinds.len(),
            if holdings.kinds.len() == 1 { "" } else { "s" }
        ),
        found: holdings
            .kinds
            .iter()
            .map(|k| {
                format!(
                    "{} ({} records, {} fields; {})",
                    k.name,
                    k.records.len(),
                    k.fields.len(),
                    k.complete.as_deref().unwrap_or("not known to be complete")
                )
            })
            .chain(holdings.notes.iter().cloned())
            .collect::<Vec<_>>()
            .join("; "),
        worked: !holdings.kinds.is_empty(),
    });
    let mut items = compose::compose(holdings, input.opts.seed, want);
    if items.is_empty() {
        return (Vec::new(), BTreeMap::new());
    }
    let proved = prove::prove(
        &mut items,
        holdings,
        input.session,
        fresh.map_err(Clone::clone),
        input.session.call_limit(),
        input.opts.seed,
    )
    .await;
    stats.calls += proved.calls;
    let refused = items.iter().filter(|c| c.disproved.is_some()).count();
    stats.discovery.push(DiscoveryMove {
        name: "compose".into(),
        tool: None,
        tried: format!(
            "{} questions composed over the model ({})",
            items.len(),
            shapes(&items)
        ),
        found: format!(
            "{} agreed with their reference query; {} read again in a fresh server process and unchanged{}; {refused} refused by a rule",
            proved.agreed,
            proved.fresh,
            proved
                .no_fresh
                .as_deref()
                .map(|w| format!(" (none: {w})"))
                .unwrap_or_default()
        ),
        worked: items.len() > refused,
    });
    let mut observed = BTreeMap::new();
    let candidates = items
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let id = format!("{}c{}", input.opts.id_prefix, i + 1);
            // What the answer was read from: the reference query's result,
            // else the records the listing's calls gave, as computed.
            let evidence = c
                .evidence
                .clone()
                .unwrap_or_else(|| format!("computed from the records read: {}", c.how));
            observed.insert(id.clone(), evidence);
            c.candidate(id)
        })
        .collect();
    (candidates, observed)
}

/// `3 aggregate, 2 comparison, 1 set`.
fn shapes(items: &[compose::Composed]) -> String {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for c in items {
        *by.entry(c.shape.as_str()).or_default() += 1;
    }
    by.into_iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}
