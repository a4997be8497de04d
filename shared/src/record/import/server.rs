//! The v1 server identity (target, era, transport, credential context)
//! and its probe findings.

use super::read::{ImportError, field};
use crate::record::model::*;
use crate::record::v1::*;

pub(super) fn convert_server(r: &RecordV1) -> Result<ServerIdentity, ImportError> {
    let id = r.run.id.as_str();
    let s = &r.server;
    let target = match (&s.url, &s.command) {
        (Some(url), _) => ServerTarget::Url { url: url.clone() },
        (None, Some(argv)) => ServerTarget::Command { argv: argv.clone() },
        (None, None) => return Err(field(id, "server has neither url nor command")),
    };
    let era = match s.era.as_str() {
        "legacy" => Era::Legacy,
        "modern" => Era::Modern,
        other => return Err(field(id, format!("unknown era {other:?}"))),
    };
    let transport = match (s.transport_shape.as_str(), &target) {
        ("stdio", _) | (_, ServerTarget::Command { .. }) => TransportShape::Stdio,
        ("sse", _) => TransportShape::HttpSse,
        ("json", _) => TransportShape::HttpJson,
        (other, _) => return Err(field(id, format!("unknown transport shape {other:?}"))),
    };
    let credential_context = parse_credential(&s.credential_context).ok_or_else(|| {
        field(
            id,
            format!("unknown credential context {:?}", s.credential_context),
        )
    })?;
    Ok(ServerIdentity {
        target,
        slug: s.slug.clone(),
        era,
        negotiated_version: s.negotiated_version.clone(),
        transport,
        sessions: if s.sessionful {
            Sessions::Sessionful
        } else {
            Sessions::Sessionless
        },
        credential_context,
        credential: None,
        surface_delta: None,
        server_info: s.server_info.clone(),
        capabilities: s.capabilities.clone(),
        instructions: s.instructions.clone(),
        discover: s.discover.clone(),
    })
}

pub(super) fn parse_credential(s: &str) -> Option<CredentialContext> {
    Some(match s {
        "anonymous" => CredentialContext::Anonymous,
        "free-key" => CredentialContext::FreeKey,
        "owner-key" => CredentialContext::OwnerKey,
        _ => return None,
    })
}

pub(super) fn convert_probe(p: &ProbeFindingV1) -> Probe {
    let status = match p.pass {
        Some(true) => ProbeStatus::Pass,
        Some(false) => ProbeStatus::Fail,
        None => ProbeStatus::Unknown {
            reason: if p.detail.is_empty() {
                "not applicable to this connection".to_owned()
            } else {
                p.detail.clone()
            },
        },
    };
    Probe {
        id: p.id.clone(),
        status,
        detail: p.detail.clone(),
        // v1 recorded the probe's observations, not the frames' corr_ids.
        evidence: Vec::new(),
        observed: p.evidence.clone(),
    }
}
