// One intercepted reduction, from C or Fortran: served by the
// communicator's hreduce team, or handed to `pmpi` (the matching PMPI_*
// call) unchanged. Returns the MPI return code; never throws.
#pragma once

#include <mpi.h>

#include <functional>

#include "hreduce/detail/call.hpp"

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

}  // namespace hreduce::detail::mpi_dropin
