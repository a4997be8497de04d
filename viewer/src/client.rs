//! The viewer in the browser (wasm only): hydrate the page `fitness
//! publish` pre-rendered when the URL asks for exactly that page, or render
//! the page the URL asks for, and follow links between the viewer's own
//! pages in place (history `pushState`; Back and Forward render the page
//! they name).

use std::cell::RefCell;
use std::sync::Arc;

use fitness_shared::site::Page;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::app::{App, Preloaded, page_title};
use crate::url_state::{UrlState, View};
use crate::{api, routes};

thread_local! {
    /// The site root's absolute path (`/`, or `/sub/` on a site hosted
    /// below the domain's root), learnt from the first page.
    static ROOT: RefCell<String> = RefCell::new("/".to_owned());
}

/// The page a pre-rendered root element says it holds (`data-page`,
/// `data-id`), if it was rendered by these very views (`data-build`).
fn rendered_page(app: &web_sys::Element) -> Option<Page> {
    if app.get_attribute("data-build").as_deref() != Some(crate::app::VIEW_BUILD) {
        if app.has_attribute("data-page") {
            leptos::logging::warn!(
                "this page was pre-rendered by another build of the viewer; rendering it afresh"
            );
        }
        return None;
    }
    let id = app.get_attribute("data-id").unwrap_or_default();
    match app.get_attribute("data-page")?.as_str() {
        "board" => Some(Page::Board),
        "record" => Some(Page::Record(id)),
        "server" => Some(Page::Server(id)),
        _ => None,
    }
}

/// The site root of `pathname` and the page it names: `/a/runs/x/` is the
/// record page `x` of the site at `/a/`; a path no page has is the board
/// of the site at its directory.
pub fn split_path(pathname: &str) -> (String, Page) {
    let dir = match pathname.rfind('/') {
        Some(i) => &pathname[..=i],
        None => "/",
    };
    let inner = dir.trim_end_matches('/');
    let mut parts = inner.rsplitn(3, '/');
    if let (Some(name), Some(kind), Some(root)) = (parts.next(), parts.next(), parts.next())
        && let Some(page) = Page::parse(&format!("{kind}/{name}/"))
    {
        return (format!("{root}/"), page);
    }
    (dir.to_owned(), Page::Board)
}

/// The page `pathname` names under the site root, if it is one of the
/// viewer's pages.
fn page_of(pathname: &str) -> Option<Page> {
    let root = ROOT.with(|r| r.borrow().clone());
    Page::parse(pathname.strip_prefix(&root)?)
}

/// Start the viewer on its own page.
pub fn start() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(document) = window.document() else {
        return;
    };
    let location = window.location();
    let pathname = location.pathname().unwrap_or_default();
    let search = location.search().unwrap_or_default();
    let rendered = document
        .get_element_by_id("fitness-app")
        .and_then(|el| rendered_page(&el));
    let (root, here) = split_path(&pathname);
    let here = rendered.clone().unwrap_or(here);
    ROOT.with(|r| *r.borrow_mut() = root);
    api::set_base(here.root_prefix());
    let wanted = UrlState::parse(Some(&here), &search);
    let Some(mount) = document
        .get_element_by_id("fitness-root")
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        .or_else(|| document.body())
    else {
        return;
    };
    match rendered {
        Some(page) if wanted.view == View::from(&page) && !wanted.embed => {
            // Leptos starts its executor when it mounts; until then the
            // browser's own runs this.
            wasm_bindgen_futures::spawn_local(async move {
                // The page is readable as sent: let the browser paint it
                // before the hydration's work takes the main thread.
                after_paint().await;
                match preload(&page).await {
                    Ok((data, after)) => hydrate(mount, wanted, data, after),
                    // The static page stays readable until the page in the
                    // browser, which states the error, replaces it.
                    Err(_) => render(mount, wanted),
                }
            });
        }
        _ => render(mount, wanted),
    }
}

/// Resolves once the browser has painted a frame (the next animation frame,
/// then a task after it).
async fn after_paint() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let frame = js_sys::Promise::new(&mut |resolve, _| {
        let _ = window.request_animation_frame(&resolve);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(frame).await;
    let task = js_sys::Promise::new(&mut |resolve, _| {
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(task).await;
}

/// What a pre-rendered page was rendered from, and what changes once the
/// page is live (the signature state as the browser checks it).
async fn preload(page: &Page) -> Result<(Preloaded, Box<dyn FnOnce()>), String> {
    match page {
        Page::Board | Page::Server(_) => {
            let board = api::fetch_board().await?;
            Ok((Preloaded::Board(board), Box::new(|| {})))
        }
        Page::Record(id) => {
            let loaded = routes::record::load_record(id.clone()).await?;
            let checked = loaded.signature.clone();
            let signature = RwSignal::new(loaded.published.unwrap_or_else(|| checked.clone()));
            let data = Preloaded::Record {
                record: Arc::clone(&loaded.record),
                signature,
                site_key: loaded.site_key,
                row: loaded.row.clone(),
                candidates: loaded.candidates.clone(),
            };
            Ok((data, Box::new(move || signature.set(checked))))
        }
    }
}

fn hydrate(
    mount: web_sys::HtmlElement,
    wanted: UrlState,
    data: Preloaded,
    after: Box<dyn FnOnce()>,
) {
    // The page was rendered unfiltered: hydrate it as it is, then apply
    // the URL's filter in place.
    let state = RwSignal::new(UrlState {
        tier: None,
        ..wanted.clone()
    });
    let ready = RwSignal::new(false);
    let handle = leptos::mount::hydrate_from(mount, move || {
        view! { <App state=state preloaded=Some(data) ready=ready /> }
    });
    handle.forget();
    install_navigation(state);
    ready.set(true);
    state.set(wanted);
    after();
}

fn render(mount: web_sys::HtmlElement, wanted: UrlState) {
    mount.set_inner_html("");
    let state = RwSignal::new(wanted);
    let ready = RwSignal::new(true);
    let handle = leptos::mount::mount_to(mount, move || {
        view! { <App state=state ready=ready /> }
    });
    handle.forget();
    install_navigation(state);
}

/// Show the page `page` with the query `search`.
fn navigate(state: RwSignal<UrlState>, page: &Page, search: &str) {
    api::set_base(page.root_prefix());
    let next = UrlState::parse(Some(page), search);
    if let Some(document) = web_sys::window().and_then(|w| w.document()) {
        document.set_title(&page_title(&next.view));
    }
    state.set(next);
}

/// Follow links to the viewer's own pages (same origin, a page under the
/// site root, another path or query) without reloading. A click with a
/// modifier key or another button, a link with a `target` or `download`,
/// a link elsewhere (a tape, a JSON file, a badge) and a fragment link on
/// the same page are left to the browser.
fn install_navigation(state: RwSignal<UrlState>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let on_click = Closure::<dyn Fn(web_sys::MouseEvent)>::new(move |ev: web_sys::MouseEvent| {
        if ev.default_prevented()
            || ev.button() != 0
            || ev.meta_key()
            || ev.ctrl_key()
            || ev.shift_key()
            || ev.alt_key()
        {
            return;
        }
        let Some(link) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a[href]").ok().flatten())
        else {
            return;
        };
        if link.has_attribute("target") || link.has_attribute("download") {
            return;
        }
        let Some(window) = web_sys::window() else {
            return;
        };
        let (Ok(here), Some(href)) = (window.location().href(), link.get_attribute("href")) else {
            return;
        };
        let (Ok(to), Ok(from)) = (
            web_sys::Url::new_with_base(&href, &here),
            web_sys::Url::new(&here),
        ) else {
            return;
        };
        if to.origin() != from.origin()
            || (to.pathname() == from.pathname() && to.search() == from.search())
        {
            return;
        }
        let Some(page) = page_of(&to.pathname()) else {
            return;
        };
        ev.prevent_default();
        let Ok(history) = window.history() else {
            return;
        };
        if history
            .push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&to.href()))
            .is_err()
        {
            return;
        }
        navigate(state, &page, &to.search());
        if to.hash().is_empty() {
            window.scroll_to_with_x_and_y(0.0, 0.0);
        }
    });
    let on_pop = Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
        let Some(window) = web_sys::window() else {
            return;
        };
        let location = window.location();
        let pathname = location.pathname().unwrap_or_default();
        match page_of(&pathname) {
            Some(page) => navigate(state, &page, &location.search().unwrap_or_default()),
            None => {
                let _ = location.reload();
            }
        }
    });
    let _ = window.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
    let _ = window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
    // Both live as long as the page.
    on_click.forget();
    on_pop.forget();
}
