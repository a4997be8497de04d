//! The `fitness` command's integration tests, one binary: each file is a
//! module (nextest still runs every test in a process of its own), so the
//! engine is linked once for all of them.

mod common;
#[path = "../../engine/tests/model_fake/mod.rs"]
mod model_fake;

mod action_comment;
mod ask;
mod cli_ends;
mod compare;
mod compare_paired;
mod composed;
mod conformance;
mod demo_servers;
mod discovery;
mod fleet_manifests;
mod hostile_servers;
mod input_requests;
mod integrity_cli;
mod judge_walk;
mod mcp_fixtures;
mod mcp_list_changed;
mod mcp_real_servers;
mod mcp_tls;
mod model_loop;
mod newcomer_errors;
mod oauth_hostile;
mod oauth_login;
mod publish;
mod publish_incremental;
mod publish_unredacted;
mod reach;
mod real_model;
mod redaction_canary;
mod redirect_credentials;
mod refusal_words;
mod rewrite_check;
mod rewrite_check_trust;
mod rewrite_judge;
mod run_pipeline;
mod safe_state;
mod schema_walk2;
mod session_ids;
mod suite_real_servers;
mod sweep;
mod tape_stats_cli;
mod traces;
