// Run by node_kill_test.sh under mpirun, all ranks on one node: rank 1
// kills itself (SIGKILL) in the middle of a run of allreduces on the node
// level. The script then checks that no shared-memory segment outlived the
// job. Every other rank reports the Error it got, if mpirun lets it.
#include <mpi.h>
#include <signal.h>

#include <cstdio>
#include <vector>

#include "hreduce/mpi.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    hreduce::Team team = hreduce::make_mpi_team(MPI_COMM_WORLD, 1);
    std::vector<double> in(100000, 1.0), out(100000);
    for (int call = 0; call < 100000; ++call) {
      if (rank == 1 && call == 50) raise(SIGKILL);
      team.member(0).allreduce(in.data(), out.data(), in.size(), hreduce::op::sum);
    }
    std::printf("rank %d: no error after the other process died\n", rank);
  } catch (const hreduce::Error& e) {
    std::printf("rank %d: %s\n", rank, e.what());
  }
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 3);
}
