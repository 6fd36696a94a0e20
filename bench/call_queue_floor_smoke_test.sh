#!/bin/bash
# Smoke test of //bench:call_queue_floor: a few short rounds must run every
# call through the queue exactly once each (the binary checks the count)
# and print the table's line; a bad argument is refused. Timing is not
# judged.
set -u
binary="$1"
log="$("$binary" 3 2000 2>&1)" || { echo "$log"; echo "FAIL: exit status $?"; exit 1; }
echo "$log"
grep -Eq '^direct [0-9.]+  queued [0-9.]+  \(the queue adds -?[0-9.]+\)  one RMW [0-9.]+$' \
  <<<"$log" || { echo "FAIL: no result line"; exit 1; }
if "$binary" 0 2>/dev/null; then echo "FAIL: 0 rounds accepted"; exit 1; fi
echo "PASS"
