//! The action's pull-request comment: one comment per server and workflow,
//! found by its hidden marker and edited in place on every run. The
//! comment step of `action.yml` runs as written against a fake `gh` on
//! PATH that keeps a pull request's comments in a JSON file, answers
//! `gh api` as the GitHub REST API does (listing, adding, editing a
//! comment; `--jq` through jq, as `gh` applies its own), and logs each call.

use crate::common;

use std::path::Path;

use serde_json::Value;

/// A `gh` that serves `gh api` from `$FAKE_GH_DIR/comments.json`.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
store="$FAKE_GH_DIR/comments.json"
[ "$1" = api ] || { echo "fake gh: only api" >&2; exit 2; }
shift
method=GET jq_filter="" body_file="" path=""
while [ $# -gt 0 ]; do
    case "$1" in
        --method) method="$2"; shift 2 ;;
        --paginate) shift ;;
        --jq) jq_filter="$2"; shift 2 ;;
        -F) body_file="${2#body=@}"; shift 2 ;;
        *) path="$1"; shift ;;
    esac
done
echo "$method $path" >>"$FAKE_GH_DIR/calls.log"
[ -n "${GH_TOKEN:-}" ] || { echo "fake gh: no token" >&2; exit 4; }
case "$method $path" in
    "GET repos/owner/repo/issues/7/comments")
        if [ -n "$jq_filter" ]; then jq -r "$jq_filter" "$store"; else cat "$store"; fi ;;
    "POST repos/owner/repo/issues/7/comments")
        id=$(( $(jq 'map(.id) | max // 100' "$store") + 1 ))
        jq --argjson id "$id" --rawfile body "$body_file" '. + [{id: $id, user: {login: "github-actions[bot]"}, body: $body}]' \
            "$store" >"$store.new" && mv "$store.new" "$store"
        echo "{\"id\": $id}" ;;
    "PATCH repos/owner/repo/issues/comments/"*)
        id="${path##*/}"
        jq -e --argjson id "$id" 'any(.id == $id)' "$store" >/dev/null || { echo '{"message":"Not Found"}'; exit 1; }
        jq --argjson id "$id" --rawfile body "$body_file" 'map(if .id == $id then .body = $body else . end)' \
            "$store" >"$store.new" && mv "$store.new" "$store"
        echo "{\"id\": $id}" ;;
    *) echo "fake gh: no route for $method $path" >&2; exit 1 ;;
esac
"#;

fn comments(dir: &Path) -> Vec<Value> {
    serde_json::from_slice::<Value>(&std::fs::read(dir.join("comments.json")).unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn two_runs_leave_one_pull_request_comment_edited_in_place() {
    let action = common::action();
    let step = action["runs"]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|s| {
            s["if"]
                .as_str()
                .is_some_and(|c| c.contains("inputs.comment == 'true'"))
        })
        .expect("a comment step")
        .clone();
    let condition = step["if"].as_str().unwrap();
    assert!(
        condition.contains("github.event_name == 'pull_request'"),
        "{condition}"
    );

    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(&gh, FAKE_GH).unwrap();
    std::fs::set_permissions(&gh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let state = dir.path().join("github");
    std::fs::create_dir_all(&state).unwrap();
    // A person's comment, and the comment another workflow keeps for the
    // same server: neither is this workflow's to edit.
    let other = "<!-- fitness-report: server=server workflow=nightly -->\nnightly";
    std::fs::write(
        state.join("comments.json"),
        serde_json::to_string(&serde_json::json!([
            {"id": 11, "user": {"login": "maintainer"}, "body": "Looks good, but see the gate."},
            {"id": 12, "user": {"login": "github-actions[bot]"}, "body": other},
        ]))
        .unwrap(),
    )
    .unwrap();

    let post = |markdown: &str, tag: &str| {
        let work = dir.path().join(tag);
        std::fs::create_dir_all(&work).unwrap();
        let file = work.join("compare.md");
        std::fs::write(&file, markdown).unwrap();
        let values = [
            ("${{ github.token }}", "token-for-the-fake".to_owned()),
            ("${{ github.event.pull_request.number }}", "7".to_owned()),
            (
                "${{ steps.gate.outputs.markdown }}",
                file.display().to_string(),
            ),
            ("${{ steps.gate.outputs.server }}", "server".to_owned()),
        ];
        let substitute = |text: &str| {
            let mut text = text.to_owned();
            for (expr, value) in &values {
                text = text.replace(expr, value);
            }
            assert!(!text.contains("${{"), "every expression is known: {text}");
            text
        };
        let state = state.display().to_string();
        let out = common::run_action_step(
            &step,
            &work,
            &path,
            &[
                ("FAKE_GH_DIR", state.as_str()),
                ("GITHUB_REPOSITORY", "owner/repo"),
                ("GITHUB_WORKFLOW", "fitness gate"),
            ],
            &substitute,
        );
        assert!(out.status.success(), "{}", common::text(&out));
        common::text(&out)
    };

    let first = post(
        "### Fitness Report: no change established\n\nfirst run\n",
        "one",
    );
    assert!(first.contains("added a comment on #7"), "{first}");
    let after_one = comments(&state);
    assert_eq!(after_one.len(), 3);
    let second = post("### Fitness Report: regressed\n\nsecond run\n", "two");
    assert!(second.contains("edited comment 13 on #7"), "{second}");

    // Two runs, one comment: the first run's, edited to the second's.
    let all = comments(&state);
    assert_eq!(all.len(), 3, "{all:?}");
    let marker = "<!-- fitness-report: server=server workflow=fitness gate -->";
    let ours: Vec<&Value> = all
        .iter()
        .filter(|c| c["body"].as_str().unwrap().starts_with(marker))
        .collect();
    assert_eq!(ours.len(), 1, "{all:?}");
    assert_eq!(ours[0]["id"], 13);
    assert_eq!(
        ours[0]["body"],
        format!("{marker}\n### Fitness Report: regressed\n\nsecond run\n")
    );
    // The others are as they were.
    assert_eq!(all[0], after_one[0]);
    assert_eq!(all[1]["body"], other);
    let calls = std::fs::read_to_string(state.join("calls.log")).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [
            "GET repos/owner/repo/issues/7/comments",
            "POST repos/owner/repo/issues/7/comments",
            "GET repos/owner/repo/issues/7/comments",
            "PATCH repos/owner/repo/issues/comments/13",
        ]
    );
}
