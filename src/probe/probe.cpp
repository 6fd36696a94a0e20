// The order and the time budget of the local measurements. The default
// budget aims at under a minute on any machine: about 8 s of round trips,
// 20 s of memory cells (plus placing one set of buffers per NUMA node),
// 3 s of folds and 2 s across processes.
#include "src/probe/probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "src/probe/measurements.hpp"
#include "src/probe/pairs.hpp"

namespace hreduce::detail::probe {
namespace {

using Clock = std::chrono::steady_clock;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

CoreToCore core_to_core(const Topology& topology, const ProbeSettings& settings,
                        const std::function<void(const std::string&)>& progress) {
  CoreToCore out;
  out.all_pairs = topology.pu_count() <= settings.all_pairs_limit;
  const auto pairs = probe_pairs(topology, settings.all_pairs_limit, settings.sampled_pairs);
  const double budget = settings.quick ? 0.5 : 8.0;
  // A floor per pair: with many pairs each still gets blocks long enough
  // for a median, and the run takes longer than the budget instead.
  const double shortest = settings.quick ? 0.002 : 0.01;
  const double each = std::clamp(
      budget / static_cast<double>(std::max<std::size_t>(pairs.size(), 1)), shortest, 0.3);
  std::map<Relation, std::vector<double>> by_relation;
  std::map<Relation, std::pair<int, int>> first_pair;
  for (const auto& [a, b] : pairs) {
    progress("round trip PU " + std::to_string(a) + " <-> " + std::to_string(b));
    const Relation relation = relation_of(topology, a, b);
    const double seconds = round_trip_seconds(topology, a, b, each);
    out.pairs.push_back({a, b, relation, seconds});
    by_relation[relation].push_back(seconds);
    first_pair.try_emplace(relation, a, b);
  }
  for (const auto& [relation, times] : by_relation) {
    const auto [a, b] = first_pair.at(relation);
    progress("exchange PU " + std::to_string(a) + " <-> " + std::to_string(b));
    out.by_relation.push_back({relation, static_cast<int>(times.size()), median(times),
                               exchange_seconds(topology, a, b, each)});
  }
  // Data between the first pair: what an announcement rewritten each call
  // costs beyond the flag, 512 B to 128 KiB.
  if (!pairs.empty()) {
    const auto [a, b] = pairs.front();
    progress("data between PU " + std::to_string(a) + " and " + std::to_string(b));
    const double flag = round_trip_seconds(topology, a, b, each);
    for (std::size_t bytes : {std::size_t{512}, std::size_t{8} << 10, std::size_t{128} << 10}) {
      const double trip = round_trip_with_data_seconds(topology, a, b, bytes, each);
      out.data_by_size.push_back({bytes, std::max(0.0, trip - flag)});
    }
  }
  return out;
}

// Per buffer: twice the last-level cache, so that even one thread reads
// memory rather than a cache, within bounds that keep a node's threads'
// buffers (two each) affordable; smaller when quick.
std::uint64_t memory_bytes(const Topology& topology, bool quick) {
  if (quick) return 16u << 20;
  const std::uint64_t l3 = topology.cache_bytes(Level::l3);
  return std::clamp<std::uint64_t>(2 * l3, 32u << 20, 128u << 20);
}

}  // namespace

MachineDescription probe_machine(const Topology& topology, const ProbeSettings& settings,
                                 const std::function<void(const std::string&)>& progress) {
  const auto start = Clock::now();
  MachineDescription m;
  m.host = host_name();
  m.date = utc_now();
  m.quick = settings.quick;
  m.topology = describe(topology);
  m.core_to_core = core_to_core(topology, settings, progress);
  const int nodes = std::max(topology.count(Level::numa), 1);
  const double cells = 6.0 * nodes * nodes;
  const double per_cell = std::clamp((settings.quick ? 1.0 : 20.0) / cells, 0.02, 0.5);
  m.memory = memory_bandwidth(topology, memory_bytes(topology, settings.quick), per_cell, progress);
  progress("memory copy and fold by working set");
  m.memory.one_thread_by_size = one_thread_by_size(topology, settings.quick ? 0.05 : 0.2);
  progress("fold kernel (reduce_local)");
  m.fold = fold_speeds(settings.quick ? 0.3 : 3.0);
  progress("across processes: process_vm_readv and futex wake-up");
  const int other = topology.pu_count() > 1 ? topology.pus()[1].logical_index : 0;
  m.cross_process = cross_process(topology, 0, other, settings.quick ? 0.3 : 2.0);
  m.probe_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return m;
}

}  // namespace hreduce::detail::probe
