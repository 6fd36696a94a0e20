#!/usr/bin/env bash
# Runs dropin_test under mpirun:
#   dropin_test.sh PROGRAM NP MODE LIBRARY [PROCS_PER_NODE [WARMUP_CALLS [SERVED]]]
#   MODE preload: LD_PRELOAD=LIBRARY; linked: PROGRAM has the library linked
#   in; off: preloaded with HREDUCE_MPI=off (every call goes to PMPI).
#   PROCS_PER_NODE: virtual nodes of that many ranks (0: the real node).
#   SERVED: the calls every process must report served, exactly.
# With the library on, the verbose summary must show calls served by it.
set -euo pipefail
program=$1 np=$2 mode=$3 library=$(realpath "$4") per_node=${5:-0} warmup=${6:-2} expected=${7:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
env_args=(-x HREDUCE_MPI_VERBOSE=1 -x HREDUCE_MPI_WARMUP_CALLS=$warmup
  -x HREDUCE_PROCS_PER_NODE=$per_node)
case $mode in
  preload) env_args+=(-x LD_PRELOAD="$library") ;;
  off) env_args+=(-x LD_PRELOAD="$library" -x HREDUCE_MPI=off) ;;
  linked) ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
timeout 600 mpirun --oversubscribe --bind-to none -np "$np" "${env_args[@]}" \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$program" 2>&1 | tee "$log" || status=$?
[ $status -eq 0 ] || { echo "dropin_test failed (status $status)"; exit 1; }
served=$(sed -n 's/^hreduce: process [0-9]*: \([0-9]*\) calls served.*/\1/p' "$log" |
  sort -n | head -1)
if [ "$mode" = off ]; then
  if grep -q "calls served" "$log"; then echo "HREDUCE_MPI=off still intercepted calls"; exit 1; fi
else
  [ -n "$served" ] && [ "$served" -gt 0 ] ||
    { echo "the library served no call on some process"; exit 1; }
  echo "every process had calls served by hreduce (the fewest: $served)"
  # The Fortran programs' nonblocking allreduces, served (its MPI_WAIT is
  # the library's) and counted under the MPI function's C name: one, then
  # two on a duplicate before the barrier that builds its team (warm-up 2,
  # handed on), one after it.
  if [[ "$program" == *dropin_fortran* ]]; then
    counted=$(grep -c "^hreduce: process [0-9]*: MPI_Iallreduce 2 served, 2 handed on$" "$log" || true)
    [ "$counted" -eq "$np" ] ||
      { echo "MPI_Iallreduce's line on $counted of $np processes"; exit 1; }
    counted=$(grep -c "^hreduce: process [0-9]*: MPI_Allreduce [1-9][0-9]* served" "$log" || true)
    [ "$counted" -eq "$np" ] ||
      { echo "MPI_Allreduce served on $counted of $np processes"; exit 1; }
    ! grep -q "^hreduce: process [0-9]*: MPI_[A-Z_]* [0-9]* served" "$log" ||
      { echo "a Fortran name counted on its own"; exit 1; }
  fi
  if [ -n "$expected" ]; then
    counts=$(sed -n 's/^hreduce: process [0-9]*: \([0-9]*\) calls served.*/\1/p' "$log" | sort -u)
    [ "$counts" = "$expected" ] ||
      { echo "calls served: $counts, expected $expected on every process"; exit 1; }
  fi
fi
