//! The one redaction policy (`fitness-redact/1`, R-TAPE-7, R-SAFE): what is
//! scrubbed from every byte the recorder writes or prints, and the marker
//! that replaces it.
//!
//! Two kinds of rule:
//! - **Exact values the operator gave** ([`Secret`]): every `--env` and
//!   `--header` value, the provider keys the model clients read, URL
//!   userinfo and credential-like query parameters. Each is replaced by a
//!   marker naming its source (`[redacted:env API_KEY]`), never the value.
//!   A value of at least [`MIN_EXACT_LEN`] characters is replaced wherever it
//!   occurs; a shorter one only where it follows its own name (`NAME=value`,
//!   `"NAME": "value"`), because replacing every `1` or `dev` would destroy
//!   the tape without protecting anything.
//! - **Patterns** for tokens a server may echo unasked: bearer and
//!   `Authorization` values, JWTs, `sk-` keys, GitHub, Google, Slack, GitLab,
//!   Hugging Face, npm and Stripe tokens, AWS access key ids, private key
//!   blocks, URL userinfo and credential query parameters, `*_KEY=...`
//!   and `*session-id: ...` assignments, and JSON string fields named like
//!   credentials (`api_key`, `password`, `access_token`, `mcp-session-id`,
//!   ...), also inside a string that is itself JSON (a tool result). Their
//!   marker names the rule (`[redacted:pattern jwt]`).
//!
//! Unlike the reference implementation's rule set, no rule replaces a
//! whole JSON value that is not a string (its `next_token` schema and
//! `output_tokens_details` blocks were wiped), and a mention of an
//! environment variable (`process.env.X`, `.env`) is not a secret.
//!
//! JSON is redacted string by string after decoding, so an escape (`\n`,
//! `\u0073k-`) cannot hide a token, and the result is always valid JSON;
//! a line that is not JSON is redacted as text. Numbers are never touched.
//! [`Hits`] counts what was replaced, by marker label, without the values.
//!
//! The crate does no I/O: the recorder hands the policy every value it
//! reads from its flags and environment, then every line before it is
//! written.

mod names;
mod redactor;
mod rules;
mod secret;
mod url;

pub use names::credential_name;
pub use redactor::Redactor;
pub use rules::{defined_rule_names, rule_names};
pub use secret::*;
pub use url::{UrlCredentials, token_shaped, url_credentials, url_host};
