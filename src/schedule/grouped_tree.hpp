// The hierarchical tree over groups given as values: for each grouping
// level, outermost first, every member's container there. What
// schedules::hierarchical builds from a topology and a placement, and what
// a model of a machine that is not this one builds from group sizes
// (src/engine/local_decision.hpp).
#pragma once

#include <string>
#include <vector>

#include "hreduce/schedule.hpp"

namespace hreduce::detail {

// containers[level][member]: the index only tells groups apart. Throws
// Error when p < 1, the root is outside the team, radix < 2 or a level
// does not place every member.
Schedule grouped_tree(int p, const std::vector<std::vector<int>>& containers, int root, int radix,
                      std::string name);

// The members, root and radix checks of grouped_tree alone.
void check_grouped_tree_arguments(int p, int root, int radix);

}  // namespace hreduce::detail
