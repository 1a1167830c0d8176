//! The nodes of a campaign, from whatever list the user has: one name per line, `kubectl get nodes`
//! output (wide or not, or `-o name`), or a Slurm host list expression (`gpu[001-004,007],cpu-[1-2]`).
//!
//! Nodes `kubectl` reports as not `Ready`, or cordoned (`SchedulingDisabled`), cannot run a test: they are
//! kept aside with the reason, and the report lists them as untested.

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// A node name, as Kubernetes (`kubernetes.io/hostname`) and Slurm (`NodeName`) spell it: an RFC 1123
/// subdomain of lower-case letters, digits, `-` and `.`, at most 253 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct NodeName(String);

impl TryFrom<String> for NodeName {
    type Error = String;
    fn try_from(s: String) -> Result<NodeName, String> {
        NodeName::new(&s)
    }
}

impl From<NodeName> for String {
    fn from(n: NodeName) -> String {
        n.0
    }
}

impl NodeName {
    /// A checked name.
    pub fn new(name: &str) -> Result<NodeName, String> {
        if !roce_model::names::is_dns_subdomain(name) {
            return Err(format!(
                "{name:?} is not a node name: Kubernetes and Slurm node names are lower-case letters, digits, \
                 '-' and '.', in labels of 1 to 63 characters"
            ));
        }
        Ok(NodeName(name.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The nodes a list names, in its order, and those it names that cannot be tested.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NodeList {
    /// Nodes to test.
    pub nodes: Vec<NodeName>,
    /// Nodes left out, with why (`NotReady`, `SchedulingDisabled`).
    pub excluded: IndexMap<NodeName, String>,
}

/// A list that cannot be read: the 1-based line and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct NodeListError {
    /// 1-based line.
    pub line: usize,
    /// Why.
    pub why: String,
}

impl NodeList {
    /// Read a node list in any of the forms the module docs name.
    ///
    /// ```
    /// use roce_render::sweep::NodeList;
    /// let l = NodeList::parse("gpu[001-003,007]").unwrap();
    /// assert_eq!(l.nodes.iter().map(|n| n.as_str()).collect::<Vec<_>>(), ["gpu001", "gpu002", "gpu003", "gpu007"]);
    /// let k = NodeList::parse("NAME   STATUS                     ROLES  AGE  VERSION\n\
    ///                          g1     Ready                      <none> 3d   v1.34.1\n\
    ///                          g2     Ready,SchedulingDisabled   <none> 3d   v1.34.1\n").unwrap();
    /// assert_eq!(k.nodes.len(), 1);
    /// assert_eq!(k.excluded.values().next().unwrap(), "SchedulingDisabled");
    /// ```
    pub fn parse(text: &str) -> Result<NodeList, NodeListError> {
        let mut list = NodeList::default();
        let mut seen = IndexMap::new();
        let mut add = |list: &mut NodeList, line: usize, name: &str, excluded: Option<String>| {
            let name = NodeName::new(name).map_err(|why| NodeListError { line, why })?;
            if let Some(first) = seen.insert(name.clone(), line) {
                return Err(NodeListError {
                    line,
                    why: format!("{name} is listed twice (first on line {first})"),
                });
            }
            match excluded {
                Some(why) => {
                    list.excluded.insert(name, why);
                }
                None => list.nodes.push(name),
            }
            Ok(())
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let Some((first_no, first)) = lines.next() else {
            return Ok(list);
        };
        let header: Vec<&str> = first.split_whitespace().collect();
        if header.first() == Some(&"NAME") && header.get(1) == Some(&"STATUS") {
            // `kubectl get nodes [-o wide]`
            for (no, line) in lines {
                let mut cols = line.split_whitespace();
                let (Some(name), Some(status)) = (cols.next(), cols.next()) else {
                    return Err(NodeListError {
                        line: no,
                        why: "a `kubectl get nodes` row needs NAME and STATUS".into(),
                    });
                };
                let why_not = status
                    .split(',')
                    .filter(|s| *s != "Ready")
                    .collect::<Vec<_>>()
                    .join(",");
                let ready = status.split(',').any(|s| s == "Ready");
                let excluded = match (ready, why_not.is_empty()) {
                    (true, true) => None,
                    (true, false) => Some(why_not),
                    (false, _) => Some(status.to_string()),
                };
                add(&mut list, no, name, excluded)?;
            }
            return Ok(list);
        }
        for (no, line) in std::iter::once((first_no, first)).chain(lines) {
            let line = line.split('#').next().unwrap_or_default().trim();
            for name in expand_hostlist(line).map_err(|why| NodeListError { line: no, why })? {
                let name = name.strip_prefix("node/").unwrap_or(&name).to_string();
                add(&mut list, no, &name, None)?;
            }
        }
        Ok(list)
    }
}

/// Expand a Slurm host list (`a[1-3,7],b`, zero padding kept) or a whitespace-separated list of names.
fn expand_hostlist(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in split_top_level(text)? {
        match item.find('[') {
            None => out.push(item.to_string()),
            Some(open) => {
                let close = item[open..]
                    .find(']')
                    .map(|c| open + c)
                    .ok_or_else(|| format!("{item:?}: '[' without ']'"))?;
                let (prefix, ranges, suffix) =
                    (&item[..open], &item[open + 1..close], &item[close + 1..]);
                if suffix.contains('[') {
                    return Err(format!(
                        "{item:?}: only one bracketed range per name is supported"
                    ));
                }
                for range in ranges.split(',') {
                    let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                    let bad = || format!("{item:?}: {range:?} is not N or N-M");
                    let (a, b): (u64, u64) = (
                        lo.parse().map_err(|_| bad())?,
                        hi.parse().map_err(|_| bad())?,
                    );
                    if b < a || b - a > 100_000 {
                        return Err(bad());
                    }
                    let width = lo.len();
                    for n in a..=b {
                        out.push(format!("{prefix}{n:0width$}{suffix}"));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Split at commas and whitespace outside brackets.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("{text:?}: ']' without '['"))?;
            }
            ',' | ' ' | '\t' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("{text:?}: '[' without ']'"));
    }
    items.push(&text[start..]);
    Ok(items.into_iter().filter(|s| !s.is_empty()).collect())
}

/// The shortest Slurm host list expression for `names`, in their order (`gpu[001-003,007]`), for
/// `#SBATCH --nodelist` lines that stay readable on large rounds.
pub(crate) fn compress_hostlist(names: &[&str]) -> String {
    // Group consecutive names that share a prefix and a numeric suffix of the same width.
    let split = |n: &'_ str| -> Option<(String, String)> {
        let digits = n.bytes().rev().take_while(u8::is_ascii_digit).count();
        (digits > 0 && digits < n.len()).then(|| {
            let (p, d) = n.split_at(n.len() - digits);
            (p.to_string(), d.to_string())
        })
    };
    let mut groups: Vec<(String, usize, Vec<u64>)> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let flush = |groups: &mut Vec<(String, usize, Vec<u64>)>, out: &mut Vec<String>| {
        for (prefix, width, nums) in groups.drain(..) {
            if nums.len() == 1 {
                out.push(format!("{prefix}{:0width$}", nums[0]));
                continue;
            }
            let mut ranges = Vec::new();
            let mut i = 0;
            while i < nums.len() {
                let mut j = i;
                while j + 1 < nums.len() && nums[j + 1] == nums[j] + 1 {
                    j += 1;
                }
                ranges.push(if i == j {
                    format!("{:0width$}", nums[i])
                } else {
                    format!("{:0width$}-{:0width$}", nums[i], nums[j])
                });
                i = j + 1;
            }
            out.push(format!("{prefix}[{}]", ranges.join(",")));
        }
    };
    for n in names {
        match split(n) {
            Some((prefix, digits)) => {
                let num: u64 = digits.parse().unwrap_or(0);
                let width = digits.len();
                match groups.last_mut() {
                    Some((p, w, nums))
                        if *p == prefix && *w == width && nums.last().is_some_and(|l| *l < num) =>
                    {
                        nums.push(num)
                    }
                    _ => {
                        flush(&mut groups, &mut out);
                        groups.push((prefix, width, vec![num]));
                    }
                }
            }
            None => {
                flush(&mut groups, &mut out);
                out.push(n.to_string());
            }
        }
    }
    flush(&mut groups, &mut out);
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(l: &NodeList) -> Vec<&str> {
        l.nodes.iter().map(NodeName::as_str).collect()
    }

    #[test]
    fn plain_lists_and_kubectl_names() {
        let l = NodeList::parse("# fleet\na1\n\nnode/a2  # rack 2\na3 a4\n").unwrap();
        assert_eq!(names(&l), ["a1", "a2", "a3", "a4"]);
    }

    #[test]
    fn slurm_expressions_keep_padding() {
        let l = NodeList::parse("gpu[098-101],login,x-[1-2]").unwrap();
        assert_eq!(
            names(&l),
            [
                "gpu098", "gpu099", "gpu100", "gpu101", "login", "x-1", "x-2"
            ]
        );
        for bad in ["gpu[1-", "gpu]1[", "gpu[3-1]", "gpu[a-b]"] {
            assert!(NodeList::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kubectl_get_nodes_keeps_unready_aside() {
        let l = NodeList::parse(
            "NAME STATUS ROLES AGE VERSION INTERNAL-IP\n\
             g1 Ready <none> 1d v1.34.1 10.0.0.1\n\
             g2 NotReady <none> 1d v1.34.1 10.0.0.2\n\
             g3 Ready,SchedulingDisabled <none> 1d v1.34.1 10.0.0.3\n",
        )
        .unwrap();
        assert_eq!(names(&l), ["g1"]);
        assert_eq!(
            l.excluded.get(&NodeName::new("g2").unwrap()).unwrap(),
            "NotReady"
        );
        assert_eq!(
            l.excluded.get(&NodeName::new("g3").unwrap()).unwrap(),
            "SchedulingDisabled"
        );
    }

    #[test]
    fn bad_names_and_duplicates_say_where() {
        let e = NodeList::parse("a1\nA2\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = NodeList::parse("a1\nb\na1\n").unwrap_err();
        assert_eq!((e.line, e.why.contains("line 1")), (3, true));
    }

    #[test]
    fn hostlists_compress_back() {
        let all = ["gpu001", "gpu002", "gpu003", "gpu007", "login", "x9", "x10"];
        let c = compress_hostlist(&all);
        assert_eq!(c, "gpu[001-003,007],login,x9,x10");
        let back = NodeList::parse(&c).unwrap();
        assert_eq!(names(&back), all);
    }
}
