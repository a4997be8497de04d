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
//!
//! A tape has a size cap ([`DEFAULT_TAPE_CAP`], or the run's registered
//! one): once a tape holds that many bytes it takes a `fitness.tape_cap`
//! event and then no more frames or turns, only a few harness events and its
//! `end` line, so a flooding server can fill neither the disk nor the
//! reader. Whoever holds [`Tap::cap_reached`] learns of it at once.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fitness_shared::redact::Hits;
use fitness_shared::tape::{Direction, End, Event, EventDir, Line, Meta, Producer, TapeWriter};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::clock;

/// The default tape-size cap: far beyond a real run's tapes (a few MB).
pub const DEFAULT_TAPE_CAP: u64 = 256 * 1024 * 1024;

/// Room kept past the cap for the harness's own closing events.
const HARNESS_GRACE: u64 = 1024 * 1024;

struct Sink {
    writer: TapeWriter<File>,
    started: Instant,
    ended: bool,
    cap: Cap,
}

/// The tape-size cap and what happened at it.
struct Cap {
    limit: u64,
    /// Lines not written because the cap was reached.
    dropped: u64,
    reached: tokio::sync::watch::Sender<bool>,
}

/// What a write puts on the tape: a frame or turn, or a harness event.
#[derive(PartialEq)]
enum Writes {
    Traffic,
    Harness,
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

    /// The two tapes of one directory: the wire tape (`mcp.jsonl`) and the
    /// agent tape (`agent.jsonl`, whose meta `kind` is `agent_kind`).
    pub fn create_pair(
        dir: &Path,
        label: &str,
        command: Vec<String>,
        agent_kind: &str,
    ) -> anyhow::Result<(Self, Self)> {
        Ok((
            Self::create(
                &dir.join(fitness_shared::site::MCP_TAPE),
                label,
                command.clone(),
            )?,
            Self::create_kind(
                &dir.join(fitness_shared::site::AGENT_TAPE),
                label,
                command,
                agent_kind,
            )?,
        ))
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
                cap: Cap {
                    limit: DEFAULT_TAPE_CAP,
                    dropped: 0,
                    reached: tokio::sync::watch::Sender::new(false),
                },
            }))),
        })
    }

    /// Cap this tape at `limit` bytes (see the module docs).
    pub fn set_cap(&self, limit: u64) {
        if let Some(sink) = &self.sink {
            sink.lock().unwrap_or_else(|p| p.into_inner()).cap.limit = limit;
        }
    }

    /// Becomes `true` when the tape reaches its cap (never, for a disabled tap).
    pub fn cap_reached(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        let sink = self.sink.as_ref()?;
        Some(
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .cap
                .reached
                .subscribe(),
        )
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

    fn with_sink(&self, writes: Writes, f: impl FnOnce(&mut Sink)) {
        if let Some(sink) = &self.sink {
            // A poisoned lock only means another task panicked mid-write;
            // the file is still line-complete, so keep writing.
            let mut guard = sink.lock().unwrap_or_else(|p| p.into_inner());
            if !guard.ended && guard.within_cap(writes) {
                f(&mut guard);
            }
        }
    }

    /// Record one frame already checked to be JSON, byte for byte.
    pub fn frame_raw(&self, dir: Direction, raw: &RawValue, corr_id: Option<&str>) {
        self.with_sink(Writes::Traffic, |sink| {
            let _ = sink.writer.write_wire_raw(&clock::now(), dir, raw, corr_id);
        });
    }

    /// Record one frame exactly as it crossed the wire.
    pub fn frame(&self, dir: Direction, frame: &str, corr_id: Option<&str>) {
        self.with_sink(Writes::Traffic, |sink| {
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
        self.with_sink(Writes::Harness, |sink| {
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
        self.with_sink(Writes::Traffic, |sink| {
            let _ = sink.writer.write_line(line);
        });
    }

    /// Write the `end` line (also past the cap); later writes are dropped.
    /// A capped tape's end says how many lines the cap kept off it.
    pub fn end(&self, reason: &str) {
        let Some(sink) = &self.sink else { return };
        let mut sink = sink.lock().unwrap_or_else(|p| p.into_inner());
        if sink.ended {
            return;
        }
        let duration = u64::try_from(sink.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut extra = Map::new();
        if *sink.cap.reached.borrow() {
            extra.insert("dropped_lines".into(), sink.cap.dropped.into());
        }
        let _ = sink.writer.write_line(&Line::End(End {
            t: clock::now(),
            duration_ms: Some(duration),
            reason: Some(reason.to_owned()),
            exit_code: None,
            extra,
        }));
        sink.ended = true;
    }
}

impl Sink {
    /// Whether a write of this kind may still go on the tape; the first
    /// write past the cap records the cap and tells the listeners.
    fn within_cap(&mut self, writes: Writes) -> bool {
        let written = self.writer.bytes_written();
        if !*self.cap.reached.borrow() {
            if written < self.cap.limit {
                return true;
            }
            let _ = self.writer.write_line(&Line::Event(Event {
                t: clock::now(),
                dir: EventDir::Event,
                kind: Some("fitness.tape_cap".into()),
                raw: Some(
                    serde_json::json!({"limit_bytes": self.cap.limit, "written_bytes": written}),
                ),
                corr_id: None,
                extra: Map::new(),
            }));
            self.cap.reached.send_replace(true);
        }
        if writes == Writes::Harness && written < self.cap.limit.saturating_add(HARNESS_GRACE) {
            return true;
        }
        self.cap.dropped += 1;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tape_at_its_cap_takes_no_more_traffic_says_so_and_still_ends() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(fitness_shared::site::MCP_TAPE);
        let tap = Tap::create(&path, "t", vec![]).expect("tape");
        tap.set_cap(4096);
        let reached = tap.cap_reached().expect("an enabled tap");
        assert!(!*reached.borrow());
        for i in 0..1000 {
            tap.frame(Direction::Out, &format!("{{\"id\":{i}}}"), None);
        }
        assert!(*reached.borrow(), "the listener learns of the cap");
        tap.event("fitness.outcome", Value::Null, None);
        tap.end("tape_cap");
        let text = std::fs::read_to_string(&path).expect("tape");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
            .collect();
        assert!(text.len() < 4096 + 1024, "{} bytes", text.len());
        let cap = lines
            .iter()
            .position(|l| l["kind"] == "fitness.tape_cap")
            .expect("the cap event");
        assert!(
            lines[cap + 1..]
                .iter()
                .all(|l| l.get("raw").is_none_or(|r| r.get("id").is_none()))
        );
        assert_eq!(
            lines[lines.len() - 2]["kind"],
            "fitness.outcome",
            "harness events still fit"
        );
        let end = lines.last().expect("end");
        assert_eq!(end["type"], "end");
        assert_eq!(end["reason"], "tape_cap");
        let written = lines.iter().filter(|l| l["dir"] == "out").count() as u64;
        assert_eq!(end["dropped_lines"].as_u64(), Some(1000 - written));
    }
}
