#!/usr/bin/env bash
# Installs hreduce for builds outside Bazel (mpicc, Make, CMake):
#   bazel run //:install -- --prefix DIR
# DIR/include/hreduce/   the C++ API's headers
# DIR/lib/libhreduce.so       the C++ API (teams, collectives, make_mpi_team)
# DIR/lib/libhreduce_mpi.so   the MPI drop-in (docs/mpi_dropin.md)
# DIR/lib/pkgconfig/hreduce.pc, hreduce-mpi.pc
# A relative DIR is taken from the directory `bazel run` was started in.
set -euo pipefail
prefix=""
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument '$1' (usage: --prefix DIR)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "install: give --prefix DIR" >&2; exit 2; }
case $prefix in
  /*) ;;
  *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac
# The files, from the runfiles tree `bazel run` (or a test) gives us.
here=$(cd "$(dirname "$0")" && pwd)
runfiles=${RUNFILES_DIR:-$0.runfiles}
[ -d "$runfiles/hreduce" ] && root="$runfiles/hreduce" || root=$(cd "$here/.." && pwd)
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
rm -rf "$prefix/include/hreduce"
cp -RL "$root/include/hreduce" "$prefix/include/hreduce"
chmod -R u+w "$prefix/include/hreduce"
# (cp, not install(1): this script is itself `install` in Bazel's runfiles.)
cp -f "$root/libhreduce.so" "$root/libhreduce_mpi.so" "$prefix/lib/"
chmod 0755 "$prefix/lib/libhreduce.so" "$prefix/lib/libhreduce_mpi.so"
# The release, as `hreduce --version` gives it.
version=$(tr -d '[:space:]' <"$root/VERSION")
mpi_cflags=$(pkg-config --cflags ompi-c 2>/dev/null ||
  echo "-I/usr/lib/x86_64-linux-gnu/openmpi/include")
mpi_libs=$(pkg-config --libs ompi-c 2>/dev/null ||
  echo "-L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi")
cat > "$prefix/lib/pkgconfig/hreduce.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: hreduce
Description: reduction collectives over threads and MPI processes (C++20 API)
Version: $version
Cflags: -std=c++20 -I\${includedir} $mpi_cflags
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lhreduce
PC
cat > "$prefix/lib/pkgconfig/hreduce-mpi.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib

Name: hreduce-mpi
Description: MPI_Allreduce and its siblings served by hreduce (link before MPI)
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lhreduce_mpi $mpi_libs
PC
echo "hreduce installed in $prefix (pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
