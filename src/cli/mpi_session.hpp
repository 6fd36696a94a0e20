// What `hreduce bench --mpi` and `hreduce topo --mpi` share: MPI's
// lifetime and the team options their flags set.
#pragma once

#include <mpi.h>

#include "hreduce/mpi.hpp"
#include "src/cli/args.hpp"

namespace hreduce::cli {

// With --mpi: MPI is initialised here and finalised when the command ends.
struct MpiSession {
  explicit MpiSession(bool wanted) : active(wanted) {
    if (!active) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  ~MpiSession() {
    if (active) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  bool active;
  int rank = 0;
};

// --node-chunk-bytes and --no-shared-memory.
inline MpiTeamOptions mpi_team_options(const Args& args) {
  MpiTeamOptions options;
  options.node_chunk_bytes = args.get_bytes("--node-chunk-bytes", options.node_chunk_bytes, 1);
  options.shared_memory = !args.has("--no-shared-memory");
  return options;
}

}  // namespace hreduce::cli
