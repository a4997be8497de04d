//! The replay (`?run=<id>&view=replay`, or `?trace=URL1;URL2` for any
//! mcp-tape v1 tapes): both tapes fetched when the page opens, checked
//! against the record (sha256 and byte count of each tape, the record's
//! signature against the site's publisher key), merged into one timeline by
//! [`fitness_shared::tape::timeline`], and shown as a virtualised list with a
//! detail pane.
//!
//! Safety: tape content is only ever set as text (Leptos text nodes and
//! attributes); nothing here writes HTML.

use std::sync::Arc;

use fitness_shared::integrity::{Sha256Stream, SignatureState, signature_state_of_bytes};
use fitness_shared::record::{RunRecord, TapePlane};
use fitness_shared::tape::stats::Plane;
use fitness_shared::tape::timeline::{
    Arm, Entry, EntryKind, LineSplitter, Timeline, TimelineBuilder,
};
use futures::future::{Either, select};
use leptos::either::Either as OneOf;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::api;

/// Height of one timeline row, in CSS pixels (the list is virtualised).
pub const ROW_HEIGHT: f64 = 46.0;
/// Trials named in the trial filter's list (the rest by their row chips).
const TRIAL_OPTIONS: usize = 200;
/// Rows rendered beyond the visible ones, above and below.
const OVERSCAN: usize = 8;

/// What to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplaySource {
    /// A published run: its record names the tapes and their hashes.
    Run(String),
    /// Tapes by URL, with no record to check them against.
    Trace(Vec<String>),
}

/// Deep-link and filter state read from the URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayLinks {
    pub event: Option<usize>,
    pub corr: Option<String>,
    pub arm: Option<String>,
    pub kind: Option<String>,
}

/// The integrity verdict shown in the badge. Only `Verified` says
/// verified: every tape matches the record, the record is the run asked
/// for, and it is signed by the key the site publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    /// Tapes match the record and the record is signed by the site's key.
    Verified { fingerprint: String, tapes: usize },
    /// Tapes match the record; the signature state is anything but
    /// verified (unsigned, another key, a site with no key).
    NotVerified {
        signature: SignatureState,
        site_key: bool,
        tapes: usize,
    },
    /// Something failed; each string says what.
    Unverified(Vec<String>),
    /// Tapes opened by URL: nothing to check them against.
    NotChecked(String),
}

impl Integrity {
    fn class(&self) -> String {
        format!("badge {}", self.state())
    }
    /// `verified`, `unsigned`, `other-key`, `no-site-key`, `unverified` or
    /// `unchecked`.
    pub fn state(&self) -> &'static str {
        match self {
            Integrity::Verified { .. } => "verified",
            Integrity::NotVerified { signature, .. } => signature.name(),
            Integrity::Unverified(_) => "unverified",
            Integrity::NotChecked(_) => "unchecked",
        }
    }
    fn text(&self) -> String {
        match self {
            Integrity::Verified { fingerprint, tapes } => format!(
                "Verified. Each of the {tapes} tapes' sha256 matches the record, and the record is signed by this site's publisher key {fingerprint}."
            ),
            Integrity::NotVerified {
                signature,
                site_key,
                tapes,
            } => format!(
                "{} Each of the {tapes} tapes' sha256 matches the record.",
                signature.sentence(*site_key)
            ),
            Integrity::Unverified(why) => format!("Unverified: {}.", why.join("; ")),
            Integrity::NotChecked(s) => format!("Not verified. {s}"),
        }
    }
}

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
}

/// Let the browser paint and handle input before the next slice of work.
pub async fn next_tick() {
    sleep_ms(0.0).await;
}

fn plane_word(plane: Plane) -> &'static str {
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
    loop {
        let next = streams
            .iter()
            .enumerate()
            .filter(|(_, s)| s.reader.is_some())
            .min_by(|(_, a), (_, b)| {
                let ta = builder.reached(a.tape).unwrap_or(f64::NEG_INFINITY);
                let tb = builder.reached(b.tape).unwrap_or(f64::NEG_INFINITY);
                ta.total_cmp(&tb)
            })
            .map(|(i, _)| i);
        let Some(i) = next else { break };
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
        let to_end = match result {
            Ok(true) => false,
            Ok(false) => {
                s.reader = None;
                true
            }
            Err(e) => {
                // Keep what arrived; a cut-off last line is not fed.
                s.failed = Some(e);
                s.reader = None;
                false
            }
        };
        if let Some(h) = &mut s.hasher {
            h.update(&chunk);
        }
        s.received += chunk.len() as u64;
        store.update_value(|all| all[s.tape].extend_from_slice(&chunk));
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
        loaded.set(Some(Arc::new(Loaded {
            tapes: tapes.to_vec(),
            timeline: builder.preview(reading),
        })));
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
    let mut failures = Vec::new();
    if record.run.id != run {
        failures.push(format!(
            "the record file of run {run} holds the record of run {}",
            record.run.id
        ));
    }
    if record.tapes.is_empty() {
        failures.push("the record names no tapes".to_owned());
    }
    let mut tapes = Vec::new();
    let mut streams = Vec::new();
    status.set("Fetching the tapes.".to_owned());
    for tape_ref in &record.tapes {
        let name = url_name(&tape_ref.path);
        let Some(path) = fitness_shared::site::tape(&run, &tape_ref.path) else {
            failures.push(format!(
                "the record names a tape path {:?} outside its run",
                tape_ref.path
            ));
            continue;
        };
        let plane = match tape_ref.plane {
            TapePlane::Mcp => Plane::Mcp,
            TapePlane::Agent => Plane::Agent,
        };
        let expected = Some((tape_ref.sha256.clone(), tape_ref.bytes));
        match open_stream(
            api::site_url(&path),
            name,
            Some(plane),
            expected,
            builder,
            store,
            &mut tapes,
        )
        .await
        {
            Ok(s) => streams.push(s),
            Err(e) => failures.push(e),
        }
    }
    read_streams(&mut streams, builder, store, &tapes, status, loaded).await;
    for s in streams {
        let name = &tapes[s.tape].name;
        if let Some(e) = s.failed {
            failures.push(e);
            continue;
        }
        let (Some(hasher), Some((want_sha, want_len))) = (s.hasher, s.expected) else {
            continue;
        };
        let (sha, len) = hasher.finish();
        if sha != want_sha {
            failures.push(format!("{name} sha256 differs from the record"));
        }
        if len != want_len {
            failures.push(format!("{name} is {len} bytes, the record says {want_len}"));
        }
    }
    // The publisher key, when the site publishes one (board.json).
    let key = api::fetch_board()
        .await
        .ok()
        .and_then(|b| b.publisher_key.clone());
    let signature = signature_state_of_bytes(&record_bytes, key.as_deref());
    if let SignatureState::Invalid { why } = &signature {
        failures.push(why.clone());
    }
    let integrity = match signature {
        _ if !failures.is_empty() => Integrity::Unverified(failures),
        SignatureState::Verified { fingerprint } => Integrity::Verified {
            fingerprint,
            tapes: tapes.len(),
        },
        signature => Integrity::NotVerified {
            signature,
            site_key: key.is_some(),
            tapes: tapes.len(),
        },
    };
    Ok((tapes, integrity))
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

fn time_of_day(t: &Option<String>) -> String {
    t.as_deref()
        .and_then(|t| t.get(11..23))
        .unwrap_or("")
        .to_owned()
}

/// Pending, an error, or destructive. While the tapes are still being read
/// (`complete` false) a call without its response is not flagged: the
/// response may be in the part not read yet.
fn is_flagged(e: &Entry, complete: bool) -> bool {
    (complete && e.pending) || e.error.is_some() || e.destructive
}

/// Replace the page's query (deep links) without reloading; not when embedded.
fn replace_query(key: &str, value: Option<&str>) {
    if crate::embedded() {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(search) = window.location().search() else {
        return;
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return;
    };
    match value {
        Some(v) => params.set(key, v),
        None => params.delete(key),
    }
    let query: String = params.to_string().into();
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("?{query}")),
        );
    }
}

#[component]
pub fn ReplayPage(source: ReplaySource, links: ReplayLinks) -> impl IntoView {
    let status = RwSignal::new("Opening the replay.".to_owned());
    let error = RwSignal::new(None::<String>);
    let integrity = RwSignal::new(None::<Integrity>);
    let loaded = RwSignal::new(None::<Arc<Loaded>>);
    let selected = RwSignal::new(links.event);
    let corr = RwSignal::new(links.corr.clone());
    let arm = RwSignal::new(links.arm.clone().and_then(|a| Arm::parse(&a)));
    let kind = RwSignal::new(links.kind.clone().and_then(|k| EntryKind::parse(&k)));
    let flagged_only = RwSignal::new(false);
    let scroll_top = RwSignal::new(0.0f64);
    let viewport = RwSignal::new(560.0f64);
    let list_ref = NodeRef::<leptos::html::Div>::new();

    let heading = match &source {
        ReplaySource::Run(id) => format!("Replay of run {id}"),
        ReplaySource::Trace(urls) => format!("Replay of {}", urls.join(", ")),
    };
    let back = match &source {
        ReplaySource::Run(id) => OneOf::Left(view! {
            <nav class="back">
                <a href=api::record_page_url(id)>"Back to the record"</a>
                " · "
                <a href=api::site_url("./")>"the board"</a>
            </nav>
        }),
        ReplaySource::Trace(_) => OneOf::Right(
            view! { <nav class="back"><a href=api::site_url("./")>"Back to the board"</a></nav> },
        ),
    };

    // Fetch, check and parse, all after the first paint. Previews of the
    // timeline's settled beginning are shown while the tapes are read.
    let store: TapeBytes = StoredValue::new_local(Vec::new());
    let src = source.clone();
    leptos::task::spawn_local(async move {
        next_tick().await;
        let mut builder = TimelineBuilder::new();
        let fetched = match src {
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
        loaded.set(Some(Arc::new(Loaded { tapes, timeline })));
    });

    // Entry indices that pass the filters.
    let filtered = Memo::new(move |_| {
        let Some(data) = loaded.get() else {
            return Vec::new();
        };
        let corr = corr.get();
        let arm = arm.get();
        let kind = kind.get();
        let flagged = flagged_only.get();
        let complete = data.timeline.complete;
        data.timeline
            .entries
            .iter()
            .filter(|e| corr.is_none() || e.corr_id == corr)
            .filter(|e| arm.is_none_or(|a| e.arm == a))
            .filter(|e| kind.is_none_or(|k| e.kind == k))
            .filter(|e| !flagged || is_flagged(e, complete))
            .map(|e| e.n)
            .collect::<Vec<usize>>()
    });

    // Deep link: once the entry is on the page (in a preview or the whole
    // timeline), scroll it into the list, once.
    let deep_link_done = StoredValue::new(false);
    Effect::new(move |_| {
        let Some(data) = loaded.get() else { return };
        let Some(n) = selected.get_untracked() else {
            return;
        };
        if deep_link_done.get_value() || n >= data.timeline.entries.len() {
            return;
        }
        deep_link_done.set_value(true);
        let position = filtered.with_untracked(|f| f.iter().position(|&i| i == n));
        let position = match position {
            Some(p) => p,
            None => {
                // The filters hide it: show everything instead.
                corr.set(None);
                arm.set(None);
                kind.set(None);
                flagged_only.set(false);
                n
            }
        };
        leptos::task::spawn_local(async move {
            next_tick().await;
            if let Some(el) = list_ref.get_untracked() {
                let el: &web_sys::Element = el.as_ref();
                let top = (position as f64 * ROW_HEIGHT - 2.0 * ROW_HEIGHT).max(0.0);
                el.set_scroll_top(top as i32);
                scroll_top.set(top);
                viewport.set(el.client_height() as f64);
                el.scroll_into_view_with_bool(false);
            }
        });
    });

    let on_scroll = move |ev: leptos::ev::Event| {
        if let Some(el) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        {
            scroll_top.set(el.scroll_top() as f64);
            viewport.set(el.client_height() as f64);
        }
    };

    let select = move |n: usize| {
        selected.set(Some(n));
        replace_query("event", Some(&n.to_string()));
    };
    // A filter change starts the list from its top.
    let reset_scroll = move || {
        if let Some(el) = list_ref.get_untracked() {
            let el: &web_sys::Element = el.as_ref();
            el.set_scroll_top(0);
        }
        scroll_top.set(0.0);
    };
    let pick_corr = move |c: Option<String>| {
        replace_query("corr", c.as_deref());
        corr.set(c);
        reset_scroll();
    };

    let rows = move || {
        let Some(data) = loaded.get() else {
            return Vec::new();
        };
        let top = scroll_top.get();
        let height = viewport.get().max(ROW_HEIGHT);
        let first = ((top / ROW_HEIGHT).floor() as usize).saturating_sub(OVERSCAN);
        let count = (height / ROW_HEIGHT).ceil() as usize + 2 * OVERSCAN;
        let sel = selected.get();
        filtered.with(|f| {
            f.iter()
                .enumerate()
                .skip(first)
                .take(count)
                .map(|(pos, &n)| {
                    let e = &data.timeline.entries[n];
                    row_view(
                        e,
                        data.timeline.complete,
                        pos,
                        sel == Some(n),
                        select,
                        pick_corr,
                    )
                })
                .collect::<Vec<_>>()
        })
    };

    let detail = move || {
        let data = loaded.get()?;
        let n = selected.get()?;
        let entry = data.timeline.entries.get(n)?;
        Some(detail_view(entry, &data, store))
    };

    let controls = move || {
        let data = loaded.get()?;
        let total = data.timeline.entries.len();
        // A list of thousands of options costs more to build than the whole
        // timeline and cannot be read: the first TRIAL_OPTIONS, and the
        // chosen trial wherever it is. Every row's trial chip filters too.
        let chosen = corr.get();
        let all_trials = &data.timeline.trials;
        let trials = all_trials
            .iter()
            .enumerate()
            .filter(|(i, (c, _, _))| *i < TRIAL_OPTIONS || chosen.as_deref() == Some(c.as_str()))
            .map(|(_, (c, a, count))| {
                let label = format!("{c} ({}, {count})", a.as_str());
                let value = c.clone();
                let is = chosen.as_deref() == Some(c.as_str());
                view! { <option value=value selected=is>{label}</option> }
            })
            .collect_view();
        let more_trials = (all_trials.len() > TRIAL_OPTIONS).then(|| {
            view! {
                <p class="hint" id="more-trials">{format!(
                    "The list names the first {TRIAL_OPTIONS} of {} trials; a row's trial chip shows only its trial.",
                    all_trials.len()
                )}</p>
            }
        });
        let arms = Arm::ALL
            .into_iter()
            .map(|a| {
                let is = arm.get() == Some(a);
                view! { <option value=a.as_str() selected=is>{a.as_str()}</option> }
            })
            .collect_view();
        let kinds = EntryKind::ALL
            .into_iter()
            .map(|k| {
                let is = kind.get() == Some(k);
                view! { <option value=k.as_str() selected=is>{k.as_str()}</option> }
            })
            .collect_view();
        let shown = filtered.with(Vec::len);
        Some(view! {
            <div class="filters" role="group" aria-label="Filter the timeline">
                <label>"Arm "
                    <select id="filter-arm" on:change=move |ev| {
                        let v = event_target_value(&ev);
                        arm.set(Arm::parse(&v));
                        replace_query("arm", Arm::parse(&v).map(Arm::as_str));
                        reset_scroll();
                    }>
                        <option value="" selected=arm.get().is_none()>"all arms"</option>
                        {arms}
                    </select>
                </label>
                <label>"Kind "
                    <select id="filter-kind" on:change=move |ev| {
                        let v = event_target_value(&ev);
                        kind.set(EntryKind::parse(&v));
                        replace_query("kind", EntryKind::parse(&v).map(EntryKind::as_str));
                        reset_scroll();
                    }>
                        <option value="" selected=kind.get().is_none()>"all kinds"</option>
                        {kinds}
                    </select>
                </label>
                <label>"Trial "
                    <select id="filter-corr" on:change=move |ev| {
                        let v = event_target_value(&ev);
                        pick_corr(Some(v).filter(|v| !v.is_empty()));
                    }>
                        <option value="" selected=corr.get().is_none()>"all trials"</option>
                        {trials}
                    </select>
                </label>
                {more_trials}
                <label>
                    <input type="checkbox" id="filter-flagged" prop:checked=flagged_only
                        on:change=move |ev| {
                            flagged_only.set(event_target_checked(&ev));
                            reset_scroll();
                        } />
                    " only flagged (pending, errors, destructive)"
                </label>
                <p id="shown-count" data-shown=shown data-total=total>
                    {if data.timeline.complete {
                        format!("Showing {shown} of {total} entries.")
                    } else {
                        format!("Showing {shown} of the {total} entries settled so far.")
                    }}
                </p>
            </div>
        })
    };

    // Per-tape counts only for the whole timeline: a preview's are partial.
    let counts = move || {
        let data = loaded.get().filter(|d| d.timeline.complete)?;
        let items = data
            .timeline
            .tapes
            .iter()
            .zip(data.tapes.iter())
            .enumerate()
            .map(|(i, (s, t))| {
                let r = &s.records;
                let text = format!(
                    "{} ({} plane, {} bytes): {} lines; {} meta, {} wire messages, {} events, {} turns, {} end, {} other; {} skipped. {} request/response pairs; tools/call {} calls, {} with no response.",
                    t.name,
                    plane_word(t.plane),
                    store.with_value(|b| b.get(i).map_or(0, Vec::len)),
                    r.total,
                    r.meta,
                    r.message,
                    r.event,
                    r.turn,
                    r.end,
                    r.other,
                    s.skipped,
                    s.pairs,
                    s.tool_calls,
                    s.tool_pending
                );
                view! {
                    <li class="tape-count" data-tape=t.name.clone() data-plane=plane_word(t.plane)
                        data-message=r.message data-event=r.event data-turn=r.turn
                        data-meta=r.meta data-end=r.end data-other=r.other
                        data-pairs=s.pairs data-tool-calls=s.tool_calls
                        data-tool-pending=s.tool_pending data-skipped=s.skipped>
                        {text}
                    </li>
                }
            })
            .collect_view();
        Some(view! { <ul class="tape-counts">{items}</ul> })
    };

    let badge = move || {
        integrity.get().map(|i| {
            view! {
                <p id="integrity" class=i.class() data-state=i.state() role="status">{i.text()}</p>
            }
        })
    };

    let spacer_height = move || format!("height:{}px", filtered.with(Vec::len) as f64 * ROW_HEIGHT);

    view! {
        {back}
        <section class="replay" data-complete=move || {
            if loaded.with(|l| l.as_ref().is_some_and(|d| d.timeline.complete)) { "1" } else { "0" }
        }>
            <h2>{heading}</h2>
            {badge}
            <p class="loading" id="replay-status">{move || status.get()}</p>
            {move || error.get().map(|e| view! { <p class="error" id="replay-error">{e}</p> })}
            {counts}
            {controls}
            <div class="replay-body">
                <div class="vlist" node_ref=list_ref on:scroll=on_scroll
                    role="list" aria-label="Timeline" tabindex="0">
                    <div class="vlist-spacer" style=spacer_height>{rows}</div>
                </div>
                <aside class="detail" id="detail" aria-live="polite">
                    {move || match detail() {
                        Some(d) => OneOf::Left(d),
                        None => OneOf::Right(view! {
                            <p class="hint">"Choose an entry to see its raw JSON."</p>
                        }),
                    }}
                </aside>
            </div>
        </section>
    }
}

fn row_view<S, P>(
    e: &Entry,
    complete: bool,
    pos: usize,
    selected: bool,
    select: S,
    pick_corr: P,
) -> impl IntoView + use<S, P>
where
    S: Fn(usize) + Copy + Send + Sync + 'static,
    P: Fn(Option<String>) + Copy + Send + Sync + 'static,
{
    let n = e.n;
    let mut class = format!("tl-row {} plane-{}", e.kind.as_str(), plane_word(e.plane));
    if selected {
        class.push_str(" selected");
    }
    if is_flagged(e, complete) {
        class.push_str(" flagged");
    }
    let mut flags = Vec::new();
    if e.pending && complete {
        flags.push(("flag pending", "no response".to_owned()));
    } else if e.pending {
        flags.push(("flag unsettled", "response not read yet".to_owned()));
    }
    if let Some(err) = &e.error {
        flags.push(("flag error", format!("error: {err}")));
    }
    if e.destructive {
        flags.push(("flag destructive", "destructive call".to_owned()));
    }
    let flags = flags
        .into_iter()
        .map(|(c, t)| view! { <span class=c>{t}</span> })
        .collect_view();
    let latency = e.latency_ms.map(|l| format!("{l:.0} ms"));
    let corr_chip = e.corr_id.clone().map(|c| {
        let c2 = c.clone();
        view! {
            <button class="chip corr" title="Show only this trial"
                on:click=move |ev| { ev.stop_propagation(); pick_corr(Some(c2.clone())); }>{c}</button>
        }
    });
    view! {
        <div class=class role="listitem" data-n=n data-kind=e.kind.as_str() data-arm=e.arm.as_str()
            style=format!("top:{}px;height:{}px", pos as f64 * ROW_HEIGHT, ROW_HEIGHT)
            tabindex="0"
            on:click=move |_| select(n)
            on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    select(n);
                }
            }>
            <div class="tl-line1">
                <span class="n">{format!("#{n}")}</span>
                <time>{time_of_day(&e.t)}</time>
                <span class="chip kind">{e.kind.as_str()}</span>
                <span class="title">{e.title.clone()}</span>
            </div>
            <div class="tl-line2">
                <span class="chip arm">{e.arm.as_str()}</span>
                {corr_chip}
                <span class="latency">{latency}</span>
                {flags}
                <span class="sub">{e.detail.clone()}</span>
            </div>
        </div>
    }
}

fn pretty(raw: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(v) => serde_json::to_string_pretty(&v)
            .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned()),
        Err(_) => String::from_utf8_lossy(raw).into_owned(),
    }
}

fn detail_view(e: &Entry, data: &Loaded, store: TapeBytes) -> impl IntoView + use<> {
    let mut facts = vec![
        ("Entry", format!("#{}", e.n)),
        ("Time", e.t.clone().unwrap_or_else(|| "not recorded".into())),
        ("Kind", e.kind.as_str().to_owned()),
        ("Arm", e.arm.as_str().to_owned()),
        (
            "Trial",
            e.corr_id.clone().unwrap_or_else(|| "no corr_id".into()),
        ),
        ("Plane", plane_word(e.plane).to_owned()),
        ("Summary", e.title.clone()),
    ];
    if !e.detail.is_empty() {
        facts.push(("Detail", e.detail.clone()));
    }
    if let Some(l) = e.latency_ms {
        facts.push(("Latency", format!("{l:.0} ms")));
    }
    if e.pending && data.timeline.complete {
        facts.push(("Response", "none on the tape".into()));
    } else if e.pending {
        facts.push((
            "Response",
            "not read yet: the tapes are still loading".into(),
        ));
    }
    if let Some(err) = &e.error {
        facts.push(("Error", err.clone()));
    }
    if e.destructive {
        facts.push(("Destructive", "a destructive call".into()));
    }
    let dl = facts
        .into_iter()
        .map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> })
        .collect_view();
    let raws = e
        .lines
        .iter()
        .map(|l| {
            let name = data
                .tapes
                .get(l.tape)
                .map(|t| t.name.clone())
                .unwrap_or_default();
            let text = store
                .with_value(|b| {
                    b.get(l.tape)
                        .and_then(|t| t.get(l.start..l.end))
                        .map(pretty)
                })
                .unwrap_or_default();
            view! {
                <h4>{format!("{name} line {}", l.line)}</h4>
                <pre class="raw">{text}</pre>
            }
        })
        .collect_view();
    let link = format!("#event-{}", e.n);
    view! {
        <div class="detail-body" data-n=e.n id=link.trim_start_matches('#').to_owned()>
            <h3>{format!("Entry #{}", e.n)}</h3>
            <dl>{dl}</dl>
            {raws}
        </div>
    }
}
