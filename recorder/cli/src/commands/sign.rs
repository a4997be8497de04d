//! `fitness sign`: sign a record in place with a publisher key.
//!
//! The tapes the record names are checked first: a record is never signed
//! over tape hashes that do not match the files beside it.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use fitness_shared::integrity::{self};
use fitness_shared::record::RunRecord;
use serde_json::Value;

use fitness_recorder::integrity::{public_bytes, sign_value, write_record};

#[derive(Debug, clap::Args)]
pub struct SignArgs {
    /// The record.json to sign (rewritten in place).
    pub record: PathBuf,
    /// Key file made by `fitness keygen`.
    #[arg(long)]
    pub key: PathBuf,
}

pub fn run(args: SignArgs) -> anyhow::Result<()> {
    let seed = fitness_recorder::integrity::read_secret(&args.key)?;
    let text = std::fs::read_to_string(&args.record)
        .with_context(|| format!("failed to read {}", args.record.display()))?;
    let mut value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.record.display()))?;
    let record = RunRecord::from_value(value.clone()).with_context(|| {
        format!(
            "{} is not a valid fitness-report/2 record",
            args.record.display()
        )
    })?;
    let failures = fitness_recorder::integrity::check_tapes(&args.record, &record);
    if let Some(first) = failures.first() {
        bail!("refusing to sign: {first}");
    }
    sign_value(&mut value, &seed)?;
    write_record(&args.record, &value)?;
    crate::process::outln!(
        "signed {} with key {}",
        args.record.display(),
        integrity::key_fingerprint(&public_bytes(&seed)?)
    );
    Ok(())
}
