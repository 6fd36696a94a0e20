#!/usr/bin/env bash
# The drop-in latency benchmark runs end to end (tiny sizes, short timing):
# a row per collective and size, with both columns and a ratio.
set -euo pipefail
program=$1 library=$(realpath "$2")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mpirun --oversubscribe --bind-to none -np 2 -x LD_PRELOAD="$library" \
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$program" --max-bytes 64 --min-time-ms 1)
echo "$out"
for c in allreduce reduce reduce_scatter_block scan exscan; do
  rows=$(echo "$out" | awk -v c=$c '$1 == c && NF == 9' | wc -l)
  [ "$rows" -eq 3 ] || { echo "expected 3 rows of $c, got $rows"; exit 1; }
done
echo "$out" | grep -q "first new communicator's first 5" ||
  { echo "no first-call figures"; exit 1; }
