//! The text view of a screen: its windows and the accessibility tree of
//! one window, with refs that `computer_act` takes in place of x/y.
//!
//! - The screen's popups (menus, dropdowns, tooltips), its windows and the
//!   one a view is about (named by class or title, else the focused one)
//!   come from [`crate::windows`].
//! - [`page_tree`]: the tree of the page in the screen's browser, over its
//!   DevTools connection, placed in screen pixels.
//! - [`atspi_tree`]: the tree of any other app, over the screen's own
//!   AT-SPI bus ([`crate::a11y`]).
//! - [`dropdown`]: the options of an open `<select>`, placed in the
//!   browser's popup that lists them.
//! - [`flat`]: both trees as one pre-order list with depths, nested again
//!   page by page.
//!
//! A view flows: windows → the chosen window's tree (1 s at most) → a
//! [`TextSnapshot`] the desktop keeps for the session (refs `e{first_ref + i}`, and the
//! pages a cursor reads) → the first page as a [`TextView`]. Refs number
//! on across a session's views, so a ref from an older view is never
//! mistaken for a node of the latest one.

mod atspi_tree;
mod dropdown;
mod flat;
mod page_tree;

pub use atspi_tree::fill_popup_items;
pub use flat::FlatNode;

/// Why a text view, or a ref into one, cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum TextViewError {
    /// The agent named what is not there (a cursor of an older view, a
    /// window, a ref); the message names the argument and the fix.
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error(transparent)]
    Screen(#[from] ScreenError),
    #[error(transparent)]
    X(#[from] XFault),
}

use crate::a11y::A11yHandle;
use crate::browser::Browser;
use crate::display::XFault;
use crate::screens::{Screen, ScreenError};
use crate::windows::{list_popups, list_windows, pick};
use computer_protocol::textview::{MAX_NODES_MAX, TEXT_VIEW_MAX_CHARS, TREE_DEADLINE_MS};
use computer_protocol::{
    Bounds, InvalidInput, NodeState, PageCursor, PopupEntry, TextView, TextViewOptions, TreeSource,
    WindowEntry,
};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

/// Nodes kept of one tree; a cursor pages through them.
const TREE_NODES_KEPT: usize = 4 * MAX_NODES_MAX;

/// How long the popups' items may take to read over AT-SPI; a popup
/// whose app is slower is listed without them.
pub const POPUP_ITEMS_DEADLINE: Duration = Duration::from_millis(2000);

/// One text view as the session keeps it.
#[derive(Debug)]
pub struct TextSnapshot {
    pub view_id: u64,
    /// The ref number of the first popup's first item; the popups' items
    /// number on from here, and the tree's nodes after them.
    pub first_popup_ref: u64,
    /// The ref number of `nodes[0]`.
    pub first_ref: u64,
    /// Menus, dropdowns and tooltips over the windows, topmost first, with
    /// their items' refs.
    pub popups: Vec<PopupEntry>,
    pub windows: Vec<WindowEntry>,
    /// The window whose tree this is, as it was then.
    pub window: Option<WindowEntry>,
    pub source: Option<TreeSource>,
    pub nodes: Vec<FlatNode>,
    pub note: Option<String>,
    /// What the unchanged rule compares.
    pub key: u64,
}

/// A session's text views: the latest one and the counters.
#[derive(Debug, Default)]
pub struct TextViews {
    latest: Option<Arc<TextSnapshot>>,
    views: u64,
    refs: u64,
}

impl TextViews {
    pub fn latest(&self) -> Option<Arc<TextSnapshot>> {
        self.latest.clone()
    }
}

/// Builds the text view `options` ask for (the next page of the latest
/// view when they carry a cursor).
pub async fn text_view(
    screen: &Arc<Screen>,
    browser: Option<Arc<Browser>>,
    views: &Mutex<TextViews>,
    options: &TextViewOptions,
) -> Result<TextView, TextViewError> {
    let max_nodes = options.max_nodes();
    if let Some(cursor) = &options.cursor {
        let cursor = PageCursor::parse(cursor)?;
        let latest = views.lock().latest();
        return match latest {
            Some(snapshot) if snapshot.view_id == cursor.view_id => {
                if cursor.offset >= snapshot.nodes.len() {
                    return Err(TextViewError::InvalidInput(InvalidInput(format!(
                        "`cursor` {cursor} is past the end: view {} has {} nodes",
                        snapshot.view_id,
                        snapshot.nodes.len()
                    ))));
                }
                Ok(page(&snapshot, cursor.offset, max_nodes, false))
            }
            _ => Err(TextViewError::InvalidInput(InvalidInput(format!(
                "`cursor` {cursor} belongs to an older text view; take a new one with `computer_observe` and view text"
            )))),
        };
    }
    let menus = screen.wm_menus();
    let (mut popups, listed) = screen
        .with_x(move |x| {
            let mut popups = list_popups(&x.display)?;
            menus.fill_items(&x.display, &mut popups)?;
            Ok::<_, XFault>((popups, list_windows(&x.display)?))
        })
        .await??;
    let target = pick(&listed, options.window.as_deref())?.cloned();
    let browser_pid = browser.as_ref().map(|b| b.pid());
    let (source, mut nodes, note) = match &target {
        None => (
            None,
            Vec::new(),
            Some("no window has the focus: name one with `window` (class or title)".to_string()),
        ),
        Some(window) => read_tree(screen, browser.clone(), window).await,
    };
    let of_browser = |popup: &PopupEntry| is_browser_app(popup.pid, &popup.class, browser_pid);
    let mut select_list = None;
    if source == Some(TreeSource::Page) {
        dropdown::place_open_options(&mut nodes, &popups, of_browser);
        select_list = dropdown::open_select_list(&nodes, &popups, of_browser);
    }
    // The open `<select>`'s options come from the page: its list is not
    // read again over AT-SPI.
    let unread = popups.iter_mut().filter(|p| Some(p.id) != select_list);
    atspi_tree::fill_popup_items(screen, browser.as_deref(), unread, POPUP_ITEMS_DEADLINE).await;
    let key = flat::content_key(&popups, &listed, target.as_ref().map(|w| w.id), &nodes);
    let mut views = views.lock();
    if let Some(latest) = views.latest.clone().filter(|l| l.key == key) {
        return Ok(page(&latest, 0, max_nodes, true));
    }
    views.views += 1;
    let first_popup_ref = views.refs + 1;
    let first_ref = number_popup_items(&mut popups, first_popup_ref);
    let snapshot = Arc::new(TextSnapshot {
        view_id: views.views,
        first_popup_ref,
        first_ref,
        popups,
        windows: listed,
        window: target,
        source,
        nodes,
        note,
        key,
    });
    views.refs = first_ref - 1 + snapshot.nodes.len() as u64;
    views.latest = Some(Arc::clone(&snapshot));
    drop(views);
    Ok(page(&snapshot, 0, max_nodes, false))
}

/// Gives the popups' items refs from `first`; returns the next free one.
fn number_popup_items(popups: &mut [PopupEntry], first: u64) -> u64 {
    let mut next = first;
    for item in popups.iter_mut().flat_map(|p| p.items.iter_mut()) {
        item.node_ref = format!("e{next}");
        next += 1;
    }
    next
}

/// The window's tree: the page's when it is the screen's browser, else the
/// app's over AT-SPI; a note says why there is none.
async fn read_tree(
    screen: &Arc<Screen>,
    browser: Option<Arc<Browser>>,
    window: &WindowEntry,
) -> (Option<TreeSource>, Vec<FlatNode>, Option<String>) {
    let deadline = Duration::from_millis(TREE_DEADLINE_MS);
    let what = format!("\"{}\" ({})", window.title, window.class);
    if let Some(browser) = browser.filter(|b| is_browser_window(window, b.pid())) {
        let read = page_tree::page_tree(browser.cdp(), window, TREE_NODES_KEPT);
        return match tokio::time::timeout(deadline, read).await {
            Ok(Ok(Some(nodes))) => (Some(TreeSource::Page), nodes, None),
            Ok(Ok(None)) => (None, Vec::new(), Some(format!("{what} shows no page"))),
            Ok(Err(e)) => (None, Vec::new(), Some(format!("the page tree of {what} could not be read: {e}"))),
            Err(_) => (
                None,
                Vec::new(),
                Some(format!("the page tree of {what} did not answer within {TREE_DEADLINE_MS} ms; observe again, or use the screenshot")),
            ),
        };
    }
    atspi_tree::window_tree(screen, window, TREE_NODES_KEPT, deadline).await
}

fn is_browser_window(window: &WindowEntry, browser_pid: i32) -> bool {
    is_browser_app(window.pid, &window.class, Some(browser_pid))
}

/// A window or popup of the screen's browser: by its process, or by its
/// class when the process is not known.
fn is_browser_app(pid: Option<u32>, class: &str, browser_pid: Option<i32>) -> bool {
    pid.zip(browser_pid)
        .is_some_and(|(p, b)| i64::from(p) == i64::from(b))
        || class.to_lowercase().contains("chromium")
}

/// Nodes `offset..offset + max_nodes` of a snapshot as a view, fewer when
/// their text would pass [`TEXT_VIEW_MAX_CHARS`]: an honest long page is
/// cut here with a cursor for the rest, never refused by the host.
fn page(snapshot: &TextSnapshot, offset: usize, max_nodes: usize, unchanged: bool) -> TextView {
    let view = page_of(snapshot, offset, max_nodes, unchanged, None);
    let fit = view.nodes_within(TEXT_VIEW_MAX_CHARS);
    if fit >= view.node_count() {
        return view;
    }
    // At least one node, so a cursor always moves on.
    page_of(
        snapshot,
        offset,
        fit.max(1),
        unchanged,
        Some(TEXT_VIEW_MAX_CHARS),
    )
}

/// [`page`] with `max_nodes` as given; `cut_at` names the text limit
/// that chose it.
fn page_of(
    snapshot: &TextSnapshot,
    offset: usize,
    max_nodes: usize,
    unchanged: bool,
    cut_at: Option<usize>,
) -> TextView {
    let total = snapshot.nodes.len();
    let shown = if unchanged {
        0
    } else {
        max_nodes.min(total - offset.min(total))
    };
    let next = offset + shown;
    let cut = !unchanged && next < total;
    let cursor = cut.then(|| {
        PageCursor {
            view_id: snapshot.view_id,
            offset: next,
        }
        .to_string()
    });
    let why = cut_at
        .map(|limit| format!(" (its text keeps to {limit} characters)"))
        .unwrap_or_default();
    let cut_note = cut.then(|| {
        format!(
            "the tree has {total} nodes and this view shows {}-{next}{why}: pass `cursor` {} for the next ones",
            offset + 1,
            cursor.as_deref().unwrap_or_default()
        )
    });
    let note = match (&snapshot.note, cut_note) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.clone().or(b),
    };
    TextView {
        view_id: snapshot.view_id,
        popups: snapshot.popups.clone(),
        windows: snapshot.windows.clone(),
        window: snapshot.window.as_ref().map(|w| w.id),
        source: snapshot.source,
        nodes: if unchanged {
            Vec::new()
        } else {
            flat::nest(&snapshot.nodes, snapshot.first_ref, offset, shown)
        },
        total_nodes: total,
        offset,
        note,
        cursor,
        unchanged,
    }
}

/// What a ref stands for when an action runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefTarget {
    /// The centre of the part of the node inside its window.
    Point(i32, i32),
    /// The centre of an item of popup `popup`, which must still be shown.
    InPopup { x: i32, y: i32, popup: u32 },
    /// A node of an app that reports no positions: a click runs its own
    /// action, or focuses it (`focus`: editable, or without actions;
    /// nothing to do when it has the focus already).
    Accessible {
        handle: A11yHandle,
        focus: bool,
        focused: bool,
    },
}

/// What `element` of the session's latest text view stands for. Errors
/// ask for a new text view.
pub fn resolve_ref(
    snapshot: Option<&TextSnapshot>,
    element: &str,
    field: &str,
) -> Result<RefTarget, TextViewError> {
    let Some(snapshot) = snapshot else {
        return Err(TextViewError::InvalidInput(InvalidInput(format!(
            "{field} is `{element}` but this session has no text view yet: call `computer_observe` with view text first"
        ))));
    };
    let number: u64 = element.trim_start_matches('e').parse().unwrap_or(0);
    let last = snapshot.first_ref + snapshot.nodes.len() as u64;
    if (snapshot.first_popup_ref..snapshot.first_ref).contains(&number) {
        let node_ref = format!("e{number}");
        let placed = snapshot.popups.iter().find_map(|p| {
            p.items
                .iter()
                .find(|i| i.node_ref == node_ref)
                .and_then(|i| i.bounds)
                .map(|b| (p.id, b.centre()))
        });
        if let Some((popup, (x, y))) = placed {
            return Ok(RefTarget::InPopup { x, y, popup });
        }
    }
    let Some(node) = number
        .checked_sub(snapshot.first_ref)
        .filter(|_| number < last)
        .and_then(|i| snapshot.nodes.get(i as usize))
    else {
        let range = if last == snapshot.first_popup_ref {
            "no refs".to_string()
        } else {
            format!("refs e{} to e{}", snapshot.first_popup_ref, last - 1)
        };
        return Err(TextViewError::InvalidInput(InvalidInput(format!(
            "{field} `{element}` is not in this session's latest text view (view {} has {range}): take a new text view with `computer_observe` and view text",
            snapshot.view_id
        ))));
    };
    let area = snapshot.window.as_ref().map(WindowEntry::bounds);
    let visible = node
        .bounds
        .and_then(|b| match area {
            Some(area) => b.intersect(&area),
            None => Some(b),
        })
        .filter(|b: &Bounds| b.width > 0 && b.height > 0);
    match (visible, &node.handle) {
        (Some(b), _) => {
            let (x, y) = b.centre();
            Ok(RefTarget::Point(x, y))
        }
        (None, Some(handle)) if node.bounds.is_none() => Ok(RefTarget::Accessible {
            handle: handle.clone(),
            focus: node.states.contains(&NodeState::Editable) || !handle.acts,
            focused: node.states.contains(&NodeState::Focused),
        }),
        _ => Err(TextViewError::InvalidInput(InvalidInput(format!(
            "{field} `{element}` ({} {:?}) has no visible area on the screen: scroll it into view, then take a new text view",
            node.role, node.name
        )))),
    }
}

/// Checks that the popups of `used` (ids) are still shown where they were
/// in the latest view, so a ref into one still lands on its item: a menu
/// closes at the next click. Blocking.
pub fn check_popups_shown(
    display: &crate::display::Display,
    snapshot: &TextSnapshot,
    used: &[u32],
) -> Result<(), TextViewError> {
    if used.is_empty() {
        return Ok(());
    }
    let now = list_popups(display)?;
    for then in snapshot.popups.iter().filter(|p| used.contains(&p.id)) {
        let same = now
            .iter()
            .any(|p| p.id == then.id && p.bounds() == then.bounds());
        if !same {
            return Err(TextViewError::InvalidInput(InvalidInput(format!(
                "the {} of text view {} has closed or moved: open it again, then take a new text view with `computer_observe`",
                then.describe(),
                snapshot.view_id
            ))));
        }
    }
    Ok(())
}

/// Checks that the window of the latest view is still where it was, so a
/// ref's point still lands on its node. Blocking.
pub fn check_window_unmoved(
    display: &crate::display::Display,
    snapshot: &TextSnapshot,
) -> Result<(), TextViewError> {
    let Some(then) = &snapshot.window else {
        return Ok(());
    };
    let now = list_windows(display)?;
    match now.iter().find(|w| w.id == then.id) {
        None => Err(TextViewError::InvalidInput(InvalidInput(format!(
            "the window \"{}\" of text view {} is gone: take a new text view with `computer_observe`",
            then.title, snapshot.view_id
        )))),
        Some(w) if w.bounds() != then.bounds() => Err(TextViewError::InvalidInput(InvalidInput(format!(
            "the window \"{}\" moved or changed size since text view {}: take a new text view with `computer_observe`",
            then.title, snapshot.view_id
        )))),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::textview::TEXT_FIELD_MAX_CHARS;
    use computer_protocol::{NodeState, TextNode};

    fn snapshot(nodes: Vec<FlatNode>) -> TextSnapshot {
        TextSnapshot {
            view_id: 2,
            first_popup_ref: 41,
            first_ref: 41,
            popups: vec![],
            windows: vec![],
            window: Some(WindowEntry {
                id: 9,
                title: "w".into(),
                class: "c".into(),
                pid: None,
                x: 100,
                y: 100,
                width: 200,
                height: 100,
                focused: true,
            }),
            source: Some(TreeSource::Atspi),
            nodes,
            note: None,
            key: 0,
        }
    }

    fn node(role: &str, bounds: Option<Bounds>, depth: usize) -> FlatNode {
        FlatNode {
            role: role.into(),
            name: "n".into(),
            value: None,
            states: vec![NodeState::Focused],
            bounds,
            handle: None,
            depth,
        }
    }

    #[test]
    fn refs_resolve_to_the_visible_centre_of_their_node() {
        let b = |x, y, w, h| {
            Some(Bounds {
                x,
                y,
                width: w,
                height: h,
            })
        };
        let s = snapshot(vec![
            node("frame", b(100, 100, 200, 100), 0),
            node("button", b(250, 150, 100, 20), 1),
            node("label", None, 1),
        ]);
        assert_eq!(
            resolve_ref(Some(&s), "e41", "`ref`").unwrap(),
            RefTarget::Point(200, 150)
        );
        // Half outside the window: the centre of the inside half.
        assert_eq!(
            resolve_ref(Some(&s), "e42", "`ref`").unwrap(),
            RefTarget::Point(275, 160)
        );
        let err = resolve_ref(Some(&s), "e43", "`actions[0].ref`")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no visible area"), "{err}");
        let err = resolve_ref(Some(&s), "e40", "`actions[0].ref`")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("e41 to e43") && err.contains("new text view"),
            "{err}"
        );
        let err = resolve_ref(None, "e1", "`actions[0].ref`")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no text view yet"), "{err}");
    }

    #[test]
    fn a_popups_items_take_the_refs_before_the_tree_and_hit_outside_the_window() {
        let item = |name: &str, y| TextNode {
            node_ref: String::new(),
            role: "menu_item".into(),
            name: name.into(),
            value: None,
            states: vec![],
            bounds: Some(Bounds {
                x: 600,
                y,
                width: 76,
                height: 14,
            }),
            depth: None,
            children: vec![],
        };
        let mut popups = vec![PopupEntry {
            id: 0x2000b9,
            kind: "popup".into(),
            class: "Fluxbox".into(),
            pid: None,
            x: 600,
            y: 293,
            width: 76,
            height: 43,
            items: vec![item("Browser", 308), item("Terminal", 322)],
            items_note: None,
        }];
        assert_eq!(number_popup_items(&mut popups, 39), 41);
        assert_eq!(popups[0].items[1].node_ref, "e40");
        let mut s = snapshot(vec![node("frame", None, 0)]);
        s.first_popup_ref = 39;
        s.popups = popups;
        // Far outside the view's window (100,100 200x100): a popup is
        // over the windows, not in one.
        assert_eq!(
            resolve_ref(Some(&s), "e40", "`ref`").unwrap(),
            RefTarget::InPopup {
                x: 638,
                y: 329,
                popup: 0x2000b9
            }
        );
        let err = resolve_ref(Some(&s), "e42", "`ref`")
            .unwrap_err()
            .to_string();
        assert!(err.contains("refs e39 to e41"), "{err}");
    }

    #[test]
    fn refs_of_unplaced_nodes_act_through_the_bus() {
        let handle = |acts| {
            Some(A11yHandle {
                bus: ":1.5".into(),
                path: "/org/a11y/atspi/accessible/7".into(),
                acts,
            })
        };
        let mut button = node("button", None, 1);
        button.handle = handle(true);
        let mut field = node("text", None, 1);
        field.handle = handle(true);
        field.states.push(NodeState::Editable);
        let s = snapshot(vec![node("dialog", None, 0), button, field]);
        assert!(matches!(
            resolve_ref(Some(&s), "e42", "`ref`"),
            Ok(RefTarget::Accessible { focus: false, .. })
        ));
        assert!(matches!(
            resolve_ref(Some(&s), "e43", "`ref`"),
            Ok(RefTarget::Accessible { focus: true, .. })
        ));
    }

    #[test]
    fn pages_carry_a_cursor_until_the_end() {
        let s = snapshot(
            (0..5)
                .map(|i| node("item", None, usize::from(i > 0)))
                .collect(),
        );
        let first = page(&s, 0, 2, false);
        assert_eq!(
            (first.node_count(), first.cursor.as_deref()),
            (2, Some("2.2"))
        );
        assert!(first.note.as_deref().unwrap().contains("5 nodes"));
        let last = page(&s, 4, 2, false);
        assert_eq!((last.node_count(), last.cursor), (1, None));
        assert_eq!(last.nodes[0].node_ref, "e45");
        let same = page(&s, 0, 2, true);
        assert!(same.unchanged && same.nodes.is_empty() && same.cursor.is_none());
    }

    /// M5: 5000 nodes with names and values at the field limit pass the
    /// text limit; the page is cut with a cursor, and the next page goes on
    /// where it stopped.
    #[test]
    fn a_page_over_the_text_limit_is_cut_with_a_cursor() {
        let long = |c: char| c.to_string().repeat(TEXT_FIELD_MAX_CHARS);
        let nodes = (0..5000)
            .map(|i| {
                let mut n = node("link", None, usize::from(i > 0));
                n.name = long('n');
                n.value = Some(long('v'));
                n
            })
            .collect();
        let s = snapshot(nodes);
        let first = page(&s, 0, 5000, false);
        assert!(first.render().len() <= TEXT_VIEW_MAX_CHARS);
        let shown = first.node_count();
        assert!(shown > 100 && shown < 5000, "{shown}");
        assert_eq!(first.cursor, Some(format!("2.{shown}")));
        let note = first.note.as_deref().unwrap();
        assert!(
            note.contains(&format!(
                "shows 1-{shown} (its text keeps to {TEXT_VIEW_MAX_CHARS} characters)"
            )),
            "{note}"
        );
        let next = page(&s, shown, 5000, false);
        assert_eq!(next.offset, shown);
        assert_eq!(next.nodes[0].node_ref, format!("e{}", 41 + shown));
    }
}
