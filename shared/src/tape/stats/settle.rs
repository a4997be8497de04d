//! Settling the facts: pairs, tools, models, errors, as the reference does.

use std::collections::HashMap;

use super::block::{
    CACHE_READ_MULTIPLIER, CACHE_WRITE_MULTIPLIER, CostStats, ErrorSource, ErrorStats, JsNum,
    ModelStats, ModelSummary, ModelsBlock, Origin, Price, ToolStats, resolve_price,
};
use super::facts::{Request, Response, RpcError, TurnFacts};
use crate::stats::percentile_nearest_rank_as_reference as percentile;
use crate::tape::js;
use crate::tape::pairing::Paired;

// ---------------------------------------------------------------------------
// Settling: pairs, tools, models, errors
// ---------------------------------------------------------------------------

pub(super) struct Pair {
    /// The response's id as text, for mcp pairs (error de-duplication).
    pub(super) mcp_id: Option<String>,
    pub(super) tool: String,
    pub(super) t: Option<String>,
    pub(super) latency_ms: Option<f64>,
    pub(super) error: Option<String>,
    pub(super) pending: bool,
    pub(super) origin: Origin,
}

pub(super) fn mcp_pairs(
    mut requests: Vec<Request>,
    paired: &Paired,
    responses: &[Response],
) -> Vec<Pair> {
    let mut rows = Vec::new();
    // In response order; a response to something other than a pending
    // tools/call answers nothing.
    for (response, answers) in responses.iter().zip(&paired.responses) {
        let Some(request) = answers.and_then(|q| requests.get_mut(q)) else {
            continue;
        };
        let latency_ms = js::ms_between(request.t.as_deref(), response.t.as_deref());
        rows.push(Pair {
            mcp_id: Some(response.id.clone()),
            tool: std::mem::take(&mut request.tool),
            t: request.t.take(),
            latency_ms,
            error: response
                .protocol_error
                .clone()
                .or_else(|| response.execution_error.clone()),
            pending: false,
            origin: Origin::Mcp,
        });
    }
    // Requests with no response: real calls of unknown latency, never dropped.
    for q in paired.unanswered() {
        let request = &mut requests[q];
        rows.push(Pair {
            mcp_id: None,
            tool: std::mem::take(&mut request.tool),
            t: request.t.take(),
            latency_ms: None,
            error: None,
            pending: true,
            origin: Origin::Mcp,
        });
    }
    rows
}

/// Pair `tool_use` blocks with later `tool_result` blocks; echoed turns are
/// left out, since they repeat their `tool_use` blocks verbatim.
pub(super) fn turn_pairs(turns: &[TurnFacts]) -> Vec<Pair> {
    let mut rows: Vec<Pair> = Vec::new();
    let mut open: HashMap<&str, usize> = HashMap::new();
    for turn in turns.iter().filter(|t| !t.echoed) {
        // A turn's results answer earlier turns' calls, never its own.
        for result in &turn.results {
            let Some(i) = open.remove(result.key.as_str()) else {
                continue;
            };
            if let Some(row) = rows.get_mut(i) {
                row.latency_ms = js::ms_between(row.t.as_deref(), turn.t.as_deref());
                row.error = result.error.clone();
                row.pending = false;
            }
        }
        for tool_use in &turn.uses {
            open.insert(tool_use.key.as_str(), rows.len());
            rows.push(Pair {
                mcp_id: None,
                tool: tool_use.tool.clone(),
                t: turn.t.clone(),
                latency_ms: None,
                error: None,
                pending: true,
                origin: Origin::Turn,
            });
        }
    }
    rows
}

pub(super) fn build_tool_stats(pairs: &[Pair]) -> Vec<ToolStats> {
    struct Slot<'a> {
        name: &'a str,
        calls: u64,
        errors: u64,
        pending: u64,
        latencies: Vec<f64>,
        mcp: bool,
        turn: bool,
    }
    let mut slots: Vec<Slot<'_>> = Vec::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for pair in pairs {
        let i = *by_name.entry(pair.tool.as_str()).or_insert_with(|| {
            slots.push(Slot {
                name: &pair.tool,
                calls: 0,
                errors: 0,
                pending: 0,
                latencies: Vec::new(),
                mcp: false,
                turn: false,
            });
            slots.len() - 1
        });
        let slot = &mut slots[i];
        slot.calls += 1;
        slot.errors += u64::from(pair.error.is_some());
        slot.pending += u64::from(pair.pending);
        slot.latencies.extend(pair.latency_ms);
        match pair.origin {
            Origin::Mcp => slot.mcp = true,
            _ => slot.turn = true,
        }
    }
    let mut out: Vec<ToolStats> = slots
        .into_iter()
        .map(|s| ToolStats {
            name: s.name.to_owned(),
            calls: s.calls,
            errors: s.errors,
            // Percentiles cover the calls that were timed, none if none were.
            p50_ms: percentile(&s.latencies, 50.0).map(JsNum),
            p95_ms: percentile(&s.latencies, 95.0).map(JsNum),
            origin: match (s.mcp, s.turn) {
                (true, true) => Origin::Mixed,
                (false, true) => Origin::Turn,
                _ => Origin::Mcp,
            },
            pending: s.pending,
        })
        .collect();
    out.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| js::locale_compare(&a.name, &b.name))
    });
    out
}

#[derive(Default)]
pub(super) struct ModelSlot {
    pub(super) calls: u64,
    pub(super) input: f64,
    pub(super) output: f64,
    pub(super) cache_read: f64,
    pub(super) cache_creation: f64,
    pub(super) usage_turns: u64,
    pub(super) cache_reported_turns: u64,
    pub(super) cache_read_turns: u64,
    pub(super) cache_creation_turns: u64,
    pub(super) thinking_exact: f64,
    pub(super) thinking_estimated: f64,
    pub(super) ttfts: Vec<f64>,
}

pub(super) fn hit_rate(
    cache_read: f64,
    input: f64,
    cache_creation: f64,
    reported: bool,
) -> Option<f64> {
    if !reported {
        return None;
    }
    let denom = input + cache_read + cache_creation;
    (denom > 0.0).then(|| cache_read / denom)
}

pub(super) fn estimate_cost(usage: [Option<f64>; 4], price: &Price) -> Option<f64> {
    let [input, output, cache_read, cache_write] = usage.map(|v| v.unwrap_or(0.0));
    if input == 0.0 && output == 0.0 && cache_read == 0.0 && cache_write == 0.0 {
        return None;
    }
    // Same operations in the same order as the reference, so the same double.
    let usd = (input / 1e6) * price.input_per_mtok
        + (cache_read / 1e6) * price.input_per_mtok * CACHE_READ_MULTIPLIER
        + (cache_write / 1e6) * price.input_per_mtok * CACHE_WRITE_MULTIPLIER
        + (output / 1e6) * price.output_per_mtok;
    usd.is_finite().then_some(usd)
}

/// The model block of the stats: per model, in sum, and the estimated cost.
pub(super) fn build_models(
    turns: &[TurnFacts],
    prices: &[Price],
    source: &str,
) -> Option<ModelsBlock> {
    let tally = tally_models(turns);
    if tally.assistant_turns == 0 {
        return None;
    }
    let Priced {
        mut per_model,
        mut unpriced,
        total_usd,
        any_priced,
    } = price_models(&tally.slots, prices);
    per_model.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| js::locale_compare(&a.model, &b.model))
    });
    let summary = model_summary(&tally, turns.len() as u64, per_model.len() as u64);
    unpriced.sort_by(|a, b| js::locale_compare(a, b));
    let cost = cost_stats(prices, source, unpriced, total_usd, any_priced);
    Some(ModelsBlock {
        per_model,
        summary,
        cost,
    })
}

/// The assistant turns counted: a slot per model in first-seen order, the
/// echoed turns apart, and the model time.
#[derive(Default)]
struct Tally {
    slots: Vec<(String, ModelSlot)>,
    assistant_turns: u64,
    echoed_turns: u64,
    total_duration: f64,
    saw_duration: bool,
}

fn tally_models(turns: &[TurnFacts]) -> Tally {
    let mut tally = Tally::default();
    let mut by_model: HashMap<String, usize> = HashMap::new();
    for turn in turns.iter().filter(|t| t.assistant) {
        if turn.echoed {
            tally.echoed_turns += 1;
            continue;
        }
        tally.assistant_turns += 1;
        let name = turn.model.as_deref().unwrap_or("(no model)");
        let i = match by_model.get(name) {
            Some(&i) => i,
            None => {
                by_model.insert(name.to_owned(), tally.slots.len());
                tally.slots.push((name.to_owned(), ModelSlot::default()));
                tally.slots.len() - 1
            }
        };
        let slot = &mut tally.slots[i].1;
        slot.calls += 1;
        if let Some([input, output, read, creation]) = turn.usage {
            slot.usage_turns += 1;
            slot.input += input.unwrap_or(0.0);
            slot.output += output.unwrap_or(0.0);
            if read.is_some() || creation.is_some() {
                slot.cache_reported_turns += 1;
                slot.cache_read_turns += u64::from(read.is_some());
                slot.cache_creation_turns += u64::from(creation.is_some());
                slot.cache_read += read.unwrap_or(0.0);
                slot.cache_creation += creation.unwrap_or(0.0);
            }
        }
        match turn.thinking {
            Some((tokens, true)) => slot.thinking_estimated += tokens,
            Some((tokens, false)) => slot.thinking_exact += tokens,
            None => {}
        }
        slot.ttfts.extend(turn.ttft_ms);
        if let Some(d) = turn.duration_ms {
            tally.total_duration += d;
            tally.saw_duration = true;
        }
    }
    tally
}

/// Each model's stats with its estimated cost, in slot order; the models
/// with usage but no price; the priced total and whether any was priced.
struct Priced {
    per_model: Vec<ModelStats>,
    unpriced: Vec<String>,
    total_usd: f64,
    any_priced: bool,
}

fn price_models(slots: &[(String, ModelSlot)], prices: &[Price]) -> Priced {
    let mut unpriced: Vec<String> = Vec::new();
    let mut total_usd = 0.0f64;
    let mut any_priced = false;
    let mut per_model = Vec::with_capacity(slots.len());
    for (model, s) in slots {
        let price = resolve_price(model, prices);
        let has_usage = s.usage_turns > 0;
        let agg = [
            has_usage.then_some(s.input),
            has_usage.then_some(s.output),
            (s.cache_read_turns > 0).then_some(s.cache_read),
            (s.cache_creation_turns > 0).then_some(s.cache_creation),
        ];
        let cost = price
            .filter(|_| has_usage)
            .and_then(|p| estimate_cost(agg, p));
        match (price, cost) {
            (None, _) if has_usage => unpriced.push(model.clone()),
            (Some(_), Some(c)) => {
                any_priced = true;
                total_usd += c;
            }
            _ => {}
        }
        let thinking_total = s.thinking_exact + s.thinking_estimated;
        per_model.push(ModelStats {
            model: model.clone(),
            calls: s.calls,
            input_tokens: agg[0].map(JsNum),
            output_tokens: agg[1].map(JsNum),
            cache_read_tokens: agg[2].map(JsNum),
            cache_creation_tokens: agg[3].map(JsNum),
            thinking_tokens: (thinking_total > 0.0).then_some(JsNum(thinking_total)),
            thinking_estimated: s.thinking_estimated > 0.0,
            cache_hit_rate: hit_rate(
                s.cache_read,
                s.input,
                s.cache_creation,
                s.cache_reported_turns > 0,
            )
            .map(JsNum),
            ttft_p50_ms: percentile(&s.ttfts, 50.0).map(JsNum),
            ttft_p95_ms: percentile(&s.ttfts, 95.0).map(JsNum),
            est_cost_usd: cost.map(JsNum),
            priced: price.is_some(),
        });
    }
    Priced {
        per_model,
        unpriced,
        total_usd,
        any_priced,
    }
}

/// The totals over every model (sums in slot order, as the reference).
fn model_summary(tally: &Tally, turns: u64, models: u64) -> ModelSummary {
    let sum = |f: fn(&ModelSlot) -> f64| {
        tally
            .slots
            .iter()
            .map(|(_, s)| f(s))
            .fold(0.0, |a, b| a + b)
    };
    let any = |f: fn(&ModelSlot) -> bool| tally.slots.iter().any(|(_, s)| f(s));
    let (input, output) = (sum(|s| s.input), sum(|s| s.output));
    let (cache_read, cache_creation) = (sum(|s| s.cache_read), sum(|s| s.cache_creation));
    let (thinking_exact, thinking_estimated) =
        (sum(|s| s.thinking_exact), sum(|s| s.thinking_estimated));
    let any_usage = any(|s| s.usage_turns > 0);
    ModelSummary {
        models,
        assistant_turns: tally.assistant_turns,
        turns,
        echoed_turns: tally.echoed_turns,
        input_tokens: any_usage.then_some(JsNum(input)),
        output_tokens: any_usage.then_some(JsNum(output)),
        cache_read_tokens: any(|s| s.cache_read_turns > 0).then_some(JsNum(cache_read)),
        cache_creation_tokens: any(|s| s.cache_creation_turns > 0).then_some(JsNum(cache_creation)),
        thinking_exact_tokens: (thinking_exact > 0.0).then_some(JsNum(thinking_exact)),
        thinking_estimated_tokens: (thinking_estimated > 0.0).then_some(JsNum(thinking_estimated)),
        cache_hit_rate: hit_rate(
            cache_read,
            input,
            cache_creation,
            any(|s| s.cache_reported_turns > 0),
        )
        .map(JsNum),
        total_model_time_ms: tally.saw_duration.then_some(JsNum(tally.total_duration)),
    }
}

/// The cost block: the priced total (none when no model was priced),
/// partial when some model was not, and the newest price date.
fn cost_stats(
    prices: &[Price],
    source: &str,
    unpriced: Vec<String>,
    total_usd: f64,
    any_priced: bool,
) -> CostStats {
    let as_of = prices
        .iter()
        .map(|p| p.as_of)
        .fold(None::<&str>, |newest, d| match newest {
            Some(n) if n >= d => Some(n),
            _ => Some(d),
        });
    CostStats {
        estimated: true,
        currency: "USD".to_owned(),
        // No priced model: no figure, not $0.00. An absent rate is not free.
        total_usd: any_priced.then_some(JsNum(total_usd)),
        partial: !unpriced.is_empty() && any_priced,
        unpriced_models: unpriced,
        as_of: as_of.map(str::to_owned),
        source: source.to_owned(),
    }
}

pub(super) fn build_errors(
    pairs: &[Pair],
    rpc_errors: &[RpcError],
    method_by_id: &HashMap<String, String>,
    llm_errors: Vec<ErrorStats>,
) -> Vec<ErrorStats> {
    let mut out = Vec::new();
    // 1. Failed tool calls.
    let mut tool_error_ids: std::collections::HashSet<&str> = Default::default();
    for pair in pairs {
        let Some(error) = &pair.error else { continue };
        if let Some(id) = &pair.mcp_id {
            tool_error_ids.insert(id);
        }
        out.push(ErrorStats {
            t: pair.t.clone(),
            source: ErrorSource::Tool,
            name: pair.tool.clone(),
            message: error.clone(),
        });
    }
    // 2. JSON-RPC errors that are not tools/call answers already listed.
    for e in rpc_errors {
        if e.id
            .as_deref()
            .is_some_and(|id| tool_error_ids.contains(id))
        {
            continue;
        }
        let name = match &e.id {
            Some(id) => method_by_id
                .get(id)
                .cloned()
                .unwrap_or_else(|| format!("id {id}")),
            None => "(notification)".to_owned(),
        };
        out.push(ErrorStats {
            t: e.t.clone(),
            source: ErrorSource::Jsonrpc,
            name,
            message: e.message.clone(),
        });
    }
    // 3. llm.error events.
    out.extend(llm_errors);
    out.sort_by(|a, b| {
        js::locale_compare(a.t.as_deref().unwrap_or(""), b.t.as_deref().unwrap_or(""))
    });
    out
}
