//! A run's trace context, kept and exported: each trial's trace id for the
//! record (`RunRecord.traces`), and with `--otlp URL` every call's span
//! sent to an OpenTelemetry collector over OTLP/HTTP (protobuf), through
//! the `opentelemetry-otlp` exporter. Each trial is one trace; each call a
//! span of it, named `tools/call <tool>`, with the run and the trial as
//! attributes.

use std::borrow::Cow;
use std::time::Duration;

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanExporter as _, SpanLinks};

use crate::mcp::trace::CallSpan;

/// How long an export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// A call's span as OpenTelemetry's SDK carries it.
fn span_data(span: &CallSpan, run_id: &str) -> Option<SpanData> {
    let trace_id = TraceId::from_hex(&span.trace_id).ok()?;
    let span_id = SpanId::from_hex(&span.span_id).ok()?;
    Some(SpanData {
        span_context: SpanContext::new(
            trace_id,
            span_id,
            TraceFlags::SAMPLED,
            false,
            TraceState::NONE,
        ),
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Client,
        name: Cow::Owned(span.name.clone()),
        start_time: span.start,
        end_time: span.end,
        attributes: vec![
            KeyValue::new("fitness.run_id", run_id.to_owned()),
            KeyValue::new("fitness.corr_id", span.corr_id.clone()),
        ],
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: if span.ok {
            Status::Ok
        } else {
            Status::error("the call failed")
        },
        instrumentation_scope: InstrumentationScope::builder("fitness")
            .with_version(fitness_shared::VERSION)
            .build(),
    })
}

/// Send `spans` to the collector at `url` (its `/v1/traces` endpoint):
/// how many were sent, or why none were.
pub async fn export(spans: &[CallSpan], run_id: &str, url: &str) -> anyhow::Result<usize> {
    let client = crate::http::http_client_builder()?
        .build()
        .map_err(|e| anyhow::anyhow!("failed to build the OTLP client: {e}"))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_endpoint(url)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| anyhow::anyhow!("failed to build the OTLP exporter for {url}: {e}"))?;
    let batch: Vec<SpanData> = spans.iter().filter_map(|s| span_data(s, run_id)).collect();
    let n = batch.len();
    if n == 0 {
        return Ok(0);
    }
    exporter
        .export(batch)
        .await
        .map_err(|e| anyhow::anyhow!("the OTLP export to {url} failed: {e}"))?;
    Ok(n)
}

impl super::run::Run<'_> {
    /// Keep each trial's trace id for the record and, with `--otlp`, send
    /// every span to the collector; a failed export is a note, never the
    /// record's end.
    pub(super) async fn export_traces(&mut self) {
        let traces = self.tracer.traces();
        if traces.is_empty() {
            return;
        }
        if let Some(url) = self.cfg.settings.otlp.clone() {
            let spans = self.tracer.spans();
            match export(&spans, &self.id, &url).await {
                Ok(n) => self.own_notes.push(format!(
                    "Traces: {n} span(s) of {} trace(s), one a trial, exported over OTLP/HTTP to {url}.",
                    traces.len()
                )),
                Err(e) => self
                    .own_notes
                    .push(format!("Traces: the OTLP export failed: {e:#}")),
            }
        }
        self.traces = Some(traces);
    }
}
