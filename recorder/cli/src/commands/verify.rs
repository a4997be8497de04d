//! `fitness verify RECORD`: check the record's signature and every tape it
//! names (sha256 and size), and say exactly which file failed.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use fitness_shared::integrity::{self};
use fitness_shared::record::RunRecord;

use fitness_recorder::integrity::{check_tapes, named_files, tape_path};

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The record.json to check; tapes resolve relative to its directory.
    pub record: PathBuf,
    /// Require the signature to come from this public key (base64).
    #[arg(long)]
    pub key: Option<String>,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<()> {
    let name = args.record.display().to_string();
    let bytes = std::fs::read(&args.record).with_context(|| format!("failed to read {name}"))?;
    let (value, signer) = integrity::verify_record_bytes(&bytes, args.key.as_deref())
        .with_context(|| format!("FAILED {name}: record verification failed"))?;
    let record = RunRecord::from_value(value).with_context(|| {
        format!("FAILED {name}: signed, but not a valid fitness-report/2 record")
    })?;
    crate::process::outln!(
        "ok      {name}  signed by {}  file sha256 {}",
        signer.fingerprint,
        integrity::sha256_hex(&bytes)
    );
    let failures = check_tapes(&args.record, &record);
    let files = named_files(&record);
    for (path, sha256, bytes) in &files {
        if !failures.iter().any(|f| f.path == *path) {
            crate::process::outln!(
                "ok      {}  sha256 {sha256}  {bytes} bytes",
                tape_path(&args.record, path).display(),
            );
        }
    }
    for failure in &failures {
        crate::process::outln!("FAILED  {failure}");
    }
    if !failures.is_empty() {
        bail!(
            "{} of {} file(s) failed verification: {}",
            failures.len(),
            files.len(),
            failures[0]
        );
    }
    if record.tapes.is_empty() {
        crate::process::outln!("note    {name} names no tapes");
    }
    Ok(())
}
