// Persistent requests made before their communicator's team existed.
//
// A team is built by a blocking reduction (teams.hpp): building is
// collective, and an *_init call may not wait for the other processes. A
// persistent request made before that is MPI's own (PMPI<PREFIX>_<call>_init)
// and its starts go to MPI. It is kept here with its prepared call, and
// its first MPI_Start after the team exists makes it a served request,
// under the same handle: the handle the application holds, and any copy
// of it, stays valid, and MPI, which never starts the request again, sees
// an inactive persistent request wherever the handle reaches PMPI_*, as it
// does a shell (requests.hpp). Every process switches at the same start:
// a communicator's team is built at the same call on every process, and
// MPI orders the starts of persistent collectives like the calls.
#pragma once

#include <mpi.h>

#include <memory>

#include "src/mpi_dropin/served_calls.hpp"

namespace hreduce::detail::mpi_dropin {

// Keeps `call` (its arguments and combiner; no team yet) for MPI's
// persistent request `request`, made because the team was not built yet.
void await_team(MPI_Request request, std::unique_ptr<ServedCall> call);

// Whether any request waits for its team: while none does, MPI_Start and
// MPI_Request_free look no further.
bool any_awaiting();

// At MPI_Start of *request: where it waits and its communicator's team now
// serves it, the served call that takes its place (in the table of served
// calls, under the same handle); else null, and the start goes to MPI.
ServedCall* serve_where_team_ready(MPI_Request* request);

// MPI_Request_free of `request`: it waits no more.
void stop_awaiting(MPI_Request request);

// At MPI_Finalize: the calls still waiting go (their requests are MPI's).
void release_awaiting();

}  // namespace hreduce::detail::mpi_dropin
