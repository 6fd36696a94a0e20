#!/usr/bin/env bash
# dropin_nonblocking_kill_test.sh PROGRAM LIBRARY: three processes on one
# node with nonblocking calls outstanding; rank 1 is killed (the program's
# "kill" mode). The two others must report their requests failed, the job
# must not hang, and no hreduce segment of a gone process may stay in /dev/shm.
set -euo pipefail
program=$1 library=$(realpath "$2")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Segments whose creator (the number after "hreduce.") no longer runs.
leaked() {
  for f in /dev/shm/hreduce.*; do
    [ -e "$f" ] || continue
    pid=${f#/dev/shm/hreduce.}
    pid=${pid%%.*}
    kill -0 "$pid" 2>/dev/null || echo "$f"
  done
}

before=$(leaked)
status=0
# --enable-recovery: the job goes on when a process dies, so that the others
# show what they saw instead of being killed by mpirun.
out=$(timeout 120 mpirun --oversubscribe --bind-to none -np 3 --enable-recovery \
  -x LD_PRELOAD="$library" -x HREDUCE_MPI_WARMUP_CALLS=0 -x HREDUCE_PROCS_PER_NODE=0 \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$program" kill 2>&1) || status=$?
echo "$out"
[ "$status" -ne 124 ] || { echo "FAIL: the job hung"; exit 1; }
failed=$(grep -c "the requests failed after .* as they must" <<<"$out" || true)
[ "$failed" -eq 2 ] || { echo "FAIL: $failed of 2 survivors saw their requests fail"; exit 1; }
after=$(leaked)
if [ -n "$after" ] && [ "$after" != "$before" ]; then
  echo "FAIL: segments left in /dev/shm:"
  echo "$after"
  exit 1
fi
echo "ok: both survivors saw the failure, and nothing was left in /dev/shm"
