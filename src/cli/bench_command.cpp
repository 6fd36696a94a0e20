// `hreduce bench`: the main job. Until the shared-memory engine lands it
// shows the machine and the reduction trees a default team would use.
#include <iostream>

#include "commands.hpp"
#include "machine_options.hpp"

namespace hreduce::cli {

int bench_command(const std::vector<std::string>& argv) {
  const Args args("hreduce bench", argv, {}, machine_valued_options());
  const MachineChoice choice = choose_machine("hreduce bench", args);
  std::cout << choice.topology.render() << '\n';
  for (PlacementPolicy policy : {PlacementPolicy::compact, PlacementPolicy::scatter}) {
    const Placement placement = place(choice.topology, choice.placement.members(), policy);
    const Schedule tree = schedules::hierarchical(choice.topology, placement, choice.levels, 0,
                                                  choice.radix);
    tree.validate();
    std::cout << to_string(policy) << " placement of " << placement.members() << " members\n"
              << tree.describe();
  }
  return 0;
}

}  // namespace hreduce::cli
