#!/usr/bin/env bash
# `hreduce probe --mpi --quick` under mpirun: 3 processes on 2 virtual
# nodes of 2 (ranks 0, 1 | 2), so that the description has MPI pairs
# within a node and between nodes, each with a positive latency and
# bandwidth, and only rank 0 writes.
set -euo pipefail
hreduce=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
json=$tmp/machine.json
HREDUCE_PROCS_PER_NODE=2 mpirun --oversubscribe --bind-to none -np 3 -x HREDUCE_PROCS_PER_NODE \
  --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$hreduce" probe --mpi --quick --json "$json" | tee "$tmp/out"
grep -q 'MPI point to point, 3 process(es) on 2 virtual node(s)' "$tmp/out" \
  || { echo "FAIL: no MPI summary"; exit 1; }
[ "$(grep -c '^hreduce probe: ' "$tmp/out")" -eq 1 ] || { echo "FAIL: more than one rank printed"; exit 1; }
python3 - "$json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
m = d["mpi"]
problems = []
if m is None: sys.exit("FAIL: mpi is null")
if (m["processes"], m["nodes"], m["virtual_nodes"]) != (3, 2, True):
    problems.append(f"processes/nodes/virtual {m['processes']}, {m['nodes']}, {m['virtual_nodes']}")
if m["node_of_rank"] != [0, 0, 1]: problems.append(f"node_of_rank {m['node_of_rank']}")
pairs = {(p["a"], p["b"]): p for p in m["pairs"]}
if sorted(pairs) != [(0, 1), (0, 2), (1, 2)]: problems.append(f"pairs {sorted(pairs)}")
for (a, b), p in pairs.items():
    if p["same_node"] != (m["node_of_rank"][a] == m["node_of_rank"][b]): problems.append(f"same_node {p}")
    for k in ("latency_seconds", "bytes_per_second"):
        if not (math.isfinite(p[k]) and p[k] > 0): problems.append(f"pair {a}-{b} {k} = {p[k]}")
    if p["latency_seconds"] > 0.1: problems.append(f"pair {a}-{b} latency over 100 ms")
intra, inter = m["intra_node"], m["inter_node"]
if not intra or intra["pairs"] != 1: problems.append(f"intra_node {intra}")
if not inter or inter["pairs"] != 2: problems.append(f"inter_node {inter}")
if intra and intra["latency_seconds"] != pairs[(0, 1)]["latency_seconds"]:
    problems.append("intra_node latency is not its one pair's")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
echo PASS
