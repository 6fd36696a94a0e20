// `hreduce probe` without its command line: every local measurement in
// turn, within a time budget, into one machine description.
#pragma once

#include <functional>
#include <string>

#include "hreduce/topology.hpp"
#include "src/probe/machine.hpp"

namespace hreduce::detail::probe {

struct ProbeSettings {
  bool quick = false;        // a fraction of the default ~60 s, on smaller buffers
  int all_pairs_limit = 32;  // PUs up to which every pair's round trip is timed
  int sampled_pairs = 48;    // beyond it: one pair per relation plus these
};

// Runs on this machine (`topology` from Topology::discover()); `progress`
// hears each step. The MPI part is not here (mpi_point_to_point.hpp).
MachineDescription probe_machine(const Topology& topology, const ProbeSettings& settings,
                                 const std::function<void(const std::string&)>& progress);

}  // namespace hreduce::detail::probe
