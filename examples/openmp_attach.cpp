// Attach mode: the threads of an OpenMP parallel region become team members
// by their thread number. Run: bazel run //examples:openmp_attach
#include <omp.h>

#include <cstdio>
#include <vector>

#include "hreduce/team.hpp"

int main() {
  const int threads = 4;
  hreduce::TeamOptions options;
  options.members = threads;
  hreduce::Team team(options);
  long dot = 0;
  const long n = 1000;

#pragma omp parallel num_threads(threads)
  {
    hreduce::Member& me = team.member(omp_get_thread_num());
    me.pin();  // optional: pin this OpenMP thread to the member's PU
    // Each thread computes a partial dot product of its chunk of [0, n).
    long partial = 0;
    for (long i = me.rank(); i < n; i += me.size()) partial += i * i;
    me.reduce(&partial, &dot, 1, hreduce::op::sum, /*root=*/0);
  }

  const long expected = (n - 1) * n * (2 * n - 1) / 6;
  std::printf("sum of i*i for i < %ld: %ld (expected %ld)\n", n, dot, expected);
  return dot == expected ? 0 : 1;
}
