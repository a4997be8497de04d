//! The redaction policy (`fitness-redact/1`): what it replaces, with which
//! marker, and what it leaves alone.

use std::borrow::Cow;
use std::sync::Arc;

use fitness_shared::redact::{
    Hits, Redactor, Secret, defined_rule_names, rule_names, url_credentials, url_host,
};
use fitness_shared::tape::{Direction, Line, TapeWriter};
use serde_json::{Value, json};

fn redact(r: &Redactor, text: &str) -> (String, Hits) {
    let mut hits = Hits::default();
    let out = r.redact_str(text, &mut hits).into_owned();
    (out, hits)
}

fn count(hits: &Hits, label: &str) -> u64 {
    hits.iter().find(|(l, _)| *l == label).map_or(0, |(_, n)| n)
}

#[test]
fn every_pattern_rule_compiles() {
    assert_eq!(rule_names(), defined_rule_names());
    assert!(rule_names().len() >= 15, "{:?}", rule_names());
}

#[test]
fn an_operator_value_is_replaced_everywhere_with_a_marker_naming_its_source() {
    let r = Redactor::new(&[
        Secret::env("API_KEY", "canary-env-3f9a1c77"),
        Secret::header("X-Api-Key", "hdr/value+with&chars"),
    ]);
    let (out, hits) = redact(
        &r,
        "API_KEY=canary-env-3f9a1c77 and again canary-env-3f9a1c77",
    );
    assert_eq!(
        out,
        "API_KEY=[redacted:env API_KEY] and again [redacted:env API_KEY]"
    );
    assert_eq!(count(&hits, "env API_KEY"), 2);
    assert_eq!(hits.total(), 2);
    // Percent-encoded (a server echoing its request URL) and JSON-escaped.
    let (out, _) = redact(&r, "GET /x?k=hdr%2Fvalue%2Bwith%26chars");
    assert_eq!(out, "GET /x?k=[redacted:header X-Api-Key]");
    let (out, _) = redact(&r, r#"{"h":"hdr\/value+with&chars"}"#);
    assert!(!out.contains("value+with"), "{out}");
}

#[test]
fn a_header_credential_is_also_found_without_its_scheme() {
    let r = Redactor::new(&[Secret::header(
        "Authorization",
        "Bearer tok-0123456789abcdef",
    )]);
    let (out, _) = redact(&r, "echo: tok-0123456789abcdef");
    assert_eq!(out, "echo: [redacted:header Authorization]");
}

#[test]
fn a_short_value_is_replaced_only_after_its_own_name() {
    let r = Redactor::new(&[Secret::env("PIN", "4711"), Secret::env("MODE", "dev")]);
    let (out, hits) = redact(&r, "PIN=4711 and the count is 4711; MODE: dev, a dev box");
    assert_eq!(
        out,
        "PIN=[redacted:env PIN] and the count is 4711; MODE: [redacted:env MODE], a dev box"
    );
    assert_eq!(hits.total(), 2);
    // In JSON: the field named like the variable.
    let mut v = json!({"env": {"PIN": "4711"}, "n": "4711"});
    let mut hits = Hits::default();
    assert!(r.redact_value(&mut v, &mut hits));
    assert_eq!(
        v,
        json!({"env": {"PIN": "[redacted:env PIN]"}, "n": "4711"})
    );
}

#[test]
fn url_credentials_are_found_and_the_host_alone_names_the_server() {
    let url = "http://alice:hunter2@mcp.example.com:8443/mcp?api_key=SECRET-q-123&page=2";
    assert_eq!(url_host(url).as_deref(), Some("mcp.example.com"));
    assert_eq!(url_host("https://[::1]:3000/mcp").as_deref(), Some("::1"));
    assert_eq!(url_host("not a url"), None);
    let creds = url_credentials(url);
    assert_eq!(
        creds.redacted_url.as_deref(),
        Some(
            "http://[redacted:url username]:[redacted:url password]@mcp.example.com:8443/mcp?api_key=[redacted:url query api_key]&page=2"
        )
    );
    let r = Redactor::with_urls(&[], &[url.to_owned()]);
    for text in [
        format!("could not reach {url}: refused"),
        "alice:hunter2@mcp.example.com".to_owned(),
        "Basic YWxpY2U6aHVudGVyMg==".to_owned(),
        "?api_key=SECRET-q-123".to_owned(),
    ] {
        let (out, hits) = redact(&r, &text);
        for secret in ["hunter2", "SECRET-q-123", "YWxpY2U6aHVudGVyMg"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        assert!(hits.total() > 0, "{text}");
    }
    let (out, hits) = redact(&r, &format!("could not reach {url}"));
    assert!(out.contains("mcp.example.com:8443/mcp"), "{out}");
    assert!(out.contains("page=2"), "{out}");
    assert_eq!(count(&hits, "url password"), 1);
    assert_eq!(count(&hits, "url query api_key"), 1);
    // A URL without credentials has nothing to redact.
    assert_eq!(
        url_credentials("https://example.com/mcp?page=2").redacted_url,
        None
    );
}

#[test]
fn tokens_a_server_echoes_unasked_are_replaced_by_rule() {
    let r = Redactor::default();
    let cases = [
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        ("bearer", "Bearer abcdef0123456789ABCDEFxyz"),
        ("authorization", "authorization: Basic dXNlcjpwYXNz"),
        ("sk-key", "sk-proj-4f8a9b2c1d3e5f6a7b8c9d0e"),
        ("sk-key", "sk-ant-api03-abcdefghij0123456789"),
        ("github-token", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
        (
            "github-token",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        ),
        ("google-api-key", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
        ("slack-token", "xoxb-123456789012-abcdefghij"),
        ("aws-access-key-id", "AKIAIOSFODNN7EXAMPLE"),
        ("gitlab-token", "glpat-abcdefghij0123456789"),
        ("stripe-key", "sk_live_0123456789abcdefABCD"),
        (
            "private-key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        ),
        ("url-userinfo", "https://bob:pw@host.example/x"),
        (
            "url-credential",
            "https://host.example/x?access_token=abc123&x=1",
        ),
        ("credential-assignment", "OPENAI_API_KEY=abc123def456"),
    ];
    for (rule, token) in cases {
        let text = format!("before {token} after");
        let (out, hits) = redact(&r, &text);
        let label = format!("pattern {rule}");
        assert!(count(&hits, &label) >= 1, "{rule}: {out} ({hits:?})");
        assert!(
            out.contains(&format!("[redacted:{label}]")),
            "{rule}: {out}"
        );
        assert!(
            out.starts_with("before ") && out.ends_with(" after") || rule == "private-key",
            "{rule}: {out}"
        );
    }
    // Inside a JSON text held in a string, after an escape.
    let (out, _) = redact(&r, r#"{\"k\":\"x\"}\nsk-proj-4f8a9b2c1d3e5f6a7b8c9d0e"#);
    assert!(!out.contains("4f8a9b2c"), "{out}");
}

#[test]
fn prose_hashes_and_references_to_variables_are_left_alone() {
    let r = Redactor::default();
    for text in [
        "A risk-assessment-methodology-overview for tasks.",
        "sha256 4f1d0c8a9e7b6a5f4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0",
        "Bearer tokens are sent in the Authorization header.",
        "Read the key from process.env.COINGECKO_PRO_API_KEY or a .env file.",
        "Use `password: string` in the schema; the token_type is bearer.",
        "https://example.com/search?q=rust&page=2",
        "input_tokens 1200, output_tokens 300",
        "[redacted:env API_KEY]",
    ] {
        let (out, hits) = redact(&r, text);
        assert_eq!(out, text, "{hits:?}");
    }
}

#[test]
fn json_is_redacted_string_by_string_and_stays_json() {
    let r = Redactor::new(&[Secret::env("API_KEY", "canary-env-3f9a1c77")]);
    // Nothing to redact: the very same bytes, not re-serialised.
    let frame = r#"{"jsonrpc":"2.0", "id":1,"result":{"x":1.50}}"#;
    assert!(matches!(
        r.redact_json_text(frame, &mut Hits::default()),
        Cow::Borrowed(_)
    ));
    // An escape cannot hide a value or a token.
    let frame = r#"{"text":"\u0063anary-env-3f9a1c77 and \u0073k-proj-4f8a9b2c1d3e5f6a7b8c9d0e"}"#;
    let mut hits = Hits::default();
    let out = r.redact_json_text(frame, &mut hits).into_owned();
    let v: Value = serde_json::from_str(&out).expect("still JSON");
    assert_eq!(
        v["text"],
        "[redacted:env API_KEY] and [redacted:pattern sk-key]"
    );
    assert_eq!(hits.total(), 2);
    // A credential-named field loses its string whole; schemas and counters
    // named like tokens keep theirs (the reference wiped both).
    let mut v = json!({
        "api_key": "whatever-it-is",
        "mcp-session-id": "8c3f2b1a",
        "password": "canary-env-3f9a1c77",
        "properties": {"next_token": {"type": "string"}, "token": {"type": "string"}},
        "usage": {"output_tokens": 86, "output_tokens_details": {"reasoning": 0}},
        "max_tokens": 1000
    });
    let mut hits = Hits::default();
    assert!(r.redact_value(&mut v, &mut hits));
    assert_eq!(v["api_key"], "[redacted:pattern credential-field]");
    assert_eq!(v["mcp-session-id"], "[redacted:pattern credential-field]");
    assert_eq!(v["password"], "[redacted:env API_KEY]");
    assert_eq!(v["properties"]["next_token"], json!({"type": "string"}));
    assert_eq!(v["usage"]["output_tokens_details"], json!({"reasoning": 0}));
    assert_eq!(v["max_tokens"], 1000);
    // A key that is a secret is renamed.
    let mut v = json!({"canary-env-3f9a1c77": 1});
    assert!(r.redact_value(&mut v, &mut Hits::default()));
    assert_eq!(v, json!({"[redacted:env API_KEY]": 1}));
    // Not JSON: redacted as text.
    let out = r.redact_json_text("garbage canary-env-3f9a1c77", &mut Hits::default());
    assert_eq!(out, "garbage [redacted:env API_KEY]");
}

#[test]
fn a_redacting_tape_writer_writes_the_published_form_and_counts_it() {
    let r = Arc::new(Redactor::new(&[Secret::env(
        "API_KEY",
        "canary-env-3f9a1c77",
    )]));
    let mut w = TapeWriter::redacting(Vec::new(), r);
    let untouched = r#"{"jsonrpc":"2.0","id":1, "result":{}}"#;
    w.write_wire_frame("t0", Direction::Out, untouched, None)
        .expect("written");
    w.write_wire_frame(
        "t1",
        Direction::Out,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"API_KEY=canary-env-3f9a1c77"}]}}"#,
        Some("c1"),
    )
    .expect("written");
    assert_eq!(w.hits().total(), 1);
    let text = String::from_utf8(w.into_inner()).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains(untouched), "byte for byte: {}", lines[0]);
    assert!(!text.contains("canary-env"), "{text}");
    match Line::parse(lines[1]).expect("a line") {
        Line::Message(m) => {
            let raw = m.raw_value().expect("frame is JSON");
            assert_eq!(
                raw["result"]["content"][0]["text"],
                "API_KEY=[redacted:env API_KEY]"
            );
            assert_eq!(m.corr_id.as_deref(), Some("c1"));
        }
        other => panic!("not a wire line: {other:?}"),
    }
}

#[test]
fn the_anchor_tapes_stay_readable_through_the_policy() {
    // Every line of the reference's published tapes, redacted by the
    // pattern rules alone: still one JSON object per line, and the few
    // lines that change do not change their kind.
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/anchor-board/traces"
    );
    let r = Redactor::default();
    let (mut lines, mut changed) = (0u64, 0u64);
    for dir in std::fs::read_dir(root).expect("anchor traces") {
        let dir = dir.expect("entry").path();
        for name in ["mcp.jsonl", "agent.jsonl"] {
            let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                lines += 1;
                let out = r.redact_json_text(line, &mut Hits::default());
                if let Cow::Owned(out) = out {
                    changed += 1;
                    let before = Line::parse(line).expect("anchor line").kind();
                    let after = Line::parse(&out).expect("still a JSON object").kind();
                    assert_eq!(before, after);
                }
            }
        }
    }
    assert!(lines > 1000, "{lines}");
    // Published documentation mentions tokens; most lines have none.
    assert!(changed * 20 < lines, "{changed} of {lines} lines changed");
}

#[test]
fn json_held_in_a_string_is_redacted_as_json() {
    let r = Redactor::default();
    // A tool result whose text is a JSON document (the usual MCP shape).
    let inner = json!({"headers": {"mcp-session-id": "4b7e0c1a-9d2f-4e3b-8a61-0f5d2c9e7b14",
                                   "accept": "application/json"}, "api_key": "abc"});
    let frame = json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [
        {"type": "text", "text": inner.to_string()}]}});
    let mut hits = Hits::default();
    let out = r
        .redact_json_text(&frame.to_string(), &mut hits)
        .into_owned();
    assert!(!out.contains("4b7e0c1a"), "{out}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    let text: Value =
        serde_json::from_str(v["result"]["content"][0]["text"].as_str().expect("text"))
            .expect("still JSON inside");
    assert_eq!(
        text["headers"]["mcp-session-id"],
        "[redacted:pattern credential-field]"
    );
    assert_eq!(text["headers"]["accept"], "application/json");
    assert_eq!(text["api_key"], "[redacted:pattern credential-field]");
    assert_eq!(count(&hits, "pattern credential-field"), 2);
    // The same header in a plain-text dump.
    let (out, _) = redact(
        &r,
        "mcp-session-id: 4b7e0c1a-9d2f-4e3b-8a61-0f5d2c9e7b14\nok",
    );
    assert_eq!(
        out,
        "mcp-session-id: [redacted:pattern credential-assignment]\nok"
    );
}

#[test]
fn the_first_look_never_skips_a_line_the_full_walk_would_change() {
    // Lines built to sit at the edges of the shortcut: no backslash, a
    // value at a string's very start or end, a key, a rule at a boundary.
    let r = Redactor::new(&[
        Secret::env("API_KEY", "canary-env-3f9a1c77"),
        Secret::env("PIN", "4711"),
    ]);
    for line in [
        r#"{"a":"canary-env-3f9a1c77"}"#,
        r#"{"canary-env-3f9a1c77":1}"#,
        r#"{"PIN":"4711"}"#,
        r#"{"x":"PIN=4711"}"#,
        r#"{"password":"p"}"#,
        r#"{"X-Auth-Token":"abcdefgh"}"#,
        r#"{"t":"AKIAIOSFODNN7EXAMPLE"}"#,
        r#"{"t":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"}"#,
        r#"{"u":"https://u:p@h/x?token=abc"}"#,
    ] {
        let mut v: Value = serde_json::from_str(line).expect("json");
        let walked = r.redact_value(&mut v, &mut Hits::default());
        let first_look = matches!(
            r.redact_json_text(line, &mut Hits::default()),
            Cow::Owned(_)
        );
        assert!(walked, "the walk changes {line}");
        assert_eq!(walked, first_look, "{line}");
    }
}

mod first_look {
    use super::*;
    use proptest::prelude::*;

    /// Pieces strings are built from: secrets, tokens, names, JSON syntax.
    const PIECES: &[&str] = &[
        "canary-env-3f9a1c77",
        "4711",
        "PIN=",
        "API_KEY",
        "sk-proj-4f8a9b2c1d3e5f6a7b8c9d0e",
        "AKIAIOSFODNN7EXAMPLE",
        "Bearer ",
        "abcdef0123456789ABCDEF",
        "https://u:p@h/",
        "?token=",
        "password",
        " ",
        "\n",
        "\"",
        "{",
        "}",
        ":",
        "word",
        "é",
        "\t",
        "\\",
        "/",
        "\u{1}",
        "\u{8}",
        "x-api-key",
        "token",
        "tokens",
        "=",
        "bearer",
        "authorization: ",
        "session_id=",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    ];

    fn piece_string() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|p| p.concat())
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            piece_string().prop_map(Value::String),
            any::<i32>().prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((piece_string(), inner.clone()), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
                // A JSON text held in a string (a tool result).
                inner.prop_map(|v| Value::String(v.to_string())),
            ]
        })
    }

    proptest! {
        #[test]
        fn skips_only_what_the_walk_leaves_alone(v in json_value()) {
            let r = Redactor::new(&[
                Secret::env("API_KEY", "canary-env-3f9a1c77"),
                Secret::env("PIN", "4711"),
            ]);
            let text = serde_json::to_string(&v).expect("json");
            let mut walked = v.clone();
            let changed = r.redact_value(&mut walked, &mut Hits::default());
            let out = r.redact_json_text(&text, &mut Hits::default());
            prop_assert_eq!(changed, matches!(out, Cow::Owned(_)));
            let back: Value = serde_json::from_str(&out).expect("still JSON");
            prop_assert_eq!(back, walked);
        }
    }
}

#[test]
fn a_url_user_name_is_a_credential_where_it_stands_and_a_secret_elsewhere_only_when_token_shaped() {
    for user in ["postgres", "admin", "root", "app"] {
        assert!(!fitness_shared::redact::token_shaped(user), "{user}");
        let url = format!("postgresql://{user}@127.0.0.1:55432/library");
        let r = Redactor::with_urls(&[], std::slice::from_ref(&url));
        let (out, hits) = redact(
            &r,
            &format!("/srv/mcp-server-{user} {url} wrote /tmp/{user}-schema-walk2.json"),
        );
        assert_eq!(
            out,
            format!(
                "/srv/mcp-server-{user} postgresql://[redacted:url username]@127.0.0.1:55432/library wrote /tmp/{user}-schema-walk2.json"
            ),
            "the word stays, the credential goes"
        );
        assert!(count(&hits, "url username") >= 1);
        // The `Authorization: Basic` a client derives from it goes too.
        let basic = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{user}:"),
        );
        let (out, _) = redact(&r, &format!("Authorization: Basic {basic}"));
        assert!(!out.contains(&basic), "{out}");
    }
    for user in [
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "q8ZrT2mW9vXk4LpN7sYd3HjF6bGc1RaE",
        "canary-user-3b9aca06q7",
    ] {
        assert!(fitness_shared::redact::token_shaped(user), "{user}");
        let url = format!("https://{user}@github.example/org/repo.git");
        let r = Redactor::with_urls(&[], &[url]);
        let (out, hits) = redact(&r, &format!("the user {user} echoed as {user}/x"));
        assert!(!out.contains(user), "{out}");
        // The record says which rule took it: token-shaped, wherever it stood.
        assert_eq!(count(&hits, "url username token"), 2, "{out}");
    }
}
