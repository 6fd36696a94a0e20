// Relations between PUs and the pairs a probe times.
#include "src/probe/pairs.hpp"

#include <algorithm>
#include <array>
#include <random>
#include <set>
#include <string>

#include "hreduce/error.hpp"

namespace hreduce::detail::probe {
namespace {

constexpr std::array<const char*, kRelationCount> kRelationNames = {
    "same_core", "same_l2", "same_l3", "same_numa", "same_package", "across_packages"};

// A cache level that the machine lacks (-1 on both) holds no pair; a
// missing NUMA or package level is the machine itself, which holds all.
bool shared(const Pu& a, const Pu& b, Level level, bool missing_counts) {
  if (a.in(level) < 0 || b.in(level) < 0) return missing_counts && a.in(level) == b.in(level);
  return a.in(level) == b.in(level);
}

void check_pu(const Topology& topology, int pu) {
  if (pu < 0 || pu >= topology.pu_count()) {
    throw ArgumentError("probe relation_of: PU " + std::to_string(pu) + " out of range [0, " +
                        std::to_string(topology.pu_count()) + ")");
  }
}

}  // namespace

std::string_view to_string(Relation relation) {
  return kRelationNames[static_cast<std::size_t>(relation)];
}

std::optional<Relation> parse_relation(std::string_view name) {
  for (int i = 0; i < kRelationCount; ++i) {
    if (name == kRelationNames[static_cast<std::size_t>(i)]) return static_cast<Relation>(i);
  }
  return std::nullopt;
}

Relation relation_of(const Topology& topology, int a, int b) {
  check_pu(topology, a);
  check_pu(topology, b);
  const Pu& x = topology.pus()[static_cast<std::size_t>(a)];
  const Pu& y = topology.pus()[static_cast<std::size_t>(b)];
  if (shared(x, y, Level::core, false)) return Relation::same_core;
  if (shared(x, y, Level::l2, false)) return Relation::same_l2;
  if (shared(x, y, Level::l3, false)) return Relation::same_l3;
  if (shared(x, y, Level::numa, true)) return Relation::same_numa;
  if (shared(x, y, Level::package, true)) return Relation::same_package;
  return Relation::across_packages;
}

std::vector<std::pair<int, int>> probe_pairs(const Topology& topology, int all_pairs_limit,
                                             int sample) {
  const int n = topology.pu_count();
  std::set<std::pair<int, int>> chosen;
  if (n <= all_pairs_limit) {
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) chosen.emplace(a, b);
    }
    return {chosen.begin(), chosen.end()};
  }
  // One representative per relation: PU 0's nearest partner of each kind
  // first; the other PUs only find relations PU 0 has none of (irregular
  // machines).
  std::array<bool, kRelationCount> found{};
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const auto r = static_cast<std::size_t>(relation_of(topology, a, b));
      if (!found[r]) chosen.emplace(a, b), found[r] = true;
    }
    if (std::all_of(found.begin(), found.end(), [](bool f) { return f; })) break;
  }
  const long long possible = static_cast<long long>(n) * (n - 1) / 2;
  const long long wanted =
      std::min<long long>(possible, static_cast<long long>(chosen.size()) + std::max(sample, 0));
  std::mt19937 draw(20261125u);
  std::uniform_int_distribution<int> pu(0, n - 1);
  while (static_cast<long long>(chosen.size()) < wanted) {
    const int a = pu(draw), b = pu(draw);
    if (a != b) chosen.emplace(std::min(a, b), std::max(a, b));
  }
  return {chosen.begin(), chosen.end()};
}

MachineTopology describe(const Topology& topology) {
  MachineTopology out;
  out.source = topology.source();
  out.packages = topology.count(Level::package);
  out.numa_nodes = topology.count(Level::numa);
  out.l3_caches = topology.count(Level::l3);
  out.cores = topology.count(Level::core);
  out.l1_bytes = topology.cache_bytes(Level::l1);
  out.l2_bytes = topology.cache_bytes(Level::l2);
  out.l3_bytes = topology.cache_bytes(Level::l3);
  for (const Pu& pu : topology.pus()) {
    out.pus.push_back({pu.os_index, pu.in(Level::core), pu.in(Level::l2), pu.in(Level::l3),
                       pu.in(Level::numa), pu.in(Level::package)});
  }
  return out;
}

}  // namespace hreduce::detail::probe
