// `hreduce probe --plot`: the description's matrices as SVG heatmaps.
#pragma once

#include <string>

#include "src/probe/machine.hpp"

namespace hreduce::detail::probe {

// One panel per matrix: the PUs' cache-line round trips (ns), memory
// bandwidth per kernel for one thread and for a node's cores (GB/s, NUMA
// node × NUMA node) and, when measured, MPI latency (µs) and bandwidth
// (GB/s) between ranks. Pairs not measured are grey.
std::string heatmaps_svg(const MachineDescription& machine);

}  // namespace hreduce::detail::probe
