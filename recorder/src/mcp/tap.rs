//! The wire tap: one shared, line-by-line flushed `mcp.jsonl` (R-TAPE-2/3/5/7).
//!
//! Every frame that crosses the wire in either direction is written with the
//! time it was observed and its corr_id. A line that is not JSON (a server
//! writing garbage on stdout) becomes a `fitness.unparsable` event, so the
//! tape stays readable whatever the server does. A disabled tap writes
//! nothing; the benchmark uses it as the untapped baseline.
//!
//! Every line, the meta line's `command` included, goes through the
//! process's redaction policy ([`crate::secrets`]) on its way to the file:
//! the tape on disk is the published form, and what it redacted is counted
//! ([`Tap::hits`]). Callers keep the unredacted values in memory.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fitness_shared::redact::Hits;
use fitness_shared::tape::{Direction, End, Event, EventDir, Line, Meta, Producer, TapeWriter};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::clock;

struct Sink {
    writer: TapeWriter<File>,
    started: Instant,
    ended: bool,
}

/// A handle on the tape, cheap to clone into the tasks that move frames.
#[derive(Clone, Default)]
pub struct Tap {
    sink: Option<Arc<Mutex<Sink>>>,
}

impl Tap {
    /// A tap that records nothing.
    pub fn disabled() -> Self {
        Tap { sink: None }
    }

    /// Create the wire tape `path` (`kind:"mcp"`) and write its meta line.
    pub fn create(path: &Path, label: &str, command: Vec<String>) -> anyhow::Result<Self> {
        Self::create_kind(path, label, command, "mcp")
    }

    /// Create a tape of another plane (`"agent"` for `agent.jsonl`) and write
    /// its meta line.
    pub fn create_kind(
        path: &Path,
        label: &str,
        command: Vec<String>,
        kind: &str,
    ) -> anyhow::Result<Self> {
        let file = File::create(path)
            .map_err(|e| anyhow::anyhow!("failed to create the tape {}: {e}", path.display()))?;
        let mut writer = TapeWriter::redacting(file, crate::secrets::policy());
        let meta = Meta {
            v: 1,
            started_at: clock::now(),
            label: Some(label.to_owned()),
            command,
            kind: Some(kind.to_owned()),
            source: Some(format!("fitness@{}", fitness_shared::VERSION)),
            producer: Some(Producer {
                name: "fitness".to_owned(),
                version: Some(fitness_shared::VERSION.to_owned()),
                config_hash: None,
                extra: Map::new(),
            }),
            extra: Map::new(),
        };
        writer.write_line(&Line::Meta(meta))?;
        Ok(Tap {
            sink: Some(Arc::new(Mutex::new(Sink {
                writer,
                started: Instant::now(),
                ended: false,
            }))),
        })
    }

    pub fn is_enabled(&self) -> bool {
        self.sink.is_some()
    }

    /// What redaction replaced on this tape so far, by marker label.
    pub fn hits(&self) -> Hits {
        self.sink.as_ref().map_or_else(Hits::default, |sink| {
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .writer
                .hits()
                .clone()
        })
    }

    fn with_sink(&self, f: impl FnOnce(&mut Sink)) {
        if let Some(sink) = &self.sink {
            // A poisoned lock only means another task panicked mid-write;
            // the file is still line-complete, so keep writing.
            let mut guard = sink.lock().unwrap_or_else(|p| p.into_inner());
            if !guard.ended {
                f(&mut guard);
            }
        }
    }

    /// Record one frame already checked to be JSON, byte for byte.
    pub fn frame_raw(&self, dir: Direction, raw: &RawValue, corr_id: Option<&str>) {
        self.with_sink(|sink| {
            let _ = sink.writer.write_wire_raw(&clock::now(), dir, raw, corr_id);
        });
    }

    /// Record one frame exactly as it crossed the wire.
    pub fn frame(&self, dir: Direction, frame: &str, corr_id: Option<&str>) {
        self.with_sink(|sink| {
            let t = clock::now();
            let trimmed = frame.trim_end_matches(['\r', '\n']);
            if sink
                .writer
                .write_wire_frame(&t, dir, trimmed, corr_id)
                .is_err()
            {
                let mut extra = Map::new();
                extra.insert(
                    "wireDir".into(),
                    Value::String(
                        match dir {
                            Direction::In => "in",
                            Direction::Out => "out",
                        }
                        .into(),
                    ),
                );
                let _ = sink.writer.write_line(&Line::Event(Event {
                    t,
                    dir: EventDir::Event,
                    kind: Some("fitness.unparsable".into()),
                    raw: Some(Value::String(trimmed.chars().take(4096).collect())),
                    corr_id: corr_id.map(str::to_owned),
                    extra,
                }));
            }
        });
    }

    /// Record a harness event (`dir:"event"`, `kind:"fitness.*"`).
    pub fn event(&self, kind: &str, raw: Value, corr_id: Option<&str>) {
        self.with_sink(|sink| {
            let _ = sink.writer.write_line(&Line::Event(Event {
                t: clock::now(),
                dir: EventDir::Event,
                kind: Some(kind.to_owned()),
                raw: Some(raw),
                corr_id: corr_id.map(str::to_owned),
                extra: Map::new(),
            }));
        });
    }

    /// Record any other line (agent turns); its `t` is the caller's.
    pub fn line(&self, line: &Line) {
        self.with_sink(|sink| {
            let _ = sink.writer.write_line(line);
        });
    }

    /// Write the `end` line; later writes are dropped.
    pub fn end(&self, reason: &str) {
        self.with_sink(|sink| {
            let duration = u64::try_from(sink.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let _ = sink.writer.write_line(&Line::End(End {
                t: clock::now(),
                duration_ms: Some(duration),
                reason: Some(reason.to_owned()),
                exit_code: None,
                extra: Map::new(),
            }));
            sink.ended = true;
        });
    }
}
