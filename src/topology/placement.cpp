// place(): which PU each team member runs on.
//
// Scatter builds one order of all PUs in which neighbours are as far apart
// as the machine allows. It splits the PUs by the outermost level (package),
// orders each part the same way one level further in (NUMA node, L3, core),
// and deals the parts' lists out round-robin:
//
//   package 0: [a0 a1 a2 a3]     package 1: [b0 b1 b2 b3]
//   scatter order: a0 b0 a1 b1 a2 b2 a3 b3
//
// Because every part is itself interleaved, any prefix of the order touches
// as many packages, then NUMA nodes, then L3s, then cores as it can.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

namespace hreduce {
namespace {

// L2 and L1 are left out: on most machines they are per core, and where
// they are not, spreading across cores already spreads across them.
constexpr std::array<Level, 4> kSpreadLevels = {Level::package, Level::numa, Level::l3,
                                                Level::core};

std::vector<int> interleave(const std::vector<std::vector<int>>& parts) {
  std::vector<int> order;
  std::size_t longest = 0;
  for (const auto& part : parts) longest = std::max(longest, part.size());
  for (std::size_t round = 0; round < longest; ++round) {
    for (const auto& part : parts) {
      if (round < part.size()) order.push_back(part[round]);
    }
  }
  return order;
}

// `pus` are logical PU indices in logical order; returns them reordered.
std::vector<int> scatter(const Topology& topology, const std::vector<int>& pus, std::size_t step) {
  if (step == kSpreadLevels.size() || pus.size() <= 1) return pus;
  const Level level = kSpreadLevels[step];
  // Parts in order of first appearance; PUs outside any object of this
  // level (an irregular machine) form a part of their own.
  std::vector<int> keys;
  std::vector<std::vector<int>> parts;
  for (int pu : pus) {
    const int key = topology.pus()[pu].in(level);
    const auto found = std::find(keys.begin(), keys.end(), key);
    if (found == keys.end()) {
      keys.push_back(key);
      parts.push_back({pu});
    } else {
      parts[static_cast<std::size_t>(found - keys.begin())].push_back(pu);
    }
  }
  for (auto& part : parts) part = scatter(topology, part, step + 1);
  return interleave(parts);
}

}  // namespace

Placement place(const Topology& topology, int members, PlacementPolicy policy) {
  std::vector<int> all(static_cast<std::size_t>(topology.pu_count()));
  for (int i = 0; i < topology.pu_count(); ++i) all[static_cast<std::size_t>(i)] = i;
  return place(topology, members, policy, all);
}

Placement place(const Topology& topology, int members, PlacementPolicy policy,
                const std::vector<int>& allowed) {
  if (members < 1) {
    throw ArgumentError("place: members is " + std::to_string(members) + ", expected 1 or more");
  }
  if (allowed.empty()) throw ArgumentError("place: no PU is allowed");
  std::vector<int> order = allowed;
  if (policy == PlacementPolicy::scatter) order = scatter(topology, order, 0);

  Placement placement;
  placement.policy = policy;
  placement.pu_of_member.reserve(static_cast<std::size_t>(members));
  for (int member = 0; member < members; ++member) {
    placement.pu_of_member.push_back(order[static_cast<std::size_t>(member) % order.size()]);
  }
  return placement;
}

}  // namespace hreduce
