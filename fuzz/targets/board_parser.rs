//! `board.json` as the viewer reads it, and the board rows `publish` builds
//! from a record: nothing may panic, and a board that parses serialises and
//! parses back to itself.
//!
//! One home for the target's check: `fuzz_targets/board_parser.rs` hands it
//! libFuzzer's inputs, and the e2e test `fuzz_corpus` replays the committed
//! corpus through it on the stable toolchain in every test run.

use fitness_shared::board::{Board, StandingNotes, build_board, p_text, row_for};
use fitness_shared::record::RunRecord;

pub fn check(data: &[u8]) {
    if let Ok(board) = serde_json::from_slice::<Board>(data) {
        let text = serde_json::to_vec(&board).expect("a parsed board serialises");
        let again: Board = serde_json::from_slice(&text).expect("a serialised board parses");
        assert_eq!(again, board, "a board reads back to itself");
        for set in &board.standing_notes {
            let _ = StandingNotes::anchor(&set.set_id);
        }
    }
    if let Ok(record) = RunRecord::from_slice(data) {
        let row = row_for(&record, None);
        let board = build_board(
            std::slice::from_ref(&record),
            "2026-11-30T00:00:00.000Z",
            None,
        );
        assert_eq!(board.rows.len(), 1);
        assert_eq!(board.rows[0], row);
        let text = serde_json::to_vec(&board).expect("a built board serialises");
        let again: Board = serde_json::from_slice(&text).expect("a built board parses");
        assert_eq!(again, board);
    }
    if data.len() == 8 {
        let p = f64::from_le_bytes(data.try_into().expect("eight bytes"));
        let _ = p_text(p);
    }
}
