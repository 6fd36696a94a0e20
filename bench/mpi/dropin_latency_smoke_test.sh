#!/usr/bin/env bash
# The drop-in latency benchmark runs end to end (tiny sizes, short timing):
# a row per collective and size, with both sides' average, minimum and
# maximum over the timed blocks and the ratio of the averages; --collectives
# picks by whole names; an unknown name is refused; --page-offsets places
# the buffers; --fresh rewrites the send buffer before every call;
# --in-turns times the back-to-back loop against Open MPI's in one run.
set -euo pipefail
program=$1 library=$(realpath "$2")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {
  mpirun --oversubscribe --bind-to none -np 2 -x LD_PRELOAD="$library" \
    --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    "$program" --max-bytes 64 --min-time-ms 1 "$@"
}
out=$(run)
echo "$out"
for c in allreduce reduce reduce_scatter_block scan exscan; do
  rows=$(echo "$out" | awk -v c=$c '$1 == c && NF == 9' | wc -l)
  [ "$rows" -eq 3 ] || { echo "expected 3 rows of $c, got $rows"; exit 1; }
done
grep -q "first new communicator's first 10" <<<"$out" || { echo "no first-call figures"; exit 1; }
# Fields: collective, bytes, hreduce avg min max, mpi avg min max, ratio.
# The ratio within what rounding each printed figure to 0.01 allows.
bad=$(echo "$out" | awk 'function abs(x) { return x < 0 ? -x : x }
  NF == 9 && $1 !~ /^#/ && !($4 <= $3 && $3 <= $5 && $7 <= $6 && $6 <= $8 &&
    abs($9 - $6 / $3) <= $9 * (0.006 / $3 + 0.006 / $6) + 0.006)')
[ -z "$bad" ] || { echo "rows where min <= avg <= max or the ratio of the averages fails:"; echo "$bad"; exit 1; }
spread=$(echo "$out" | awk 'NF == 9 && $1 !~ /^#/ && ($4 < $5 || $7 < $8)' | wc -l)
[ "$spread" -gt 0 ] || { echo "min and max are equal on every row: not statistics over blocks"; exit 1; }
# --max-bytes takes units (the CLI's parser): 64B is 64, and 1Q is refused.
units=$(run --collectives scan --max-bytes 64B | awk '$1 == "scan" {print $2}' | tr '\n' ' ')
[ "$units" = "4 16 64 " ] || { echo "--max-bytes 64B gave sizes: $units"; exit 1; }
if run --max-bytes 1Q >/dev/null 2>"${TEST_TMPDIR:-/tmp}/err"; then
  echo "--max-bytes 1Q was accepted"
  exit 1
fi
grep -q -- "--max-bytes wants 4 B to 256 MiB, an integer with an optional unit" "${TEST_TMPDIR:-/tmp}/err" || {
  echo "no message for --max-bytes 1Q"
  exit 1
}
# Whole names: allreduce alone is not reduce too (it was a substring match).
only=$(run --collectives allreduce)
rows=$(echo "$only" | awk 'NF == 9 && $1 !~ /^#/ {print $1}' | sort -u | tr '\n' ' ')
[ "$rows" = "allreduce " ] || { echo "--collectives allreduce ran: $rows"; exit 1; }
if run --collectives allreduce,scatter >/dev/null 2>"${TEST_TMPDIR:-/tmp}/err"; then
  echo "--collectives scatter was accepted"
  exit 1
fi
grep -q "'scatter' is not one of" "${TEST_TMPDIR:-/tmp}/err" || {
  echo "no message naming 'scatter'"
  exit 1
}
# The back-to-back loop: a row per collective and size (x2 from 4 B), the
# average within the ranks' minimum and maximum; a block of 0 elements too.
loop=$(run --back-to-back --collectives reduce,reduce_scatter,reduce_scatter_block)
echo "$loop"
for c in reduce reduce_scatter reduce_scatter_block; do
  sizes=$(echo "$loop" | awk -v c=$c '$1 == c && NF == 6 {print $2}' | tr '\n' ' ')
  [ "$sizes" = "4 8 16 32 64 " ] || { echo "back-to-back $c sizes: $sizes"; exit 1; }
done
bad=$(echo "$loop" | awk 'NF == 6 && $1 !~ /^#/ && !($4 <= $3 && $3 <= $5 && $6 >= 100)')
[ -z "$bad" ] || { echo "back-to-back rows out of order:"; echo "$bad"; exit 1; }
# In turns: MPI_X and PMPI_X back to back in each round; the median ratio
# within the least and greatest round's, R rounds; a bad R is refused.
turns=$(run --in-turns 3 --collectives reduce,exscan)
echo "$turns"
for c in reduce exscan; do
  sizes=$(echo "$turns" | awk -v c=$c '$1 == c && NF == 8 {print $2}' | tr '\n' ' ')
  [ "$sizes" = "4 8 16 32 64 " ] || { echo "in turns $c sizes: $sizes"; exit 1; }
done
bad=$(echo "$turns" | awk 'NF == 8 && $1 !~ /^#/ && !($3 > 0 && $4 > 0 && $6 <= $5 && $5 <= $7 && $8 == 3)')
[ -z "$bad" ] || { echo "in-turns rows out of order:"; echo "$bad"; exit 1; }
if run --in-turns 0 >/dev/null 2>"${TEST_TMPDIR:-/tmp}/err"; then
  echo "--in-turns 0 was accepted"
  exit 1
fi
grep -q -- "--in-turns wants a number of rounds, 1-99; got '0'" "${TEST_TMPDIR:-/tmp}/err" || {
  echo "no message for --in-turns 0"
  exit 1
}
# Buffers at chosen offsets into pages, in both loops; a bad offset is refused.
offsets=$(run --page-offsets 0,16 --collectives exscan)
rows=$(echo "$offsets" | awk '$1 == "exscan" && NF == 9' | wc -l)
[ "$rows" -eq 3 ] || { echo "--page-offsets 0,16: $rows rows of exscan"; exit 1; }
rows=$(run --back-to-back --page-offsets 48,16 --collectives scan | awk '$1 == "scan" && NF == 6' | wc -l)
[ "$rows" -eq 5 ] || { echo "--back-to-back --page-offsets 48,16: $rows rows of scan"; exit 1; }
if run --page-offsets 0,4096 >/dev/null 2>"${TEST_TMPDIR:-/tmp}/err"; then
  echo "--page-offsets 0,4096 was accepted"
  exit 1
fi
grep -q -- "--page-offsets wants IN,OUT, each 0-4095; got '0,4096'" "${TEST_TMPDIR:-/tmp}/err" || {
  echo "no message for --page-offsets 0,4096"
  exit 1
}
# --fresh (the send buffer rewritten before every call) in both loops.
rows=$(run --fresh --collectives reduce | awk '$1 == "reduce" && NF == 9' | wc -l)
[ "$rows" -eq 3 ] || { echo "--fresh: $rows rows of reduce"; exit 1; }
rows=$(run --back-to-back --fresh --collectives allreduce | awk '$1 == "allreduce" && NF == 6' | wc -l)
[ "$rows" -eq 5 ] || { echo "--back-to-back --fresh: $rows rows of allreduce"; exit 1; }
echo "all checks passed"
