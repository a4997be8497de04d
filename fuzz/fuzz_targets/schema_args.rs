//! libFuzzer's entry for `targets/schema_args.rs` (what it drives and what must
//! hold is written there).
#![no_main]

#[path = "../targets/schema_args.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::check(data));
