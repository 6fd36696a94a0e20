#!/usr/bin/env bash
# `bazel run //:install -- --prefix DIR`, then builds outside Bazel against
# the installed tree: a C++ example with plain g++ and pkg-config hreduce,
# and an MPI program (no hreduce header) with mpicc and pkg-config
# hreduce-mpi, and runs both. The MPI program must be served by the library.
set -euo pipefail
install=$1 example=$2 mpi_program=$3 version_file=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
prefix=${TEST_TMPDIR:-$(mktemp -d)}/prefix
"$install" --prefix "$prefix"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
work=$(mktemp -d)
# Both .pc files carry the repository's VERSION (what `hreduce --version` says).
want=$(tr -d '[:space:]' <"$version_file")
for pc in hreduce hreduce-mpi; do
  got=$(pkg-config --modversion "$pc")
  [ "$got" = "$want" ] || { echo "$pc.pc says version '$got', VERSION says '$want'"; exit 1; }
done
g++ -O2 "$example" $(pkg-config --cflags --libs hreduce) -o "$work/example"
"$work/example" > "$work/example.out"
echo "C++ example built with g++ \$(pkg-config --cflags --libs hreduce) and run"
mpicc -O2 "$mpi_program" -o "$work/mpi_program" $(pkg-config --libs hreduce-mpi) -lpthread
readelf -d "$work/mpi_program" | grep "libhreduce_mpi.so" >/dev/null ||
  { echo "not linked to libhreduce_mpi.so"; exit 1; }
mpirun --oversubscribe --bind-to none -np 2 -x HREDUCE_MPI_VERBOSE=1 \
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$work/mpi_program" 2>&1 | tee "$work/mpi.out"
grep -q "failures" "$work/mpi.out"
served=$(sed -n 's/^hreduce: process [0-9]*: \([0-9]*\) calls served.*/\1/p' "$work/mpi.out" |
  sort -n | head -1)
[ -n "$served" ] && [ "$served" -gt 0 ] || { echo "the linked library served no call"; exit 1; }
echo "MPI program built with mpicc ... \$(pkg-config --libs hreduce-mpi):" \
  "$served calls served by hreduce"
