// Topology-shaped tree. Members are grouped by the machine objects that hold
// them, level by level (outermost first in `levels`); the tree is built from
// the innermost level outwards, one stage per level:
//
//   levels = {numa, core}, 2 NUMA nodes × 2 cores × 2 PUs, compact:
//
//   stage core  (steps 1)    1→0  3→2  5→4  7→6     PUs of one core
//   stage numa  (steps 2)    2→0  6→4               cores of one NUMA node
//   stage top   (steps 3)    4→0                    NUMA nodes
//
// Inside a group the members reduce to the group's leader along a k-nomial
// tree over the group in rank order (leader first). The leader is the root
// if the group holds it, else the lowest rank. Stages use disjoint step
// ranges, so steps increase along every path. Traffic across a level's
// boundary happens once per group, at that level's stage.
#include <algorithm>
#include <map>

#include "src/schedule/grouped_tree.hpp"
#include "tree_building.hpp"

namespace hreduce::schedules {
namespace {

// One stage: reduces every group to its leader; returns the leaders and the
// number of steps the stage used.
std::pair<std::vector<int>, int> reduce_groups(
    const std::map<std::vector<int>, std::vector<int>>& groups, int root, int radix,
    int step_offset, std::vector<Transfer>& out) {
  std::vector<int> leaders;
  int stage_steps = 0;
  for (const auto& [key, members] : groups) {  // members are in rank order
    auto leader_at = std::find(members.begin(), members.end(), root);
    if (leader_at == members.end()) leader_at = members.begin();
    std::vector<int> ordered(leader_at, members.end());  // leader first, then the rest
    ordered.insert(ordered.end(), members.begin(), leader_at);
    for (const Transfer& t : detail::knomial_transfers(static_cast<int>(ordered.size()), radix)) {
      out.push_back({ordered[t.sender], step_offset + t.step, ordered[t.receiver]});
      stage_steps = std::max(stage_steps, t.step);
    }
    leaders.push_back(ordered.front());
  }
  std::sort(leaders.begin(), leaders.end());
  return {leaders, stage_steps};
}

std::string hierarchical_name(const std::vector<Level>& levels) {
  std::string name = "hierarchical(";
  for (std::size_t i = 0; i < levels.size(); ++i) {
    name += (i ? "," : "") + std::string(to_string(levels[i]));
  }
  return name + ")";
}

}  // namespace

Schedule hierarchical(const Topology& topology, const Placement& placement,
                      const std::vector<Level>& levels, int root, int radix) {
  const int p = placement.members();
  detail::check_grouped_tree_arguments(p, root, radix);
  for (int m = 0; m < p; ++m) {
    const int pu = placement.pu_of_member[m];
    if (pu < 0 || pu >= topology.pu_count()) {
      throw ArgumentError("schedules::hierarchical: member " + std::to_string(m) +
                          " is placed on PU " + std::to_string(pu) +
                          " but the topology has PUs 0.." +
                          std::to_string(topology.pu_count() - 1));
    }
  }
  std::vector<std::vector<int>> containers;
  for (Level level : levels) {
    std::vector<int>& of_level = containers.emplace_back(p);
    for (int m = 0; m < p; ++m) of_level[m] = topology.pus()[placement.pu_of_member[m]].in(level);
  }
  return detail::grouped_tree(p, containers, root, radix, hierarchical_name(levels));
}

std::vector<Level> default_levels(const Topology& topology) {
  std::vector<Level> levels;
  int outer_count = 1;
  for (Level level : {Level::package, Level::numa, Level::l3, Level::l2, Level::core}) {
    const int count = topology.count(level);
    if (count > outer_count && count < topology.pu_count()) {
      levels.push_back(level);
      outer_count = count;
    }
  }
  return levels;
}

}  // namespace hreduce::schedules

namespace hreduce::detail {

void check_grouped_tree_arguments(int p, int root, int radix) {
  check_tree_arguments("hierarchical", p, root);
  if (radix < 2) {
    throw ArgumentError("schedules::hierarchical: radix must be >= 2, got " +
                        std::to_string(radix));
  }
}

Schedule grouped_tree(int p, const std::vector<std::vector<int>>& containers, int root, int radix,
                      std::string name) {
  check_grouped_tree_arguments(p, root, radix);
  for (std::size_t level = 0; level < containers.size(); ++level) {
    if (containers[level].size() != static_cast<std::size_t>(p)) {
      throw ArgumentError("schedules::hierarchical: level " + std::to_string(level) + " places " +
                          std::to_string(containers[level].size()) + " members of " +
                          std::to_string(p));
    }
  }
  auto container_key = [&](int member, std::size_t depth) {
    std::vector<int> key;
    for (std::size_t i = 0; i < depth; ++i) key.push_back(containers[i][member]);
    return key;
  };
  std::vector<Transfer> transfers;
  std::vector<int> participants(p);
  for (int m = 0; m < p; ++m) participants[m] = m;
  int step_offset = 0;
  // Innermost level first; depth 0 is the last stage joining everything.
  for (std::size_t depth = containers.size() + 1; depth-- > 0;) {
    std::map<std::vector<int>, std::vector<int>> groups;
    for (int m : participants) groups[container_key(m, depth)].push_back(m);
    auto [leaders, stage_steps] =
        schedules::reduce_groups(groups, root, radix, step_offset, transfers);
    participants = std::move(leaders);
    step_offset += stage_steps;
  }
  return Schedule(p, root, std::move(transfers), std::move(name));
}

}  // namespace hreduce::detail
