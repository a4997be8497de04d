//! libFuzzer's entry for `targets/record_parser.rs` (what it drives and what must
//! hold is written there).
#![no_main]

#[path = "../targets/record_parser.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::check(data));
