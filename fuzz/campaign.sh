#!/usr/bin/env bash
# Fuzz every target at once with several libFuzzer workers each, then print executions per target.
#
#   fuzz/campaign.sh BIN_DIR CORPUS_DIR OUT_DIR SECONDS WORKERS_PER_TARGET
#
# BIN_DIR holds the four fuzz binaries (`cargo fuzz build -O -a -s none` puts them in
# fuzz/target/x86_64-unknown-linux-gnu/release/); they need no Rust toolchain to run, so a many-core machine
# can run them. CORPUS_DIR/<target>/ is the seed corpus (fuzz/seed.sh) and grows in place. Each worker's log,
# the crash/timeout/OOM artifacts and summary.md land in OUT_DIR. Exit status 1 when any artifact was written.
# WORKERS_<target>=N (e.g. WORKERS_profile_kdl=24) gives a slower target more workers than the default;
# TARGETS="a b" picks targets; FUZZ_ARGS passes more libFuzzer flags (e.g. -max_len=8192).
set -euo pipefail
bin=$1 corpus=$2 out=$3 secs=$4 workers=$5
targets=(${TARGETS:-profile_kdl profile_yaml manifest_lint manifest_readers log_explain admission_review collector_prefix nccl_tests_table ucx_lines sweep_results})
mkdir -p "$out"
n_of() { local v="WORKERS_$1"; echo "${!v:-$workers}"; }
for t in "${targets[@]}"; do
    mkdir -p "$out/$t/artifacts" "$corpus/$t"
    n=$(n_of "$t")
    (
        cd "$out/$t"
        # -timeout: one input running 10 s is a hang; -rss_limit_mb: a worker past 2 GiB is an OOM.
        # The outer timeout: without a sanitizer, libFuzzer's timeout handler can deadlock in malloc (seen
        # with `-s none`), and a stuck worker must not hold the whole campaign.
        timeout -s KILL $((secs + 60)) "$bin/$t" "$corpus/$t" -jobs="$n" -workers="$n" -max_total_time="$secs" \
            -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$t/artifacts/" ${FUZZ_ARGS:-} \
            >"$out/$t/driver.log" 2>&1 || true
    ) &
done
wait
status=0
{
    echo "| target | workers | seconds | executions | exec/s (all workers) | artifacts |"
    echo "|---|---|---|---|---|---|"
    for t in "${targets[@]}"; do
        execs=$(cat "$out/$t"/fuzz-*.log 2>/dev/null |
            sed -n 's/^stat::number_of_executed_units: *//p' | awk '{s += $1} END {print s + 0}')
        arts=$(find "$out/$t/artifacts" -type f | wc -l)
        # a worker log without final stats was killed: a hang whose artifact may not have been written
        for log in "$out/$t"/fuzz-*.log; do
            grep -q '^stat::number_of_executed_units' "$log" || { echo "$t: $log has no final stats (killed?)" >&2; status=1; }
        done
        [[ $arts -eq 0 ]] || status=1
        echo "| \`$t\` | $(n_of "$t") | $secs | $execs | $((execs / secs)) | $arts |"
    done
} | tee "$out/summary.md"
exit $status
