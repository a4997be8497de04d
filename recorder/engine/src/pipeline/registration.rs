//! The run's registration: its names (the server's slug, the run id), the
//! stable hash its seeds derive from, and the pre-registration hashed
//! before the first model call.

use anyhow::Context as _;
use fitness_shared::integrity;
use fitness_shared::record as rec;

use super::config::{self, RunConfig};
use crate::mcp::connect::Target;

/// The largest seed a record can carry exactly (RFC 8785 reads numbers as
/// doubles).
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// A short stable name for the server: the run directory's prefix and the
/// board's grouping key. An HTTP server's comes from its host name alone
/// (never userinfo, path or query); a command line's from the package it
/// runs, skipping any argument the redaction policy would replace.
pub fn slug_for(cfg: &RunConfig) -> String {
    let policy = crate::secrets::policy();
    let base = match (&cfg.settings.label, &cfg.settings.target) {
        (Some(label), _) => policy
            .redact_str(label, &mut fitness_shared::redact::Hits::default())
            .into_owned(),
        (None, Target::Http(h)) => {
            fitness_shared::redact::url_host(&h.url).unwrap_or_else(|| "server".to_owned())
        }
        (None, Target::Stdio(s)) => {
            // `fitness demo-server good` reads better as `demo-good`; a
            // package runner's last argument names the package.
            let argv = s.command_line();
            if argv.get(1).map(String::as_str) == Some("demo-server") {
                format!("demo-{}", argv.get(2).map_or("server", String::as_str))
            } else {
                argv.iter()
                    .rev()
                    .filter(|a| !a.starts_with('-') && !a.contains("://"))
                    .map(|a| a.rsplit('/').next().unwrap_or(a))
                    .find(|a| !policy.finds(a))
                    .map(str::to_owned)
                    .unwrap_or_else(|| "server".to_owned())
            }
        }
    };
    let mut slug = String::new();
    for c in base.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-').chars().take(48).collect::<String>();
    if slug.is_empty() {
        "server".to_owned()
    } else {
        slug
    }
}

/// `<slug>-<yyyymmddThhmmssmmm>-s<seed>[-<tag>]`: the run's start time to
/// the millisecond (from `started_at`, an ISO 8601 time with milliseconds),
/// then `s` and the seed: sortable, unique per millisecond and seed, and
/// with a tag (`fitness sweep`'s slot and attempt) unique across machines
/// that never talk to each other.
pub fn run_id(slug: &str, started_at: &str, seed: u64, tag: Option<&str>) -> String {
    let mut stamp: String = started_at
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take("yyyymmddThhmmssmmm".len())
        .collect();
    while stamp.len() < "yyyymmddThhmmssmmm".len() {
        stamp.push('0');
    }
    match tag {
        Some(tag) => format!("{slug}-{stamp}-s{seed}-{tag}"),
        None => format!("{slug}-{stamp}-s{seed}"),
    }
}

/// A stable (not randomised per process) hash of a string, for seeding.
pub fn stable_hash(s: &str) -> u64 {
    let digest = integrity::sha256_hex(s.as_bytes());
    u64::from_str_radix(&digest[..16], 16).unwrap_or(0)
}

/// The pre-registration, hashed over its canonical JSON.
pub fn preregistration(cfg: &RunConfig) -> anyhow::Result<rec::PreRegistration> {
    anyhow::ensure!(
        cfg.settings.seed <= MAX_SEED,
        "--seed must be at most {MAX_SEED} (records carry numbers as IEEE doubles)"
    );
    let f = &cfg.settings.floors;
    let mut prereg = rec::PreRegistration {
        hash: None,
        n_tasks: Some(cfg.settings.tasks),
        reps: Some(cfg.settings.reps),
        alpha: Some(f.alpha),
        construct_threshold: Some(f.construct_threshold),
        null_kill_ratio: Some(f.null_ratio),
        min_admission_rate: Some(f.min_admission_rate),
        min_tasks: Some(f.min_suite),
        detectable_rate: Some(fitness_shared::gates::default_detectable(
            f.construct_threshold,
        )),
        planned_power: Some(config::PLANNED_POWER),
        extension_size: cfg.settings.extension_size,
        max_extensions: cfg.settings.max_extensions,
        seed: Some(cfg.settings.seed),
        runner_model: Some(cfg.settings.runner.to_string()),
        judge_model: Some(judge_label(cfg)),
        generator: Some(cfg.generator.to_string()),
        aimed_mix: cfg.generator.aimed_mix(),
        null_screen: Some(cfg.settings.screen),
        conformance: cfg.settings.conformance.then_some(true),
        conformance_baseline: cfg
            .settings
            .conformance_baseline
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .map(|bytes| fitness_shared::integrity::sha256_hex(&bytes)),
        credential_context: Some(cfg.settings.credential),
        access: Some(cfg.settings.sandbox.mode()),
        restore: cfg.settings.sandbox.restore(),
        operator_hints: (!cfg.settings.hints.is_empty()).then(|| cfg.settings.hints.clone()),
        input: Some(rec::InputPolicy {
            sampling: true,
            elicitation: cfg.settings.elicitation,
        }),
        screen_protocol: cfg
            .settings
            .screen
            .then(|| crate::suite::screen::protocol(&cfg.settings.runner.to_string())),
        extension_protocol: Some(match cfg.settings.max_extensions {
            // Nothing to consume: the words say so, never "the next of 0".
            0 => format!(
                "No extension batch is registered: a construct gate the registered size cannot resolve is refused where it stands as EXTEND_EXHAUSTED. Errors are gated apart at {}.",
                f.max_error_rate
            ),
            max => format!(
                "An unresolved construct gate consumes the next of {max} batches of {} new tasks (x {} reps), generated and screened like the suite, and is decided again on the pooled counts; unresolved after the last batch it resolves to FAIL (GATE_FAILED). Errors are gated apart at {}.",
                cfg.settings.extension_size, cfg.settings.reps, f.max_error_rate
            ),
        }),
        max_error_rate: Some(f.max_error_rate),
        max_turns: Some(u64::from(cfg.settings.budget.max_turns)),
        max_tokens: Some(cfg.settings.budget.max_tokens),
        max_calls_per_turn: Some(u64::from(cfg.settings.budget.max_calls_per_turn)),
        max_output_tokens: Some(u64::from(cfg.settings.budget.max_output_tokens)),
        concurrency: cfg.settings.concurrency,
        overgen_factor: Some(cfg.settings.overgen_factor),
        request_timeout_ms: Some(
            u64::try_from(cfg.settings.timeout.as_millis()).unwrap_or(u64::MAX),
        ),
        model_timeout_ms: Some(
            u64::try_from(cfg.settings.model_timeout.as_millis()).unwrap_or(u64::MAX),
        ),
        max_model_calls: cfg.settings.max_model_calls,
        max_tape_bytes: Some(cfg.settings.max_tape_bytes),
    };
    let value = serde_json::to_value(&prereg)?;
    let bytes =
        integrity::canonical_json(&value).context("failed to canonicalise the pre-registration")?;
    prereg.hash = Some(format!("sha256:{}", integrity::sha256_hex(&bytes)));
    Ok(prereg)
}

pub(super) fn judge_label(cfg: &RunConfig) -> String {
    cfg.settings
        .judge
        .as_ref()
        .map_or_else(|| "none".to_owned(), ToString::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_sort_by_time_and_keep_the_seed() {
        let id = run_id("demo-good", "2026-11-30T04:20:01.123Z", 7, None);
        // The start time to the millisecond, then the seed.
        assert_eq!(id, "demo-good-20261130T042001123-s7");
        let later = run_id("demo-good", "2026-11-30T04:20:01.124Z", 7, None);
        assert!(later > id, "{later} sorts after {id}");
        let tagged = run_id("demo-good", "2026-11-30T04:20:01.123Z", 7, Some("ab12-a2"));
        assert!(tagged.ends_with("-s7-ab12-a2"), "{tagged}");
    }
}
