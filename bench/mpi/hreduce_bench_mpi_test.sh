#!/usr/bin/env bash
# `hreduce bench --mpi` on 2 ranks × 2 threads: every collective's rows are
# checked against the oracle on every process.
set -euo pipefail
binary=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$TEST_TMPDIR/out.txt
mpirun --oversubscribe --bind-to none -np 2 \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$binary" bench --mpi --members 2 --max-bytes 4096 --min-time-ms 1 > "$out"
cat "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
grep -q WRONG "$out" && fail "a result differs from the oracle"
grep -q '4 members in 2 process' "$out" || fail "expected a team of 4 members in 2 processes"
for c in reduce allreduce reduce_scatter_block scan exscan; do
  rows=$(grep -cE "^$c +.* ok$" "$out")
  [ "$rows" -eq 4 ] || fail "expected 4 rows for $c, got $rows"
done
echo PASS
