//! A small JSON Schema check, enough for the schemas schemars writes for
//! the tools' results (`$ref` into `$defs`, `type`, `properties`,
//! `required`, `additionalProperties`, `items`, `anyOf`/`oneOf`/`allOf`,
//! `enum`, `const`, integer bounds). The MCP tests check every tool
//! result's structured content against the tool's published
//! `outputSchema` with it, so a schema that lies fails the suite.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;

/// The tools' output schemas, read once per test binary (every host in
/// it is the same build).
static OUTPUT_SCHEMAS: Mutex<Option<HashMap<String, Map<String, Value>>>> = Mutex::new(None);

/// Panics when `structured`, what `tool` returned, does not fit the
/// `outputSchema` the server lists for it.
pub async fn assert_fits_output_schema(
    client: &super::mcp::Client,
    tool: &str,
    structured: &Value,
) {
    let known = OUTPUT_SCHEMAS.lock().unwrap().clone();
    let schemas = match known {
        Some(schemas) => schemas,
        None => {
            let listed = client.list_all_tools().await.expect("tools/list");
            let schemas: HashMap<_, _> = listed
                .into_iter()
                .filter_map(|t| Some((t.name.to_string(), t.output_schema?.as_ref().clone())))
                .collect();
            *OUTPUT_SCHEMAS.lock().unwrap() = Some(schemas.clone());
            schemas
        }
    };
    let schema = schemas.get(tool).unwrap_or_else(|| {
        panic!("`{tool}` returned structured content but lists no outputSchema")
    });
    let wrong = violations(schema, structured);
    assert!(
        wrong.is_empty(),
        "`{tool}`'s structured content does not fit its outputSchema:\n{}\n{structured}",
        wrong.join("\n")
    );
}

/// Where `value` breaks `schema` (whose `$defs` are in `root`), as
/// `path: problem` lines; empty when it fits.
pub fn violations(root: &Map<String, Value>, value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    check(root, &Value::Object(root.clone()), value, "$", &mut found);
    found
}

fn check(
    root: &Map<String, Value>,
    schema: &Value,
    value: &Value,
    at: &str,
    found: &mut Vec<String>,
) {
    let Some(schema) = schema.as_object() else {
        // `true` accepts anything; `false` nothing.
        if schema == &Value::Bool(false) {
            found.push(format!("{at}: nothing is allowed here"));
        }
        return;
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/");
        match root.get("$defs").and_then(|d| d.get(name)) {
            Some(target) => check(root, target, value, at, found),
            None => found.push(format!("{at}: unknown $ref {reference}")),
        }
    }
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !allowed.iter().any(|t| is_type(value, t)) {
            found.push(format!("{at}: {value} is not of type {allowed:?}"));
            return;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            found.push(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            found.push(format!("{at}: {value} is not {constant}"));
        }
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if n < min {
            found.push(format!("{at}: {n} is under the minimum {min}"));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let fits = options.iter().any(|option| {
                let mut inner = Vec::new();
                check(root, option, value, at, &mut inner);
                inner.is_empty()
            });
            if !fits {
                found.push(format!("{at}: {value} fits none of {key}"));
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            check(root, part, value, at, found);
        }
    }
    if let Value::Object(fields) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    found.push(format!("{at}: required field `{name}` is missing"));
                }
            }
        }
        for (name, field) in fields {
            let path = format!("{at}.{name}");
            match properties.and_then(|p| p.get(name)) {
                Some(field_schema) => check(root, field_schema, field, &path, found),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        found.push(format!("{path}: not in the schema"));
                    }
                    Some(extra) => check(root, extra, field, &path, found),
                    None => {}
                },
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(root, item_schema, item, &format!("{at}[{i}]"), found);
        }
    }
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_checker_catches_what_it_should() {
        let schema = json!({
            "type": "object",
            "$defs": {"Id": {"type": "integer", "minimum": 0}},
            "properties": {
                "id": {"$ref": "#/$defs/Id"},
                "name": {"type": ["string", "null"]},
                "kind": {"enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["id"],
            "additionalProperties": false
        });
        let root = schema.as_object().unwrap();
        assert!(violations(
            root,
            &json!({"id": 1, "name": null, "kind": "a", "tags": ["x"]})
        )
        .is_empty());
        assert_eq!(violations(root, &json!({"name": "x"})).len(), 1);
        assert_eq!(violations(root, &json!({"id": -1})).len(), 1);
        assert_eq!(violations(root, &json!({"id": 1, "kind": "c"})).len(), 1);
        assert_eq!(violations(root, &json!({"id": 1, "tags": [3]})).len(), 1);
        assert_eq!(violations(root, &json!({"id": 1, "extra": 3})).len(), 1);
    }
}
