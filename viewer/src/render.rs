//! Pre-rendering (the `ssr` feature): the viewer's pages as static HTML,
//! rendered from the very components the browser hydrates, for `fitness
//! publish` to write. Nothing here reads or writes a file: the caller hands
//! in the data and the viewer build's `index.html`, and gets strings back.

use std::sync::Arc;

use fitness_shared::board::Board;
use fitness_shared::board::Row;
use fitness_shared::record::CandidateList;
use fitness_shared::record::RunRecord;
use fitness_shared::site::Page;
use leptos::prelude::*;

use crate::app::{App, Preloaded, page_title};
use crate::url_state::{UrlState, View};

/// The element of the viewer build's `index.html` a page's HTML goes into.
pub const ROOT_ELEMENT: &str = r#"<div id="fitness-root"></div>"#;

/// Why a viewer build's `index.html` cannot hold a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("the viewer's index.html has no {ROOT_ELEMENT} to render pages into")]
    NoRoot,
    #[error("the viewer's index.html has no <title> element")]
    NoTitle,
    #[error(
        "the viewer's index.html is not Trunk's: no stylesheet link, JavaScript and wasm preloads and module bootstrap of plain asset paths"
    )]
    NotTrunk,
    #[error("the viewer's stylesheet closes a <style> element, so it cannot go inline")]
    StyleCloses,
}

/// The board page's HTML (the application's root element and everything
/// in it), as the browser's hydration will find it.
pub fn board_page(board: Arc<Board>) -> String {
    page_html(&Page::Board, move || Preloaded::Board(board))
}

/// A server's history page, from the board's rows.
pub fn server_page(board: Arc<Board>, slug: &str) -> String {
    page_html(&Page::Server(slug.to_owned()), move || {
        Preloaded::Board(board)
    })
}

/// A run's record page, with its signature state and attempts as its board
/// row states them, and the candidate list its record names.
pub fn record_page(
    record: Arc<RunRecord>,
    row: Arc<Row>,
    site_key: bool,
    candidates: Option<Arc<CandidateList>>,
) -> String {
    let page = Page::Record(record.run.id.clone());
    page_html(&page, move || Preloaded::Record {
        record,
        signature: RwSignal::new(row.signature.clone()),
        site_key,
        row: Some(row),
        candidates,
    })
}

fn page_html(page: &Page, data: impl FnOnce() -> Preloaded) -> String {
    let owner = Owner::new();
    let html = owner.with(|| {
        crate::api::set_base(page.root_prefix());
        let state = RwSignal::new(UrlState::parse(Some(page), ""));
        let ready = RwSignal::new(false);
        let preloaded = Some(data());
        view! { <App state=state preloaded=preloaded ready=ready /> }.to_html()
    });
    owner.cleanup();
    html
}

/// The viewer build's `index.html`, made to paint before the viewer loads.
///
/// Trunk's bootstrap fetches the viewer's JavaScript and wasm at once, at
/// high priority, beside a render-blocking stylesheet: the first paint of a
/// pre-rendered page waited on them. A shell:
/// - starts the viewer after the first contentful paint has been presented,
///   fetching the JavaScript and the wasm side by side and keeping their
///   integrity hashes. Starting on the next frame was not late enough: the
///   fetch, the script parse and the wasm compile then competed with the
///   raster of that frame, on two cores 30 to 50 ms of first paint. Where no
///   paint is coming the viewer starts at once (a hidden tab, or one hidden
///   before it painted), and after a second at the latest; a browser without
///   paint timing waits for the next frame instead;
/// - on the board and the server pages, carries the stylesheet inline, so
///   nothing blocks their first paint. A record page links it instead: it is
///   one of thousands, its readers mostly come from the board, and 20 KB
///   more on each would triple it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    /// The stylesheet inline.
    inline: String,
    /// The stylesheet linked.
    linked: String,
}

/// The parts of Trunk's `index.html` a [`Shell`] rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assets<'a> {
    /// The stylesheet's `<link rel="stylesheet" ...>` tag.
    stylesheet_tag: &'a str,
    /// Its `href`, as the build writes it (`./style-<hash>.css`).
    pub stylesheet: &'a str,
    /// The bootstrap `<script type="module">...</script>`.
    bootstrap: &'a str,
    /// The JavaScript's `<link rel="modulepreload" ...>` tag and its parts.
    js_tag: &'a str,
    js: &'a str,
    js_integrity: &'a str,
    /// The wasm's `<link rel="preload" ...>` tag and its parts.
    wasm_tag: &'a str,
    wasm: &'a str,
    wasm_integrity: &'a str,
}

/// The first tag in `html` that starts with `start` and contains every one
/// of `marks`, up to and including its `>`.
fn tag<'a>(html: &'a str, start: &str, marks: &[&str]) -> Option<&'a str> {
    let mut from = 0;
    while let Some(at) = html[from..].find(start) {
        let at = from + at;
        let end = at + html[at..].find('>')? + 1;
        let tag = &html[at..end];
        if marks.iter().all(|m| tag.contains(m)) {
            return Some(tag);
        }
        from = end;
    }
    None
}

/// The value of `name="..."` in `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

impl<'a> Assets<'a> {
    /// Find them in the viewer build's `index.html`.
    pub fn find(index_html: &'a str) -> Result<Self, ShellError> {
        let missing = ShellError::NotTrunk;
        let stylesheet_tag =
            tag(index_html, "<link", &[r#"rel="stylesheet""#]).ok_or(missing.clone())?;
        let js_tag =
            tag(index_html, "<link", &[r#"rel="modulepreload""#]).ok_or(missing.clone())?;
        let wasm_tag = tag(
            index_html,
            "<link",
            &[r#"rel="preload""#, r#"type="application/wasm""#],
        )
        .ok_or(missing.clone())?;
        let open = index_html
            .find(r#"<script type="module">"#)
            .ok_or(missing.clone())?;
        let close = open
            + index_html[open..]
                .find("</script>")
                .ok_or(missing.clone())?
            + "</script>".len();
        let assets = Assets {
            stylesheet_tag,
            stylesheet: attr(stylesheet_tag, "href").ok_or(missing.clone())?,
            bootstrap: &index_html[open..close],
            js_tag,
            js: attr(js_tag, "href").ok_or(missing.clone())?,
            js_integrity: attr(js_tag, "integrity").unwrap_or(""),
            wasm_tag,
            wasm: attr(wasm_tag, "href").ok_or(missing.clone())?,
            wasm_integrity: attr(wasm_tag, "integrity").unwrap_or(""),
        };
        let plain = |s: &str| {
            s.strip_prefix("./")
                .is_some_and(fitness_shared::site::is_segment)
                && !s.contains(['\'', '\\'])
        };
        let plain_integrity = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+/=-".contains(c))
        };
        let plain_assets = plain(assets.stylesheet) && plain(assets.js) && plain(assets.wasm);
        let plain_hashes =
            plain_integrity(assets.js_integrity) && plain_integrity(assets.wasm_integrity);
        let named = assets.bootstrap.contains(&format!("'{}'", assets.js));
        if !(plain_assets && plain_hashes && named) {
            return Err(missing);
        }
        Ok(assets)
    }

    /// The bootstrap that starts the viewer after the first paint.
    fn late_bootstrap(&self) -> String {
        format!(
            r#"<script type="module">
await new Promise(go => {{
  if (document.visibilityState === 'hidden') return go();
  addEventListener('visibilitychange', go, {{ once: true }});
  setTimeout(go, 1000);
  const after = () => setTimeout(go, 0);
  if (self.PerformanceObserver?.supportedEntryTypes?.includes('paint')) new PerformanceObserver(l => l.getEntriesByName('first-contentful-paint').length && after()).observe({{ type: 'paint', buffered: true }});
  else requestAnimationFrame(after);
}});
const preload = Object.assign(document.createElement('link'), {{ rel: 'modulepreload', href: '{js}', integrity: '{js_integrity}', crossOrigin: 'anonymous' }});
document.head.append(preload);
const wasm = fetch('{wasm}', {{ integrity: '{wasm_integrity}' }});
const bindings = await import('{js}');
const instance = await bindings.default({{ module_or_path: wasm }});
window.wasmBindings = bindings;
dispatchEvent(new CustomEvent('TrunkApplicationStarted', {{ detail: {{ wasm: instance }} }}));
</script>"#,
            js = self.js,
            js_integrity = self.js_integrity,
            wasm = self.wasm,
            wasm_integrity = self.wasm_integrity,
        )
    }
}

impl Shell {
    /// The shell from the viewer build's `index.html` and the text of the
    /// stylesheet it links ([`Assets::stylesheet`]).
    pub fn new(index_html: &str, stylesheet: &str) -> Result<Self, ShellError> {
        if !index_html.contains(ROOT_ELEMENT) {
            return Err(ShellError::NoRoot);
        }
        if stylesheet.to_ascii_lowercase().contains("</style") {
            return Err(ShellError::StyleCloses);
        }
        let assets = Assets::find(index_html)?;
        let late = index_html
            .replacen(assets.bootstrap, &assets.late_bootstrap(), 1)
            .replacen(assets.js_tag, "", 1)
            .replacen(assets.wasm_tag, "", 1);
        // The inline pages still name the stylesheet, fetched when the
        // browser is idle, for the record pages a reader opens next (and
        // for `embed.js`, which reads the board page for the viewer's files).
        let inline = format!(
            r#"<style>{stylesheet}</style><link rel="prefetch" href="{}" as="style">"#,
            assets.stylesheet
        );
        Ok(Shell {
            inline: late.replacen(assets.stylesheet_tag, &inline, 1),
            linked: late,
        })
    }

    /// The sha256 of everything the shell puts on a page.
    pub fn fingerprint(&self) -> String {
        fitness_shared::integrity::sha256_hex(
            format!("{}\n{}", self.inline, self.linked).as_bytes(),
        )
    }

    /// A whole document for `page`, with the page's title, its asset paths
    /// led back to the site root, and `body` inside the root element.
    pub fn document(&self, page: &Page, body: &str) -> Result<String, ShellError> {
        let shell = match page {
            Page::Record(_) => &self.linked,
            Page::Board | Page::Server(_) => &self.inline,
        };
        document(shell, page, body)
    }
}

/// A whole document for `page`: `shell` (whose asset paths start `./`)
/// with the page's title, its asset paths led back to the site root, and
/// `body` inside the root element.
fn document(shell: &str, page: &Page, body: &str) -> Result<String, ShellError> {
    let (head, rest) = shell.split_once("</head>").ok_or(ShellError::NoTitle)?;
    let title_start = head.find("<title>").ok_or(ShellError::NoTitle)?;
    let title_end = head[title_start..]
        .find("</title>")
        .map(|i| title_start + i + "</title>".len())
        .ok_or(ShellError::NoTitle)?;
    let title = escape_text(&page_title(&View::from(page)));
    let mut head = format!(
        "{}<title>{title}</title>{}",
        &head[..title_start],
        &head[title_end..]
    );
    let prefix = page.root_prefix();
    if !prefix.is_empty() {
        head = head
            .replace("\"./", &format!("\"{prefix}"))
            .replace("'./", &format!("'{prefix}"));
    }
    if !rest.contains(ROOT_ELEMENT) {
        return Err(ShellError::NoRoot);
    }
    let rest = rest.replacen(
        ROOT_ELEMENT,
        &format!(r#"<div id="fitness-root">{body}</div>"#),
        1,
    );
    Ok(format!("{head}</head>{rest}"))
}

fn escape_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trunk 0.21's `index.html`, in the shape `trunk build --release` writes.
    const TRUNK: &str = r#"<!doctype html><html><head><title>Fitness Report</title>
<script type="module">
import init, * as bindings from './viewer-1.js';
const wasm = await init({ module_or_path: './viewer-1_bg.wasm' });
window.wasmBindings = bindings;
</script>
<link rel="stylesheet" href="./style-1.css" integrity="sha384-css"/>
<link rel="modulepreload" href="./viewer-1.js" crossorigin="anonymous" integrity="sha384-js+/="><link rel="preload" href="./viewer-1_bg.wasm" crossorigin="anonymous" integrity="sha384-wasm" as="fetch" type="application/wasm"></head><body><div id="fitness-root"></div></body></html>"#;

    const CSS: &str = "main { color: red }";

    #[test]
    fn a_page_goes_into_the_root_with_its_title_and_assets_led_to_the_root() {
        let shell = Shell::new(TRUNK, CSS).unwrap();
        let page = Page::Record("r1".into());
        let doc = shell.document(&page, "<main>x</main>").unwrap();
        assert!(
            doc.contains(r#"<div id="fitness-root"><main>x</main></div>"#),
            "{doc}"
        );
        assert!(doc.contains("<title>r1 · Fitness Report</title>"), "{doc}");
        assert!(doc.contains(r#"href="../../style-1.css""#), "{doc}");
        assert!(doc.contains("import('../../viewer-1.js')"), "{doc}");
        assert!(doc.contains("fetch('../../viewer-1_bg.wasm'"), "{doc}");
        let board = shell.document(&Page::Board, "b").unwrap();
        assert!(board.contains("import('./viewer-1.js')"), "{board}");
        assert_eq!(
            Shell::new(
                "<html><head><title>x</title></head><body></body></html>",
                CSS
            ),
            Err(ShellError::NoRoot)
        );
    }

    #[test]
    fn the_viewer_starts_after_the_first_paint_and_keeps_its_integrity() {
        let doc = Shell::new(TRUNK, CSS)
            .unwrap()
            .document(&Page::Board, "b")
            .unwrap();
        // Nothing fetched at once: no preload tags, one bootstrap, which waits
        // for the first paint before it asks for the JavaScript and the wasm.
        assert!(!doc.contains("<link rel=\"modulepreload\""), "{doc}");
        assert!(!doc.contains("<link rel=\"preload\""), "{doc}");
        assert_eq!(doc.matches("<script").count(), 1, "{doc}");
        let wait = doc.find("'first-contentful-paint'").unwrap();
        assert!(wait < doc.find("import('./viewer-1.js')").unwrap(), "{doc}");
        assert!(
            wait < doc.find("fetch('./viewer-1_bg.wasm'").unwrap(),
            "{doc}"
        );
        assert!(doc.contains("integrity: 'sha384-js+/='"), "{doc}");
        assert!(doc.contains("integrity: 'sha384-wasm'"), "{doc}");
    }

    #[test]
    fn the_board_and_server_pages_carry_the_stylesheet_and_a_record_links_it() {
        let shell = Shell::new(TRUNK, CSS).unwrap();
        for page in [Page::Board, Page::Server("s".into())] {
            let doc = shell.document(&page, "b").unwrap();
            assert!(doc.contains("<style>main { color: red }</style>"), "{doc}");
            assert!(!doc.contains("rel=\"stylesheet\""), "{doc}");
            // Named still, fetched when idle (and read by embed.js).
            let root = match page.root_prefix() {
                "" => "./",
                up => up,
            };
            let prefetch = format!(r#"<link rel="prefetch" href="{root}style-1.css" as="style">"#);
            assert!(doc.contains(&prefetch), "{doc}");
        }
        let record = shell.document(&Page::Record("r".into()), "b").unwrap();
        assert!(!record.contains("<style>"), "{record}");
        assert!(record.contains("rel=\"stylesheet\""), "{record}");
    }

    #[test]
    fn a_shell_it_cannot_rewrite_is_refused_not_published_half_done() {
        assert_eq!(
            Shell::new(TRUNK, "a { } </STYLE><script>x</script>"),
            Err(ShellError::StyleCloses)
        );
        let no_preload = TRUNK.replace("rel=\"modulepreload\"", "rel=\"x\"");
        assert_eq!(Shell::new(&no_preload, CSS), Err(ShellError::NotTrunk));
        // An asset path that would break out of the quoted script string.
        let quoted = TRUNK.replace("./viewer-1_bg.wasm", "./v');alert(1);('.wasm");
        assert_eq!(Shell::new(&quoted, CSS), Err(ShellError::NotTrunk));
        let climbing = TRUNK.replace("./style-1.css", "./../style-1.css");
        assert_eq!(Shell::new(&climbing, CSS), Err(ShellError::NotTrunk));
    }
}
