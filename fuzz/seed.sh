#!/usr/bin/env bash
# Seed the fuzz corpora from the test fixtures (the grown corpora are not committed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
copy() { # DIR FILE...: copy each file under a name derived from its path
    local dir=$1; shift
    mkdir -p "corpus/$dir"
    for f in "$@"; do cp "$f" "corpus/$dir/$(printf '%s' "$f" | md5sum | cut -c1-12).${f##*.}"; done
}
copy profile_kdl ../profiles/*/*.kdl $(find ../crates/roce-model/tests/fixtures/rules -name '*.kdl')
# the built-ins' YAML forms, written from their KDL (they have no YAML file)
roce() { cargo run -q --manifest-path ../Cargo.toml -p roce-cli -- "$@"; }
builtins_yaml=../target/fuzz-seed-yaml # a fixed path, so the copies' names are too
mkdir -p "$builtins_yaml"
for name in $(roce profiles); do roce profiles show "$name" --yaml > "$builtins_yaml/${name//\//_}.yaml"; done
copy profile_yaml "$builtins_yaml"/*.yaml $(find ../crates/roce-model/tests/fixtures/rules -name '*.yaml')
copy manifest_lint $(find ../crates/roce-inspect/tests/fixtures/manifests ../examples -name '*.yaml')
copy log_explain ../crates/roce-inspect/tests/fixtures/logs/*.log
