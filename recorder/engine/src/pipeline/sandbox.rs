//! What a run may do to the server's state, and how a sandbox puts it back.
//!
//! A run is read-only unless the operator says the target may be written
//! to (`--sandbox`, [`SandboxSettings`]). A sandbox restores the state
//! trials start from in one of two ways, or not at all:
//!
//! - `--sandbox-copy PATH` (stdio servers whose state is a path on their
//!   command line or in their environment): the server runs against a copy
//!   of PATH, never the original. After generation the copy is kept as a
//!   snapshot (the state the suite's answer keys were read from); before
//!   every trial that follows a write, the server is stopped, the copy put
//!   back from the snapshot and the server started again, so every trial
//!   starts from the same state.
//! - `--reset CMD`: the operator's command, run (by `sh -c`) before
//!   generation, before every trial that reaches the server and after the
//!   run, its exit status and output on the wire tape (`fitness.reset`).
//!   Generation then calls no tool that may write: what it wrote would be
//!   undone before the first trial.
//! - neither: trials that write are counted apart on the record, whose
//!   later trials' keys may be stale.
//!
//! [`Server`] is the server under measurement: the session trials use,
//! started again when a copy is restored.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use anyhow::Context as _;
use fitness_shared::record::{AccessMode, RestoreKind};
use serde_json::json;

use crate::mcp::connect::{Session, Target};
use crate::mcp::input::InputDesk;
use crate::mcp::tap::Tap;
use crate::mcp::trace::Tracer;

/// Bytes a sandbox copies at most, all paths together.
pub const MAX_COPY_BYTES: u64 = 4 << 30;
/// How long a reset command may take.
pub const RESET_TIMEOUT: Duration = Duration::from_secs(120);
/// Bytes of a reset command's output kept on the tape.
const RESET_OUTPUT_KEPT: usize = 8 << 10;

/// What the operator allowed: read-only unless `enabled`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `--sandbox`: the target may be written to.
    pub enabled: bool,
    /// `--reset CMD`: restores the server's state.
    pub reset: Option<String>,
    /// `--sandbox-copy PATH`: the server runs against copies of these.
    pub copies: Vec<PathBuf>,
}

impl SandboxSettings {
    pub fn mode(&self) -> AccessMode {
        if self.enabled {
            AccessMode::Sandbox
        } else {
            AccessMode::ReadOnly
        }
    }

    /// How the state is restored; `None` in a read-only run.
    pub fn restore(&self) -> Option<RestoreKind> {
        match (self.enabled, &self.reset, self.copies.is_empty()) {
            (false, _, _) => None,
            (true, Some(_), _) => Some(RestoreKind::Reset),
            (true, None, false) => Some(RestoreKind::Copy),
            (true, None, true) => Some(RestoreKind::None),
        }
    }

    /// Generation may write: a sandbox whose trials start from the state
    /// generation left (a copy's snapshot, or nothing restores it).
    pub fn writes_at_generation(&self) -> bool {
        self.enabled && self.reset.is_none()
    }

    /// The flags make sense together and for `target`.
    pub fn check(&self, target: &Target) -> anyhow::Result<()> {
        if !self.enabled {
            anyhow::ensure!(
                self.reset.is_none(),
                "--reset restores a sandbox's state: add --sandbox to say this target may be written to"
            );
            anyhow::ensure!(
                self.copies.is_empty(),
                "--sandbox-copy runs the server over a copy in a sandbox: add --sandbox to say the copy may be written to"
            );
            return Ok(());
        }
        anyhow::ensure!(
            self.reset.is_none() || self.copies.is_empty(),
            "--reset and --sandbox-copy both restore the server's state: choose one"
        );
        if let Some(cmd) = &self.reset {
            anyhow::ensure!(!cmd.trim().is_empty(), "--reset needs a command");
        }
        if self.copies.is_empty() {
            return Ok(());
        }
        let Target::Stdio(stdio) = target else {
            anyhow::bail!(
                "--sandbox-copy copies a path a stdio server runs over; an HTTP server's state is its own (use --reset)"
            );
        };
        for path in &self.copies {
            anyhow::ensure!(
                path.exists(),
                "--sandbox-copy {}: no such file or directory",
                path.display()
            );
            let text = path.to_string_lossy();
            let named = stdio
                .args
                .iter()
                .chain(stdio.env.iter().map(|(_, v)| v))
                .any(|a| replace_path(a, &text, "").is_some());
            anyhow::ensure!(
                named,
                "--sandbox-copy {}: the server's command line and environment never name it, so a copy would change nothing (give the path exactly as the command line does)",
                path.display()
            );
        }
        Ok(())
    }
}

/// `value` with `path` replaced by `with`, when `value` is the path, a
/// `--flag=PATH`, or a path below it; `None` when it names no such path.
fn replace_path(value: &str, path: &str, with: &str) -> Option<String> {
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        return None;
    }
    let (head, tail) = match value.split_once('=') {
        Some((flag, v)) if v.starts_with(path) => (format!("{flag}="), v),
        _ => (String::new(), value),
    };
    let rest = tail.strip_prefix(path)?;
    (rest.is_empty() || rest.starts_with('/')).then(|| format!("{head}{with}{rest}"))
}

/// One copied path: the original (never written), the copy the server
/// runs over, and the snapshot it is put back from.
#[derive(Debug)]
struct Copied {
    original: PathBuf,
    work: PathBuf,
    snapshot: PathBuf,
}

/// A sandbox under way.
#[derive(Debug)]
pub struct Sandbox {
    settings: SandboxSettings,
    copies: Vec<Copied>,
    /// Holds the copies; removed when the sandbox is dropped.
    _workspace: Option<Workspace>,
}

/// Where the copies live: a directory named after the originals, so a
/// suite made over them names the same paths in the next run on this
/// machine (`--suite`), held by a lock while a run uses it.
#[derive(Debug)]
struct Workspace {
    dir: PathBuf,
    _lock: std::fs::File,
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Workspace {
    /// `$TMPDIR/fitness-sandbox/<hash of the originals>`, locked; an error
    /// when another run holds it.
    fn open(originals: &[PathBuf]) -> anyhow::Result<Workspace> {
        let key: Vec<String> = originals.iter().map(|p| p.display().to_string()).collect();
        let hash = fitness_shared::integrity::sha256_hex(key.join("\n").as_bytes());
        let root = std::env::temp_dir().join("fitness-sandbox");
        std::fs::create_dir_all(&root)
            .with_context(|| format!("failed to make {}", root.display()))?;
        let lock_path = root.join(format!("{}.lock", &hash[..16]));
        let lock = std::fs::File::create(&lock_path)
            .with_context(|| format!("failed to open {}", lock_path.display()))?;
        lock.try_lock().map_err(|_| {
            anyhow::anyhow!(
                "another run is using a sandbox copy of {} (lock {}): one run at a time per path",
                key.join(", "),
                lock_path.display()
            )
        })?;
        let dir = root.join(&hash[..16]);
        remove(&dir)?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("failed to make {}", dir.display()))?;
        Ok(Workspace { dir, _lock: lock })
    }
}

impl Sandbox {
    /// The sandbox for `settings`, and the target the run talks to: in
    /// copy mode, the command line and environment point at fresh copies
    /// of each path.
    pub fn prepare(
        settings: &SandboxSettings,
        target: &Target,
    ) -> anyhow::Result<(Sandbox, Target)> {
        let mut sandbox = Sandbox {
            settings: settings.clone(),
            copies: Vec::new(),
            _workspace: None,
        };
        if settings.copies.is_empty() || !settings.enabled {
            return Ok((sandbox, target.clone()));
        }
        let Target::Stdio(stdio) = target else {
            return Ok((sandbox, target.clone()));
        };
        let workspace = Workspace::open(&settings.copies)?;
        let mut stdio = stdio.clone();
        let mut budget = MAX_COPY_BYTES;
        for (i, original) in settings.copies.iter().enumerate() {
            let name = original
                .file_name()
                .map_or_else(|| "root".into(), |n| n.to_os_string());
            let work = workspace.dir.join("work").join(i.to_string()).join(&name);
            let snapshot = workspace
                .dir
                .join("snapshot")
                .join(i.to_string())
                .join(&name);
            copy_tree(original, &work, &mut budget).with_context(|| {
                format!("failed to copy {} into the sandbox", original.display())
            })?;
            let from = original.to_string_lossy().into_owned();
            let to = work.to_string_lossy().into_owned();
            for arg in stdio.args.iter_mut() {
                if let Some(new) = replace_path(arg, &from, &to) {
                    *arg = new;
                }
            }
            for (_, value) in stdio.env.iter_mut() {
                if let Some(new) = replace_path(value, &from, &to) {
                    *value = new;
                }
            }
            sandbox.copies.push(Copied {
                original: original.clone(),
                work,
                snapshot,
            });
        }
        sandbox._workspace = Some(workspace);
        Ok((sandbox, Target::Stdio(stdio)))
    }

    pub fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    /// The originals a copy stands in for, as given.
    pub fn copied_paths(&self) -> Vec<String> {
        self.copies
            .iter()
            .map(|c| c.original.display().to_string())
            .collect()
    }

    /// Keep the copies' state as the one every trial starts from.
    pub fn snapshot(&self) -> anyhow::Result<()> {
        for c in &self.copies {
            remove(&c.snapshot)?;
            let mut budget = MAX_COPY_BYTES;
            copy_tree(&c.work, &c.snapshot, &mut budget).with_context(|| {
                format!("failed to snapshot the copy of {}", c.original.display())
            })?;
        }
        Ok(())
    }

    /// sha256 of the copies as they are now (each tree's relative paths,
    /// link targets and bytes, in order): the restored state a trial
    /// starts from, on the tape.
    fn state_hash(&self) -> String {
        let mut h = Vec::new();
        for c in &self.copies {
            hash_tree(&c.work, Path::new(""), &mut h);
        }
        fitness_shared::integrity::sha256_hex(&h)
    }

    /// Put every copy back as the snapshot holds it.
    fn restore_copies(&self) -> anyhow::Result<()> {
        for c in &self.copies {
            remove(&c.work)?;
            let mut budget = MAX_COPY_BYTES;
            copy_tree(&c.snapshot, &c.work, &mut budget).with_context(|| {
                format!("failed to restore the copy of {}", c.original.display())
            })?;
        }
        Ok(())
    }

    /// Run the operator's reset command (`when`: `before generation`,
    /// `before t3`, `after the run`), its status and output on `tap`. A
    /// command that fails or times out leaves the state unknown: an error.
    pub async fn reset(&self, when: &str, tap: &Tap) -> anyhow::Result<()> {
        let Some(cmd) = self
            .settings
            .reset
            .as_deref()
            .filter(|_| self.settings.enabled)
        else {
            return Ok(());
        };
        let run = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let (status, output) = match tokio::time::timeout(RESET_TIMEOUT, run).await {
            Ok(Ok(out)) => {
                let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&out.stderr));
                (out.status.code(), text)
            }
            Ok(Err(e)) => (None, format!("could not start: {e}")),
            Err(_) => (None, format!("did not finish within {RESET_TIMEOUT:?}")),
        };
        let kept: String = output.chars().take(RESET_OUTPUT_KEPT).collect();
        tap.event(
            "fitness.reset",
            json!({"when": when, "status": status, "output": kept}),
            None,
        );
        anyhow::ensure!(
            status == Some(0),
            "the --reset command failed {when} (status {}), so the server's state is unknown: {}",
            status.map_or("none".to_owned(), |s| s.to_string()),
            kept.lines().last().unwrap_or("")
        );
        Ok(())
    }
}

/// Remove a copy (a file or a tree); nothing there is fine.
fn remove(path: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path)
            .with_context(|| format!("failed to remove {}", path.display())),
        Ok(_) => std::fs::remove_file(path)
            .with_context(|| format!("failed to remove {}", path.display())),
    }
}

/// What [`Sandbox::state_hash`] hashes of one tree, appended to `out`.
fn hash_tree(path: &Path, rel: &Path, out: &mut Vec<u8>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    out.extend_from_slice(rel.to_string_lossy().as_bytes());
    out.push(0);
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::read_link(path) {
            out.extend_from_slice(target.to_string_lossy().as_bytes());
        }
    } else if meta.is_dir() {
        let mut names: Vec<_> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
            hash_tree(&path.join(&name), &rel.join(&name), out);
        }
    } else if let Ok(bytes) = std::fs::read(path) {
        out.extend_from_slice(fitness_shared::integrity::sha256_hex(&bytes).as_bytes());
    }
    out.push(0);
}

/// Copy `from` (a file, a symlink or a tree) to `to`, within `budget`
/// bytes; symlinks are copied as links, never followed.
fn copy_tree(from: &Path, to: &Path, budget: &mut u64) -> anyhow::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let meta = std::fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from)?;
        std::os::unix::fs::symlink(target, to)?;
    } else if meta.is_dir() {
        std::fs::create_dir_all(to)?;
        std::fs::set_permissions(to, meta.permissions())?;
        let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            copy_tree(&entry.path(), &to.join(entry.file_name()), budget)?;
        }
    } else if meta.is_file() {
        *budget = budget.checked_sub(meta.len()).ok_or_else(|| {
            anyhow::anyhow!("the sandbox copies at most {} GiB", MAX_COPY_BYTES >> 30)
        })?;
        std::fs::copy(from, to)?;
    }
    Ok(())
}

/// The server under measurement: its target (the copies' in a copy
/// sandbox), the session trials use, and whether the state may have
/// changed since it was last put back.
pub struct Server {
    target: Target,
    tap: Tap,
    timeout: Duration,
    session: RefCell<Option<Rc<Session>>>,
    sandbox: Sandbox,
    /// A call that may write reached the server since the state was last
    /// put back.
    dirty: Cell<bool>,
    /// Who answers the server's requests for input, over every session.
    desk: InputDesk,
    /// The run's trace context, over every session.
    tracer: Option<Tracer>,
}

impl Server {
    pub fn new(target: Target, sandbox: Sandbox, tap: Tap, timeout: Duration) -> Server {
        Server {
            target,
            tap,
            timeout,
            session: RefCell::new(None),
            sandbox,
            dirty: Cell::new(false),
            desk: InputDesk::default(),
            tracer: None,
        }
    }

    /// Sessions whose calls carry `tracer`'s trace context.
    pub fn tracing(mut self, tracer: Tracer) -> Server {
        self.tracer = Some(tracer);
        self
    }

    /// Sessions that answer the server's requests for input at `desk`.
    pub fn serving(mut self, desk: InputDesk) -> Server {
        self.desk = desk;
        self
    }

    /// The target the run talks to.
    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Connect (or connect again).
    pub async fn connect(&self) -> anyhow::Result<Rc<Session>> {
        let old = self.session.borrow_mut().take();
        if let Some(old) = old {
            close(old).await;
        }
        let session = Rc::new(
            Session::connect_serving(
                &self.target,
                self.tap.clone(),
                None,
                self.timeout,
                self.desk.clone(),
            )
            .await?,
        );
        session.set_tracer(self.tracer.clone());
        *self.session.borrow_mut() = Some(session.clone());
        Ok(session)
    }

    /// The session under way.
    pub fn session(&self) -> anyhow::Result<Rc<Session>> {
        self.session
            .borrow()
            .clone()
            .context("no session with the server is open")
    }

    /// A call that may write reached the server.
    pub fn wrote(&self) {
        self.dirty.set(true);
    }

    /// Generation (or an extension batch) is done: its state is the one
    /// trials start from.
    pub fn generated(&self) -> anyhow::Result<()> {
        self.sandbox.snapshot()?;
        self.dirty.set(false);
        Ok(())
    }

    /// Before generation: a reset sandbox starts from the operator's state.
    pub async fn before_generation(&self) -> anyhow::Result<()> {
        self.sandbox.reset("before generation", &self.tap).await
    }

    /// Before a trial (or generation of an extension batch) that reaches
    /// the server: the state put back, when a sandbox can.
    pub async fn before_trial(&self, corr_id: &str) -> anyhow::Result<()> {
        if self.sandbox.settings.reset.is_some() {
            return self
                .sandbox
                .reset(&format!("before {corr_id}"), &self.tap)
                .await;
        }
        if self.sandbox.copies.is_empty() || !self.dirty.get() {
            return Ok(());
        }
        let old = self.session.borrow_mut().take();
        if let Some(old) = old {
            close(old).await;
        }
        self.sandbox.restore_copies()?;
        self.tap.event(
            "fitness.restored",
            json!({"before": corr_id, "paths": self.sandbox.copied_paths(),
                   "state_sha256": self.sandbox.state_hash()}),
            Some(corr_id),
        );
        self.connect().await.with_context(|| {
            format!("the server did not start again over the restored copy before {corr_id}")
        })?;
        self.dirty.set(false);
        Ok(())
    }

    /// End the session; a reset sandbox is reset once more.
    pub async fn close(self) -> anyhow::Result<()> {
        let old = self.session.borrow_mut().take();
        if let Some(old) = old {
            close(old).await;
        }
        self.sandbox.reset("after the run", &self.tap).await
    }
}

/// Act generation puts the state back through the server: the copy
/// restored and the server started again, or the operator's reset run.
impl crate::suite::act::SandboxState for Server {
    async fn restore(&self, why: &str) -> anyhow::Result<()> {
        self.wrote();
        self.before_trial(why).await
    }

    fn session(&self) -> anyhow::Result<Rc<Session>> {
        Server::session(self)
    }
}

/// Close a session no one else holds; a clone still held is dropped,
/// which kills its server all the same.
async fn close(session: Rc<Session>) {
    if let Ok(session) = Rc::try_unwrap(session) {
        session.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_replaced_where_the_command_line_names_it() {
        assert_eq!(
            replace_path("/srv/data", "/srv/data", "/tmp/c").as_deref(),
            Some("/tmp/c")
        );
        assert_eq!(
            replace_path("--db-path=/srv/data/shop.db", "/srv/data", "/tmp/c").as_deref(),
            Some("--db-path=/tmp/c/shop.db")
        );
        assert_eq!(replace_path("/srv/database", "/srv/data", "/tmp/c"), None);
        assert_eq!(replace_path("stdio", "/srv/data", "/tmp/c"), None);
    }

    #[test]
    fn a_copy_is_restored_from_its_snapshot_and_the_original_never_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let original = dir.path().join("notes");
        std::fs::create_dir_all(original.join("sub")).expect("mkdir");
        std::fs::write(original.join("sub/a.txt"), "alpha").expect("write");
        std::os::unix::fs::symlink("sub/a.txt", original.join("link")).expect("symlink");
        let settings = SandboxSettings {
            enabled: true,
            reset: None,
            copies: vec![original.clone()],
        };
        let target = Target::Stdio(crate::mcp::stdio::StdioTarget {
            program: "server".into(),
            args: vec![original.display().to_string()],
            env: vec![],
        });
        settings.check(&target).expect("the flags fit the target");
        let (sandbox, rewritten) = Sandbox::prepare(&settings, &target).expect("prepared");
        let Target::Stdio(s) = &rewritten else {
            unreachable!()
        };
        let work = PathBuf::from(&s.args[0]);
        assert_ne!(work, original);
        assert_eq!(
            std::fs::read_to_string(work.join("sub/a.txt")).unwrap(),
            "alpha"
        );
        assert!(
            std::fs::symlink_metadata(work.join("link"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        sandbox.snapshot().expect("snapshot");
        std::fs::write(work.join("sub/a.txt"), "changed").expect("write the copy");
        std::fs::write(work.join("new.txt"), "litter").expect("write the copy");
        sandbox.restore_copies().expect("restore");
        assert_eq!(
            std::fs::read_to_string(work.join("sub/a.txt")).unwrap(),
            "alpha"
        );
        assert!(!work.join("new.txt").exists());
        assert_eq!(
            std::fs::read_to_string(original.join("sub/a.txt")).unwrap(),
            "alpha"
        );
        let workspace = work.clone();
        drop(sandbox);
        assert!(!workspace.exists(), "the copies go with the sandbox");
    }

    #[test]
    fn the_flags_need_a_sandbox_and_a_path_the_server_names() {
        let target = Target::Stdio(crate::mcp::stdio::StdioTarget {
            program: "server".into(),
            args: vec!["/definitely/not/named".into()],
            env: vec![],
        });
        let reset = SandboxSettings {
            enabled: false,
            reset: Some("true".into()),
            copies: vec![],
        };
        assert!(
            reset
                .check(&target)
                .unwrap_err()
                .to_string()
                .contains("--sandbox")
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let unnamed = SandboxSettings {
            enabled: true,
            reset: None,
            copies: vec![dir.path().to_path_buf()],
        };
        assert!(
            unnamed
                .check(&target)
                .unwrap_err()
                .to_string()
                .contains("never name")
        );
    }
}
