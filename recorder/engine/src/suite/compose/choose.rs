//! The questions over a model, spread by shape: every plan over each
//! complete kind and each link between two, taken shape by shape.

use fitness_shared::record::TaskShape;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use super::question::Composed;
use super::{edges, fields, plans};
use crate::suite::holdings::Holdings;

/// Questions over every complete kind and every link between two, best
/// spread first: shapes taken in turn, kinds in turn within a shape, so a
/// suite of any size holds counts, ranks, comparisons, links and sets
/// before a second of any. At most `want`.
pub fn compose(holdings: &Holdings, seed: u64, want: usize) -> Vec<Composed> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x636f_6d70); // "comp"
    let mut known: Vec<plans::Known<'_>> = Vec::new();
    for k in holdings
        .kinds
        .iter()
        .filter(|k| k.complete.is_some() && k.records.len() >= 3)
        .map(plans::Known::of)
    {
        // The same records read twice (a listing, then each entry read):
        // one kind asks about them.
        if known.iter().any(|x| x.same_records(&k)) {
            continue;
        }
        known.push(k);
    }
    // Every link between two kinds, found once. Two kinds of one name are
    // the same records read two ways (a listing, and each entry read): no
    // link between them.
    let mut links: Vec<(usize, usize, plans::Link)> = Vec::new();
    for (i, a) in known.iter().enumerate() {
        for (j, b) in known.iter().enumerate() {
            if i != j && a.kind.name != b.kind.name {
                links.extend(plans::links(a, b).into_iter().map(|l| (i, j, l)));
            }
        }
    }
    // A field that names records of another kind (an entry's `account`
    // code) is no measure to total, whatever its values look like.
    for (i, _, link) in &links {
        for f in known[*i]
            .fields
            .iter_mut()
            .filter(|f| f.name == link.from_field && f.role == fields::Role::Measure)
        {
            f.role = fields::Role::Other;
        }
    }
    let mut all: Vec<Composed> = Vec::new();
    for k in &known {
        all.extend(plans::over_kind(k, &mut rng));
    }
    for (i, j, link) in &links {
        all.extend(plans::over_link(&known[*i], &known[*j], link, &mut rng));
    }
    // A kind of links (a graph's relations, a join table): who is linked
    // to a record, and a link followed.
    for (i, a) in known.iter().enumerate().filter(|(_, k)| k.label.is_none()) {
        let ends: Vec<(&plans::Known<'_>, &plans::Link)> = links
            .iter()
            .filter(|(from, _, _)| *from == i)
            .map(|(_, j, l)| (&known[*j], l))
            .collect();
        all.extend(edges::over_edges(a, &ends, &mut rng));
    }
    // A question read by calls starts where the records were read from: a
    // project registered first.
    for c in all.iter_mut().filter(|c| c.reference.is_none()) {
        c.solution.splice(0..0, holdings.setup.iter().cloned());
    }
    spread(all, want)
}

/// The shapes in the order a suite takes them: the ones that need the
/// most of a server first.
const SHAPE_ORDER: [TaskShape; 5] = [
    TaskShape::MultiStep,
    TaskShape::Aggregate,
    TaskShape::Comparison,
    TaskShape::Set,
    TaskShape::Lookup,
];

/// Round-robin over shapes (in [`SHAPE_ORDER`]), each shape's questions in
/// the order composed; a disproved question is kept, so admission rejects
/// it by name, and counts toward nothing.
fn spread(all: Vec<Composed>, want: usize) -> Vec<Composed> {
    let mut by_shape: Vec<std::collections::VecDeque<Composed>> =
        SHAPE_ORDER.iter().map(|_| Default::default()).collect();
    let mut disproved = Vec::new();
    for c in all {
        if c.disproved.is_some() {
            disproved.push(c);
            continue;
        }
        let i = SHAPE_ORDER.iter().position(|s| *s == c.shape).unwrap_or(0);
        by_shape[i].push_back(c);
    }
    let mut out = Vec::new();
    while out.len() < want && by_shape.iter().any(|q| !q.is_empty()) {
        for q in &mut by_shape {
            if out.len() >= want {
                break;
            }
            if let Some(c) = q.pop_front() {
                out.push(c);
            }
        }
    }
    out.extend(disproved.into_iter().take(want.div_ceil(4)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::holdings::RecordKind;
    use serde_json::{Value, json};

    fn kind(name: &str, rows: Value) -> RecordKind {
        RecordKind::of_rows(name, rows)
    }

    #[test]
    fn a_field_that_names_records_of_another_kind_is_never_totalled() {
        let accounts = kind(
            "accounts",
            json!([
                {"code": "1000", "name": "Cash", "kind": "asset"},
                {"code": "4000", "name": "Sales", "kind": "income"},
                {"code": "5000", "name": "Rent", "kind": "expense"},
                {"code": "5100", "name": "Utilities", "kind": "expense"},
            ]),
        );
        let entries = kind(
            "entries",
            json!([
                {"memo": "October rent", "account": "5000", "amount": "1200.00"},
                {"memo": "Stall takings", "account": "4000", "amount": "3400.50"},
                {"memo": "Electricity", "account": "5100", "amount": "186.40"},
                {"memo": "Water", "account": "5100", "amount": "64.99"},
            ]),
        );
        let holdings = Holdings {
            kinds: vec![accounts, entries],
            ..Default::default()
        };
        let prompts: Vec<String> = compose(&holdings, 1, usize::MAX)
            .into_iter()
            .map(|c| c.prompt)
            .collect();
        assert!(
            prompts.iter().any(|p| p.contains("sum of the amount")),
            "{prompts:#?}"
        );
        assert!(
            !prompts
                .iter()
                .any(|p| p.contains("sum of the account") || p.contains("highest account")),
            "{prompts:#?}"
        );
    }
}
