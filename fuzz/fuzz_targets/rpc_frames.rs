//! libFuzzer's entry for `targets/rpc_frames.rs` (what it drives and what must
//! hold is written there).
#![no_main]

#[path = "../targets/rpc_frames.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::check(data));
