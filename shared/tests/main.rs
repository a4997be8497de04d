//! fitness-shared's integration tests, one binary: each file is a module
//! (nextest still runs every test in a process of its own), so the crate
//! is linked once for all of them.

mod common;
mod record_common;

mod gates;
mod golden_vectors;
mod integrity;
mod invariants;
mod paired_reference;
mod reading;
mod record_import;
mod record_parser_robustness;
mod record_roundtrip;
mod record_schema;
mod redact;
mod reference_values;
mod tape_anchor_stats;
mod tape_props;
mod tape_reader;
mod tape_stats_rules;
mod tape_writer;
