#!/bin/bash
# Smoke test of //bench:cross_process_floor: with the buffers 16 bytes past
# a page (as malloc's), one size must run every way of a reduce, an exscan
# and an allreduce, whose results the binary checks (it exits 1 on a wrong
# element), and print each way's line;
# an offset that is not a multiple of 4 below 4096 is refused with a
# message. Timing is not judged.
set -u
binary="$1"
log="$("$binary" --offset 16 65536 2>&1)" || { echo "$log"; echo "FAIL: exit status $?"; exit 1; }
echo "$log"
grep -q '^two processes on cores 0 and 1, float sum, buffers 16 bytes past a page$' <<<"$log" ||
  { echo "FAIL: no header naming the offset"; exit 1; }
for way in 'one reader \(process_vm_readv \+ fold\)' 'one reader \(process_vm_readv\)' \
  'split, best cut \(receiver +[0-9]+/16\)' 'split, best cut \(process 0 +[0-9]+/16\)' \
  'streamed through shared memory'; do
  [ "$(grep -Ec "^  $way +[0-9.]+ us$" <<<"$log")" -ge 1 ] || { echo "FAIL: no line for $way"; exit 1; }
done
# --fresh: every process rewrites its input before each operation; the
# results are still checked, and the header says so.
fresh="$("$binary" --offset 16 --fresh 65536 2>&1)" || { echo "$fresh"; echo "FAIL: --fresh exit status $?"; exit 1; }
echo "$fresh"
grep -q '^two processes on cores 0 and 1, float sum, buffers 16 bytes past a page, inputs rewritten before every operation$' <<<"$fresh" ||
  { echo "FAIL: --fresh: no header saying the inputs are rewritten"; exit 1; }
[ "$(grep -Ec '^  (one reader|split|streamed).* [0-9.]+ us$' <<<"$fresh")" -eq 8 ] ||
  { echo "FAIL: --fresh: not eight ways' lines"; exit 1; }
for call in 'reduce to one process' 'exscan \(a copy\)' 'allreduce'; do
  grep -Eq "^$call, 65536 B per process:$" <<<"$log" || { echo "FAIL: no $call"; exit 1; }
done
for bad in 3 4096; do
  err="$("$binary" --offset "$bad" 65536 2>&1 >/dev/null)" && { echo "FAIL: --offset $bad accepted"; exit 1; }
  grep -q -- "--offset takes a multiple of 4 below 4096, not $bad" <<<"$err" ||
    { echo "FAIL: --offset $bad refused without the message: $err"; exit 1; }
done
echo "PASS"
