#!/usr/bin/env bash
# timeout_test.sh BINARY: a rank that stops taking part makes the other's
# call fail within the team's timeout, over MPI messages and on the node
# level (see timeout_test.cpp).
set -uo pipefail
binary=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
for case in "1:the team's timeout" "2:timed out after 500 ms waiting for process 1"; do
  per_node=${case%%:*} expected=${case#*:}
  out=$(HREDUCE_PROCS_PER_NODE=$per_node timeout 60 mpirun --oversubscribe --bind-to none \
    -np 2 --mca mpi_yield_when_idle 1 --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none "$binary" "$expected" 2>&1)
  echo "$out" | grep -E "PASS|FAIL"
  if ! grep -q "^PASS" <<<"$out" || grep -q "^FAIL" <<<"$out"; then
    echo "FAIL with $per_node process(es) per node:"
    echo "$out"
    status=1
  fi
done
exit $status
