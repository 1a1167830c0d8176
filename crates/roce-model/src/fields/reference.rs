//! The key tables of `docs/reference.md`, from the table: each lies between
//! `<!-- fields:start SECTION -->` and `<!-- fields:end -->`, the prose around them is written by hand.

use super::{Kind, PROFILE, Section};

const START: &str = "<!-- fields:start ";
const END: &str = "<!-- fields:end -->";

/// The markdown key table of a top-level section (`profile` for the top level): its fields' rows, and
/// below a section those of its nested maps, which have no table of their own.
fn table(s: &Section) -> String {
    fn rows(s: &Section, nested: bool, out: &mut String) {
        for f in s.fields {
            for r in f.rows {
                // A row names the field's choices as `{choices}`: they are the table's, not the row's.
                let drives = match f.kind {
                    Kind::Strings { choices: Some(c) } => {
                        let c: Vec<String> = c.iter().map(|c| format!("`{c}`")).collect();
                        r.drives.replace("{choices}", &c.join(", "))
                    }
                    _ => r.drives.to_string(),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {drives} |\n",
                    r.kdl, r.yaml, r.ty, r.default
                ));
            }
            if let (true, Kind::Section(c) | Kind::Named(c)) = (nested, &f.kind) {
                rows(c, true, out);
            }
        }
    }
    let mut out = String::from("| KDL | YAML | type | default | drives |\n|---|---|---|---|---|\n");
    // The top level lists the sections; each has its own table.
    rows(s, !s.path.is_empty(), &mut out);
    out
}

/// The sections with a key table: the top level and each top-level section with rows.
pub(crate) fn reference_tables() -> Vec<(&'static str, String)> {
    let mut out = vec![("profile", table(&PROFILE))];
    for f in PROFILE.fields {
        if let Kind::Section(s) = f.kind {
            let t = table(s);
            if t.lines().count() > 2 {
                out.push((s.path, t));
            }
        }
    }
    out
}

/// `text` (docs/reference.md) with every marked table replaced by the table's; an error names a marker
/// that is missing, unknown or unclosed.
pub(crate) fn update_reference(text: &str) -> Result<String, String> {
    let tables = reference_tables();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut seen = Vec::new();
    while let Some(at) = rest.find(START) {
        let after = &rest[at + START.len()..];
        let name_end = after
            .find(" -->")
            .ok_or("a fields:start marker is not closed")?;
        let name = &after[..name_end];
        let body = &after[name_end + " -->".len()..];
        let end = body
            .find(END)
            .ok_or_else(|| format!("`{name}`: no {END}"))?;
        let (_, t) = tables
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("`{name}` has no key table in fields::table"))?;
        out.push_str(&rest[..at]);
        out.push_str(&format!("{START}{name} -->\n{t}{END}"));
        seen.push(name.to_string());
        rest = &body[end + END.len()..];
    }
    out.push_str(rest);
    for (name, _) in &tables {
        if !seen.iter().any(|s| s == name) {
            return Err(format!("docs/reference.md has no table for `{name}`"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The key tables of `docs/reference.md` are the table's; `ROCE_BLESS=1` rewrites them.
    #[test]
    fn reference_tables_are_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference.md");
        let have = std::fs::read_to_string(&path).unwrap();
        let want = super::update_reference(&have).unwrap();
        if std::env::var_os("ROCE_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        assert!(
            have == want,
            "the key tables of docs/reference.md are stale; regenerate them with\n  \
             ROCE_BLESS=1 cargo test -p roce-model --lib reference_tables_are_current"
        );
    }
}
