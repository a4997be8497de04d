//! Issue 11 end to end on the canary demo server with the sim runners:
//! findings whose evidence lines are the right tape lines, proposals tied to
//! them, the suite kept beside the record and reused, and `fitness
//! rewrite-check` linking a before and an after run with the delta of their
//! stored intervals.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{FITNESS, run_bounded, s, text};
use serde_json::Value;

struct Run {
    record: Value,
    dir: PathBuf,
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{path:?}: {e}")))
        .unwrap_or_else(|e| panic!("{path:?} is not JSON: {e}"))
}

fn canary_run(out: &Path, extra: &[&str]) -> Run {
    let dir = common::canary_run(out, extra);
    Run {
        record: read_json(&dir.join("record.json")),
        dir,
    }
}

/// The tape's lines, parsed; `line(n)` is the 1-based line n.
struct Tape(Vec<Value>);

impl Tape {
    fn read(path: &Path) -> Tape {
        let text = std::fs::read_to_string(path).expect("tape is readable");
        Tape(
            text.lines()
                .map(|l| serde_json::from_str(l).expect("every tape line is JSON"))
                .collect(),
        )
    }
    fn line(&self, n: u64) -> &Value {
        assert!(n >= 1, "evidence lines are 1-based");
        self.0
            .get(n as usize - 1)
            .unwrap_or_else(|| panic!("no line {n} in a tape of {}", self.0.len()))
    }
    /// The request a response line answers: the `in` line with the same
    /// JSON-RPC id, just after it when the tap wrote the answer first, else
    /// the latest before it.
    fn request_of(&self, n: u64) -> &Value {
        let id = &self.line(n)["raw"]["id"];
        let is_request = |l: &&Value| {
            l["dir"] == "in" && &l["raw"]["id"] == id && l["raw"]["method"].is_string()
        };
        let i = n as usize - 1;
        // Ids only grow within a session, so a request with this id in the
        // next few lines is one the tap wrote after its answer.
        self.0[i + 1..]
            .iter()
            .take(4)
            .find(is_request)
            .or_else(|| self.0[..i].iter().rev().find(is_request))
            .unwrap_or_else(|| panic!("no request for the response on line {n}"))
    }
}

fn listed_tool<'a>(line: &'a Value, name: &str) -> Option<&'a Value> {
    line["raw"]["result"]["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
}

fn finding<'a>(record: &'a Value, kind: &str, tool: &str) -> &'a Value {
    record["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["kind"] == kind && f["tool"] == tool))
        .unwrap_or_else(|| panic!("no {kind} finding for {tool} in {}", record["findings"]))
}

fn proposal_for<'a>(record: &'a Value, finding_id: &str) -> &'a Value {
    record["proposals"]
        .as_array()
        .and_then(|p| {
            p.iter().find(|p| {
                p["answers"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == finding_id))
            })
        })
        .unwrap_or_else(|| panic!("no proposal answers {finding_id}"))
}

#[test]
fn canary_findings_point_at_the_right_tape_lines_even_on_a_refusal() {
    let out = tempfile::tempdir().expect("tempdir");
    let run = canary_run(out.path(), &[]);
    let r = &run.record;
    // The default canary run is refused at the construct gate; findings are
    // recorded for refusals too.
    assert_ne!(r["outcome"], "SCORED", "{}", r["outcome"]);
    let tape = Tape::read(&run.dir.join("mcp.jsonl"));

    // The ambiguous `user` parameter of get_profile.
    let f = finding(r, "ambiguous_parameter", "get_profile");
    assert_eq!(f["parameter"], "user");
    let evidence = f["evidence"].as_array().expect("evidence");
    assert!(!evidence.is_empty());
    let mut listing = 0;
    let mut error_responses = 0;
    for e in evidence {
        assert_eq!(e["tape"], "mcp");
        let n = e["line"].as_u64().expect("line number");
        let line = tape.line(n);
        assert_eq!(
            line["corr_id"], e["corr_id"],
            "the evidence's corr_id is the line's"
        );
        if let Some(t) = listed_tool(line, "get_profile") {
            assert!(t["inputSchema"]["properties"]["user"].is_object());
            listing += 1;
        } else if line["dir"] == "out" {
            let req = tape.request_of(n);
            assert_eq!(req["raw"]["method"], "tools/call");
            assert_eq!(req["raw"]["params"]["name"], "get_profile");
            let raw = &line["raw"];
            assert!(
                raw["result"]["isError"] == true || raw["error"].is_object(),
                "line {n} is an error response: {raw}"
            );
            error_responses += 1;
        } else {
            assert_eq!(line["raw"]["method"], "tools/call", "line {n}");
            assert_eq!(line["raw"]["params"]["name"], "get_profile", "line {n}");
        }
    }
    assert_eq!(listing, 1, "one tools/list response declares the parameter");
    assert!(error_responses >= 1, "the parameter drew argument errors");
    assert!(
        f["summary"].as_str().unwrap().contains("argument errors"),
        "{}",
        f["summary"]
    );

    // The unannotated destructive purge_cache: its evidence is the tools/list
    // response listing it without annotations.
    let d = finding(r, "unannotated_destructive", "purge_cache");
    let links = d["evidence"].as_array().expect("evidence");
    assert_eq!(links.len(), 1);
    let line = tape.line(links[0]["line"].as_u64().unwrap());
    let listed = listed_tool(line, "purge_cache").expect("a tools/list result naming purge_cache");
    assert!(listed.get("annotations").is_none_or(Value::is_null));
    assert_eq!(
        tape.request_of(links[0]["line"].as_u64().unwrap())["raw"]["method"],
        "tools/list"
    );
    // delete_note declares destructiveHint: no finding.
    assert!(
        !r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["tool"] == "delete_note" && f["kind"] == "unannotated_destructive")
    );

    // Proposals answer them with the same evidence.
    let p = proposal_for(r, f["id"].as_str().unwrap());
    assert_eq!(p["source"], "rules/1");
    assert_eq!(p["evidence"], f["evidence"]);
    let text = p["change"]["parameter_descriptions"]["user"]
        .as_str()
        .expect("a new description of `user`");
    assert!(text.contains("numeric user id"), "{text}");
    assert!(
        text.contains("1 to 9999"),
        "the range comes from the server's error: {text}"
    );
    let p = proposal_for(r, d["id"].as_str().unwrap());
    assert_eq!(p["change"]["annotations"]["destructiveHint"], true);

    // The suite is kept beside the record, with the record's hash.
    let suite = read_json(&run.dir.join("suite.json"));
    assert_eq!(suite["hash"], r["run"]["suite_hash"]);
}

#[test]
fn a_suite_that_does_not_match_its_hash_is_refused_before_the_run() {
    let out = tempfile::tempdir().expect("tempdir");
    let run = canary_run(out.path(), &[]);
    let mut suite = read_json(&run.dir.join("suite.json"));
    suite["tasks"][0]["prompt"] = Value::String("something else".into());
    let bad = out.path().join("tampered-suite.json");
    std::fs::write(&bad, serde_json::to_vec(&suite).unwrap()).unwrap();
    let again = tempfile::tempdir().expect("tempdir");
    let output = run_bounded(
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--out",
            s(again.path()),
            "--seed",
            "7",
            "--suite",
            s(&bad),
            "--json",
            "--",
            FITNESS,
            "demo-server",
            "canary",
        ],
        Duration::from_secs(60),
    );
    assert!(!output.status.success());
    assert!(
        text(&output).contains("does not match its hash"),
        "{}",
        text(&output)
    );
    assert_eq!(
        std::fs::read_dir(again.path()).unwrap().count(),
        0,
        "no run directory"
    );
}

#[test]
fn rewrite_check_reruns_the_same_suite_through_the_proxy_and_links_both_runs() {
    let out = tempfile::tempdir().expect("tempdir");
    let key = out.path().join("publisher.key");
    let made = run_bounded(&["keygen", "--out", s(&key)], Duration::from_secs(30));
    assert!(made.status.success(), "{}", text(&made));
    // Enough extensions for the flaky canary to score; signed.
    let before = canary_run(out.path(), &["--max-extensions", "6", "--key", s(&key)]);
    assert_eq!(
        before.record["outcome"], "SCORED",
        "{}",
        before.record["gates"]
    );
    assert!(before.record["signature"].is_object());
    let original = before.record.clone();
    let after_out = out.path().join("after");
    // A signed before record cannot be linked without a key to re-sign it.
    let refused = run_bounded(
        &["rewrite-check", s(&before.dir), "--out", s(&after_out)],
        Duration::from_secs(60),
    );
    assert!(!refused.status.success());
    assert!(text(&refused).contains("--key"), "{}", text(&refused));
    let output = run_bounded(
        &[
            "rewrite-check",
            s(&before.dir),
            "--out",
            s(&after_out),
            "--key",
            s(&key),
            "--json",
        ],
        Duration::from_secs(300),
    );
    assert!(output.status.success(), "{}", text(&output));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("JSON summary");
    let after_dir = PathBuf::from(summary["after_dir"].as_str().unwrap());
    let after = read_json(&after_dir.join("record.json"));
    let before_now = read_json(&before.dir.join("record.json"));

    // Same suite, same registration.
    assert_eq!(after["run"]["suite_hash"], original["run"]["suite_hash"]);
    assert_eq!(
        after["preregistration"]["seed"],
        original["preregistration"]["seed"]
    );
    assert_eq!(
        after["preregistration"]["n_tasks"],
        original["preregistration"]["n_tasks"]
    );
    assert_eq!(
        after["preregistration"]["reps"],
        original["preregistration"]["reps"]
    );
    // Every registered knob, and so the registration's hash: the same run.
    assert_eq!(after["preregistration"], original["preregistration"]);
    assert!(
        after["suite"]["limitation"]
            .as_str()
            .unwrap()
            .contains("reused"),
        "{}",
        after["suite"]
    );

    // The extension batches were reused too (kept beside suite.json).
    let batches = |r: &Value| -> Vec<Value> {
        r["extensions"]
            .as_array()
            .map(|e| e.iter().map(|b| b["batch_suite_hash"].clone()).collect())
            .unwrap_or_default()
    };
    assert!(
        !batches(&original).is_empty(),
        "the flaky canary consumes extensions"
    );
    assert_eq!(batches(&after), batches(&original));
    let agent = std::fs::read_to_string(after_dir.join("agent.jsonl")).unwrap();
    assert!(
        agent
            .lines()
            .any(|l| l.contains("fitness.suite_reused") && l.contains("generate::x1")),
        "the after run reused batch 1"
    );
    for (i, hash) in batches(&original).iter().enumerate() {
        let kept = read_json(&before.dir.join(format!("suite-x{}.json", i + 1)));
        assert_eq!(&kept["hash"], hash);
    }

    // Linked both ways.
    assert_eq!(after["rewrite"]["role"], "after");
    assert_eq!(after["rewrite"]["other_run"], original["run"]["id"]);
    assert_eq!(before_now["rewrite"]["role"], "before");
    assert_eq!(before_now["rewrite"]["other_run"], after["run"]["id"]);
    let rel = before_now["rewrite"]["other_dir"].as_str().unwrap();
    assert!(before.dir.join(rel).join("record.json").is_file(), "{rel}");
    let ids: Vec<&Value> = original["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["id"])
        .collect();
    let linked: Vec<&Value> = after["rewrite"]["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(linked, ids);

    // The before record changed only in its link (and its signature), and
    // both records verify.
    let mut stripped = before_now.clone();
    stripped.as_object_mut().unwrap().remove("rewrite");
    stripped.as_object_mut().unwrap().remove("signature");
    let mut unsigned = original.clone();
    unsigned.as_object_mut().unwrap().remove("signature");
    assert_eq!(stripped, unsigned);
    for dir in [&before.dir, &after_dir] {
        let verify = run_bounded(
            &["verify", s(&dir.join("record.json"))],
            Duration::from_secs(30),
        );
        assert!(verify.status.success(), "{}", text(&verify));
    }

    // The delta is the difference of the two stored intervals.
    for link in [&after["rewrite"]["delta"], &before_now["rewrite"]["delta"]] {
        assert_eq!(link["before"], original["score"]["first_try"]);
        match after.get("score") {
            Some(score) => {
                assert_eq!(link["after"], score["first_try"]);
                let diff = score["first_try"]["rate"].as_f64().unwrap()
                    - original["score"]["first_try"]["rate"].as_f64().unwrap();
                assert_eq!(link["difference"].as_f64(), Some(diff));
            }
            None => {
                assert!(link.get("after").is_none());
                assert!(link.get("difference").is_none());
                assert!(
                    after["rewrite"]["explain"]
                        .as_str()
                        .unwrap()
                        .contains("No interval after")
                );
            }
        }
    }

    // The after run's server saw the proposals: tools/list was rewritten.
    let tape = Tape::read(&after_dir.join("mcp.jsonl"));
    let listing = tape
        .0
        .iter()
        .find(|l| listed_tool(l, "purge_cache").is_some())
        .expect("a tools/list response");
    let purge = listed_tool(listing, "purge_cache").unwrap();
    assert_eq!(purge["annotations"]["destructiveHint"], true);
    let user = &listed_tool(listing, "get_profile").unwrap()["inputSchema"]["properties"]["user"];
    assert!(
        user["description"]
            .as_str()
            .unwrap()
            .contains("numeric user id"),
        "{user}"
    );
    // ... and the after run no longer finds the unannotated destructive tool.
    assert!(
        !after["findings"]
            .as_array()
            .map(|f| f.iter().any(|f| f["kind"] == "unannotated_destructive"))
            .unwrap_or(false),
        "{}",
        after["findings"]
    );
}

#[test]
fn rewrite_check_refuses_http_targets_and_runs_without_proposals_clearly() {
    let out = tempfile::tempdir().expect("tempdir");
    let run = canary_run(out.path(), &[]);
    // `rewrite-check` on the run with `record` in place of its record:
    // refused, and what it printed.
    let refused = |record: &Value| {
        std::fs::write(
            run.dir.join("record.json"),
            serde_json::to_vec(record).unwrap(),
        )
        .unwrap();
        let output = run_bounded(
            &[
                "rewrite-check",
                s(&run.dir),
                "--out",
                s(&out.path().join("after")),
            ],
            Duration::from_secs(60),
        );
        assert!(!output.status.success());
        text(&output)
    };
    // An HTTP target: not supported yet, said plainly.
    let mut record = run.record.clone();
    record["server"]["target"] =
        serde_json::json!({"kind": "url", "url": "http://127.0.0.1:9/mcp"});
    let said = refused(&record);
    assert!(said.contains("does not support HTTP targets yet"), "{said}");
    // No proposals: nothing to check.
    record["proposals"] = Value::Array(Vec::new());
    let said = refused(&record);
    assert!(said.contains("has no proposals"), "{said}");
}
