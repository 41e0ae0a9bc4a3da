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
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

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
    let Some(page) = visible_page(cdp).await? else {
        return Ok(None);
    };
    read_tree(cdp, &page, window, limit).await.map(Some)
}

/// A DevTools session on a tab, detached when dropped: also when the read
/// is dropped half way (its deadline passed), so no session is left
/// attached to the tab.
struct Attached<'a> {
    cdp: &'a Cdp,
    session: String,
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        self.cdp.send_and_forget(
            "Target.detachFromTarget",
            json!({ "sessionId": self.session }),
        );
    }
}

/// A DevTools session on a tab, and an isolated world in its main frame.
struct PageSession<'a> {
    attached: Attached<'a>,
    /// The execution context of computerd's own world: the page's
    /// scripts run in another one, so what they redefine on `window` or
    /// on DOM prototypes (`devicePixelRatio`, `visibilityState`) is not
    /// what this one reads.
    world: i64,
}

impl PageSession<'_> {
    fn session(&self) -> &str {
        &self.attached.session
    }

    /// `expression` evaluated in the isolated world, by value.
    async fn evaluate(&self, cdp: &Cdp, expression: &str) -> Result<Value, CdpError> {
        let answer = cdp
            .call_in(
                self.session(),
                "Runtime.evaluate",
                json!({ "expression": expression, "contextId": self.world, "returnByValue": true }),
            )
            .await?;
        Ok(answer
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }
}

/// An isolated world in the main frame of the tab `session` is attached to.
async fn isolated_world(cdp: &Cdp, session: &str) -> Result<Option<i64>, CdpError> {
    let tree = cdp.call_in(session, "Page.getFrameTree", json!({})).await?;
    let Some(frame) = tree.pointer("/frameTree/frame/id").and_then(Value::as_str) else {
        return Ok(None);
    };
    let world = cdp
        .call_in(
            session,
            "Page.createIsolatedWorld",
            json!({ "frameId": frame, "worldName": "computerd text view" }),
        )
        .await?;
    Ok(world.get("executionContextId").and_then(Value::as_i64))
}

/// A DevTools session on the tab whose document is visible, as the
/// browser tells it (read in an isolated world, where the page cannot
/// redefine `visibilityState`).
async fn visible_page(cdp: &Cdp) -> Result<Option<PageSession<'_>>, CdpError> {
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
        // From here the session detaches when `attached` drops: a tab that
        // is not the visible one, or a read cut short.
        let attached = Attached { cdp, session };
        if let Ok(Some(world)) = isolated_world(cdp, &attached.session).await {
            let page = PageSession { attached, world };
            let visible = page
                .evaluate(cdp, "document.visibilityState === 'visible'")
                .await
                .is_ok_and(|v| v == Value::Bool(true));
            if visible {
                return Ok(Some(page));
            }
        }
    }
    Ok(None)
}

async fn read_tree(
    cdp: &Cdp,
    page: &PageSession<'_>,
    window: &WindowEntry,
    limit: usize,
) -> Result<Vec<FlatNode>, CdpError> {
    let session = page.session();
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
    let metrics = page
        .evaluate(cdp, "[innerWidth, innerHeight, devicePixelRatio]")
        .await?;
    let boxes = match Viewport::place(window, &metrics) {
        Some(viewport) => layout_boxes(&snapshot, &viewport),
        // Without the viewport no node can be placed: refs then refuse
        // to click rather than guess.
        None => HashMap::new(),
    };
    Ok(flatten(&ax_nodes(tree), &boxes, limit))
}

/// One node of DevTools' `Accessibility.getFullAXTree`: the fields the
/// view reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AxNode {
    node_id: String,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default)]
    ignored: bool,
    #[serde(default)]
    role: Option<AxValue>,
    #[serde(default)]
    name: Option<AxValue>,
    #[serde(default)]
    value: Option<AxValue>,
    #[serde(default)]
    properties: Vec<AxProperty>,
    #[serde(default)]
    child_ids: Vec<String>,
    #[serde(default, rename = "backendDOMNodeId")]
    backend_dom_node_id: Option<i64>,
}

/// DevTools' `AXValue`: a typed value, of which the view reads the value.
#[derive(Debug, Deserialize)]
struct AxValue {
    #[serde(default)]
    value: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct AxProperty {
    name: String,
    value: AxValue,
}

impl AxNode {
    fn role(&self) -> &str {
        text_of(&self.role)
    }

    fn name(&self) -> &str {
        text_of(&self.name)
    }

    /// The value of its property `name` (`focused`, `hidden`, ...).
    fn property(&self, name: &str) -> Option<&Value> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.value.value.as_ref())
    }
}

/// A string `AXValue`'s text, `""` when there is none.
fn text_of(value: &Option<AxValue>) -> &str {
    value
        .as_ref()
        .and_then(|v| v.value.as_ref())
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The nodes of a `getFullAXTree` answer, in its order, as far as the walk
/// can reach (see [`flatten`]); a node DevTools describes in a shape this
/// does not read is left out, not the whole tree.
fn ax_nodes(mut tree: Value) -> Vec<AxNode> {
    let Some(Value::Array(nodes)) = tree.get_mut("nodes").map(Value::take) else {
        return Vec::new();
    };
    nodes
        .into_iter()
        .take(2 * VISITS_MAX)
        .filter_map(|node| serde_json::from_value(node).ok())
        .collect()
}

/// Where the page's viewport sits on the screen, and its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Viewport {
    /// The viewport in screen pixels, inside the browser window.
    area: Bounds,
    scale: f64,
}

impl Viewport {
    /// Chromium draws its own frame: the viewport is the bottom part of
    /// the window, with equal borders left, right and below. `metrics`
    /// are `[innerWidth, innerHeight, devicePixelRatio]`; `None` when
    /// they are missing or do not fit in the window.
    fn place(window: &WindowEntry, metrics: &Value) -> Option<Viewport> {
        let number = |i: usize| metrics.get(i).and_then(Value::as_f64);
        let scale = number(2).filter(|s| s.is_finite() && *s > 0.0)?;
        let inner_w = number(0).filter(|w| w.is_finite() && *w > 0.0)? * scale;
        let inner_h = number(1).filter(|h| h.is_finite() && *h > 0.0)? * scale;
        let (win_w, win_h) = (f64::from(window.width), f64::from(window.height));
        if inner_w > win_w + 0.5 || inner_h > win_h + 0.5 {
            return None;
        }
        let border = ((win_w - inner_w) / 2.0).max(0.0);
        let area = Bounds {
            x: window.x + border.round() as i32,
            y: window.y + (win_h - inner_h - border).max(0.0).round() as i32,
            width: inner_w.round() as u32,
            height: inner_h.round() as u32,
        };
        Some(Viewport {
            area: area.intersect(&window.bounds())?,
            scale,
        })
    }

    /// A box in viewport CSS pixels as screen pixels, cut to the
    /// viewport: a point of a node never lands on the browser's own
    /// toolbar or frame. `None` for an empty box or one outside.
    fn place_box(self, x: f64, y: f64, width: f64, height: f64) -> Option<Bounds> {
        if !(width > 0.0 && height > 0.0) {
            return None;
        }
        let clamp = |v: f64| v.round().clamp(f64::from(i32::MIN), f64::from(i32::MAX));
        let left = clamp(f64::from(self.area.x) + x * self.scale);
        let top = clamp(f64::from(self.area.y) + y * self.scale);
        let placed = Bounds {
            x: left as i32,
            y: top as i32,
            width: clamp(width * self.scale).max(1.0) as u32,
            height: clamp(height * self.scale).max(1.0) as u32,
        };
        placed.intersect(&self.area)
    }
}

/// Screen bounds of the main document's laid-out nodes, by backend id.
fn layout_boxes(snapshot: &Value, viewport: &Viewport) -> HashMap<i64, Bounds> {
    let mut boxes = HashMap::new();
    let mut placed = HashSet::new();
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
        // The first box of a node is its own; later ones are its text
        // fragments. Its part inside the viewport, if any, is its bounds.
        if let [x, y, w, h] = r[..] {
            if w > 0.0 && h > 0.0 && placed.insert(backend) {
                if let Some(bounds) = viewport.place_box(x - scroll_x, y - scroll_y, w, h) {
                    boxes.insert(backend, bounds);
                }
            }
        }
    }
    boxes
}

/// Nodes of the page's tree visited at most, kept or not: ignored and
/// wrapper nodes cost as much to walk as kept ones, and a page decides
/// how many it has.
const VISITS_MAX: usize = 50_000;

/// One step of the walk: enter a node, or finish a kept one once its
/// subtree is done.
enum Step<'a> {
    Enter {
        node: &'a AxNode,
        depth: usize,
        parent_name: &'a str,
    },
    Leave {
        kept_at: usize,
        control: bool,
    },
}

/// The kept nodes in pre-order, at most `limit`. The walk keeps its own
/// stack (a page nests as deep as it likes, the thread's stack does not
/// grow), visits each node id once and stops after [`VISITS_MAX`] nodes.
fn flatten(nodes: &[AxNode], boxes: &HashMap<i64, Bounds>, limit: usize) -> Vec<FlatNode> {
    // DevTools lists the nodes in tree order; the walk reaches no further
    // than its visit budget, so an answer's tail past twice that stays
    // unindexed.
    let indexed = &nodes[..nodes.len().min(2 * VISITS_MAX)];
    let mut by_id: HashMap<&str, &AxNode> = HashMap::with_capacity(indexed.len());
    by_id.extend(indexed.iter().map(|n| (n.node_id.as_str(), n)));
    let mut out = Vec::new();
    let Some(root) = indexed
        .iter()
        .find(|n| n.parent_id.is_none())
        .or(nodes.first())
    else {
        return out;
    };
    let mut visited: HashSet<&str> = HashSet::new();
    let mut visits = 0;
    let mut stack = vec![Step::Enter {
        node: root,
        depth: 0,
        parent_name: "",
    }];
    while let Some(step) = stack.pop() {
        let (node, depth, parent_name) = match step {
            Step::Enter {
                node,
                depth,
                parent_name,
            } => (node, depth, parent_name),
            Step::Leave { kept_at, control } => {
                // A kept node with nothing to say and nothing below: left out.
                if out.len() == kept_at + 1 {
                    let n: &FlatNode = &out[kept_at];
                    if n.name.is_empty() && n.value.is_none() && !control {
                        out.pop();
                    }
                }
                continue;
            }
        };
        if out.len() >= limit || visits >= VISITS_MAX {
            continue;
        }
        visits += 1;
        if !visited.insert(node.node_id.as_str()) {
            continue;
        }
        if node.property("hidden") == Some(&Value::Bool(true)) {
            continue;
        }
        let role = node.role();
        let name = node.name();
        let keep = !node.ignored
            && role != "InlineTextBox"
            && role != "LineBreak"
            && !(WRAPPER_ROLES.contains(&role) && name.is_empty())
            && !(role == "StaticText" && (name.trim().is_empty() || name == parent_name));
        if keep {
            let value = node
                .value
                .as_ref()
                .and_then(|v| v.value.as_ref())
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            let bounds = node
                .backend_dom_node_id
                .and_then(|id| boxes.get(&id))
                .copied();
            stack.push(Step::Leave {
                kept_at: out.len(),
                control: CONTROL_ROLES.contains(&role),
            });
            out.push(
                FlatNode {
                    role: role_name(role),
                    name: name.to_string(),
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
        let child_parent_name = if keep { name } else { parent_name };
        let children: Vec<&AxNode> = node
            .child_ids
            .iter()
            .filter_map(|id| by_id.get(id.as_str()).copied())
            .collect();
        // Reversed, so the first child is entered first.
        stack.extend(children.into_iter().rev().map(|child| Step::Enter {
            node: child,
            depth: child_depth,
            parent_name: child_parent_name,
        }));
    }
    out
}

fn states(node: &AxNode) -> Vec<NodeState> {
    let on = |name: &str| match node.property(name) {
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
        let v = Viewport::place(&window(), &json!([1280, 713, 1])).unwrap();
        assert_eq!(
            (v.area.x, v.area.y, v.area.width, v.area.height, v.scale),
            (0, 87, 1280, 713, 1.0)
        );
        let b = v.place_box(10.0, 20.0, 80.0, 30.0).unwrap();
        assert_eq!((b.x, b.y, b.width, b.height), (10, 107, 80, 30));
        assert_eq!(v.place_box(1.0, 1.0, 0.0, 5.0), None);
    }

    #[test]
    fn boxes_are_cut_to_the_viewport_never_the_toolbar() {
        let v = Viewport::place(&window(), &json!([1280, 713, 1])).unwrap();
        // Scrolled above the top: only the part inside the viewport.
        let b = v.place_box(10.0, -50.0, 80.0, 60.0).unwrap();
        assert_eq!((b.y, b.height), (87, 10));
        assert_eq!(v.place_box(10.0, -50.0, 80.0, 30.0), None);
        assert_eq!(v.place_box(10.0, 900.0, 80.0, 30.0), None);
        // Metrics that do not fit the window place nothing.
        assert_eq!(Viewport::place(&window(), &json!([1280, 100000, 1])), None);
        assert_eq!(Viewport::place(&window(), &json!([1280, 713, 0])), None);
        assert_eq!(Viewport::place(&window(), &json!(null)), None);
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
        let nodes = ax_nodes(json!({ "nodes": nodes }));
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

    /// A page of 200 000 nested `div`s (a script builds them in a loop):
    /// each is one more level of `generic` in the tree.
    fn nested_generics(levels: usize) -> Vec<AxNode> {
        (0..levels)
            .map(|i| {
                let children = if i + 1 < levels {
                    json!([(i + 1).to_string()])
                } else {
                    json!([])
                };
                let (role, name) = if i % 1000 == 999 {
                    ("link", format!("level {i}"))
                } else {
                    ("generic", String::new())
                };
                let mut node = json!({
                    "nodeId": i.to_string(),
                    "role": {"value": role},
                    "name": {"value": name},
                    "childIds": children,
                });
                if i > 0 {
                    node["parentId"] = json!((i - 1).to_string());
                }
                serde_json::from_value(node).unwrap()
            })
            .collect()
    }

    #[test]
    fn a_very_deep_page_is_walked_on_a_small_stack_within_a_second() {
        let nodes = nested_generics(200_000);
        let walked = std::thread::Builder::new()
            .name("small stack".into())
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let started = std::time::Instant::now();
                let flat = flatten(&nodes, &HashMap::new(), 20_000);
                (flat, started.elapsed())
            })
            .unwrap()
            .join()
            .expect("the walk does not overflow the stack");
        let (flat, took) = walked;
        assert!(took < std::time::Duration::from_secs(1), "took {took:?}");
        eprintln!("200 000 nested nodes walked in {took:?}");
        // The walk stops after its visit budget: links up to there are kept.
        assert_eq!(flat.len(), VISITS_MAX / 1000, "{:?}", flat.last());
        assert_eq!(flat[0].name, "level 999");
        assert_eq!(flat[1].depth, 1);
    }

    #[test]
    fn a_node_listed_twice_or_in_a_cycle_is_walked_once() {
        let nodes = json!([
            {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "P"}, "childIds": ["2", "2"]},
            {"nodeId": "2", "parentId": "1", "role": {"value": "button"}, "name": {"value": "Go"}, "childIds": ["1"]}
        ]);
        let flat = flatten(&ax_nodes(json!({ "nodes": nodes })), &HashMap::new(), 100);
        let names: Vec<&str> = flat.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["P", "Go"]);
    }

    #[test]
    fn a_node_in_a_shape_not_read_is_left_out_not_the_tree() {
        let nodes = ax_nodes(json!({ "nodes": [
            {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "P"}, "childIds": ["2", "3"]},
            {"nodeId": "2", "parentId": "1", "role": {"value": "button"}, "name": {"value": "Bad"}, "childIds": "3"},
            {"nodeId": "3", "parentId": "1", "role": {"value": "button"}, "name": {"value": "Go"}}
        ]}));
        let flat = flatten(&nodes, &HashMap::new(), 100);
        let names: Vec<&str> = flat.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["P", "Go"]);
        assert!(ax_nodes(json!({ "nodes": "none" })).is_empty());
    }

    #[test]
    fn role_names_are_lowercase() {
        assert_eq!(role_name("StaticText"), "text");
        assert_eq!(role_name("MenuListPopup"), "menu_list_popup");
        assert_eq!(role_name("button"), "button");
    }
}
