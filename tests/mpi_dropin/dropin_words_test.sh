#!/usr/bin/env bash
# Runs dropin_words_test (a program using MPI alone) on 3 processes with
# the library preloaded and HREDUCE_MPI_VERBOSE=1, in each of its modes,
# and checks the verbose lines docs/mpi_dropin.md documents:
#   dropin_words_test.sh PROGRAM LIBRARY
set -euo pipefail
program=$1 library=$(realpath "$2")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {
  local status=0
  timeout 300 mpirun --oversubscribe --bind-to none -np 3 -x LD_PRELOAD="$library" \
    -x HREDUCE_MPI_VERBOSE=1 -x HREDUCE_MPI_WARMUP_CALLS=2 -x HREDUCE_PROCS_PER_NODE=0 \
    --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    "$program" "$1" >"$log" 2>&1 || status=$?
  cat "$log"
  [ $status -eq 0 ] || { echo "FAIL: mode $1 exited with status $status"; exit 1; }
}

# Each process says LINE exactly once.
once_per_process() {
  local line=$1
  for rank in 0 1 2; do
    local n
    n=$(grep -cxF "hreduce: process $rank: $line" "$log" || true)
    [ "$n" = 1 ] || { echo "FAIL: process $rank said \"$line\" $n times, not once"; exit 1; }
  done
}

warmup="calls handed to PMPI: warm-up (each communicator's first 2 calls, before its team is built; HREDUCE_MPI_WARMUP_CALLS)"

run messages
once_per_process "$warmup"
grep -q "^hreduce: process 0: [1-9][0-9]* calls served, [0-9]* handed on to PMPI$" "$log" ||
  { echo "FAIL: no summary with calls served"; exit 1; }

run unserved
once_per_process "$warmup"
for call in MPI_Iallreduce MPI_Ireduce MPI_Iscan MPI_Iexscan MPI_Ireduce_scatter \
  MPI_Ireduce_scatter_block; do
  once_per_process "$call handed to PMPI: nonblocking, not served yet (Open MPI's own runs it)"
done
# No team was built: 6 nonblocking calls and 2 in warm-up, all handed on.
once_per_process "0 calls served, 8 handed on to PMPI"

run silent
once_per_process "0 calls served, 0 handed on to PMPI"
echo "every verbose line as documented"
