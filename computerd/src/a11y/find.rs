//! Which accessible is the X window: the app is matched by the pid of its
//! bus connection (`_NET_WM_PID` of the window), the window among the app's
//! top-levels by its name (the window title), falling back to the app's
//! first showing top-level; with no app of that pid, by title alone. A
//! popup, which has no title, is matched by its extents instead, or found
//! as the open menu of its app's menu bar.

use super::WindowHint;
use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::{CoordType, ObjectRefOwned, Role, State};
use futures::future::join_all;
use zbus::proxy::CacheProperties;

const REGISTRY: &str = "org.a11y.atspi.Registry";
const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";

/// The window's top-level accessible and the name of its app.
pub(crate) struct Found {
    pub app: String,
    pub window: ObjectRefOwned,
}

/// A top-level of one app, as far as matching needs it.
struct TopLevel {
    object: ObjectRefOwned,
    name: String,
    showing: bool,
}

struct App {
    name: String,
    pid: Option<u32>,
    top_levels: Vec<TopLevel>,
}

pub(crate) async fn accessible<'c>(
    conn: &'c zbus::Connection,
    object: &ObjectRefOwned,
) -> zbus::Result<AccessibleProxy<'c>> {
    accessible_as(conn, object).await
}

/// [`proxy`] for the node `object` refers to.
pub(crate) async fn accessible_as<'c, P>(
    conn: &'c zbus::Connection,
    object: &ObjectRefOwned,
) -> zbus::Result<P>
where
    P: From<zbus::Proxy<'c>> + zbus::proxy::Defaults,
{
    let Some(name) = object.name() else {
        return Err(zbus::Error::Failure(
            "a null accessible reference".to_string(),
        ));
    };
    proxy(conn, name.as_str(), object.path().as_str()).await
}

/// Any AT-SPI interface proxy (`AccessibleProxy`, `ComponentProxy`, ...)
/// of the node at `path` of the app with unique bus name `bus`, uncached:
/// a tree is read once.
pub(crate) async fn proxy<'c, P>(
    conn: &'c zbus::Connection,
    bus: &str,
    path: &str,
) -> zbus::Result<P>
where
    P: From<zbus::Proxy<'c>> + zbus::proxy::Defaults,
{
    zbus::proxy::Builder::<P>::new(conn)
        .destination(bus.to_owned())?
        .path(path.to_owned())?
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

/// The apps registered on the bus (the registry root's children).
pub(crate) async fn registered_apps(conn: &zbus::Connection) -> zbus::Result<Vec<ObjectRefOwned>> {
    let registry = AccessibleProxy::builder(conn)
        .destination(REGISTRY)?
        .path(ROOT_PATH)?
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    Ok(registry
        .get_children()
        .await?
        .into_iter()
        .filter(|app| !app.is_null())
        .collect())
}

pub(crate) async fn find_window(
    conn: &zbus::Connection,
    window: &WindowHint,
) -> zbus::Result<Option<Found>> {
    let apps = read_apps(conn).await?;
    let title = window.title.trim();
    let by_title = |app: &App| {
        app.top_levels
            .iter()
            .find(|t| !title.is_empty() && t.name.trim() == title)
            .map(|t| found(app, t))
    };
    let of_pid: Vec<&App> = apps
        .iter()
        .filter(|app| window.pid.is_some() && app.pid == window.pid)
        .collect();
    if let Some(hit) = of_pid.iter().find_map(|app| by_title(app)) {
        return Ok(Some(hit));
    }
    for app in &of_pid {
        let first = app
            .top_levels
            .iter()
            .find(|t| t.showing)
            .or(app.top_levels.first());
        if let Some(top) = first {
            return Ok(Some(found(app, top)));
        }
    }
    Ok(apps.iter().find_map(by_title))
}

/// The accessible that holds the items of the popup `popup` (a menu, a
/// combo's list), among the apps with the popup's pid (of every app when
/// none has it). Toolkits give popups no title to match, so it is found by
/// place: a top-level whose extents on screen are the popup window's
/// (Chromium, GTK, LibreOffice's context menus), else, in an app of the
/// popup's pid, a menu bar's open menu whose items lie in the popup
/// (LibreOffice keeps the menus of its menu bar under its frame).
pub(crate) async fn find_popup(
    conn: &zbus::Connection,
    popup: &WindowHint,
) -> zbus::Result<Option<ObjectRefOwned>> {
    let apps = read_apps(conn).await?;
    let of_pid = apps
        .iter()
        .any(|app| popup.pid.is_some() && app.pid == popup.pid);
    let candidates = apps
        .iter()
        .filter(|app| !of_pid || app.pid == popup.pid)
        .flat_map(|app| app.top_levels.iter());
    let placed = join_all(candidates.clone().map(|top| async move {
        let extents = extents(conn, &top.object).await?;
        covers_popup(extents, popup).then(|| top.object.clone())
    }))
    .await;
    if let Some(top) = placed.into_iter().flatten().next() {
        return Ok(Some(top));
    }
    if !of_pid {
        return Ok(None);
    }
    let open = join_all(candidates.map(|top| open_menu_in(conn, &top.object, popup))).await;
    Ok(open.into_iter().flatten().next())
}

/// Levels below a top-level searched for its menu bar: LibreOffice's
/// menu bar is five levels down (panels, a scroll pane, a viewport).
const MENU_BAR_DEPTH_MAX: usize = 6;
/// Nodes read at most in that search; a hidden node's children are not.
const MENU_BAR_SEARCH_NODES_MAX: usize = 300;
/// Levels of submenus followed down from a menu bar.
const SUBMENU_DEPTH_MAX: usize = 6;

/// The open menu under `top`'s menu bar whose items lie in `popup`: the
/// bar's selected (or expanded) menu, or the open submenu it leads to.
async fn open_menu_in(
    conn: &zbus::Connection,
    top: &ObjectRefOwned,
    popup: &WindowHint,
) -> Option<ObjectRefOwned> {
    let mut level = vec![top.clone()];
    let mut bars = Vec::new();
    let mut budget = MENU_BAR_SEARCH_NODES_MAX;
    for _ in 0..MENU_BAR_DEPTH_MAX {
        let children = join_all(level.iter().map(|node| children_of(conn, node))).await;
        let children: Vec<Child> = children.into_iter().flatten().collect();
        budget = budget.saturating_sub(children.len());
        let (found, rest): (Vec<Child>, Vec<Child>) = children
            .into_iter()
            .partition(|child| child.role == Role::MenuBar);
        bars.extend(found);
        level = rest
            .into_iter()
            .filter(|child| child.showing)
            .map(|child| child.object)
            .collect();
        if level.is_empty() || budget == 0 {
            break;
        }
    }
    let bars = join_all(bars.iter().map(|bar| children_of(conn, &bar.object))).await;
    let mut open = open_menus(bars.into_iter().flatten());
    let inside = |(x, y, width, height): (i32, i32, i32, i32)| {
        centre_inside(x, y, width.into(), height.into(), popup)
    };
    for _ in 0..SUBMENU_DEPTH_MAX {
        let mut deeper = Vec::new();
        for menu in open {
            let items = children_of(conn, &menu).await;
            if items.iter().any(|item| item.extents.is_some_and(inside)) {
                return Some(menu);
            }
            deeper.extend(open_menus(items));
        }
        if deeper.is_empty() {
            return None;
        }
        open = deeper;
    }
    None
}

/// The menus among `children` that show their popup.
fn open_menus(children: impl IntoIterator<Item = Child>) -> Vec<ObjectRefOwned> {
    children
        .into_iter()
        .filter(|child| child.role == Role::Menu && child.open)
        .map(|child| child.object)
        .collect()
}

/// One child as the menu search needs it.
struct Child {
    object: ObjectRefOwned,
    role: Role,
    showing: bool,
    /// Selected or expanded: a menu bar's menu that shows its popup.
    open: bool,
    extents: Option<(i32, i32, i32, i32)>,
}

/// The children of `node` that can be read, with role, state and place.
async fn children_of(conn: &zbus::Connection, node: &ObjectRefOwned) -> Vec<Child> {
    let Ok(proxy) = accessible(conn, node).await else {
        return Vec::new();
    };
    let children = proxy.get_children().await.unwrap_or_default();
    join_all(
        children
            .into_iter()
            .filter(|child| !child.is_null())
            .map(|child| async move {
                let proxy = accessible(conn, &child).await.ok()?;
                let (role, state, extents) =
                    futures::join!(proxy.get_role(), proxy.get_state(), extents(conn, &child));
                let state = state.ok()?;
                Some(Child {
                    role: role.ok()?,
                    showing: state.contains(State::Showing),
                    open: state.contains(State::Selected) || state.contains(State::Expanded),
                    extents,
                    object: child,
                })
            }),
    )
    .await
    .into_iter()
    .flatten()
    .collect()
}

/// Where `object` is on screen: x, y, width, height.
async fn extents(conn: &zbus::Connection, object: &ObjectRefOwned) -> Option<(i32, i32, i32, i32)> {
    let component: ComponentProxy = accessible_as(conn, object).await.ok()?;
    component.get_extents(CoordType::Screen).await.ok()
}

/// True when the middle of the box at `x`, `y` lies in the popup window.
pub(crate) fn centre_inside(x: i32, y: i32, width: i64, height: i64, popup: &WindowHint) -> bool {
    let (cx, cy) = (i64::from(x) + width / 2, i64::from(y) + height / 2);
    let (left, top) = (i64::from(popup.x), i64::from(popup.y));
    (left..left + i64::from(popup.width)).contains(&cx)
        && (top..top + i64::from(popup.height)).contains(&cy)
}

/// True when a top-level's extents are the popup window's, give or take
/// a toolkit's border pixel.
fn covers_popup((x, y, width, height): (i32, i32, i32, i32), popup: &WindowHint) -> bool {
    const SLACK: i64 = 2;
    let near = |a: i64, b: i64| (a - b).abs() <= SLACK;
    near(x.into(), popup.x.into())
        && near(y.into(), popup.y.into())
        && near(width.into(), popup.width.into())
        && near(height.into(), popup.height.into())
}

fn found(app: &App, top: &TopLevel) -> Found {
    Found {
        app: app.name.clone(),
        window: top.object.clone(),
    }
}

/// Every app on the bus with its pid and top-levels. An app that vanished
/// between the listing and now is just left out.
async fn read_apps(conn: &zbus::Connection) -> zbus::Result<Vec<App>> {
    let dbus = zbus::fdo::DBusProxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    let refs = registered_apps(conn).await?;
    Ok(join_all(refs.iter().map(|app| read_app(conn, &dbus, app)))
        .await
        .into_iter()
        .flatten()
        .collect())
}

async fn read_app(
    conn: &zbus::Connection,
    dbus: &zbus::fdo::DBusProxy<'_>,
    app: &ObjectRefOwned,
) -> Option<App> {
    let proxy = accessible(conn, app).await.ok()?;
    let pid = async {
        let name = app.name()?;
        dbus.get_connection_unix_process_id(name.clone().into())
            .await
            .ok()
    };
    let (name, children, pid) = futures::join!(proxy.name(), proxy.get_children(), pid);
    let children = children.ok()?;
    let top_levels = join_all(children.into_iter().filter(|c| !c.is_null()).map(
        |child| async move {
            let top = accessible(conn, &child).await.ok()?;
            let (name, state) = futures::join!(top.name(), top.get_state());
            let state = state.ok()?;
            Some(TopLevel {
                object: child,
                name: name.unwrap_or_default(),
                showing: state.contains(State::Showing),
            })
        },
    ))
    .await
    .into_iter()
    .flatten()
    .collect();
    Some(App {
        name: name.unwrap_or_default(),
        pid,
        top_levels,
    })
}
