// The requests of the nonblocking and persistent reductions the drop-in
// serves, and the MPI completion calls that must know them.
//
// A served call's request is a real MPI request that MPI itself never
// starts: for MPI_I<call> an inactive persistent send to MPI_PROC_NULL on
// MPI_COMM_SELF (the "shell"), for <call>_init MPI's own persistent request
// (PMPI<PREFIX>_<call>_init), whose starts go to MPI where hreduce stops
// serving it (made before the team: awaiting_team.hpp; its communicator
// freed). MPI treats an inactive request as complete at once, with an
// empty status, so wherever one reaches PMPI_* (a Waitall that also holds
// point-to-point requests, the Fortran handle table, MPI_Request_free) MPI
// does the right thing for it, and the drop-in only has to hold the
// completion call back until its own call is done. They live in a table
// (handle -> call); while it is empty every completion call goes straight
// to PMPI_*.
//
// Every function returns an MPI return code and never throws; failures of
// a served call are reported at its completion, through its
// communicator's error handler, with the class of the failure's kind.
#pragma once

#include <mpi.h>

#include "src/mpi_dropin/serve.hpp"

namespace hreduce::detail::mpi_dropin {

// PMPI_I<call> or PMPIX_<call>_init with the call's arguments, for a call
// that is handed on: it writes the request.
class PmpiStart {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, PmpiStart>>>
  PmpiStart(const F& f)  // NOLINT: converts from any callable, like std::function
      : callable_(&f),
        call_([](const void* c, MPI_Request* r) { return (*static_cast<const F*>(c))(r); }) {}
  int operator()(MPI_Request* request) const { return call_(callable_, request); }

 private:
  const void* callable_;
  int (*call_)(const void*, MPI_Request*);
};

// MPI_I<call> (`persistent` false) or MPIX_<call>_init / MPI_<call>_init
// (true): served on the communicator's team where it can be, else handed
// to `pmpi`. `name` is the C binding's, for HREDUCE_MPI_VERBOSE.
int start_call(const Args& a, bool persistent, MPI_Request* request, PmpiStart pmpi);

// The completion calls, as MPI defines them, for served and other
// requests alike (arrays may mix them).
int wait(MPI_Request* request, MPI_Status* status);
int test(MPI_Request* request, int* flag, MPI_Status* status);
int waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int waitsome(int count, MPI_Request requests[], int* outcount, int indices[],
             MPI_Status statuses[]);
int testsome(int count, MPI_Request requests[], int* outcount, int indices[],
             MPI_Status statuses[]);
int request_free(MPI_Request* request);
int request_get_status(MPI_Request request, int* flag, MPI_Status* status);
int start(MPI_Request* request);
int startall(int count, MPI_Request requests[]);
int cancel(MPI_Request* request);

// Frees the shells of ended MPI_I* calls kept for reuse: at MPI_Finalize,
// before MPI goes.
void release_spare_requests();

}  // namespace hreduce::detail::mpi_dropin
