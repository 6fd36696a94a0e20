// oneTBB: a task_arena with one slot per member; each call is a
// parallel_for over the element range running the slice kernel, which TBB
// splits and balances itself (the fastest formulation of these collectives
// in TBB we found; docs/benchmarking.md says why parallel_reduce and
// parallel_scan do not fit a reduction *across* members). The arena's threads are pinned
// like the team's members by an observer.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <algorithm>

#include "src/compare/runner.hpp"
#include "src/compare/slice_kernel.hpp"
#include "src/compare/timing.hpp"

namespace hreduce::detail::compare {
namespace {

class PinObserver final : public tbb::task_scheduler_observer {
 public:
  PinObserver(tbb::task_arena& arena, const Team& team)
      : tbb::task_scheduler_observer(arena), team_(team) {
    observe(true);
  }
  ~PinObserver() override { observe(false); }
  void on_scheduler_entry(bool) override {
    pin_like_member(team_, tbb::this_task_arena::current_thread_index());
  }

 private:
  const Team& team_;
};

template <class T>
class TbbRunner final : public Runner {
 public:
  TbbRunner(Team& team, Problem<T>& problem)
      : arena_(problem.members), observer_(arena_, team), kernel_(problem), p_(problem) {}

  double seconds_for(int calls) override {
    double seconds = 0;
    // Grains of 16 KiB: big enough that task overhead vanishes, small
    // enough that TBB can balance within one vector.
    const std::size_t grain = std::max<std::size_t>(1, 16384 / sizeof(T));
    const KeepCallerAffinity keep;
    arena_.execute([&] {
      const auto start = Clock::now();
      for (int c = 0; c < calls; ++c) {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, p_.count, grain),
            [&](const tbb::blocked_range<std::size_t>& r) { kernel_.run(r.begin(), r.end()); });
      }
      seconds = seconds_since(start);
    });
    return seconds;
  }

 private:
  tbb::task_arena arena_;
  PinObserver observer_;
  SliceKernel<T> kernel_;
  Problem<T>& p_;
};

}  // namespace

HREDUCE_COMPARE_RUNNER(make_tbb_runner, TbbRunner);

}  // namespace hreduce::detail::compare
