#!/usr/bin/env bash
# failure_consistency_test.sh BINARY GROUP: a failed call fails on every
# process (see failure_consistency_test.cpp). GROUP picks the layouts:
#   one_node    2 × 1, 2 × 2 and 3 × 1 (processes × threads) on one node,
#               the late process its leader (process 0) or not
#   two_nodes   4 processes × 1 thread as 2 virtual nodes of 2, each
#               process late in turn (both leaders, both others); then
#               process 0, 1 and 2 killed in turn, twice each
#   levels      2 × 2: members of one process ask for different
#               reproducibility levels
# The timeout comes from TeamOptions::timeout, HREDUCE_TIMEOUT_MS or
# MpiTeamOptions::default_timeout in turn. Each late arrival runs 3 rounds.
set -uo pipefail
binary=$1 group=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=3
status=0

# launch NP PER_NODE [MPIRUN_OPTIONS...] -- ARGS...: runs the binary under
# mpirun, its output in $out and its status in $rc. Only the "env" runs
# see HREDUCE_TIMEOUT_MS: it would override the others.
launch() {
  local np=$1 per_node=$2
  shift 2
  local extra=()
  while [ "$1" != -- ]; do extra+=("$1"); shift; done
  shift
  local timeout_ms=HREDUCE_TIMEOUT_MS=300
  [ "$2" = env ] || timeout_ms=HREDUCE_UNUSED=
  out=$(env -u HREDUCE_TIMEOUT_MS "$timeout_ms" HREDUCE_PROCS_PER_NODE=$per_node timeout 120 mpirun \
    --oversubscribe --bind-to none -np "$np" --mca mpi_yield_when_idle 1 --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none "${extra[@]}" "$binary" "$@" 2>&1)
  rc=$?
}

# run NP PER_NODE ARGS...
run() {
  local np=$1 per_node=$2
  shift 2
  launch "$np" "$per_node" -- "$@"
  if [ $rc -ne 0 ] || grep -q "^FAIL" <<<"$out"; then
    echo "FAIL: $np processes, $per_node per node: $* (status $rc)"
    echo "$out"
    status=1
  else
    echo "ok: $np processes, $per_node per node: $*"
  fi
}

# run_killed NP PER_NODE ARGS...: one process is killed, so mpirun fails;
# every other process must report PASS, and nothing may hang.
run_killed() {
  local np=$1 per_node=$2
  shift 2
  launch "$np" "$per_node" --mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0 \
    -- "$@"
  local survivors
  survivors=$(echo "$out" | grep -c "^PASS: process [0-9]* survived")
  if [ $rc -eq 124 ] || [ "$survivors" -ne $((np - 1)) ] || grep -q "^FAIL" <<<"$out"; then
    echo "FAIL: $np processes, $per_node per node: $* (status $rc, $survivors survivors passed)"
    echo "$out"
    status=1
  else
    echo "ok: $np processes, $per_node per node: $*"
  fi
}

case $group in
  one_node)
    run 2 2 late options 0 $rounds 1
    run 2 2 late env 1 $rounds 1
    run 2 2 late default 0 $rounds 2
    run 2 2 late options 1 $rounds 2
    run 3 3 late env 0 $rounds 1
    run 3 3 late default 2 $rounds 1
    ;;
  two_nodes)
    run 4 2 late options 0 $rounds 1
    run 4 2 late env 1 $rounds 1
    run 4 2 late default 2 $rounds 1
    run 4 2 late options 3 $rounds 1
    for round in 1 2; do
      run_killed 4 2 killed options 0 1
      run_killed 4 2 killed env 1 1
      run_killed 4 2 killed default 2 1
    done
    ;;
  levels)
    run 2 2 levels 2
    run 2 1 levels 2
    ;;
  *)
    echo "unknown group $group"
    exit 2
    ;;
esac
exit $status
