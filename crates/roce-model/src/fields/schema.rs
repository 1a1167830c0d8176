//! The JSON Schema of the YAML profile format (`roce schema`, `docs/profile.schema.json`), from the table.

use serde_json::{Map, Value, json};

use super::{ENV_VALUE, Field, Kind, PROFILE, REMOVE, Req, Section};

/// The JSON Schema of the YAML profile format, as `roce schema` prints it and `docs/profile.schema.json`
/// holds it: pretty-printed, with a final newline.
///
/// ```
/// let schema: serde_json::Value = serde_json::from_str(&roce_model::profile_schema()).unwrap();
/// assert_eq!(schema["required"], serde_json::json!(["name"]));
/// assert!(schema["properties"]["fabric"].is_object());
/// ```
pub fn profile_schema() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).expect("a JSON value prints");
    text.push('\n');
    text
}

fn schema() -> Value {
    let mut top = Map::new();
    top.insert(
        "$schema".into(),
        "https://json-schema.org/draft/2020-12/schema".into(),
    );
    top.insert("$id".into(), "https://roce.dev/profile.schema.json".into());
    top.insert("title".into(), "roce fabric profile (YAML form)".into());
    top.insert(
        "description".into(),
        "A GPUDirect RDMA fabric profile for roce. The KDL form has the same keys; see docs/reference.md."
            .into(),
    );
    top.extend(object(&PROFILE, None));
    Value::Object(top)
}

/// A section as a closed object: `type`, `description`, `additionalProperties`, `required`, `properties`.
fn object(s: &Section, description: Option<&str>) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("type".into(), "object".into());
    if let Some(d) = description {
        o.insert("description".into(), d.into());
    }
    o.insert("additionalProperties".into(), false.into());
    let required: Vec<&str> = s
        .fields
        .iter()
        .filter(|f| f.req == Req::Always)
        .map(|f| f.key)
        .collect();
    if !required.is_empty() {
        o.insert("required".into(), json!(required));
    }
    let props = s
        .fields
        .iter()
        .map(|f| (f.key.to_string(), field(f, s.path.is_empty())))
        .collect();
    o.insert("properties".into(), Value::Object(props));
    o
}

/// One field's schema. A top-level section or list may be null in a layer (it removes the inherited one),
/// and so may an `env` map anywhere.
fn field(f: &Field, top: bool) -> Value {
    let removable =
        |v: Value| -> Value { json!({ "anyOf": [v, { "type": "null", "description": REMOVE }] }) };
    match f.kind {
        Kind::Str { pattern } => {
            let mut o = Map::new();
            o.insert("type".into(), "string".into());
            if let Some(p) = pattern {
                o.insert("pattern".into(), p.into());
            }
            o.insert("description".into(), f.summary.into());
            Value::Object(o)
        }
        Kind::Int { min, max } => json!({
            "type": "integer", "minimum": min, "maximum": max, "description": f.summary,
        }),
        Kind::Bool => json!({ "type": "boolean", "description": f.summary }),
        Kind::Choice(values) => {
            json!({ "type": "string", "description": f.summary, "enum": values })
        }
        Kind::Strings { choices } => {
            let item = match choices {
                Some(c) => json!({ "type": "string", "enum": c }),
                None => json!({ "type": "string" }),
            };
            let mut any = vec![json!({ "type": "array", "items": item }), item];
            if top {
                any.push(json!({ "type": "null", "description": REMOVE }));
            }
            json!({ "description": f.summary, "anyOf": any })
        }
        Kind::DeviceNames { list } => json!({ "anyOf": [
            { "type": "string", "description": f.summary },
            {
                "type": "array",
                "items": { "type": "string", "pattern": "^[^{},:\\s]+$" },
                "minItems": 1,
                "uniqueItems": true,
                "description": list,
            },
        ]}),
        Kind::Labels => json!({
            "type": "object", "description": f.summary, "additionalProperties": { "type": "string" },
        }),
        Kind::Env { prefix } => {
            let names = match prefix {
                Some(p) => format!("^{p}[A-Za-z0-9_]*$"),
                None => "^[A-Za-z_][A-Za-z0-9_]*$".to_string(),
            };
            let map = json!({
                "type": "object",
                "description": f.summary,
                "additionalProperties": { "description": ENV_VALUE, "type": ["string", "integer"] },
                "propertyNames": { "pattern": names },
            });
            if prefix.is_none() {
                removable(map)
            } else {
                map
            }
        }
        Kind::Section(s) => {
            let map = Value::Object(object(s, Some(f.summary)));
            let short = s.short.map(|d| {
                let choices = s
                    .positional
                    .and_then(|p| s.field(p))
                    .and_then(|p| match p.kind {
                        Kind::Choice(c) => Some(c),
                        _ => None,
                    });
                match choices {
                    Some(c) => json!({ "type": "string", "description": d, "enum": c }),
                    None => json!({ "type": "string", "description": d }),
                }
            });
            let mut any: Vec<Value> = std::iter::once(map).chain(short).collect();
            if top {
                any.push(json!({ "type": "null", "description": REMOVE }));
            }
            if any.len() == 1 {
                any.remove(0)
            } else {
                json!({ "anyOf": any })
            }
        }
        Kind::Named(s) => json!({
            "type": "object",
            "description": f.summary,
            "additionalProperties": Value::Object(object(s, None)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// `docs/profile.schema.json` is the table's schema; `ROCE_BLESS=1` rewrites it.
    #[test]
    fn schema_file_is_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/profile.schema.json");
        let want = super::profile_schema();
        if std::env::var_os("ROCE_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/profile.schema.json is stale; regenerate it with\n  \
             ROCE_BLESS=1 cargo test -p roce-model --lib schema_file_is_current"
        );
    }
}
