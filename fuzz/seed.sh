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
# issue 33: every YAML file in the repository, for the readers compared
copy manifest_readers $(find .. \( -path ../target -o -path ../fuzz -o -path '*/.*' \) -prune -o \
    -type f \( -name '*.yaml' -o -name '*.yml' \) -print)
copy log_explain ../crates/roce-inspect/tests/fixtures/logs/*.log
# issue 32: the readers added since the first campaign
logs=$(find ../crates/roce-inspect/tests/fixtures/logs ../crates/roce-inspect/tests/fixtures/explain-corpus -name '*.log' -o -name '*.txt' | sort)
copy collector_prefix $logs
copy ucx_lines $(grep -l "UCX" $logs)
copy nccl_tests_table $(grep -l "busbw\|Avg bus bandwidth" $logs)
copy sweep_results ../crates/roce-inspect/tests/fixtures/sweep/gpu/campaign.json \
    $(find ../crates/roce-inspect/tests/fixtures/sweep -path '*results*' -type f | head -200)
# AdmissionReview bodies: the kinds fixtures, labelled for a built-in, as the API server sends them
reviews=../target/fuzz-seed-reviews
mkdir -p "$reviews"
../.venv/bin/python - "$reviews" ../crates/roce-inspect/tests/fixtures/manifests/kinds/*.yaml <<'PY'
import json, sys, yaml
out = sys.argv[1]
for i, path in enumerate(sys.argv[2:]):
    for j, doc in enumerate(yaml.safe_load_all(open(path))):
        if not isinstance(doc, dict):
            continue
        doc.setdefault("metadata", {}).setdefault("labels", {})["roce.dev/profile"] = "coreweave/gb300-roce"
        group, _, version = doc.get("apiVersion", "v1").rpartition("/")
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "request": {"uid": f"{i}-{j}", "kind": {"group": group, "version": version, "kind": doc.get("kind")},
                              "operation": "CREATE", "namespace": "default", "object": doc}}
        open(f"{out}/{i:02}-{j:02}.json", "w").write(json.dumps(review))
PY
copy admission_review "$reviews"/*.json
