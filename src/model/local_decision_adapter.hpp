// The one place the model asks how a process's members combine a call: the
// engine's own pure decisions (src/engine/local_decision.hpp: decide_local,
// plan_tree, plan_slices), fed with the placement the model laid out. No
// threshold lives here: every number comes from the engine or from the
// call's CollectiveOptions, whose defaults are the runtime's.
#pragma once

#include <cstddef>
#include <vector>

#include "hreduce/options.hpp"
#include "hreduce/topology.hpp"
#include "src/engine/local_decision.hpp"

namespace hreduce::detail::model {

// The path a process's `members_here` members take for a call of
// `bytes_per_member`, as execute_local() decides it.
LocalDecision local_path(CollectiveKind kind, std::size_t bytes_per_member, std::size_t elem_size,
                         int members_here, int members_in_team, const CollectiveOptions& options);

// The reduction tree the engine builds for members on `pus` of `node`
// (the machine's default grouping levels, as a team takes them).
TreePlan local_tree(const Topology& node, const std::vector<int>& pus,
                    const CollectiveOptions& options);

// Each member's share of the vector on the sliced path (0 to 1, summing to 1).
std::vector<double> slice_shares(int members, std::size_t bytes_per_member, std::size_t elem_size,
                                 const CollectiveOptions& options);

}  // namespace hreduce::detail::model
