//! A streamed OpenAI Chat Completions reply (`stream: true`), put back
//! together: the SSE `data:` events' deltas folded into the body one
//! unstreamed call returns, so the reply parser is the same either way.
//!
//! Each event is a `chat.completion.chunk`: `choices[0].delta` carries a
//! piece of `content` and pieces of `tool_calls` (by `index`: the id, the
//! name and fragments of the argument string), `finish_reason` comes last,
//! and with `stream_options.include_usage` a final chunk carries `usage`.
//! `data: [DONE]` ends the stream.

use serde_json::{Map, Value, json};

/// Folds chunks as they arrive; [`Assembly::body`] is the reply.
#[derive(Debug, Default)]
pub struct Assembly {
    /// Bytes of an event not yet ended by a blank line.
    pending: Vec<u8>,
    content: String,
    reasoning: String,
    /// Tool calls by index: (id, name, arguments).
    calls: Vec<(String, String, String)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    model: Option<String>,
    /// A chunk carried an `error` object (some servers stream errors).
    pub error: Option<Value>,
    /// `data: [DONE]` arrived.
    pub done: bool,
    /// Some delta (text or a tool call) arrived: the first token.
    pub started: bool,
    /// Content length at the last check for a reply that repeats itself.
    checked: usize,
}

/// The finish reason of a reply the harness cut short because it repeated
/// itself ([`repeating`]); read back as `StopReason::Runaway`.
pub const RUNAWAY_FINISH: &str = "fitness_runaway";

/// The longest unit of repetition looked for, in bytes.
const MAX_PERIOD: usize = 256;
/// The fewest bytes of exact repetition that end a reply.
const MIN_SPAN: usize = 240;

/// Does `text` end in a run of one unit repeated (`fs2fs2fs2…`, or one
/// sentence over and over): at least [`MIN_SPAN`] bytes and four units of
/// exact repetition? Why, in words, when it does.
pub fn repeating(text: &str) -> Option<String> {
    let b = text.as_bytes();
    (1..=MAX_PERIOD).find_map(|p| {
        let span = (4 * p).max(MIN_SPAN);
        let tail = b.get(b.len().checked_sub(span)?..)?;
        tail[p..].iter().zip(tail).all(|(x, y)| x == y).then(|| {
            let unit = String::from_utf8_lossy(&tail[span - p..]);
            let unit: String = unit.chars().take(60).collect();
            format!("the reply repeated {unit:?} ({p} bytes) over its last {span} bytes or more")
        })
    })
}

/// Bytes one unfinished event may hold before it is refused.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

impl Assembly {
    /// Feed bytes as they come off the wire. Errors when one event grows
    /// past [`MAX_EVENT_BYTES`] without ending.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end.1).collect();
            self.event(&event[..end.0]);
        }
        if self.pending.len() > MAX_EVENT_BYTES {
            return Err(format!(
                "a streamed event passed {MAX_EVENT_BYTES} bytes without ending"
            ));
        }
        Ok(())
    }

    fn event(&mut self, event: &[u8]) {
        let text = String::from_utf8_lossy(event);
        let mut data = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
        let data = data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            return;
        };
        self.chunk(&chunk);
    }

    fn chunk(&mut self, chunk: &Value) {
        if let Some(e) = chunk.get("error") {
            self.error = Some(e.clone());
        }
        if let Some(m) = chunk.get("model").and_then(Value::as_str) {
            self.model = Some(m.to_owned());
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return;
        };
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(r.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            self.started |= !t.is_empty();
            self.content.push_str(t);
            // A reply that repeats itself is cut here: every token after
            // this would be paid for and read for nothing.
            if self.content.len() >= self.checked + 64 {
                self.checked = self.content.len();
                if repeating(&self.content).is_some() {
                    self.finish_reason = Some(RUNAWAY_FINISH.to_owned());
                    self.done = true;
                }
            }
        }
        if let Some(t) = delta.get("reasoning_content").and_then(Value::as_str) {
            self.started |= !t.is_empty();
            self.reasoning.push_str(t);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.started = true;
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .map_or(self.calls.len().saturating_sub(1), |i| i as usize)
                .min(1_000);
            while self.calls.len() <= index {
                self.calls.push(Default::default());
            }
            let slot = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                slot.0 = id.to_owned();
            }
            if let Some(f) = call.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    slot.1.push_str(n);
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    slot.2.push_str(a);
                }
            }
        }
    }

    /// A choice carried its `finish_reason`: the reply is complete even if
    /// `[DONE]` never came.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The reply as an unstreamed call would have returned it.
    pub fn body(&self) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert(
            "content".into(),
            if self.content.is_empty() && !self.calls.is_empty() {
                Value::Null
            } else {
                json!(self.content)
            },
        );
        if !self.reasoning.is_empty() {
            message.insert("reasoning_content".into(), json!(self.reasoning));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .map(|(id, name, arguments)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        let mut body = Map::new();
        body.insert(
            "choices".into(),
            json!([{"index": 0, "message": message, "finish_reason": self.finish_reason}]),
        );
        if let Some(m) = &self.model {
            body.insert("model".into(), json!(m));
        }
        if let Some(u) = &self.usage {
            body.insert("usage".into(), u.clone());
        }
        Value::Object(body)
    }
}

/// Where the first event in `buf` ends: (end of its text, end of its
/// separator). Events end at a blank line (`\n\n` or `\r\n\r\n`).
fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf.windows(2).position(|w| w == b"\n\n");
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n");
    match (lf, crlf) {
        (Some(a), Some(b)) if b < a => Some((b, b + 4)),
        (Some(a), _) => Some((a, a + 2)),
        (None, Some(b)) => Some((b, b + 4)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_fold_into_the_unstreamed_body_whatever_the_chunking() {
        let stream = concat!(
            "data: {\"model\":\"-\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"It is \"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"arguments\":\"{\\\"tz\\\":\"}}]}}]}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Asia/Tokyo\\\"}\"}}]}}]}\n\n",
            ": a comment line\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7}}\n\n",
            "data: [DONE]\n\n",
        );
        for size in [1, 3, 17, stream.len()] {
            let mut a = Assembly::default();
            for piece in stream.as_bytes().chunks(size) {
                a.feed(piece).expect("bounded");
            }
            assert!(a.done && a.started);
            let body = a.body();
            let m = &body["choices"][0]["message"];
            assert_eq!(m["content"], "It is ");
            assert_eq!(m["tool_calls"][0]["id"], "c1");
            assert_eq!(m["tool_calls"][0]["function"]["name"], "get_time");
            assert_eq!(
                m["tool_calls"][0]["function"]["arguments"],
                "{\"tz\":\"Asia/Tokyo\"}"
            );
            assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
            assert_eq!(body["usage"]["prompt_tokens"], 12);
            assert_eq!(body["model"], "-");
        }
    }

    #[test]
    fn a_reply_that_repeats_itself_is_cut_and_a_sound_one_is_not() {
        let chunk = |t: &str| {
            format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": t}}]})
            )
        };
        let mut a = Assembly::default();
        a.feed(chunk("The answer is ").as_bytes()).expect("bounded");
        let mut fed = 0;
        while !a.done && fed < 10_000 {
            a.feed(chunk("fs2").as_bytes()).expect("bounded");
            fed += 1;
        }
        assert!(a.done, "cut");
        assert!(fed < 200, "cut early: after {fed} pieces");
        assert_eq!(a.body()["choices"][0]["finish_reason"], RUNAWAY_FINISH);
        let sentence = "I will list the directory to find the file. ";
        assert!(repeating(&sentence.repeat(8)).is_some());
        assert!(repeating(&sentence.repeat(3)).is_none());
        let prose = "Paris is the capital of France; its population is about two million, \
and the city sits on the Seine. The Louvre, the Eiffel Tower and Notre-Dame draw visitors \
from everywhere, and the metro carries millions of riders on sixteen lines every day.";
        assert!(repeating(prose).is_none());
        assert!(repeating("{\"a\": 1}").is_none());
    }

    #[test]
    fn an_endless_event_is_refused() {
        let mut a = Assembly::default();
        let big = vec![b'x'; MAX_EVENT_BYTES + 1];
        assert!(a.feed(b"data: ").is_ok());
        assert!(a.feed(&big).is_err());
    }
}
