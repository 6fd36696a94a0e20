// What every file of the collectives suite shares: the machine and one team
// per member count, the sizes and team sizes measured, the registry the
// ratio table reads, and the benchmark body that times a src/compare runner.
//
// Each (collective, type, members, bytes, implementation) is its own
// benchmark family, registered in that order, so that the implementations of
// one case run back to back on the same buffers: slow drift on a noisy
// machine (frequency, other load) then skews their ratios far less than if
// each implementation's sweep ran minutes apart. (The limit kernel, a topic
// of its own, runs after all of them.)
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "hreduce/topology.hpp"
#include "src/compare/problem.hpp"
#include "src/compare/runner.hpp"

namespace hreduce::bench {

namespace cmp = hreduce::detail::compare;
using cmp::Collective;
using cmp::Implementation;
using cmp::name_of;

// One file per topic; main registers them in this order.
void register_reduce_benchmarks();
void register_allreduce_benchmarks();
void register_reduce_scatter_block_benchmarks();
void register_scan_benchmarks();
void register_exscan_benchmarks();
void register_limit_benchmarks();

// ---------------------------------------------------------------- sizes ---

// Bytes per member: 8 B, ×8 steps to 16 MiB, then 64 MiB (past every cache
// of the machines we run on).
inline constexpr std::int64_t kSizes[] = {
    8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 2 << 20, 16 << 20, 64 << 20,
};

// HREDUCE_BENCH_MAX_BYTES caps the sizes for quick runs; unset: all of them.
inline std::int64_t max_bytes_from_environment() {
  const char* text = std::getenv("HREDUCE_BENCH_MAX_BYTES");
  if (text == nullptr || *text == '\0') return kSizes[std::size(kSizes) - 1];
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < kSizes[0]) {
    throw Error("HREDUCE_BENCH_MAX_BYTES='" + std::string(text) +
                "' is not a byte count of at least " + std::to_string(kSizes[0]));
  }
  return value;
}

inline std::vector<std::int64_t> sizes_per_member() {
  const std::int64_t cap = max_bytes_from_environment();
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes : kSizes) {
    if (bytes <= cap) sizes.push_back(bytes);
  }
  return sizes;
}

// ------------------------------------------------------ machine and teams ---

// Teams are expensive to build (topology discovery, worker threads) and idle
// teams cost nothing (their workers block in the kernel), so each member
// count gets one team for the whole run. The case being measured lives here
// too, declared after the teams so that it is destroyed before them.
class Suite {
 public:
  static Suite& get() {
    static Suite suite;
    return suite;
  }

  const Topology& machine() const { return machine_; }
  int cores() const { return std::max(1, machine_.count(Level::core)); }

  // 1..cores, then 2×cores: one member per core, and oversubscribed.
  std::vector<int> team_sizes() const {
    std::vector<int> sizes;
    for (int members = 1; members <= cores(); ++members) sizes.push_back(members);
    sizes.push_back(2 * cores());
    return sizes;
  }

  Team& team(int members) {
    std::unique_ptr<Team>& slot = teams_[members];
    if (!slot) {
      TeamOptions options;
      options.members = members;
      slot = std::make_unique<Team>(options);
    }
    return *slot;
  }

  // The current case (see PreparedCase); reset it before building the next
  // so two cases' 64 MiB buffers never coexist.
  struct CaseSlot {
    virtual ~CaseSlot() = default;
  };
  std::unique_ptr<CaseSlot>& current_case() { return current_case_; }

  // Frees the buffers and the baselines' thread pools before exit.
  void release() { current_case_.reset(); }

 private:
  Suite() : machine_(Topology::discover()) {}

  Topology machine_;
  std::map<int, std::unique_ptr<Team>> teams_;
  std::unique_ptr<CaseSlot> current_case_;
};

// ------------------------------------------------------------- registry ---

// What a benchmark family measures, for the ratio table: the family name is
// "<topic>/<implementation>", and a topic's implementations are compared
// with each other.
struct Family {
  std::string topic;           // "BM_Allreduce_double"
  std::string collective;      // "allreduce"
  std::string type;            // "double", "int32", "minloc"
  std::string implementation;  // "hreduce", ..., "limit"; "memcpy" for BM_Memcpy
};

class Registry {
 public:
  static Registry& get() {
    static Registry registry;
    return registry;
  }
  void add(const std::string& name, const Family& family) {
    families_.emplace(name, family);
    if (topic_index(family.topic) == topics_.size()) topics_.push_back(family);
  }
  const Family* find(const std::string& name) const {
    const auto it = families_.find(name);
    return it == families_.end() ? nullptr : &it->second;
  }
  // One family per topic, in registration order: the order of the ratio
  // table (only its topic, collective and type matter).
  const std::vector<Family>& topics() const { return topics_; }
  std::size_t topic_index(const std::string& topic) const {
    std::size_t i = 0;
    while (i < topics_.size() && topics_[i].topic != topic) ++i;
    return i;
  }

 private:
  std::map<std::string, Family> families_;
  std::vector<Family> topics_;
};

// ---------------------------------------------------------------- naming ---

template <class T>
inline constexpr std::string_view type_tag = "?";
template <>
inline constexpr std::string_view type_tag<double> = "double";
template <>
inline constexpr std::string_view type_tag<std::int32_t> = "int32";
template <>
inline constexpr std::string_view type_tag<cmp::MinLoc> = "minloc";

inline std::string_view camel_name(Collective collective) {
  switch (collective) {
    case Collective::reduce: return "Reduce";
    case Collective::allreduce: return "Allreduce";
    case Collective::reduce_scatter_block: return "ReduceScatterBlock";
    case Collective::scan: return "Scan";
    case Collective::exscan: return "Exscan";
    case Collective::reduce_scatter: break;  // not compared (kCollectives)
  }
  return "?";
}

template <class T>
std::string topic_name(Collective collective) {
  return "BM_" + std::string(camel_name(collective)) + "_" + std::string(type_tag<T>);
}

// ---------------------------------------------------------------- timing ---

// A batch lasts at least this long, so that the clock's resolution and the
// barriers around a batch vanish from the per-call time.
inline constexpr double kBatchSeconds = 1e-3;
inline constexpr int kMaxBatch = 1 << 22;
// OpenMP and oneTBB workers keep spinning for milliseconds after their work
// (libgomp: GOMP_SPINCOUNT); on a machine with few cores they would steal
// the cores of whatever runs next.
inline constexpr auto kSettle = std::chrono::milliseconds(20);

inline void settle() { std::this_thread::sleep_for(kSettle); }

// The calls per batch for `seconds_for(calls)` to last kBatchSeconds.
template <class SecondsFor>
int calibrate_batch(SecondsFor seconds_for) {
  int calls = 1;
  while (calls < kMaxBatch) {
    const double took = seconds_for(calls);
    if (took >= kBatchSeconds) break;
    // Aim 20% past the target so that one more try usually suffices, but
    // never jump by more than 16× on a measurement too short to trust.
    const double growth = took > 0 ? std::clamp(1.2 * kBatchSeconds / took, 2.0, 16.0) : 16.0;
    calls = static_cast<int>(std::min(calls * growth, static_cast<double>(kMaxBatch)));
  }
  return calls;
}

// Totals over one call of a benchmark body, for the throughput counter.
struct Timed {
  double seconds = 0;
  double calls = 0;
  void add(double batch_seconds, int batch_calls) {
    seconds += batch_seconds;
    calls += batch_calls;
  }
  double per_call() const { return calls > 0 ? seconds / calls : 0; }
};

// GB/s is computed here rather than as a kIsRate counter: it is then plainly
// bytes over the per-call seconds the time column shows (both are the
// repetition's batch seconds over its calls), independent of which time a
// Google Benchmark version divides rates by, and printed without a "/s".
inline void set_counters(benchmark::State& state, double moved_bytes_per_call, const Timed& timed,
                         int members, std::size_t bytes_per_member) {
  if (timed.per_call() > 0) state.counters["GB/s"] = moved_bytes_per_call / timed.per_call() / 1e9;
  if (members > 0) state.counters["members"] = members;
  state.counters["bytes"] =
      benchmark::Counter(static_cast<double>(bytes_per_member), benchmark::Counter::kDefaults,
                         benchmark::Counter::kIs1024);
}

// ----------------------------------------------------------- the case ---

struct CaseKey {
  Collective collective;
  int members;
  std::int64_t bytes;
  bool operator==(const CaseKey&) const = default;
};

// One case's buffers and the runner of one implementation on them. Google
// Benchmark calls a body several times per benchmark (its iteration-count
// search, then each repetition) and the implementations of a case follow
// each other, so the Problem is built once per case and the runner, its
// check and its batch once per implementation.
template <class T>
class PreparedCase final : public Suite::CaseSlot {
 public:
  PreparedCase(const CaseKey& key, Team& team)
      : key(key), problem(key.collective, key.members,
                          cmp::element_count<T>(key.collective, key.members,
                                                static_cast<std::size_t>(key.bytes))),
        team_(team) {}

  // Builds the implementation's runner, checks its result, then sizes its
  // batch. Leaves `error` set (and no batch) when the result is wrong.
  void use(Implementation implementation) {
    runner.reset();  // a baseline's threads go before the next one's start
    implementation_ = implementation;
    error.clear();
    runner = cmp::make_runner(implementation, team_, problem);
    error = check(implementation);
    if (!error.empty()) return;
    settle();
    batch = calibrate_batch([this](int calls) { return runner->seconds_for(calls); });
  }

  bool uses(Implementation implementation) const {
    return runner != nullptr && implementation_ == implementation;
  }

  const CaseKey key;
  cmp::Problem<T> problem;
  std::unique_ptr<cmp::Runner> runner;
  int batch = 1;
  std::string error;  // non-empty: the result differed from the oracle

 private:
  // The limit computes nothing; every other implementation must match the
  // sequential oracle before its time means anything.
  std::string check(Implementation implementation) {
    if (implementation == Implementation::limit) return {};
    problem.clear_outputs();
    runner->seconds_for(1);
    const int wrong = problem.first_wrong_member();
    if (wrong < 0) return {};
    return std::string(name_of(implementation)) + " " + std::string(name_of(key.collective)) + "<" +
           std::string(type_tag<T>) + ">: member " + std::to_string(wrong) +
           "'s result differs from the sequential oracle (members " + std::to_string(key.members) +
           ", " + std::to_string(key.bytes) + " bytes per member)";
  }

  Team& team_;
  Implementation implementation_ = Implementation::hreduce;
};

template <class T>
PreparedCase<T>& prepare(const CaseKey& key, Implementation implementation) {
  std::unique_ptr<Suite::CaseSlot>& slot = Suite::get().current_case();
  auto* prepared = dynamic_cast<PreparedCase<T>*>(slot.get());
  if (prepared == nullptr || !(prepared->key == key)) {
    slot.reset();
    Team& team = Suite::get().team(key.members);
    auto fresh = std::make_unique<PreparedCase<T>>(key, team);
    prepared = fresh.get();
    slot = std::move(fresh);
  }
  if (!prepared->uses(implementation)) prepared->use(implementation);
  return *prepared;
}

// The benchmark body: args are (members, bytes per member). One Google
// Benchmark iteration is one collective call, run in batches: each batch
// counts as `batch` iterations (KeepRunningBatch) and records its whole
// time, so the time column reads per call and --benchmark_min_time keeps
// its meaning. (Recording batch_seconds / batch for one iteration would give
// the same per-call time but make every repetition last min_time × batch.)
template <class T>
void measure_collective(benchmark::State& state, Collective collective,
                        Implementation implementation) {
  const CaseKey key{collective, static_cast<int>(state.range(0)), state.range(1)};
  PreparedCase<T>* prepared = nullptr;
  try {
    prepared = &prepare<T>(key, implementation);
  } catch (const std::exception& e) {
    Suite::get().current_case().reset();  // half-built: the next call starts over
    state.SkipWithError((std::string("setup failed: ") + e.what()).c_str());
    return;
  }
  if (!prepared->error.empty()) {
    state.SkipWithError(prepared->error.c_str());
    return;
  }
  Timed timed;
  while (state.KeepRunningBatch(prepared->batch)) {
    const double seconds = prepared->runner->seconds_for(prepared->batch);
    state.SetIterationTime(seconds);
    timed.add(seconds, prepared->batch);
  }
  set_counters(state, prepared->problem.moved_bytes(), timed, key.members,
               prepared->problem.count * sizeof(T));
}

// ----------------------------------------------------------- registering ---

inline void apply_common_settings(benchmark::internal::Benchmark* b) {
  // Repetitions and min time come from the command line (with the suite's
  // defaults, see suite_main.cpp): set here, they would override the flags.
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

// Registers one family per (members, bytes, implementation) of the topic
// (collective, T), skipping implementations that lack the collective.
template <class T>
void register_collective(Collective collective,
                         std::initializer_list<Implementation> implementations) {
  const std::string topic = topic_name<T>(collective);
  for (int members : Suite::get().team_sizes()) {
    for (std::int64_t bytes : sizes_per_member()) {
      for (Implementation implementation : implementations) {
        if (!cmp::implements(implementation, collective)) continue;
        const std::string name = topic + "/" + std::string(name_of(implementation));
        Registry::get().add(name, {topic, std::string(name_of(collective)),
                                   std::string(type_tag<T>), std::string(name_of(implementation))});
        auto* b = benchmark::RegisterBenchmark(
            name.c_str(), [collective, implementation](benchmark::State& state) {
              measure_collective<T>(state, collective, implementation);
            });
        b->ArgNames({"members", "bytes"})->Args({members, bytes});
        apply_common_settings(b);
      }
    }
  }
}

// hreduce and the baselines that compute the collective; the limit kernel
// is limit_bench.cpp's topic.
template <class T>
void register_comparisons(Collective collective) {
  register_collective<T>(collective, {Implementation::hreduce, Implementation::openmp_reduction,
                                      Implementation::openmp_sliced, Implementation::tbb});
}

}  // namespace hreduce::bench
