//! What a URL asks the viewer to show (the page, the board's filter, the
//! replay's tapes and deep links), read from the page's path (under the
//! site root, [`fitness_shared::site::Page`]) and its query. Plain Rust with
//! no browser calls, so the pre-rendering step reads URLs the same way the
//! browser does.

use fitness_shared::site::Page;

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
    /// A span of the timeline strip, milliseconds from the run's start:
    /// `&span=FROM-TO`.
    pub span: Option<(u64, u64)>,
    /// A trial read as a conversation: `&trial=CORR_ID`.
    pub trial: Option<String>,
}

/// The page a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// The board (`./`, `?tier=`).
    Board,
    /// One run's record (`runs/<id>/`, or `?run=<id>`).
    Record(String),
    /// Every run of one server (`servers/<slug>/`).
    Server(String),
    /// A replay (`runs/<id>/?view=replay`, `?run=<id>&view=replay`, `?trace=`).
    Replay(ReplaySource),
}

impl View {
    /// The pre-rendered page that shows this view, if one does.
    pub fn page(&self) -> Option<Page> {
        match self {
            View::Board => Some(Page::Board),
            View::Record(id) => Some(Page::Record(id.clone())),
            View::Server(slug) => Some(Page::Server(slug.clone())),
            View::Replay(_) => None,
        }
    }
}

impl From<&Page> for View {
    fn from(page: &Page) -> Self {
        match page {
            Page::Board => View::Board,
            Page::Record(id) => View::Record(id.clone()),
            Page::Server(slug) => View::Server(slug.clone()),
        }
    }
}

/// The page state a URL asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlState {
    pub view: View,
    /// The board's tier filter (`?tier=free|cheap|paid|compromised|scored|unattributed`).
    pub tier: Option<String>,
    /// Replay deep links and filters (`&event=`, `&corr=`, `&arm=`, `&kind=`,
    /// `&span=`, `&trial=`).
    pub links: ReplayLinks,
    /// Iframe mode (`&embed=1`): no masthead or footer.
    pub embed: bool,
}

impl Default for UrlState {
    fn default() -> Self {
        UrlState {
            view: View::Board,
            tier: None,
            links: ReplayLinks::default(),
            embed: false,
        }
    }
}

impl UrlState {
    /// The state of the page at `page` (its path under the site root; `None`
    /// reads as the board) with the query `query` (`?run=abc&tier=free`,
    /// with or without the `?`).
    pub fn parse(page: Option<&Page>, query: &str) -> Self {
        let params = Query::parse(query);
        let run = params
            .get("run")
            .or(match page {
                Some(Page::Record(id)) => Some(id.as_str()),
                _ => None,
            })
            .map(str::to_owned);
        let trace: Vec<String> = params
            .get("trace")
            .map(|t| {
                t.split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let replay = params.get("view") == Some("replay");
        let view = match (trace.is_empty(), run, page) {
            (false, _, _) => View::Replay(ReplaySource::Trace(trace)),
            (true, Some(run), _) if replay => View::Replay(ReplaySource::Run(run)),
            (true, Some(run), _) => View::Record(run),
            (true, None, Some(Page::Server(slug))) => View::Server(slug.clone()),
            (true, None, _) => View::Board,
        };
        UrlState {
            view,
            tier: params.get("tier").map(str::to_owned),
            links: ReplayLinks {
                event: params.get("event").and_then(|e| e.parse().ok()),
                corr: params.get("corr").map(str::to_owned),
                arm: params.get("arm").map(str::to_owned),
                kind: params.get("kind").map(str::to_owned),
                span: params.get("span").and_then(parse_span),
                trial: params.get("trial").map(str::to_owned),
            },
            embed: params.get("embed").is_some_and(|e| e == "1" || e == "true"),
        }
    }
}

/// `FROM-TO` in whole milliseconds, FROM before TO.
fn parse_span(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once('-')?;
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a < b).then_some((a, b))
}

/// A URL query's parameters, decoded (`+` as a space, `%XX` escapes). The
/// first value of a name wins; empty values read as absent.
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn parse(query: &str) -> Self {
        let query = query.strip_prefix('?').unwrap_or(query);
        let query = query.split('#').next().unwrap_or_default();
        Query(
            query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
