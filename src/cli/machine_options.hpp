// Options shared by the commands that look at a machine: which topology,
// how many members, which placement and which levels.
#pragma once

#include <string>
#include <vector>

#include "args.hpp"
#include "hreduce/schedule.hpp"
#include "hreduce/topology.hpp"
#include "src/topology/names.hpp"

namespace hreduce::cli {

inline const std::set<std::string>& machine_valued_options() {
  static const std::set<std::string> names = {"--synthetic", "--xml",    "--members",
                                              "--placement", "--levels", "--radix"};
  return names;
}

struct MachineChoice {
  Topology topology;
  Placement placement;
  std::vector<Level> levels;
  int radix;
};

// Defaults: this machine, one member per core, compact, default_levels().
inline MachineChoice choose_machine(const std::string& command, const Args& args) {
  if (args.has("--synthetic") && args.has("--xml")) {
    throw ArgumentError(command + ": give --synthetic or --xml, not both");
  }
  Topology topology = args.has("--synthetic") ? Topology::synthetic(*args.get("--synthetic"))
                      : args.has("--xml")     ? Topology::from_xml(*args.get("--xml"))
                                              : Topology::discover();
  const int cores =
      topology.count(Level::core) > 0 ? topology.count(Level::core) : topology.pu_count();
  const int members = args.get_int("--members", cores, 1);
  PlacementPolicy policy = PlacementPolicy::compact;
  if (auto name = args.get("--placement")) {
    auto parsed = parse_placement(*name);
    if (!parsed) {
      throw ArgumentError(command + ": --placement wants " +
                          detail::enum_names_text(detail::kPlacementNames) + ", got '" + *name +
                          "'");
    }
    policy = *parsed;
  }
  std::vector<Level> levels = args.has("--levels") ? parse_levels(*args.get("--levels"))
                                                   : schedules::default_levels(topology);
  const int radix = args.get_int("--radix", 2, 2);
  Placement placement = place(topology, members, policy);
  return {std::move(topology), std::move(placement), std::move(levels), radix};
}

}  // namespace hreduce::cli
