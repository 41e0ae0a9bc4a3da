//! Which accessible is the X window: the app is matched by the pid of its
//! bus connection (`_NET_WM_PID` of the window), the window among the app's
//! top-levels by its name (the window title), falling back to the app's
//! first showing top-level; with no app of that pid, by title alone. A
//! popup, which has no title, is matched by its extents instead.

use super::WindowHint;
use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::{CoordType, ObjectRefOwned, State};
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
    let dbus = zbus::fdo::DBusProxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    let refs = registered_apps(conn).await?;
    // An app that vanished between the listing and now is just left out.
    let apps: Vec<App> = join_all(refs.iter().map(|app| read_app(conn, &dbus, app)))
        .await
        .into_iter()
        .flatten()
        .collect();
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

/// The top-level accessible that is the popup `popup` (a menu, a combo's
/// list): the one whose extents on screen are the popup window's, among
/// the top-levels of the apps with the popup's pid (of every app when none
/// has it). Toolkits give popups no title to match.
pub(crate) async fn find_popup(
    conn: &zbus::Connection,
    popup: &WindowHint,
) -> zbus::Result<Option<ObjectRefOwned>> {
    let dbus = zbus::fdo::DBusProxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    let refs = registered_apps(conn).await?;
    let apps: Vec<App> = join_all(refs.iter().map(|app| read_app(conn, &dbus, app)))
        .await
        .into_iter()
        .flatten()
        .collect();
    let of_pid = apps
        .iter()
        .any(|app| popup.pid.is_some() && app.pid == popup.pid);
    let candidates = apps
        .iter()
        .filter(|app| !of_pid || app.pid == popup.pid)
        .flat_map(|app| app.top_levels.iter());
    let placed = join_all(candidates.map(|top| async move {
        let component: ComponentProxy = accessible_as(conn, &top.object).await.ok()?;
        let extents = component.get_extents(CoordType::Screen).await.ok()?;
        covers_popup(extents, popup).then(|| top.object.clone())
    }))
    .await;
    Ok(placed.into_iter().flatten().next())
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
