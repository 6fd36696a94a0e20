#!/usr/bin/env bash
# `hreduce bench` comparison mode end to end: a short run over every
# collective must print an "ok" row per case, write a JSON file with a record
# per case × implementation and an SVG with a panel per (collective, type);
# --reproducibility must add each level's time and ratio to hreduce's; bad
# options must fail with a message that names what was wrong.
#
# bench_cli_test.sh [HREDUCE_BINARY]  (default: the runfiles' //:hreduce)
set -uo pipefail

hreduce="${1:-${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-}/hreduce}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Absolute, since the bad-input runs below start in ${tmp}.
[[ "${hreduce}" == /* ]] || hreduce="${PWD}/${hreduce}"
if [[ ! -x "${hreduce}" ]]; then
  echo "FAIL: no hreduce binary at '${hreduce}'"
  exit 1
fi

python=""
for candidate in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
  if [[ -n "${candidate}" && -x "${candidate}" ]]; then
    python="${candidate}"
    break
  fi
done

# --- A short comparison run --------------------------------------------------

json="${tmp}/r.json"
svg="${tmp}/p.svg"
out="${tmp}/bench.out"
err="${tmp}/bench.err"
rm -f "${json}" "${svg}"
"${hreduce}" bench --max-bytes 4096 --min-time-ms 1 --settle-us 0 \
  --json "${json}" --plot "${svg}" >"${out}" 2>"${err}"
rc=$?
echo "--- hreduce bench output (exit ${rc}):"
cat "${out}"
echo "--- stderr:"
cat "${err}"
echo "---"

[[ ${rc} -eq 0 ]] || fail "hreduce bench exited ${rc}"
grep -q "WRONG" "${out}" && fail "the table reports a WRONG result"
grep -q "differ from the sequential oracle" "${err}" && fail "stderr reports results that differ"
grep -qE "terminate called|Segmentation|Aborted" "${err}" && fail "hreduce bench crashed"

# Table rows: the first column a collective, the last the check.
collectives="reduce allreduce reduce_scatter_block scan exscan"
rows=$(grep -cE '^(reduce|allreduce|reduce_scatter_block|scan|exscan) ' "${out}")
for c in ${collectives}; do
  n=$(grep -cE "^${c} " "${out}")
  [[ ${n} -ge 1 ]] || fail "the table has no row for ${c}"
  bad=$(grep -E "^${c} " "${out}" | grep -vcE ' ok$')
  [[ ${bad} -eq 0 ]] || fail "${bad} row(s) of ${c} do not end in 'ok'"
done
# stdout is a file here: a progress line per finished row on stderr, the last
# naming every row.
progress=$(grep -cE "^hreduce bench: [0-9]+/${rows} rows done [(].*[)], [0-9]+ s$" "${err}")
[[ ${progress} -eq ${rows} ]] || fail "${progress} progress lines on stderr, want ${rows} (one per row)"
grep -qE "^hreduce bench: ${rows}/${rows} rows done" "${err}" || fail "no progress line for the last row"
# The legend says what spread and the ratios are; the rows marked '!' (a
# spread past the documented 50%) are counted under the table.
grep -qF "columns: spread = interquartile range of hreduce's samples / their median; '!' after it: some implementation of the row spread more than 50%" \
  "${out}" || fail "the legend does not explain spread and its mark"
grep -qF "×limit likewise, against a kernel that moves the least bytes the collective needs and adds one barrier per call" \
  "${out}" || fail "the legend does not say what ×limit is"
marked=$(grep -cE '^(reduce|allreduce|reduce_scatter_block|scan|exscan) .*%!' "${out}")
if [[ ${marked} -gt 0 ]]; then
  grep -qE "^note: ${marked} of ${rows} rows spread more than 50% [(]marked ![)]" "${out}" ||
    fail "${marked} rows marked noisy, but no note saying so"
else
  grep -q "rows spread more than" "${out}" && fail "a noise note with no row marked"
fi
members=$(sed -nE 's/^hreduce bench: ([0-9]+) members in 1 process.*/\1/p' "${out}")
[[ -n "${members}" ]] || fail "the header line does not say how many members"

# --- The JSON file -------------------------------------------------------------

if [[ ! -s "${json}" ]]; then
  fail "no JSON file at ${json}"
elif [[ -n "${python}" ]]; then
  if ! "${python}" - "${json}" "${rows}" "${members:-0}" <<'EOF'
import json, sys
path, rows, members = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
problems = []
with open(path) as f:
    records = json.load(f)  # raises on invalid JSON
if not isinstance(records, list) or not records:
    sys.exit("the JSON is not a non-empty array")
implementations = ["hreduce", "openmp_reduction", "openmp_sliced", "tbb", "limit"]
collectives = ["reduce", "allreduce", "reduce_scatter_block", "scan", "exscan"]
fields = {"collective": str, "implementation": str, "type": str, "op": str, "members": int,
          "bytes_per_member": int, "median_seconds": (int, float), "gbps": (int, float),
          "spread": (int, float), "samples": int}
cases = {}  # (collective, type, bytes) -> implementations, in order
for i, r in enumerate(records):
    malformed = False
    for key, kind in fields.items():
        if key not in r:
            problems.append(f"record {i} lacks {key}: {r}")
            malformed = True
        elif not isinstance(r[key], kind) or isinstance(r[key], bool):
            problems.append(f"record {i}: {key} is {r[key]!r}")
            malformed = True
    if malformed:
        continue
    for key in ("members", "bytes_per_member", "median_seconds", "gbps", "samples"):
        if not r[key] > 0:
            problems.append(f"record {i}: {key} = {r[key]!r} is not positive")
    if r["spread"] < 0:
        problems.append(f"record {i}: negative spread {r['spread']}")
    if members and r["members"] != members:
        problems.append(f"record {i}: members {r['members']}, the header says {members}")
    if r["bytes_per_member"] > 4096:
        problems.append(f"record {i}: {r['bytes_per_member']} bytes per member > --max-bytes 4096")
    if r["collective"] not in collectives:
        problems.append(f"record {i}: unknown collective {r['collective']!r}")
    if r["implementation"] not in implementations:
        problems.append(f"record {i}: unknown implementation {r['implementation']!r}")
    want_op = "minloc" if r["type"] == "double_int" else "sum"
    if r["op"] != want_op:
        problems.append(f"record {i}: op {r['op']!r} for type {r['type']!r}")
    cases.setdefault((r["collective"], r["type"], r["bytes_per_member"]), []).append(r["implementation"])

for c in collectives:
    types = sorted({t for (cc, t, _) in cases if cc == c})
    want_types = sorted(["double", "int32", "double_int"] if c == "allreduce" else ["double"])
    if types != want_types:
        problems.append(f"{c}: types {types}, want {want_types}")
    for t in types:
        sizes = sorted(b for (cc, tt, b) in cases if cc == c and tt == t)
        if len(sizes) < 2:
            problems.append(f"{c} {t}: only sizes {sizes}")
    want = [i for i in implementations if c in ("reduce", "allreduce") or i != "openmp_reduction"]
    for (cc, t, b), got in cases.items():
        if cc == c and got != want:
            problems.append(f"{c} {t} {b} B: implementations {got}, want {want}")
if len(cases) != rows:
    problems.append(f"{len(cases)} cases in the JSON but {rows} rows in the table")
for p in problems[:20]:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
EOF
  then
    fail "the JSON file does not hold the expected records"
  fi
else
  # No Python: a coarser check with grep.
  echo "note: no python3, checking the JSON with grep"
  head -c1 "${json}" | grep -q '\[' || fail "the JSON does not start with ["
  for c in ${collectives}; do
    for i in hreduce openmp_sliced tbb limit; do
      grep -q "\"collective\": \"${c}\", \"implementation\": \"${i}\"" "${json}" ||
        fail "no JSON record for ${c} by ${i}"
    done
  done
  for c in reduce allreduce; do
    grep -q "\"collective\": \"${c}\", \"implementation\": \"openmp_reduction\"" "${json}" ||
      fail "no JSON record for ${c} by openmp_reduction"
  done
  for c in reduce_scatter_block scan exscan; do
    grep -q "\"collective\": \"${c}\", \"implementation\": \"openmp_reduction\"" "${json}" &&
      fail "openmp_reduction has a JSON record for ${c}"
  done
  for t in double int32 double_int; do
    grep -q "\"collective\": \"allreduce\", .*\"type\": \"${t}\"" "${json}" ||
      fail "no JSON record for allreduce of ${t}"
  done
  grep -qE '"(median_seconds|gbps)": (0[,}]|-|null)' "${json}" && fail "a time or rate is not positive"
fi

# Each row is marked '!' exactly when one of its JSON records spread past 0.5.
if [[ -n "${python}" && -s "${json}" ]]; then
  if ! "${python}" - "${json}" "${out}" <<'EOF'
import json, sys
spread = {}
for r in json.load(open(sys.argv[1])):
    key = (r["collective"], r["type"], r["bytes_per_member"])
    spread[key] = max(spread.get(key, 0), r["spread"])
units = {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}
problems = []
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] not in ("reduce", "allreduce", "reduce_scatter_block", "scan", "exscan"):
        continue
    key = (f[0], f[1], int(f[2]) * units[f[3]])
    marked = f[6].endswith("%!")
    if key not in spread:
        problems.append(f"{key}: no JSON record")
    # The JSON keeps 4 significant digits: a spread written as 0.5 may
    # have been just past it, so a row at exactly 0.5 may be either.
    elif spread[key] != 0.5 and marked != (spread[key] > 0.5):
        problems.append(f"{key}: marked {marked}, widest spread {spread[key]}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
EOF
  then
    fail "the rows marked noisy do not match the JSON's spreads"
  fi
fi

# --- The SVG plot --------------------------------------------------------------

if [[ ! -s "${svg}" ]]; then
  fail "no SVG file at ${svg}"
else
  head -c 64 "${svg}" | grep -qE '^(<\?xml|<svg)' || fail "the SVG starts with neither <?xml nor <svg"
  grep -q '</svg>' "${svg}" || fail "the SVG is not closed"
  panels=$(grep -o 'class="panel-title"' "${svg}" | wc -l)
  [[ ${panels} -eq 7 ]] || fail "${panels} panel titles, want 7 (5 collectives, 3 types of allreduce)"
  for title in "reduce (double)" "allreduce (double)" "allreduce (int32)" "allreduce (double_int)" \
    "reduce_scatter_block (double)" "scan (double)" "exscan (double)"; do
    n=$(grep -oF ">${title}<" "${svg}" | wc -l)
    [[ ${n} -eq 1 ]] || fail "panel title '${title}' appears ${n} times, want once"
  done
fi

# --- Reproducibility levels -----------------------------------------------------
# hreduce at each level gets a time and a ratio column per row; exact, which
# is op::sum on floating types only, is "-" on the int32 and MINLOC rows,
# with a note.

levels_json="${tmp}/levels.json"
levels_out="${tmp}/levels.out"
"${hreduce}" bench --members 2 --max-bytes 64 --min-time-ms 1 --settle-us 0 \
  --collectives allreduce --implementations hreduce,limit \
  --reproducibility shape_independent,exact --json "${levels_json}" >"${levels_out}" 2>"${err}"
rc=$?
echo "--- hreduce bench --reproducibility shape_independent,exact (exit ${rc}):"
cat "${levels_out}"
echo "---"
[[ ${rc} -eq 0 ]] || fail "bench --reproducibility exited ${rc}"
header='^collective .* \[shape_independent\] us +\[shape_independent\]/hreduce +\[exact\] us +\[exact\]/hreduce +×limit +check$'
grep -qE "${header}" "${levels_out}" || fail "the header lacks the level columns"
grep -q "^columns \[L\]: hreduce with per-call reproducibility = L" "${levels_out}" ||
  fail "no line says what the level columns are"
# Fields: collective, type, size and unit, hreduce us, GB/s, spread, then
# [shape_independent] us and ratio ($8, $9), [exact] us and ratio ($10, $11).
level_rows=$(grep -cE '^allreduce ' "${levels_out}")
[[ ${level_rows} -eq 6 ]] || fail "${level_rows} allreduce rows, want 6 (3 types × 2 sizes)"
number='^[0-9]+[.][0-9][0-9]$'
bad=$(grep -E '^allreduce ' "${levels_out}" |
  awk -v n="${number}" '$8 !~ n || $9 !~ n || $NF != "ok"' | wc -l)
[[ ${bad} -eq 0 ]] || fail "${bad} row(s) without a shape_independent time and ratio, or not ok"
bad=$(grep -E '^allreduce +double ' "${levels_out}" | awk -v n="${number}" '$10 !~ n || $11 !~ n' | wc -l)
[[ ${bad} -eq 0 ]] || fail "${bad} double row(s) without an exact time and ratio"
bad=$(grep -E '^allreduce +(int32|double_int) ' "${levels_out}" | awk '$10 != "-" || $11 != "-"' | wc -l)
[[ ${bad} -eq 0 ]] || fail "${bad} int32 or MINLOC row(s) with an exact time"
for t in int32 double_int; do
  n=$(grep -cF "  note: allreduce ${t}: hreduce[exact]: exact is op::sum on floating types only" \
    "${levels_out}")
  [[ ${n} -eq 1 ]] || fail "${n} notes that exact is skipped for ${t}, want 1"
done
if [[ -n "${python}" ]]; then
  # Each printed ratio is the level's median over hreduce's, from the JSON.
  if ! "${python}" - "${levels_json}" "${levels_out}" <<'EOF'
import json, sys
records = json.load(open(sys.argv[1]))
median = {(r["type"], r["bytes_per_member"], r["implementation"]): r["median_seconds"]
          for r in records}
problems = []
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] != "allreduce":
        continue
    t, size = f[1], int(f[2])  # every size is in B at --max-bytes 64
    for level, column in (("shape_independent", 8), ("exact", 10)):
        key = (t, size, "hreduce[" + level + "]")
        if key not in median:
            if f[column] != "-" or t == "double":
                problems.append(f"no JSON record for {key}")
            continue
        want = median[key] / median[(t, size, "hreduce")]
        if abs(float(f[column]) - want) > 0.006 * max(1, want):
            problems.append(f"{key}: ratio {f[column]}, the JSON gives {want:.4f}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
EOF
  then
    fail "the level ratios do not match the JSON records"
  fi
fi
# run_to_run is plain hreduce: no columns of its own.
"${hreduce}" bench --members 2 --max-bytes 8 --min-time-ms 1 --settle-us 0 \
  --collectives allreduce --types double --implementations hreduce \
  --reproducibility run_to_run >"${levels_out}" 2>&1 || fail "bench --reproducibility run_to_run failed"
grep -q '\[run_to_run\]' "${levels_out}" && fail "run_to_run got columns of its own"

# With --mpi (one process: Open MPI starts as a singleton), next to MPI's time.
mpi_json="${tmp}/levels_mpi.json"
"${hreduce}" bench --mpi --max-bytes 64 --min-time-ms 1 --collectives allreduce,scan \
  --reproducibility exact --json "${mpi_json}" >"${levels_out}" 2>&1
rc=$?
echo "--- hreduce bench --mpi --reproducibility exact (exit ${rc}):"
cat "${levels_out}"
echo "---"
[[ ${rc} -eq 0 ]] || fail "bench --mpi --reproducibility exited ${rc}"
grep -qE '^collective .* mpi/hreduce +\[exact\] us +\[exact\]/hreduce +GB/s' "${levels_out}" ||
  fail "the --mpi header lacks the level columns"
# Fields: collective, size and unit, hreduce us, mpi us, mpi/hreduce, [exact] us and ratio ($7, $8).
bad=$(grep -E '^(allreduce|scan) ' "${levels_out}" |
  awk -v n="${number}" '$7 !~ n || $8 !~ n || $NF != "ok"' | wc -l)
rows=$(grep -cE '^(allreduce|scan) ' "${levels_out}")
[[ ${rows} -eq 4 && ${bad} -eq 0 ]] ||
  fail "--mpi: ${rows} rows (want 4), ${bad} without an exact time and ratio, or not ok"
n=$(grep -o '"implementation": "hreduce\[exact\]"' "${mpi_json}" | wc -l)
[[ ${n} -eq 4 ]] || fail "--mpi: ${n} JSON records of hreduce[exact], want 4"

# --mpi --implementations hreduce: hreduce timed alone (no MPI side between
# its samples), its rows without MPI's columns, its JSON without MPI's records.
"${hreduce}" bench --mpi --implementations hreduce --max-bytes 64 --min-time-ms 1 \
  --collectives allreduce,scan --json "${mpi_json}" >"${levels_out}" 2>&1
rc=$?
echo "--- hreduce bench --mpi --implementations hreduce (exit ${rc}):"
cat "${levels_out}"
echo "---"
[[ ${rc} -eq 0 ]] || fail "bench --mpi --implementations hreduce exited ${rc}"
# Fields: collective, size and unit, hreduce us, then "-" for MPI's time and ratio.
bad=$(grep -E '^(allreduce|scan) ' "${levels_out}" |
  awk -v n="${number}" '$4 !~ n || $5 != "-" || $6 !~ /^-/ || $NF != "ok"' | wc -l)
rows=$(grep -cE '^(allreduce|scan) ' "${levels_out}")
[[ ${rows} -eq 4 && ${bad} -eq 0 ]] ||
  fail "--mpi --implementations hreduce: ${rows} rows (want 4), ${bad} not hreduce alone or not ok"
n=$(grep -o '"implementation": "[a-z_]*"' "${mpi_json}" | sort -u | tr '\n' ' ')
[[ ${n} == '"implementation": "hreduce" ' ]] ||
  fail "--mpi --implementations hreduce: JSON implementations ${n}"
if "${hreduce}" bench --mpi --implementations tbb >"${tmp}/bad.out" 2>"${tmp}/bad.err"; then
  fail "'bench --mpi --implementations tbb' exited 0"
elif ! grep -qF -- "--implementations is hreduce or hreduce,mpi, not 'tbb'" "${tmp}/bad.err"; then
  fail "'bench --mpi --implementations tbb': no message naming the option and the list"
  cat "${tmp}/bad.err"
fi

# --- Usage on request -----------------------------------------------------------
# `hreduce help` has every command; `hreduce <command> --help` that command's
# options alone (and the machine options, the byte units and the
# environment, which every command takes).
# check_usage COMMAND WANT NOT_WANT: `hreduce COMMAND` exits 0 and prints a
# line starting with each pattern of WANT (extended regexes, "_" for a
# space) and none starting with a pattern of NOT_WANT.
check_usage() {
  local command="$1" want="$2" not_want="$3"
  # shellcheck disable=SC2086
  if ! "${hreduce}" ${command} >"${tmp}/usage.out" 2>&1; then
    fail "'hreduce ${command}' exited non-zero"
    return
  fi
  local before=${failures}
  for pattern in ${want}; do
    grep -qE "^${pattern//_/ }" "${tmp}/usage.out" || fail "'hreduce ${command}' lacks a line '${pattern}...'"
  done
  for pattern in ${not_want}; do
    grep -qE "^${pattern//_/ }" "${tmp}/usage.out" && fail "'hreduce ${command}' has a line '${pattern}...'"
  done
  [[ ${failures} -eq ${before} ]] && echo "ok: 'hreduce ${command}' prints its usage"
}
both="machine_options: byte_counts environment"
check_usage "help" "usage:_hreduce_<command> bench_options: topo_options: ${both}" ""
check_usage "bench --help" "usage:_hreduce_bench bench_options: ${both}" "topo_options:"
check_usage "bench -h" "usage:_hreduce_bench bench_options: ${both}" "topo_options:"
check_usage "bench --mpi --help" "usage:_hreduce_bench bench_options:" "topo_options:"
check_usage "topo --help" "usage:_hreduce_topo topo_options: ${both}" "bench_options:"

# --version: the VERSION file's release and a commit (or "unknown").
if ! "${hreduce}" --version >"${tmp}/version.out" 2>&1; then
  fail "'hreduce --version' exited non-zero"
elif ! grep -qE '^hreduce [0-9]+[.][0-9]+[^ ]* [(]commit ([0-9a-f]{7,}(-dirty)?|unknown)[)]$' \
  "${tmp}/version.out"; then
  fail "'hreduce --version' printed: $(cat "${tmp}/version.out")"
else
  echo "ok: $(cat "${tmp}/version.out")"
fi
"${hreduce}" version >/dev/null 2>&1 && fail "'hreduce version' is taken as a command"

# Every HREDUCE_ variable the sources read is in the table --help prints
# (src/common/environment.hpp; reading one outside it throws).
"${hreduce}" help >"${tmp}/usage.out" 2>&1
for variable in HREDUCE_TIMEOUT_MS HREDUCE_SPIN_US HREDUCE_PROCS_PER_NODE HREDUCE_MPI \
  HREDUCE_MPI_VERBOSE HREDUCE_MPI_WARMUP_CALLS HREDUCE_NODE_SINGLE_COPY \
  HREDUCE_NODE_ASYMMETRIC_FENCE; do
  grep -q "^  ${variable}\$" "${tmp}/usage.out" || fail "'hreduce help' does not list ${variable}"
done
HREDUCE_TIMEOUT_MS=soon "${hreduce}" bench --members 2 --max-bytes 8 --min-time-ms 1 \
  >"${tmp}/env.out" 2>&1 && fail "a malformed HREDUCE_TIMEOUT_MS was accepted"
grep -q "HREDUCE_TIMEOUT_MS must be a number of milliseconds >= 0, got 'soon'" "${tmp}/env.out" ||
  fail "a malformed HREDUCE_TIMEOUT_MS: no message naming it"

# Under `bazel run`, relative --json and --plot names are the user's
# directory's (BUILD_WORKING_DIRECTORY), not the runfiles tree's.
mkdir -p "${tmp}/user_dir"
rm -f "${tmp}/user_dir/run.json" "${tmp}/user_dir/run.svg"
(cd "${tmp}" && BUILD_WORKING_DIRECTORY="${tmp}/user_dir" "${hreduce}" bench --members 2 \
  --max-bytes 8 --min-time-ms 1 --settle-us 0 --collectives reduce --implementations hreduce \
  --json run.json --plot run.svg >/dev/null 2>&1) || fail "bench under BUILD_WORKING_DIRECTORY failed"
[[ -s "${tmp}/user_dir/run.json" && -s "${tmp}/user_dir/run.svg" ]] ||
  fail "--json run.json --plot run.svg did not land in BUILD_WORKING_DIRECTORY"
[[ -e "${tmp}/run.json" ]] && fail "--json run.json landed in the program's own directory"

# --- Bad input: a clear message and a non-zero exit ----------------------------

# expect_error PATTERN ARGS...: `hreduce bench ARGS` must exit non-zero and
# say PATTERN (a fixed string) on stderr.
expect_error() {
  local pattern="$1"
  shift
  local code=0 before=${failures}
  (cd "${tmp}" && "${hreduce}" bench --min-time-ms 1 --settle-us 0 "$@") \
    >"${tmp}/bad.out" 2>"${tmp}/bad.err" || code=$?
  if [[ ${code} -eq 0 ]]; then
    fail "'bench $*' exited 0"
  elif [[ ${code} -gt 128 ]]; then
    fail "'bench $*' died of signal $((code - 128))"
  fi
  if ! grep -qF -- "${pattern}" "${tmp}/bad.err"; then
    fail "'bench $*': stderr lacks '${pattern}'"
    cat "${tmp}/bad.err"
  fi
  grep -qE "terminate called|Segmentation" "${tmp}/bad.err" && fail "'bench $*' crashed"
  [[ ${failures} -eq ${before} ]] && echo "ok: 'bench $*' fails with: $(head -1 "${tmp}/bad.err")"
}

expect_error "'foo'" --implementations foo
expect_error "--implementations" --implementations hreduce,foo
expect_error "'float'" --types float
expect_error "'bogus'" --collectives bogus
# The choices come from the enums' name tables (src/common/names.hpp,
# src/topology/names.hpp).
expect_error "--algorithm wants automatic, tree or sliced, got 'bogus'" --algorithm bogus
expect_error "--tree wants hierarchical, binomial, knomial, binary, flat or chain, got 'bogus'" \
  --tree bogus
expect_error "--placement wants compact or scatter, got 'bogus'" --placement bogus
expect_error "/nonexistent-dir/x.json" --collectives reduce --max-bytes 8 \
  --json /nonexistent-dir/x.json
expect_error "/nonexistent-dir/p.svg" --collectives reduce --max-bytes 8 \
  --plot /nonexistent-dir/p.svg
expect_error "--reproducibility wants run_to_run, shape_independent or exact (several: comma-separated), got 'bitwise'" \
  --reproducibility shape_independent,bitwise
expect_error "--reproducibility wants run_to_run, shape_independent or exact" --reproducibility ,
# With --mpi too, and before MPI starts (expect_error's --settle-us does not go with --mpi).
if "${hreduce}" bench --mpi --reproducibility bogus >"${tmp}/bad.out" 2>"${tmp}/bad.err"; then
  fail "'bench --mpi --reproducibility bogus' exited 0"
elif ! grep -qF -- "--reproducibility wants run_to_run, shape_independent or exact (several: comma-separated), got 'bogus'" "${tmp}/bad.err"; then
  fail "'bench --mpi --reproducibility bogus': no message naming the option and the level"
  cat "${tmp}/bad.err"
else
  echo "ok: 'bench --mpi --reproducibility bogus' fails with: $(head -1 "${tmp}/bad.err")"
fi
# --mpi initialises MPI; outside mpirun Open MPI starts as a singleton.
rm -f "${tmp}/x"
expect_error "does not go with --mpi" --mpi --types double --json x
[[ -e "${tmp}/x" ]] && fail "--mpi --types double --json x wrote x"
expect_error "needs --mpi" --node-chunk-bytes 4096
expect_error "needs --mpi" --no-shared-memory
expect_error "needs --mpi" --zero-copy
# Byte counts: units are taken wherever bytes are asked for (byte_size_test
# has the parser's cases); a bad one names the option and the units.
expect_error "--max-bytes wants a byte count, an integer with an optional unit: K = 1000, Ki = 1024" \
  --max-bytes 1Q
expect_error "--max-bytes wants at least 8 bytes, got '4B' (4 bytes)" --max-bytes 4B
expect_error "--chunk-bytes wants a byte count" --chunk-bytes 16k4
expect_error "--tree-max-bytes wants a byte count" --tree-max-bytes -1
expect_error "--tree-min-members wants an integer >= 1, got '0'" --tree-min-members 0
if "${hreduce}" bench --mpi --node-chunk-bytes 1.5Mi >"${tmp}/bad.out" 2>"${tmp}/bad.err"; then
  fail "'bench --mpi --node-chunk-bytes 1.5Mi' exited 0"
elif ! grep -qF -- "--node-chunk-bytes wants a byte count" "${tmp}/bad.err"; then
  fail "'bench --mpi --node-chunk-bytes 1.5Mi': no message naming the option"
  cat "${tmp}/bad.err"
fi
units_out="${tmp}/units.out"
"${hreduce}" bench --members 2 --max-bytes 1Ki --step 16 --min-time-ms 1 --settle-us 0 \
  --collectives reduce --implementations hreduce --chunk-bytes 4KiB --tree-max-bytes 0 \
  --tree-min-members 3 >"${units_out}" 2>&1 || fail "bench with --max-bytes 1Ki --chunk-bytes 4KiB failed"
sizes=$(grep -E '^reduce ' "${units_out}" | awk '{print $3 $4}' | tr '\n' ' ')
[[ "${sizes}" == "8B 128B 1KiB " ]] || fail "--max-bytes 1Ki --step 16 gave sizes '${sizes}', want 8 B, 128 B, 1 KiB"
grep -qxF "options: algorithm automatic, tree hierarchical, tree_max_bytes 0, tree_min_members 3, chunk_bytes 4096, run_ahead on" \
  "${units_out}" || fail "bench did not print the collective options it ran with"

if [[ ${failures} -ne 0 ]]; then
  echo "${failures} failure(s)"
  exit 1
fi
echo "all checks passed"
