// One intercepted reduction, from C or Fortran: served by the
// communicator's hreduce team, or handed to `pmpi` (the matching PMPI_*
// call) unchanged. Returns the MPI return code; never throws.
#pragma once

#include <mpi.h>

#include <functional>

#include "hreduce/team.hpp"

namespace hreduce::detail::mpi_dropin {

struct Args {
  const char* name;  // "MPI_Allreduce", for HREDUCE_MPI_VERBOSE
  CollectiveKind kind;
  const void* send;  // MPI_IN_PLACE as in C
  void* recv;
  int count;              // elements, or the block of reduce_scatter_block
  const int* recvcounts;  // reduce_scatter
  MPI_Datatype type;
  MPI_Op op;
  int root;
  MPI_Comm comm;
};

int serve(const Args& a, const std::function<int()>& pmpi);

// The calls shaped (send, recv, count, type, op, comm), as PMPI_* takes
// them: allreduce, scan, exscan, reduce_scatter_block.
using CountCall = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
int count_call(const char* name, CollectiveKind kind, CountCall pmpi, const void* send, void* recv,
               int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

}  // namespace hreduce::detail::mpi_dropin
