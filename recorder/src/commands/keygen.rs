//! `fitness keygen`: make a publisher signing key.
//!
//! The key file is JSON holding the 32-byte ed25519 secret seed and the public
//! key, both base64. It is created with mode 0600 and never overwrites an
//! existing file.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use fitness_shared::integrity::{self, signing};
use serde::{Deserialize, Serialize};

/// Default key location when `--out` is not given.
pub const DEFAULT_KEY_PATH: &str = "fitness-publisher.key";
const KEY_KIND: &str = "fitness-report ed25519 secret key";

#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Where to write the key file (refuses to overwrite an existing file).
    #[arg(long, default_value = DEFAULT_KEY_PATH)]
    pub out: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct KeyFile {
    kind: String,
    secret_key: String,
    public_key: String,
}

pub fn run(args: KeygenArgs) -> anyhow::Result<()> {
    let (public_key, fingerprint) = generate(&args.out)?;
    println!("wrote {} (mode 0600)", args.out.display());
    println!("public key  {public_key}");
    println!("fingerprint {fingerprint}");
    Ok(())
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
