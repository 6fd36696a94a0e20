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
  once_per_process "$call handed to PMPI: its communicator's team is not built yet (a blocking reduction builds it, or a barrier after such calls)"
done
# No team was built: 6 nonblocking calls and 2 in warm-up, all handed on.
once_per_process "0 calls served, 8 handed on to PMPI"

run silent
once_per_process "0 calls served, 0 handed on to PMPI"
[ "$(grep -c " served, [0-9]* handed on$" "$log")" = 0 ] ||
  { echo "FAIL: per-function lines without any call"; exit 1; }

# One line per MPI function called, with its own counts, as the program's
# comment lists them; none for the functions it never called.
run tally
expected="MPI_Allreduce 3 served, 2 handed on
MPI_Reduce 4 served, 1 handed on
MPI_Reduce_scatter 2 served, 0 handed on
MPI_Reduce_scatter_block 3 served, 0 handed on
MPI_Scan 3 served, 0 handed on
MPI_Exscan 1 served, 0 handed on
MPI_Iallreduce 1 served, 0 handed on
MPI_Ireduce 2 served, 0 handed on"
for rank in 0 1 2; do
  got=$(sed -n "s/^hreduce: process $rank: \(MPI_[A-Za-z_]* [0-9]* served, [0-9]* handed on\)$/\1/p" "$log")
  [ "$got" = "$expected" ] ||
    { printf 'FAIL: process %s per function:\n%s\nexpected:\n%s\n' "$rank" "$got" "$expected"; exit 1; }
done
once_per_process "19 calls served, 3 handed on to PMPI"
echo "every verbose line as documented"
