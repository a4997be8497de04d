//! Reading the internally tagged enums (`{"kind": "total", "usd": 1.2}`)
//! without serde's buffered `Content` path.
//!
//! `#[serde(tag = "...")]` on a derived `Deserialize` buffers every object
//! into an intermediate tree and then runs one struct deserializer per
//! variant over it; in the viewer's wasm that came to about 80 KB for six
//! enums. Here each enum reads one flat struct in a single pass (every field
//! of every variant, all optional) and then checks that its variant got the
//! fields it needs. The JSON accepted is the same: unknown fields are
//! ignored, a variant's own optional fields default, a missing required
//! field is an error naming the field and the variant. Serialization and the
//! JSON Schema still come from the derives on each enum.

use serde::de::{Deserialize, Deserializer, Error};
use serde_json::Value;

use crate::board::{RowCost, RowResult, ScoreCaveat, Tier};
use crate::integrity::SignatureState;
use crate::record::{
    Cost, Count, GateDetail, NullRate, ProbeStatus, PublishedVerdict, ServerTarget, TapeReading,
};
use crate::stats::Interval;

/// A required field of `variant`, or the error that names it.
fn need<T, E: Error>(value: Option<T>, variant: &str, field: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::custom(format_args!("missing field `{field}` of {variant}")))
}

/// The tag, or serde's usual error when it is absent.
fn tag<E: Error>(value: Option<String>, field: &'static str) -> Result<String, E> {
    value.ok_or_else(|| E::missing_field(field))
}

#[derive(serde::Deserialize)]
struct ServerTargetWire {
    kind: Option<String>,
    url: Option<String>,
    argv: Option<Vec<String>>,
}

impl<'de> Deserialize<'de> for ServerTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = ServerTargetWire::deserialize(d)?;
        match tag::<D::Error>(w.kind, "kind")?.as_str() {
            "url" => Ok(ServerTarget::Url {
                url: need(w.url, "url", "url")?,
            }),
            "command" => Ok(ServerTarget::Command {
                argv: need(w.argv, "command", "argv")?,
            }),
            other => Err(D::Error::unknown_variant(other, &["url", "command"])),
        }
    }
}

#[derive(serde::Deserialize)]
struct ProbeStatusWire {
    result: Option<String>,
    reason: Option<String>,
}

impl<'de> Deserialize<'de> for ProbeStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = ProbeStatusWire::deserialize(d)?;
        match tag::<D::Error>(w.result, "result")?.as_str() {
            "pass" => Ok(ProbeStatus::Pass),
            "fail" => Ok(ProbeStatus::Fail),
            "unknown" => Ok(ProbeStatus::Unknown {
                reason: need(w.reason, "unknown", "reason")?,
            }),
            other => Err(D::Error::unknown_variant(
                other,
                &["pass", "fail", "unknown"],
            )),
        }
    }
}

#[derive(serde::Deserialize)]
struct CostWire {
    kind: Option<String>,
    usd: Option<f64>,
    runner_usd: Option<f64>,
    judge_usd: Option<f64>,
    reasons: Option<Vec<String>>,
    why: Option<String>,
}

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = CostWire::deserialize(d)?;
        match tag::<D::Error>(w.kind, "kind")?.as_str() {
            "total" => Ok(Cost::Total {
                usd: need(w.usd, "total", "usd")?,
                runner_usd: w.runner_usd,
                judge_usd: w.judge_usd,
            }),
            "floor" => Ok(Cost::Floor {
                usd: need(w.usd, "floor", "usd")?,
                runner_usd: w.runner_usd,
                judge_usd: w.judge_usd,
                reasons: need(w.reasons, "floor", "reasons")?,
            }),
            "none" => Ok(Cost::None {
                why: need(w.why, "none", "why")?,
            }),
            other => Err(D::Error::unknown_variant(
                other,
                &["total", "floor", "none"],
            )),
        }
    }
}

/// The board's cost slot reads as the record's cost does, without the
/// runner and judge split.
impl<'de> Deserialize<'de> for RowCost {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Cost::deserialize(d)? {
            Cost::Total { usd, .. } => RowCost::Total { usd },
            Cost::Floor { usd, reasons, .. } => RowCost::Floor { usd, reasons },
            Cost::None { why } => RowCost::None { why },
        })
    }
}

#[derive(serde::Deserialize)]
struct SignatureStateWire {
    state: Option<String>,
    fingerprint: Option<String>,
    site: Option<String>,
    why: Option<String>,
}

impl<'de> Deserialize<'de> for SignatureState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = SignatureStateWire::deserialize(d)?;
        let state = tag::<D::Error>(w.state, "state")?;
        let fingerprint = || need(w.fingerprint.clone(), &state, "fingerprint");
        Ok(match state.as_str() {
            "verified" => SignatureState::Verified {
                fingerprint: fingerprint()?,
            },
            "other-key" => SignatureState::OtherKey {
                fingerprint: fingerprint()?,
                site: need(w.site.clone(), &state, "site")?,
            },
            "no-site-key" => SignatureState::NoSiteKey {
                fingerprint: fingerprint()?,
            },
            "unsigned" => SignatureState::Unsigned,
            "invalid" => SignatureState::Invalid {
                why: need(w.why.clone(), &state, "why")?,
            },
            other => {
                return Err(D::Error::unknown_variant(
                    other,
                    &[
                        "verified",
                        "other-key",
                        "no-site-key",
                        "unsigned",
                        "invalid",
                    ],
                ));
            }
        })
    }
}

#[derive(serde::Deserialize)]
struct RowResultWire {
    kind: Option<String>,
    first_try: Option<Interval>,
    caveat: Option<ScoreCaveat>,
    code: Option<String>,
    gate: Option<String>,
    tier: Option<Tier>,
    reason: Option<String>,
    teaser: Option<String>,
    k: Option<u64>,
    n: Option<u64>,
    threshold: Option<f64>,
    alpha: Option<f64>,
    p_value: Option<f64>,
}

impl<'de> Deserialize<'de> for RowResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = RowResultWire::deserialize(d)?;
        match tag::<D::Error>(w.kind, "kind")?.as_str() {
            "scored" => Ok(RowResult::Scored {
                first_try: need(w.first_try, "scored", "first_try")?,
                caveat: w.caveat,
            }),
            "refused" => Ok(RowResult::Refused {
                code: need(w.code, "refused", "code")?,
                gate: w.gate,
                tier: need(w.tier, "refused", "tier")?,
                reason: need(w.reason, "refused", "reason")?,
                teaser: need(w.teaser, "refused", "teaser")?,
                k: w.k,
                n: w.n,
                threshold: w.threshold,
                alpha: w.alpha,
                p_value: w.p_value,
            }),
            other => Err(D::Error::unknown_variant(other, &["scored", "refused"])),
        }
    }
}

/// Every field of every [`GateDetail`] variant. Where two variants share a
/// name they share its type.
#[derive(serde::Deserialize)]
struct GateDetailWire {
    kind: Option<String>,
    // protocol_hygiene
    failed: Option<Vec<String>>,
    // structural
    n_requested: Option<u64>,
    n_generated: Option<u64>,
    admission_rate: Option<f64>,
    min_admission_rate: Option<f64>,
    min_generated: Option<u64>,
    explain: Option<String>,
    // answer_leak
    leaks: Option<Vec<Value>>,
    at_generation: Option<Vec<Value>>,
    // suite_size
    n_tasks: Option<u64>,
    min_tasks: Option<u64>,
    tool_count: Option<u64>,
    // plan_power
    required_n: Option<u64>,
    actual_n: Option<u64>,
    threshold: Option<f64>,
    detectable_rate: Option<f64>,
    achieved_power: Option<f64>,
    // null_baseline
    rates: Option<Vec<NullRate>>,
    t_null: Option<f64>,
    t_agent: Option<f64>,
    kill_threshold: Option<f64>,
    ratio: Option<f64>,
    percentile: Option<u64>,
    decision: Option<String>,
    // construct and drive
    n: Option<u64>,
    n_intended: Option<u64>,
    errors: Option<u64>,
    max_error_rate: Option<f64>,
    compromised: Option<bool>,
    reps: Option<u64>,
    published: Option<PublishedVerdict>,
    pooled: Option<Count>,
    extensions_consumed: Option<u64>,
    tape_reading: Option<TapeReading>,
    trials: Option<u64>,
    // synthesis
    calls: Option<u64>,
    failures: Option<u64>,
}

impl<'de> Deserialize<'de> for GateDetail {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = GateDetailWire::deserialize(d)?;
        let kind = tag::<D::Error>(w.kind, "kind")?;
        let v = kind.as_str();
        Ok(match v {
            "protocol_hygiene" => GateDetail::ProtocolHygiene {
                failed: need(w.failed, v, "failed")?,
            },
            "structural" => GateDetail::Structural {
                n_requested: w.n_requested,
                n_generated: w.n_generated,
                n_tasks: w.n_tasks,
                admission_rate: w.admission_rate,
                min_admission_rate: w.min_admission_rate,
                min_generated: w.min_generated,
                explain: w.explain,
            },
            "answer_leak" => GateDetail::AnswerLeak {
                leaks: need(w.leaks, v, "leaks")?,
                at_generation: w.at_generation.unwrap_or_default(),
            },
            "suite_size" => GateDetail::SuiteSize {
                n_tasks: need(w.n_tasks, v, "n_tasks")?,
                min_tasks: need(w.min_tasks, v, "min_tasks")?,
                tool_count: w.tool_count,
            },
            "plan_power" => GateDetail::PlanPower {
                required_n: need(w.required_n, v, "required_n")?,
                actual_n: need(w.actual_n, v, "actual_n")?,
                threshold: need(w.threshold, v, "threshold")?,
                detectable_rate: need(w.detectable_rate, v, "detectable_rate")?,
                achieved_power: need(w.achieved_power, v, "achieved_power")?,
                explain: w.explain,
            },
            "null_baseline" => GateDetail::NullBaseline {
                rates: need(w.rates, v, "rates")?,
                t_null: w.t_null,
                t_agent: w.t_agent,
                kill_threshold: w.kill_threshold,
                ratio: w.ratio,
                percentile: w.percentile,
                decision: w.decision,
                explain: w.explain,
            },
            "construct" => GateDetail::Construct {
                n: need(w.n, v, "n")?,
                n_intended: w.n_intended,
                errors: need(w.errors, v, "errors")?,
                max_error_rate: w.max_error_rate,
                compromised: need(w.compromised, v, "compromised")?,
                reps: w.reps,
                published: w.published,
                pooled: w.pooled,
                extensions_consumed: w.extensions_consumed.unwrap_or_default(),
                tape_reading: w.tape_reading,
            },
            "drive" => GateDetail::Drive {
                trials: need(w.trials, v, "trials")?,
                errors: need(w.errors, v, "errors")?,
                max_error_rate: need(w.max_error_rate, v, "max_error_rate")?,
                compromised: need(w.compromised, v, "compromised")?,
            },
            "synthesis" => GateDetail::Synthesis {
                calls: need(w.calls, v, "calls")?,
                failures: need(w.failures, v, "failures")?,
                max_error_rate: need(w.max_error_rate, v, "max_error_rate")?,
                compromised: need(w.compromised, v, "compromised")?,
                explain: w.explain,
            },
            "screen" => GateDetail::Screen {
                calls: need(w.calls, v, "calls")?,
                failures: need(w.failures, v, "failures")?,
                max_error_rate: need(w.max_error_rate, v, "max_error_rate")?,
                compromised: need(w.compromised, v, "compromised")?,
                explain: w.explain,
            },
            // A gate kind this reader does not know (`#[serde(other)]`).
            _ => GateDetail::Unrecognised,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
        serde_json::from_slice(&serde_json::to_vec(&v).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn tag_may_come_after_the_fields_and_unknown_fields_are_ignored() {
        let c: Cost =
            read(json!({"usd": 1.5, "reasons": ["r"], "extra": 1, "kind": "floor"})).unwrap();
        assert_eq!(
            c,
            Cost::Floor {
                usd: 1.5,
                runner_usd: None,
                judge_usd: None,
                reasons: vec!["r".into()]
            }
        );
    }

    #[test]
    fn missing_fields_and_tags_are_named() {
        let e = read::<Cost>(json!({"kind": "floor", "usd": 1.0})).unwrap_err();
        assert!(e.contains("missing field `reasons` of floor"), "{e}");
        let e = read::<RowCost>(json!({"usd": 1.0})).unwrap_err();
        assert!(e.contains("missing field `kind`"), "{e}");
        let e = read::<ServerTarget>(json!({"kind": "pipe"})).unwrap_err();
        assert!(e.contains("unknown variant `pipe`"), "{e}");
        let e = read::<GateDetail>(json!({"kind": "drive", "trials": 3})).unwrap_err();
        assert!(e.contains("missing field `errors` of drive"), "{e}");
        let e = read::<ProbeStatus>(json!({"result": "unknown"})).unwrap_err();
        assert!(e.contains("missing field `reason` of unknown"), "{e}");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_an_error() {
        let e = read::<RowCost>(json!({"kind": "total", "usd": "1"})).unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn an_unknown_gate_kind_reads_as_unrecognised() {
        let g: GateDetail = read(json!({"kind": "future_gate", "x": 1})).unwrap();
        assert_eq!(g, GateDetail::Unrecognised);
    }

    #[test]
    fn every_variant_round_trips_through_its_serializer() {
        let details = vec![
            GateDetail::ProtocolHygiene {
                failed: vec!["origin".into()],
            },
            GateDetail::Structural {
                n_requested: Some(12),
                n_generated: Some(10),
                n_tasks: Some(9),
                admission_rate: Some(0.5),
                min_admission_rate: Some(0.3),
                min_generated: None,
                explain: Some("x".into()),
            },
            GateDetail::AnswerLeak {
                leaks: vec![json!({"task": "t1"})],
                at_generation: vec![],
            },
            GateDetail::SuiteSize {
                n_tasks: 4,
                min_tasks: 8,
                tool_count: Some(2),
            },
            GateDetail::PlanPower {
                required_n: 30,
                actual_n: 36,
                threshold: 0.8,
                detectable_rate: 0.95,
                achieved_power: 0.9,
                explain: Some("y".into()),
            },
            GateDetail::NullBaseline {
                rates: vec![NullRate {
                    label: "no-tools".into(),
                    k: 1,
                    n: 12,
                    rate: 1.0 / 12.0,
                    errors: 0,
                }],
                t_null: Some(0.1),
                t_agent: Some(0.9),
                kill_threshold: Some(0.5),
                ratio: Some(0.5),
                percentile: Some(95),
                decision: Some("PROCEED".into()),
                explain: None,
            },
            GateDetail::Construct {
                n: 36,
                n_intended: Some(36),
                errors: 0,
                max_error_rate: Some(0.1),
                compromised: false,
                reps: Some(3),
                published: None,
                pooled: None,
                extensions_consumed: 2,
                tape_reading: Some(TapeReading {
                    calls_recorded: 5,
                    call_errors: 1,
                    no_response: 0,
                }),
            },
            GateDetail::Drive {
                trials: 36,
                errors: 1,
                max_error_rate: 0.1,
                compromised: false,
            },
            GateDetail::Synthesis {
                calls: 6,
                failures: 2,
                max_error_rate: 0.05,
                compromised: true,
                explain: Some("z".into()),
            },
            GateDetail::Screen {
                calls: 20,
                failures: 3,
                max_error_rate: 0.05,
                compromised: true,
                explain: Some("s".into()),
            },
        ];
        for d in details {
            let back: GateDetail = read(serde_json::to_value(&d).unwrap()).unwrap();
            assert_eq!(back, d);
        }
        for c in [
            Cost::Total {
                usd: 0.5,
                runner_usd: Some(0.4),
                judge_usd: Some(0.1),
            },
            Cost::None { why: "sim".into() },
        ] {
            let back: Cost = read(serde_json::to_value(&c).unwrap()).unwrap();
            assert_eq!(back, c);
        }
        for t in [
            ServerTarget::Url {
                url: "http://127.0.0.1/mcp".into(),
            },
            ServerTarget::Command {
                argv: vec!["npx".into()],
            },
        ] {
            let back: ServerTarget = read(serde_json::to_value(&t).unwrap()).unwrap();
            assert_eq!(back, t);
        }
        for s in [
            SignatureState::Verified {
                fingerprint: "ab".into(),
            },
            SignatureState::OtherKey {
                fingerprint: "ab".into(),
                site: "cd".into(),
            },
            SignatureState::NoSiteKey {
                fingerprint: "ab".into(),
            },
            SignatureState::Unsigned,
            SignatureState::Invalid { why: "x".into() },
        ] {
            let value = serde_json::to_value(&s).unwrap();
            assert_eq!(value["state"], s.name(), "{value}");
            let back: SignatureState = read(value).unwrap();
            assert_eq!(back, s);
        }
    }
}
