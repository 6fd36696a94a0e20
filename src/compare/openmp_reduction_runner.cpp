// OpenMP's own array-section reduction, as an OpenMP user writes reduce and
// allreduce: inside one persistent parallel region, a worksharing loop over
// the members with `reduction(+ : acc[:n])` (a declared reduction for
// MINLOC), then every thread copies the result into its output.
//
// GCC keeps each thread's private copy of the section on its stack (a
// 64 MiB section crashes), so the vector goes through in sections of
// kSection elements, as a user would have to. 32 KiB keeps the private
// copies in L1/L2; 4 KiB, 256 KiB and 1 MiB sections measured no faster.
#include <omp.h>

#include <algorithm>

#include "src/common/copy.hpp"
#include "src/compare/runner.hpp"
#include "src/compare/timing.hpp"

namespace hreduce::detail::compare {
namespace {

#pragma omp declare reduction(minloc_op:MinLoc                                        \
                              : omp_out = Element <MinLoc>::combine(omp_out, omp_in)) \
    initializer(omp_priv = Element <MinLoc>::identity())

template <class T>
void reduce_section(T* acc, const Problem<T>& p, std::size_t lo, std::size_t len) {
  const int members = p.members;
  if constexpr (std::is_same_v<T, MinLoc>) {
#pragma omp for reduction(minloc_op : acc[:len]) schedule(static, 1)
    for (int m = 0; m < members; ++m) {
      const T* x = p.in[m].data() + lo;
      for (std::size_t i = 0; i < len; ++i) acc[i] = Element<T>::combine(acc[i], x[i]);
    }
  } else {
#pragma omp for reduction(+ : acc[:len]) schedule(static, 1)
    for (int m = 0; m < members; ++m) {
      const T* x = p.in[m].data() + lo;
      for (std::size_t i = 0; i < len; ++i) acc[i] += x[i];
    }
  }
}

template <class T>
class OpenmpReductionRunner final : public Runner {
 public:
  static constexpr std::size_t kSection = 32768 / sizeof(T);

  OpenmpReductionRunner(Team& team, Problem<T>& problem) : team_(team), p_(problem) {}

  double seconds_for(int calls) override {
    double seconds = 0;
    const KeepCallerAffinity keep;
#pragma omp parallel num_threads(p_.members)
    {
      const int t = omp_get_thread_num();
      pin_like_member(team_, t);
#pragma omp barrier
      const auto start = Clock::now();
      for (int c = 0; c < calls; ++c) call(t);
      if (t == 0) seconds = seconds_since(start);
    }
    return seconds;
  }

 private:
  // Called by every thread of the region.
  void call(int t) {
    T* acc = p_.out[Problem<T>::root].data();
    const std::size_t n = p_.count;
    for (std::size_t lo = 0; lo < n; lo += kSection) {
      const std::size_t len = std::min(kSection, n - lo);
#pragma omp for schedule(static)
      for (std::size_t i = 0; i < len; ++i) acc[lo + i] = Element<T>::identity();
      reduce_section(acc + lo, p_, lo, len);
    }
    if (p_.collective == Collective::allreduce && t != Problem<T>::root) {
      copy_bytes(p_.out[t].data(), acc, n * sizeof(T));
    }
    // The next call clears acc: nobody may still be copying from it.
#pragma omp barrier
  }

  const Team& team_;
  Problem<T>& p_;
};

}  // namespace

HREDUCE_COMPARE_RUNNER(make_openmp_reduction_runner, OpenmpReductionRunner);

}  // namespace hreduce::detail::compare
