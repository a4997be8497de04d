//! Pre-rendering (the `ssr` feature): the viewer's pages as static HTML,
//! rendered from the very components the browser hydrates, for `fitness
//! publish` to write. Nothing here reads or writes a file: the caller hands
//! in the data and the viewer build's `index.html`, and gets strings back.

use std::sync::Arc;

use fitness_shared::board::Board;
use fitness_shared::integrity::SignatureState;
use fitness_shared::record::RunRecord;
use fitness_shared::site::Page;
use leptos::prelude::*;

use crate::app::{App, Preloaded, page_title};
use crate::state::{UrlState, View};

/// The element of the viewer build's `index.html` a page's HTML goes into.
pub const ROOT_ELEMENT: &str = r#"<div id="fitness-root"></div>"#;

/// Why a viewer build's `index.html` cannot hold a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    #[error("the viewer's index.html has no {ROOT_ELEMENT} to render pages into")]
    NoRoot,
    #[error("the viewer's index.html has no <title> element")]
    NoTitle,
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

/// A run's record page, with its signature state as the board row states it.
pub fn record_page(record: Arc<RunRecord>, signature: SignatureState, site_key: bool) -> String {
    let page = Page::Record(record.run.id.clone());
    page_html(&page, move || Preloaded::Record {
        record,
        signature: RwSignal::new(signature),
        site_key,
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

/// A whole document for `page`: the viewer build's `index.html` (`shell`,
/// whose asset paths start `./`) with the page's title, its asset paths led
/// back to the site root, and `body` inside the root element.
pub fn document(shell: &str, page: &Page, body: &str) -> Result<String, ShellError> {
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

    const SHELL: &str = r#"<!doctype html><html><head><title>Fitness Report</title><link rel="stylesheet" href="./style-1.css"><script type="module">import init from './viewer-1.js';</script></head><body><div id="fitness-root"></div></body></html>"#;

    #[test]
    fn a_page_goes_into_the_root_with_its_title_and_assets_led_to_the_root() {
        let page = Page::Record("r1".into());
        let doc = document(SHELL, &page, "<main>x</main>").unwrap();
        assert!(
            doc.contains(r#"<div id="fitness-root"><main>x</main></div>"#),
            "{doc}"
        );
        assert!(doc.contains("<title>r1 · Fitness Report</title>"), "{doc}");
        assert!(doc.contains(r#"href="../../style-1.css""#), "{doc}");
        assert!(doc.contains("from '../../viewer-1.js'"), "{doc}");
        let board = document(SHELL, &Page::Board, "b").unwrap();
        assert!(board.contains(r#"href="./style-1.css""#), "{board}");
        assert_eq!(
            document(
                "<html><head><title>x</title></head><body></body></html>",
                &Page::Board,
                ""
            ),
            Err(ShellError::NoRoot)
        );
    }
}
