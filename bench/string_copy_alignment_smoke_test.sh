#!/bin/bash
# Smoke test of //bench:string_copy_alignment: one short size must print a
# row per distance with the three ways' times (the binary checks every
# copy's bytes); a bad size is refused. Timing is not judged.
set -u
binary="$1"
log="$("$binary" 8192 2>&1)" || { echo "$log"; echo "FAIL: exit status $?"; exit 1; }
echo "$log"
rows=$(grep -Ec '^  [0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  (yes|no)$' <<<"$log")
[ "$rows" -eq 9 ] || { echo "FAIL: $rows rows, not 9"; exit 1; }
grep -Eq '^  16 .* yes$' <<<"$log" || { echo "FAIL: distance 16 not marked as crawling"; exit 1; }
if "$binary" 12x 2>/dev/null; then echo "FAIL: size 12x accepted"; exit 1; fi
echo "PASS"
