//! Questions over a kind of links: records with no label of their own
//! whose fields name records of labelled kinds (a graph's relations `from`
//! and `to`, a join table's `book_id` and `author_id`), often with the
//! kind of link (`relationType`). Who is linked to one record, by a kind
//! of link (a set, and how many); and a value of the record one record
//! links to (a link followed, two reads where the server needs them).

use std::collections::BTreeMap;

use fitness_shared::record::TaskShape;
use rand::RngExt;
use rand::rngs::ChaCha8Rng;
use serde_json::{Map, Value};

use super::fields::{self, Field, Role, Scalar};
use super::plans::{Known, Link};
use super::question::{Answer, Composed};
use super::sql;
use super::words;

/// One end of a link: the kind its field names and how.
type End<'k, 'a> = (&'k Known<'a>, &'k Link);
/// A record.
type Record = Map<String, Value>;
/// One link: the record it goes from, its kind, the record it goes to.
type Linked<'r> = (&'r Record, Option<Scalar>, &'r Record);

/// Plans over `a`, a kind of links whose first two `ends` name the
/// records a link goes from and to.
pub(super) fn over_edges(
    a: &Known<'_>,
    ends: &[End<'_, '_>],
    rng: &mut ChaCha8Rng,
) -> Vec<Composed> {
    let mut out = Vec::new();
    let (Some(&(b, from)), Some(&(c, to))) = (ends.first(), ends.get(1)) else {
        return out;
    };
    if a.label.is_some() || b.label.is_none() || c.label.is_none() {
        return out;
    }
    let rel = a
        .with_role(Role::Category)
        .find(|f| f.name != from.from_field && f.name != to.from_field);
    // Every link: the record it goes from, its kind, the record it goes to.
    let by = |k: &Known<'_>, link: &Link| -> BTreeMap<String, Map<String, Value>> {
        k.kind
            .records
            .iter()
            .filter_map(|r| Some((fields::value(r, &link.to_field)?.text(), r.clone())))
            .collect()
    };
    let (sources, targets) = (by(b, from), by(c, to));
    let links: Vec<Linked<'_>> = a
        .kind
        .records
        .iter()
        .filter_map(|r| {
            let s = sources.get(&fields::value(r, &from.from_field)?.text())?;
            let t = targets.get(&fields::value(r, &to.from_field)?.text())?;
            let v = match rel {
                Some(f) => Some(fields::value(r, &f.name)?),
                None => None,
            };
            Some((s, v, t))
        })
        .collect();
    if links.len() < 3 {
        return out;
    }
    let calls = || {
        let mut calls = a.kind.read_calls();
        for k in [b, c] {
            for call in k.kind.read_calls() {
                if !calls.contains(&call) {
                    calls.push(call);
                }
            }
        }
        calls
    };
    let b_label = b.label.as_ref().map(|l| l.name.clone()).unwrap_or_default();
    let label_of = |r: &Map<String, Value>| fields::value(r, &b_label).map(|v| v.text());
    // Who is linked to one record: the largest group of a kind of link to
    // one target, two of them.
    let mut groups: Vec<(Option<Scalar>, &Record, Vec<String>)> = Vec::new();
    for (s, v, t) in &links {
        let Some(member) = label_of(s) else { continue };
        match groups.iter_mut().find(|(gv, gt, _)| gv == v && *gt == *t) {
            Some((_, _, m)) if !m.contains(&member) => m.push(member),
            Some(_) => {}
            None => groups.push((v.clone(), t, vec![member])),
        }
    }
    groups.retain(|(_, _, m)| m.len() >= 2);
    groups.sort_by_key(|(_, _, m)| std::cmp::Reverse(m.len()));
    for (v, t, members) in groups.into_iter().take(2) {
        let Some((target, tv)) = c.named(t) else {
            continue;
        };
        let kind = match (&v, rel) {
            (Some(v), Some(_)) => format!("a {} {}", words::value(v), a.noun.one),
            _ => format!("a {}", a.noun.one),
        };
        let others: Vec<String> = b
            .labels()
            .into_iter()
            .filter(|l| !members.contains(l))
            .collect();
        let statement = |select: &str| -> Option<String> {
            if select.is_empty() {
                return None;
            }
            let (ta, tb) = (a.table()?, b.table()?);
            let c_label = c.label.as_ref()?;
            let mut cond = format!(
                "x.{} IN (SELECT {} FROM {} WHERE {} = {})",
                sql::ident(&to.from_field)?,
                sql::ident(&to.to_field)?,
                c.table()?,
                sql::ident(&c_label.name)?,
                sql::literal(&tv)
            );
            if let (Some(f), Some(v)) = (rel, &v) {
                cond.push_str(&format!(
                    " AND x.{} = {}",
                    sql::ident(&f.name)?,
                    sql::literal(v)
                ));
            }
            Some(format!(
                "SELECT {select} AS answer FROM {ta} AS x JOIN {tb} AS y ON x.{} = y.{} WHERE {cond}",
                sql::ident(&from.from_field)?,
                sql::ident(&from.to_field)?
            ))
        };
        let reference = |select: String| solution(a, b, c, statement(&select), &calls);
        let label = sql::ident(&b_label);
        let (solution_set, reference_set) = reference(
            label
                .as_deref()
                .map(|l| format!("DISTINCT y.{l}"))
                .unwrap_or_default(),
        );
        let how = format!(
            "every {} read whose {} names {target}{}",
            a.noun.one,
            to.from_field,
            v.as_ref()
                .zip(rel)
                .map(|(v, f)| format!(" and whose {} is {}", f.name, v.text()))
                .unwrap_or_default()
        );
        out.push(Composed::new(
            format!(
                "Which {} have {kind} to {target}? Name every one.",
                b.noun.many
            ),
            TaskShape::Set,
            Answer::Set {
                members: members.clone(),
                others,
            },
            solution_set,
            reference_set,
            format!("the {} of {how}", b_label),
        ));
        let (solution_count, reference_count) = reference(
            label
                .map(|l| format!("COUNT(DISTINCT y.{l})"))
                .unwrap_or_default(),
        );
        out.push(Composed::new(
            format!("How many {} have {kind} to {target}?", b.noun.many),
            TaskShape::Aggregate,
            Answer::count(members.len()),
            solution_count,
            reference_count,
            format!("counted over {how}"),
        ));
    }
    // A link followed: a value of the one record a record links to by a
    // kind of link.
    let asked: Option<&Field> = c
        .fields
        .iter()
        .filter(|f| Some(&f.name) != c.label.as_ref().map(|l| &l.name) && f.name != to.to_field)
        .find(|f| matches!(f.role, Role::Category | Role::Measure | Role::Date));
    if let (Some(asked), Some(_)) = (asked, rel) {
        let single: Vec<&Linked<'_>> = links
            .iter()
            .filter(|(s, v, _)| {
                links
                    .iter()
                    .filter(|(s2, v2, _)| label_of(s2) == label_of(s) && v2 == v)
                    .count()
                    == 1
            })
            .collect();
        if !single.is_empty() {
            let (s, v, t) = single[rng.random_range(0..single.len())];
            if let (Some((source, _)), Some(v), Some(value)) =
                (b.named(s), v, fields::value(t, &asked.name))
            {
                let others = asked
                    .distinct
                    .iter()
                    .filter(|d| **d != value)
                    .map(Scalar::text)
                    .collect();
                out.push(Composed::new(
                    format!(
                        "What is the {} of the {} that {source} has a {} {} to?",
                        words::field(&asked.name),
                        c.noun.one,
                        words::value(v),
                        a.noun.one
                    ),
                    TaskShape::MultiStep,
                    Answer::of_scalar(&value, asked.decimals, others),
                    calls(),
                    None,
                    format!(
                        "followed the one {} from {source} of that kind to the {} it names, and read its {}",
                        a.noun.one, c.noun.one, asked.name
                    ),
                ));
            }
        }
    }
    out
}

/// The calls and reference query of a question over the links: one query
/// where all three kinds are tables behind one query tool, else the
/// listings' calls.
fn solution(
    a: &Known<'_>,
    b: &Known<'_>,
    c: &Known<'_>,
    statement: Option<String>,
    calls: &dyn Fn() -> Vec<crate::model::types::PlannedCall>,
) -> (
    Vec<crate::model::types::PlannedCall>,
    Option<crate::model::types::PlannedCall>,
) {
    use crate::suite::holdings::Reach;
    let tool = |k: &Known<'_>| match &k.kind.reach {
        Reach::Query(q) => Some(q.tool.clone()),
        Reach::Calls(_) => None,
    };
    match (&a.kind.reach, statement) {
        (Reach::Query(q), Some(s))
            if tool(b) == Some(q.tool.clone()) && tool(c) == Some(q.tool.clone()) =>
        {
            let call = q.call(&s);
            (vec![call.clone()], Some(call))
        }
        _ => (calls(), None),
    }
}
