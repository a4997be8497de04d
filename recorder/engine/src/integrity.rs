//! Keys, signatures, file hashes and atomic writes: the one home the
//! commands, the pipeline and publish take them from (none of them reaches
//! into another command for these).
//!
//! A key file is JSON holding the 32-byte ed25519 secret seed and the public
//! key, both base64, created with mode 0600, never over an existing file.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use fitness_shared::integrity::{self, Sha256Stream, signing};
use fitness_shared::record::RunRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const KEY_KIND: &str = "fitness-report ed25519 secret key";

#[derive(Serialize, Deserialize)]
struct KeyFile {
    kind: String,
    secret_key: String,
    public_key: String,
}

/// Make a new key at `path` (never over an existing file); returns the
/// public key (base64) and its fingerprint.
pub fn generate(path: &Path) -> anyhow::Result<(String, String)> {
    let mut seed = [0u8; 32];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .context("failed to read 32 random bytes from /dev/urandom")?;
    let public_key = signing::public_key_b64(&seed);
    let body = KeyFile {
        kind: KEY_KIND.to_owned(),
        secret_key: BASE64.encode(seed),
        public_key: public_key.clone(),
    };
    let text = serde_json::to_string_pretty(&body)? + "\n";
    write_new_private(path, text.as_bytes())?;
    let public = integrity::decode_public_key(&public_key)?;
    Ok((public_key, integrity::key_fingerprint(public.as_bytes())))
}

fn write_new_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            bail!(
                "{} already exists; refusing to overwrite a key (choose another --out)",
                path.display()
            )
        }
        Err(err) => {
            return Err(err).with_context(|| format!("failed to create {}", path.display()));
        }
    };
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("failed to write {}", path.display()))
}

/// Read a key file written by `fitness keygen`: the secret seed.
pub fn read_secret(path: &Path) -> anyhow::Result<[u8; 32]> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read key file {}", path.display()))?;
    let key: KeyFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a fitness key file", path.display()))?;
    if key.kind != KEY_KIND {
        bail!(
            "{} is not a fitness key file (kind {:?})",
            path.display(),
            key.kind
        );
    }
    let bytes = BASE64
        .decode(key.secret_key.trim())
        .with_context(|| format!("{}: secret_key is not base64", path.display()))?;
    let seed: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| anyhow::anyhow!("{}: secret_key is not 32 bytes", path.display()))?;
    if signing::public_key_b64(&seed) != key.public_key.trim() {
        bail!(
            "{}: public_key does not belong to secret_key",
            path.display()
        );
    }
    Ok(seed)
}

/// Sign a record value in place.
pub fn sign_value(value: &mut Value, seed: &[u8; 32]) -> anyhow::Result<()> {
    signing::sign_record(value, seed).context("failed to sign the record")
}

/// The public key bytes of a seed.
pub fn public_bytes(seed: &[u8; 32]) -> anyhow::Result<[u8; 32]> {
    Ok(integrity::decode_public_key(&signing::public_key_b64(seed))?.to_bytes())
}

/// Write a record in its canonical form (RFC 8785) with a trailing newline,
/// so the file's bytes are exactly the bytes its signature covers.
pub fn write_record(path: &std::path::Path, value: &Value) -> anyhow::Result<()> {
    let bytes = integrity::record_file_bytes(value).context("failed to canonicalise the record")?;
    write_atomic(path, &bytes)
}

/// Write `bytes` to `path` through a temporary file and a rename, so a
/// reader never sees half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("failed to create a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("failed to write {}", path.display()))?;
    // A temporary file is private (0600); a record is meant to be read.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| {
        anyhow::anyhow!(
            "failed to move the record into {}: {}",
            path.display(),
            e.error
        )
    })?;
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

pub fn tape_path(record: &Path, rel: &str) -> PathBuf {
    record.parent().unwrap_or_else(|| Path::new(".")).join(rel)
}

/// Every file a record vouches for, `(path, sha256, bytes)`: its tapes, the
/// official conformance suite's `checks.json` files, and the list of the
/// candidates admission rejected.
pub fn named_files(record: &RunRecord) -> Vec<(String, String, u64)> {
    let tapes = record
        .tapes
        .iter()
        .map(|t| (t.path.clone(), t.sha256.clone(), t.bytes));
    let checks = record.conformance.iter().flat_map(|c| {
        c.scenarios
            .iter()
            .map(|s| (s.path.clone(), s.sha256.clone(), s.bytes))
            .chain(
                c.output
                    .iter()
                    .map(|o| (o.path.clone(), o.sha256.clone(), o.bytes)),
            )
    });
    let candidates = record
        .suite
        .candidates_file
        .iter()
        .map(|f| (f.path.clone(), f.sha256.clone(), f.bytes));
    tapes.chain(checks).chain(candidates).collect()
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
