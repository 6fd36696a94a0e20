// A hybrid MPI + OpenMP program: every process's OpenMP threads attach to a
// team spanning all processes, then
//   1. a distributed dot product is reduced to team rank 0, and
//   2. a distributed matrix-vector product y = A·x is completed with an
//      allreduce (each member owns a block of A's columns and of x, so the
//      partial products are summed over all members).
// Each result is checked against a sequential computation.
//
//   mpirun --oversubscribe -np 3 bazel-bin/examples/mpi_openmp_dot
//   (as root add --allow-run-as-root; OMP_NUM_THREADS sets threads per process)
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <vector>

#include "hreduce/mpi.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int threads = omp_get_max_threads() > 4 ? 4 : omp_get_max_threads();
  int failures = 0;
  {
    hreduce::Team team = hreduce::make_mpi_team(MPI_COMM_WORLD, threads);
    const int members = team.size();
    constexpr long kPerMember = 100000;  // dot product elements per member
    constexpr int kRows = 64, kColsPerMember = 32;
    auto x_at = [](long i) { return static_cast<double>(i % 7) - 3.0; };
    auto y_at = [](long i) { return static_cast<double>(i % 5) * 0.5; };
    auto a_at = [](long row, long col) { return static_cast<double>((row * 3 + col) % 11) - 5.0; };

    double dot = 0;
    std::vector<std::vector<double>> product(threads, std::vector<double>(kRows));
#pragma omp parallel num_threads(threads)
    {
      hreduce::Member& me = team.member(omp_get_thread_num());
      const long first = me.rank() * kPerMember;
      double partial = 0;
      for (long i = first; i < first + kPerMember; ++i) partial += x_at(i) * y_at(i);
      me.reduce(&partial, &dot, 1, hreduce::op::sum, /*root=*/0);

      std::vector<double> mine(kRows, 0.0);  // A[:, my columns] · x[my columns]
      for (int c = 0; c < kColsPerMember; ++c) {
        const long col = me.rank() * kColsPerMember + c;
        for (int r = 0; r < kRows; ++r) mine[r] += a_at(r, col) * x_at(col);
      }
      me.allreduce(mine.data(), product[omp_get_thread_num()].data(), kRows, hreduce::op::sum);
    }

    double expected_dot = 0;
    for (long i = 0; i < members * kPerMember; ++i) expected_dot += x_at(i) * y_at(i);
    std::vector<double> expected_y(kRows, 0.0);
    for (long col = 0; col < members * kColsPerMember; ++col) {
      for (int r = 0; r < kRows; ++r) expected_y[r] += a_at(r, col) * x_at(col);
    }
    // Integers in doubles: every order of summation gives the same value.
    if (rank == 0 && dot != expected_dot) ++failures;
    for (const auto& y : product) failures += y != expected_y;
    if (rank == 0) {
      std::printf("%d members over MPI: dot = %g (expected %g), y[0..2] = %g %g %g\n", members, dot,
                  expected_dot, product[0][0], product[0][1], product[0][2]);
    }
  }
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
