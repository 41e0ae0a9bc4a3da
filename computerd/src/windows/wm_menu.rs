//! The window manager's own menus: the desktop's right-click menu and a
//! window's title-bar menu. Fluxbox draws their items itself and tells no
//! toolkit or accessibility interface about them, so they are read from
//! the menu files computerd hands Fluxbox, and placed in equal rows of the
//! menu's frame: Fluxbox gives every row, a separator's too, one height.
//!
//! A menu shows a title above its frame when its file gives one (the
//! desktop menu); a window's menu shows none. A frame whose height is not
//! a whole number of plausible rows, or a file that names what Fluxbox
//! fills in itself (`[include]`, `[workspaces]`, ...), gives no items:
//! the popup is then listed without them, never with guessed ones.

use super::popups::viewable_children;
use crate::display::{Display, XFault};
use computer_protocol::{Bounds, PopupEntry, TextNode};
use std::path::Path;
use x11rb::errors::ReplyError;
use x11rb::rust_connection::RustConnection;

/// The window manager's name, as its check window tells it and popups of
/// its own are classed.
const WINDOW_MANAGER: &str = "Fluxbox";

/// Heights a menu row can have: a font's line and its padding.
const ROW_MIN: u32 = 8;
const ROW_MAX: u32 = 48;

/// Rows a menu file may give; a longer menu is not ours.
const ROWS_MAX: usize = 64;

/// Said of items placed this way, so nobody takes them for a toolkit's.
const ITEMS_NOTE: &str = "items from Fluxbox's menu file, placed in equal rows of the menu's frame";

/// One row of a menu.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Item(String),
    Separator,
}

/// The two menus of every screen, as their files give them.
#[derive(Debug, Default)]
pub struct WmMenus {
    /// The desktop's menu (`menu`): its rows under a title.
    desktop: Option<Vec<Row>>,
    /// A window's title-bar menu (`windowmenu`): rows without a title.
    window: Option<Vec<Row>>,
}

impl WmMenus {
    /// Reads `menu` and `windowmenu` in Fluxbox's settings folder; a file
    /// that is missing or names what Fluxbox fills in gives no items.
    pub fn read(dir: &Path) -> WmMenus {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        WmMenus {
            desktop: read("menu").and_then(|text| parse_menu(&text)),
            window: read("windowmenu").and_then(|text| parse_menu(&text)),
        }
    }

    /// Gives each of `popups` that is one of the window manager's menus
    /// its items (refs left for the text view to number).
    pub fn fill_items(&self, display: &Display, popups: &mut [PopupEntry]) -> Result<(), XFault> {
        for popup in popups.iter_mut() {
            let items = self
                .items(&display.conn, popup)
                .map_err(|e| XFault::new(display.number, "reading the window manager's menu", e))?;
            if let Some(items) = items {
                popup.items = items
                    .into_iter()
                    .map(|(name, bounds)| TextNode {
                        node_ref: String::new(),
                        role: "menu_item".into(),
                        name,
                        value: None,
                        states: Vec::new(),
                        bounds: Some(bounds),
                        depth: None,
                        children: Vec::new(),
                    })
                    .collect();
                popup.items_note = Some(ITEMS_NOTE.into());
            }
        }
        Ok(())
    }

    /// The items of `popup` with their places on the screen, when it is
    /// one of the window manager's menus whose rows can be told.
    fn items(
        &self,
        conn: &RustConnection,
        popup: &PopupEntry,
    ) -> Result<Option<Vec<(String, Bounds)>>, ReplyError> {
        if popup.class != WINDOW_MANAGER {
            return Ok(None);
        }
        let shown = viewable_children(conn, popup.id)?;
        // The frame holds the rows; a title, when shown, sits above it.
        let Some(frame) = shown.iter().max_by_key(|b| (b.y, b.height)).copied() else {
            return Ok(None);
        };
        let titled = shown.iter().any(|b| b.y < frame.y);
        let rows = match titled {
            true => self.desktop.as_deref(),
            false => self.window.as_deref(),
        };
        let origin = (popup.x, popup.y);
        Ok(rows.and_then(|rows| place_rows(rows, origin, frame)))
    }
}

/// Items in equal rows of `frame` (relative to the popup at `origin`),
/// separators skipped; `None` when the frame is not whole rows.
fn place_rows(rows: &[Row], origin: (i32, i32), frame: Bounds) -> Option<Vec<(String, Bounds)>> {
    let count = u32::try_from(rows.len()).ok().filter(|&n| n > 0)?;
    let height = frame.height / count;
    if !frame.height.is_multiple_of(count) || !(ROW_MIN..=ROW_MAX).contains(&height) {
        return None;
    }
    let placed = rows
        .iter()
        .zip(0i32..)
        .filter_map(|(row, i)| match row {
            Row::Item(name) => Some((
                name.clone(),
                Bounds {
                    x: origin.0 + frame.x,
                    y: origin.1 + frame.y + i * height as i32,
                    width: frame.width,
                    height,
                },
            )),
            Row::Separator => None,
        })
        .collect();
    Some(placed)
}

/// The rows of a Fluxbox menu file's top level. A submenu is one row (it
/// opens the submenu); `None` for a file with rows Fluxbox fills in or
/// with more than [`ROWS_MAX`].
fn parse_menu(text: &str) -> Option<Vec<Row>> {
    let mut rows = Vec::new();
    // 0 before the top `[begin]`, 1 inside it, more inside submenus.
    let mut depth = 0usize;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let (tag, label) = split_entry(line)?;
        match tag.as_str() {
            "begin" if depth == 0 => depth = 1,
            "submenu" => {
                if depth == 1 {
                    rows.push(Row::Item(label?));
                }
                depth += 1;
            }
            "end" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    break;
                }
            }
            _ if depth != 1 => {}
            "separator" => rows.push(Row::Separator),
            // Rows Fluxbox makes from elsewhere: their number is unknown.
            "include" | "workspaces" | "stylesdir" | "stylesmenu" | "themesdir" | "themesmenu"
            | "wallpapers" | "wallpapermenu" | "config" | "extramenus" | "encoding"
            | "endencoding" => return None,
            _ => rows.push(Row::Item(label.or_else(|| window_menu_label(&tag))?)),
        }
        if rows.len() > ROWS_MAX {
            return None;
        }
    }
    (depth == 0 && !rows.is_empty()).then_some(rows)
}

/// `[exec] (Terminal) {command}` as `("exec", Some("Terminal"))`: the tag
/// lowercased, the label with Fluxbox's `\)` escapes undone. `None` for a
/// line that is not an entry.
fn split_entry(line: &str) -> Option<(String, Option<String>)> {
    let rest = line.strip_prefix('[')?;
    let (tag, rest) = rest.split_once(']')?;
    let rest = rest.trim_start();
    let label = match rest.strip_prefix('(') {
        Some(after) => {
            let mut label = String::new();
            let mut chars = after.chars();
            loop {
                match chars.next()? {
                    '\\' => label.push(chars.next()?),
                    ')' => break,
                    c => label.push(c),
                }
            }
            Some(label)
        }
        None => None,
    };
    Some((tag.trim().to_lowercase(), label))
}

/// What Fluxbox shows for a window menu's entry that gives no label.
fn window_menu_label(tag: &str) -> Option<String> {
    let label = match tag {
        "shade" => "Shade",
        "iconify" => "Iconify",
        "maximize" => "Maximize",
        "raise" => "Raise",
        "lower" => "Lower",
        "stick" => "Stick",
        "close" => "Close",
        "kill" => "Kill",
        "sendto" => "Send To...",
        "layer" => "Layer ...",
        "alpha" => "Transparency",
        "settitledialog" => "Set Title",
        _ => return None,
    };
    Some(label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str) -> Row {
        Row::Item(name.into())
    }

    #[test]
    fn the_shipped_menus_read_as_their_rows() {
        let desktop = parse_menu(include_str!("../../../image/fluxbox/menu"));
        assert_eq!(desktop, Some(vec![item("Browser"), item("Terminal")]));
        let window = parse_menu(include_str!("../../../image/fluxbox/windowmenu"));
        assert_eq!(
            window,
            Some(vec![
                item("Shade"),
                item("Iconify"),
                item("Maximize"),
                item("Raise"),
                item("Lower"),
                Row::Separator,
                item("Close"),
            ])
        );
    }

    #[test]
    fn a_submenu_is_one_row_and_escapes_are_undone() {
        let text = "[begin] (Top)\n  [submenu] (More \\(old\\))\n    [exec] (Inner) {x}\n  [end]\n  [nop] (Label)\n[end]\n[exec] (After) {y}\n";
        assert_eq!(
            parse_menu(text),
            Some(vec![item("More (old)"), item("Label")])
        );
    }

    #[test]
    fn rows_fluxbox_fills_in_or_an_unclosed_menu_give_nothing() {
        assert_eq!(parse_menu("[begin] (T)\n[workspaces] (W)\n[end]\n"), None);
        assert_eq!(
            parse_menu("[begin] (T)\n[include] (/etc/menu)\n[end]\n"),
            None
        );
        assert_eq!(parse_menu("[begin] (T)\n[exec] (A) {a}\n"), None);
        assert_eq!(parse_menu("[begin] (T)\n[mystery]\n[end]\n"), None);
        assert_eq!(parse_menu("# nothing\n"), None);
    }

    #[test]
    fn rows_fill_the_frame_in_equal_heights_and_skip_separators() {
        let rows = [item("Shade"), Row::Separator, item("Close")];
        let frame = Bounds {
            x: 0,
            y: 15,
            width: 79,
            height: 42,
        };
        let placed = place_rows(&rows, (261, 219), frame).expect("three rows of 14");
        assert_eq!(
            placed,
            vec![
                (
                    "Shade".to_string(),
                    Bounds {
                        x: 261,
                        y: 234,
                        width: 79,
                        height: 14
                    }
                ),
                (
                    "Close".to_string(),
                    Bounds {
                        x: 261,
                        y: 262,
                        width: 79,
                        height: 14
                    }
                ),
            ]
        );
        // Not whole rows, or rows too short to be text: no guess.
        let uneven = Bounds {
            height: 43,
            ..frame
        };
        assert_eq!(place_rows(&rows, (0, 0), uneven), None);
        let squashed = Bounds { height: 6, ..frame };
        assert_eq!(place_rows(&rows, (0, 0), squashed), None);
    }
}
