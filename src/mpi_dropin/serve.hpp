// One intercepted reduction, from C or Fortran: served by the
// communicator's hreduce team, or handed to `pmpi` (the matching PMPI_*
// call) unchanged. Returns the MPI return code; never throws.
#pragma once

#include <mpi.h>

#include <type_traits>

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

// The matching PMPI_* call, by reference: building a std::function of it
// allocated on every call.
class PmpiCall {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, PmpiCall>>>
  PmpiCall(const F& f)  // NOLINT: converts from any callable, like std::function
      : callable_(&f), call_([](const void* c) { return (*static_cast<const F*>(c))(); }) {}
  int operator()() const { return call_(callable_); }

 private:
  const void* callable_;
  int (*call_)(const void*);
};

int serve(const Args& a, PmpiCall pmpi);

// The calls shaped (send, recv, count, type, op, comm), as PMPI_* takes
// them: allreduce, scan, exscan, reduce_scatter_block.
using CountCall = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
int count_call(const char* name, CollectiveKind kind, CountCall pmpi, const void* send, void* recv,
               int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

// A reduce_scatter_block of no elements, returned at once and counted as
// served: true unless a null handle must go to PMPI to be reported or
// interception is off.
bool empty_block_done(MPI_Datatype type, MPI_Op op, MPI_Comm comm);

// A nonblocking reduction, handed on to MPI (not served yet): counted and,
// with HREDUCE_MPI_VERBOSE, reported by its name.
void nonblocking(const char* name, CollectiveKind kind);

}  // namespace hreduce::detail::mpi_dropin
