//! The JSON Schemas a client is shown, made plain. schemars describes Rust
//! types: `format: "uint32"` for an integer, `["integer", "null"]` and
//! `"default": null` for an `Option`. A model pays for every character of
//! them in each request, and validators such as the TypeScript SDK's warn
//! about formats JSON Schema does not define. [`publish_input`] and
//! [`publish_output`] keep what a client needs to send a valid call and to
//! check a result (types, limits, enums, descriptions, required fields) and
//! drop the rest.

use serde_json::{Map, Value};

/// The `format` values JSON Schema 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// An input schema as published: no `$schema` (2020-12 is MCP's
/// default), no non-standard formats, no descriptions on shared types
/// (the fields that use them have theirs), and an optional field shown as its
/// type alone, since leaving it out is how a caller says "none". Nor
/// `additionalProperties: false`: a misspelt field is refused all the same,
/// by an error that names it and the fields there are.
pub fn publish_input(schema: &Map<String, Value>) -> Map<String, Value> {
    publish(schema, Side::Input)
}

/// An output schema as published: as [`publish_input`], but a field that
/// may be `null` keeps saying so, because clients check each result's
/// `structuredContent` against it, and closed objects stay closed.
pub fn publish_output(schema: &Map<String, Value>) -> Map<String, Value> {
    publish(schema, Side::Output)
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Input,
    Output,
}

fn publish(schema: &Map<String, Value>, side: Side) -> Map<String, Value> {
    let mut schema = schema.clone();
    schema.remove("$schema");
    // A shared type's own doc (rustdoc, written for this code's readers)
    // says less than the field that uses it, which has its own.
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        for def in defs.values_mut() {
            if let Value::Object(def) = def {
                def.remove("description");
            }
        }
    }
    inline_choices(&mut schema);
    each_object(&mut schema, &mut |node| plain(node, side));
    schema
}

/// Calls `visit` on `map` and then on every object below it.
fn each_object(map: &mut Map<String, Value>, visit: &mut impl FnMut(&mut Map<String, Value>)) {
    visit(map);
    for child in map.values_mut() {
        each_object_in(child, visit);
    }
}

fn each_object_in(node: &mut Value, visit: &mut impl FnMut(&mut Map<String, Value>)) {
    match node {
        Value::Object(map) => each_object(map, visit),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| each_object_in(item, visit)),
        _ => {}
    }
}

/// A shared type that is only a choice of strings (`ImageFormat`,
/// `Settle`, `View`) is written where it is used, as `"enum": [...]`: the
/// `$ref` and the `$defs` entry cost more than the list. A `oneOf` of
/// constants becomes the same `enum`; the field's description says what
/// each means.
fn inline_choices(schema: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return;
    };
    let choices: Map<String, Value> = defs
        .iter()
        .filter_map(|(name, def)| Some((format!("#/$defs/{name}"), choice_of(def)?)))
        .collect();
    if choices.is_empty() {
        return;
    }
    each_object(schema, &mut |node| {
        let target = node.get("$ref").and_then(Value::as_str);
        if let Some(Value::Object(choice)) = target.and_then(|t| choices.get(t)) {
            let choice = choice.clone();
            node.remove("$ref");
            for (key, value) in choice {
                node.entry(key).or_insert(value);
            }
        }
    });
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.retain(|name, _| !choices.contains_key(&format!("#/$defs/{name}")));
        if defs.is_empty() {
            schema.remove("$defs");
        }
    }
}

/// `{"enum": [strings]}` when `def` is a choice of strings, plain or as a
/// `oneOf` of constants.
fn choice_of(def: &Value) -> Option<Value> {
    let def = def.as_object()?;
    let values: Vec<Value> = if let Some(Value::Array(values)) = def.get("enum") {
        values.clone()
    } else if let Some(Value::Array(branches)) = def.get("oneOf") {
        branches
            .iter()
            .map(|b| b.get("const").cloned())
            .collect::<Option<_>>()?
    } else {
        return None;
    };
    values
        .iter()
        .all(Value::is_string)
        .then(|| serde_json::json!({ "enum": values }))
}

/// Makes one schema object plain (its children are visited on their own).
fn plain(map: &mut Map<String, Value>, side: Side) {
    if let Some(Value::String(format)) = map.get("format") {
        if !STANDARD_FORMATS.contains(&format.as_str()) {
            map.remove("format");
        }
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if side == Side::Input {
        drop_null_type(map);
        drop_null_branch(map);
        if map.get("additionalProperties") == Some(&Value::Bool(false)) {
            map.remove("additionalProperties");
        }
    }
}

/// `"type": ["integer", "null"]` becomes `"type": "integer"`.
fn drop_null_type(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get_mut("type") else {
        return;
    };
    types.retain(|t| t != "null");
    if types.len() == 1 {
        let only = types.remove(0);
        map.insert("type".into(), only);
    }
}

/// `"anyOf": [X, {"type": "null"}]` becomes X's keys beside the node's own
/// (its description and default stay).
fn drop_null_branch(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    let is_null = |b: &Value| {
        b.as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&Value::String("null".into())))
    };
    if branches.len() != 2 || !branches.iter().any(is_null) {
        return;
    }
    let kept = branches.iter().find(|b| !is_null(b)).cloned();
    map.remove("anyOf");
    if let Some(Value::Object(kept)) = kept {
        for (key, value) in kept {
            map.entry(key).or_insert(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn published(schema: Value) -> Value {
        Value::Object(publish_input(schema.as_object().unwrap()))
    }

    #[test]
    fn rust_formats_and_nulls_go_and_limits_stay() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "ImageFormat": {"description": "rustdoc", "type": "string", "enum": ["png", "jpeg"]},
                "View": {"oneOf": [{"const": "image", "type": "string"}, {"const": "text", "type": "string"}]},
                "Region": {"description": "rustdoc", "type": "object"}
            },
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "max_side": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "default": null, "description": "256 to 7680"},
                "when": {"type": "string", "format": "date-time"},
                "format": {"anyOf": [{"$ref": "#/$defs/ImageFormat"}, {"type": "null"}], "default": null, "description": "png or jpeg"},
                "view": {"$ref": "#/$defs/View", "default": "image"},
                "region": {"$ref": "#/$defs/Region"}
            },
            "required": []
        });
        assert_eq!(
            published(schema),
            json!({
                "$defs": {"Region": {"type": "object"}},
                "type": "object",
                "properties": {
                    "max_side": {"type": "integer", "minimum": 0, "description": "256 to 7680"},
                    "when": {"type": "string", "format": "date-time"},
                    "format": {"enum": ["png", "jpeg"], "description": "png or jpeg"},
                    "view": {"enum": ["image", "text"], "default": "image"},
                    "region": {"$ref": "#/$defs/Region"}
                },
                "required": []
            })
        );
    }

    #[test]
    fn outputs_keep_their_nulls_and_lose_rust_formats() {
        let schema = json!({"properties": {"x": {"type": ["integer", "null"], "format": "int32"}}});
        let output = Value::Object(publish_output(schema.as_object().unwrap()));
        assert_eq!(
            output,
            json!({"properties": {"x": {"type": ["integer", "null"]}}})
        );
    }

    #[test]
    fn a_real_choice_between_types_is_kept() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "type": ["string", "integer"]});
        assert_eq!(published(schema.clone()), schema);
    }
}
