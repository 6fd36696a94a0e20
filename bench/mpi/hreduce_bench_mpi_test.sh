#!/usr/bin/env bash
# `hreduce bench --mpi` on 2 ranks: with 2 threads each, every collective's
# rows are checked against the oracle on every process and --json holds
# hreduce's and MPI's records; with 1 member per process (where MPI_Allreduce
# is checked against hreduce too), --collectives and --no-shared-memory; and
# --zero-copy, whose buffers come from Team::allocate; and hreduce topo --mpi.
set -euo pipefail
binary=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bench() {
  mpirun --oversubscribe --bind-to none -np 2 \
    --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    "$binary" bench --mpi --max-bytes 4096 --min-time-ms 1 "$@"
}
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$TEST_TMPDIR/out.txt
json=$TEST_TMPDIR/mpi.json
err=$TEST_TMPDIR/err.txt
bench --members 2 --json "$json" > "$out" 2> "$err"
cat "$out"
# What the node level does is said once, then what differs per collective:
# every collective's line is shorter than the shared one.
[ "$(grep -c '^  every collective: a call of 4096 bytes per member over 2 processes' "$out")" -eq 1 ] ||
  fail "the shared explanation is not printed once"
shared_len=$(grep '^  every collective: ' "$out" | wc -c)
for c in reduce allreduce reduce_scatter_block scan exscan; do
  [ "$(grep -c "^  $c: " "$out")" -eq 1 ] || fail "no line of its own for $c"
  len=$(grep "^  $c: " "$out" | wc -c)
  [ "$len" -lt "$shared_len" ] || fail "$c's own line ($len chars) repeats the shared one"
done
[ "$(grep -c 'shared segment of' "$out")" -eq 1 ] || fail "the node level is described more than once"
# stdout is a file: a progress line per row on stderr, from rank 0 alone.
progress=$(grep -cE '^hreduce bench --mpi: [0-9]+/20 rows done' "$err")
[ "$progress" -eq 20 ] || { cat "$err"; fail "$progress progress lines on stderr, want 20"; }
grep -q WRONG "$out" && fail "a result differs from the oracle"
grep -q '4 members in 2 process' "$out" || fail "expected a team of 4 members in 2 processes"
for c in reduce allreduce reduce_scatter_block scan exscan; do
  rows=$(grep -cE "^$c +.* ok$" "$out")
  [ "$rows" -eq 4 ] || fail "expected 4 rows for $c, got $rows"
  # Up to 4 KiB, two processes' inputs travel in their announcements.
  inline=$(grep -cE "^$c +.* inline +ok$" "$out")
  [ "$inline" -eq 4 ] || fail "expected 4 rows of $c saying 'inline' across processes, got $inline"
  for i in hreduce mpi; do
    grep -q "\"collective\": \"$c\", \"implementation\": \"$i\"" "$json" ||
      fail "no $i record for $c"
  done
done
records=$(grep -c '"collective"' "$json")
[ "$records" -eq 40 ] || fail "expected 40 records, got $records"

single=$TEST_TMPDIR/single.txt
bench --collectives allreduce,scan --no-shared-memory > "$single"
cat "$single"
grep -q WRONG "$single" && fail "a result differs (1 member per process)"
rows=$(grep -cE '^(allreduce|scan) +.* ok$' "$single")
[ "$rows" -eq 8 ] || fail "expected 8 rows for allreduce and scan, got $rows"
grep -qE '^(reduce|reduce_scatter_block|exscan) ' "$single" && fail "--collectives was ignored"
# Without the node level, the messages' algorithm.
[ "$(grep -cE '^allreduce +.* recursive_doubling over 2 processes +ok$' "$single")" -eq 4 ] ||
  fail "allreduce rows do not say recursive_doubling over 2 processes"
[ "$(grep -cE '^scan +.* hypercube over 2 processes +ok$' "$single")" -eq 4 ] ||
  fail "scan rows do not say hypercube over 2 processes"

shared=$TEST_TMPDIR/shared.txt
bench --max-bytes 262144 --zero-copy > "$shared"
cat "$shared"
grep -q WRONG "$shared" && fail "a result differs (--zero-copy)"
grep -q "buffers: from Team::allocate" "$shared" || fail "--zero-copy not in the title"
rows=$(grep -cE '^(reduce|allreduce|reduce_scatter_block|scan|exscan) +.* ok$' "$shared")
[ "$rows" -eq 30 ] || fail "expected 30 rows with --zero-copy, got $rows"
# hreduce topo --mpi: the node's processes, their PUs and the segment's pages.
topo=$TEST_TMPDIR/topo.txt
mpirun --oversubscribe --bind-to none -np 2 \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$binary" topo --mpi --members 2 > "$topo"
cat "$topo"
grep -q '4 members in 2 processes' "$topo" || fail "topo --mpi: no team line"
for q in 0 1; do
  grep -qE "process $q \(pid [0-9]+\) 2 member\(s\) on PU [0-9,]+ \(process bound to PU [0-9,]+\), staging pages: NUMA node" "$topo" ||
    fail "topo --mpi: process $q not described"
done
grep -q 'result pages: NUMA node' "$topo" || fail "topo --mpi: no result pages"
echo PASS
