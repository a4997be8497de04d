//! `notifications/tools/list_changed` makes the client re-list: the
//! `list-changed` fixture gains a tool (`shout`) after its first call and says
//! so; the session re-lists, sees the new tool, and the tape shows the
//! notification followed by a `tools/list` request and its answer. Also the
//! removed-vocabulary part of the deprecation probe, on a sibling fixture.

use crate::common;

use std::time::{Duration, Instant};

use common::FITNESS;
use fitness_recorder::mcp::connect::{Session, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::tap::Tap;
use serde_json::{Value, json};

#[tokio::test]
async fn list_changed_triggers_a_relist_that_is_taped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tape_path = dir.path().join("mcp.jsonl");
    let target = Target::Stdio(StdioTarget {
        program: FITNESS.to_owned(),
        args: vec!["fixture-server".to_owned(), "list-changed".to_owned()],
        env: vec![],
    });
    let tap = Tap::create(&tape_path, "list_changed test", target.describe()).expect("tape");
    let session = Session::connect(&target, tap.clone(), None, Duration::from_secs(20))
        .await
        .expect("connects");
    let before: Vec<String> = session
        .list_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(before, ["echo", "add", "reverse"]);
    assert_eq!(session.relists(), 0, "no re-list before any notification");

    let args = json!({"a": 2, "b": 3})
        .as_object()
        .cloned()
        .expect("object");
    let sum = session.call_tool("add", args).await.expect("tools/call");
    assert_eq!(sum.is_error, Some(false));

    // The re-list runs in the background: wait for it, bounded.
    let started = Instant::now();
    while session.relists() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no re-list within 10 s of list_changed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(session.relists(), 1);
    assert_eq!(
        session.relisted_tools().expect("the re-listed tools"),
        ["echo", "add", "reverse", "shout"]
    );
    session.close().await;
    tap.end("test done");

    // On the tape: the notification (server to client), then a tools/list
    // request (client to server) and its answer naming `shout`.
    let lines: Vec<Value> = std::fs::read_to_string(&tape_path)
        .expect("tape readable")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every tape line is JSON"))
        .collect();
    let method = |l: &Value| l["raw"]["method"].as_str().map(str::to_owned);
    let notified = lines
        .iter()
        .position(|l| {
            l["dir"] == "out" && method(l).as_deref() == Some("notifications/tools/list_changed")
        })
        .expect("the notification is taped");
    let relist = lines[notified..]
        .iter()
        .find(|l| l["dir"] == "in" && method(l).as_deref() == Some("tools/list"))
        .expect("a tools/list request follows the notification");
    let relist_id = relist["raw"]["id"].clone();
    let answer = lines[notified..]
        .iter()
        .find(|l| {
            l["dir"] == "out" && l["raw"]["id"] == relist_id && l["raw"]["result"].is_object()
        })
        .expect("the re-list is answered");
    let names: Vec<&str> = answer["raw"]["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"shout"), "{names:?}");
    // The client also noted why it re-listed.
    assert!(
        lines[notified..]
            .iter()
            .any(|l| l["dir"] == "event" && l["kind"] == "fitness.list_changed"),
        "a fitness.list_changed event is taped"
    );
}

/// The deprecation probe reads removed vocabulary from the declared
/// capabilities: a modern server advertising `resources.subscribe` fails it.
#[test]
fn removed_vocabulary_fails_the_deprecation_probe() {
    let limit = Duration::from_secs(120);
    let old = common::probe(
        &["--", FITNESS, "fixture-server", "old-subscribe"],
        &[],
        limit,
    );
    assert_eq!(old.report["server"]["era"], "modern");
    assert_eq!(old.status("deprecation_surface"), "fail");
    let detail = old.report["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .find(|p| p["id"] == "deprecation_surface")
        .expect("the probe")["detail"]
        .as_str()
        .expect("detail")
        .to_owned();
    assert!(detail.contains("resources.subscribe"), "{detail}");
    // The same server without it passes, and says what it checked.
    let correct = common::probe(&["--", FITNESS, "fixture-server", "correct"], &[], limit);
    assert_eq!(correct.status("deprecation_surface"), "pass");
}
