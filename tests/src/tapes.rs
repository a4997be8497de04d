//! What a run's tapes hold, counted straight from their lines, for the
//! replay's browser tests to hold the page against.

use std::collections::BTreeMap;
use std::path::Path;

use fitness_shared::tape::timeline::Arm;

/// Marks counted per lane, and the gates' verdicts in order.
pub type Marks = (BTreeMap<String, u64>, Vec<(String, bool)>);

/// Marks per lane of the replay's strip: every JSON-RPC request, every
/// assistant turn, every failed model attempt and every call the harness
/// withheld or refused, on the lane of its `corr_id`'s arm; and the gates'
/// verdicts (`fitness.gate` events), each `(gate, ok)`.
pub fn marks_by_lane(dir: &Path) -> anyhow::Result<Marks> {
    let mut lanes = BTreeMap::new();
    let mut gates = Vec::new();
    for name in ["mcp.jsonl", "agent.jsonl"] {
        for line in std::fs::read_to_string(dir.join(name))?.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let kind = v["kind"].as_str().unwrap_or("");
            if v["dir"] == "event" && kind == "fitness.gate" {
                gates.push((
                    v["raw"]["gate"].as_str().unwrap_or("").to_owned(),
                    v["raw"]["ok"] == true,
                ));
            }
            let request = v["raw"]["method"].is_string()
                && v["raw"].get("id").is_some_and(|id| !id.is_null())
                && (v["dir"] == "in" || v["dir"] == "out");
            let turn = v["type"] == "turn" && v["role"] == "assistant";
            let event = v["dir"] == "event"
                && ["llm.error", "fitness.blocked_call", "fitness.refused_call"].contains(&kind);
            if request || turn || event {
                let arm = Arm::of(v["corr_id"].as_str()).as_str().to_owned();
                *lanes.entry(arm).or_insert(0) += 1;
            }
        }
    }
    Ok((lanes, gates))
}
