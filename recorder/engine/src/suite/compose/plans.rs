//! Query plans over a complete kind (and two linked kinds): a filter on a
//! value that repeats, a count, a total or an average, the largest,
//! smallest, earliest or latest, two records compared, a link followed
//! from one record to another, the set of records that meet a condition.
//! Each answer is computed here from every record the harness read; where
//! the server takes a query language, the plan also writes the query that
//! computes it, which must agree when it is run through the server.

use std::collections::BTreeMap;

use fitness_shared::record::TaskShape;
use rand::RngExt;
use rand::rngs::ChaCha8Rng;
use serde_json::{Map, Value};

use super::fields::{self, Field, Role, Scalar};
use super::question::{Answer, Composed};
use super::sql;
use super::words::{self, Noun};
use crate::suite::holdings::{Reach, RecordKind};

/// A kind ready to ask about: its records, fields, label and noun.
pub(super) struct Known<'a> {
    pub kind: &'a RecordKind,
    pub fields: Vec<Field>,
    pub label: Option<Field>,
    pub noun: Noun,
}

impl<'a> Known<'a> {
    pub fn of(kind: &'a RecordKind) -> Known<'a> {
        let fields = fields::profile(kind);
        let label = fields::label_field(&fields).cloned();
        Known {
            noun: Noun::of(&kind.name),
            kind,
            fields,
            label,
        }
    }

    pub(super) fn with_role(&self, role: Role) -> impl Iterator<Item = &Field> {
        let label = self.label.as_ref().map(|l| l.name.clone());
        self.fields
            .iter()
            .filter(move |f| f.role == role && Some(&f.name) != label.as_ref())
    }

    /// A record named in words, by its label.
    pub(super) fn named(&self, record: &Map<String, Value>) -> Option<(String, Scalar)> {
        let label = self.label.as_ref()?;
        let v = fields::value(record, &label.name)?;
        Some((
            words::record(&self.noun, &label.name, label.role == Role::Key, &v),
            v,
        ))
    }

    /// Are `other`'s records these, read another way: as many, and named
    /// alike (their labels the same names) or keyed alike (a key holding
    /// the values a key of these does: a commit's hash, listed and then
    /// shown)? A field that names other records (a project's lead) is
    /// neither.
    pub fn same_records(&self, other: &Known<'_>) -> bool {
        type Values = std::collections::BTreeSet<String>;
        let values = |f: &Field| -> Values { f.distinct.iter().map(Scalar::text).collect() };
        let keys = |k: &Known<'_>| -> Vec<Values> {
            k.fields
                .iter()
                .filter(|f| f.role == Role::Key)
                .map(values)
                .collect()
        };
        let named_alike = match (&self.label, &other.label) {
            (Some(a), Some(b)) => values(a) == values(b),
            _ => false,
        };
        let mine = keys(self);
        self.kind.records.len() == other.kind.records.len()
            && (named_alike || keys(other).iter().any(|k| mine.contains(k)))
    }

    /// Every record's label, as text.
    pub(super) fn labels(&self) -> Vec<String> {
        let Some(label) = &self.label else {
            return Vec::new();
        };
        self.kind
            .records
            .iter()
            .filter_map(|r| fields::value(r, &label.name).map(|v| v.text()))
            .collect()
    }

    /// The solution: the query computing the answer, or the calls that
    /// read every record.
    fn solution(
        &self,
        statement: Option<String>,
    ) -> (
        Vec<crate::model::types::PlannedCall>,
        Option<crate::model::types::PlannedCall>,
    ) {
        match (&self.kind.reach, statement) {
            (Reach::Query(q), Some(s)) => {
                let call = q.call(&s);
                (vec![call.clone()], Some(call))
            }
            _ => (self.kind.read_calls(), None),
        }
    }

    pub(super) fn table(&self) -> Option<&str> {
        match &self.kind.reach {
            Reach::Query(q) => Some(&q.table),
            Reach::Calls(_) => None,
        }
    }
}

/// A category field, one of its values, and the records that hold it.
type Filter<'k> = (&'k Field, Scalar, Vec<&'k Map<String, Value>>);

/// The value that repeats and the records that hold it, for each category
/// field: the values held by two records or more but not all, most held
/// first, ties in the order read.
fn filters<'k>(k: &'k Known<'_>) -> Vec<Filter<'k>> {
    let n = k.kind.records.len();
    let mut out = Vec::new();
    for f in k.with_role(Role::Category) {
        let mut by_value: Vec<(Scalar, Vec<&Map<String, Value>>)> = Vec::new();
        for r in &k.kind.records {
            let Some(v) = fields::value(r, &f.name) else {
                continue;
            };
            match by_value.iter_mut().find(|(x, _)| *x == v) {
                Some((_, rs)) => rs.push(r),
                None => by_value.push((v, vec![r])),
            }
        }
        by_value.retain(|(_, rs)| rs.len() >= 2 && rs.len() < n);
        by_value.sort_by_key(|(_, rs)| std::cmp::Reverse(rs.len()));
        for (v, rs) in by_value.into_iter().take(2) {
            out.push((f, v, rs));
        }
    }
    out
}

/// `have "B-12" as their shelf`.
fn having(f: &Field, v: &Scalar) -> String {
    format!(
        "have {} as their {}",
        words::value(v),
        words::field(&f.name)
    )
}

/// Every plan over one kind.
pub(super) fn over_kind(k: &Known<'_>, rng: &mut ChaCha8Rng) -> Vec<Composed> {
    let mut out = Vec::new();
    // Questions about records named one by one.
    let mut named = Vec::new();
    let n = k.kind.records.len();
    let filters = filters(k);
    let table = k.table();
    // Counts under a filter.
    for (f, v, rs) in &filters {
        let statement = table.and_then(|t| {
            Some(format!(
                "SELECT COUNT(*) AS answer FROM {t} WHERE {} = {}",
                sql::ident(&f.name)?,
                sql::literal(v)
            ))
        });
        let (solution, reference) = k.solution(statement);
        out.push(Composed::new(
            format!("How many {} {}?", k.noun.many, having(f, v)),
            TaskShape::Aggregate,
            Answer::count(rs.len()),
            solution,
            reference,
            format!(
                "counted over all {n} {} read: those whose {} is {}",
                k.noun.many,
                f.name,
                v.text()
            ),
        ));
    }
    // Totals and averages of a measure, over all or under a filter.
    for m in k.with_role(Role::Measure) {
        let decimals = m.decimals;
        let of = |rs: &[&Map<String, Value>]| -> Vec<f64> {
            rs.iter()
                .filter_map(|r| fields::number(r, &m.name))
                .collect()
        };
        let all: Vec<&Map<String, Value>> = k.kind.records.iter().collect();
        let xs = of(&all);
        if xs.len() >= 3 {
            let total: f64 = xs.iter().sum();
            let statement = table.and_then(|t| {
                Some(format!(
                    "SELECT SUM({}) AS answer FROM {t}",
                    sql::ident(&m.name)?
                ))
            });
            let (solution, reference) = k.solution(statement);
            out.push(Composed::new(
                format!(
                    "What is the sum of the {} of all the {}?",
                    words::field(&m.name),
                    k.noun.many
                ),
                TaskShape::Aggregate,
                Answer::number(total, decimals),
                solution,
                reference,
                format!("summed over the {} of all {n} {}", m.name, k.noun.many),
            ));
        }
        if let Some((f, v, rs)) = filters.first() {
            let xs = of(rs);
            if xs.len() >= 2 {
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                let statement = table.and_then(|t| {
                    Some(format!(
                        "SELECT AVG({}) AS answer FROM {t} WHERE {} = {}",
                        sql::ident(&m.name)?,
                        sql::ident(&f.name)?,
                        sql::literal(v)
                    ))
                });
                let (solution, reference) = k.solution(statement);
                out.push(Composed::new(
                    format!(
                        "What is the average {} of the {} that {}?",
                        words::field(&m.name),
                        k.noun.many,
                        having(f, v)
                    ),
                    TaskShape::Aggregate,
                    Answer::number(mean, decimals.max(2)),
                    solution,
                    reference,
                    format!(
                        "averaged over the {} of the {} {} whose {} is {}",
                        m.name,
                        xs.len(),
                        k.noun.many,
                        f.name,
                        v.text()
                    ),
                ));
            }
        }
        // The largest and the smallest, named by their label.
        out.extend(extreme(k, m, true));
        out.extend(extreme(k, m, false));
        named.extend(difference(k, m, rng));
    }
    for d in k.with_role(Role::Date) {
        out.extend(extreme(k, d, false));
        out.extend(extreme(k, d, true));
    }
    // The value most records share, where one does (a tie has two right
    // answers, and no question is asked); a kind of links is asked about
    // by its ends ([`super::edges`]).
    for f in k.with_role(Role::Category).filter(|_| k.label.is_some()) {
        let mut by: Vec<(Scalar, usize)> = Vec::new();
        for v in k
            .kind
            .records
            .iter()
            .filter_map(|r| fields::value(r, &f.name))
        {
            match by.iter_mut().find(|(x, _)| *x == v) {
                Some((_, c)) => *c += 1,
                None => by.push((v, 1)),
            }
        }
        by.sort_by_key(|(_, c)| std::cmp::Reverse(*c));
        let [(top, most), (_, next), ..] = by.as_slice() else {
            continue;
        };
        if most <= next {
            continue;
        }
        let statement = table.and_then(|t| {
            let c = sql::ident(&f.name)?;
            Some(format!(
                "SELECT {c} AS answer FROM {t} GROUP BY {c} ORDER BY COUNT(*) DESC LIMIT 1"
            ))
        });
        let (solution, reference) = k.solution(statement);
        out.push(Composed::new(
            format!(
                "Which {} is the most common among the {}?",
                words::field(&f.name),
                k.noun.many
            ),
            TaskShape::Comparison,
            Answer::Text {
                value: top.text(),
                others: by[1..].iter().map(|(v, _)| v.text()).collect(),
            },
            solution,
            reference,
            format!(
                "the {} held by most of the {n} {} read ({most}; the next {next})",
                f.name, k.noun.many
            ),
        ));
    }
    // The set of records under a filter.
    let labels = k.labels();
    if let Some(label) = &k.label {
        for (f, v, rs) in filters.iter().filter(|(_, _, rs)| rs.len() <= 6) {
            let members: Vec<String> = rs
                .iter()
                .filter_map(|r| fields::value(r, &label.name).map(|x| x.text()))
                .collect();
            let others: Vec<String> = labels
                .iter()
                .filter(|l| !members.contains(l))
                .cloned()
                .collect();
            let statement = table.and_then(|t| {
                Some(format!(
                    "SELECT {} AS answer FROM {t} WHERE {} = {}",
                    sql::ident(&label.name)?,
                    sql::ident(&f.name)?,
                    sql::literal(v)
                ))
            });
            let (solution, reference) = k.solution(statement);
            out.push(Composed::new(
                format!("Which {} {}? Name every one.", k.noun.many, having(f, v)),
                TaskShape::Set,
                Answer::Set { members, others },
                solution,
                reference,
                format!(
                    "the {} of every {} whose {} is {}, over all {n} read",
                    label.name,
                    k.noun.one,
                    f.name,
                    v.text()
                ),
            ));
        }
    }
    // One lookup: a value of a record named by its label.
    named.extend(lookup(k, rng));
    // How many records there are in all: the one question a listing of
    // names alone supports.
    let statement = table.map(|t| format!("SELECT COUNT(*) AS answer FROM {t}"));
    let (solution, reference) = k.solution(statement);
    out.push(Composed::new(
        format!("How many {} are there?", k.noun.many),
        TaskShape::Aggregate,
        Answer::count(n),
        solution,
        reference,
        format!("counted every one of the {} read", k.noun.many),
    ));
    // Where the server counts the kind otherwise, every question over all
    // of its records has two right answers; one about named records has
    // one.
    if let Some(said) = &k.kind.counted_otherwise {
        for c in &mut out {
            c.disproved = Some((
                "two-right-answers",
                format!("over all the {}: {said}", k.noun.many),
            ));
        }
    }
    out.extend(named);
    out
}

/// The record with the largest (or smallest) value of `m`, named by its
/// label; two records sharing it give two right answers, and the plan is
/// refused for that.
fn extreme(k: &Known<'_>, m: &Field, largest: bool) -> Option<Composed> {
    let label = k.label.as_ref()?;
    let mut ranked: Vec<(Scalar, Scalar)> = k
        .kind
        .records
        .iter()
        .filter_map(|r| Some((fields::value(r, &m.name)?, fields::value(r, &label.name)?)))
        .collect();
    if ranked.len() < 3 {
        return None;
    }
    ranked.sort_by(|a, b| compare(&a.0, &b.0));
    if largest {
        ranked.reverse();
    }
    let top = ranked[0].0.clone();
    let winners: Vec<String> = ranked
        .iter()
        .filter(|(v, _)| *v == top)
        .map(|(_, l)| l.text())
        .collect();
    let others: Vec<String> = ranked
        .iter()
        .filter(|(v, _)| *v != top)
        .map(|(_, l)| l.text())
        .collect();
    let dated = m.role == Role::Date;
    let most = match (dated, largest) {
        (true, true) => "latest",
        (true, false) => "earliest",
        (false, true) => "highest",
        (false, false) => "lowest",
    };
    let statement = k.table().and_then(|t| {
        let f = sql::ident(&m.name)?;
        Some(format!(
            "SELECT {} AS answer FROM {t} WHERE {f} = (SELECT {}({f}) FROM {t})",
            sql::ident(&label.name)?,
            if largest { "MAX" } else { "MIN" }
        ))
    });
    let (solution, reference) = k.solution(statement);
    let field = if dated {
        words::date(&m.name)
    } else {
        words::field(&m.name)
    };
    let mut c = Composed::new(
        format!("Which {} has the {most} {field}?", k.noun.one),
        TaskShape::Comparison,
        Answer::Text {
            value: winners[0].clone(),
            others,
        },
        solution,
        reference,
        format!(
            "ranked all {} {} by {}, the {most} taken",
            ranked.len(),
            k.noun.many,
            m.name
        ),
    );
    if winners.len() > 1 {
        c.disproved = Some((
            "two-right-answers",
            format!(
                "{} {} share the {most} {} ({})",
                winners.len(),
                k.noun.many,
                m.name,
                top.text()
            ),
        ));
    }
    Some(c)
}

fn compare(a: &Scalar, b: &Scalar) -> std::cmp::Ordering {
    match (a, b) {
        (Scalar::Num { value: x, .. }, Scalar::Num { value: y, .. }) => x.total_cmp(y),
        _ => a.text().cmp(&b.text()),
    }
}

/// How much more of `m` one record has than another, both named.
fn difference(k: &Known<'_>, m: &Field, rng: &mut ChaCha8Rng) -> Option<Composed> {
    let label = k.label.as_ref()?;
    let named: Vec<(String, Scalar, f64)> = k
        .kind
        .records
        .iter()
        .filter_map(|r| {
            let (name, l) = k.named(r)?;
            Some((name, l, fields::number(r, &m.name)?))
        })
        .collect();
    if named.len() < 3 {
        return None;
    }
    let i = rng.random_range(0..named.len());
    let j = (i + 1 + rng.random_range(0..named.len() - 1)) % named.len();
    let (a, b) = if named[i].2 >= named[j].2 {
        (&named[i], &named[j])
    } else {
        (&named[j], &named[i])
    };
    let diff = a.2 - b.2;
    if diff <= 0.0 {
        return None;
    }
    let statement = k.table().and_then(|t| {
        let f = sql::ident(&m.name)?;
        let l = sql::ident(&label.name)?;
        Some(format!(
            "SELECT (SELECT {f} FROM {t} WHERE {l} = {}) - (SELECT {f} FROM {t} WHERE {l} = {}) AS answer",
            sql::literal(&a.1),
            sql::literal(&b.1)
        ))
    });
    let (solution, reference) = k.solution(statement);
    Some(Composed::new(
        format!(
            "What is the difference in {} between {} and {}?",
            words::field(&m.name),
            a.0,
            b.0
        ),
        TaskShape::Comparison,
        Answer::number(diff, m.decimals),
        solution,
        reference,
        format!("the {} of two {} read, subtracted", m.name, k.noun.many),
    ))
}

/// One value of one record, named by its label: the one plain lookup a
/// kind offers.
fn lookup(k: &Known<'_>, rng: &mut ChaCha8Rng) -> Option<Composed> {
    let label = k.label.as_ref()?;
    if label.role == Role::Key {
        return None;
    }
    let asked = k
        .fields
        .iter()
        .find(|f| matches!(f.role, Role::Category | Role::Measure | Role::Date))?;
    let records: Vec<&Map<String, Value>> = k
        .kind
        .records
        .iter()
        .filter(|r| fields::value(r, &asked.name).is_some())
        .collect();
    if records.is_empty() {
        return None;
    }
    let r = records[rng.random_range(0..records.len())];
    let (name, lv) = k.named(r)?;
    let v = fields::value(r, &asked.name)?;
    let statement = k.table().and_then(|t| {
        Some(format!(
            "SELECT {} AS answer FROM {t} WHERE {} = {}",
            sql::ident(&asked.name)?,
            sql::ident(&label.name)?,
            sql::literal(&lv)
        ))
    });
    let (solution, reference) = k.solution(statement);
    let others = asked
        .distinct
        .iter()
        .filter(|d| **d != v)
        .map(Scalar::text)
        .collect();
    Some(Composed::new(
        format!("What is the {} of {name}?", asked_words(asked)),
        TaskShape::Lookup,
        Answer::of_scalar(&v, asked.decimals, others),
        solution,
        reference,
        format!(
            "read from the {} of the one {} so named",
            asked.name, k.noun.one
        ),
    ))
}

/// A field of `from` whose values each name a record of `to` by a unique
/// field (`books.author_id` names `authors.id`), and whose name says so.
pub(super) struct Link {
    pub from_field: String,
    pub to_field: String,
}

/// The links from `a` to `b`: a field whose values are all values of a
/// unique field of `b`, and whose name says so (`author_id` names an
/// `authors` key), or whose values are names (texts, two or more of them)
/// that are all `b`'s labels (a relation's `to`).
pub(super) fn links(a: &Known<'_>, b: &Known<'_>) -> Vec<Link> {
    let mut out = Vec::new();
    let b_one = b
        .noun
        .one
        .rsplit(' ')
        .next()
        .unwrap_or(&b.noun.one)
        .to_owned();
    for fa in &a.fields {
        if a.label.as_ref().is_some_and(|l| l.name == fa.name) || fa.distinct.len() < 2 {
            continue;
        }
        let said = words::link(&fa.name);
        let named =
            said == b_one || said == b.noun.many || crate::access::words(&fa.name).contains(&b_one);
        let names = fa.distinct.iter().all(|v| matches!(v, Scalar::Text(_)));
        for fb in b
            .fields
            .iter()
            .filter(|f| matches!(f.role, Role::Key | Role::Label))
        {
            let targets: Vec<String> = fb.distinct.iter().map(Scalar::text).collect();
            let within = fa.distinct.iter().all(|v| targets.contains(&v.text()));
            if within && (named || (names && fb.role == Role::Label)) {
                out.push(Link {
                    from_field: fa.name.clone(),
                    to_field: fb.name.clone(),
                });
                break;
            }
        }
    }
    out
}

/// Plans that follow a link from `a` to `b`: a value of the record a
/// record points at, and how many records point at one.
pub(super) fn over_link(
    a: &Known<'_>,
    b: &Known<'_>,
    link: &Link,
    rng: &mut ChaCha8Rng,
) -> Vec<Composed> {
    let mut out = Vec::new();
    let (Some(a_label), Some(b_label)) = (&a.label, &b.label) else {
        return out;
    };
    let by_key: BTreeMap<String, &Map<String, Value>> = b
        .kind
        .records
        .iter()
        .filter_map(|r| Some((fields::value(r, &link.to_field)?.text(), r)))
        .collect();
    let via = words::link(&link.from_field);
    let same_query_tool = match (&a.kind.reach, &b.kind.reach) {
        (Reach::Query(x), Reach::Query(y)) => x.tool == y.tool,
        _ => false,
    };
    let solution = |statement: Option<String>| match (&a.kind.reach, statement) {
        (Reach::Query(q), Some(s)) if same_query_tool => {
            let call = q.call(&s);
            (vec![call.clone()], Some(call))
        }
        _ => {
            let mut calls = a.kind.read_calls();
            for c in b.kind.read_calls() {
                if !calls.contains(&c) {
                    calls.push(c);
                }
            }
            (calls, None)
        }
    };
    let joined = |select: &str, cond: &str| -> Option<String> {
        let (Some(ta), Some(tb)) = (a.table(), b.table()) else {
            return None;
        };
        Some(format!(
            "SELECT {select} AS answer FROM {ta} AS x JOIN {tb} AS y ON x.{} = y.{} WHERE {cond}",
            sql::ident(&link.from_field)?,
            sql::ident(&link.to_field)?
        ))
    };
    // A value of the record a record points at.
    let asked = b
        .fields
        .iter()
        .filter(|f| f.name != link.to_field && f.name != b_label.name)
        .find(|f| matches!(f.role, Role::Category | Role::Measure | Role::Date))
        .or_else(|| (b_label.name != link.to_field).then_some(b_label));
    if let Some(asked) = asked {
        let pointing: Vec<&Map<String, Value>> = a
            .kind
            .records
            .iter()
            .filter(|r| {
                fields::value(r, &link.from_field)
                    .and_then(|v| by_key.get(&v.text()))
                    .and_then(|t| fields::value(t, &asked.name))
                    .is_some()
            })
            .collect();
        if !pointing.is_empty() {
            let r = pointing[rng.random_range(0..pointing.len())];
            let target = by_key[&fields::value(r, &link.from_field)
                .map(|v| v.text())
                .unwrap_or_default()];
            if let (Some((name, la)), Some(v)) = (a.named(r), fields::value(target, &asked.name)) {
                let statement = (|| {
                    joined(
                        &format!("y.{}", sql::ident(&asked.name)?),
                        &format!("x.{} = {}", sql::ident(&a_label.name)?, sql::literal(&la)),
                    )
                })();
                let (solution, reference) = solution(statement);
                let others = asked
                    .distinct
                    .iter()
                    .filter(|d| **d != v)
                    .map(Scalar::text)
                    .collect();
                out.push(Composed::new(
                    format!("What is the {} of the {via} of {name}?", asked_words(asked)),
                    TaskShape::MultiStep,
                    Answer::of_scalar(&v, asked.decimals, others),
                    solution,
                    reference,
                    format!(
                        "followed {}.{} to the {} whose {} it names, and read its {}",
                        a.kind.name, link.from_field, b.noun.one, link.to_field, asked.name
                    ),
                ));
            }
        }
    }
    // How many records point at one named record.
    let mut counts: Vec<(Scalar, usize)> = Vec::new();
    for r in &b.kind.records {
        let (Some(key), Some(label)) = (
            fields::value(r, &link.to_field),
            fields::value(r, &b_label.name),
        ) else {
            continue;
        };
        let n = a
            .kind
            .records
            .iter()
            .filter(|x| fields::value(x, &link.from_field).is_some_and(|v| v.text() == key.text()))
            .count();
        if n >= 2 {
            counts.push((label, n));
        }
    }
    if !counts.is_empty() {
        let (label, n) = counts.swap_remove(rng.random_range(0..counts.len()));
        let statement = (|| {
            joined(
                "COUNT(*)",
                &format!(
                    "y.{} = {}",
                    sql::ident(&b_label.name)?,
                    sql::literal(&label)
                ),
            )
        })();
        let (solution, reference) = solution(statement);
        out.push(Composed::new(
            if words::bare(&via) {
                format!(
                    "How many {} have {} in their \"{}\" field?",
                    a.noun.many,
                    words::value(&label),
                    link.from_field
                )
            } else {
                format!(
                    "How many {} have {} as their {via}?",
                    a.noun.many,
                    words::value(&label)
                )
            },
            TaskShape::MultiStep,
            Answer::count(n),
            solution,
            reference,
            format!(
                "counted the {} whose {} names {}",
                a.noun.many, link.from_field, b.noun.one
            ),
        ));
    }
    out
}

/// A field asked for, in words: a date as a date (`hired` is "hired
/// date"), any other as [`words::field`] says it.
fn asked_words(f: &Field) -> String {
    if f.role == Role::Date {
        words::date(&f.name)
    } else {
        words::field(&f.name)
    }
}
