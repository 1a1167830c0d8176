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
copy profile_yaml ../profiles/*/*.yaml $(find ../crates/roce-model/tests/fixtures/rules -name '*.yaml')
copy manifest_lint $(find ../crates/roce-inspect/tests/fixtures/manifests ../examples -name '*.yaml')
copy log_explain ../crates/roce-inspect/tests/fixtures/logs/*.log
