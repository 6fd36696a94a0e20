// make_mpi_team refuses an MPI thread level below MPI_THREAD_SERIALIZED,
// naming the level it found and the one it needs. Its own binary: MPI can be
// initialised once per process, here with MPI_THREAD_FUNNELED.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "hreduce/mpi.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int failures = 0;
  if (provided >= MPI_THREAD_SERIALIZED) {
    std::printf("MPI gave MPI_THREAD_SERIALIZED or more although FUNNELED was asked for\n");
    failures = 1;  // the check below would not be exercised
  } else {
    try {
      hreduce::Team team = hreduce::make_mpi_team(MPI_COMM_WORLD, 2);
      std::printf("make_mpi_team accepted thread level %d\n", provided);
      failures = 1;
    } catch (const hreduce::Error& e) {
      const std::string text = e.what();
      const bool names_both = text.find("MPI_THREAD_FUNNELED") != std::string::npos &&
                              text.find("MPI_THREAD_SERIALIZED") != std::string::npos;
      std::printf("refused as expected: %s\n", e.what());
      failures = names_both ? 0 : 1;
    }
  }
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
