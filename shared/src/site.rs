//! The published site's layout: every path a site written by `fitness
//! publish` holds, relative to the site's root, in one place. The recorder
//! writes files at these paths and the viewer fetches and links them, so a
//! path is spelled once, here.
//!
//! ```text
//! index.html                      the board, pre-rendered
//! data/board.json                 the board index (one compact row per run)
//! runs/<id>/index.html            a run's record page, pre-rendered
//! runs/<id>/record.json           the run's record (canonical, maybe signed)
//! runs/<id>/<tape>                its tapes (`mcp.jsonl`, `agent.jsonl`), `.gz` beside
//! servers/<slug>/index.html       every run of one server, pre-rendered
//! standing-notes/<hex>.json       a standing-notes set, published once
//! badges/<slug>.svg               the badge of a server's newest run
//! ```
//!
//! Pages are directories (`runs/<id>/`), so any static host serves them.
//! Every function that builds a path from an id refuses ids that could leave
//! their directory (`None`): a run id, slug or tape path read from a record
//! or a URL never names a file elsewhere.

use crate::tape::Plane;

/// The board index.
pub const BOARD_JSON: &str = "data/board.json";
/// The file a page directory holds.
pub const PAGE_FILE: &str = "index.html";
/// A run's record, inside its run directory.
pub const RECORD_FILE: &str = "record.json";
/// Where run directories live.
pub const RUNS_DIR: &str = "runs";
/// Where server history pages live.
pub const SERVERS_DIR: &str = "servers";
/// Where standing-notes sets live.
pub const STANDING_NOTES_DIR: &str = "standing-notes";
/// Where badges live.
pub const BADGES_DIR: &str = "badges";
/// The wire tape's file in a run directory.
pub const MCP_TAPE: &str = "mcp.jsonl";
/// The agent tape's file in a run directory.
pub const AGENT_TAPE: &str = "agent.jsonl";
/// The tape files a run directory holds, by plane.
pub const TAPE_FILES: [(Plane, &str); 2] = [(Plane::Mcp, MCP_TAPE), (Plane::Agent, AGENT_TAPE)];
/// A run's task suite, beside its tapes (hashed; `--suite` reuses it).
pub const SUITE_FILE: &str = "suite.json";
/// The candidates a run's admission rejected, each with its rule.
pub const CANDIDATES_FILE: &str = "candidates.json";
/// A run's pre-registration, written before its first model call.
pub const PREREGISTRATION_FILE: &str = "preregistration.json";

/// The file extension batch `index` of a run's suite is kept in, beside
/// [`SUITE_FILE`].
pub fn suite_batch_file(index: u64) -> String {
    format!("suite-x{index}.json")
}

/// The file name of a plane's tape in a run directory.
pub fn tape_file(plane: Plane) -> &'static str {
    match plane {
        Plane::Mcp => TAPE_FILES[0].1,
        Plane::Agent => TAPE_FILES[1].1,
    }
}

/// Whether `s` can name a directory or file of the site: ASCII letters,
/// digits, `-`, `_` and `.`, not empty, and not `.`, `..` or containing `..`.
pub fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && !s.contains("..")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `runs/<id>/`: a run's directory and its record page.
pub fn run_dir(run_id: &str) -> Option<String> {
    is_segment(run_id).then(|| format!("{RUNS_DIR}/{run_id}/"))
}

/// `runs/<id>/record.json`.
pub fn record_json(run_id: &str) -> Option<String> {
    run_dir(run_id).map(|d| format!("{d}{RECORD_FILE}"))
}

/// `runs/<id>/candidates.json`: the candidates the run's admission rejected.
pub fn candidates_json(run_id: &str) -> Option<String> {
    run_dir(run_id).map(|d| format!("{d}{CANDIDATES_FILE}"))
}

/// `runs/<id>/?view=replay`: the run's replay (rendered in the browser).
pub fn replay(run_id: &str) -> Option<String> {
    run_dir(run_id).map(|d| format!("{d}?view=replay"))
}

/// `runs/<id>/?view=replay&trial=<corr_id>`: the run's replay opened on
/// one trial read as a conversation, every attempt of it in turn.
pub fn replay_trial(run_id: &str, corr_id: &str) -> Option<String> {
    replay(run_id).map(|p| format!("{p}&trial={}", query_value(corr_id)))
}

/// A value percent-encoded for a URL query: ASCII letters, digits and
/// `-_.~` as they are, every other byte as `%XX`.
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A tape a run's record names. `tape` is the record's `tapes[].path`,
/// relative to the run directory; paths that could leave it are refused.
pub fn tape(run_id: &str, tape: &str) -> Option<String> {
    let dir = run_dir(run_id)?;
    let ok = !tape.is_empty() && tape.split('/').all(is_segment);
    ok.then(|| format!("{dir}{tape}"))
}

/// `servers/<slug>/`: every run of one server.
pub fn server_page(slug: &str) -> Option<String> {
    is_segment(slug).then(|| format!("{SERVERS_DIR}/{slug}/"))
}

/// `badges/<slug>.svg`.
pub fn badge(slug: &str) -> Option<String> {
    is_segment(slug).then(|| format!("{BADGES_DIR}/{slug}.svg"))
}

/// `standing-notes/<hex>.json`, from the set's id (`sha256:<hex>`).
pub fn standing_notes(set_id: &str) -> Option<String> {
    let hex = set_id.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("{STANDING_NOTES_DIR}/{hex}.json"))
}

/// A pre-rendered page of the site.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Page {
    /// `./`: the board.
    Board,
    /// `runs/<id>/`: one run's record.
    Record(String),
    /// `servers/<slug>/`: every run of one server.
    Server(String),
}

impl Page {
    /// The page a path relative to the site root names (`""`, `index.html`,
    /// `runs/<id>/`, `servers/<slug>/index.html`, ...), if any.
    pub fn parse(path: &str) -> Option<Page> {
        let path = path.strip_suffix(PAGE_FILE).unwrap_or(path);
        if path.is_empty() {
            return Some(Page::Board);
        }
        let inner = path.strip_suffix('/')?;
        let (dir, name) = inner.split_once('/')?;
        if !is_segment(name) {
            return None;
        }
        match dir {
            RUNS_DIR => Some(Page::Record(name.to_owned())),
            SERVERS_DIR => Some(Page::Server(name.to_owned())),
            _ => None,
        }
    }

    /// The page's directory relative to the site root (`""` for the board).
    /// `None` for an id that [`is_segment`] refuses.
    pub fn dir(&self) -> Option<String> {
        match self {
            Page::Board => Some(String::new()),
            Page::Record(id) => run_dir(id),
            Page::Server(slug) => server_page(slug),
        }
    }

    /// The prefix that leads from this page back to the site root, for
    /// relative links: `""` on the board, `"../../"` one directory pair down.
    pub fn root_prefix(&self) -> &'static str {
        match self {
            Page::Board => "",
            Page::Record(_) | Page::Server(_) => "../../",
        }
    }
}

/// Join a site path onto a prefix that leads to the site root (`""`,
/// `"../../"`, or a site URL ending in `/`). The board is `./` on its own
/// page and the bare prefix elsewhere.
pub fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path) {
        (true, "") => "./".to_owned(),
        (false, "" | "./") => prefix.to_owned(),
        _ => format!("{prefix}{path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_built_once_and_refuse_escapes() {
        assert_eq!(run_dir("a-1").as_deref(), Some("runs/a-1/"));
        assert_eq!(record_json("a-1").as_deref(), Some("runs/a-1/record.json"));
        assert_eq!(
            tape("a-1", "mcp.jsonl").as_deref(),
            Some("runs/a-1/mcp.jsonl")
        );
        assert_eq!(replay("a-1").as_deref(), Some("runs/a-1/?view=replay"));
        assert_eq!(
            replay_trial("a-1", "t 1::state").as_deref(),
            Some("runs/a-1/?view=replay&trial=t%201%3A%3Astate")
        );
        assert_eq!(replay_trial("../x", "t1"), None);
        assert_eq!(server_page("svelte").as_deref(), Some("servers/svelte/"));
        assert_eq!(badge("svelte").as_deref(), Some("badges/svelte.svg"));
        for bad in ["", "..", "a/b", "a\\b", "a:b", "x..y", "é"] {
            assert_eq!(run_dir(bad), None, "{bad:?}");
        }
        for bad in ["", "/etc/passwd", "../x", "a//b", "c:/x", "a/../b"] {
            assert_eq!(tape("ok", bad), None, "{bad:?}");
        }
        assert_eq!(standing_notes("sha256:abc"), None);
        let hex = "0".repeat(64);
        assert_eq!(
            standing_notes(&format!("sha256:{hex}")),
            Some(format!("standing-notes/{hex}.json"))
        );
    }

    #[test]
    fn pages_parse_from_their_paths_and_lead_back_to_the_root() {
        assert_eq!(Page::parse(""), Some(Page::Board));
        assert_eq!(Page::parse("index.html"), Some(Page::Board));
        assert_eq!(Page::parse("runs/r1/"), Some(Page::Record("r1".into())));
        assert_eq!(
            Page::parse("runs/r1/index.html"),
            Some(Page::Record("r1".into()))
        );
        assert_eq!(Page::parse("servers/s/"), Some(Page::Server("s".into())));
        for not_a_page in [
            "runs/r1",
            "runs/r1/mcp.jsonl",
            "data/board.json",
            "runs/../",
            "x/y/",
        ] {
            assert_eq!(Page::parse(not_a_page), None, "{not_a_page:?}");
        }
        let record = Page::Record("r1".into());
        assert_eq!(record.dir().as_deref(), Some("runs/r1/"));
        assert_eq!(join(record.root_prefix(), "./"), "../../");
        assert_eq!(join(record.root_prefix(), "runs/r2/"), "../../runs/r2/");
        assert_eq!(join(Page::Board.root_prefix(), "./"), "./");
        assert_eq!(join("", "?tier=free"), "?tier=free");
        assert_eq!(join("https://x.example/", "./"), "https://x.example/");
    }
}
