//! The surface delta: what a credential changes. A run under a credential
//! also lists the tools with none (zero tokens, on the wire tape), and the
//! record keeps the difference, so a reader sees why two rows of one
//! server are different measurements.

use std::collections::BTreeMap;
use std::time::Duration;

use fitness_shared::record::SurfaceDelta;
use rmcp::model::Tool;

use super::connect::{Challenged, HttpTarget, Session, Target};
use super::tap::Tap;
use super::unreachable::Unreachable;

/// The target with no credential at all: an HTTP target without its
/// headers and bearer token; `None` for a stdio server (a credential there
/// is the child's environment, which is not a surface) and for a target
/// that carries none.
pub fn anonymous(target: &Target) -> Option<Target> {
    let Target::Http(h) = target else {
        return None;
    };
    if h.bearer.is_none() && h.headers.is_empty() {
        return None;
    }
    Some(Target::Http(HttpTarget {
        url: h.url.clone(),
        headers: Vec::new(),
        bearer: None,
        login: false,
    }))
}

/// List the tools with no credential and compare them with `with`, the
/// listing under the credential. `None` where [`anonymous`] is.
pub async fn delta(
    target: &Target,
    with: &[Tool],
    tap: Tap,
    timeout: Duration,
) -> Option<SurfaceDelta> {
    let anon = anonymous(target)?;
    let listed =
        match Session::connect(&anon, tap, Some("surface::anonymous".into()), timeout).await {
            Ok(session) => {
                let listed = session.list_tools().await;
                session.close().await;
                listed
            }
            Err(e) => Err(e),
        };
    Some(match listed {
        Ok(without) => compare(with, &without),
        Err(e) => refused(&e),
    })
}

fn refused(e: &anyhow::Error) -> SurfaceDelta {
    let status = e
        .downcast_ref::<Unreachable>()
        .and_then(|u| u.refused)
        .or_else(|| e.downcast_ref::<Challenged>().map(|c| c.status));
    SurfaceDelta {
        refused_anonymously: status,
        only_with_credential: Vec::new(),
        only_anonymous: Vec::new(),
        changed_schema: Vec::new(),
        error: status
            .is_none()
            .then(|| crate::secrets::redact(&format!("{e:#}"))),
    }
}

/// The difference between two listings, by tool name, each list sorted.
pub fn compare(with: &[Tool], without: &[Tool]) -> SurfaceDelta {
    let with: BTreeMap<&str, &Tool> = with.iter().map(|t| (t.name.as_ref(), t)).collect();
    let without: BTreeMap<&str, &Tool> = without.iter().map(|t| (t.name.as_ref(), t)).collect();
    SurfaceDelta {
        refused_anonymously: None,
        only_with_credential: with
            .keys()
            .filter(|n| !without.contains_key(*n))
            .map(|n| (*n).to_owned())
            .collect(),
        only_anonymous: without
            .keys()
            .filter(|n| !with.contains_key(*n))
            .map(|n| (*n).to_owned())
            .collect(),
        changed_schema: with
            .iter()
            .filter(|(n, t)| {
                without
                    .get(*n)
                    .is_some_and(|a| a.input_schema != t.input_schema)
            })
            .map(|(n, _)| (*n).to_owned())
            .collect(),
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tool(name: &str, schema: serde_json::Value) -> Tool {
        Tool::new(
            name.to_owned(),
            "",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )
    }

    #[test]
    fn the_delta_names_every_difference_by_tool() {
        let with = [
            tool("read", serde_json::json!({"type": "object"})),
            tool("admin", serde_json::json!({"type": "object"})),
            tool(
                "search",
                serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}, "private": {"type": "boolean"}}}),
            ),
        ];
        let without = [
            tool("read", serde_json::json!({"type": "object"})),
            tool(
                "search",
                serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            ),
            tool("signup", serde_json::json!({"type": "object"})),
        ];
        let d = compare(&with, &without);
        assert_eq!(d.only_with_credential, ["admin"]);
        assert_eq!(d.only_anonymous, ["signup"]);
        assert_eq!(d.changed_schema, ["search"]);
        assert_eq!(
            d.text(),
            "Only with the credential: admin; only without it: signup; a different input schema: search."
        );
        assert!(
            anonymous(&Target::Http(HttpTarget {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: vec![],
                bearer: None,
                login: false,
            }))
            .is_none()
        );
    }
}
