//! libFuzzer's entry for `targets/board_parser.rs` (what it drives and what must
//! hold is written there).
#![no_main]

#[path = "../targets/board_parser.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::check(data));
