//! The accessibility tree of the page shown in a screen's browser, read
//! over that browser's DevTools connection and placed in screen pixels.
//!
//! `Accessibility.getFullAXTree` gives the nodes; one
//! `DOMSnapshot.captureSnapshot` gives every node's layout box (document
//! pixels); the viewport's place in the browser window turns those into
//! screen pixels.

use super::flat::FlatNode;
use crate::browser::{Cdp, CdpError};
use computer_protocol::{Bounds, NodeState, WindowEntry};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Roles that only group or wrap: left out unless they carry a name.
const WRAPPER_ROLES: &[&str] = &[
    "none",
    "generic",
    "presentation",
    "group",
    "div",
    "section",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "Ignored",
];
/// Roles that stand for something an agent can use even without a name.
const CONTROL_ROLES: &[&str] = &[
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "radio",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
    "textarea",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "treeitem",
];

/// The tree of the tab in front, or `None` when the browser shows no page.
pub async fn page_tree(
    cdp: &Cdp,
    window: &WindowEntry,
    limit: usize,
) -> Result<Option<Vec<FlatNode>>, CdpError> {
    let Some(session) = visible_page(cdp).await? else {
        return Ok(None);
    };
    let read = read_tree(cdp, &session, window, limit).await;
    let _ = cdp
        .call("Target.detachFromTarget", json!({ "sessionId": session }))
        .await;
    read.map(Some)
}

/// A DevTools session on the tab whose document is visible.
async fn visible_page(cdp: &Cdp) -> Result<Option<String>, CdpError> {
    let targets = cdp.call("Target.getTargets", json!({})).await?;
    let pages: Vec<String> = targets
        .get("targetInfos")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
        .filter(|t| {
            !t.get("url")
                .and_then(Value::as_str)
                .unwrap_or("")
                .starts_with("devtools://")
        })
        .filter_map(|t| {
            t.get("targetId")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    for target in pages {
        let attached = cdp
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await?;
        let Some(session) = attached
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            continue;
        };
        let visible = cdp
            .call_in(
                &session,
                "Runtime.evaluate",
                json!({ "expression": "document.visibilityState === 'visible'", "returnByValue": true }),
            )
            .await
            .map(|v| v.pointer("/result/value") == Some(&Value::Bool(true)))
            .unwrap_or(false);
        if visible {
            return Ok(Some(session));
        }
        let _ = cdp
            .call("Target.detachFromTarget", json!({ "sessionId": session }))
            .await;
    }
    Ok(None)
}

async fn read_tree(
    cdp: &Cdp,
    session: &str,
    window: &WindowEntry,
    limit: usize,
) -> Result<Vec<FlatNode>, CdpError> {
    let tree = cdp
        .call_in(session, "Accessibility.getFullAXTree", json!({}))
        .await?;
    let snapshot = cdp
        .call_in(
            session,
            "DOMSnapshot.captureSnapshot",
            json!({ "computedStyles": [] }),
        )
        .await?;
    let metrics = cdp
        .call_in(
            session,
            "Runtime.evaluate",
            json!({ "expression": "[innerWidth, innerHeight, devicePixelRatio]", "returnByValue": true }),
        )
        .await?;
    let viewport = Viewport::place(window, metrics.pointer("/result/value"));
    let boxes = layout_boxes(&snapshot, &viewport);
    let nodes: Vec<Value> = tree
        .get("nodes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(flatten(&nodes, &boxes, limit))
}

/// Where the page's viewport sits on the screen, and its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Viewport {
    left: f64,
    top: f64,
    scale: f64,
}

impl Viewport {
    /// Chromium draws its own frame: the viewport is the bottom part of
    /// the window, with equal borders left, right and below.
    fn place(window: &WindowEntry, metrics: Option<&Value>) -> Viewport {
        let number = |i: usize| metrics.and_then(|m| m.get(i)).and_then(Value::as_f64);
        let scale = number(2).filter(|s| *s > 0.0).unwrap_or(1.0);
        let inner_w = number(0).unwrap_or(f64::from(window.width)) * scale;
        let inner_h = number(1).unwrap_or(f64::from(window.height)) * scale;
        let border = ((f64::from(window.width) - inner_w) / 2.0).max(0.0);
        Viewport {
            left: f64::from(window.x) + border,
            top: f64::from(window.y) + (f64::from(window.height) - inner_h - border).max(0.0),
            scale,
        }
    }

    fn place_box(self, x: f64, y: f64, width: f64, height: f64) -> Option<Bounds> {
        (width > 0.0 && height > 0.0).then(|| Bounds {
            x: (self.left + x * self.scale).round() as i32,
            y: (self.top + y * self.scale).round() as i32,
            width: (width * self.scale).round().max(1.0) as u32,
            height: (height * self.scale).round().max(1.0) as u32,
        })
    }
}

/// Screen bounds of the main document's laid-out nodes, by backend id.
fn layout_boxes(snapshot: &Value, viewport: &Viewport) -> HashMap<i64, Bounds> {
    let mut boxes = HashMap::new();
    let Some(document) = snapshot.pointer("/documents/0") else {
        return boxes;
    };
    let scroll_x = document
        .get("scrollOffsetX")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let scroll_y = document
        .get("scrollOffsetY")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let backend_ids = document
        .pointer("/nodes/backendNodeId")
        .and_then(Value::as_array);
    let indexes = document
        .pointer("/layout/nodeIndex")
        .and_then(Value::as_array);
    let rects = document.pointer("/layout/bounds").and_then(Value::as_array);
    let (Some(backend_ids), Some(indexes), Some(rects)) = (backend_ids, indexes, rects) else {
        return boxes;
    };
    for (index, rect) in indexes.iter().zip(rects) {
        let Some(backend) = index
            .as_u64()
            .and_then(|i| backend_ids.get(i as usize))
            .and_then(Value::as_i64)
        else {
            continue;
        };
        let r: Vec<f64> = rect
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .collect();
        if let [x, y, w, h] = r[..] {
            if let Some(bounds) = viewport.place_box(x - scroll_x, y - scroll_y, w, h) {
                // The first box of a node is its own; later ones are its
                // text fragments.
                boxes.entry(backend).or_insert(bounds);
            }
        }
    }
    boxes
}

/// The kept nodes in pre-order, at most `limit`.
fn flatten(nodes: &[Value], boxes: &HashMap<i64, Bounds>, limit: usize) -> Vec<FlatNode> {
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| n.get("nodeId").and_then(Value::as_str).map(|id| (id, n)))
        .collect();
    let mut out = Vec::new();
    if let Some(root) = nodes
        .iter()
        .find(|n| n.get("parentId").is_none())
        .or(nodes.first())
    {
        walk(root, &by_id, boxes, 0, "", &mut out, limit);
    }
    out
}

fn walk(
    node: &Value,
    by_id: &HashMap<&str, &Value>,
    boxes: &HashMap<i64, Bounds>,
    depth: usize,
    parent_name: &str,
    out: &mut Vec<FlatNode>,
    limit: usize,
) {
    if out.len() >= limit || property(node, "hidden") == Some(&Value::Bool(true)) {
        return;
    }
    let role = text_at(node, "/role/value");
    let name = text_at(node, "/name/value");
    let value = node.pointer("/value/value").map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let ignored = node
        .get("ignored")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let keep = !ignored
        && role != "InlineTextBox"
        && role != "LineBreak"
        && !(WRAPPER_ROLES.contains(&role.as_str()) && name.is_empty())
        && !(role == "StaticText" && (name.trim().is_empty() || name == parent_name));
    let kept_at = out.len();
    if keep {
        let bounds = node
            .get("backendDOMNodeId")
            .and_then(Value::as_i64)
            .and_then(|id| boxes.get(&id))
            .copied();
        out.push(
            FlatNode {
                role: role_name(&role),
                name: name.clone(),
                value,
                states: states(node),
                bounds,
                handle: None,
                depth,
            }
            .tidy(),
        );
    }
    let child_depth = if keep { depth + 1 } else { depth };
    let child_parent_name = if keep { name.as_str() } else { parent_name };
    for child in node
        .get("childIds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(child) = child.as_str().and_then(|id| by_id.get(id)) {
            walk(
                child,
                by_id,
                boxes,
                child_depth,
                child_parent_name,
                out,
                limit,
            );
        }
    }
    // A kept node with nothing to say and nothing below: left out.
    if keep && out.len() == kept_at + 1 {
        let n = &out[kept_at];
        if n.name.is_empty() && n.value.is_none() && !CONTROL_ROLES.contains(&role.as_str()) {
            out.pop();
        }
    }
}

fn text_at(node: &Value, pointer: &str) -> String {
    node.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn property<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    node.get("properties")
        .and_then(Value::as_array)?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|p| p.pointer("/value/value"))
}

fn states(node: &Value) -> Vec<NodeState> {
    let on = |name: &str| match property(node, name) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s != "false",
        _ => false,
    };
    let mut states = Vec::new();
    for (name, state) in [
        ("focused", NodeState::Focused),
        ("checked", NodeState::Checked),
        ("selected", NodeState::Selected),
        ("disabled", NodeState::Disabled),
        ("expanded", NodeState::Expanded),
        ("editable", NodeState::Editable),
    ] {
        if on(name) {
            states.push(state);
        }
    }
    states
}

/// DevTools' role names in the view's lowercase form: `StaticText` is
/// `text`, `RootWebArea` is `document`, the rest lowercase with `_`.
fn role_name(role: &str) -> String {
    match role {
        "StaticText" => "text".into(),
        "RootWebArea" | "WebArea" => "document".into(),
        "" => "unknown".into(),
        other => {
            let mut out = String::new();
            for (i, c) in other.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    out.push('_');
                }
                out.extend(c.to_lowercase());
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window() -> WindowEntry {
        WindowEntry {
            id: 1,
            title: "t".into(),
            class: "Chromium".into(),
            pid: None,
            x: 0,
            y: 0,
            width: 1280,
            height: 800,
            focused: true,
        }
    }

    #[test]
    fn the_viewport_is_the_bottom_of_the_window() {
        let v = Viewport::place(&window(), Some(&json!([1280, 713, 1])));
        assert_eq!((v.left, v.top, v.scale), (0.0, 87.0, 1.0));
        let b = v.place_box(10.0, 20.0, 80.0, 30.0).unwrap();
        assert_eq!((b.x, b.y, b.width, b.height), (10, 107, 80, 30));
        assert_eq!(v.place_box(1.0, 1.0, 0.0, 5.0), None);
    }

    #[test]
    fn keeps_controls_and_text_and_drops_wrappers() {
        let nodes = json!([
            {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Probe"}, "childIds": ["2"], "backendDOMNodeId": 1},
            {"nodeId": "2", "parentId": "1", "role": {"value": "generic"}, "name": {"value": ""}, "childIds": ["3", "5", "7"]},
            {"nodeId": "3", "parentId": "2", "role": {"value": "button"}, "name": {"value": "Go"}, "childIds": ["4"], "backendDOMNodeId": 3,
             "properties": [{"name": "focused", "value": {"value": true}}]},
            {"nodeId": "4", "parentId": "3", "role": {"value": "StaticText"}, "name": {"value": "Go"}, "childIds": []},
            {"nodeId": "5", "parentId": "2", "role": {"value": "generic"}, "name": {"value": ""}, "childIds": ["6"],
             "properties": [{"name": "hidden", "value": {"value": true}}]},
            {"nodeId": "6", "parentId": "5", "role": {"value": "button"}, "name": {"value": "Hidden"}, "childIds": []},
            {"nodeId": "7", "parentId": "2", "role": {"value": "textbox"}, "name": {"value": ""}, "value": {"value": "abc"}, "childIds": [],
             "properties": [{"name": "editable", "value": {"value": "plaintext"}}]}
        ]);
        let nodes = nodes.as_array().unwrap().clone();
        let boxes = HashMap::from([(
            3,
            Bounds {
                x: 5,
                y: 6,
                width: 7,
                height: 8,
            },
        )]);
        let flat = flatten(&nodes, &boxes, 100);
        let summary: Vec<(String, String, usize)> = flat
            .iter()
            .map(|n| (n.role.clone(), n.name.clone(), n.depth))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("document".into(), "Probe".into(), 0),
                ("button".into(), "Go".into(), 1),
                ("textbox".into(), "".into(), 1)
            ]
        );
        assert_eq!(flat[1].states, vec![NodeState::Focused]);
        assert_eq!(flat[1].bounds.unwrap().x, 5);
        assert_eq!(flat[2].value.as_deref(), Some("abc"));
        assert_eq!(flat[2].states, vec![NodeState::Editable]);
        assert_eq!(flatten(&nodes, &boxes, 2).len(), 2);
    }

    #[test]
    fn role_names_are_lowercase() {
        assert_eq!(role_name("StaticText"), "text");
        assert_eq!(role_name("MenuListPopup"), "menu_list_popup");
        assert_eq!(role_name("button"), "button");
    }
}
