//! `fitness keygen`: make a publisher signing key.
//!
//! The key file is JSON holding the 32-byte ed25519 secret seed and the public
//! key, both base64. It is created with mode 0600 and never overwrites an
//! existing file.

use std::path::PathBuf;

use fitness_recorder::integrity::generate;

/// Default key location when `--out` is not given.
pub const DEFAULT_KEY_PATH: &str = "fitness-publisher.key";

#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Where to write the key file (refuses to overwrite an existing file).
    #[arg(long, default_value = DEFAULT_KEY_PATH)]
    pub out: PathBuf,
}

pub fn run(args: KeygenArgs) -> anyhow::Result<()> {
    let (public_key, fingerprint) = generate(&args.out)?;
    crate::process::outln!("wrote {} (mode 0600)", args.out.display());
    crate::process::outln!("public key  {public_key}");
    crate::process::outln!("fingerprint {fingerprint}");
    Ok(())
}
