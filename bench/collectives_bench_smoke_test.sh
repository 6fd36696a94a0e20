#!/bin/bash
# Smoke test of //bench:collectives_bench: on 2 members and two sizes, every
# collective × implementation must run, pass its oracle check (no
# SkipWithError), and the ratio table must be printed. Timing is not judged.
set -u

binary="${1:-${TEST_SRCDIR}/${TEST_WORKSPACE}/bench/collectives_bench}"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

log="$(HREDUCE_BENCH_MAX_BYTES=4096 "${binary}" \
  --benchmark_filter='(members:2/|BM_Memcpy/)bytes:(8|4096)/' \
  --benchmark_min_time=0.001 --benchmark_repetitions=1 --benchmark_color=false 2>&1)"
status=$?
echo "${log}"
echo "----"

((status == 0)) || fail "exit status ${status}"
if grep -qE 'ERROR OCCURRED|setup failed|differs from the sequential oracle' <<<"${log}"; then
  fail "a benchmark reported an error"
fi

expect() {
  grep -qF -- "$1" <<<"${log}" || fail "missing: $1"
}

all="hreduce openmp_sliced tbb limit"
for topic in BM_Reduce_double BM_Allreduce_double BM_Allreduce_int32 BM_Allreduce_minloc; do
  for impl in ${all} openmp_reduction; do
    for bytes in 8 4096; do expect "${topic}/${impl}/members:2/bytes:${bytes}/"; done
  done
done
for topic in BM_ReduceScatterBlock_double BM_Scan_double BM_Exscan_double; do
  for impl in ${all}; do
    for bytes in 8 4096; do expect "${topic}/${impl}/members:2/bytes:${bytes}/"; done
  done
  # OpenMP's array-section reduction has no form of these collectives.
  if grep -qF "${topic}/openmp_reduction/" <<<"${log}"; then
    fail "${topic}/openmp_reduction must not be registered"
  fi
done
expect "BM_Memcpy/bytes:4096/"

expect "Ratios of medians: baseline time / hreduce time"
for row in "allreduce             double" "allreduce             minloc" "reduce_scatter_block" \
  "exscan"; do
  grep -qE "^${row} +(int32|double|minloc)? *2 +4 KiB" <<<"${log}" ||
    fail "no ratio row: ${row} 2 4 KiB"
done
expect "Context: single-thread memcpy"

if ((failures > 0)); then
  echo "${failures} check(s) failed"
  exit 1
fi
echo "ok"
