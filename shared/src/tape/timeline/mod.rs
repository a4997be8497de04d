//! One merged, time-ordered timeline over a run's tapes, for the replay view.
//!
//! Pure and wasm-compatible: the caller hands over each tape's bytes line by
//! line (so a browser can parse in chunks and yield between them), and
//! [`TimelineBuilder::finish`] pairs JSON-RPC requests with their responses
//! (by id, keyed per tape and `source`, as the stats pair them), classifies
//! every line's trial arm from its `corr_id` (SPEC R-TAPE-5) and orders the
//! entries by time. Lines are never copied: an entry names the byte ranges of
//! the lines it came from, and the viewer slices the raw JSON from the tape.
//!
//! Line counts by kind follow [`LineKind::classify`] and the reader's skip
//! rules, so they equal the `records` block of `fitness tape stats`.

use std::collections::HashMap;

use crate::tape::line::LineKind;
use crate::tape::line::Plane;
use crate::tape::pairing::{AfterAnswer, Pairing, Reach, Repeat, Rules};

mod conversation;
mod describe;
mod entry;
mod shape;

use crate::tape::view::LineView;
pub use conversation::{Attempt, Conversation, Step, ToolResult, ToolUse, Verdict, conversation};
pub use describe::excerpt;
use describe::{Fact, describe};
pub use entry::{Arm, Entry, EntryKind, LineRef, MarkKind, TapeSummary, Timeline};
pub use shape::{BREAK_WIDTH, Break, LANE_ORDER, Lane, Mark, Shape, Tick};

/// Builds a [`Timeline`] from tapes fed line by line.
#[derive(Default)]
pub struct TimelineBuilder {
    facts: Vec<Fact>,
    tapes: Vec<TapeSummary>,
    /// Last time seen per tape: a line without `t` sorts after it.
    last_ms: Vec<Option<f64>>,
}

/// Milliseconds since the Unix epoch of an ISO 8601 UTC time such as
/// `2026-08-20T17:28:14.264Z` (offsets `+hh:mm` are applied); `None` when
/// the text is not such a time.
pub fn iso_millis(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        frac = format!("0.{}", &r[..digits]).parse::<f64>().ok()?;
        rest = &r[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" | "" => 0,
        r if r.len() == 6 && (r.starts_with('+') || r.starts_with('-')) => {
            let oh: i64 = r.get(1..3)?.parse().ok()?;
            let om: i64 = r.get(4..6)?.parse().ok()?;
            let sign = if r.starts_with('-') { -1 } else { 1 };
            sign * (oh * 60 + om)
        }
        _ => return None,
    };
    let days = crate::time::days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs as f64 * 1000.0 + (frac * 1000.0).round())
}

impl TimelineBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Start a tape of `plane`; returns its index for [`push_line`](Self::push_line).
    pub fn add_tape(&mut self, plane: Plane) -> usize {
        self.tapes.push(TapeSummary {
            plane: Some(plane),
            ..TapeSummary::default()
        });
        self.last_ms.push(None);
        self.tapes.len() - 1
    }

    /// How many tapes have been started.
    pub fn tape_count(&self) -> usize {
        self.tapes.len()
    }

    /// Feed a whole tape (`bytes` is the file). Browsers feed lines in
    /// chunks through [`push_line`](Self::push_line) instead.
    pub fn push_tape(&mut self, tape: usize, bytes: &[u8]) {
        for (line, start, end) in LineSplitter::new(bytes) {
            self.push_line(tape, line, start, &bytes[start..end]);
        }
    }

    /// Feed one line (without its newline) of tape `tape`: `line` is its
    /// 1-based number, `start` its byte offset in the tape. Follows the tape
    /// reader: a blank line is passed over, a line that is not a JSON object
    /// is counted as skipped.
    pub fn push_line(&mut self, tape: usize, line: u32, start: usize, bytes: &[u8]) {
        let Some(summary) = self.tapes.get_mut(tape) else {
            return;
        };
        let plane = summary.plane.unwrap_or(Plane::Mcp);
        let mut body = bytes;
        let mut offset = start;
        if line == 1
            && let Some(rest) = body.strip_prefix(b"\xEF\xBB\xBF")
        {
            body = rest;
            offset += 3;
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if !body.trim_ascii_start().starts_with(b"{") {
            summary.skipped += 1;
            return;
        }
        let mut spill = None;
        let Ok(parsed) = LineView::read(body, &mut spill) else {
            summary.skipped += 1;
            return;
        };
        let at = LineRef {
            tape,
            line,
            start: offset,
            end: offset + body.len(),
        };
        let kind = LineKind::classify(parsed.ty.0.as_deref(), parsed.dir.0.as_deref());
        summary.records.total += 1;
        match kind {
            LineKind::Meta => summary.records.meta += 1,
            LineKind::Message => summary.records.message += 1,
            LineKind::Event => summary.records.event += 1,
            LineKind::Turn => summary.records.turn += 1,
            LineKind::End => summary.records.end += 1,
            LineKind::Other => summary.records.other += 1,
        }
        let t = parsed
            .t
            .get()
            .or_else(|| parsed.started_at.get())
            .map(str::to_owned);
        let mut t_ms = t.as_deref().and_then(iso_millis);
        match t_ms {
            Some(ms) => self.last_ms[tape] = Some(ms),
            None => t_ms = self.last_ms[tape],
        }
        let fact = describe(&parsed, kind, at, plane, t, t_ms);
        self.facts.push(fact);
    }

    /// Pair, order and number the entries.
    pub fn finish(self) -> Timeline {
        let TimelineBuilder { facts, tapes, .. } = self;
        assemble(facts, tapes, None)
    }

    /// The timeline so far, while tapes are still being read: only the
    /// entries before the earliest time any unfinished tape has reached, so
    /// that lines not read yet (which come later on their tape) cannot sort
    /// among them. `reading` says, per tape, whether more lines may come.
    /// For tapes whose lines are in time order (as recorders write them),
    /// these entries are the first entries of [`finish`](Self::finish), in
    /// the same order. `complete` is `false`.
    pub fn preview(&self, reading: &[bool]) -> Timeline {
        let cut = self
            .last_ms
            .iter()
            .enumerate()
            .filter(|(i, _)| reading.get(*i).copied().unwrap_or(true))
            .map(|(_, ms)| ms.unwrap_or(f64::NEG_INFINITY))
            .fold(f64::INFINITY, f64::min);
        // Only the facts before the cut are copied: a response after it is
        // left out, and its call reads as not answered yet.
        let facts = self
            .facts
            .iter()
            .filter(|f| f.t_ms.is_none_or(|t| t < cut))
            .cloned()
            .collect();
        let mut timeline = assemble(facts, self.tapes.clone(), Some(cut));
        timeline.complete = false;
        timeline
    }

    /// The latest time tape `tape` has reached (`None` before its first
    /// timed line). A reader feeding several tapes at once reads next from
    /// the one that is furthest behind, so that previews grow evenly.
    pub fn reached(&self, tape: usize) -> Option<f64> {
        self.last_ms.get(tape).copied().flatten()
    }
}

/// Pair requests with responses, order by time and number the entries; with
/// `cut`, only entries before it (a preview).
fn assemble(facts: Vec<Fact>, mut tapes: Vec<TapeSummary>, cut: Option<f64>) -> Timeline {
    let (answer, answered_by) = pair_facts(&facts);
    let order = entry_order(&facts, &answered_by, cut);
    let mut facts: Vec<Option<Fact>> = facts.into_iter().map(Some).collect();
    let mut entries = Vec::with_capacity(order.len());
    let mut trial_index: HashMap<String, usize> = HashMap::new();
    let mut trials: Vec<(String, Arm, usize)> = Vec::new();
    for i in order {
        let Some(f) = facts[i].take() else { continue };
        let response = answer[i].and_then(|r| facts[r].take());
        let mut lines = vec![f.at];
        let mut latency_ms = None;
        let mut error = f.error;
        let mut detail = f.detail;
        let pending = f.kind == EntryKind::Call && response.is_none();
        let summary = &mut tapes[f.at.tape];
        if f.tool_call {
            summary.tool_calls += 1;
            if pending {
                summary.tool_pending += 1;
            }
        }
        if let Some(r) = response {
            summary.pairs += 1;
            lines.push(r.at);
            latency_ms = match (f.t_ms, r.t_ms) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            };
            error = error.or(r.error);
            if r.detail.starts_with("result ") {
                detail = format!("{detail}; {}", r.detail);
            }
        }
        let arm = Arm::of(f.corr_id.as_deref());
        if let Some(c) = &f.corr_id {
            match trial_index.get(c) {
                Some(&ti) => trials[ti].2 += 1,
                None => {
                    trial_index.insert(c.clone(), trials.len());
                    trials.push((c.clone(), arm, 1));
                }
            }
        }
        entries.push(Entry {
            n: entries.len(),
            t: f.t,
            plane: f.plane,
            kind: f.kind,
            arm,
            corr_id: f.corr_id,
            title: f.title,
            detail,
            latency_ms,
            error,
            pending,
            destructive: f.destructive,
            lines,
            t_ms: f.t_ms,
            mark: f.mark,
            span_ms: f.span_ms,
            gate: f.gate,
        });
    }
    Timeline {
        entries,
        tapes,
        trials,
        complete: true,
    }
}

/// For each fact, the response fact that answers it (`answer`) and whether
/// it is itself a response that answers a request (`answered_by`).
fn pair_facts(facts: &[Fact]) -> (Vec<Option<usize>>, Vec<bool>) {
    // Pair: each response answers the earliest unanswered request with
    // its key, anywhere on the tape; a response with no such request stands
    // alone. Every request is an entry, so a repeated id queues.
    let mut pairing = Pairing::new(Rules {
        reach: Reach::WholeTape,
        repeat: Repeat::Queue,
        after_answer: AfterAnswer::Close,
    });
    let mut request_facts = Vec::new();
    let mut response_facts = Vec::new();
    for (i, f) in facts.iter().enumerate() {
        let Some(k) = f.key.as_deref() else { continue };
        match f.kind {
            EntryKind::Call => {
                pairing.request(k, i as u64);
                request_facts.push(i);
            }
            EntryKind::Response => {
                pairing.response(k, i as u64);
                response_facts.push(i);
            }
            _ => {}
        }
    }
    let mut answer: Vec<Option<usize>> = vec![None; facts.len()];
    let mut answered_by: Vec<bool> = vec![false; facts.len()];
    let paired = pairing.finish();
    for (r, q) in paired.responses.iter().enumerate() {
        if let Some(q) = q {
            answer[request_facts[*q]] = Some(response_facts[r]);
            answered_by[response_facts[r]] = true;
        }
    }
    (answer, answered_by)
}

/// The facts that stand as entries (not an answering response; before
/// `cut`), by time, then tape, then line.
fn entry_order(facts: &[Fact], answered_by: &[bool], cut: Option<f64>) -> Vec<usize> {
    let within = |f: &Fact| cut.is_none_or(|c| f.t_ms.is_none_or(|t| t < c));
    let mut order: Vec<usize> = (0..facts.len())
        .filter(|&i| !answered_by[i] && within(&facts[i]))
        .collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (&facts[a], &facts[b]);
        let ta = fa.t_ms.unwrap_or(f64::NEG_INFINITY);
        let tb = fb.t_ms.unwrap_or(f64::NEG_INFINITY);
        ta.total_cmp(&tb)
            .then(fa.at.tape.cmp(&fb.at.tape))
            .then(fa.at.line.cmp(&fb.at.line))
    });
    order
}

/// Lines of a tape: (1-based number, start, end) without the newline.
pub struct LineSplitter<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: u32,
}

impl<'a> LineSplitter<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            line: 0,
        }
    }

    /// Byte offset of the next line.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl Iterator for LineSplitter<'_> {
    type Item = (u32, usize, usize);
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let start = self.pos;
        let end = match memchr::memchr(b'\n', &self.bytes[start..]) {
            Some(i) => start + i,
            None => self.bytes.len(),
        };
        self.pos = end + 1;
        self.line += 1;
        Some((self.line, start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::StatsBuilder;

    const MCP: &str = concat!(
        r#"{"v":1,"type":"meta","startedAt":"2026-08-20T17:00:00.000Z","label":"x","kind":"mcp"}"#,
        "\n",
        r#"{"t":"2026-08-20T17:00:01.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}},"corr_id":"t1"}"#,
        "\n",
        r#"{"t":"2026-08-20T17:00:01.250Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}},"corr_id":"t1"}"#,
        "\n",
        r#"{"t":"2026-08-20T17:00:02.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch"}},"corr_id":"t1::construct"}"#,
        "\n\n",
        "not json\n",
        r#"{"t":"2026-08-20T17:00:03.000Z","dir":"event","kind":"fitness.destructive_call","raw":{"tool":"rm"},"corr_id":"probe::p1"}"#,
        "\n",
        r#"{"t":"2026-08-20T17:00:04.000Z","type":"end","reason":"done","durationMs":4000}"#,
        "\n",
    );
    const AGENT: &str = concat!(
        r#"{"v":1,"type":"meta","startedAt":"2026-08-20T17:00:00.000Z","label":"x","kind":"llm"}"#,
        "\n",
        r#"{"t":"2026-08-20T17:00:00.500Z","type":"turn","role":"assistant","model":"m","usage":{"input_tokens":5,"output_tokens":2},"blocks":[{"type":"text","text":"<b>hi</b>"},{"type":"tool_use","id":"u1","name":"search","input":{}}],"corr_id":"t1::null-random"}"#,
        "\n",
    );

    fn build() -> Timeline {
        let mut b = TimelineBuilder::new();
        let m = b.add_tape(Plane::Mcp);
        b.push_tape(m, MCP.as_bytes());
        let a = b.add_tape(Plane::Agent);
        b.push_tape(a, AGENT.as_bytes());
        b.finish()
    }

    #[test]
    fn pairs_orders_and_classifies() {
        let tl = build();
        let titles: Vec<&str> = tl.entries.iter().map(|e| e.title.as_str()).collect();
        assert_eq!(tl.entries.len(), 7, "{titles:?}");
        // Ordered by time across both tapes: the turn at .5 s sits between.
        assert_eq!(tl.entries[2].kind, EntryKind::Turn);
        assert_eq!(tl.entries[2].arm, Arm::NullRandom);
        let call = &tl.entries[3];
        assert_eq!(call.title, "tools/call search");
        assert_eq!(call.latency_ms, Some(250.0));
        assert_eq!(call.error.as_deref(), Some("tool result isError: true"));
        assert_eq!(call.lines.len(), 2);
        assert_eq!(call.detail, "client to server; result []");
        assert_eq!(call.arm, Arm::Drive);
        let pending = &tl.entries[4];
        assert!(pending.pending);
        assert_eq!(pending.arm, Arm::Construct);
        assert!(tl.entries[5].destructive);
        assert_eq!(tl.entries[5].arm, Arm::Probes);
        assert_eq!(tl.tapes[0].tool_calls, 2);
        assert_eq!(tl.tapes[0].tool_pending, 1);
        assert_eq!(tl.tapes[0].skipped, 1);
        assert_eq!(tl.trials.len(), 4);
        // Raw ranges slice the exact line.
        let r = call.lines[0];
        assert!(MCP[r.start..r.end].starts_with(r#"{"t":"2026-08-20T17:00:01.000Z""#));
        assert!(MCP[r.start..r.end].ends_with(r#""corr_id":"t1"}"#));
    }

    #[test]
    fn line_counts_equal_the_stats_records() {
        let tl = build();
        for (i, tape) in [MCP, AGENT].iter().enumerate() {
            let mut sb = StatsBuilder::new();
            let report = crate::tape::add_tape(tape.as_bytes(), &mut sb).unwrap();
            let stats = sb.finish(None);
            assert_eq!(tl.tapes[i].records, stats.session.records);
            assert_eq!(tl.tapes[i].skipped, report.count);
        }
    }

    #[test]
    fn iso_millis_reads_utc_and_offsets() {
        assert_eq!(iso_millis("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(iso_millis("1970-01-01T00:00:01.5Z"), Some(1500.0));
        assert_eq!(iso_millis("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(
            iso_millis("2026-08-20T17:28:14.264Z"),
            Some(1_787_246_894_264.0)
        );
        assert_eq!(iso_millis("yesterday"), None);
    }

    #[test]
    fn arms_follow_the_corr_id_suffix() {
        assert_eq!(Arm::of(None), Arm::Untagged);
        assert_eq!(Arm::of(Some("task-1")), Arm::Drive);
        assert_eq!(Arm::of(Some("a::b::null-no-tools")), Arm::NullNoTools);
        assert_eq!(
            Arm::of(Some("x::null-stubbed-empty")),
            Arm::NullStubbedEmpty
        );
        assert_eq!(Arm::of(Some("x::screen")), Arm::Screen);
        assert_eq!(Arm::of(Some("probe::bogus-version")), Arm::Probes);
        assert_eq!(Arm::of(Some("generate")), Arm::Generate);
        assert_eq!(Arm::of(Some("generate::x1")), Arm::Generate);
        assert_eq!(Arm::of(Some("x::weird")), Arm::Other);
    }
}

#[cfg(test)]
mod anchor {
    use super::*;
    use crate::tape::StatsBuilder;
    use crate::tape::stats::Origin;

    /// On every anchor tape, the timeline's line counts and its `tools/call`
    /// figures are the stats' figures.
    #[test]
    fn anchor_tapes_agree_with_the_stats() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/anchor-board/traces");
        let mut checked = 0;
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            for (name, plane) in [("mcp.jsonl", Plane::Mcp), ("agent.jsonl", Plane::Agent)] {
                let bytes = std::fs::read(dir.join(name)).unwrap();
                let mut b = TimelineBuilder::new();
                let t = b.add_tape(plane);
                b.push_tape(t, &bytes);
                let tl = b.finish();
                let mut sb = StatsBuilder::new();
                crate::tape::add_tape(bytes.as_slice(), &mut sb).unwrap();
                let stats = sb.finish(None);
                let summary = &tl.tapes[0];
                assert_eq!(summary.records, stats.session.records, "{dir:?} {name}");
                let mcp_tools = stats.tools.iter().filter(|t| t.origin != Origin::Turn);
                let (calls, pending) =
                    mcp_tools.fold((0, 0), |(c, p), t| (c + t.calls, p + t.pending));
                if plane == Plane::Mcp {
                    assert_eq!(
                        (summary.tool_calls, summary.tool_pending),
                        (calls, pending),
                        "{dir:?}"
                    );
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 16);
    }

    /// Fed as the viewer feeds them (both tapes at once, a slice at a time
    /// from whichever has reached the earlier time), every preview of every
    /// anchor pair is a prefix of the finished timeline: the same entries in
    /// the same order, only a call's response may still be missing.
    #[test]
    fn previews_are_prefixes_of_the_finished_timeline() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/anchor-board/traces");
        let mut previews = 0;
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            let tapes: Vec<Vec<u8>> = ["mcp.jsonl", "agent.jsonl"]
                .iter()
                .map(|n| std::fs::read(dir.join(n)).unwrap())
                .collect();
            let lines: Vec<Vec<(u32, usize, usize)>> = tapes
                .iter()
                .map(|t| LineSplitter::new(t).collect())
                .collect();
            let mut b = TimelineBuilder::new();
            let ids = [b.add_tape(Plane::Mcp), b.add_tape(Plane::Agent)];
            let mut next = [0usize, 0];
            let mut shown = Vec::new();
            loop {
                let reading: Vec<bool> = (0..2).map(|i| next[i] < lines[i].len()).collect();
                if !reading.contains(&true) {
                    break;
                }
                // The unfinished tape that has reached the earlier time.
                let i = (0..2)
                    .filter(|&i| reading[i])
                    .min_by(|&a, &c| {
                        let ta = b.reached(a).unwrap_or(f64::NEG_INFINITY);
                        let tc = b.reached(c).unwrap_or(f64::NEG_INFINITY);
                        ta.total_cmp(&tc)
                    })
                    .unwrap();
                for &(line, start, end) in lines[i].iter().skip(next[i]).take(40) {
                    b.push_line(ids[i], line, start, &tapes[i][start..end]);
                    next[i] += 1;
                }
                let reading: Vec<bool> = (0..2).map(|i| next[i] < lines[i].len()).collect();
                let preview = b.preview(&reading);
                assert!(!preview.complete);
                shown.push(preview);
            }
            let full = b.finish();
            assert!(full.complete);
            for preview in shown {
                assert!(preview.entries.len() <= full.entries.len(), "{dir:?}");
                for (p, f) in preview.entries.iter().zip(&full.entries) {
                    assert_eq!(
                        (p.n, &p.t, p.kind, &p.title, &p.corr_id, p.lines[0]),
                        (f.n, &f.t, f.kind, &f.title, &f.corr_id, f.lines[0]),
                        "{dir:?}"
                    );
                    if !p.pending {
                        assert_eq!(p, f, "{dir:?}");
                    }
                }
                previews += 1;
            }
        }
        assert!(previews > 16);
    }
}
