#!/usr/bin/env bash
# mpi_flat_bench end to end on 2 ranks with small sizes: MPI's and hreduce's
# results both match the oracle, and the JSON holds both implementations for
# every collective. (--max-bytes 4Ki: byte counts take units.)
set -euo pipefail
binary=$1
json=$TEST_TMPDIR/mpi_flat.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe --bind-to none -np 2 \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$binary" --max-bytes 4Ki --min-time-ms 1 --settle-us 0 --json "$json" > "$TEST_TMPDIR/out.txt"
cat "$TEST_TMPDIR/out.txt"
fail() { echo "FAIL: $*" >&2; exit 1; }
grep -q WRONG "$TEST_TMPDIR/out.txt" && fail "a result differs from the oracle"
rows=$(grep -cE ' ok$' "$TEST_TMPDIR/out.txt")
# 5 collectives × 4 sizes (8 B, 64 B, 512 B, 4 KiB) + int32 and MINLOC allreduce.
[ "$rows" -eq 28 ] || fail "expected 28 rows marked ok, got $rows"
for c in reduce allreduce reduce_scatter_block scan exscan; do
  for i in mpi_flat hreduce; do
    grep -q "\"collective\": \"$c\", \"implementation\": \"$i\"" "$json" ||
      fail "no $i record for $c"
  done
done
records=$(grep -c '"collective"' "$json")
[ "$records" -eq 56 ] || fail "expected 56 records, got $records"
echo PASS
