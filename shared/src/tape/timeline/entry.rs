//! What a timeline is made of: its entries (each a call, a response, a
//! turn or an event, with the arm of the run it belongs to and where its
//! lines sit on the tapes), the tapes' summaries, and the timeline itself.

use crate::tape::line::Plane;
use crate::tape::stats::RecordCounts;

/// What one timeline entry shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A JSON-RPC request, with its response when one was recorded.
    Call,
    /// A response whose request is not on the tape.
    Response,
    /// A message with no id (a notification).
    Notification,
    /// An agent turn.
    Turn,
    /// A harness event (`dir:"event"`, `command`, `telemetry`).
    Event,
    Meta,
    End,
    /// A line of a type this viewer does not know.
    Other,
}

impl EntryKind {
    pub const ALL: [EntryKind; 8] = [
        EntryKind::Call,
        EntryKind::Response,
        EntryKind::Notification,
        EntryKind::Turn,
        EntryKind::Event,
        EntryKind::Meta,
        EntryKind::End,
        EntryKind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Call => "call",
            EntryKind::Response => "response",
            EntryKind::Notification => "notification",
            EntryKind::Turn => "turn",
            EntryKind::Event => "event",
            EntryKind::Meta => "meta",
            EntryKind::End => "end",
            EntryKind::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<EntryKind> {
        EntryKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Where one tape line sits: which tape, its 1-based line number, and its
/// byte range in that tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRef {
    pub tape: usize,
    pub line: u32,
    pub start: usize,
    pub end: usize,
}

/// What a mark on the run's timeline strip stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    /// A model call: an assistant turn, or a failed attempt (`llm.error`).
    Model,
    /// A tool call: a `tools/call` request, or one the harness withheld or
    /// refused (never sent).
    Tool,
    /// Any other JSON-RPC request (initialize, tools/list, ping, a probe).
    Protocol,
}

/// The trial arm a line belongs to, read from its `corr_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arm {
    /// `<task>`: the agent driving the server.
    Drive,
    /// `<task>::construct`.
    Construct,
    /// `<task>::null-no-tools`.
    NullNoTools,
    /// `<task>::null-stubbed-empty`.
    NullStubbedEmpty,
    /// `<task>::null-random`.
    NullRandom,
    /// `<task>::screen`.
    Screen,
    /// `probe::<id>`.
    Probes,
    /// `generate` / `generate::<batch>`: the suite generator's own calls
    /// (schema-walk reads the server's real answers).
    Generate,
    /// A `corr_id` with a suffix this viewer does not know.
    Other,
    /// No `corr_id`: session set-up, harness-wide events.
    Untagged,
}

impl Arm {
    pub const ALL: [Arm; 10] = [
        Arm::Drive,
        Arm::Construct,
        Arm::NullNoTools,
        Arm::NullStubbedEmpty,
        Arm::NullRandom,
        Arm::Screen,
        Arm::Probes,
        Arm::Generate,
        Arm::Other,
        Arm::Untagged,
    ];

    /// The arm of a `corr_id` (SPEC R-TAPE-5).
    pub fn of(corr_id: Option<&str>) -> Arm {
        let Some(corr) = corr_id.filter(|c| !c.is_empty()) else {
            return Arm::Untagged;
        };
        if corr.starts_with("probe::") {
            return Arm::Probes;
        }
        if corr == "generate" || corr.starts_with("generate::") {
            return Arm::Generate;
        }
        match corr.rsplit_once("::") {
            None => Arm::Drive,
            Some((_, "construct")) => Arm::Construct,
            Some((_, "null-no-tools")) => Arm::NullNoTools,
            Some((_, "null-stubbed-empty")) => Arm::NullStubbedEmpty,
            Some((_, "null-random")) => Arm::NullRandom,
            Some((_, "screen")) => Arm::Screen,
            Some(_) => Arm::Other,
        }
    }

    /// The name used in filters and URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Drive => "drive",
            Arm::Construct => "construct",
            Arm::NullNoTools => "null-no-tools",
            Arm::NullStubbedEmpty => "null-stubbed-empty",
            Arm::NullRandom => "null-random",
            Arm::Screen => "screen",
            Arm::Probes => "probes",
            Arm::Generate => "generate",
            Arm::Other => "other",
            Arm::Untagged => "untagged",
        }
    }

    pub fn parse(s: &str) -> Option<Arm> {
        Arm::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// One row of the merged timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Position in the merged timeline (0-based); deep links use it.
    pub n: usize,
    /// ISO time of the (first) line, when it has one.
    pub t: Option<String>,
    pub plane: Plane,
    pub kind: EntryKind,
    pub arm: Arm,
    pub corr_id: Option<String>,
    /// One line: method and tool, role and first text, event kind.
    pub title: String,
    /// A short second line: usage, blocks, event fields.
    pub detail: String,
    /// Response time minus request time.
    pub latency_ms: Option<f64>,
    /// JSON-RPC error, `isError`, a failed tool result, a protocol error.
    pub error: Option<String>,
    /// A request with no response on the tape.
    pub pending: bool,
    /// A destructive call event.
    pub destructive: bool,
    /// The tape lines behind this entry (a request and its response).
    pub lines: Vec<LineRef>,
    /// Milliseconds since the epoch of the entry's time (or the last time
    /// its tape gave before it).
    pub t_ms: Option<f64>,
    /// A model call or a tool call: a mark on the timeline strip.
    pub mark: Option<MarkKind>,
    /// An assistant turn's duration (it ended at `t`).
    pub span_ms: Option<f64>,
    /// A gate's verdict: its id and where it stands.
    pub gate: Option<(String, crate::gate_state::GateState)>,
}

/// What one tape held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TapeSummary {
    pub plane: Option<Plane>,
    /// Lines by kind, as `fitness tape stats` counts them.
    pub records: RecordCounts,
    /// Lines skipped (blank lines are not counted; bad ones are).
    pub skipped: u64,
    /// `tools/call` requests, answered or not.
    pub tool_calls: u64,
    /// `tools/call` requests with no response.
    pub tool_pending: u64,
    /// Request/response pairs of any method.
    pub pairs: u64,
}

/// The merged timeline of one or more tapes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    pub entries: Vec<Entry>,
    pub tapes: Vec<TapeSummary>,
    /// Every `corr_id` seen, first-seen order, with its arm and entry count.
    pub trials: Vec<(String, Arm, usize)>,
    /// `false` for a [`TimelineBuilder::preview`]: the tapes were still being
    /// read, the counts are so far, and a call shown without its response may
    /// yet get one.
    pub complete: bool,
}

impl Timeline {
    /// Entries of one kind.
    pub fn count_kind(&self, kind: EntryKind) -> usize {
        self.entries.iter().filter(|e| e.kind == kind).count()
    }
}
