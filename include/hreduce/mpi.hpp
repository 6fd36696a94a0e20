// Teams that span the processes of an MPI communicator: each process
// contributes its threads, and every collective runs as a shared-memory
// phase inside each process plus a phase between processes over MPI
// point-to-point messages (never MPI's own collectives).
//
//   MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
//   hreduce::Team team = hreduce::make_mpi_team(MPI_COMM_WORLD, /*threads=*/4);
//   team.run([&](hreduce::Member& m) { m.allreduce(in, out, n, hreduce::op::sum); });
//
// Team ranks run over processes in communicator rank order, then threads:
// process 0's members are ranks 0..t0-1, process 1's follow, and so on.
// Processes may contribute different thread counts.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "hreduce/team.hpp"

namespace hreduce {

// The inter-process algorithms a team may be told to use (docs/mpi.md).
enum class AllreduceAlgorithm { automatic, recursive_doubling, rabenseifner, ring };
enum class ReduceScatterAlgorithm { automatic, pairwise, reduce_then_scatter };

struct MpiTeamOptions {
  // Processes per node. 0: real nodes, found with
  // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). k > 0: "virtual nodes" of k
  // consecutive ranks, to test multi-node logic on one machine. The
  // environment variable HREDUCE_PROCS_PER_NODE, when set, overrides this.
  int procs_per_node = 0;
  // The α–β cost model that picks the inter-process algorithm: start-up
  // seconds per message and seconds per byte.
  double alpha_seconds = 2e-6;
  double beta_seconds_per_byte = 2e-10;
  // Force an inter-process algorithm (automatic: the cost model picks).
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::automatic;
  ReduceScatterAlgorithm reduce_scatter = ReduceScatterAlgorithm::automatic;
  // allreduce: reduce inside each node, then between node leaders, then
  // broadcast inside each node (when every node's ranks are consecutive).
  bool by_node = true;
  // allreduce of at least pipeline_min_bytes per member runs in chunks of
  // pipeline_chunk_bytes, so the threads' shared-memory reduction of one
  // chunk overlaps the messages of the previous one (0 turns it off).
  std::size_t pipeline_min_bytes = std::size_t{1} << 20;
  std::size_t pipeline_chunk_bytes = std::size_t{256} << 10;
  // The processes of one node combine through a shared-memory segment
  // (POSIX shm, unlinked as soon as every process mapped it) instead of
  // MPI messages; only the first process of each node sends messages.
  // Applies when every node's processes are consecutive ranks.
  bool shared_memory = true;
  // Staging chunk per process of that segment: the segment holds a ring of
  // (processes on the node + 1) chunks per buffer, as many buffers as fit
  // in 32 MiB (2 to 8), whatever the vector length. Larger chunks mean
  // fewer cross-process handshakes per call (hreduce bench --mpi
  // --node-chunk-bytes compares sizes).
  std::size_t node_chunk_bytes = std::size_t{256} << 10;
  // TeamOptions::timeout for a team spanning processes when it is zero:
  // a process that stops answering then fails the others after this long
  // instead of hanging them (a process of the node that dies is noticed
  // within milliseconds regardless). It covers MPI messages too.
  std::chrono::milliseconds default_timeout{std::chrono::minutes(1)};
};

// Collective over `comm`: every process calls it with its own thread count
// (>= 1). `options.members` is ignored (threads is used). Requires MPI to be
// initialised with at least MPI_THREAD_SERIALIZED, because the runtime calls
// MPI from whichever thread runs the process's member 0 (under Team::run, a
// worker thread), one call at a time; a lower level is refused with
// ArgumentError.
Team make_mpi_team(MPI_Comm comm, int threads, TeamOptions options = {},
                   const MpiTeamOptions& mpi = {});

}  // namespace hreduce
