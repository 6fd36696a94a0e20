#!/usr/bin/env bash
# `hreduce bench --sizes L`: exactly the listed sizes (sorted, each once),
# any byte count, rounded down to whole elements (at least one) and checked
# against the oracle; bad lists and --sizes beside --max-bytes are refused.
set -uo pipefail
hreduce=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

json=$tmp/sizes.json
"$hreduce" bench --sizes 100,3,4Ki,100 --collectives allreduce,scan --types double,int32 \
  --implementations hreduce,limit --min-time-ms 1 --settle-us 0 --json "$json" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || fail "hreduce bench --sizes exited $rc"
grep -q WRONG "$tmp/out" && fail "a result differs from the oracle"
python3 - "$json" <<'PY' || fail "the JSON records do not have the listed sizes"
import json, sys
records = json.load(open(sys.argv[1]))
seen = {}
for r in records:
    if r["implementation"] != "hreduce": continue
    seen.setdefault((r["collective"], r["type"]), []).append(r["bytes_per_member"])
# 3 B is one element; 100 B is 12 doubles (96 B) or 25 int32 (100 B); 4Ki is 4096 B.
want = {"double": [8, 96, 4096], "int32": [4, 100, 4096]}
problems = []
for c in ("allreduce", "scan"):
    for t, sizes in want.items():
        if seen.get((c, t)) != sizes: problems.append(f"{c} {t}: {seen.get((c, t))}, want {sizes}")
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY

for bad in "" "8,,16" "8,x" "0" "-8" "1e3" "4Kx"; do
  out=$("$hreduce" bench --sizes "$bad" 2>&1) && fail "--sizes '$bad' accepted"
  grep -q -- "--sizes" <<<"$out" || fail "--sizes '$bad': $out"
done
out=$("$hreduce" bench --sizes 8 --max-bytes 64 2>&1) && fail "--sizes with --max-bytes accepted"
grep -q -- "--max-bytes does not go with --sizes" <<<"$out" || fail "--sizes --max-bytes: $out"
[[ "$("$hreduce" help)" == *"--sizes L"* ]] || fail "hreduce help does not list --sizes"

[ $failures -eq 0 ] && echo PASS
exit $((failures > 0))
