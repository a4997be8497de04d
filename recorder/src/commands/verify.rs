//! `fitness verify RECORD`: check the record's signature and every tape it
//! names (sha256 and size), and say exactly which file failed.

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use fitness_shared::integrity::{self, Sha256Stream};
use fitness_shared::record::RunRecord;

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
    crate::outln!(
        "ok      {name}  signed by {}  file sha256 {}",
        signer.fingerprint,
        integrity::sha256_hex(&bytes)
    );
    let failures = check_tapes(&args.record, &record);
    let files = named_files(&record);
    for (path, sha256, bytes) in &files {
        if !failures.iter().any(|f| f.path == *path) {
            crate::outln!(
                "ok      {}  sha256 {sha256}  {bytes} bytes",
                tape_path(&args.record, path).display(),
            );
        }
    }
    for failure in &failures {
        crate::outln!("FAILED  {failure}");
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
        crate::outln!("note    {name} names no tapes");
    }
    Ok(())
}

/// A tape that does not match its record.
#[derive(Debug)]
pub struct TapeFailure {
    pub path: String,
    pub file: PathBuf,
    pub why: String,
}

impl std::fmt::Display for TapeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.why)
    }
}

fn tape_path(record: &Path, rel: &str) -> PathBuf {
    record.parent().unwrap_or_else(|| Path::new(".")).join(rel)
}

/// Every file a record vouches for, `(path, sha256, bytes)`: its tapes and
/// the official conformance suite's `checks.json` files.
pub fn named_files(record: &RunRecord) -> Vec<(String, String, u64)> {
    let tapes = record
        .tapes
        .iter()
        .map(|t| (t.path.clone(), t.sha256.clone(), t.bytes));
    let checks = record
        .conformance
        .iter()
        .flat_map(|c| &c.scenarios)
        .map(|s| (s.path.clone(), s.sha256.clone(), s.bytes));
    tapes.chain(checks).collect()
}

/// Hash every file a record names (tapes, conformance checks) and compare
/// with what it says.
pub fn check_tapes(record_path: &Path, record: &RunRecord) -> Vec<TapeFailure> {
    let mut failures = Vec::new();
    for (path, want_sha, want_bytes) in named_files(record) {
        let file = tape_path(record_path, &path);
        let fail = |why: String| TapeFailure {
            path: path.clone(),
            file: file.clone(),
            why,
        };
        match hash_file(&file) {
            Err(err) => failures.push(fail(format!("cannot read: {err}"))),
            Ok((sha256, bytes)) => {
                if bytes != want_bytes {
                    failures.push(fail(format!(
                        "size is {bytes} bytes, the record says {want_bytes}"
                    )));
                } else if sha256 != want_sha {
                    failures.push(fail(format!(
                        "sha256 is {sha256}, the record says {want_sha}"
                    )));
                }
            }
        }
    }
    failures
}

/// Stream a file through sha256: (hex digest, size).
pub fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256Stream::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish())
}
