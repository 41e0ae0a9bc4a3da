//! The text view of a screen: its windows and the accessibility tree of one
//! window, with refs (`e1`, `e2`, ...) that `computer_act` accepts in place
//! of x/y. The same types serve the JSON (`structuredContent`) and, through
//! [`TextView::render`], the compact text a model reads.

use crate::error::InvalidInput;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// `max_nodes` when none is given, and its limit.
pub const MAX_NODES_DEFAULT: usize = 400;
pub const MAX_NODES_MAX: usize = 5000;
/// How long one window's tree may take to read.
pub const TREE_DEADLINE_MS: u64 = 1000;
/// The rendered text of one view stays under this many characters (bytes
/// of UTF-8), about 50 000 tokens: more than an agent can use in one turn.
/// A page of [`MAX_NODES_MAX`] nodes with long names can pass it, so
/// computerd cuts such a page itself with a cursor for the rest
/// ([`TextView::nodes_within`]); the host refuses or cuts only views
/// that still pass it.
pub const TEXT_VIEW_MAX_CHARS: usize = 200_000;
/// Room left for the note of a view cut at [`TEXT_VIEW_MAX_CHARS`].
const CUT_NOTE_ROOM: usize = 8 * 1024;
/// A node's name or value is cut to this many characters.
pub const TEXT_FIELD_MAX_CHARS: usize = 160;
/// A view nests its nodes at most this many levels below its roots;
/// deeper nodes are listed at this level with their own `depth`. Each
/// level is two levels of JSON, so the deepest view (inside an act
/// result) stays well under the 128 levels `serde_json` reads.
pub const TREE_DEPTH_MAX: usize = 40;

/// What `computer_observe` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// A screenshot only (the default).
    #[default]
    Image,
    /// The windows and one window's accessibility tree, no screenshot.
    Text,
    /// Both.
    Both,
}

impl View {
    pub fn wants_image(self) -> bool {
        matches!(self, View::Image | View::Both)
    }

    pub fn wants_text(self) -> bool {
        matches!(self, View::Text | View::Both)
    }
}

/// The text-view part of an observe request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextViewOptions {
    #[serde(default)]
    pub view: View,
    /// Class or title of the window whose tree is read (case-insensitive
    /// substring); the focused window when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<usize>,
    /// From a previous view that was cut: the next page of that same tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl TextViewOptions {
    /// Checks the ranges; errors name the field, the limit and the fix.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        if let Some(max) = self.max_nodes {
            if !(1..=MAX_NODES_MAX).contains(&max) {
                return Err(InvalidInput(format!(
                    "`max_nodes` is {max}: use 1 to {MAX_NODES_MAX} (default {MAX_NODES_DEFAULT}); page through a longer tree with `cursor`"
                )));
            }
        }
        let text_only = self.window.is_some() || self.max_nodes.is_some() || self.cursor.is_some();
        if text_only && !self.view.wants_text() {
            return Err(InvalidInput(
                "`window`, `max_nodes` and `cursor` shape the text view: add `view: \"text\"` (or `\"both\"`)"
                    .to_string(),
            ));
        }
        if let Some(window) = &self.window {
            if window.trim().is_empty() {
                return Err(InvalidInput(
                    "`window` is empty: give a window class or title, or leave it out for the focused window"
                        .to_string(),
                ));
            }
        }
        if let Some(cursor) = &self.cursor {
            PageCursor::parse(cursor)?;
        }
        Ok(())
    }

    /// A plain screenshot request (what an older host sends).
    pub fn is_image_only(&self) -> bool {
        *self == TextViewOptions::default()
    }

    pub fn max_nodes(&self) -> usize {
        self.max_nodes.unwrap_or(MAX_NODES_DEFAULT)
    }
}

/// Where a cut tree goes on: the view it belongs to and the first node of
/// the next page. Written as `VIEW.OFFSET` (for example `7.400`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCursor {
    pub view_id: u64,
    pub offset: usize,
}

impl PageCursor {
    pub fn parse(text: &str) -> Result<PageCursor, InvalidInput> {
        let bad = || {
            InvalidInput(format!(
                "`cursor` is `{}`: pass the cursor a cut text view returned, unchanged (such as `7.400`)",
                text.chars().take(40).collect::<String>()
            ))
        };
        let (view, offset) = text.split_once('.').ok_or_else(bad)?;
        Ok(PageCursor {
            view_id: view.parse().map_err(|_| bad())?,
            offset: offset.parse().map_err(|_| bad())?,
        })
    }
}

impl std::fmt::Display for PageCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.view_id, self.offset)
    }
}

/// A rectangle in screen pixels; it may reach past the screen's edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bounds {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Bounds {
    /// The part inside `other`, if any.
    pub fn intersect(&self, other: &Bounds) -> Option<Bounds> {
        let left = self.x.max(other.x);
        let top = self.y.max(other.y);
        let right = (i64::from(self.x) + i64::from(self.width))
            .min(i64::from(other.x) + i64::from(other.width));
        let bottom = (i64::from(self.y) + i64::from(self.height))
            .min(i64::from(other.y) + i64::from(other.height));
        (right > i64::from(left) && bottom > i64::from(top)).then(|| Bounds {
            x: left,
            y: top,
            width: (right - i64::from(left)) as u32,
            height: (bottom - i64::from(top)) as u32,
        })
    }

    pub fn centre(&self) -> (i32, i32) {
        (
            self.x + (self.width / 2) as i32,
            self.y + (self.height / 2) as i32,
        )
    }
}

/// One top-level window of the screen.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowEntry {
    /// The X window id.
    pub id: u32,
    pub title: String,
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub focused: bool,
}

/// A window shown over the others without the window manager: a menu, a
/// dropdown, a context menu, a tooltip (an override-redirect window).
/// Apps open one for a click and close it on the next, so it is not among
/// the windows, and the window manager does not list it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PopupEntry {
    /// The X window id.
    pub id: u32,
    /// What the app says it is (`_NET_WM_WINDOW_TYPE`, lowercase, without
    /// its prefix): `popup_menu`, `dropdown_menu`, `menu`, `combo`,
    /// `tooltip`, `notification`; `popup` when it says nothing.
    pub kind: String,
    /// Its app's class, when it names one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    /// What can be clicked in it, when computerd can tell, each with a
    /// ref (in a text view) and its place on the screen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<TextNode>,
    /// How the items were found, when no toolkit told them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_note: Option<String>,
}

impl PopupEntry {
    /// One line: `popup_menu of Chromium @ 10,20 200x300`, then the names
    /// of its items: `: "Browser", "Terminal"`.
    pub fn describe(&self) -> String {
        let mut line = self.placed();
        let names: Vec<String> = self.items.iter().map(|i| format!("{:?}", i.name)).collect();
        if !names.is_empty() {
            line.push_str(": ");
            line.push_str(&names.join(", "));
        }
        line
    }

    /// What it is, whose, and where: `popup_menu of Chromium @ 10,20 200x300`.
    fn placed(&self) -> String {
        let of = if self.class.is_empty() {
            String::new()
        } else {
            format!(" of {}", self.class)
        };
        format!(
            "{}{of} @ {},{} {}x{}",
            self.kind, self.x, self.y, self.width, self.height
        )
    }

    /// The popup's area on the screen.
    pub fn bounds(&self) -> Bounds {
        Bounds {
            x: self.x,
            y: self.y,
            width: self.width,
            height: self.height,
        }
    }
}

impl WindowEntry {
    pub fn bounds(&self) -> Bounds {
        Bounds {
            x: self.x,
            y: self.y,
            width: self.width,
            height: self.height,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    Focused,
    Checked,
    Selected,
    Disabled,
    Expanded,
    Editable,
}

impl NodeState {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Focused => "focused",
            NodeState::Checked => "checked",
            NodeState::Selected => "selected",
            NodeState::Disabled => "disabled",
            NodeState::Expanded => "expanded",
            NodeState::Editable => "editable",
        }
    }
}

/// One node of an accessibility tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TextNode {
    #[serde(rename = "ref")]
    pub node_ref: String,
    pub role: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<NodeState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// The node's depth in the tree (0 for the window or page), given
    /// only for a node deeper than [`TREE_DEPTH_MAX`]: the view lists it
    /// among the children of its ancestor at that level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<TextNode>,
}

/// Where a window's tree came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum TreeSource {
    /// The app's accessibility interface on the screen's own AT-SPI bus.
    Atspi,
    /// The page's accessibility tree from the screen's browser (DevTools).
    Page,
}

/// The text view of a screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TextView {
    /// Refs and cursors belong to this view.
    pub view_id: u64,
    /// Menus, dropdowns and tooltips shown over the windows, topmost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub popups: Vec<PopupEntry>,
    /// The screen's windows, topmost first.
    pub windows: Vec<WindowEntry>,
    /// The window whose tree is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<TreeSource>,
    /// This page of the tree (pre-order from `offset`), nested.
    pub nodes: Vec<TextNode>,
    /// Nodes in the whole tree, and where this page starts.
    pub total_nodes: usize,
    pub offset: usize,
    /// Why there is no tree, or that it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Pass as `cursor` for the next page of a cut tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// True when the view is the same as this session's previous text
    /// view; `nodes` are then left out and its refs stay valid.
    pub unchanged: bool,
}

impl TextView {
    /// Nodes in this page, counting nested ones.
    pub fn node_count(&self) -> usize {
        fn count(nodes: &[TextNode]) -> usize {
            nodes.iter().map(|n| 1 + count(&n.children)).sum()
        }
        count(&self.nodes)
    }

    /// How many of this page's first nodes (pre-order) fit in `limit`
    /// characters of [`TextView::render`], leaving room for a note that
    /// says where the rest is. All of them when the page fits.
    pub fn nodes_within(&self, limit: usize) -> usize {
        let total = self.render().len();
        if total <= limit {
            return self.node_count();
        }
        let mut lengths = Vec::new();
        line_lengths(&self.nodes, 1, &mut lengths);
        let lines: usize = lengths.iter().sum();
        let mut used = (total - lines) + CUT_NOTE_ROOM;
        let mut fit = 0;
        for length in lengths {
            used += length;
            if used > limit {
                break;
            }
            fit += 1;
        }
        fit
    }

    /// Keeps only the first `keep` nodes of this page (pre-order), the
    /// parents of every kept node included.
    pub fn keep_first(&mut self, keep: usize) {
        keep_first(&mut self.nodes, keep);
    }

    /// The compact text a model reads: the windows, then one indented line
    /// per node, such as `e7 button "Save" [focused] @ 412,300 80x28`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.popups.is_empty() {
            let _ = writeln!(out, "Popups over the windows (topmost first):");
            for p in &self.popups {
                let _ = writeln!(out, "  {:#x} {}", p.id, p.placed());
                for item in &p.items {
                    render_node(&mut out, item, 2);
                }
                if let Some(note) = p.items_note.as_ref().filter(|_| !p.items.is_empty()) {
                    let _ = writeln!(out, "    ({note})");
                }
            }
        }
        let _ = writeln!(out, "Windows (topmost first):");
        if self.windows.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for w in &self.windows {
            let pid = w.pid.map(|p| format!(" pid {p}")).unwrap_or_default();
            let focused = if w.focused { " [focused]" } else { "" };
            let _ = writeln!(
                out,
                "  {:#x} \"{}\" ({}){pid}{focused} @ {},{} {}x{}",
                w.id, w.title, w.class, w.x, w.y, w.width, w.height
            );
        }
        if let Some(id) = self.window {
            let source = match self.source {
                Some(TreeSource::Atspi) => "accessibility tree",
                Some(TreeSource::Page) => "page accessibility tree",
                None => "tree",
            };
            let shown = if self.unchanged {
                format!(
                    "{} nodes, unchanged since your previous text view: its refs still hold",
                    self.total_nodes
                )
            } else if self.total_nodes == 0 {
                "no nodes".to_string()
            } else {
                format!(
                    "nodes {}-{} of {}",
                    self.offset + 1,
                    self.offset + self.node_count(),
                    self.total_nodes
                )
            };
            let _ = writeln!(out, "Tree of window {id:#x} ({source}, {shown}):");
        }
        render_nodes(&mut out, &self.nodes, 1);
        if let Some(note) = &self.note {
            let _ = writeln!(out, "Note: {note}");
        }
        out
    }
}

fn render_nodes(out: &mut String, nodes: &[TextNode], depth: usize) {
    for node in nodes {
        render_node(out, node, depth);
        render_nodes(out, &node.children, depth + 1);
    }
}

/// One node's own line, without its children.
fn render_node(out: &mut String, node: &TextNode, depth: usize) {
    let _ = write!(
        out,
        "{:indent$}{} {}",
        "",
        node.node_ref,
        node.role,
        indent = depth * 2
    );
    if !node.name.is_empty() {
        let _ = write!(out, " {:?}", node.name);
    }
    if let Some(value) = &node.value {
        let _ = write!(out, " = {value:?}");
    }
    if !node.states.is_empty() {
        let states: Vec<&str> = node.states.iter().map(|s| s.as_str()).collect();
        let _ = write!(out, " [{}]", states.join(", "));
    }
    if let Some(b) = &node.bounds {
        let _ = write!(out, " @ {},{} {}x{}", b.x, b.y, b.width, b.height);
    }
    if let Some(depth) = node.depth {
        let _ = write!(out, " (depth {depth})");
    }
    out.push('\n');
}

/// The rendered length of each node's line, in pre-order.
fn line_lengths(nodes: &[TextNode], depth: usize, lengths: &mut Vec<usize>) {
    let mut line = String::new();
    for node in nodes {
        line.clear();
        render_node(&mut line, node, depth);
        lengths.push(line.len());
        line_lengths(&node.children, depth + 1, lengths);
    }
}

/// Keeps the first `keep` nodes of `nodes` in pre-order; returns how many
/// of the budget are left.
fn keep_first(nodes: &mut Vec<TextNode>, mut keep: usize) -> usize {
    let mut kept = 0;
    for node in nodes.iter_mut() {
        if keep == 0 {
            break;
        }
        keep -= 1;
        keep = keep_first(&mut node.children, keep);
        kept += 1;
    }
    nodes.truncate(kept);
    keep
}

/// Cuts `text` to [`TEXT_FIELD_MAX_CHARS`] characters, marking the cut.
pub fn cut_field(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= TEXT_FIELD_MAX_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(TEXT_FIELD_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(r: &str, role: &str, name: &str, children: Vec<TextNode>) -> TextNode {
        TextNode {
            node_ref: r.into(),
            role: role.into(),
            name: name.into(),
            value: None,
            states: vec![],
            bounds: None,
            depth: None,
            children,
        }
    }

    #[test]
    fn renders_one_indented_line_per_node() {
        let mut save = node("e7", "button", "Save", vec![]);
        save.states = vec![NodeState::Focused];
        save.bounds = Some(Bounds {
            x: 412,
            y: 300,
            width: 80,
            height: 28,
        });
        let mut field = node("e8", "text", "Name", vec![]);
        field.value = Some("Ada".into());
        field.depth = Some(57);
        let view = TextView {
            view_id: 3,
            popups: vec![PopupEntry {
                id: 0xc0001f,
                kind: "menu".into(),
                class: "Chromium".into(),
                pid: None,
                x: 300,
                y: 300,
                width: 347,
                height: 332,
                items: vec![],
                items_note: None,
            }],
            windows: vec![WindowEntry {
                id: 0x400001,
                title: "Probe".into(),
                class: "zenity".into(),
                pid: Some(42),
                x: 10,
                y: 20,
                width: 300,
                height: 200,
                focused: true,
            }],
            window: Some(0x400001),
            source: Some(TreeSource::Atspi),
            nodes: vec![node("e6", "dialog", "Probe", vec![save, field])],
            total_nodes: 3,
            offset: 0,
            note: None,
            cursor: None,
            unchanged: false,
        };
        let text = view.render();
        assert!(
            text.starts_with("Popups over the windows (topmost first):\n  0xc0001f menu of Chromium @ 300,300 347x332\nWindows (topmost first):\n"),
            "{text}"
        );
        assert!(
            text.contains("  0x400001 \"Probe\" (zenity) pid 42 [focused] @ 10,20 300x200\n"),
            "{text}"
        );
        assert!(text.contains("nodes 1-3 of 3"), "{text}");
        assert!(text.contains("\n  e6 dialog \"Probe\"\n"), "{text}");
        assert!(
            text.contains("\n    e7 button \"Save\" [focused] @ 412,300 80x28\n"),
            "{text}"
        );
        assert!(
            text.contains("\n    e8 text \"Name\" = \"Ada\" (depth 57)\n"),
            "{text}"
        );
        assert_eq!(view.node_count(), 3);
    }

    #[test]
    fn a_popup_lists_its_items_under_it_and_in_its_description() {
        let mut terminal = node("e2", "menu_item", "Terminal", vec![]);
        terminal.bounds = Some(Bounds {
            x: 363,
            y: 323,
            width: 76,
            height: 14,
        });
        let menu = PopupEntry {
            id: 0x2000b9,
            kind: "popup".into(),
            class: "Fluxbox".into(),
            pid: None,
            x: 362,
            y: 293,
            width: 76,
            height: 43,
            items: vec![node("e1", "menu_item", "Browser", vec![]), terminal],
            items_note: Some("rows of the menu's frame".into()),
        };
        assert_eq!(
            menu.describe(),
            "popup of Fluxbox @ 362,293 76x43: \"Browser\", \"Terminal\""
        );
        let view = TextView {
            view_id: 1,
            popups: vec![menu],
            windows: vec![],
            window: None,
            source: None,
            nodes: vec![],
            total_nodes: 0,
            offset: 0,
            note: None,
            cursor: None,
            unchanged: false,
        };
        let text = view.render();
        assert!(
            text.starts_with("Popups over the windows (topmost first):\n  0x2000b9 popup of Fluxbox @ 362,293 76x43\n    e1 menu_item \"Browser\"\n    e2 menu_item \"Terminal\" @ 363,323 76x14\n    (rows of the menu's frame)\nWindows"),
            "{text}"
        );
    }

    #[test]
    fn options_name_the_field_and_the_limit() {
        let too_many = TextViewOptions {
            view: View::Text,
            max_nodes: Some(5001),
            ..Default::default()
        };
        let err = too_many.validate().unwrap_err().to_string();
        assert!(
            err.contains("`max_nodes` is 5001") && err.contains("5000"),
            "{err}"
        );
        let no_text = TextViewOptions {
            window: Some("xterm".into()),
            ..Default::default()
        };
        assert!(no_text.validate().unwrap_err().0.contains("view"));
        let bad_cursor = TextViewOptions {
            view: View::Text,
            cursor: Some("abc".into()),
            ..Default::default()
        };
        assert!(bad_cursor.validate().unwrap_err().0.contains("`cursor`"));
    }

    #[test]
    fn cursor_round_trips() {
        let c = PageCursor {
            view_id: 7,
            offset: 400,
        };
        assert_eq!(PageCursor::parse(&c.to_string()).unwrap(), c);
        assert!(PageCursor::parse("7").is_err());
        assert!(PageCursor::parse("7.-1").is_err());
    }

    #[test]
    fn bounds_clip_and_centre() {
        let b = Bounds {
            x: -10,
            y: 5,
            width: 40,
            height: 10,
        };
        let screen = Bounds {
            x: 0,
            y: 0,
            width: 100,
            height: 100,
        };
        let clipped = b.intersect(&screen).unwrap();
        assert_eq!((clipped.x, clipped.width), (0, 30));
        assert_eq!(clipped.centre(), (15, 10));
        let outside = Bounds {
            x: 200,
            y: 0,
            width: 5,
            height: 5,
        };
        assert_eq!(outside.intersect(&screen), None);
    }

    #[test]
    fn a_long_page_is_cut_to_its_first_nodes_within_the_limit() {
        let long = "n".repeat(TEXT_FIELD_MAX_CHARS);
        let leaf = |i: usize| node(&format!("e{i}"), "link", &long, vec![]);
        // Two levels: 100 parents of 20 leaves each, 2100 nodes.
        let nodes: Vec<TextNode> = (0..100)
            .map(|p| node(&format!("p{p}"), "list", &long, (0..20).map(leaf).collect()))
            .collect();
        let mut view = TextView {
            view_id: 1,
            popups: vec![],
            windows: vec![],
            window: Some(1),
            source: Some(TreeSource::Page),
            nodes,
            total_nodes: 2100,
            offset: 0,
            note: None,
            cursor: None,
            unchanged: false,
        };
        assert!(view.render().len() > 300_000);
        let fit = view.nodes_within(100_000);
        assert!(fit > 100 && fit < 2100, "{fit}");
        view.keep_first(fit);
        assert_eq!(view.node_count(), fit);
        let text = view.render();
        assert!(text.len() + CUT_NOTE_ROOM <= 100_000, "{}", text.len());
        // Kept in order: the first parent and all its leaves come first.
        assert_eq!(view.nodes[0].children.len(), 20);
        assert_eq!(
            view.nodes_within(100_000),
            fit,
            "a fitting page stays whole"
        );
    }

    #[test]
    fn long_fields_are_cut() {
        let long = "x".repeat(500);
        let cut = cut_field(&long);
        assert_eq!(cut.chars().count(), TEXT_FIELD_MAX_CHARS);
        assert!(cut.ends_with('…'));
    }
}
