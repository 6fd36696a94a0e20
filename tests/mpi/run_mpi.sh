#!/usr/bin/env bash
# Runs an MPI test binary under mpirun: run_mpi.sh BINARY NP PROCS_PER_NODE.
# Oversubscribed on purpose (more ranks than cores); idle ranks yield.
set -euo pipefail
binary=$1 np=$2 per_node=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export HREDUCE_PROCS_PER_NODE=$per_node
# Containers often forbid the cross-process memory attach Open MPI's shared
# memory transport tries first.
exec mpirun --oversubscribe --bind-to none -np "$np" \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$binary" ${HREDUCE_TEST_ARGS-}
