//! What a server's tool list costs an agent in context, measured from the
//! provider's own counts: the stubbed-empty null arm and the no-tools arm
//! send the same system text and prompt and differ only in the tool list,
//! so the difference in their first turns' input tokens is what the list
//! costs on every turn, in that model's own tokenizer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool list's cost per turn, or why it could not be measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolListCost {
    /// The model whose counts these are.
    pub model: String,
    /// The median over the paired first turns of (stubbed-empty input -
    /// no-tools input), input counted with cache reads and writes (a
    /// provider's `input_tokens` leaves cached tokens out). Absent when no
    /// pair could be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_turn: Option<i64>,
    /// The tasks both arms' first turns reported usage for.
    pub pairs: u64,
    /// The counts are our own estimate (a sim runner counts characters),
    /// not a provider's tokenizer.
    pub estimate: bool,
    /// Why there is no figure, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl ToolListCost {
    /// From the first turns' input tokens of each task's two arms, `(with
    /// the tool list, without it)`, both reported: the median difference
    /// (the lower middle of an even count, so the figure is one that was
    /// seen).
    pub fn measure(model: &str, estimate: bool, pairs: &[(u64, u64)]) -> ToolListCost {
        let mut differences: Vec<i64> = pairs
            .iter()
            .map(|&(with, without)| {
                i64::try_from(with)
                    .unwrap_or(i64::MAX)
                    .saturating_sub(i64::try_from(without).unwrap_or(i64::MAX))
            })
            .collect();
        differences.sort_unstable();
        let median = (!differences.is_empty()).then(|| differences[(differences.len() - 1) / 2]);
        ToolListCost {
            model: model.to_owned(),
            tokens_per_turn: median,
            pairs: pairs.len() as u64,
            estimate,
            why: median.is_none().then(|| {
                "no task's first turn reported usage in both the no-tools and the stubbed-empty arm"
                    .to_owned()
            }),
        }
    }

    /// No pairing could be made, for `why`.
    pub fn unmeasured(model: &str, estimate: bool, why: &str) -> ToolListCost {
        ToolListCost {
            model: model.to_owned(),
            tokens_per_turn: None,
            pairs: 0,
            estimate,
            why: Some(why.to_owned()),
        }
    }

    /// The figure as the board and the record page print it.
    pub fn text(&self) -> String {
        match self.tokens_per_turn {
            Some(tokens) => format!(
                "tool list: {} tokens a turn, {}",
                group_thousands(tokens),
                if self.estimate {
                    "estimated"
                } else {
                    "measured"
                }
            ),
            None => format!(
                "tool list: not measured ({})",
                self.why.as_deref().unwrap_or("no pair")
            ),
        }
    }
}

/// The change in the tool list's cost between two runs of one server (a
/// rewrite check's before and after), in a sentence: the figures, their
/// difference, and how they were counted; or why there is no change to say.
pub fn tool_list_change(before: Option<&ToolListCost>, after: Option<&ToolListCost>) -> String {
    let tokens = |c: Option<&ToolListCost>| c.and_then(|c| c.tokens_per_turn);
    match (tokens(before), tokens(after)) {
        (Some(b), Some(a)) => format!(
            "Tool list: {} tokens a turn before, {} after ({}{}), {}.",
            group_thousands(b),
            group_thousands(a),
            if a >= b { "+" } else { "-" },
            group_thousands((a - b).abs()),
            if before.is_some_and(|c| c.estimate) || after.is_some_and(|c| c.estimate) {
                "estimated"
            } else {
                "measured"
            }
        ),
        _ => "Tool list: no change to state (one of the runs has no measured cost).".to_owned(),
    }
}

/// A count with thousands separators: `2140` as `2,140` (the one helper;
/// the viewer prints its counts with it too).
pub fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_difference_of_the_paired_first_turns() {
        let c = ToolListCost::measure("m", false, &[(3000, 860), (3010, 870), (2990, 850)]);
        assert_eq!((c.tokens_per_turn, c.pairs), (Some(2140), 3));
        assert_eq!(c.text(), "tool list: 2,140 tokens a turn, measured");
        let even = ToolListCost::measure("m", true, &[(10, 0), (20, 0)]);
        assert_eq!(even.tokens_per_turn, Some(10));
        assert!(even.text().ends_with("estimated"));
        let none = ToolListCost::measure("m", false, &[]);
        assert_eq!(none.tokens_per_turn, None);
        assert!(none.text().starts_with("tool list: not measured"));
        let after = ToolListCost::measure("m", false, &[(3500, 860)]);
        assert_eq!(
            tool_list_change(Some(&c), Some(&after)),
            "Tool list: 2,140 tokens a turn before, 2,640 after (+500), measured."
        );
    }
}
