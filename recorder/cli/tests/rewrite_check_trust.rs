//! `fitness rewrite-check` runs the before record's server command only when
//! the operator signed that record: an unsigned record, or one signed by
//! another key, has its command printed and refused unless `--trust-command`
//! says to run it anyway. A refusal runs nothing and changes nothing.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{canary_run, run_bounded, s, text};
use serde_json::Value;

fn keygen(path: &Path) {
    let made = run_bounded(&["keygen", "--out", s(path)], Duration::from_secs(30));
    assert!(made.status.success(), "{}", text(&made));
}

fn rewrite_check(run: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["rewrite-check", s(run), "--out", s(out)];
    args.extend_from_slice(extra);
    run_bounded(&args, Duration::from_secs(300))
}

/// Run directories under `out` (the after runs a check started).
fn runs_in(out: &Path) -> usize {
    std::fs::read_dir(out).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.path().join("record.json").is_file())
            .count()
    })
}

#[test]
fn an_unsigned_record_has_its_command_printed_and_refused_unless_trusted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before = canary_run(&dir.path().join("runs"), &[]);
    let record_before = std::fs::read(before.join("record.json")).expect("record");
    let after = dir.path().join("after");

    let refused = rewrite_check(&before, &after, &[]);
    let said = text(&refused);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("refusing to run"), "{said}");
    assert!(said.contains("unsigned"), "{said}");
    assert!(
        said.contains("demo-server canary"),
        "the command is printed: {said}"
    );
    assert!(said.contains("--trust-command"), "{said}");
    assert!(!after.exists(), "nothing ran, nothing was written");
    assert_eq!(
        std::fs::read(before.join("record.json")).expect("record"),
        record_before,
        "the before record is untouched"
    );

    // A command that lost a secret to redaction cannot be run as recorded.
    let mut record: Value = serde_json::from_slice(&record_before).expect("JSON");
    record["server"]["target"]["argv"]
        .as_array_mut()
        .expect("argv")
        .extend(["--token".into(), "[redacted:arg token]".into()]);
    std::fs::write(before.join("record.json"), record.to_string()).expect("written");
    let redacted = rewrite_check(&before, &after, &["--trust-command"]);
    assert!(!redacted.status.success());
    assert!(
        text(&redacted).contains("had a secret redacted ([redacted:arg token])"),
        "{}",
        text(&redacted)
    );
    std::fs::write(before.join("record.json"), &record_before).expect("restored");

    let trusted = rewrite_check(&before, &after, &["--trust-command", "--json"]);
    assert!(trusted.status.success(), "{}", text(&trusted));
    assert_eq!(runs_in(&after), 1);
    let linked: Value =
        serde_json::from_slice(&std::fs::read(before.join("record.json")).expect("record"))
            .expect("JSON");
    assert_eq!(linked["rewrite"]["role"], "before");
}

#[test]
fn a_record_signed_by_another_key_is_refused_and_the_operators_own_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (theirs, mine) = (dir.path().join("theirs.key"), dir.path().join("mine.key"));
    keygen(&theirs);
    keygen(&mine);
    let before = canary_run(&dir.path().join("runs"), &[]);
    let record = before.join("record.json");
    // Somebody else's signed run, handed to the operator.
    let signed = run_bounded(
        &["sign", s(&record), "--key", s(&theirs)],
        Duration::from_secs(30),
    );
    assert!(signed.status.success(), "{}", text(&signed));

    let after = dir.path().join("after");
    let refused = rewrite_check(&before, &after, &["--key", s(&mine)]);
    let said = text(&refused);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("refusing to run"), "{said}");
    assert!(said.contains("not yours"), "{said}");
    assert!(said.contains("demo-server canary"), "{said}");
    assert!(!after.exists(), "nothing ran, nothing was written");

    // The operator's own signed run needs no --trust-command.
    let signed = run_bounded(
        &["sign", s(&record), "--key", s(&mine)],
        Duration::from_secs(30),
    );
    assert!(signed.status.success(), "{}", text(&signed));
    let own = rewrite_check(&before, &after, &["--key", s(&mine), "--json"]);
    assert!(own.status.success(), "{}", text(&own));
    assert_eq!(runs_in(&after), 1);
}
