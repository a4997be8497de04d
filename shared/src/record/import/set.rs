//! What belongs to the imported set, not to one record: standing notes
//! (the notes every run of a generator carries) and attempt numbers per
//! server.

use std::collections::BTreeMap;

use serde_json::Value;

use super::read::ImportError;
use crate::integrity;
use crate::record::model::*;
use crate::record::v1::*;

pub(super) fn generator_label(r: &RecordV1) -> &str {
    r.run
        .generator_version
        .as_deref()
        .filter(|g| !g.is_empty())
        .unwrap_or("generator not recorded")
}

pub(super) struct Standing {
    pub(super) sets: BTreeMap<String, StandingNotesSet>,
    /// generator label -> (set id, notes)
    pub(super) by_generator: BTreeMap<String, (String, Vec<String>)>,
}

pub(super) fn standing_notes(runs: &[RecordV1]) -> Result<Standing, ImportError> {
    let mut groups: BTreeMap<&str, Vec<&RecordV1>> = BTreeMap::new();
    for r in runs {
        groups.entry(generator_label(r)).or_default().push(r);
    }
    let mut sets = BTreeMap::new();
    let mut by_generator = BTreeMap::new();
    for (generator, group) in groups {
        if group.len() < 2 {
            continue;
        }
        let mut common: Vec<String> = Vec::new();
        for note in &group[0].methods {
            if !common.contains(note) && group.iter().all(|r| r.methods.contains(note)) {
                common.push(note.clone());
            }
        }
        if common.is_empty() {
            continue;
        }
        let set = StandingNotesSet {
            generator: generator.to_owned(),
            notes: common.clone(),
        };
        let value = serde_json::to_value(&set).unwrap_or(Value::Null);
        let hash = integrity::record_hash(&value).map_err(|source| ImportError::Integrity {
            run: format!("standing notes of {generator}"),
            source,
        })?;
        let id = format!("sha256:{hash}");
        sets.insert(id.clone(), set);
        by_generator.insert(generator.to_owned(), (id, common));
    }
    Ok(Standing { sets, by_generator })
}

pub(super) fn attempts(runs: &[RecordV1]) -> Vec<Option<Attempt>> {
    let mut by_slug: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        by_slug.entry(r.server.slug.as_str()).or_default().push(i);
    }
    let mut out = vec![None; runs.len()];
    for (_, mut idx) in by_slug {
        // Oldest first; ties keep file order (the sort is stable).
        idx.sort_by(|a, b| runs[*a].run.started_at.cmp(&runs[*b].run.started_at));
        let of = idx.len() as u32;
        for (pos, &i) in idx.iter().enumerate() {
            let others = idx
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| runs[j].run.id.clone())
                .collect();
            out[i] = Some(Attempt {
                index: pos as u32 + 1,
                of,
                others,
            });
        }
    }
    out
}
