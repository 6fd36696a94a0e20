#!/usr/bin/env bash
# The drop-in's latency benchmark: hreduce's MPI_* against Open MPI's own
# (PMPI_*), interleaved on the same ranks, with libhreduce_mpi.so preloaded.
#   bench/mpi/dropin_latency.sh [NP] [-- benchmark options]
# (after `bazel build //:libhreduce_mpi.so //bench/mpi:dropin_latency`).
# HREDUCE_MPI=off in the environment gives the library-off control run,
# where both columns are Open MPI's.
#
# With --back-to-back among the options, the program's back-to-back loop
# runs RUNS times (default 3) without the library and as often with it
# preloaded, in turns, and each cell prints the median over the runs of
# Open MPI's average time, of the drop-in's, and Open MPI's ÷ the drop-in's:
#   bench/mpi/dropin_latency.sh 2 -- --back-to-back --max-bytes 1Mi
# HREDUCE_MPI_LIBRARY names another build of the library to preload.
# Separate runs fall in the host's different seconds: on a 2-vCPU guest,
# Open MPI against itself so (HREDUCE_MPI=off) read 0.5-1.9x at 4-512 B.
# --in-turns R instead times both in one run, R rounds of a block each,
# and prints each cell's median ratio (HREDUCE_MPI=off: 0.93-1.03x there):
#   bench/mpi/dropin_latency.sh 2 -- --in-turns 7
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
np=${1:-2}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
library=${HREDUCE_MPI_LIBRARY:-$root/bazel-bin/libhreduce_mpi.so}
program=$root/bazel-bin/bench/mpi/dropin_latency
launch() { # PRELOAD ARGS...
  local preload=$1
  shift
  mpirun -np "$np" --bind-to core --mca mpi_yield_when_idle 1 --mca btl self,vader \
    -x LD_PRELOAD="$preload" -x HREDUCE_MPI="${HREDUCE_MPI:-on}" "$program" "$@"
}
case " $* " in
  *" --in-turns "*) launch "$library" "$@"; exit ;;
  *" --back-to-back "*) ;;
  *) launch "$library" "$@"; exit ;;
esac

runs=${RUNS:-3}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
for ((run = 1; run <= runs; ++run)); do
  launch "" "$@" | awk -v side=mpi '$1 !~ /^#/ && NF == 6 {print side, $1, $2, $3}' >>"$table"
  launch "$library" "$@" | awk -v side=hreduce '$1 !~ /^#/ && NF == 6 {print side, $1, $2, $3}' >>"$table"
done
# Medians per side and cell, a row per cell in the program's order.
awk -v runs="$runs" '
  { key = $2 " " $3; v[$1, key, ++n[$1, key]] = $4
    if (!(key in seen)) { seen[key] = 1; order[++cells] = key } }
  function median(side, key,   k, i, j, t, s) {
    k = n[side, key]
    for (i = 1; i <= k; ++i) s[i] = v[side, key, i]
    for (i = 2; i <= k; ++i) for (j = i; j > 1 && s[j - 1] > s[j]; --j) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
    return k % 2 ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2
  }
  END {
    printf "%-22s %10s %12s %12s %8s\n", "# back-to-back", "bytes", "mpi us", "hreduce us", "mpi/hr"
    printf "# medians of %d runs each, the two sides in turns\n", runs
    for (c = 1; c <= cells; ++c) {
      split(order[c], part, " ")
      m = median("mpi", order[c]); h = median("hreduce", order[c])
      printf "%-22s %10d %12.3f %12.3f %8.2f\n", part[1], part[2], m, h, (h > 0 ? m / h : 0)
    }
  }' "$table"
