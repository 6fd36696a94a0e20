// `hreduce probe --mpi`: MPI point-to-point latency and bandwidth between
// the processes of a communicator, within a node and between nodes.
#pragma once

#include <functional>
#include <string>

#include <mpi.h>

#include "src/probe/machine.hpp"

namespace hreduce::detail::probe {

// Every process of `comm` calls it; the result is complete on rank 0 only.
// Nodes are virtual (HREDUCE_PROCS_PER_NODE=k: k consecutive ranks each) or
// the shared-memory domains MPI reports. Pairs: every pair of ranks up to
// 16 processes, else rank 0 with every other rank. `progress` is called on
// rank 0 before each pair.
MpiPointToPoint mpi_point_to_point(MPI_Comm comm, bool quick,
                                   const std::function<void(const std::string&)>& progress);

}  // namespace hreduce::detail::probe
