//! `fitness keygen`, `fitness import --sign-key`, `fitness sign` and
//! `fitness verify`, run as a user would run them.

use std::path::PathBuf;

use crate::common;
use common::{anchor_dir, fitness, s, text};

const HF: &str = "huggingface-co-2026-08-20T17-23-48-886Z";

/// A key plus the whole anchor board imported, signed, with tapes attached.
struct Board {
    _tmp: tempfile::TempDir,
    key: PathBuf,
    out: PathBuf,
    import_output: String,
}

fn signed_board() -> Board {
    let tmp = tempfile::tempdir().expect("temp dir");
    let key = tmp.path().join("publisher.key");
    let out = tmp.path().join("board");
    let k = fitness(&["keygen", "--out", s(&key)]);
    assert!(k.status.success(), "keygen failed: {}", text(&k));
    let anchor = anchor_dir();
    let imp = fitness(&[
        "import",
        s(&anchor.join("runs.json")),
        "--out",
        s(&out),
        "--tapes",
        s(&anchor.join("traces")),
        "--sign-key",
        s(&key),
    ]);
    assert!(imp.status.success(), "import failed: {}", text(&imp));
    Board {
        _tmp: tmp,
        key,
        out,
        import_output: text(&imp),
    }
}

#[test]
fn keygen_writes_a_private_key_and_never_overwrites_it() {
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("k");
    let first = fitness(&["keygen", "--out", s(&key)]);
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("public key"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "key file mode {mode:o}");
    }
    let before = std::fs::read(&key).unwrap();
    let second = fitness(&["keygen", "--out", s(&key)]);
    assert_eq!(second.status.code(), Some(1));
    assert!(
        text(&second).contains("refusing to overwrite"),
        "{}",
        text(&second)
    );
    assert_eq!(std::fs::read(&key).unwrap(), before, "the key changed");
}

#[test]
fn import_writes_33_records_and_refusals_have_no_score_key() {
    let board = signed_board();
    assert!(
        board.import_output.contains("imported 33 records")
            && board.import_output.contains("7 SCORED"),
        "{}",
        board.import_output
    );
    assert!(board.import_output.contains("12 INSUFFICIENT_SURFACE"));
    assert!(board.import_output.contains("tapes attached to 8 runs"));
    let mut records = 0;
    for entry in std::fs::read_dir(&board.out).unwrap() {
        let path = entry.unwrap().path().join("record.json");
        if !path.is_file() {
            continue;
        }
        records += 1;
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let scored = value["outcome"] == "SCORED";
        assert_eq!(value.get("score").is_some(), scored, "{}", path.display());
        assert_eq!(value["schema"], "fitness-report/2");
        let v = fitness(&["verify", s(&path)]);
        assert!(v.status.success(), "{}: {}", path.display(), text(&v));
    }
    assert_eq!(records, 33);
    assert!(board.out.join("standing-notes").is_dir());
}

#[test]
fn verify_passes_then_fails_naming_the_tape_after_one_flipped_byte() {
    let board = signed_board();
    let dir = board.out.join(HF);
    let record = dir.join("record.json");
    let ok = fitness(&["verify", s(&record)]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(text(&ok).contains("mcp.jsonl") && text(&ok).contains("agent.jsonl"));

    for tape in ["mcp.jsonl", "agent.jsonl"] {
        let path = dir.join(tape);
        let original = std::fs::read(&path).unwrap();
        for pos in [0, original.len() / 2, original.len() - 1] {
            let mut bytes = original.clone();
            bytes[pos] ^= 0x01;
            std::fs::write(&path, &bytes).unwrap();
            let bad = fitness(&["verify", s(&record)]);
            assert_eq!(
                bad.status.code(),
                Some(1),
                "flip at {pos} of {tape} verified"
            );
            let out = text(&bad);
            assert!(
                out.contains(&format!("FAILED  {}", path.display())),
                "{out}"
            );
            assert!(out.contains("sha256 is"), "{out}");
        }
        std::fs::write(&path, &original).unwrap();
    }
    assert!(fitness(&["verify", s(&record)]).status.success());

    // A truncated tape is named with its size.
    let path = dir.join("agent.jsonl");
    let original = std::fs::read(&path).unwrap();
    std::fs::write(&path, &original[..original.len() - 1]).unwrap();
    let bad = fitness(&["verify", s(&record)]);
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("bytes, the record says"),
        "{}",
        text(&bad)
    );
    // A missing tape is named too.
    std::fs::remove_file(&path).unwrap();
    let bad = fitness(&["verify", s(&record)]);
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("agent.jsonl: cannot read"),
        "{}",
        text(&bad)
    );
}

#[test]
fn verify_fails_naming_the_record_after_one_flipped_byte() {
    let board = signed_board();
    let record = board.out.join(HF).join("record.json");
    let original = std::fs::read(&record).unwrap();
    let n = original.len();
    for pos in [0, 1, n / 3, n / 2, n - 40, n - 2, n - 1] {
        let mut bytes = original.clone();
        bytes[pos] ^= 0x01;
        std::fs::write(&record, &bytes).unwrap();
        let bad = fitness(&["verify", s(&record)]);
        assert_eq!(bad.status.code(), Some(1), "flip at {pos} verified");
        let out = text(&bad);
        assert!(
            out.contains(&format!("FAILED {}", record.display())),
            "{out}"
        );
    }
    std::fs::write(&record, &original).unwrap();
    assert!(fitness(&["verify", s(&record)]).status.success());
}

#[test]
fn sign_signs_an_unsigned_record_and_verify_can_pin_the_key() {
    let board = signed_board();
    let tmp = tempfile::tempdir().unwrap();
    let unsigned = tmp.path().join("unsigned");
    let anchor = anchor_dir();
    let imp = fitness(&[
        "import",
        s(&anchor.join("runs.json")),
        "--out",
        s(&unsigned),
    ]);
    assert!(imp.status.success(), "{}", text(&imp));
    let record = unsigned.join(HF).join("record.json");
    let before = fitness(&["verify", s(&record)]);
    assert!(!before.status.success());
    assert!(
        text(&before).contains("carries no signature"),
        "{}",
        text(&before)
    );

    let signed = fitness(&["sign", s(&record), "--key", s(&board.key)]);
    assert!(signed.status.success(), "{}", text(&signed));
    assert!(fitness(&["verify", s(&record)]).status.success());

    let key_file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&board.key).unwrap()).unwrap();
    let public = key_file["public_key"].as_str().unwrap();
    let pinned = fitness(&["verify", s(&record), "--key", public]);
    assert!(pinned.status.success(), "{}", text(&pinned));

    let other_key = tmp.path().join("other.key");
    assert!(
        fitness(&["keygen", "--out", s(&other_key)])
            .status
            .success()
    );
    let other: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&other_key).unwrap()).unwrap();
    let wrong = fitness(&[
        "verify",
        s(&record),
        "--key",
        other["public_key"].as_str().unwrap(),
    ]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        text(&wrong).contains("not the expected key"),
        "{}",
        text(&wrong)
    );
}

#[test]
fn import_of_a_missing_file_fails_with_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope.json");
    let out = fitness(&["import", s(&missing), "--out", s(&tmp.path().join("o"))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("nope.json"), "{}", text(&out));
}
