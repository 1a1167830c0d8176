//! The Multus networks annotation (`k8s.v1.cni.cncf.io/networks`): read in either form Multus accepts,
//! merge, write as a JSON list.
//!
//! Multus (`pkg/k8sclient/k8sclient.go`, `parsePodNetworkAnnotation`) reads the value as a JSON list when
//! it starts with `[`, else as a comma list of `namespace/name@interface` items whose namespace and name
//! are DNS-1123 labels. [`parse`] follows those rules and says where a malformed value goes wrong.

use roce_model::names::is_dns_label;
use std::borrow::Cow;
use std::ops::Range;

use roce_model::model::NadRef;
use serde_json::{Map, Value};

/// One network of the annotation, borrowing the annotation's text where it can.
#[derive(Debug, Clone)]
pub struct Network<'a> {
    /// `namespace`, when given (otherwise Multus uses the pod's namespace).
    pub namespace: Option<Cow<'a, str>>,
    /// The NetworkAttachmentDefinition name.
    pub name: Cow<'a, str>,
    /// The JSON object this entry is written as ([`Network::object`]).
    object: Object<'a>,
    /// Where the entry is in the annotation text (its name, for the comma form).
    pub range: Range<usize>,
}

/// A network's JSON object as read: only `apply`, which writes the annotation back, needs it as a map,
/// so the usual forms keep their text and build it when asked (building it for every network was most of
/// what reading the annotation cost `roce lint`).
#[derive(Debug, Clone)]
enum Object<'a> {
    /// A flat object's text (string values without escapes, no repeated key: [`flat_json`]).
    Flat(&'a str),
    /// The comma form: `name`, `namespace` and this `interface`.
    Comma(Option<&'a str>),
    /// Any other object, as serde_json read it.
    Map(Map<String, Value>),
}

impl PartialEq for Network<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.namespace == other.namespace
            && self.name == other.name
            && self.range == other.range
            && self.object() == other.object()
    }
}

impl Network<'_> {
    /// The JSON object this entry is written as: every field the author gave, in order.
    pub(crate) fn object(&self) -> Map<String, Value> {
        match &self.object {
            Object::Flat(text) => {
                serde_json::from_str(text).expect("a flat JSON object that flat_json read")
            }
            Object::Comma(interface) => {
                let mut object = Map::new();
                object.insert("name".into(), Value::String(self.name.to_string()));
                if let Some(ns) = &self.namespace {
                    object.insert("namespace".into(), Value::String(ns.to_string()));
                }
                if let Some(interface) = interface {
                    object.insert("interface".into(), Value::String(interface.to_string()));
                }
                object
            }
            Object::Map(map) => map.clone(),
        }
    }

    /// Is this `nad`, for a pod in `pod_namespace`? A network and a pod that both leave the namespace out
    /// resolve in the namespace the manifest is applied in: `default` unless the user's context says otherwise.
    pub fn is(&self, nad: &NadRef, pod_namespace: Option<&str>) -> bool {
        self.name == nad.name().as_str()
            && self
                .namespace
                .as_deref()
                .or(pod_namespace)
                .unwrap_or("default")
                == nad.namespace().as_str()
    }
}

/// Why an annotation value is not one Multus can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// What is wrong.
    pub message: String,
    /// Where, in the annotation text.
    pub range: Range<usize>,
}

/// Parse an annotation value.
///
/// ```
/// use roce_render::plumbing::multus::parse;
/// let nets = parse("cw-multus/ibs0p0-macvlan@net1, other").unwrap();
/// assert_eq!(nets[0].namespace.as_deref(), Some("cw-multus"));
/// assert_eq!(nets[1].name, "other");
/// assert!(parse("[{\"name\": ").is_err());
/// ```
///
/// # Errors
///
/// [`Malformed`] with the place of the first problem.
pub fn parse(value: &str) -> Result<Vec<Network<'_>>, Malformed> {
    let trimmed = value.trim_start();
    if trimmed.starts_with('[') {
        parse_json(value)
    } else {
        parse_comma(value)
    }
}

fn parse_json(value: &str) -> Result<Vec<Network<'_>>, Malformed> {
    match flat_json(value) {
        Some(networks) => Ok(networks),
        None => serde_json_list(value),
    }
}

/// The JSON form as written almost always (a list of objects whose values are strings without escapes),
/// read without serde_json's `Value`s, whose building was a sixth of `roce lint`'s instructions. `None`
/// for anything else (other values, escapes, a repeated key, no `name`, malformed text), which
/// [`serde_json_list`] reads, or refuses, as before; the tests compare both.
fn flat_json(value: &str) -> Option<Vec<Network<'_>>> {
    let b = value.as_bytes();
    let space = |i: &mut usize| {
        while matches!(b.get(*i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> Option<&str> {
        let start = *i + 1;
        (b.get(*i) == Some(&b'"')).then_some(())?;
        let len = b[start..]
            .iter()
            .position(|&c| matches!(c, b'"' | b'\\' | ..b' '))?;
        (b[start + len] == b'"').then_some(())?;
        *i = start + len + 1;
        Some(&value[start..start + len])
    };
    let (mut i, mut out, mut search_from) = (0, Vec::new(), 0);
    // One object's keys, for the repeat check (a handful: a linear search).
    let mut keys: Vec<&str> = Vec::new();
    space(&mut i);
    (b.get(i) == Some(&b'[')).then_some(())?;
    i += 1;
    space(&mut i);
    let mut more = b.get(i) != Some(&b']');
    if !more {
        i += 1;
    }
    while more {
        (b.get(i) == Some(&b'{')).then_some(())?;
        let start = i;
        i += 1;
        keys.clear();
        let (mut name, mut namespace) = (None, None);
        loop {
            space(&mut i);
            let key = string(&mut i)?;
            space(&mut i);
            (b.get(i) == Some(&b':')).then_some(())?;
            i += 1;
            space(&mut i);
            let v = string(&mut i)?;
            match key {
                "name" => name = Some(v),
                "namespace" => namespace = Some(v),
                _ => {}
            }
            if keys.contains(&key) {
                return None;
            }
            keys.push(key);
            space(&mut i);
            i += 1;
            match b.get(i - 1) {
                Some(b',') => {}
                Some(b'}') => break,
                _ => return None,
            }
        }
        let object = Object::Flat(&value[start..i]);
        let name = name.filter(|n| !n.is_empty())?;
        let namespace = namespace.filter(|n| !n.is_empty()).map(Cow::Borrowed);
        let range = name_place(value, search_from, name);
        search_from = range.end.max(search_from);
        out.push(Network {
            namespace,
            name: Cow::Borrowed(name),
            object,
            range,
        });
        space(&mut i);
        i += 1;
        more = match b.get(i - 1) {
            Some(b',') => {
                space(&mut i);
                true
            }
            Some(b']') => false,
            _ => return None,
        };
    }
    space(&mut i);
    (i == b.len()).then_some(out)
}

/// Where `"name"` first stands in `value` from `from`: the name, without its quotes (`0..0` if nowhere).
fn name_place(value: &str, from: usize, name: &str) -> Range<usize> {
    let b = value.as_bytes();
    // A plain loop: the name is a few quotes on, too close for a vectorised search to pay.
    (from..b.len())
        .filter(|&q| b[q] == b'"')
        .map(|q| q + 1)
        .find(|&at| b[at..].starts_with(name.as_bytes()) && b.get(at + name.len()) == Some(&b'"'))
        .map_or(0..0, |at| at..at + name.len())
}

/// The JSON form read with serde_json: every shape Multus accepts, and the error where it does not.
fn serde_json_list(value: &str) -> Result<Vec<Network<'static>>, Malformed> {
    let list: Vec<Value> = serde_json::from_str(value).map_err(|e| {
        // The place is the problem's label; drop serde_json's " at line L column C".
        let text = e.to_string();
        let what = text
            .rfind(" at line ")
            .map_or(text.as_str(), |i| &text[..i]);
        Malformed {
            message: format!("not valid JSON ({what})"),
            range: json_error_range(value, e.line(), e.column()),
        }
    })?;
    let mut out = Vec::with_capacity(list.len());
    let mut search_from = 0;
    for (i, item) in list.into_iter().enumerate() {
        let Value::Object(object) = item else {
            return Err(Malformed {
                message: format!("item {} is not an object with a \"name\"", i + 1),
                range: 0..value.len(),
            });
        };
        let name = match object.get("name") {
            Some(Value::String(s)) if !s.is_empty() => Cow::Owned(s.clone()),
            _ => {
                return Err(Malformed {
                    message: format!("item {} has no \"name\"", i + 1),
                    range: 0..value.len(),
                });
            }
        };
        let namespace = match object.get("namespace") {
            None => None,
            Some(Value::String(s)) => Some(Cow::Owned::<str>(s.clone())).filter(|s| !s.is_empty()),
            Some(_) => {
                return Err(Malformed {
                    message: format!("item {} has a \"namespace\" that is not a string", i + 1),
                    range: 0..value.len(),
                });
            }
        };
        let range = name_place(value, search_from, &name);
        search_from = range.end.max(search_from);
        out.push(Network {
            namespace,
            name,
            object: Object::Map(object),
            range,
        });
    }
    Ok(out)
}

/// The byte range of a serde_json error position (1-based line and column).
fn json_error_range(value: &str, line: usize, column: usize) -> Range<usize> {
    let start = value
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>();
    let at = (start + column.saturating_sub(1)).min(value.len());
    let at = (0..=at)
        .rev()
        .find(|i| value.is_char_boundary(*i))
        .unwrap_or(0);
    let end = value[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    at..end
}

fn parse_comma(value: &str) -> Result<Vec<Network<'_>>, Malformed> {
    let mut out = Vec::new();
    if value.trim().is_empty() {
        return Ok(out);
    }
    let mut offset = 0;
    for item in value.split(',') {
        let range = offset..offset + item.len();
        offset += item.len() + 1;
        let bad = |message: String| Malformed {
            message,
            range: range.clone(),
        };
        let trimmed = item.trim();
        let (namespace, rest) = match trimmed.split('/').collect::<Vec<_>>()[..] {
            [name] => (None, name),
            [ns, name] => (Some(ns.trim()), name),
            _ => return Err(bad(format!("`{trimmed}` has more than one `/`"))),
        };
        let (name, interface) = match rest.split('@').collect::<Vec<_>>()[..] {
            [name] => (name.trim(), None),
            [name, interface] => (name.trim(), Some(interface.trim())),
            _ => return Err(bad(format!("`{trimmed}` has more than one `@`"))),
        };
        if name.is_empty() {
            return Err(bad(if trimmed.is_empty() {
                "an empty entry (a stray comma?)".to_string()
            } else {
                format!("`{trimmed}` has no network name")
            }));
        }
        for part in [namespace.unwrap_or(""), name] {
            if !part.is_empty() && !is_dns_label(part) {
                return Err(bad(format!(
                    "`{part}` is not a valid name (lowercase letters, digits and `-`, at most 63)"
                )));
            }
        }
        let lead = item.len() - item.trim_start().len();
        let name_at = range.start + lead + trimmed.rfind(name).unwrap_or(0);
        out.push(Network {
            namespace: namespace.filter(|n| !n.is_empty()).map(Cow::Borrowed),
            name: Cow::Borrowed(name),
            object: Object::Comma(interface.filter(|i| !i.is_empty())),
            range: name_at..name_at + name.len(),
        });
    }
    Ok(out)
}

/// The JSON object for a profile network (`{"name":…,"namespace":…}`, the layout of
/// [`crate::plan::PodWiring::multus_annotation`]).
pub(crate) fn nad_object(nad: &NadRef) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("name".into(), Value::String(nad.name().to_string()));
    object.insert(
        "namespace".into(),
        Value::String(nad.namespace().to_string()),
    );
    object
}

/// Merge the profile's networks into an annotation's: every existing entry first, in its order, less any
/// second copy of a profile network; then the profile networks it lacks, in rail order.
pub(crate) fn merge(
    existing: &[Network<'_>],
    nads: &[NadRef],
    pod_namespace: Option<&str>,
) -> Vec<Map<String, Value>> {
    let mut out = Vec::with_capacity(existing.len() + nads.len());
    let mut seen = vec![false; nads.len()];
    for net in existing {
        match nads.iter().position(|n| net.is(n, pod_namespace)) {
            Some(i) if seen[i] => continue,
            Some(i) => seen[i] = true,
            None => {}
        }
        out.push(net.object());
    }
    for (nad, seen) in nads.iter().zip(seen) {
        if !seen {
            out.push(nad_object(nad));
        }
    }
    out
}

/// The annotation value: a JSON list, one object per line.
pub(crate) fn render(objects: &[Map<String, Value>]) -> String {
    let items: Vec<String> = objects
        .iter()
        .map(|o| serde_json::to_string(o).expect("a JSON map serialises"))
        .collect();
    format!("[{}]", items.join(",\n "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nad(ns: &str, name: &str) -> NadRef {
        NadRef::new(ns.parse().unwrap(), name.parse().unwrap())
    }

    #[test]
    fn comma_form_follows_multus() {
        let nets = parse(" a/b@net1 ,c , d@x").unwrap();
        assert_eq!(nets.len(), 3);
        assert_eq!(nets[0].namespace.as_deref(), Some("a"));
        assert_eq!(
            nets[0].object().get("interface").and_then(Value::as_str),
            Some("net1")
        );
        assert_eq!(&" a/b@net1 ,c , d@x"[nets[0].range.clone()], "b");
        assert_eq!(&" a/b@net1 ,c , d@x"[nets[2].range.clone()], "d");
        assert!(nets[1].namespace.is_none());
        for bad in ["a/b/c", "a@b@c", "a,,b", "A", "a/", "x_y"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn json_form_keeps_objects_and_places() {
        let text =
            "[{\"name\":\"x\",\"ips\":[\"10.0.0.1\"]},\n {\"name\":\"y\",\"namespace\":\"n\"}]";
        let nets = parse(text).unwrap();
        assert_eq!(&text[nets[1].range.clone()], "y");
        assert!(nets[0].object().contains_key("ips"));
        let err = parse("[{\"name\":\"x\"},\n {\"name\" \"y\"}]").unwrap_err();
        assert_eq!(err.range.start, "[{\"name\":\"x\"},\n {\"name\" ".len());
        assert!(parse("[1]").is_err());
        assert!(parse("[{\"namespace\":\"a\"}]").is_err());
    }

    #[test]
    fn flat_json_reads_as_serde_json_does() {
        let texts = [
            "[]",
            " [ ] ",
            "[{\"name\":\"a\"}]",
            "[{\"name\":\"a\",\"namespace\":\"n\"},\n {\"name\":\"b\",\"namespace\":\"\"}]\n",
            "[{\"namespace\":\"x\",\"name\":\"x\"}, {\"name\":\"x\"}]",
            "[{\"name\":\"é\", \"interface\" : \"net1\"}]",
            "[{\"name\":\"a\"},]",
            "[{\"name\":\"a\"}",
            "[{\"name\":\"a\"}] x",
            "[{\"name\":\"a\",\"name\":\"b\"}]",
            "[{\"name\":\"\"}]",
            "[{\"namespace\":\"a\"}]",
            "[{}]",
            "[{\"name\":\"a\\\"b\"}]",
            "[{\"name\":\"a\tb\"}]",
            "[{\"name\":\"a\",\"ips\":[\"10.0.0.1\"]}]",
            "[{\"name\":1}]",
            "[1]",
            "[{\"name\" \"y\"}]",
        ];
        for text in texts {
            if let Some(fast) = flat_json(text) {
                assert_eq!(Ok(fast), serde_json_list(text), "{text:?}");
            }
        }
        assert!(flat_json(texts[3]).is_some() && flat_json(texts[4]).is_some());
    }

    #[test]
    fn merge_keeps_existing_first_and_dedupes_profile_networks() {
        let existing = parse("other, cw/b, cw/a, cw/b").unwrap();
        let merged = merge(
            &existing,
            &[nad("cw", "a"), nad("cw", "b"), nad("cw", "c")],
            None,
        );
        let names: Vec<_> = merged.iter().map(|o| o["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["other", "b", "a", "c"]);
        // A namespace-less entry is the pod's namespace.
        let existing = parse("a").unwrap();
        assert_eq!(merge(&existing, &[nad("cw", "a")], Some("cw")).len(), 1);
        assert_eq!(merge(&existing, &[nad("cw", "a")], Some("x")).len(), 2);
    }
}
