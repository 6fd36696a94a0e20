#!/usr/bin/env bash
# Runs dropin_nonblocking_test with the library preloaded:
#   dropin_nonblocking_test.sh PROGRAM NP LIBRARY PROCS_PER_NODE LEVEL
# and checks that every process served its nonblocking and persistent calls
# (HREDUCE_MPI_VERBOSE's per-function lines), none handed on but the
# persistent requests made before their communicator's team.
set -euo pipefail
program=$1 np=$2 library=$(realpath "$3") per_node=$4 level=$5
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
timeout 900 mpirun --oversubscribe --bind-to none -np "$np" -x LD_PRELOAD="$library" \
  -x HREDUCE_MPI_VERBOSE=1 -x HREDUCE_MPI_WARMUP_CALLS=0 -x HREDUCE_PROCS_PER_NODE="$per_node" \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$program" "$level" >"$log" 2>&1 || status=$?
grep -v "^hreduce: process [0-9]*: MPI_" "$log" || true
[ $status -eq 0 ] || { echo "dropin_nonblocking_test failed (status $status)"; exit 1; }
# Each persistent form made one request before its communicator's team
# existed (MPIX_Allreduce_init two, one freed unstarted; MPIX_Scan_init
# three, one freed with its communicator, one whose team a barrier built):
# handed on at its init, served from its first start after the team was
# built. One MPI_Iallreduce came before the barrier that built its team.
for function in MPI_Iallreduce MPI_Ireduce MPI_Ireduce_scatter MPI_Ireduce_scatter_block \
  MPI_Iscan MPI_Iexscan MPIX_Allreduce_init MPIX_Reduce_init MPIX_Reduce_scatter_init \
  MPIX_Reduce_scatter_block_init MPIX_Scan_init MPIX_Exscan_init; do
  before_team=0
  case $function in
    MPI_Iallreduce) before_team=1 ;;
    MPIX_Allreduce_init) before_team=2 ;;
    MPIX_Scan_init) before_team=3 ;;
    MPIX_*) before_team=1 ;;
  esac
  served=$(grep -c \
    "^hreduce: process [0-9]*: $function [1-9][0-9]* served, $before_team handed on$" "$log" ||
    true)
  [ "$served" -eq "$np" ] ||
    { grep "$function " "$log"; echo "$function served on $served of $np processes"; exit 1; }
  [[ "$before_team" -eq 0 || $function != MPIX_* ]] && continue
  upgraded=$(grep -c "^hreduce: process [0-9]*: $function served from its first MPI_Start after" \
    "$log" || true)
  [ "$upgraded" -eq "$np" ] ||
    { echo "$function: served after its team was built on $upgraded of $np processes"; exit 1; }
done
echo "every process served all its nonblocking and persistent calls"
