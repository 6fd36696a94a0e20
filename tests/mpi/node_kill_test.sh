#!/usr/bin/env bash
# node_kill_test.sh BINARY: three ranks on one node, one killed mid-run (see
# node_kill_test.cpp). mpirun must fail, and no /dev/shm segment of hreduce
# may be left whose creating process is gone.
set -uo pipefail
binary=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HREDUCE_PROCS_PER_NODE=3

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
if timeout 120 mpirun --oversubscribe --bind-to none -np 3 --mca mpi_yield_when_idle 1 \
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none "$binary"; then
  echo "FAIL: mpirun succeeded although a rank was killed"
  exit 1
fi
status=$?
[ "$status" -eq 124 ] && { echo "FAIL: the job hung"; exit 1; }
after=$(leaked)
if [ -n "$after" ] && [ "$after" != "$before" ]; then
  echo "FAIL: segments left in /dev/shm:"
  echo "$after"
  exit 1
fi
echo "ok: the job failed (status $status) and left nothing in /dev/shm"
