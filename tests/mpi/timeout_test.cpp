// Run by timeout_test.sh under mpirun with 2 ranks: rank 1 stops taking
// part while rank 0 calls an allreduce on a team whose timeout is 500 ms.
// Rank 0 must get hreduce::Error within a few seconds, both over MPI
// messages (each rank its own virtual node) and on the node level (one
// node); the script says which. It prints PASS or FAIL, then ends the job.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "hreduce/mpi.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string expected = argc > 1 ? argv[1] : "";
  hreduce::TeamOptions options;
  options.timeout = std::chrono::milliseconds(500);
  hreduce::Team team = hreduce::make_mpi_team(MPI_COMM_WORLD, 1, options);
  double in = 1, out = 0;
  team.member(0).allreduce(&in, &out, 1, hreduce::op::sum);
  if (out != 2) std::printf("FAIL: the first allreduce gave %g\n", out);
  if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(20));  // rank 0 ends the job first
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    team.member(0).allreduce(&in, &out, 1, hreduce::op::sum);
    std::printf("FAIL: no error although process 1 never called\n");
  } catch (const hreduce::Error& e) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool names = std::string(e.what()).find(expected) != std::string::npos;
    // The class and the team say what the program can do: build a new team.
    const bool unusable =
        dynamic_cast<const hreduce::UnusableTeamError*>(&e) != nullptr && !team.usable();
    std::printf("%s: after %.2f s (%s): %s\n", seconds < 5 && names && unusable ? "PASS" : "FAIL",
                seconds, unusable ? "UnusableTeamError, team unusable" : "wrong class or usable",
                e.what());
  }
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 0);
}
