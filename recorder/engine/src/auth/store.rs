//! The token store: one file per server URL, readable by the operator only
//! (mode 0600 in a 0700 directory), under the user's config directory. A
//! token never leaves it except as the `Authorization` header of a request
//! to its server, and the redaction policy learns it before any tape is
//! made.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::Digest;

/// Overrides where logins are kept (tests, or an operator's own place).
pub const LOGIN_DIR_ENV: &str = "FITNESS_LOGIN_DIR";

/// Where the logins are kept: `$FITNESS_LOGIN_DIR`, else
/// `$XDG_CONFIG_HOME/fitness/logins`, else `~/.config/fitness/logins`.
pub fn login_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(LOGIN_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| {
            anyhow::anyhow!("no config directory: set HOME, XDG_CONFIG_HOME or {LOGIN_DIR_ENV}")
        })?;
    Ok(config.join("fitness").join("logins"))
}

/// What one login file holds.
#[derive(Serialize, Deserialize)]
struct LoginFile {
    url: String,
    credentials: StoredCredentials,
}

/// The stored login of one server URL.
#[derive(Clone)]
pub struct FileCredentialStore {
    url: String,
    path: PathBuf,
}

impl FileCredentialStore {
    pub fn for_url(url: &str) -> anyhow::Result<FileCredentialStore> {
        Ok(FileCredentialStore {
            url: url.to_owned(),
            path: login_dir()?.join(file_name(url)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The scopes the stored login was granted (none when there is no
    /// login, or it cannot be read).
    pub fn granted_scopes(&self) -> Vec<String> {
        self.read()
            .ok()
            .flatten()
            .map(|c| c.granted_scopes)
            .unwrap_or_default()
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(&self.path, &e)),
        };
        let file: LoginFile = serde_json::from_str(&text).map_err(|e| {
            AuthError::CredentialStoreError(format!(
                "{} is not a login file ({e}); remove it and log in again",
                self.path.display()
            ))
        })?;
        Ok((file.url == self.url).then_some(file.credentials))
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let dir = self
            .path
            .parent()
            .ok_or_else(|| AuthError::CredentialStoreError("no login directory".into()))?;
        create_private_dir(dir).map_err(|e| store_error(dir, &e))?;
        let file = LoginFile {
            url: self.url.clone(),
            credentials,
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        // Written beside, then renamed: never a half-written login.
        let tmp = self.path.with_extension("json.tmp");
        let written = private_file(&tmp).and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
        written
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                store_error(&self.path, &e)
            })
    }
}

fn store_error(path: &Path, e: &std::io::Error) -> AuthError {
    AuthError::CredentialStoreError(format!("{}: {e}", path.display()))
}

/// The file name of a URL's login: a hash, so the URL (which may hold a
/// secret) is not in a directory listing.
fn file_name(url: &str) -> String {
    let hash = sha2::Sha256::digest(url.as_bytes());
    format!("{}.json", &hex(&hash)[..24])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::create(path)
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_error(&self.path, &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_login_is_the_operators_alone_and_names_no_url() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = FileCredentialStore {
            url: "https://mcp.example/mcp?key=s3cret".into(),
            path: dir
                .path()
                .join("logins")
                .join(file_name("https://mcp.example/mcp?key=s3cret")),
        };
        assert!(store.load().await.expect("load").is_none());
        store
            .save(StoredCredentials::new(
                "client-1".into(),
                None,
                vec!["read".into()],
                None,
            ))
            .await
            .expect("save");
        let loaded = store.load().await.expect("load").expect("a login");
        assert_eq!(loaded.client_id, "client-1");
        assert!(!store.path.to_string_lossy().contains("s3cret"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&store.path), 0o600);
            assert_eq!(mode(store.path.parent().expect("dir")), 0o700);
        }
        // Another URL's file, moved here, is not this URL's login.
        let other = FileCredentialStore {
            url: "https://other.example/mcp".into(),
            path: store.path.clone(),
        };
        assert!(other.load().await.expect("load").is_none());
        store.clear().await.expect("clear");
        assert!(!store.path.exists());
    }
}
