// make_mpi_team's construction without its thread-level check, for callers
// that run every collective on the thread that called MPI anyway.
#pragma once

#include <mpi.h>

#include "hreduce/mpi.hpp"
#include "hreduce/team.hpp"

namespace hreduce::detail {

// A team over `comm` with `threads` members per process. Calls only PMPI_*
// entry points (src/mpi_dropin defines the MPI_* reductions). The caller
// has checked that MPI is initialised and that its members may call MPI:
// the MPI drop-in library builds teams of one member per process whose
// member is the application's own calling thread (attach mode), which
// needs no more than the thread level the application chose.
Team build_mpi_team(MPI_Comm comm, int threads, TeamOptions options, const MpiTeamOptions& mpi);

}  // namespace hreduce::detail
