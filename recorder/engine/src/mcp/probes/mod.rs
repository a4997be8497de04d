//! The zero-token protocol probes (SPEC §3, R-PROBE).
//!
//! Each probe states one protocol fact as `pass`, `fail` or `unknown` (not
//! applicable, or could not be checked), with a one-line detail and the
//! corr_ids of the frames that show it. Unknown is never counted as pass, and
//! a failed probe is a finding about the server, never a refusal to measure.

mod checks;
mod conn;
mod result;

pub use checks::run_all;
pub use conn::ProbeContext;
pub use result::*;

#[cfg(test)]
mod tests {
    use super::ProbeResult;

    #[test]
    fn a_result_prints_its_status_and_an_unknown_its_reason() {
        let pass = serde_json::to_value(ProbeResult::pass("ping", "answered")).unwrap();
        assert_eq!(pass["status"], "pass", "{pass}");
        assert!(pass.get("reason").is_none(), "{pass}");
        let unknown = serde_json::to_value(ProbeResult::unknown("cancel", "no tools")).unwrap();
        assert_eq!(unknown["status"], "unknown", "{unknown}");
        assert_eq!(unknown["reason"], "no tools", "{unknown}");
        assert_eq!(unknown["id"], "cancel", "{unknown}");
    }
}
