// The speed of light for each collective: the limit kernel reads every input
// once and writes an equal share of the outputs once on the team's own
// threads (src/compare/limit_runner.cpp). The ratio table compares hreduce
// with it under the collective's own topic. Single-thread memcpy, per size,
// says what one core moves on this machine.
#include <cstdint>
#include <map>

#include "bench/suite.hpp"

namespace hreduce::bench {
namespace {

// memcpy_seconds allocates its buffers on every call, so its batch is sized
// once per size, not on every call of the body.
int memcpy_batch(std::int64_t bytes) {
  static std::map<std::int64_t, int> batches;
  auto it = batches.find(bytes);
  if (it == batches.end()) {
    settle();
    const int batch = calibrate_batch(
        [bytes](int calls) { return cmp::memcpy_seconds(static_cast<std::size_t>(bytes), calls); });
    it = batches.emplace(bytes, batch).first;
  }
  return it->second;
}

void memcpy_benchmark(benchmark::State& state) {
  const std::int64_t bytes = state.range(0);
  const int batch = memcpy_batch(bytes);
  Timed timed;
  // As measure_collective: one iteration per copy, timed in batches.
  while (state.KeepRunningBatch(batch)) {
    const double seconds = cmp::memcpy_seconds(static_cast<std::size_t>(bytes), batch);
    state.SetIterationTime(seconds);
    timed.add(seconds, batch);
  }
  // Read once and written once.
  set_counters(state, 2.0 * static_cast<double>(bytes), timed, 0, static_cast<std::size_t>(bytes));
}

void register_memcpy() {
  const std::string name = "BM_Memcpy";
  Registry::get().add(name, {name, "memcpy", "byte", "memcpy"});
  for (std::int64_t bytes : sizes_per_member()) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), memcpy_benchmark);
    b->ArgNames({"bytes"})->Arg(bytes);
    apply_common_settings(b);
  }
}

}  // namespace

void register_limit_benchmarks() {
  for (Collective collective : cmp::kCollectives) {
    register_collective<double>(collective, {Implementation::limit});
  }
  register_collective<std::int32_t>(Collective::allreduce, {Implementation::limit});
  register_collective<cmp::MinLoc>(Collective::allreduce, {Implementation::limit});
  register_memcpy();
}

}  // namespace hreduce::bench
