//! Where a server is and which handshake a session speaks: what the rmcp
//! sessions ([`connect`](super::connect)) and the probes' hand-written
//! JSON-RPC ([`raw`](super::raw)) both need, so neither imports the other's.

use fitness_shared::redact::Secret;
use rmcp::model::ProtocolVersion;

use super::stdio::StdioTarget;
use crate::watch::{Naming, Place, Watched};

/// Environment variable holding a bearer token for HTTP servers.
pub const BEARER_ENV: &str = "FITNESS_MCP_BEARER_TOKEN";

/// An HTTP server and the credentials to reach it (never taped).
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub bearer: Option<String>,
    /// Sessions take their token from `fitness login`'s store through
    /// rmcp's authorization manager, which refreshes it once on a 401
    /// (the raw probes send `bearer`, the token as it was at the start).
    pub login: bool,
}

/// Where the server is.
#[derive(Debug, Clone)]
pub enum Target {
    Stdio(StdioTarget),
    Http(HttpTarget),
}

impl Target {
    pub fn describe(&self) -> Vec<String> {
        match self {
            Target::Stdio(s) => s.command_line(),
            Target::Http(h) => vec![h.url.clone()],
        }
    }

    /// The operator's own paths on a stdio server's command line: the
    /// absolute paths that exist among its arguments (`/srv/repo`,
    /// `--repository=/srv/repo`), each once. An HTTP target gives none.
    pub fn operator_paths(&self) -> Vec<String> {
        let Target::Stdio(stdio) = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for arg in &stdio.args {
            let value = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
            let path = std::path::Path::new(value);
            if path.is_absolute() && path.exists() && !out.iter().any(|o: &String| o == value) {
                out.push(value.trim_end_matches('/').to_owned());
            }
        }
        out
    }

    /// The folders a person who started a stdio server would hand it: its
    /// working folder (where `working_dir` allows: never in a generation
    /// that writes, whose copies stand for the originals), then the
    /// paths on its command line ([`operator_paths`](Self::operator_paths)).
    /// A parameter that takes a project's folder (`project_path`, `repo`,
    /// `root`) is first given these.
    pub fn operator_roots(&self, working_dir: bool) -> Vec<String> {
        let Target::Stdio(_) = self else {
            return Vec::new();
        };
        let mut out: Vec<String> = std::env::current_dir()
            .ok()
            .filter(|_| working_dir)
            .map(|d| d.to_string_lossy().into_owned())
            .into_iter()
            .collect();
        for p in self.operator_paths() {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The files in reach of a stdio server, as a person who started it
    /// would name them: those in its working directory (which it shares
    /// with the recorder), by their relative names, then those under each
    /// folder among [`operator_paths`](Self::operator_paths), by their
    /// absolute paths. Breadth first, to [`FILES_DEPTH`] levels, at most
    /// [`FILES_PER_PLACE`] a place, never a hidden entry or a symbolic link.
    /// Only names are read, never a file's content. An HTTP target gives
    /// none. `working_dir: false` leaves the working directory out: a
    /// generation that writes works on a sandbox's copies, never on the
    /// originals a relative name reaches.
    pub fn operator_files(&self, working_dir: bool) -> Vec<String> {
        let Target::Stdio(_) = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(cwd) = std::env::current_dir().ok().filter(|_| working_dir) {
            for f in files_under(&cwd) {
                if let Ok(relative) = f.strip_prefix(&cwd) {
                    out.push(relative.to_string_lossy().into_owned());
                }
            }
        }
        for root in self.operator_paths() {
            for f in files_under(std::path::Path::new(&root)) {
                let f = f.to_string_lossy().into_owned();
                if !out.contains(&f) {
                    out.push(f);
                }
            }
        }
        out
    }
}

impl Target {
    /// The places a walk that only reads watches on disk
    /// ([`crate::watch`]): a stdio server's working folder (named
    /// relative to it), the paths on its command line (by full path), and
    /// the absolute paths given with `--env` (counted, never named: those
    /// values are kept off disk). `own` is what the recorder writes itself.
    /// An HTTP server's places are not this machine's to watch.
    pub fn watched(&self, own: Vec<std::path::PathBuf>) -> Watched {
        let Target::Stdio(stdio) = self else {
            return Watched::default();
        };
        let mut places = Vec::new();
        // First: a change under a place given with `--env` is counted
        // there, never named under a place that holds it.
        for (_, value) in &stdio.env {
            // `/srv/index`, `sqlite:///srv/shop.db`, `file:///srv/notes`.
            let path = value.split_once("://").map_or(value.as_str(), |(_, p)| p);
            let path = std::path::Path::new(path);
            if path.is_absolute() && path.exists() && path != std::path::Path::new("/") {
                places.push(Place {
                    root: path.to_path_buf(),
                    naming: Naming::Counted,
                });
            }
        }
        if let Ok(cwd) = std::env::current_dir() {
            places.push(Place {
                root: cwd,
                naming: Naming::Relative,
            });
        }
        for p in self.operator_paths() {
            places.push(Place {
                root: p.into(),
                naming: Naming::Full,
            });
        }
        // The recorder's own paths, as the walk of a place sees them.
        let own = own
            .into_iter()
            .filter_map(|p| std::path::absolute(p).ok())
            .collect();
        Watched { places, own }
    }
}

/// Levels of folders [`Target::operator_files`] looks into.
pub const FILES_DEPTH: usize = 2;
/// Files [`Target::operator_files`] names at most in one place.
pub const FILES_PER_PLACE: usize = 40;

/// The regular files under `dir`, breadth first, sorted within a folder.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..FILES_DEPTH {
        let mut next = Vec::new();
        for d in &level {
            let Ok(entries) = std::fs::read_dir(d) else {
                continue;
            };
            let mut entries: Vec<_> = entries
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .take(1_000)
                .collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                // `file_type` does not follow a link: a link is neither.
                let Ok(kind) = e.file_type() else { continue };
                if kind.is_file() && out.len() < FILES_PER_PLACE {
                    out.push(e.path());
                } else if kind.is_dir() {
                    next.push(e.path());
                }
            }
        }
        level = next;
    }
    out
}

/// Which handshake the session used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize` / `notifications/initialized`, up to 2025-11-25.
    Legacy,
    /// `server/discover` and per-request `_meta`, 2026-07-28.
    Modern,
}

impl Era {
    pub fn of(version: &str) -> Era {
        if version >= ProtocolVersion::NO_INITIALIZE.as_str() {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

impl Target {
    /// Hand the secrets policy everything secret about this target: its
    /// `--env` and `--header` values, the bearer token, URL credentials,
    /// and in a command line the values of credential-like flags
    /// (`--api-key X`, `--token=X`) and the credentials of any URL argument.
    pub fn register_secrets(&self) {
        let mut secrets = Vec::new();
        let mut urls = Vec::new();
        match self {
            Target::Http(h) => {
                urls.push(h.url.clone());
                for (k, v) in &h.headers {
                    secrets.push(Secret::header(k, v));
                }
                if let Some(token) = &h.bearer {
                    secrets.push(Secret::env(BEARER_ENV, token));
                }
            }
            Target::Stdio(s) => {
                for (k, v) in &s.env {
                    secrets.push(Secret::env(k, v));
                }
                let (args, found_urls) = crate::secrets::argument_secrets(&s.args);
                secrets.extend(args);
                urls.extend(found_urls);
            }
        }
        crate::secrets::register(secrets, urls);
    }
}
