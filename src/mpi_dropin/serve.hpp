// One intercepted reduction, from C or Fortran: served by the
// communicator's hreduce team, or handed to `pmpi` (the matching PMPI_*
// call) unchanged. Returns the MPI return code; never throws.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/hybrid/lone_member.hpp"
#include "src/mpi_dropin/tally.hpp"

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

class Combiner;

// Runs `a` on `team` (through the lean path `lone` when it takes the
// call): MPI_SUCCESS, or the class of an argument only this process sees
// is wrong, with `why` (this process still took part, so that the others
// learn it at once). Throws hreduce::Error for what the team found.
int run_call(const Args& a, const Combiner& combiner, Team* team, LoneMemberPath* lone,
             std::string& why);

// The calling thread's last lookup of a served call by its request
// (served_calls.cpp): valid while `forgotten` is the request table's count.
struct RequestSeen {
  MPI_Request request = nullptr;  // a plain null: see Recent in intercept.cpp
  void* call = nullptr;
  std::uint64_t forgotten = 0;
};
RequestSeen& last_request_seen();

// Counts a served call of `function` (HREDUCE_MPI_VERBOSE's summary).
void count_served(MpiFunction function);

// The MPI class of an error hreduce found: from its kind alone, never its
// words (docs/errors.md).
int class_of(const Error& e);

// An error code of class `error_class` whose string is `text`
// (MPI_Error_string then shows hreduce's message), passed to `comm`'s
// error handler; returns the code.
int report(MPI_Comm comm, int error_class, const std::string& text);

// The calls shaped (send, recv, count, type, op, comm), as PMPI_* takes
// them: allreduce, scan, exscan, reduce_scatter_block.
using CountCall = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
int count_call(const char* name, CollectiveKind kind, CountCall pmpi, const void* send, void* recv,
               int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

// A reduce_scatter_block of no elements, returned at once and counted as
// served: true unless a null handle must go to PMPI to be reported or
// interception is off.
bool empty_block_done(MPI_Datatype type, MPI_Op op, MPI_Comm comm);

}  // namespace hreduce::detail::mpi_dropin
