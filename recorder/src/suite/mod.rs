//! Task suites: generators, admission, the null screen, the suite hash.

pub mod task;
