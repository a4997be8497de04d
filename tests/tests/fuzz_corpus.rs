//! Every cargo-fuzz target's committed corpus (`fuzz/corpus/<target>/`),
//! replayed through the target's own check (`fuzz/targets/<target>.rs`, the
//! file libFuzzer drives too) on the stable toolchain: every input that
//! ever found new code still holds what the target asserts. Long fuzzing
//! with sanitizers is `scripts/fuzz`, a script of its own.

use std::panic::{AssertUnwindSafe, catch_unwind};

use fitness_e2e::workspace_root;

#[path = "../../fuzz/targets/board_parser.rs"]
mod board_parser;
#[path = "../../fuzz/targets/record_parser.rs"]
mod record_parser;
#[path = "../../fuzz/targets/rpc_frames.rs"]
mod rpc_frames;
#[path = "../../fuzz/targets/schema_args.rs"]
mod schema_args;
#[path = "../../fuzz/targets/tape_reader.rs"]
mod tape_reader;

/// Runs `check` on every input of the target's corpus; fails naming each
/// input that panicked.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = workspace_root().join("fuzz/corpus").join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 100,
        "{target}'s corpus has {} inputs: is fuzz/corpus committed?",
        inputs.len()
    );
    let mut failed = Vec::new();
    for path in &inputs {
        let data = std::fs::read(path).expect("a corpus input reads");
        if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} inputs of {target} failed its check:\n{}",
        failed.len(),
        inputs.len(),
        failed.join("\n")
    );
}

#[test]
fn the_tape_reader_corpus_holds() {
    replay("tape_reader", tape_reader::check);
}

#[test]
fn the_record_parser_corpus_holds() {
    replay("record_parser", record_parser::check);
}

#[test]
fn the_board_parser_corpus_holds() {
    replay("board_parser", board_parser::check);
}

#[test]
fn the_rpc_frames_corpus_holds() {
    replay("rpc_frames", rpc_frames::check);
}

#[test]
fn the_schema_args_corpus_holds() {
    replay("schema_args", schema_args::check);
}

/// The replay catches what a target asserts: a check that panics on some
/// input is reported with the input's name.
#[test]
#[should_panic(expected = "failed its check")]
fn a_failing_input_is_named() {
    replay("tape_reader", |data| {
        assert!(data.len() < 64, "a long input")
    });
}
