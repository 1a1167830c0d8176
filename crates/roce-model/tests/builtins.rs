//! Built-in profiles: all load cleanly, the registry matches `profiles/`, and every YAML twin loads to
//! the same model as its KDL original.

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
    let both =
        builtin::names().flat_map(|n| [(n, builtin::source(n)), (n, builtin::kdl_source(n))]);
    for (name, source) in both {
        let loaded = load(source.unwrap(), &BuiltinsOnly);
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
    assert_eq!(on_disk, embedded, "add new profiles to builtin.rs");
}

#[test]
fn yaml_twins_load_to_the_same_model() {
    let yamls = files("yaml");
    assert_eq!(
        yamls.len(),
        files("kdl").len(),
        "every built-in has a YAML twin"
    );
    for path in yamls {
        let text = std::fs::read_to_string(&path).unwrap();
        let from_yaml = load(Source::new(path.display().to_string(), text), &BuiltinsOnly);
        assert!(
            !from_yaml.has_errors(),
            "{}: {:#?}",
            path.display(),
            from_yaml.problems
        );
        let name = name_of(&path);
        let from_kdl = load(builtin::kdl_source(&name).unwrap(), &BuiltinsOnly);
        assert_eq!(
            from_yaml.profile.unwrap(),
            from_kdl.profile.unwrap(),
            "{name}"
        );
        assert_eq!(
            *builtin::source(&name).unwrap().text,
            *std::fs::read_to_string(&path).unwrap(),
            "{name}: the embedded YAML is the file"
        );
    }
}

#[test]
fn twins_differ_when_a_value_differs() {
    // Guards the equality above: a one-value change must be seen.
    let path = profiles_dir().join("coreweave/gb300-roce.yaml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("traffic-class: 96", "traffic-class: 97");
    let from_yaml = load(Source::new("x.yaml", text), &BuiltinsOnly)
        .profile
        .unwrap();
    let from_kdl = load(
        builtin::kdl_source("coreweave/gb300-roce").unwrap(),
        &BuiltinsOnly,
    )
    .profile
    .unwrap();
    assert_ne!(from_yaml, from_kdl);
}
