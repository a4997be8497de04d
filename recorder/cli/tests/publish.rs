//! `fitness publish` on the anchor's 33 real runs, as a user runs it: the
//! board index, per-run files, precompressed tapes, badges, `_headers`, the
//! viewer copy, signing, and what happens on bad input.

use std::path::PathBuf;

use serde_json::Value;

use crate::common;
use common::{anchor_dir, board_of, fitness, page_text, publish_runs, s, text};

/// A stand-in viewer build: an index.html with one inline bootstrap script
/// and the root element pages are rendered into, like Trunk's, and one asset.
struct Site {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    key: PathBuf,
    stdout: String,
}

fn publish_anchor() -> Site {
    let tmp = tempfile::tempdir().unwrap();
    let anchor = anchor_dir();
    let key = tmp.path().join("publisher.key");
    let out = fitness(&["keygen", "--out", s(&key)]);
    assert!(out.status.success(), "{}", text(&out));
    let viewer = common::fake_viewer(tmp.path());
    let root = tmp.path().join("site");
    let out = fitness(&[
        "publish",
        "--import",
        s(&anchor.join("runs.json")),
        "--traces",
        s(&anchor.join("traces")),
        "--viewer",
        s(&viewer),
        "--sign-key",
        s(&key),
        "--published-at",
        "2026-11-30T00:00:00.000Z",
        "--out",
        s(&root),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    Site {
        _tmp: tmp,
        root,
        key,
        stdout: text(&out),
    }
}

fn board(site: &Site) -> Value {
    serde_json::from_slice(&std::fs::read(site.root.join("data/board.json")).unwrap()).unwrap()
}

#[test]
fn the_anchor_board_has_33_rows_7_scored_26_refused_grouped_by_tier() {
    let site = publish_anchor();
    assert!(
        site.stdout
            .contains("published 33 runs (7 scored, 26 refused) with 16 tapes and 14 badges"),
        "{}",
        site.stdout
    );
    let board = board(&site);
    assert_eq!(board["schema"], "fitness-board/4");
    assert_eq!(board["rows"].as_array().unwrap().len(), 33);
    assert_eq!(board["counts"]["scored"], 7);
    assert_eq!(board["counts"]["refused"], 26);
    assert_eq!(
        board["counts"]["by_tier"]["free"]["INSUFFICIENT_SURFACE"],
        12
    );
    assert_eq!(board["counts"]["by_tier"]["cheap"]["DEGENERATE"], 7);
    assert_eq!(board["counts"]["by_tier"]["paid"]["EXTEND_EXHAUSTED"], 2);

    let groups: Vec<(&str, usize)> = board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["id"].as_str().unwrap(),
                g["rows"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            (
                "scored:claude-sonnet-5:fitness-report-generator/2:anonymous",
                7
            ),
            ("refused:free", 15),
            ("refused:cheap", 7),
            ("refused:paid", 4),
        ]
    );
    let scored = &board["groups"][0];
    assert_eq!(scored["nothing_separates"], true);
    assert!(
        scored["statement"]
            .as_str()
            .unwrap()
            .starts_with("Nothing separates these 7 runs")
    );
    let free = &board["groups"][1];
    assert!(
        free["statement"]
            .as_str()
            .unwrap()
            .contains("mixes 2 generators"),
        "{}",
        free["statement"]
    );

    // Refusal rows carry no score, only the refusal in the same slot.
    for row in board["rows"].as_array().unwrap() {
        match row["result"]["kind"].as_str().unwrap() {
            "scored" => assert!(
                row["result"]["first_try"]["low"].as_f64().unwrap()
                    <= row["result"]["first_try"]["rate"].as_f64().unwrap()
            ),
            "refused" => {
                assert!(row["result"].get("first_try").is_none());
                assert!(!row["result"]["teaser"].as_str().unwrap().is_empty());
            }
            other => panic!("unexpected result kind {other}"),
        }
    }
}

#[test]
fn huggingface_has_three_attempts_counted_by_outcome() {
    let site = publish_anchor();
    let board = board(&site);
    let rows: Vec<&Value> = board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["server"]["slug"] == "huggingface-co")
        .collect();
    assert_eq!(rows.len(), 3);
    let outcome = |r: &Value| match r["result"]["kind"].as_str().unwrap() {
        "scored" => "SCORED".to_owned(),
        _ => r["result"]["code"].as_str().unwrap().to_owned(),
    };
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["attempt"]["index"], i as u64 + 1);
        assert_eq!(row["attempt"]["of"], 3);
        // The other two, counted by outcome: no list of ids on any row.
        let mut expected = serde_json::Map::new();
        for (j, other) in rows.iter().enumerate().filter(|(j, _)| *j != i) {
            let _ = j;
            let n = expected
                .get(&outcome(other))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            expected.insert(outcome(other), (n + 1).into());
        }
        assert_eq!(row["attempt"]["others"], Value::Object(expected));
    }
    let newest = rows[2];
    assert_eq!(newest["id"], "huggingface-co-2026-08-20T17-23-48-886Z");
    assert_eq!(newest["result"]["first_try"]["k"], 22);
    assert_eq!(newest["result"]["first_try"]["n"], 24);
    assert_eq!(newest["extensions"], 2);
}

#[test]
fn per_run_files_tapes_gzip_headers_and_viewer_are_written() {
    let site = publish_anchor();
    let run = site
        .root
        .join("runs/huggingface-co-2026-08-20T17-23-48-886Z");
    for name in [
        "record.json",
        "mcp.jsonl",
        "mcp.jsonl.gz",
        "agent.jsonl",
        "agent.jsonl.gz",
    ] {
        assert!(run.join(name).is_file(), "{name} missing");
    }
    // The .gz is the tape, compressed.
    let mut gz =
        flate2::read::GzDecoder::new(std::fs::File::open(run.join("mcp.jsonl.gz")).unwrap());
    let mut unzipped = Vec::new();
    std::io::Read::read_to_end(&mut gz, &mut unzipped).unwrap();
    assert_eq!(unzipped, std::fs::read(run.join("mcp.jsonl")).unwrap());
    assert_eq!(
        std::fs::read(run.join("mcp.jsonl")).unwrap(),
        std::fs::read(
            anchor_dir().join("traces/huggingface-co-2026-08-20T17-23-48-886Z/mcp.jsonl")
        )
        .unwrap()
    );

    assert!(site.root.join("index.html").is_file() && site.root.join("v.js").is_file());
    // The board row names the tape by the record's own path; the site path
    // is the run directory plus that, once.
    let board = board(&site);
    let row = board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "huggingface-co-2026-08-20T17-23-48-886Z")
        .unwrap();
    for tape in row["tapes"].as_array().unwrap() {
        let path = tape["path"].as_str().unwrap();
        assert!(!path.contains('/'), "{path}");
        assert!(run.join(path).is_file(), "{path}");
    }
    let headers = std::fs::read_to_string(site.root.join("_headers")).unwrap();
    // The CSP names the inline bootstrap script by hash instead of allowing inline scripts.
    let csp = headers
        .lines()
        .find(|l| l.trim_start().starts_with("Content-Security-Policy:"))
        .unwrap();
    assert!(csp.contains("'sha256-"), "{csp}");
    assert!(!csp.contains("script-src 'self' 'unsafe-inline'"), "{csp}");
    assert!(headers.contains("/runs/*.jsonl\n  Content-Type: application/x-ndjson; charset=utf-8"));
    assert!(headers.contains("Cache-Control: public, max-age=31536000, immutable"));
    assert!(site.root.join("standing-notes").read_dir().unwrap().count() >= 2);
}

/// Occurrences of `needle` in `html` (a count of elements of one kind).
fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

#[test]
fn the_board_every_record_and_every_server_history_are_pre_rendered() {
    let site = publish_anchor();
    let board = board(&site);
    let rows = board["rows"].as_array().unwrap();
    let page = std::fs::read_to_string(site.root.join("index.html")).unwrap();
    assert!(
        page.contains(r#"<main id="fitness-app" data-page="board""#),
        "{page}"
    );
    assert_eq!(count(&page, "<article "), 33);
    assert!(page.contains("26 of 33 published runs published no score."));
    assert!(page.contains("Measured model spend") && page.contains("at least $"));
    // Signed with the site's key: every row reads verified, and says by which key.
    assert_eq!(count(&page, r#"data-signature="verified""#), 33 * 2);
    // The reference's seven passes keep their numbers and say what our rule reads.
    assert_eq!(count(&page, r#"data-reads="EXTEND""#), 7);
    // Tape links name the run directory once.
    assert!(page.contains(r#"href="runs/huggingface-co-2026-08-20T17-23-48-886Z/mcp.jsonl""#));
    assert!(!page.contains("runs/huggingface-co-2026-08-20T17-23-48-886Z/runs/"));
    let script_hashes: Vec<String> = {
        let headers = std::fs::read_to_string(site.root.join("_headers")).unwrap();
        headers
            .split('\'')
            .filter(|t| t.starts_with("sha256-"))
            .map(str::to_owned)
            .collect()
    };
    for row in rows {
        let id = row["id"].as_str().unwrap();
        let path = site.root.join(format!("runs/{id}/index.html"));
        let html = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(
            html.contains(&format!(r#"data-page="record" data-id="{id}""#)),
            "{id}"
        );
        assert!(
            html.contains(&format!("<title>{id} · Fitness Report</title>")),
            "{id}"
        );
        assert!(
            html.contains("import('../../v.js')"),
            "{id}: assets lead back to the root"
        );
        assert!(
            html.contains(r#"href="../../servers/"#),
            "{id}: links its server's history"
        );
        // The inline bootstrap of a page one directory pair down is allowed by its hash.
        let script = html.split("<script type=\"module\">").nth(1).unwrap();
        let body = script.split("</script>").next().unwrap();
        let digest = sha256_b64(body.as_bytes());
        assert!(script_hashes.contains(&format!("sha256-{digest}")), "{id}");
    }
    let mut slugs: Vec<&str> = rows
        .iter()
        .map(|r| r["server"]["slug"].as_str().unwrap())
        .collect();
    slugs.sort();
    slugs.dedup();
    for slug in slugs {
        let html =
            std::fs::read_to_string(site.root.join(format!("servers/{slug}/index.html"))).unwrap();
        let runs = rows.iter().filter(|r| r["server"]["slug"] == slug).count();
        assert_eq!(count(&html, "<article "), runs, "{slug}");
    }
}

fn sha256_b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bytes))
}

#[test]
fn published_records_verify_against_the_key_in_board_json() {
    let site = publish_anchor();
    let key = board(&site)["publisher_key"].as_str().unwrap().to_owned();
    let record = site
        .root
        .join("runs/huggingface-co-2026-08-20T17-23-48-886Z/record.json");
    let out = fitness(&["verify", s(&record), "--key", &key]);
    assert!(out.status.success(), "{}", text(&out));
    // A second publisher key does not verify them.
    let other = site.key.with_file_name("other.key");
    assert!(fitness(&["keygen", "--out", s(&other)]).status.success());
    let other_pub: Value = serde_json::from_slice(&std::fs::read(&other).unwrap()).unwrap();
    let out = fitness(&[
        "verify",
        s(&record),
        "--key",
        other_pub["public_key"].as_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
fn badges_say_the_interval_or_the_refusal() {
    let site = publish_anchor();
    let hf = std::fs::read_to_string(site.root.join("badges/huggingface-co.svg")).unwrap();
    insta::assert_snapshot!("badge_huggingface", hf);
    // Every server's badge shows its newest run: the interval or the refusal code.
    let board = board(&site);
    let mut newest = std::collections::BTreeMap::new();
    for row in board["rows"].as_array().unwrap() {
        newest.insert(
            row["server"]["slug"].as_str().unwrap().to_owned(),
            row.clone(),
        );
    }
    let mut refused = 0;
    for (slug, row) in &newest {
        let badge = std::fs::read_to_string(site.root.join(format!("badges/{slug}.svg"))).unwrap();
        if row["result"]["kind"] == "refused" {
            refused += 1;
            let code = row["result"]["code"].as_str().unwrap();
            assert!(
                badge.contains(&format!("refused: {code}")),
                "{slug}: {badge}"
            );
        } else {
            assert!(
                badge.contains('%') && !badge.contains("refused"),
                "{slug}: {badge}"
            );
        }
    }
    assert!(
        refused > 0,
        "the anchor has servers whose newest run was refused"
    );
}

#[test]
fn a_bad_record_fails_the_publish_and_writes_no_site() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    std::fs::create_dir_all(runs.join("r1")).unwrap();
    std::fs::write(
        runs.join("r1/record.json"),
        br#"{"schema":"fitness-report/2","outcome":"DEGENERATE","score":{}}"#,
    )
    .unwrap();
    let out_dir = tmp.path().join("site");
    let out = fitness(&["publish", s(&runs), "--no-viewer", "--out", s(&out_dir)]);
    assert!(!out.status.success());
    let message = text(&out);
    assert!(
        message.contains("r1/record.json")
            && message.contains("not a valid fitness-report/2 record"),
        "{message}"
    );
    assert!(
        !out_dir.exists(),
        "a failed publish must not leave a site behind"
    );
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "staging directory left behind: {leftovers:?}"
    );
}

#[test]
fn publish_refuses_to_replace_a_directory_that_is_not_a_site() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("precious");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::write(out_dir.join("thesis.txt"), "do not delete").unwrap();
    let anchor = anchor_dir();
    let out = fitness(&[
        "publish",
        "--import",
        s(&anchor.join("runs.json")),
        "--no-viewer",
        "--out",
        s(&out_dir),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("is not a published site"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("thesis.txt")).unwrap(),
        "do not delete"
    );
}

#[test]
fn a_missing_viewer_build_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let anchor = anchor_dir();
    let out = fitness(&[
        "publish",
        "--import",
        s(&anchor.join("runs.json")),
        "--viewer",
        s(&tmp.path().join("nope")),
        "--out",
        s(&tmp.path().join("site")),
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no viewer build"), "{}", text(&out));
}

#[tokio::test]
async fn the_published_site_serves_tapes_with_its_own_headers() {
    let site = publish_anchor();
    let app = fitness_recorder::serve::router(&site.root).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let path = "/runs/huggingface-co-2026-08-20T17-23-48-886Z/agent.jsonl";
    stream
        .write_all(format!("HEAD {path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    let lower = raw.to_ascii_lowercase();
    assert!(lower.starts_with("http/1.1 200"), "{raw}");
    assert!(lower.contains("access-control-allow-origin: *"), "{raw}");
    assert!(lower.contains("content-encoding: gzip"), "{raw}");
    assert!(
        lower.contains("content-type: application/x-ndjson"),
        "{raw}"
    );
    assert!(
        lower.contains("content-security-policy: default-src 'self'"),
        "{raw}"
    );
}

/// A symlinked tape is refused, whatever it points at: publish reads a
/// run's files only from inside its run directory.
#[test]
fn a_tape_symlinked_out_of_its_run_directory_is_refused() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let anchor = anchor_dir();
    let runs = tmp.path().join("runs");
    let out = fitness(&[
        "import",
        s(&anchor.join("runs.json")),
        "--tapes",
        s(&anchor.join("traces")),
        "--out",
        s(&runs),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    // The same bytes, moved out of the run directory and linked back: the
    // hashes still match, so only the symlink check can stop it.
    let run = runs.join("huggingface-co-2026-08-20T17-23-48-886Z");
    let elsewhere = tmp.path().join("elsewhere.jsonl");
    std::fs::rename(run.join("mcp.jsonl"), &elsewhere).unwrap();
    symlink(&elsewhere, run.join("mcp.jsonl")).unwrap();
    let site = tmp.path().join("site");
    let out = fitness(&["publish", s(&runs), "--no-viewer", "--out", s(&site)]);
    assert!(!out.status.success(), "{}", text(&out));
    let message = text(&out);
    assert!(
        message.contains("mcp.jsonl leads outside") && message.contains("refused"),
        "{message}"
    );
    assert!(!site.exists(), "a refused publish writes no site");

    // The same through --import --traces: a trace dir's tape that is a
    // symlink to a file outside it (here /etc/hostname) is refused too.
    let traces = tmp.path().join("traces");
    let id = "huggingface-co-2026-08-20T17-23-48-886Z";
    std::fs::create_dir_all(traces.join(id)).unwrap();
    symlink("/etc/hostname", traces.join(id).join("mcp.jsonl")).unwrap();
    let out = fitness(&[
        "publish",
        "--import",
        s(&anchor.join("runs.json")),
        "--traces",
        s(&traces),
        "--no-viewer",
        "--out",
        s(&site),
    ]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("leads outside"), "{}", text(&out));
    assert!(!site.exists());
}

/// The structural block of a record the engine wrote reads the suite's
/// size, never the candidates: the demo's good server proposes 24
/// candidates and drives 12 tasks.
#[test]
fn the_record_page_prints_the_suite_size_the_engine_recorded_beside_the_candidates() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    for server in ["good", "thin"] {
        let out = common::run_bounded(
            &common::run_args(
                "sim/diligent",
                &runs,
                &[],
                &[common::FITNESS, "demo-server", server],
            ),
            std::time::Duration::from_secs(300),
        );
        let (dir, record) = common::run_result(&out);
        let structural = record["gates"]["records"]
            .as_array()
            .expect("gates")
            .iter()
            .find(|g| g["id"] == "structural")
            .expect("the structural gate")["detail"]
            .clone();
        let candidates = structural["n_generated"].as_u64().expect("candidates");
        let tasks = record["suite"]["tasks"].as_u64().expect("suite size");
        assert_eq!(structural["n_tasks"].as_u64(), Some(tasks), "{structural}");
        if server == "good" {
            assert_ne!(candidates, tasks, "a run that proves nothing: {structural}");
        }
        let site = tmp.path().join(format!("site-{server}"));
        publish_runs(tmp.path(), &runs, &site);
        let id = dir
            .file_name()
            .expect("run id")
            .to_string_lossy()
            .into_owned();
        let html = std::fs::read_to_string(site.join("runs").join(&id).join("index.html"))
            .expect("the record page");
        let page = page_text(&html);
        let size = format!(
            "{tasks} task{} admitted to the suite",
            if tasks == 1 { "" } else { "s" }
        );
        assert!(page.contains(&size), "{server}: {size} in {page}");
        assert!(
            page.contains(&format!("Candidates generated: {candidates}")),
            "{server}: {page}"
        );
        if candidates != tasks {
            assert!(
                !page.contains(&format!("{candidates} tasks admitted")),
                "{server}: the candidates read as the suite: {page}"
            );
        }
    }
}

/// A compromised run sits under what happened to it, not under the gate
/// that counted its failed calls: a runner whose API fails one call in
/// four compromises the demo's screen, and the board and the page say the
/// null screen's calls failed.
#[test]
fn a_compromised_run_is_titled_by_the_stage_whose_calls_failed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    let out = common::run_bounded(
        &common::run_args(
            "sim/unstable",
            &runs,
            &[],
            &[common::FITNESS, "demo-server", "good"],
        ),
        std::time::Duration::from_secs(300),
    );
    let (dir, record) = common::run_result(&out);
    assert_eq!(record["outcome"], "COMPROMISED", "{:#}", record["gates"]);
    let gate = record["gates"]["refused_at"]
        .as_str()
        .expect("the gate")
        .to_owned();
    let site = tmp.path().join("site");
    publish_runs(tmp.path(), &runs, &site);
    let board = board_of(&site);
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    let group = board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| {
            g["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == id.as_str())
        })
        .expect("the row's group")
        .clone();
    assert_eq!(
        group["id"],
        format!("refused:compromised:{gate}"),
        "{group}"
    );
    assert_eq!(group["tier"], "compromised");
    let title = group["title"].as_str().unwrap();
    assert!(
        title.starts_with("Compromised: too many calls failed in the null screen"),
        "{title}"
    );
    assert!(!title.contains("Refused at"), "{title}");
    let page = page_text(
        &std::fs::read_to_string(site.join("runs").join(&id).join("index.html")).unwrap(),
    );
    assert!(
        page.contains(
            "COMPROMISED: too many calls failed in the null screen, so the measurement did not complete"
        ),
        "{page}"
    );
    let board_page = page_text(&std::fs::read_to_string(site.join("index.html")).unwrap());
    assert!(board_page.contains(title), "{board_page}");
}

/// The screen's protocol is registered in the run's own words (what is
/// asked, of which model, what deletes a candidate) and the record page
/// prints it; a run that registered no screen says so.
#[test]
fn the_null_screen_protocol_is_registered_in_words_and_printed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (runs, extra) in [("screened", &[][..]), ("unscreened", &["--no-screen"][..])] {
        let runs = tmp.path().join(runs);
        let out = common::run_bounded(
            &common::run_args(
                "sim/diligent",
                &runs,
                extra,
                &[common::FITNESS, "demo-server", "good"],
            ),
            std::time::Duration::from_secs(300),
        );
        let (dir, record) = common::run_result(&out);
        let protocol = record["preregistration"]["screen_protocol"].as_str();
        let site = runs.with_extension("site");
        publish_runs(tmp.path(), &runs, &site);
        let id = dir.file_name().unwrap().to_string_lossy().into_owned();
        let page = page_text(
            &std::fs::read_to_string(site.join("runs").join(&id).join("index.html")).unwrap(),
        );
        if extra.is_empty() {
            let protocol = protocol.expect("a registered screen states its protocol");
            for words in [
                "sim/diligent",
                "with no tools",
                "is deleted",
                "kept unscreened",
            ] {
                assert!(protocol.contains(words), "{words}: {protocol}");
            }
            assert!(
                page.contains(
                    "Null screen protocol, in the run's own words: Before the suite is hashed"
                ),
                "{page}"
            );
        } else {
            assert_eq!(protocol, None);
            assert!(
                page.contains("The record states no null screen protocol."),
                "{page}"
            );
        }
    }
}

/// Two runner models never share a scored group: the demo's good server
/// scored by two runners lands in two groups, each naming its runner.
#[test]
fn two_runner_models_land_in_two_scored_groups() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    for runner in ["sim/diligent", "sim/careless"] {
        let out = common::run_bounded(
            &common::run_args(
                runner,
                &runs,
                &[],
                &[common::FITNESS, "demo-server", "good"],
            ),
            std::time::Duration::from_secs(300),
        );
        let (_, record) = common::run_result(&out);
        assert_eq!(
            record["outcome"], "SCORED",
            "{runner}: {:#}",
            record["gates"]
        );
    }
    let site = tmp.path().join("site");
    publish_runs(tmp.path(), &runs, &site);
    let board = board_of(&site);
    let scored: Vec<&Value> = board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["tier"] == "scored")
        .collect();
    assert_eq!(scored.len(), 2, "{:#}", board["groups"]);
    let mut runners: Vec<&str> = scored
        .iter()
        .map(|g| g["runner_model"].as_str().unwrap())
        .collect();
    runners.sort_unstable();
    assert_eq!(runners, ["sim/careless", "sim/diligent"]);
    for g in scored {
        assert_eq!(g["rows"].as_array().unwrap().len(), 1, "{g}");
        let runner = g["runner_model"].as_str().unwrap();
        assert!(g["title"].as_str().unwrap().contains(runner), "{g}");
    }
}
