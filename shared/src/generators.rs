//! What the board, the record and the recorder know about task generators
//! by their id (the chip on every row).

/// The sentence a row or group built by a call-dictating generator carries.
pub const RELAY_SENTENCE: &str = "The tasks dictate the calls: this measures relay, not fitness.";

/// Generators whose prompts name the tool and dictate its arguments
/// (rehearsal generators): a score on their suites measures relaying a
/// call, not getting a job done.
pub const DICTATING: &[&str] = &["schema-walk/1"];

/// Does `generator` dictate the calls? Unknown or missing ids do not.
pub fn dictates_calls(generator: &str) -> bool {
    DICTATING.contains(&generator)
}

/// Generators whose tasks a judge model writes: the suite depends on which
/// judge, so runs are read against each other only with the same judge.
pub const JUDGE_WRITTEN: &[&str] = &["judge-synth/1", "judge-walk/1"];

/// Does a judge model write `generator`'s tasks?
pub fn judge_writes_tasks(generator: &str) -> bool {
    JUDGE_WRITTEN.contains(&generator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_rehearsal_walk_dictates_calls() {
        assert!(dictates_calls("schema-walk/1"));
        assert!(!dictates_calls("schema-walk/2"));
        assert!(!dictates_calls("judge-synth/1"));
        assert!(!dictates_calls(""));
    }
}
