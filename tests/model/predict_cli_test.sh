#!/usr/bin/env bash
# `hreduce predict` end to end: 1024 nodes x 8 processes x 16 threads on the
# built-in 2x64 machine, five collectives x eight sizes, well under a minute,
# with a JSON record per call (predicted_seconds, levels that add up to it,
# the flat-MPI algorithms); the plot is SVG; bad options fail by name; and
# `--validate --quick` measures here and writes records with
# predicted_seconds, measured_seconds and oversubscribed. Accuracy is the
# benchmark's business, not this test's.
set -uo pipefail
hreduce=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

start=$(date +%s)
"$hreduce" predict --machine 2x64 --layout 1024x8x16 --json "$tmp/p.json" --plot "$tmp/p.svg" \
  >"$tmp/out" 2>&1
rc=$? took=$(($(date +%s) - start))
cat "$tmp/out"
[ $rc -eq 0 ] || fail "predict exited $rc"
[ "$took" -lt 60 ] || fail "predict took ${took} s"

python3 - "$tmp/p.json" "$tmp/p.svg" <<'PY' || fail "the records or the plot are wrong"
import json, math, sys, xml.etree.ElementTree as ET
records = json.load(open(sys.argv[1]))
problems = []
if len(records) != 40: problems.append(f"{len(records)} records, not 5 x 8")
levels = {"inside_process", "node_segment", "between_nodes", "waiting"}
flat = {"ring", "recursive_doubling", "rabenseifner", "binomial", "linear"}
for r in records:
    for f in ("collective", "bytes_per_member", "predicted_seconds", "levels", "flat_mpi", "dominant_term"):
        if f not in r: problems.append(f"record without {f}: {r}")
    t = r["predicted_seconds"]
    if not (isinstance(t, float) and math.isfinite(t) and t > 0): problems.append(f"time {t}")
    if set(r["levels"]) != levels: problems.append(f"levels {sorted(r['levels'])}")
    if abs(sum(r["levels"].values()) - t) > 1e-9 * max(1, t) + 1e-12: problems.append(f"levels do not add up: {r}")
    if set(r["flat_mpi"]) != flat: problems.append(f"flat_mpi {sorted(r['flat_mpi'])}")
    if r["members"] != 131072: problems.append(f"members {r['members']}")
ET.parse(sys.argv[2])
for p in problems[:10]: print(p)
sys.exit(1 if problems else 0)
PY

"$hreduce" predict --machine 2x64 --layout 2x2 >/dev/null 2>"$tmp/err" && fail "a bad layout was accepted"
grep -q "NODESxPROCSxTHREADS" "$tmp/err" || fail "a bad layout's message: $(cat "$tmp/err")"
"$hreduce" predict --machine 9x9 >/dev/null 2>"$tmp/err" && fail "an unknown machine was accepted"
grep -q "2x64" "$tmp/err" || fail "an unknown machine's message: $(cat "$tmp/err")"

"$hreduce" predict --validate --quick --repeats 2 --sizes 8 --json "$tmp/v.json" >"$tmp/vout" 2>&1
rc=$?
cat "$tmp/vout"
[ $rc -eq 0 ] || fail "predict --validate --quick exited $rc"
grep -q "run to run" "$tmp/vout" || fail "two runs, but no run-to-run spread printed"
grep -q "probes, one per run: cache-line round trip [0-9.]*, [0-9.]* us" "$tmp/vout" ||
  fail "two runs, but not two probes' round trips"
# Processes of several threads run unbound (they place their members
# themselves); a process of one thread keeps mpirun's binding.
"$hreduce" predict --validate --quick --layouts 1x2x2,1x2x1 --sizes 8 >"$tmp/hout" 2>&1 ||
  fail "predict --validate --layouts 1x2x2,1x2x1 failed: $(cat "$tmp/hout")"
grep -q "measuring 1x2x2 .*mpirun [^)]*--bind-to none" "$tmp/hout" ||
  fail "a layout of two threads per process was not run unbound: $(grep measuring "$tmp/hout")"
grep "measuring 1x2x1 " "$tmp/hout" | grep -q -- "--bind-to" &&
  fail "a layout of one thread per process was run unbound: $(grep measuring "$tmp/hout")"
"$hreduce" predict --validate --repeats 0 >/dev/null 2>"$tmp/err" && fail "--repeats 0 was accepted"
grep -q -- "--repeats" "$tmp/err" || fail "--repeats 0's message: $(cat "$tmp/err")"
python3 - "$tmp/v.json" <<'PY' || fail "the validation records are wrong"
import json, sys
records = json.load(open(sys.argv[1]))
problems = [] if records else ["no records"]
for r in records:
    for f in ("collective", "layout", "bytes_per_member", "predicted_seconds", "measured_seconds", "oversubscribed", "levels"):
        if f not in r: problems.append(f"record without {f}: {r}")
    if r.get("measured_seconds", 0) <= 0 or r.get("predicted_seconds", 0) <= 0: problems.append(f"times: {r}")
    # Two runs, in turns: the measurement is their median (with two, the mean).
    runs = r.get("measured_runs_seconds", [])
    if len(runs) != 2: problems.append(f"not two runs: {r}")
    elif abs(r["measured_seconds"] - (runs[0] + runs[1]) / 2) > 1e-12: problems.append(f"not their median: {r}")
    # Each run predicted from its own probe; the record's prediction is one of them.
    predicted = r.get("predicted_runs_seconds", [])
    if len(predicted) != 2 or r["predicted_seconds"] not in predicted: problems.append(f"predictions: {r}")
print(len(records), "validation records; layouts:", sorted({r.get("layout") for r in records}))
for p in problems[:10]: print(p)
sys.exit(1 if problems else 0)
PY

[ $failures -eq 0 ] && echo PASS
exit $((failures > 0))
