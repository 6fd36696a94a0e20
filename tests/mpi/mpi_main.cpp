// Catch2 main for tests run under mpirun: MPI at MPI_THREAD_MULTIPLE (the
// nonblocking calls of teams over MPI run on threads of their own) around
// the session; the exit status is the worst over all ranks, so one failing
// rank fails the test.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>
#include <catch2/catch.hpp>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int failures = Catch::Session().run(argc, argv);
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst > 0 ? 1 : 0;
}
