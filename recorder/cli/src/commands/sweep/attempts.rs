//! What a sweep's output directory already holds for each slot: the
//! attempts, read from the run directories themselves, so a sweep resumes
//! from nothing but the files (no state file to lose or corrupt).
//!
//! Attempt `N` of the slot tagged `T` is the run directory whose name ends
//! in `-T-aN`. An attempt completed when its record exists and its wire tape
//! does not end with the reason `interrupted`; any other attempt (no record:
//! the process was killed; or a VOID record written on Ctrl-C or SIGTERM)
//! was interrupted, and the slot is re-run as a new attempt, never continued.

use std::path::{Path, PathBuf};

use fitness_shared::record::RunRecord;

/// One attempt at a slot found on disk.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub number: u32,
    pub dir: PathBuf,
    pub state: AttemptState,
}

#[derive(Debug, Clone)]
pub enum AttemptState {
    /// A record exists and the run ran to its end (any outcome).
    Completed(Box<RunRecord>),
    /// The run was stopped before its end: `why` says how we know.
    Interrupted { why: String },
}

/// The run-id suffix of attempt `number` at the slot tagged `tag`.
pub fn run_tag(tag: &str, number: u32) -> String {
    format!("{tag}-a{number}")
}

/// Every attempt at the slot `tag` under `out`, oldest (lowest number) first.
pub fn scan(out: &Path, tag: &str) -> Vec<Attempt> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let needle = format!("-{tag}-a");
    let mut found: Vec<Attempt> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let at = name.rfind(&needle)?;
            let number: u32 = name[at + needle.len()..].parse().ok()?;
            let dir = e.path();
            Some(Attempt {
                number,
                state: state_of(&dir),
                dir,
            })
        })
        .collect();
    found.sort_by_key(|a| a.number);
    found
}

fn state_of(dir: &Path) -> AttemptState {
    let record_path = dir.join(fitness_shared::site::RECORD_FILE);
    let Ok(text) = std::fs::read_to_string(&record_path) else {
        return AttemptState::Interrupted {
            why: "no record: the run was killed".to_owned(),
        };
    };
    let record = match RunRecord::from_json(&text) {
        Ok(r) => r,
        Err(e) => {
            return AttemptState::Interrupted {
                why: format!("its record does not read: {e}"),
            };
        }
    };
    if tape_end_reason(&dir.join(fitness_shared::site::MCP_TAPE)).as_deref() == Some("interrupted")
    {
        return AttemptState::Interrupted {
            why: "VOID: interrupted before it completed".to_owned(),
        };
    }
    AttemptState::Completed(Box::new(record))
}

/// The `reason` of a tape's closing `end` line, if it has one.
fn tape_end_reason(path: &Path) -> Option<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    // The end line is short; read the tail only, never the whole tape.
    let tail = len.min(4096);
    file.seek(SeekFrom::Start(len - tail)).ok()?;
    let mut buf = Vec::with_capacity(tail as usize);
    file.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let value: serde_json::Value = serde_json::from_str(last).ok()?;
    (value.get("type")?.as_str()? == "end")
        .then(|| value.get("reason")?.as_str().map(str::to_owned))
        .flatten()
}

/// What the sweep does with a slot, given its attempts on disk.
#[derive(Debug, Clone)]
pub enum Plan {
    /// A completed attempt exists: skip the slot.
    Skip { attempt: Attempt },
    /// Run attempt `number`; `interrupted` are the earlier attempts that did not complete.
    Run {
        number: u32,
        interrupted: Vec<Attempt>,
    },
}

pub fn plan(attempts: Vec<Attempt>) -> Plan {
    if let Some(done) = attempts
        .iter()
        .rev()
        .find(|a| matches!(a.state, AttemptState::Completed(_)))
    {
        return Plan::Skip {
            attempt: done.clone(),
        };
    }
    let number = attempts.last().map_or(1, |a| a.number + 1);
    Plan::Run {
        number,
        interrupted: attempts,
    }
}
