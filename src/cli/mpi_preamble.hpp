// `hreduce bench --mpi`'s preamble.
#pragma once

#include <cstddef>
#include <vector>

#include "hreduce/team.hpp"
#include "src/compare/problem.hpp"

namespace hreduce::cli {

// Prints team.explain() of each collective at `bytes` per member: what
// every collective shares (the node level, its segment, the processes)
// once, then for each collective only what differs ("as above" when
// nothing does). Clauses are explain()'s pieces between "; ".
void print_explanations(Team& team, const std::vector<detail::compare::Collective>& collectives,
                        std::size_t bytes);

}  // namespace hreduce::cli
