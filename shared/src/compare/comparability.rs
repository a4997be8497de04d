//! Whether two runs can be read against each other at all: the same server
//! (its slug, and the name it gives itself), the same runner model (as
//! registered, and as the provider reported it), the same generator (with
//! the same judge, for a generator that writes with one), and the same
//! credential context. Anything else that differs is what a comparison
//! is for.

use serde::Serialize;

use crate::generators;
use crate::record::RunRecord;

/// Why two runs cannot be read against each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incomparable {
    /// `server`, `server_name`, `runner_model`, `runner_reported`,
    /// `generator`, `judge_model`, `credential_context`.
    pub field: &'static str,
    pub before: String,
    pub after: String,
}

impl std::fmt::Display for Incomparable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.field {
            "server" => "they measured different servers",
            "server_name" => "the server names itself differently",
            "runner_model" => "the runner model differs",
            "runner_reported" => "the provider reported different runner models",
            "generator" => "the task generator differs",
            "judge_model" => "the judge that wrote the tasks differs",
            _ => "the credential context differs",
        };
        write!(f, "{what}: {} before, {} after", self.before, self.after)
    }
}

/// The name a server gave itself in its handshake (`serverInfo.name`).
fn server_name(r: &RunRecord) -> Option<&str> {
    r.server.server_info.as_ref()?.get("name")?.as_str()
}

/// What stands in the way of reading `after` against `before`.
pub fn comparability(before: &RunRecord, after: &RunRecord) -> Vec<Incomparable> {
    let mut out = Vec::new();
    let mut differ = |field: &'static str, b: String, a: String| {
        if b != a {
            out.push(Incomparable {
                field,
                before: b,
                after: a,
            });
        }
    };
    // Two servers are never one measurement's before and after, whatever
    // else the runs share: the slug is the server as the board groups its
    // runs, and a server that names itself differently is another server
    // even under one label.
    differ(
        "server",
        before.server.slug.clone(),
        after.server.slug.clone(),
    );
    if let (Some(b), Some(a)) = (server_name(before), server_name(after)) {
        differ("server_name", b.to_owned(), a.to_owned());
    }
    let (b, a) = (&before.run, &after.run);
    differ(
        "runner_model",
        b.runner_model.clone(),
        a.runner_model.clone(),
    );
    // A provider that upgrades the model behind one name changes what ran.
    if let (Some(rb), Some(ra)) = (&b.runner_reported, &a.runner_reported) {
        differ("runner_reported", rb.clone(), ra.clone());
    }
    differ(
        "generator",
        b.generator_label().to_owned(),
        a.generator_label().to_owned(),
    );
    let judged = b
        .generator
        .as_deref()
        .is_some_and(generators::judge_writes_tasks);
    if judged {
        differ("judge_model", b.judge_model.clone(), a.judge_model.clone());
    }
    differ(
        "credential_context",
        before.server.credential_context.label().to_owned(),
        after.server.credential_context.label().to_owned(),
    );
    out
}
