//! The one typed reading of a tape line: a lenient, borrowing view of the
//! fields any reader needs (the statistics, the replay's timeline, the
//! recorder's findings), [`LineView`]. Lines are cut from a file by
//! [`super::TapeReader`] (or, in the browser, as they stream in) and each is
//! read with [`LineView::read`].
//!
//! The reference reads fields with JavaScript's loose rules (`typeof x ===
//! 'string'`, `Array.isArray`, `=== true`), so a field of the wrong type is
//! "absent", never an error. These wrappers give serde the same rules, and the
//! view skips every payload it does not need without building a value tree.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the non-matching visits of a lenient visitor as "absent".
macro_rules! absent_otherwise {
    ($($skip:ident),*) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> { Ok(Default::default()) }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> { Ok(Default::default()) }
        $(absent_otherwise!(@ $skip);)*
    };
    (@ str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> { Ok(Default::default()) }
    };
    (@ seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            drain_seq(seq)?;
            Ok(Default::default())
        }
    };
    (@ map) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            drain_map(map)?;
            Ok(Default::default())
        }
    };
}

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }
    absent_otherwise!(seq, map);
}

/// Reads a string; any other JSON value reads as absent.
pub fn loose_str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    d.deserialize_any(StrVisitor)
}

/// `typeof x === 'string'`: the string, whatever its length.
#[derive(Default)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        loose_str(d).map(Str)
    }
}

impl Str<'_> {
    /// The reference's `str()`: a non-empty string, else absent.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref().filter(|s| !s.is_empty())
    }
    /// `x === value`.
    pub fn is(&self, value: &str) -> bool {
        self.0.as_deref() == Some(value)
    }
}

/// `typeof x === 'string' ? x.length : absent`, without keeping the text.
#[derive(Default, Clone, Copy)]
pub struct Utf16Len(pub Option<usize>);

impl<'de> Deserialize<'de> for Utf16Len {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<usize>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Some(crate::tape::js::utf16_len(v)))
            }
            absent_otherwise!(seq, map);
        }
        d.deserialize_any(V).map(Utf16Len)
    }
}

impl<'a> Content<'a> {
    /// Parse a kept `content` field.
    pub fn read(raw: Option<&'a RawValue>) -> Content<'a> {
        raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default()
    }
}

/// The reference's `num()`: a finite number, else absent.
#[derive(Default, Clone, Copy)]
pub struct Num(pub Option<f64>);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v.is_finite().then_some(v)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            absent_otherwise!(@ str);
            absent_otherwise!(@ seq);
            absent_otherwise!(@ map);
        }
        d.deserialize_any(V)
    }
}

/// `x === true`.
#[derive(Default, Clone, Copy)]
pub struct IsTrue(pub bool);

impl<'de> Deserialize<'de> for IsTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IsTrue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<IsTrue, E> {
                Ok(IsTrue(v))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<IsTrue, E> {
                Ok(IsTrue(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<IsTrue, E> {
                Ok(IsTrue(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<IsTrue, E> {
                Ok(IsTrue(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<IsTrue, E> {
                Ok(IsTrue(false))
            }
            fn visit_none<E: de::Error>(self) -> Result<IsTrue, E> {
                Ok(IsTrue(false))
            }
            absent_otherwise!(@ str);
            absent_otherwise!(@ seq);
            absent_otherwise!(@ map);
        }
        d.deserialize_any(V)
    }
}

/// The reference's `obj()`: a non-array object read as `T`, else absent.
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
            absent_otherwise!(str, seq);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `Array.isArray(x) ? x : []`.
pub struct Seq<T>(pub Vec<T>);

impl<T> Default for Seq<T> {
    fn default() -> Self {
        Seq(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Seq<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seq<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    out.push(item);
                }
                Ok(Seq(out))
            }
            absent_otherwise!(str, map);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `Array.isArray(x)`, keeping the array: `meta.command`.
pub struct MaybeSeq<T>(pub Option<Vec<T>>);

impl<T> Default for MaybeSeq<T> {
    fn default() -> Self {
        MaybeSeq(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MaybeSeq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = MaybeSeq<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MaybeSeq<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    out.push(item);
                }
                Ok(MaybeSeq(Some(out)))
            }
            absent_otherwise!(str, map);
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// One element of a content array, as far as the stats care.
#[derive(Default)]
pub enum ContentItem<'a> {
    Str(Cow<'a, str>),
    /// An object, with its `text` when that is a string.
    Obj(Option<Cow<'a, str>>),
    #[default]
    Other,
}

#[derive(Deserialize)]
struct TextOnly<'a> {
    #[serde(default, borrow)]
    text: Str<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for ContentItem<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ContentItem<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(ContentItem::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ContentItem::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(ContentItem::Str(Cow::Owned(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let t = TextOnly::deserialize(MapAccessDeserializer::new(map))?;
                Ok(ContentItem::Obj(t.text.0))
            }
            absent_otherwise!(seq);
        }
        d.deserialize_any(V)
    }
}

/// A `content` field: a string, an array of items, or anything else kept as
/// a value (for `JSON.stringify`).
#[derive(Default)]
pub enum Content<'a> {
    #[default]
    Absent,
    Str(Cow<'a, str>),
    Items(Vec<ContentItem<'a>>),
    Other(Value),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<ContentItem<'de>>()? {
                    out.push(item);
                }
                Ok(Content::Items(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(map)).map(Content::Other)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Content::Other(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Content::Other(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Content::Other(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Content::Other(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::Absent)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::Absent)
            }
        }
        d.deserialize_any(V)
    }
}

/// `meta.producer`: a string, an object with name and version, or neither.
#[derive(Default)]
pub enum ProducerView<'a> {
    #[default]
    Neither,
    Str(Cow<'a, str>),
    Obj(Option<Cow<'a, str>>, Option<Cow<'a, str>>),
}

#[derive(Deserialize)]
struct NameVersion<'a> {
    #[serde(default, borrow)]
    name: Str<'a>,
    #[serde(default, borrow)]
    version: Str<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for ProducerView<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ProducerView<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(ProducerView::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ProducerView::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let nv = NameVersion::deserialize(MapAccessDeserializer::new(map))?;
                Ok(ProducerView::Obj(nv.name.0, nv.version.0))
            }
            absent_otherwise!(seq);
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Default)]
pub struct ParamsView<'a> {
    #[serde(default, borrow)]
    pub name: Str<'a>,
    /// Kept as text: shown as an excerpt, or parsed by a reader that needs
    /// the arguments.
    #[serde(default, borrow)]
    pub arguments: Option<&'a RawValue>,
}

/// Anything with a name (a listed tool).
#[derive(Deserialize, Default)]
pub struct NamedView<'a> {
    #[serde(default, borrow)]
    pub name: Str<'a>,
}

#[derive(Deserialize, Default)]
pub struct ResultView<'a> {
    #[serde(rename = "isError", default)]
    pub is_error: IsTrue,
    /// Kept unparsed: read only when the call failed.
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
    /// A `tools/list` answer's tools.
    #[serde(default, borrow)]
    pub tools: Seq<Obj<NamedView<'a>>>,
}

/// `raw` of a wire line (a JSON-RPC frame) or of an event line.
#[derive(Deserialize, Default)]
pub struct RawView<'a> {
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default, borrow)]
    pub method: Str<'a>,
    #[serde(default, borrow)]
    pub params: Obj<ParamsView<'a>>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default, borrow)]
    pub result: Obj<ResultView<'a>>,
    #[serde(default)]
    pub status: Option<Value>,
    #[serde(default, borrow)]
    pub endpoint: Str<'a>,
    #[serde(default, borrow)]
    pub url: Str<'a>,
    // harness event fields the timeline shows in a title
    #[serde(default, borrow)]
    pub tool: Str<'a>,
    /// The model's call a harness event is about (`fitness.blocked_call`).
    #[serde(default, borrow)]
    pub tool_use_id: Str<'a>,
    #[serde(default, borrow)]
    pub gate: Str<'a>,
    #[serde(rename = "taskId", default, borrow)]
    pub task_id: Str<'a>,
    #[serde(default)]
    pub ok: Option<Value>,
    #[serde(default, borrow)]
    pub reason: Str<'a>,
    #[serde(default, borrow)]
    pub detail: Str<'a>,
}

#[derive(Deserialize, Default)]
pub struct UsageView {
    #[serde(default)]
    pub input_tokens: Num,
    #[serde(default)]
    pub output_tokens: Num,
    #[serde(default)]
    pub cache_read_input_tokens: Num,
    #[serde(default)]
    pub cache_creation_input_tokens: Num,
    #[serde(default)]
    pub thinking_tokens: Num,
}

#[derive(Deserialize, Default)]
pub struct TimingView {
    #[serde(default)]
    pub ttft_ms: Num,
    #[serde(default)]
    pub duration_ms: Num,
}

#[derive(Deserialize, Default)]
pub struct BlockView<'a> {
    #[serde(rename = "type", default, borrow)]
    pub ty: Str<'a>,
    #[serde(default)]
    pub thinking: Utf16Len,
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default, borrow)]
    pub name: Str<'a>,
    #[serde(default)]
    pub tool_use_id: Option<Value>,
    /// Kept unparsed: read (as a string) only by a reader that shows it.
    #[serde(default, borrow)]
    pub text: Option<&'a RawValue>,
    #[serde(default)]
    pub is_error: Option<Value>,
    /// Kept unparsed: read only when the result is an error.
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
}

/// Every field of any line kind that the stats read.
#[derive(Deserialize, Default)]
pub struct LineView<'a> {
    #[serde(rename = "type", default, borrow)]
    pub ty: Str<'a>,
    #[serde(default, borrow)]
    pub dir: Str<'a>,
    #[serde(default, borrow)]
    pub t: Str<'a>,
    #[serde(default, borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub source: Str<'a>,
    #[serde(default, borrow)]
    pub corr_id: Str<'a>,
    #[serde(default, borrow)]
    pub raw: Obj<RawView<'a>>,
    #[serde(default, borrow)]
    pub data: Obj<RawView<'a>>,
    // turn
    #[serde(default, borrow)]
    pub role: Str<'a>,
    #[serde(default, borrow)]
    pub model: Str<'a>,
    #[serde(default)]
    pub echoed: IsTrue,
    #[serde(default)]
    pub usage: Obj<UsageView>,
    #[serde(default)]
    pub timing: Obj<TimingView>,
    #[serde(default, borrow)]
    pub blocks: Seq<Obj<BlockView<'a>>>,
    // meta
    #[serde(rename = "startedAt", default, borrow)]
    pub started_at: Str<'a>,
    #[serde(default, borrow)]
    pub label: Str<'a>,
    #[serde(default, borrow)]
    pub command: MaybeSeq<Str<'a>>,
    #[serde(default, borrow)]
    pub producer: ProducerView<'a>,
    #[serde(rename = "mcpTapVersion", default, borrow)]
    pub mcp_tap_version: Str<'a>,
    // end
    #[serde(rename = "durationMs", default)]
    pub duration_ms: Num,
    #[serde(default, borrow)]
    pub reason: Str<'a>,
    #[serde(rename = "exitCode", default)]
    pub exit_code: Num,
}

impl BlockView<'_> {
    /// The block's `text`, when it is a string.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        let raw = self.text?;
        serde_json::from_slice::<Str<'_>>(raw.get().as_bytes())
            .ok()
            .and_then(|s| s.0)
    }
}

impl<'a> LineView<'a> {
    /// Read a line that is known to start with `{`. A line with a duplicated
    /// key is read again after a pass through a value, where the last
    /// occurrence wins, as in `JSON.parse`; so is a line with bytes that are
    /// not UTF-8.
    pub fn read(text: &'a [u8], spill: &'a mut Option<String>) -> Result<Self, serde_json::Error> {
        match serde_json::from_slice::<LineView<'a>>(text) {
            Ok(view) => Ok(view),
            Err(first) => {
                // Invalid UTF-8 reads as U+FFFD, as `readFileSync(path, 'utf8')` does.
                let text = String::from_utf8_lossy(text);
                // Slices only: a `from_str` path would put a second copy of
                // these deserializers into the viewer's wasm.
                let Ok(value) = serde_json::from_slice::<Value>(text.as_bytes()) else {
                    return Err(first);
                };
                // Written out again, the line has each key once.
                let text: &'a str = spill.insert(value.to_string());
                serde_json::from_slice::<LineView<'a>>(text.as_bytes())
            }
        }
    }
}
