//! Whether what was loaded is what the record says: the record is the run
//! asked for and names its tapes, each tape's sha256 and byte count match
//! the record, and the record's signature against the site's publisher key;
//! and the badge that says so.

use fitness_shared::integrity::{Sha256Stream, SignatureState, signature_state_of_bytes};
use fitness_shared::record::RunRecord;
use leptos::prelude::*;

/// The integrity verdict shown in the badge. Only `Verified` says
/// verified: every tape matches the record, the record is the run asked
/// for, and it is signed by the key the site publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    /// Tapes match the record and the record is signed by the site's key.
    Verified { fingerprint: String, tapes: usize },
    /// Tapes match the record; the signature state is anything but
    /// verified (unsigned, another key, a site with no key).
    NotVerified {
        signature: SignatureState,
        site_key: bool,
        tapes: usize,
    },
    /// Something failed; each string says what.
    Unverified(Vec<String>),
    /// Tapes opened by URL: nothing to check them against.
    NotChecked(String),
}

impl Integrity {
    fn class(&self) -> String {
        format!("badge {}", self.state())
    }
    /// `verified`, `unsigned`, `other-key`, `no-site-key`, `unverified` or
    /// `unchecked`.
    pub fn state(&self) -> &'static str {
        match self {
            Integrity::Verified { .. } => "verified",
            Integrity::NotVerified { signature, .. } => signature.name(),
            Integrity::Unverified(_) => "unverified",
            Integrity::NotChecked(_) => "unchecked",
        }
    }
    fn text(&self) -> String {
        match self {
            Integrity::Verified { fingerprint, tapes } => format!(
                "Verified. Each of the {tapes} tapes' sha256 matches the record, and the record is signed by this site's publisher key {fingerprint}."
            ),
            Integrity::NotVerified {
                signature,
                site_key,
                tapes,
            } => format!(
                "{} Each of the {tapes} tapes' sha256 matches the record.",
                signature.sentence(*site_key)
            ),
            Integrity::Unverified(why) => format!("Unverified: {}.", why.join("; ")),
            Integrity::NotChecked(s) => format!("Not verified. {s}"),
        }
    }
}

/// What is wrong with the record of `run` before any tape is read: it is
/// another run's record, or it names no tapes.
pub(super) fn record_failures(run: &str, record: &RunRecord) -> Vec<String> {
    let mut failures = Vec::new();
    if record.run.id != run {
        failures.push(format!(
            "the record file of run {run} holds the record of run {}",
            record.run.id
        ));
    }
    if record.tapes.is_empty() {
        failures.push("the record names no tapes".to_owned());
    }
    failures
}

/// Check a tape read to its end against what the record says of it
/// (sha256 and byte count); each difference goes onto `failures`.
pub(super) fn check_tape(
    name: &str,
    hasher: Sha256Stream,
    (want_sha, want_len): (String, u64),
    failures: &mut Vec<String>,
) {
    let (sha, len) = hasher.finish();
    if sha != want_sha {
        failures.push(format!("{name} sha256 differs from the record"));
    }
    if len != want_len {
        failures.push(format!("{name} is {len} bytes, the record says {want_len}"));
    }
}

/// The verdict on a run's `tapes` tapes: the record file's signature read
/// against the site's publisher key (`key`, when the site publishes one),
/// and every failure found before.
pub(super) fn verdict(
    record_bytes: &[u8],
    key: Option<String>,
    mut failures: Vec<String>,
    tapes: usize,
) -> Integrity {
    let signature = signature_state_of_bytes(record_bytes, key.as_deref());
    if let SignatureState::Invalid { why } = &signature {
        failures.push(why.clone());
    }
    match signature {
        _ if !failures.is_empty() => Integrity::Unverified(failures),
        SignatureState::Verified { fingerprint } => Integrity::Verified { fingerprint, tapes },
        signature => Integrity::NotVerified {
            signature,
            site_key: key.is_some(),
            tapes,
        },
    }
}

/// The badge: the verdict, once there is one.
#[component]
pub(super) fn IntegrityBadge(integrity: RwSignal<Option<Integrity>>) -> impl IntoView {
    move || {
        integrity.get().map(|i| {
            view! {
                <p id="integrity" class=i.class() data-state=i.state() role="status">{i.text()}</p>
            }
        })
    }
}
