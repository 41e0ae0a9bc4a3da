//! The MCP tests check every tool result's structured content against the
//! tool's published `outputSchema` with the `jsonschema` crate, so a schema
//! that lies fails the suite.

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
/// `path: problem` lines; empty when it fits. The check is the `jsonschema`
/// crate's, for the draft the schema names (schemars writes 2020-12).
pub fn violations(root: &Map<String, Value>, value: &Value) -> Vec<String> {
    let schema = Value::Object(root.clone());
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| {
        panic!("the published schema is not a valid JSON Schema: {e}\n{schema}")
    });
    validator
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Where a recording's `walkthrough.json`, read into `data`, breaks its
/// published schema (`protocol/schema/walkthrough.schema.json`).
pub fn walkthrough_violations(data: &Value) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../protocol/schema/walkthrough.schema.json");
    let text =
        std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let schema: Value = serde_json::from_slice(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    violations(schema.as_object().expect("the schema is an object"), data)
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
