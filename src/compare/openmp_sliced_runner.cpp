// Hand-written slice-parallel OpenMP: one persistent parallel region per
// batch; in each call thread t runs the slice kernel on its own range of the
// elements, then all meet at a barrier (the call is complete only when every
// slice is).
#include <omp.h>

#include "src/compare/runner.hpp"
#include "src/compare/slice_kernel.hpp"
#include "src/compare/timing.hpp"

namespace hreduce::detail::compare {
namespace {

template <class T>
class OpenmpSlicedRunner final : public Runner {
 public:
  OpenmpSlicedRunner(Team& team, Problem<T>& problem)
      : team_(team), kernel_(problem), p_(problem) {}

  double seconds_for(int calls) override {
    double seconds = 0;
    const int p = p_.members;
    const KeepCallerAffinity keep;
#pragma omp parallel num_threads(p)
    {
      const int t = omp_get_thread_num();
      pin_like_member(team_, t);
      const std::size_t lo = slice_edge(t, p, p_.count, sizeof(T));
      const std::size_t hi = slice_edge(t + 1, p, p_.count, sizeof(T));
#pragma omp barrier
      const auto start = Clock::now();
      for (int c = 0; c < calls; ++c) {
        kernel_.run(lo, hi);
#pragma omp barrier
      }
      if (t == 0) seconds = seconds_since(start);
    }
    return seconds;
  }

 private:
  const Team& team_;
  SliceKernel<T> kernel_;
  Problem<T>& p_;
};

}  // namespace

HREDUCE_COMPARE_RUNNER(make_openmp_sliced_runner, OpenmpSlicedRunner);

}  // namespace hreduce::detail::compare
