//! The run's shape at a glance: one lane per phase or arm, in the order the
//! gates run them, each model call and each JSON-RPC request a mark spanning its
//! time, and the gates' verdicts as ticks. Computed from the merged
//! [`Timeline`] alone (no figure of the record is copied), once per
//! timeline, in one pass: the viewer draws each lane as one path.

use super::entry::{Arm, Entry, EntryKind, MarkKind, Timeline};

/// The lanes' order, top to bottom: the order the stages run.
pub const LANE_ORDER: [Arm; 10] = [
    Arm::Probes,
    Arm::Generate,
    Arm::Screen,
    Arm::NullRandom,
    Arm::NullNoTools,
    Arm::NullStubbedEmpty,
    Arm::Construct,
    Arm::Drive,
    Arm::Other,
    Arm::Untagged,
];

/// One call on the strip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    /// The timeline entry it stands for.
    pub entry: usize,
    pub start_ms: f64,
    pub end_ms: f64,
    pub kind: MarkKind,
    /// An error, a destructive or withheld call, or a call never answered:
    /// drawn in the server-fault colour.
    pub fault: bool,
}

/// The marks of one arm, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    pub arm: Arm,
    pub marks: Vec<Mark>,
}

/// A gate's verdict, when the recorder taped it: passed, failed, or still
/// waiting (a null baseline deferred to the agent's rate).
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub entry: usize,
    pub at_ms: f64,
    pub gate: String,
    pub state: crate::gate_state::GateState,
}

/// A stretch of the run where nothing happened (no call in flight, no
/// verdict) longer than [`IDLE_SHARE`] of it: drawn short, marked, with
/// its duration, so the stages around it keep their width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Break {
    pub start_ms: f64,
    pub end_ms: f64,
}

impl Break {
    pub fn ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }
}

/// An idle stretch longer than this share of the run is a [`Break`].
pub const IDLE_SHARE: f64 = 0.1;
/// And at least this long.
pub const IDLE_MIN_MS: f64 = 500.0;
/// The share of the axis a break is drawn as.
pub const BREAK_WIDTH: f64 = 0.03;

/// The strip: the time the tapes span, the lanes that have marks, the
/// ticks, and the idle stretches drawn short.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    pub start_ms: f64,
    pub end_ms: f64,
    pub lanes: Vec<Lane>,
    pub ticks: Vec<Tick>,
    pub breaks: Vec<Break>,
}

impl Shape {
    pub fn of(timeline: &Timeline) -> Shape {
        let times = || timeline.entries.iter().filter_map(|e| e.t_ms);
        let (Some(first), Some(last)) = (
            times().min_by(f64::total_cmp),
            times().max_by(f64::total_cmp),
        ) else {
            return Shape::default();
        };
        let mut start_ms = first;
        let mut by_arm: Vec<Vec<Mark>> = vec![Vec::new(); LANE_ORDER.len()];
        let mut ticks = Vec::new();
        for e in &timeline.entries {
            let Some(t) = e.t_ms else { continue };
            if let Some((gate, state)) = &e.gate {
                ticks.push(Tick {
                    entry: e.n,
                    at_ms: t,
                    gate: gate.clone(),
                    state: *state,
                });
            }
            let Some(kind) = e.mark else { continue };
            let (a, b) = span(e, t);
            start_ms = start_ms.min(a);
            let lane = LANE_ORDER.iter().position(|x| *x == e.arm).unwrap_or(0);
            by_arm[lane].push(Mark {
                entry: e.n,
                start_ms: a,
                end_ms: b,
                kind,
                fault: e.error.is_some()
                    || e.destructive
                    || (timeline.complete && e.pending)
                    || e.kind == EntryKind::Event && kind == MarkKind::Tool,
            });
        }
        let end_ms = by_arm
            .iter()
            .flatten()
            .map(|m| m.end_ms)
            .fold(last, f64::max);
        let lanes: Vec<Lane> = LANE_ORDER
            .iter()
            .zip(by_arm)
            .filter(|(_, marks)| !marks.is_empty())
            .map(|(arm, mut marks)| {
                marks.sort_by(|x, y| x.start_ms.total_cmp(&y.start_ms));
                Lane { arm: *arm, marks }
            })
            .collect();
        let breaks = idle_breaks(&lanes, &ticks, start_ms, end_ms);
        Shape {
            start_ms,
            end_ms,
            lanes,
            ticks,
            breaks,
        }
    }

    /// Where `ms` falls along the strip, from 0 to 1: time to scale, each
    /// break drawn as [`BREAK_WIDTH`] of the axis.
    pub fn position(&self, ms: f64) -> f64 {
        let span = self.end_ms - self.start_ms;
        if span <= 0.0 || !ms.is_finite() {
            return 0.0;
        }
        let ms = ms.clamp(self.start_ms, self.end_ms);
        let scale = self.scale();
        let mut x = 0.0;
        let mut from = self.start_ms;
        for b in &self.breaks {
            if ms <= b.start_ms {
                break;
            }
            x += (b.start_ms - from) * scale;
            if ms < b.end_ms {
                return (x + (ms - b.start_ms) / b.ms() * BREAK_WIDTH).min(1.0);
            }
            x += BREAK_WIDTH;
            from = b.end_ms;
        }
        (x + (ms - from) * scale).clamp(0.0, 1.0)
    }

    /// The time at `fraction` of the strip: [`Shape::position`] read back.
    pub fn time_at(&self, fraction: f64) -> f64 {
        let f = fraction.clamp(0.0, 1.0);
        let scale = self.scale();
        let mut x = 0.0;
        let mut from = self.start_ms;
        for b in &self.breaks {
            let before = (b.start_ms - from) * scale;
            if f <= x + before {
                return from + (f - x) / scale.max(f64::MIN_POSITIVE);
            }
            x += before;
            if f <= x + BREAK_WIDTH {
                return b.start_ms + (f - x) / BREAK_WIDTH * b.ms();
            }
            x += BREAK_WIDTH;
            from = b.end_ms;
        }
        (from + (f - x) / scale.max(f64::MIN_POSITIVE)).min(self.end_ms)
    }

    /// The share of the axis per millisecond not in a break.
    fn scale(&self) -> f64 {
        let idle: f64 = self.breaks.iter().map(Break::ms).sum();
        let active = (self.end_ms - self.start_ms - idle).max(1.0);
        let axis = (1.0 - BREAK_WIDTH * self.breaks.len() as f64).max(0.1);
        axis / active
    }

    /// Marks on every lane.
    pub fn marks(&self) -> usize {
        self.lanes.iter().map(|l| l.marks.len()).sum()
    }

    /// The mark of `lane` nearest to `at_ms` (one under it, else the
    /// closest edge), for hover and click.
    pub fn nearest(&self, lane: usize, at_ms: f64) -> Option<&Mark> {
        let marks = &self.lanes.get(lane)?.marks;
        let gap = |m: &Mark| {
            if at_ms < m.start_ms {
                m.start_ms - at_ms
            } else if at_ms > m.end_ms {
                at_ms - m.end_ms
            } else {
                0.0
            }
        };
        marks.iter().min_by(|x, y| gap(x).total_cmp(&gap(y)))
    }
}

/// The stretches where no mark is in flight and no verdict falls, longer
/// than [`IDLE_SHARE`] of the run and [`IDLE_MIN_MS`].
fn idle_breaks(lanes: &[Lane], ticks: &[Tick], start: f64, end: f64) -> Vec<Break> {
    let span = end - start;
    if span <= 0.0 {
        return Vec::new();
    }
    let mut busy: Vec<(f64, f64)> = lanes
        .iter()
        .flat_map(|l| l.marks.iter().map(|m| (m.start_ms, m.end_ms)))
        .chain(ticks.iter().map(|t| (t.at_ms, t.at_ms)))
        .collect();
    busy.sort_by(|a, b| a.0.total_cmp(&b.0));
    let least = (span * IDLE_SHARE).max(IDLE_MIN_MS);
    let mut breaks = Vec::new();
    let mut reached = start;
    for (a, b) in busy {
        if a - reached > least {
            breaks.push(Break {
                start_ms: reached,
                end_ms: a,
            });
        }
        reached = reached.max(b);
    }
    if end - reached > least {
        breaks.push(Break {
            start_ms: reached,
            end_ms: end,
        });
    }
    breaks
}

/// When a call ran: an assistant turn ends at its time (it is written when
/// the reply is in) and lasted its duration; a request starts at its time
/// and lasted until its response.
fn span(e: &Entry, t: f64) -> (f64, f64) {
    match (e.span_ms, e.latency_ms) {
        (Some(d), _) if d.is_finite() && d >= 0.0 => (t - d, t),
        (_, Some(l)) if l.is_finite() && l >= 0.0 => (t, t + l),
        _ => (t, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate_state::GateState;
    use crate::tape::line::Plane;
    use crate::tape::timeline::TimelineBuilder;

    fn timeline(mcp: &str, agent: &str) -> Timeline {
        let mut b = TimelineBuilder::new();
        let m = b.add_tape(Plane::Mcp);
        b.push_tape(m, mcp.as_bytes());
        let a = b.add_tape(Plane::Agent);
        b.push_tape(a, agent.as_bytes());
        b.finish()
    }

    #[test]
    fn each_call_is_a_mark_on_its_arms_lane_in_stage_order_with_gates_as_ticks() {
        let mcp = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"m"}
{"t":"2026-01-01T00:00:01.000Z","dir":"in","corr_id":"t1","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{}}}}
{"t":"2026-01-01T00:00:01.250Z","dir":"out","corr_id":"t1","raw":{"jsonrpc":"2.0","id":1,"result":{"content":[]}}}
{"t":"2026-01-01T00:00:00.500Z","dir":"in","corr_id":"probe::ping","raw":{"jsonrpc":"2.0","id":2,"method":"ping"}}
{"t":"2026-01-01T00:00:02.000Z","dir":"in","corr_id":"t2::null-random","raw":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add"}}}
{"t":"2026-01-01T00:00:02.100Z","dir":"out","corr_id":"t2::null-random","raw":{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}}
"#;
        let agent = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"a"}
{"type":"turn","t":"2026-01-01T00:00:00.900Z","role":"user","blocks":[],"corr_id":"t1"}
{"type":"turn","t":"2026-01-01T00:00:00.950Z","role":"assistant","blocks":[],"timing":{"duration_ms":400},"corr_id":"t1"}
{"t":"2026-01-01T00:00:01.500Z","dir":"event","kind":"llm.error","corr_id":"t1::null-no-tools","raw":{"class":"server"}}
{"t":"2026-01-01T00:00:03.000Z","dir":"event","kind":"fitness.gate","raw":{"gate":"null_baseline","ok":true,"reason":"pass"}}
{"t":"2026-01-01T00:00:03.000Z","dir":"event","kind":"fitness.gate","raw":{"gate":"null_baseline","ok":true,"reason":"awaiting_agent_rate"}}
"#;
        let t = timeline(mcp, agent);
        let shape = Shape::of(&t);
        let arms: Vec<Arm> = shape.lanes.iter().map(|l| l.arm).collect();
        assert_eq!(
            arms,
            [Arm::Probes, Arm::NullRandom, Arm::NullNoTools, Arm::Drive]
        );
        assert_eq!(
            shape.marks(),
            5,
            "two tool calls, a probe, a turn, a failed attempt"
        );
        assert_eq!(shape.lanes[0].marks[0].kind, MarkKind::Protocol);
        assert!(shape.lanes[0].marks[0].fault, "a ping never answered");
        let drive = &shape.lanes[3].marks;
        assert_eq!(drive[0].kind, MarkKind::Model);
        assert_eq!(
            (drive[0].start_ms, drive[0].end_ms),
            (t0() + 550.0, t0() + 950.0)
        );
        assert_eq!(drive[1].kind, MarkKind::Tool);
        assert_eq!(drive[1].end_ms - drive[1].start_ms, 250.0);
        assert!(!drive[1].fault);
        assert!(shape.lanes[1].marks[0].fault, "an error answer");
        assert!(shape.lanes[2].marks[0].fault, "a failed model call");
        assert_eq!(shape.ticks.len(), 2);
        assert_eq!(shape.ticks[0].gate, "null_baseline");
        assert_eq!(shape.ticks[0].state, GateState::Passed);
        // Deferred to the agent's rate: it did not stop the run, nor pass.
        assert_eq!(shape.ticks[1].state, GateState::Undecided);
        assert_eq!(shape.start_ms, t0());
        assert_eq!(shape.end_ms, t0() + 3_000.0);
        let near = shape.nearest(3, t0() + 1_100.0).expect("a mark");
        assert_eq!(near.kind, MarkKind::Tool);
    }

    fn t0() -> f64 {
        crate::tape::timeline::iso_millis("2026-01-01T00:00:00.000Z").expect("time")
    }

    #[test]
    fn an_idle_stretch_is_drawn_short_and_the_stages_around_it_keep_their_width() {
        // Probes for 100 ms, 3 s of nothing, then two trials of 200 ms.
        let mcp = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"m"}
{"t":"2026-01-01T00:00:00.000Z","dir":"in","corr_id":"probe::ping","raw":{"jsonrpc":"2.0","id":1,"method":"ping"}}
{"t":"2026-01-01T00:00:00.100Z","dir":"out","corr_id":"probe::ping","raw":{"jsonrpc":"2.0","id":1,"result":{}}}
{"t":"2026-01-01T00:00:03.100Z","dir":"in","corr_id":"t1","raw":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add"}}}
{"t":"2026-01-01T00:00:03.300Z","dir":"out","corr_id":"t1","raw":{"jsonrpc":"2.0","id":2,"result":{"content":[]}}}
{"t":"2026-01-01T00:00:03.300Z","dir":"in","corr_id":"t2","raw":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add"}}}
{"t":"2026-01-01T00:00:03.500Z","dir":"out","corr_id":"t2","raw":{"jsonrpc":"2.0","id":3,"result":{"content":[]}}}
"#;
        let shape = Shape::of(&timeline(mcp, ""));
        assert_eq!(shape.breaks.len(), 1, "{:?}", shape.breaks);
        let b = shape.breaks[0];
        assert_eq!((b.start_ms - t0(), b.ms()), (100.0, 3_000.0));
        // The trials take most of the axis, not the last tenth.
        let trials = shape.position(t0() + 3_500.0) - shape.position(t0() + 3_100.0);
        assert!(trials > 0.6, "the trials span {trials}");
        let idle = shape.position(b.end_ms) - shape.position(b.start_ms);
        assert!((idle - BREAK_WIDTH).abs() < 1e-9, "{idle}");
        // Read back: a fraction of the strip is a time, and again the fraction.
        for f in [0.0, 0.01, 0.05, 0.3, 0.97, 1.0] {
            let back = shape.position(shape.time_at(f));
            assert!((back - f).abs() < 1e-6, "{f} -> {back}");
        }
        assert_eq!(shape.position(shape.start_ms), 0.0);
        assert!((shape.position(shape.end_ms) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn no_times_no_shape() {
        let t = timeline("", "");
        assert_eq!(Shape::of(&t), Shape::default());
    }
}
