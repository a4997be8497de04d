//! libFuzzer's entry for `targets/tape_reader.rs` (what it drives and what must
//! hold is written there).
#![no_main]

#[path = "../targets/tape_reader.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::check(data));
