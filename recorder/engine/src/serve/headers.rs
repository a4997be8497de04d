//! Response header rules for a published site, in the `_headers` file format
//! that static hosts read (Netlify, Cloudflare Pages): a path pattern on its
//! own line, then indented `Name: value` lines.
//!
//! `fitness publish` writes the rules into `SITE/_headers`; `fitness serve`
//! reads that same file back and applies it, so a local preview sends exactly
//! the headers a static host would.

use std::fmt::Write as _;

/// One path pattern and the headers every matching response gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// A URL path; `*` matches any run of characters (including `/`).
    pub pattern: String,
    pub headers: Vec<(String, String)>,
}

/// An ordered list of rules. Every matching rule applies; a later rule's
/// value for a header replaces an earlier one's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderRules {
    pub rules: Vec<Rule>,
}

/// A `_headers` file that could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HeadersError {
    #[error("line {line}: a header line comes before any path pattern")]
    HeaderBeforePattern { line: usize },
    #[error("line {line}: expected `Name: value`, found {text:?}")]
    Malformed { line: usize, text: String },
    #[error("line {line}: a path pattern must start with `/`, found {text:?}")]
    BadPattern { line: usize, text: String },
}

/// The Content-Security-Policy for viewer pages. `script_hashes` are the
/// `sha256-…` sources of the inline bootstrap scripts Trunk writes into
/// `index.html`, so no `unsafe-inline` is ever needed for scripts.
pub fn content_security_policy(script_hashes: &[String]) -> String {
    let mut script_src = String::from("'self' 'wasm-unsafe-eval'");
    for hash in script_hashes {
        let _ = write!(script_src, " '{hash}'");
    }
    // connect-src allows other origins because a replay may load any
    // mcp-tape file by URL (`?trace=`); frame-ancestors allows embedding.
    format!(
        "default-src 'self'; script-src {script_src}; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; connect-src 'self' https: http:; font-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors *"
    )
}

impl HeaderRules {
    /// The rules every published site gets.
    pub fn for_site(csp: &str) -> Self {
        let immutable = "public, max-age=31536000, immutable";
        let rule = |pattern: &str, headers: &[(&str, &str)]| Rule {
            pattern: pattern.to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        };
        HeaderRules {
            rules: vec![
                rule(
                    "/*",
                    &[
                        ("Content-Security-Policy", csp),
                        ("X-Content-Type-Options", "nosniff"),
                        ("Referrer-Policy", "no-referrer"),
                    ],
                ),
                rule(
                    "/data/*",
                    &[
                        ("Access-Control-Allow-Origin", "*"),
                        ("Cache-Control", "public, max-age=60, must-revalidate"),
                    ],
                ),
                rule(
                    "/runs/*",
                    &[
                        ("Access-Control-Allow-Origin", "*"),
                        ("Cache-Control", "public, max-age=300"),
                    ],
                ),
                rule(
                    "/runs/*.jsonl",
                    &[
                        ("Content-Type", "application/x-ndjson; charset=utf-8"),
                        ("Cache-Control", immutable),
                    ],
                ),
                rule(
                    "/runs/*.jsonl.gz",
                    &[
                        ("Content-Type", "application/gzip"),
                        ("Cache-Control", immutable),
                    ],
                ),
                // The viewer's own files, so `embed.js` can mount the app
                // on a third party's page (it fetches these cross-origin).
                rule("/", &[("Access-Control-Allow-Origin", "*")]),
                rule("/index.html", &[("Access-Control-Allow-Origin", "*")]),
                rule("/*.js", &[("Access-Control-Allow-Origin", "*")]),
                rule("/*.wasm", &[("Access-Control-Allow-Origin", "*")]),
                rule("/*.css", &[("Access-Control-Allow-Origin", "*")]),
                rule(
                    "/badges/*",
                    &[
                        ("Access-Control-Allow-Origin", "*"),
                        ("Cache-Control", "public, max-age=300"),
                    ],
                ),
            ],
        }
    }

    /// Parse a `_headers` file. Blank lines and `#` comments are ignored.
    pub fn parse(text: &str) -> Result<Self, HeadersError> {
        let mut rules: Vec<Rule> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indented = raw.starts_with([' ', '\t']);
            if !indented {
                if !trimmed.starts_with('/') {
                    return Err(HeadersError::BadPattern {
                        line,
                        text: trimmed.to_owned(),
                    });
                }
                rules.push(Rule {
                    pattern: trimmed.to_owned(),
                    headers: Vec::new(),
                });
                continue;
            }
            let Some(rule) = rules.last_mut() else {
                return Err(HeadersError::HeaderBeforePattern { line });
            };
            let Some((name, value)) = trimmed.split_once(':') else {
                return Err(HeadersError::Malformed {
                    line,
                    text: trimmed.to_owned(),
                });
            };
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(HeadersError::Malformed {
                    line,
                    text: trimmed.to_owned(),
                });
            }
            rule.headers
                .push((name.to_owned(), value.trim().to_owned()));
        }
        Ok(HeaderRules { rules })
    }

    /// Write the rules in `_headers` format.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# Response headers for static hosts; `fitness serve` applies the same file.\n",
        );
        for rule in &self.rules {
            let _ = writeln!(out, "{}", rule.pattern);
            for (name, value) in &rule.headers {
                let _ = writeln!(out, "  {name}: {value}");
            }
        }
        out
    }

    /// The headers a response for `path` gets, later rules overriding earlier
    /// ones header by header (names compared case-insensitively).
    pub fn for_path(&self, path: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for rule in self
            .rules
            .iter()
            .filter(|r| pattern_matches(&r.pattern, path))
        {
            for (name, value) in &rule.headers {
                match out.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                    Some(slot) => slot.1 = value.clone(),
                    None => out.push((name.clone(), value.clone())),
                }
            }
        }
        out
    }
}

/// Glob match where `*` matches any run of characters, `/` included.
fn pattern_matches(pattern: &str, path: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == path;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !path.starts_with(first) || path.len() < first.len() + last.len() || !path.ends_with(last) {
        return false;
    }
    let mut rest = &path[first.len()..path.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_static_hosts() {
        assert!(pattern_matches("/*", "/"));
        assert!(pattern_matches("/runs/*.jsonl", "/runs/a/mcp.jsonl"));
        assert!(!pattern_matches("/runs/*.jsonl", "/runs/a/mcp.jsonl.gz"));
        assert!(pattern_matches("/runs/*.jsonl.gz", "/runs/a/mcp.jsonl.gz"));
        assert!(!pattern_matches("/data/*", "/runs/x"));
        assert!(pattern_matches("/data/board.json", "/data/board.json"));
        assert!(pattern_matches("/a*b*c", "/a-x-b-y-c"));
        assert!(!pattern_matches("/a*b*c", "/a-x-c"));
    }

    #[test]
    fn rendered_rules_parse_back_to_themselves() {
        let rules = HeaderRules::for_site(&content_security_policy(&["sha256-abc".into()]));
        assert_eq!(HeaderRules::parse(&rules.render()), Ok(rules));
    }

    #[test]
    fn tapes_get_cors_immutable_cache_and_ndjson_type() {
        let rules = HeaderRules::for_site("default-src 'self'");
        let got = rules.for_path("/runs/r1/mcp.jsonl");
        let get = |n: &str| got.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("Access-Control-Allow-Origin"), Some("*"));
        assert_eq!(
            get("Cache-Control"),
            Some("public, max-age=31536000, immutable")
        );
        assert_eq!(
            get("Content-Type"),
            Some("application/x-ndjson; charset=utf-8")
        );
        assert_eq!(get("Content-Security-Policy"), Some("default-src 'self'"));
    }

    #[test]
    fn the_viewer_files_can_be_fetched_by_an_embedding_page() {
        let rules = HeaderRules::for_site("default-src 'self'");
        for path in [
            "/",
            "/index.html",
            "/embed.js",
            "/fitness-viewer-1a2b.js",
            "/fitness-viewer-1a2b_bg.wasm",
        ] {
            let headers = rules.for_path(path);
            assert!(
                headers
                    .iter()
                    .any(|(k, v)| k == "Access-Control-Allow-Origin" && v == "*"),
                "{path}: {headers:?}"
            );
        }
    }

    #[test]
    fn malformed_files_are_refused_with_the_line() {
        assert_eq!(
            HeaderRules::parse("  X: y\n"),
            Err(HeadersError::HeaderBeforePattern { line: 1 })
        );
        assert_eq!(
            HeaderRules::parse("/a\n  no colon here\n"),
            Err(HeadersError::Malformed {
                line: 2,
                text: "no colon here".into()
            })
        );
        assert!(matches!(
            HeaderRules::parse("runs/*\n"),
            Err(HeadersError::BadPattern { .. })
        ));
    }
}
