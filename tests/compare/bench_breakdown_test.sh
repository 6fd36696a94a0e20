#!/usr/bin/env bash
# `hreduce bench --breakdown` end to end: every hreduce row gets a column
# per level and levels/total, every hreduce JSON record a "levels" object
# naming the four levels in order, none negative, and the plot a stacked
# bar per row. Which levels a layout has is checked exactly: one process
# has no node level and no messages; two processes of one node have the
# node level; two virtual nodes of one process each have messages; two
# nodes of two processes have both.
#
# How close the levels come to their total: the clock splits each member's
# timed stretch without overlap (levels_test checks that exactly), so the
# sum misses the row's median only where a busy machine held a member up
# outside the stretch of the samples the levels come from. Here every row
# must lie within [0.5, 2] of its total and two thirds of the rows within
# the bench's own 15 % (docs/benchmarking.md), but where processes
# outnumber cores (only [0.25, 4]); the 15 % on every row is what the bench
# reports and docs/performance.md records, on a quiet machine.
#
# bench_breakdown_test.sh HREDUCE_BINARY
set -uo pipefail
hreduce=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# check_levels JSON WANT [MARGIN]: the hreduce records of JSON against WANT,
# each of inside_process node_segment between_nodes waiting as "+"
# (positive), "0" (exactly zero) or "?" (either). MARGIN "wide": more
# processes than cores, each off its core for whole time slices between a
# barrier and its clock, so only [0.25, 4] of the total and no 15 % rule.
check_levels() {
  python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
records = json.load(open(sys.argv[1]))
want = sys.argv[2].split()
low, high, majority = (0.25, 4, False) if sys.argv[3] == "wide" else (0.5, 2, True)
names = ["inside_process", "node_segment", "between_nodes", "waiting"]
problems, rows, within = [], 0, 0
for r in records:
    label = f'{r["collective"]} {r["type"]} {r["bytes_per_member"]} B {r["implementation"]}'
    if r["implementation"] != "hreduce":
        if "levels" in r: problems.append(f"{label}: has levels")
        continue
    rows += 1
    levels = r.get("levels")
    if not isinstance(levels, dict) or list(levels) != names:
        problems.append(f"{label}: levels {levels!r}, want the keys {names} in order")
        continue
    for name, w in zip(names, want):
        v = levels[name]
        if not isinstance(v, (int, float)) or v < 0: problems.append(f"{label}: {name} = {v!r}")
        elif w == "+" and not v > 0: problems.append(f"{label}: {name} = {v}, want > 0")
        elif w == "0" and v != 0: problems.append(f"{label}: {name} = {v}, want 0")
    ratio = sum(levels.values()) / r["median_seconds"]
    print(f"{label}: levels/total {ratio:.3f}")
    if not low <= ratio <= high: problems.append(f"{label}: levels add up to {ratio:.3f} of the total")
    within += abs(ratio - 1) <= 0.15
if rows == 0: problems.append("no hreduce record")
elif majority and within * 3 < rows * 2: problems.append(f"only {within} of {rows} rows within 15 %")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
}

# --- One process ---------------------------------------------------------------

json=$tmp/one.json
svg=$tmp/one.svg
one_process_bench() {
  "$hreduce" bench --breakdown --members 2 --sizes 8,4Ki,64Ki --min-time-ms 30 --settle-us 0 \
    --collectives allreduce,reduce_scatter_block,scan --types double --implementations hreduce,limit \
    --json "$json" --plot "$svg" >"$tmp/one.out" 2>&1
}
one_process_bench
rc=$?
cat "$tmp/one.out"
[ $rc -eq 0 ] || fail "bench --breakdown exited $rc"
header='^collective .* spread +inside_process +node_segment +between_nodes +waiting +levels/total +×limit +check$'
grep -qE "$header" "$tmp/one.out" || fail "the header lacks the level columns"
grep -q "^columns inside_process, node_segment, between_nodes, waiting: hreduce's us per call" \
  "$tmp/one.out" || fail "no line says what the level columns are"
# Fields: collective, type, size and unit, hreduce us, GB/s, spread, then the
# four levels ($8-$11) and levels/total ($12).
rows=$(grep -cE '^(allreduce|reduce_scatter_block|scan) ' "$tmp/one.out")
[ "$rows" -eq 9 ] || fail "$rows rows, want 9"
bad=$(grep -E '^(allreduce|reduce_scatter_block|scan) ' "$tmp/one.out" |
  awk '$8 !~ /^[0-9]+[.][0-9]+$/ || $12 !~ /^[0-9]+[.][0-9][0-9]$/ || $NF != "ok"' | wc -l)
[ "$bad" -eq 0 ] || fail "$bad row(s) without level times and levels/total, or not ok"
# How close the levels come is timing: with the other tests running at once
# on two cores, a member held up outside its timed stretch put one row's at
# 6.3. A second run decides (the levels' kinds are checked in both).
if ! check_levels "$json" "+ 0 0 +"; then
  echo "once more, on a machine that may be busy:"
  { one_process_bench && check_levels "$json" "+ 0 0 +"; } || fail "one process: the JSON's levels"
fi
# The table's levels/total is the JSON's sum over the median.
python3 - "$json" "$tmp/one.out" <<'PY' || fail "levels/total in the table differs from the JSON"
import json, sys
total = {(r["collective"], r["bytes_per_member"]): sum(r["levels"].values()) / r["median_seconds"]
         for r in json.load(open(sys.argv[1])) if r["implementation"] == "hreduce"}
units = {"B": 1, "KiB": 1024}
bad = 0
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] in ("allreduce", "reduce_scatter_block", "scan"):
        want = total[(f[0], int(f[2]) * units[f[3]])]
        if abs(float(f[11]) - want) > 0.006: print("FAIL:", line.strip(), "want", want); bad += 1
sys.exit(1 if bad else 0)
PY
panels=$(grep -c 'class="level-panel"' "$svg")
[ "$panels" -eq 3 ] || fail "$panels level panels in the plot, want 3"
[ "$(grep -c 'data-level="waiting"' "$svg")" -eq 9 ] || fail "not one waiting bar segment per row"
grep -q 'data-level="node_segment"' "$svg" && fail "one process, yet a node_segment bar segment"

# Without --breakdown: no levels anywhere.
"$hreduce" bench --members 2 --sizes 8 --min-time-ms 1 --settle-us 0 --collectives allreduce \
  --types double --implementations hreduce --json "$tmp/plain.json" >"$tmp/plain.out" 2>&1 ||
  fail "bench without --breakdown failed"
grep -q levels "$tmp/plain.json" && fail "levels in the JSON without --breakdown"
grep -q inside_process "$tmp/plain.out" && fail "level columns without --breakdown"

# --- Processes (MPI) ------------------------------------------------------------

# mpi_breakdown NP PROCS_PER_NODE WANT [MARGIN]: bench --mpi --breakdown under mpirun.
mpi_breakdown() {
  local np=$1 per_node=$2 attempt
  for attempt in 1 2; do
    mpi_breakdown_once "$@" && return
    [ $attempt -eq 1 ] && echo "once more, on a machine that may be busy:"
  done
  fail "np $np, $per_node per node: the JSON's levels"
}
# mpi_breakdown_once NP PROCS_PER_NODE WANT [MARGIN]: one run; fails only on
# the levels, which are timing (everything else fails the test at once).
mpi_breakdown_once() {
  local np=$1 per_node=$2 want=$3 margin=${4:-} json="$tmp/mpi_$1_$2.json"
  HREDUCE_PROCS_PER_NODE=$per_node mpirun --oversubscribe --bind-to none -np "$np" \
    -x HREDUCE_PROCS_PER_NODE --mca mpi_yield_when_idle 1 --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none \
    "$hreduce" bench --mpi --breakdown --sizes 8,64Ki --min-time-ms 30 \
    --collectives allreduce,scan --json "$json" >"$tmp/mpi.out" 2>&1
  local rc=$?
  echo "--- $np processes, HREDUCE_PROCS_PER_NODE=$per_node (exit $rc):"
  cat "$tmp/mpi.out"
  [ $rc -eq 0 ] || fail "bench --mpi --breakdown, np $np, $per_node per node: exit $rc"
  grep -qE '^collective .* mpi/hreduce +inside_process +node_segment +between_nodes +waiting +levels/total +GB/s' \
    "$tmp/mpi.out" || fail "np $np: the --mpi header lacks the level columns"
  check_levels "$json" "$want" "$margin"
}
mpi_breakdown 2 0 "+ + 0 ?"  # one node: the node level, no messages
mpi_breakdown 2 1 "+ 0 + ?"  # two virtual nodes of one process: messages only
mpi_breakdown 4 2 "+ + + ?" wide  # two virtual nodes of two: both (4 processes, 2 cores)

[ $failures -eq 0 ] && echo PASS
exit $((failures > 0))
