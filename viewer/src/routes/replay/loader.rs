//! Loading the tapes: a run's record and the tapes it names, or tapes by
//! URL, streamed chunk by chunk into the timeline builder, with previews of
//! the timeline's settled beginning while the rest is read. Each tape a
//! record names is hashed as it arrives and checked ([`super::integrity`]).

use std::sync::Arc;

use fitness_shared::integrity::Sha256Stream;
use fitness_shared::record::RunRecord;
use fitness_shared::tape::Plane;
use fitness_shared::tape::timeline::{LineSplitter, Shape, Timeline, TimelineBuilder};
use futures::future::{Either, select};
use leptos::prelude::*;

use super::integrity::{self, Integrity};
use crate::api;
use crate::url_state::ReplaySource;

/// One tape being read or read: its name and plane. Its bytes live in the
/// page's [`TapeBytes`] store, at the same index as the builder's tape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapeInfo {
    pub name: String,
    pub plane: Plane,
}

/// The bytes of each tape, appended to as they arrive; the detail pane reads
/// raw lines from here.
pub type TapeBytes = StoredValue<Vec<Vec<u8>>, LocalStorage>;

/// What the page shows: the whole timeline once every tape is read, and
/// before that a preview (`timeline.complete == false`) of its first entries.
pub struct Loaded {
    pub tapes: Vec<TapeInfo>,
    pub timeline: Timeline,
    /// The run's shape for the timeline strip, from the timeline.
    pub shape: Shape,
}

impl Loaded {
    pub fn new(tapes: Vec<TapeInfo>, timeline: Timeline) -> Loaded {
        let shape = Shape::of(&timeline);
        Loaded {
            tapes,
            timeline,
            shape,
        }
    }
}

/// Let the browser paint and handle input before the next slice of work.
pub async fn next_tick() {
    sleep_ms(0.0).await;
}

pub(super) fn plane_word(plane: Plane) -> &'static str {
    match plane {
        Plane::Mcp => "mcp",
        Plane::Agent => "agent",
    }
}

/// The tape's plane from its meta line (`kind: "llm"` is the agent plane).
fn sniff_plane(bytes: &[u8]) -> Plane {
    let first = LineSplitter::new(bytes)
        .next()
        .map(|(_, s, e)| &bytes[s..e])
        .unwrap_or_default();
    let kind = serde_json::from_slice::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned));
    if kind.as_deref() == Some("llm") {
        Plane::Agent
    } else {
        Plane::Mcp
    }
}

fn url_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(path)
        .to_owned()
}

/// Milliseconds on the page's clock.
fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Work done between two yields to the browser, in milliseconds.
const SLICE_MS: f64 = 30.0;
/// When the first preview is due, after reading starts.
const FIRST_PREVIEW_MS: f64 = 100.0;
/// Time between two previews while tapes are still being read.
const PREVIEW_EVERY_MS: f64 = 1000.0;

/// One tape being streamed: hashed chunk by chunk, its complete lines fed
/// to the timeline builder.
struct Stream {
    /// The builder's index for this tape, and the store's.
    tape: usize,
    reader: Option<api::BodyReader>,
    /// Only for a tape a record names: there is nothing to check a tape
    /// opened by URL against.
    hasher: Option<Sha256Stream>,
    /// Bytes received so far.
    received: u64,
    /// Bytes fed to the builder so far (whole lines).
    parsed: usize,
    line: u32,
    /// What the record says about the tape: sha256 and length.
    expected: Option<(String, u64)>,
    /// The byte count the record or the server announced.
    total: Option<u64>,
    failed: Option<String>,
}

impl Stream {
    /// Take in a chunk the reader read (`result`: `Ok(true)` while more may
    /// come): hash it, count it and store it. Returns whether the tape is
    /// now read to its end, so that its last line is fed even without a
    /// newline.
    fn receive(&mut self, result: Result<bool, String>, chunk: &[u8], store: TapeBytes) -> bool {
        let to_end = match result {
            Ok(true) => false,
            Ok(false) => {
                self.reader = None;
                true
            }
            Err(e) => {
                // Keep what arrived; a cut-off last line is not fed.
                self.failed = Some(e);
                self.reader = None;
                false
            }
        };
        if let Some(h) = &mut self.hasher {
            h.update(chunk);
        }
        self.received += chunk.len() as u64;
        store.update_value(|all| all[self.tape].extend_from_slice(chunk));
        to_end
    }

    /// Feed the complete lines received so far (all of them at the end),
    /// until `deadline` (page clock, ms) passes. Returns whether every such
    /// line was fed; if not, call again after a pause.
    fn feed(
        &mut self,
        bytes: &[u8],
        builder: &mut TimelineBuilder,
        to_end: bool,
        deadline: f64,
    ) -> bool {
        let upto = if to_end {
            bytes.len()
        } else {
            match memchr::memrchr(b'\n', &bytes[self.parsed..]) {
                Some(i) => self.parsed + i + 1,
                None => self.parsed,
            }
        };
        let from = self.parsed;
        let mut lines = LineSplitter::new(&bytes[from..upto]);
        let mut fed = 0u32;
        while let Some((_, s, e)) = lines.next() {
            self.line += 1;
            builder.push_line(self.tape, self.line, from + s, &bytes[from + s..from + e]);
            self.parsed = (from + lines.position()).min(upto);
            fed += 1;
            // The clock is a call into JavaScript: read it now and then.
            if fed.is_multiple_of(64) && now_ms() > deadline {
                return self.parsed >= upto;
            }
        }
        self.parsed = upto;
        true
    }
}

/// Open `url` as a tape: start the fetch and, when the plane is not known
/// from a record, read up to the first line to learn it from the meta line.
async fn open_stream(
    url: String,
    name: String,
    plane: Option<Plane>,
    expected: Option<(String, u64)>,
    builder: &mut TimelineBuilder,
    store: TapeBytes,
    tapes: &mut Vec<TapeInfo>,
) -> Result<Stream, String> {
    let mut reader = api::BodyReader::open(&url).await?;
    let total = expected.as_ref().map(|e| e.1).or(reader.length);
    let mut head = Vec::new();
    let plane = match plane {
        Some(p) => p,
        None => {
            let mut more = true;
            while more && memchr::memchr(b'\n', &head).is_none() {
                more = reader.next_chunk(&mut head).await?;
            }
            sniff_plane(&head)
        }
    };
    let tape = builder.add_tape(plane);
    tapes.push(TapeInfo { name, plane });
    store.update_value(|all| {
        all.resize(tape + 1, Vec::new());
        if let Some(t) = total {
            all[tape].reserve(t.min(1 << 31) as usize);
        }
        all[tape].extend_from_slice(&head);
    });
    let mut stream = Stream {
        tape,
        reader: Some(reader),
        hasher: expected.is_some().then(|| {
            let mut h = Sha256Stream::new();
            h.update(&head);
            h
        }),
        received: head.len() as u64,
        parsed: 0,
        line: 0,
        expected,
        total,
        failed: None,
    };
    // The lines read to learn the plane count as read.
    store.with_value(|all| stream.feed(&all[tape], builder, false, f64::INFINITY));
    Ok(stream)
}

/// A promise that resolves after `ms` milliseconds.
async fn sleep_ms(ms: f64) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
                &resolve,
                ms.clamp(0.0, 60_000.0) as i32,
            );
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// "Reading the tapes: 12.0 MB of 52.4 MB. ..."
fn progress(streams: &[Stream]) -> String {
    let read: u64 = streams.iter().map(|s| s.received).sum();
    let total: Option<u64> = streams.iter().map(|s| s.total).sum();
    format!(
        "Reading the tapes: {:.1} MB{}. The first entries are shown; the rest follow as they are read.",
        read as f64 / 1e6,
        total
            .map(|t| format!(" of {:.1} MB", t as f64 / 1e6))
            .unwrap_or_default()
    )
}

/// Read every stream to its end, the one furthest behind in time first, so
/// that the merged timeline's beginning settles early. Work is done in
/// slices of [`SLICE_MS`], each followed by a [`pause`] for the browser.
/// While the network keeps the reader waiting, a due preview is shown too.
async fn read_streams(
    streams: &mut [Stream],
    builder: &mut TimelineBuilder,
    store: TapeBytes,
    tapes: &[TapeInfo],
    status: RwSignal<String>,
    loaded: RwSignal<Option<Arc<Loaded>>>,
) {
    let mut slice_start = now_ms();
    let mut previews = Previews {
        next: slice_start + FIRST_PREVIEW_MS,
        fed: 0,
    };
    let mut chunk = Vec::new();
    while let Some(i) = furthest_behind(streams, builder) {
        let reading = reading_now(streams, builder);
        let fed = fed_lines(streams);
        let so_far = progress(streams);
        let s = &mut streams[i];
        let Some(reader) = s.reader.as_mut() else {
            continue;
        };
        chunk.clear();
        let result = {
            let mut read = std::pin::pin!(reader.next_chunk(&mut chunk));
            loop {
                if fed == previews.fed || !previews_wanted(loaded) {
                    break read.as_mut().await;
                }
                let wait = previews.next - now_ms();
                if wait > 0.0 {
                    let timer = std::pin::pin!(sleep_ms(wait));
                    if let Either::Left((r, _)) = select(read.as_mut(), timer).await {
                        break r;
                    }
                }
                // The network is slow: show what has settled meanwhile.
                status.set(so_far.clone());
                previews.show(builder, &reading, fed, tapes, loaded);
            }
        };
        let to_end = s.receive(result, &chunk, store);
        // Feed the new lines a slice at a time: a large chunk is not parsed
        // in one go while input waits.
        loop {
            let s = &mut streams[i];
            let deadline = slice_start + SLICE_MS;
            if store.with_value(|all| s.feed(&all[s.tape], builder, to_end, deadline)) {
                break;
            }
            if !pause(streams, builder, tapes, status, loaded, &mut previews).await {
                return;
            }
            slice_start = now_ms();
        }
        if now_ms() - slice_start >= SLICE_MS {
            if !pause(streams, builder, tapes, status, loaded, &mut previews).await {
                return;
            }
            slice_start = now_ms();
        }
    }
}

/// Of the streams still being read, the one whose lines have reached the
/// earliest time (one that has reached none first).
fn furthest_behind(streams: &[Stream], builder: &TimelineBuilder) -> Option<usize> {
    streams
        .iter()
        .enumerate()
        .filter(|(_, s)| s.reader.is_some())
        .min_by(|(_, a), (_, b)| {
            let ta = builder.reached(a.tape).unwrap_or(f64::NEG_INFINITY);
            let tb = builder.reached(b.tape).unwrap_or(f64::NEG_INFINITY);
            ta.total_cmp(&tb)
        })
        .map(|(i, _)| i)
}

/// When the next preview is due, and how many lines the last one had seen.
struct Previews {
    next: f64,
    fed: u64,
}

impl Previews {
    fn show(
        &mut self,
        builder: &TimelineBuilder,
        reading: &[bool],
        fed: u64,
        tapes: &[TapeInfo],
        loaded: RwSignal<Option<Arc<Loaded>>>,
    ) {
        loaded.set(Some(Arc::new(Loaded::new(
            tapes.to_vec(),
            builder.preview(reading),
        ))));
        self.fed = fed;
        self.next = now_ms() + PREVIEW_EVERY_MS;
    }
}

/// Entries a preview may show before previews stop: enough to read and
/// scroll while the rest loads, without re-ordering ever more of it.
const PREVIEW_ENTRIES: usize = 5000;

/// Whether another preview is worth its cost: not once one has shown
/// [`PREVIEW_ENTRIES`].
fn previews_wanted(loaded: RwSignal<Option<Arc<Loaded>>>) -> bool {
    loaded.with_untracked(|l| {
        l.as_ref()
            .is_none_or(|d| d.timeline.entries.len() < PREVIEW_ENTRIES)
    })
}

/// Per builder tape: whether more lines may come.
fn reading_now(streams: &[Stream], builder: &TimelineBuilder) -> Vec<bool> {
    let mut reading = vec![false; builder.tape_count()];
    for s in streams {
        reading[s.tape] = s.reader.is_some();
    }
    reading
}

fn fed_lines(streams: &[Stream]) -> u64 {
    streams.iter().map(|s| u64::from(s.line)).sum()
}

/// Between two slices of work: say how far reading has got, show a preview
/// when one is due, and let the browser paint. `false` once the reader has
/// left the page.
async fn pause(
    streams: &[Stream],
    builder: &TimelineBuilder,
    tapes: &[TapeInfo],
    status: RwSignal<String>,
    loaded: RwSignal<Option<Arc<Loaded>>>,
    previews: &mut Previews,
) -> bool {
    status.set(progress(streams));
    let fed = fed_lines(streams);
    if now_ms() >= previews.next && fed > previews.fed && previews_wanted(loaded) {
        previews.show(builder, &reading_now(streams, builder), fed, tapes, loaded);
    }
    next_tick().await;
    !status.is_disposed()
}

/// Fetch a run's record, stream its tapes into `builder`, and check them
/// against it.
async fn load_run(
    run: String,
    builder: &mut TimelineBuilder,
    store: TapeBytes,
    status: RwSignal<String>,
    loaded: RwSignal<Option<Arc<Loaded>>>,
) -> Result<(Vec<TapeInfo>, Integrity), String> {
    status.set("Fetching the record.".to_owned());
    let record_bytes = api::fetch_record_bytes(&run).await?;
    let record: RunRecord = serde_json::from_slice(&record_bytes)
        .map_err(|e| format!("the record of {run} is not a run record: {e}"))?;
    let mut failures = integrity::record_failures(&run, &record);
    let mut tapes = Vec::new();
    status.set("Fetching the tapes.".to_owned());
    let mut streams =
        open_record_tapes(&run, &record, builder, store, &mut tapes, &mut failures).await;
    read_streams(&mut streams, builder, store, &tapes, status, loaded).await;
    for s in streams {
        let name = &tapes[s.tape].name;
        if let Some(e) = s.failed {
            failures.push(e);
            continue;
        }
        let (Some(hasher), Some(expected)) = (s.hasher, s.expected) else {
            continue;
        };
        integrity::check_tape(name, hasher, expected, &mut failures);
    }
    // The publisher key, when the site publishes one (board.json).
    let key = api::fetch_board()
        .await
        .ok()
        .and_then(|b| b.publisher_key.clone());
    let verdict = integrity::verdict(&record_bytes, key, failures, tapes.len());
    Ok((tapes, verdict))
}

/// Open each tape the record names, in its order, with the plane, sha256
/// and byte count the record gives it. A tape that cannot be opened, or
/// whose path leads outside the run, goes onto `failures` instead.
async fn open_record_tapes(
    run: &str,
    record: &RunRecord,
    builder: &mut TimelineBuilder,
    store: TapeBytes,
    tapes: &mut Vec<TapeInfo>,
    failures: &mut Vec<String>,
) -> Vec<Stream> {
    let mut streams = Vec::new();
    for tape_ref in &record.tapes {
        let name = url_name(&tape_ref.path);
        let Some(path) = fitness_shared::site::tape(run, &tape_ref.path) else {
            failures.push(format!(
                "the record names a tape path {:?} outside its run",
                tape_ref.path
            ));
            continue;
        };
        let plane = tape_ref.plane;
        let expected = Some((tape_ref.sha256.clone(), tape_ref.bytes));
        match open_stream(
            api::site_url(&path),
            name,
            Some(plane),
            expected,
            builder,
            store,
            tapes,
        )
        .await
        {
            Ok(s) => streams.push(s),
            Err(e) => failures.push(e),
        }
    }
    streams
}

/// Stream tapes opened by URL (`?trace=`): nothing to check them against.
async fn load_trace(
    urls: Vec<String>,
    builder: &mut TimelineBuilder,
    store: TapeBytes,
    status: RwSignal<String>,
    loaded: RwSignal<Option<Arc<Loaded>>>,
) -> Result<(Vec<TapeInfo>, Integrity), String> {
    let mut tapes = Vec::new();
    let mut streams = Vec::new();
    status.set("Fetching the tapes.".to_owned());
    for url in urls {
        let full = if url.contains("://") || url.starts_with('/') {
            url.clone()
        } else {
            api::site_url(&url)
        };
        let s = open_stream(full, url_name(&url), None, None, builder, store, &mut tapes).await?;
        streams.push(s);
    }
    read_streams(&mut streams, builder, store, &tapes, status, loaded).await;
    if let Some(e) = streams.into_iter().find_map(|s| s.failed) {
        return Err(e);
    }
    Ok((
        tapes,
        Integrity::NotChecked(
            "These tapes were opened by URL, with no record to check their sha256 against."
                .to_owned(),
        ),
    ))
}

/// Fetch, check and parse `source` into `loaded`, after the first paint,
/// saying how far it has got in `status`; a failure goes to `error`.
/// Previews of the timeline's settled beginning are shown while the tapes
/// are read.
pub(super) fn start(
    source: ReplaySource,
    store: TapeBytes,
    status: RwSignal<String>,
    error: RwSignal<Option<String>>,
    integrity: RwSignal<Option<Integrity>>,
    loaded: RwSignal<Option<Arc<Loaded>>>,
) {
    leptos::task::spawn_local(async move {
        next_tick().await;
        let mut builder = TimelineBuilder::new();
        let fetched = match source {
            ReplaySource::Run(id) => load_run(id, &mut builder, store, status, loaded).await,
            ReplaySource::Trace(urls) => {
                load_trace(urls, &mut builder, store, status, loaded).await
            }
        };
        let (tapes, verdict) = match fetched {
            Ok(x) => x,
            Err(e) => {
                status.set(String::new());
                error.set(Some(e));
                return;
            }
        };
        integrity.set(Some(verdict));
        status.set("Ordering the timeline.".to_owned());
        next_tick().await;
        let timeline = builder.finish();
        status.set(String::new());
        loaded.set(Some(Arc::new(Loaded::new(tapes, timeline))));
    });
}
