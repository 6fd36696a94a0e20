// Why the `tbb` baseline is a parallel_for: the three ways to write an
// allreduce of T member vectors with oneTBB, each checked against the
// oracle and timed on the same buffers.
//   BM_TbbAllreduce_ParallelReduce  parallel_reduce over the members with a
//                                   vector-valued body (join adds vectors)
//   BM_TbbAllreduce_EtsCombine      enumerable_thread_specific accumulators,
//                                   combine_each into the result
//   BM_TbbAllreduce_ParallelFor     parallel_for over element ranges (what
//                                   the comparison's `tbb` runs)
// parallel_reduce and enumerable_thread_specific reduce *along* a range;
// here the reduction runs *across* T members for every element, so both
// leave T-way parallelism and serial vector joins. (parallel_scan likewise
// scans along a range, not across members.)
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "src/compare/problem.hpp"

namespace hreduce::bench {
namespace {

namespace cmp = hreduce::detail::compare;
using Problem = cmp::Problem<double>;

void add(std::vector<double>& to, const std::vector<double>& from) {
  for (std::size_t i = 0; i < to.size(); ++i) to[i] += from[i];
}

void parallel_reduce_allreduce(Problem& p, tbb::task_arena& arena) {
  arena.execute([&] {
    const std::vector<double> sum = tbb::parallel_reduce(
        tbb::blocked_range<int>(0, p.members, 1), std::vector<double>(),
        [&](const tbb::blocked_range<int>& members, std::vector<double> acc) {
          for (int m = members.begin(); m < members.end(); ++m) {
            if (acc.empty()) {
              acc = p.in[m];
            } else {
              add(acc, p.in[m]);
            }
          }
          return acc;
        },
        [](std::vector<double> a, const std::vector<double>& b) {
          if (a.empty()) return b;
          if (!b.empty()) add(a, b);
          return a;
        });
    tbb::parallel_for(0, p.members,
                      [&](int m) { std::copy(sum.begin(), sum.end(), p.out[m].begin()); });
  });
}

void ets_combine_allreduce(Problem& p, tbb::task_arena& arena,
                           tbb::enumerable_thread_specific<std::vector<double>>& locals) {
  arena.execute([&] {
    for (auto& local : locals) std::fill(local.begin(), local.end(), 0.0);
    tbb::parallel_for(0, p.members, [&](int m) { add(locals.local(), p.in[m]); });
    std::vector<double>& sum = p.out[0];
    std::fill(sum.begin(), sum.end(), 0.0);
    locals.combine_each([&](const std::vector<double>& local) { add(sum, local); });
    for (int m = 1; m < p.members; ++m) std::copy(sum.begin(), sum.end(), p.out[m].begin());
  });
}

void parallel_for_allreduce(Problem& p, tbb::task_arena& arena) {
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, p.count, 2048),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i < r.end(); ++i) {
                          double sum = p.in[0][i];
                          for (int m = 1; m < p.members; ++m) sum += p.in[m][i];
                          for (int m = 0; m < p.members; ++m) p.out[m][i] = sum;
                        }
                      });
  });
}

enum class Variant { parallel_reduce, ets_combine, parallel_for };

void BM_TbbAllreduce(benchmark::State& state, Variant variant) {
  const int members = static_cast<int>(state.range(0));
  const std::size_t count = std::max<std::int64_t>(1, state.range(1) / 8);
  Problem p(cmp::Collective::allreduce, members, count);
  tbb::task_arena arena(members);
  tbb::enumerable_thread_specific<std::vector<double>> locals(count, 0.0);
  auto call = [&] {
    switch (variant) {
      case Variant::parallel_reduce: parallel_reduce_allreduce(p, arena); break;
      case Variant::ets_combine: ets_combine_allreduce(p, arena, locals); break;
      case Variant::parallel_for: parallel_for_allreduce(p, arena); break;
    }
  };
  p.clear_outputs();
  call();
  if (p.first_wrong_member() >= 0) {
    state.SkipWithError("result differs from the sequential oracle");
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // other runtimes' spinners
  for (auto _ : state) call();
  state.counters["GB/s"] =
      benchmark::Counter(p.moved_bytes(), benchmark::Counter::kIsIterationInvariantRate);
}

void arguments(benchmark::internal::Benchmark* b) {
  b->ArgNames({"members", "bytes"});
  for (int members : {2, 4}) {
    for (std::int64_t bytes = 8; bytes <= (16 << 20); bytes *= 8) b->Args({members, bytes});
  }
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_TbbAllreduce, ParallelReduce, Variant::parallel_reduce)->Apply(arguments);
BENCHMARK_CAPTURE(BM_TbbAllreduce, EtsCombine, Variant::ets_combine)->Apply(arguments);
BENCHMARK_CAPTURE(BM_TbbAllreduce, ParallelFor, Variant::parallel_for)->Apply(arguments);

}  // namespace
}  // namespace hreduce::bench

BENCHMARK_MAIN();
