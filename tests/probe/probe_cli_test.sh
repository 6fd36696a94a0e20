#!/usr/bin/env bash
# `hreduce probe --quick` end to end: the machine description names its
# schema, its matrices have the shapes of the topology it reports (which
# must be this machine's, as `hreduce topo` prints it), every figure is a
# positive finite number, the SVG is well-formed with a panel per matrix,
# and bad options fail before any measuring, naming what was wrong.
set -uo pipefail
hreduce=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

json=$tmp/machine.json svg=$tmp/machine.svg
start=$(date +%s)
"$hreduce" probe --quick --json "$json" --plot "$svg" >"$tmp/out" 2>"$tmp/err"
rc=$? took=$(($(date +%s) - start))
cat "$tmp/out"; echo "--- stderr:"; cat "$tmp/err"; echo "--- ${took} s"
[ $rc -eq 0 ] || fail "hreduce probe --quick exited $rc"
grep -q '^hreduce probe: round trip PU' "$tmp/err" || fail "no progress on stderr"
grep -q 'cache-line round trip' "$tmp/out" || fail "no round-trip summary"
[ "$took" -le 60 ] || fail "--quick took ${took} s"

# hreduce topo's tree: one line per PU and per NUMA node.
pus=$("$hreduce" topo | grep -cE '^ *PU L#')
numa=$("$hreduce" topo | grep -cE '^ *NUMANode L#')
echo "hreduce topo: ${pus:-?} PUs, ${numa:-?} NUMA nodes"

python3 - "$json" "$svg" "${pus:-0}" "${numa:-0}" <<'PY' || fail "the description or the SVG is wrong"
import json, math, sys, xml.etree.ElementTree as ET
path, svg, pus, numa = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(path))
problems = []
def positive(x, where):
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x) or x <= 0:
        problems.append(f"{where} = {x!r} is not a positive finite number")
if d.get("schema") != "hreduce-machine/2": problems.append(f"schema {d.get('schema')!r}")
if d.get("quick") is not True: problems.append("quick is not true")
if d.get("mpi") is not None: problems.append("mpi is not null without --mpi")
t = d["topology"]
n = len(t["pus"])
if n != t["pu_count"]: problems.append(f"{n} PU records, pu_count {t['pu_count']}")
if pus and n != pus: problems.append(f"{n} PUs, hreduce topo says {pus}")
if numa and t["numa_nodes"] != numa: problems.append(f"{t['numa_nodes']} NUMA nodes, topo says {numa}")
nodes = max(t["numa_nodes"], 1)
c = d["core_to_core"]
relations = {"same_core", "same_l2", "same_l3", "same_numa", "same_package", "across_packages"}
if c["all_pairs"] and len(c["pairs"]) != n * (n - 1) // 2:
    problems.append(f"all_pairs with {len(c['pairs'])} pairs for {n} PUs")
for p in c["pairs"]:
    if not 0 <= p["a"] < p["b"] < n: problems.append(f"pair {p}")
    if p["relation"] not in relations: problems.append(f"relation {p['relation']!r}")
    positive(p["round_trip_seconds"], f"round trip {p['a']}-{p['b']}")
    if p["round_trip_seconds"] > 1e-2: problems.append(f"round trip {p} over 10 ms")
if n > 1 and not c["by_relation"]: problems.append("no relation summary")
if sum(s["pairs"] for s in c["by_relation"]) != len(c["pairs"]): problems.append("summary pair count")
for s in c["by_relation"]:
    positive(s["exchange_seconds"], f"exchange {s['relation']}")
    if s["exchange_seconds"] > 1e-2: problems.append(f"exchange {s} over 10 ms")
m = d["memory"]
positive(m["bytes_per_thread"], "bytes_per_thread")
if len(m["threads_per_node"]) != nodes: problems.append("threads_per_node length")
for side in ("one_thread", "node_threads"):
    for kernel in ("read", "copy", "fold"):
        mat = m[side][kernel]
        if len(mat) != nodes or any(len(row) != nodes for row in mat):
            problems.append(f"memory.{side}.{kernel} is not {nodes}x{nodes}: {mat}")
        for i, row in enumerate(mat):
            for j, x in enumerate(row):
                positive(x, f"memory.{side}.{kernel}[{i}][{j}]")
                if x > 1e13: problems.append(f"memory.{side}.{kernel} {x} B/s is not believable")
classes = {(f["op_class"], f["type"]) for f in d["fold"]}
for want in [("sum", "double"), ("sum", "int32"), ("sum", "float"), ("max", "double"),
             ("band", "int32"), ("minloc", "double_int")]:
    if want not in classes: problems.append(f"no fold speed for {want}")
for f in d["fold"]:
    positive(f["elements_per_second"], f"fold {f['op_class']} {f['type']}")
    if abs(f["bytes_per_second"] - 3 * f["element_bytes"] * f["elements_per_second"]) > 1e-6 * f["bytes_per_second"]:
        problems.append(f"fold {f} bytes_per_second is not 3 x element_bytes x elements_per_second")
x = d["cross_process"]
if x["vm_readv_fixed_seconds"] is None:
    if not x.get("vm_readv_unavailable"): problems.append("no process_vm_readv figure and no reason")
else:
    positive(x["vm_readv_fixed_seconds"], "vm_readv_fixed_seconds")
    positive(x["vm_readv_seconds_per_kib"], "vm_readv_seconds_per_kib")
positive(x["futex_wake_median_seconds"], "futex median")
if x["futex_wake_p90_seconds"] < x["futex_wake_median_seconds"]: problems.append("futex p90 < median")
root = ET.parse(svg).getroot()
panels = [g for g in root.iter("{http://www.w3.org/2000/svg}g")]
if len(panels) != 7: problems.append(f"{len(panels)} SVG panels, expected 7")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY

# Bad options: refused at once, by name.
out=$("$hreduce" probe --bogus 2>&1) && fail "--bogus accepted"
grep -q "unknown argument '--bogus'" <<<"$out" || fail "--bogus: $out"
out=$("$hreduce" probe --json 2>&1) && fail "--json without a value accepted"
grep -q -- "--json needs a value" <<<"$out" || fail "--json: $out"
start=$(date +%s)
out=$("$hreduce" probe --quick --json "$tmp/no/such/dir/m.json" 2>&1) && fail "unwritable --json accepted"
grep -q "cannot write $tmp/no/such/dir/m.json" <<<"$out" || fail "unwritable --json: $out"
grep -q "round trip" <<<"$out" && fail "measured before refusing an unwritable --json"
[[ "$("$hreduce" help)" == *"probe   measure"* ]] || fail "hreduce help does not list probe"
[[ "$("$hreduce" probe --help)" == *"--quick"* ]] || fail "hreduce probe --help does not list --quick"

[ $failures -eq 0 ] && echo PASS
exit $((failures > 0))
