#!/usr/bin/env bash
# The drop-in's latency benchmark: hreduce's MPI_* against Open MPI's own
# (PMPI_*), interleaved on the same ranks, with libhreduce_mpi.so preloaded.
#   bench/mpi/dropin_latency.sh [NP] [-- benchmark options]
# (after `bazel build //:libhreduce_mpi.so //bench/mpi:dropin_latency`).
# HREDUCE_MPI=off in the environment gives the library-off control run,
# where both columns are Open MPI's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
np=${1:-2}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun -np "$np" --bind-to core --mca mpi_yield_when_idle 1 --mca btl self,vader \
  -x LD_PRELOAD="$root/bazel-bin/libhreduce_mpi.so" -x HREDUCE_MPI="${HREDUCE_MPI:-on}" \
  "$root/bazel-bin/bench/mpi/dropin_latency" "$@"
