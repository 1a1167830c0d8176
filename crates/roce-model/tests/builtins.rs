//! Built-in profiles: all load cleanly, the registry matches `profiles/` (one KDL file each), and each
//! one's YAML form, written from the KDL, loads to the same model.

use std::path::{Path, PathBuf};

use roce_model::{BuiltinsOnly, Source, builtin, load};

fn profiles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
}

fn files(ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for vendor in std::fs::read_dir(profiles_dir()).unwrap() {
        let vendor = vendor.unwrap().path();
        if !vendor.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&vendor).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == ext) {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

fn name_of(path: &Path) -> String {
    let rel = path.strip_prefix(profiles_dir()).unwrap();
    rel.with_extension("").to_string_lossy().replace('\\', "/")
}

#[test]
fn every_builtin_loads_without_problems() {
    for name in builtin::names() {
        let loaded = load(builtin::source(name).unwrap(), &BuiltinsOnly);
        let problems: Vec<String> = loaded
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.code, p.message))
            .collect();
        assert!(problems.is_empty(), "{name}: {problems:#?}");
        let profile = loaded.profile.expect("profile");
        assert_eq!(profile.name.value, name, "profile name matches file name");
    }
}

#[test]
fn registry_matches_profiles_directory() {
    let mut on_disk: Vec<String> = files("kdl").iter().map(|p| name_of(p)).collect();
    let mut embedded: Vec<String> = builtin::names().map(String::from).collect();
    on_disk.sort();
    embedded.sort();
    assert_eq!(on_disk, embedded, "add new profiles to builtin/mod.rs");
    assert_eq!(
        files("yaml"),
        Vec::<PathBuf>::new(),
        "a built-in's one source is its KDL file"
    );
    for name in &embedded {
        let path = profiles_dir().join(format!("{name}.kdl"));
        assert_eq!(
            *builtin::source(name).unwrap().text,
            *std::fs::read_to_string(&path).unwrap(),
            "{name}: the embedded KDL is the file"
        );
    }
}

/// Every built-in, written as YAML from its KDL, loads through the YAML front end to the same model.
#[test]
fn yaml_of_every_builtin_loads_to_the_same_model() {
    for name in builtin::names() {
        let yaml = builtin::yaml(name).unwrap();
        let from_yaml = load(
            Source::new(format!("{name}.yaml"), yaml.as_str()),
            &BuiltinsOnly,
        );
        assert!(
            !from_yaml.has_errors(),
            "{name}:\n{yaml}\n{:#?}",
            from_yaml.problems
        );
        let from_kdl = load(builtin::source(name).unwrap(), &BuiltinsOnly);
        assert_eq!(
            from_yaml.profile.unwrap(),
            from_kdl.profile.unwrap(),
            "{name}"
        );
    }
}

#[test]
fn yaml_differs_when_a_value_differs() {
    // Guards the equality above: a one-value change must be seen.
    let text = builtin::yaml("coreweave/gb300-roce").unwrap();
    let changed = text.replace("traffic-class: 96", "traffic-class: 97");
    assert_ne!(changed, text);
    let from_yaml = load(Source::new("x.yaml", changed), &BuiltinsOnly)
        .profile
        .unwrap();
    let from_kdl = load(
        builtin::source("coreweave/gb300-roce").unwrap(),
        &BuiltinsOnly,
    )
    .profile
    .unwrap();
    assert_ne!(from_yaml, from_kdl);
}
