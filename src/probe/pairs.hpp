// Which PU pairs `hreduce probe` times, and how each pair shares the machine.
// Pure functions of a Topology, so that synthetic machines test them.
#pragma once

#include <utility>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/probe/machine.hpp"

namespace hreduce::detail::probe {

// The innermost level that holds both PUs (logical indices). Caches count
// only where the machine has them; a machine without packages or NUMA
// nodes is one of each. Throws Error naming a PU out of range.
Relation relation_of(const Topology& topology, int a, int b);

// Every pair (a < b) when the machine has at most `all_pairs_limit` PUs;
// otherwise the first pair of each relation the machine has (seen from PU
// 0, then from the others) plus `sample` further distinct pairs drawn with
// a fixed seed, so two probes of one machine time the same pairs. Sorted.
std::vector<std::pair<int, int>> probe_pairs(const Topology& topology, int all_pairs_limit,
                                             int sample);

// The topology part of the machine description.
MachineTopology describe(const Topology& topology);

}  // namespace hreduce::detail::probe
