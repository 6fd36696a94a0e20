#!/usr/bin/env bash
# Open MPI's nonblocking and persistent allreduce against the drop-in's,
# in turns (RUNS rounds, default 3), on NP processes (default 2):
#   bench/mpi/dropin_nonblocking.sh [NP] [-- dropin_nonblocking options]
# after `bazel build //:libhreduce_mpi.so //bench/mpi:dropin_nonblocking`.
# Prints each round's two tables, then every column's median per size.
# HREDUCE_PROGRESS is not read: the drop-in's calls always have their thread.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
np=${1:-2}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
library=${HREDUCE_MPI_LIBRARY:-$root/bazel-bin/libhreduce_mpi.so}
program=$root/bazel-bin/bench/mpi/dropin_nonblocking
launch() { # PRELOAD ARGS...
  local preload=$1
  shift
  mpirun -np "$np" --bind-to core --mca mpi_yield_when_idle 1 --mca btl self,vader \
    -x LD_PRELOAD="$preload" -x HREDUCE_MPI_WARMUP_CALLS=0 "$program" "$@"
}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
for ((run = 1; run <= ${RUNS:-3}; ++run)); do
  for side in mpi hreduce; do
    preload=""
    [ "$side" = hreduce ] && preload=$library
    out=$(launch "$preload" "$@")
    echo "# $side, round $run"
    echo "$out"
    awk -v side="$side" '$1 !~ /^#/ {print side, $0}' <<<"$out" >>"$table"
  done
done
echo "# medians over ${RUNS:-3} rounds: Open MPI | drop-in"
echo "# bytes  blocking_us  iallreduce_us  persistent_us  busy_overlap_%  idle_overlap_%"
for bytes in $(awk '{print $2}' "$table" | sort -nu); do
  line="$bytes"
  for column in 3 4 5 6 7; do
    for side in mpi hreduce; do
      m=$(awk -v s="$side" -v b="$bytes" -v c="$column" '$1 == s && $2 == b {print $c}' "$table" |
        sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
      line="$line $m"
      [ "$side" = mpi ] && line="$line |"
    done
  done
  echo "$line"
done
