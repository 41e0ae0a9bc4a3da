//! What each action of a batch changed, watched while the batch runs: X
//! DAMAGE gives the redrawn area, root property events tell when the focus
//! or the window list changed (only then are they read), the root's map
//! events when a popup (menu, dropdown, tooltip) showed, and the browser's
//! [`Pages`] (kept current by DevTools events) the page's URL and title.
//!
//! Changes are credited to the latest action that is not a `wait` before
//! they were seen, up to the screenshot. The watch uses a connection of its
//! own, kept by the screen between batches, so its events never reach the
//! shared one; between batches it selects no events, so nothing piles up.

use crate::browser::pages::Pages;
use crate::display::XFault;
use crate::screens::WatchConnection;
use crate::windows::{window_title, PopupReader, WmMenus};
use computer_protocol::{Action, ActionEffect, PopupEntry, Region};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use x11rb::connection::Connection;
use x11rb::errors::{ReplyError, ReplyOrIdError};
use x11rb::protocol::damage::{ConnectionExt as _, Damage, ReportLevel};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, EventMask, Rectangle, Window,
};
use x11rb::protocol::Event;

/// One batch's watch.
pub struct EffectsWatch {
    conn: WatchConnection,
    damage: Damage,
    pages: Option<Arc<Pages>>,
    page_version: u64,
    /// What the window manager's menus hold, so an opened one lists its
    /// items.
    wm_menus: Option<Arc<WmMenus>>,
    active: Option<Window>,
    /// Title of each window of the client list, as last read.
    windows: Titles,
    /// The action changes are credited to now, and since when.
    current: Option<(ActionEffect, Instant)>,
    done: Vec<ActionEffect>,
    /// Opened popups that nothing on the X side could list the items of.
    bare_popups: Vec<BarePopup>,
}

/// A popup an action opened, named in its effect without items: its app's
/// toolkit may list them over AT-SPI, which is read once the batch is
/// done ([`crate::textview::fill_popup_items`]), off the X thread.
#[derive(Debug)]
pub struct BarePopup {
    /// The action whose effect names it.
    pub index: usize,
    /// How the effect names it now.
    pub said: String,
    pub popup: PopupEntry,
}

/// What a finished watch hands back.
pub struct Finished {
    /// In action order.
    pub effects: Vec<ActionEffect>,
    pub bare_popups: Vec<BarePopup>,
    pub conn: WatchConnection,
}

impl EffectsWatch {
    /// Starts watching: the screen's windows and focus as they are now. On
    /// failure the connection is dropped (the next batch opens a new one).
    pub fn begin(conn: WatchConnection, pages: Option<Arc<Pages>>) -> Result<EffectsWatch, XFault> {
        let number = conn.display.number;
        let (c, root) = (&conn.display.conn, conn.display.root);
        let start = || -> Result<Damage, ReplyOrIdError> {
            let damage = c.generate_id()?;
            c.damage_create(damage, root, ReportLevel::BOUNDING_BOX)?;
            // Property changes for the focus and the client list; the
            // root's children mapped, for popups, which neither lists.
            let events = ChangeWindowAttributesAux::new()
                .event_mask(EventMask::PROPERTY_CHANGE | EventMask::SUBSTRUCTURE_NOTIFY);
            c.change_window_attributes(root, &events)?;
            Ok(damage)
        };
        let fail = |e: &dyn std::fmt::Display| XFault::new(number, "watching for effects", e);
        let damage = start().map_err(|e| fail(&e))?;
        let (active, clients) = read_focus_and_clients(&conn).map_err(|e| fail(&e))?;
        let windows = read_titles(&conn, &clients).map_err(|e| fail(&e))?;
        Ok(EffectsWatch {
            page_version: pages.as_ref().map_or(0, |p| p.version()),
            conn,
            damage,
            pages,
            wm_menus: None,
            active,
            windows,
            current: None,
            done: Vec::new(),
            bare_popups: Vec::new(),
        })
    }

    /// A watch whose opened window-manager menus list their items.
    #[must_use]
    pub fn with_wm_menus(mut self, menus: Arc<WmMenus>) -> EffectsWatch {
        self.wm_menus = Some(menus);
        self
    }

    /// How many windows the client list held, as last read.
    pub fn window_count(&self) -> usize {
        self.windows.len()
    }

    /// Called before action `index` runs: what was seen so far goes to the
    /// action before it, unless this one is a wait (its time is theirs).
    pub fn before(&mut self, index: usize, action: &Action) {
        if matches!(action, Action::Wait { .. }) {
            self.done.push(ActionEffect {
                index,
                ..ActionEffect::default()
            });
            return;
        }
        self.close_current();
        self.current = Some((
            ActionEffect {
                index,
                ..ActionEffect::default()
            },
            Instant::now(),
        ));
    }

    /// Ends the watch once the screen settled: every event up to now is
    /// read.
    pub fn finish(mut self) -> Finished {
        // One round trip: every event sent before its answer is then here.
        let synced = self
            .conn
            .display
            .conn
            .get_input_focus()
            .map_err(ReplyError::from)
            .and_then(|c| c.reply());
        if synced.is_ok() {
            self.close_current();
        } else {
            self.current = None;
        }
        let (c, root) = (&self.conn.display.conn, self.conn.display.root);
        let _ = c.damage_destroy(self.damage);
        let _ = c.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT),
        );
        let _ = c.flush();
        // Events sent before the deselection are dropped with the batch.
        while let Ok(Some(_)) = c.poll_for_event() {}
        let mut effects = self.done;
        effects.sort_by_key(|e| e.index);
        Finished {
            effects,
            bare_popups: self.bare_popups,
            conn: self.conn,
        }
    }

    /// Credits what was seen since the current action began to it.
    fn close_current(&mut self) {
        let Some((mut effect, since)) = self.current.take() else {
            self.drain();
            return;
        };
        let seen = self.drain();
        effect.watched_ms = since.elapsed().as_millis() as u64;
        effect.drawn = seen.drawn;
        if seen.focus_or_windows {
            // Reading fails only when the X server went away; the effect
            // then says nothing of the windows.
            let _ = self.read_window_changes(&mut effect);
        }
        if !seen.popups_mapped.is_empty() {
            if let Ok(bare) = self.read_popups(&seen.popups_mapped, &mut effect) {
                self.bare_popups
                    .extend(bare.into_iter().map(|popup| BarePopup {
                        index: effect.index,
                        said: popup.describe(),
                        popup,
                    }));
            }
        }
        if let Some(pages) = &self.pages {
            let version = pages.version();
            if version != self.page_version {
                self.page_version = version;
                effect.page = pages.latest();
            }
        }
        effect.decide();
        self.done.push(effect);
    }

    /// Reads the pending events without waiting.
    fn drain(&mut self) -> Seen {
        let c = &self.conn.display.conn;
        let atoms = self.conn.atoms;
        let mut seen = Seen::default();
        let mut damaged = false;
        while let Ok(Some(event)) = c.poll_for_event() {
            match event {
                Event::DamageNotify(e) => {
                    damaged = true;
                    seen.drawn = Some(union(seen.drawn, e.area));
                }
                Event::PropertyNotify(e)
                    if e.atom == atoms.net_active_window || e.atom == atoms.net_client_list =>
                {
                    seen.focus_or_windows = true;
                }
                Event::MapNotify(e) if e.override_redirect && e.event == self.conn.display.root => {
                    seen.popups_mapped.push(e.window);
                }
                _ => {}
            }
        }
        if damaged {
            // Re-arms the report: the next drawing sends a new event.
            let _ = c.damage_subtract(self.damage, x11rb::NONE, x11rb::NONE);
            let _ = c.flush();
        }
        seen
    }

    /// The popups among `mapped` that are still shown, described; returns
    /// those described without items.
    fn read_popups(
        &self,
        mapped: &[Window],
        effect: &mut ActionEffect,
    ) -> Result<Vec<PopupEntry>, ReplyError> {
        let (c, root) = (&self.conn.display.conn, self.conn.display.root);
        let geometry = c.get_geometry(root)?.reply()?;
        let screen = (u32::from(geometry.width), u32::from(geometry.height));
        // The client list as last read: any change to it this action was
        // read just before.
        let clients: Vec<Window> = self.windows.keys().copied().collect();
        let reader = PopupReader::new(c, &self.conn.atoms, root, &clients)?;
        let mut bare = Vec::new();
        for &window in mapped {
            if let Some(mut popup) = reader.describe(c, window, screen)? {
                if let Some(menus) = &self.wm_menus {
                    // Without its items the popup is still named.
                    let _ = menus.fill_items(&self.conn.display, std::slice::from_mut(&mut popup));
                }
                effect.popups_opened.push(popup.describe());
                if popup.items.is_empty() {
                    bare.push(popup);
                }
            }
        }
        Ok(bare)
    }

    fn read_window_changes(&mut self, effect: &mut ActionEffect) -> Result<(), ReplyError> {
        let (active, clients) = read_focus_and_clients(&self.conn)?;
        let opened: Vec<Window> = clients
            .iter()
            .copied()
            .filter(|w| !self.windows.contains_key(w))
            .collect();
        let closed: Vec<Window> = self
            .windows
            .keys()
            .copied()
            .filter(|w| !clients.contains(w))
            .collect();
        let new_titles = read_titles(&self.conn, &opened)?;
        for window in &opened {
            let title = new_titles.get(window).cloned().unwrap_or_default();
            effect.windows_opened.push(title.clone());
            self.windows.insert(*window, title);
        }
        for window in closed {
            if let Some(title) = self.windows.remove(&window) {
                effect.windows_closed.push(title);
            }
        }
        if active != self.active {
            self.active = active;
            if let Some(window) = active {
                let title = match self.windows.get(&window) {
                    Some(title) => title.clone(),
                    None => window_title(&self.conn.display.conn, &self.conn.atoms, window)?
                        .unwrap_or_default(),
                };
                effect.focused = Some(title);
            }
        }
        Ok(())
    }
}

#[derive(Default)]
struct Seen {
    drawn: Option<Region>,
    focus_or_windows: bool,
    /// Override-redirect children of the root that were mapped.
    popups_mapped: Vec<Window>,
}

/// The active window and the client list, in one round trip.
fn read_focus_and_clients(
    conn: &WatchConnection,
) -> Result<(Option<Window>, Vec<Window>), ReplyError> {
    let (c, root, atoms) = (&conn.display.conn, conn.display.root, &conn.atoms);
    let active = c.get_property(false, root, atoms.net_active_window, AtomEnum::WINDOW, 0, 1)?;
    let clients = c.get_property(
        false,
        root,
        atoms.net_client_list,
        AtomEnum::WINDOW,
        0,
        4096,
    )?;
    let active = active
        .reply()?
        .value32()
        .and_then(|mut v| v.next())
        .filter(|&w| w != x11rb::NONE);
    let clients = clients
        .reply()?
        .value32()
        .map(Iterator::collect)
        .unwrap_or_default();
    Ok((active, clients))
}

/// Each window's title.
type Titles = HashMap<Window, String>;

/// The titles of `windows` (empty for one without).
fn read_titles(conn: &WatchConnection, windows: &[Window]) -> Result<Titles, ReplyError> {
    windows
        .iter()
        .map(|&w| {
            let title = window_title(&conn.display.conn, &conn.atoms, w)?.unwrap_or_default();
            Ok((w, title))
        })
        .collect()
}

/// The bounding box of `so_far` and `area`.
fn union(so_far: Option<Region>, area: Rectangle) -> Region {
    let (x, y) = (area.x.max(0) as u32, area.y.max(0) as u32);
    let added = Region {
        x,
        y,
        width: u32::from(area.width),
        height: u32::from(area.height),
    };
    match so_far {
        None => added,
        Some(r) => {
            let (left, top) = (r.x.min(added.x), r.y.min(added.y));
            let right = (r.x + r.width).max(added.x + added.width);
            let bottom = (r.y + r.height).max(added.y + added.height);
            Region {
                x: left,
                y: top,
                width: right - left,
                height: bottom - top,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_grow_into_their_bounding_box() {
        let first = union(
            None,
            Rectangle {
                x: 10,
                y: 20,
                width: 5,
                height: 5,
            },
        );
        assert_eq!(
            first,
            Region {
                x: 10,
                y: 20,
                width: 5,
                height: 5
            }
        );
        let both = union(
            Some(first),
            Rectangle {
                x: 0,
                y: 30,
                width: 4,
                height: 10,
            },
        );
        assert_eq!(
            both,
            Region {
                x: 0,
                y: 20,
                width: 15,
                height: 20
            }
        );
    }
}
