// `hreduce topo`: the machine tree, where T members land, and the
// hierarchical reduction tree that placement yields.
#include <iostream>
#include <sstream>

#include <vector>

#include "commands.hpp"
#include "hreduce/mpi.hpp"
#include "hreduce/team.hpp"
#include "machine_options.hpp"
#include "src/cli/mpi_session.hpp"

namespace hreduce::cli {
namespace {

std::string levels_text(const std::vector<Level>& levels) {
  std::string text;
  for (Level level : levels) text += (text.empty() ? "" : ",") + std::string(to_string(level));
  return text.empty() ? "(none)" : text;
}

void print_placement(const MachineChoice& choice, std::ostream& out) {
  out << "Placement (" << to_string(choice.placement.policy) << ", " << choice.placement.members()
      << " members):\n";
  for (int m = 0; m < choice.placement.members(); ++m) {
    const Pu& pu = choice.topology.pus()[choice.placement.pu_of_member[m]];
    out << "  member " << m << " -> PU L#" << pu.logical_index << " (P#" << pu.os_index << ")";
    for (Level level : {Level::package, Level::numa, Level::core}) {
      if (pu.in(level) >= 0) out << ' ' << to_string(level) << ' ' << pu.in(level);
    }
    out << '\n';
  }
}

// DOT of the reduction tree, members clustered by their outermost level.
std::string tree_dot(const MachineChoice& choice, const Schedule& tree) {
  std::ostringstream out;
  out << "digraph \"" << tree.name() << "\" {\n  rankdir=BT;\n";
  const Level outer = choice.levels.empty() ? Level::machine : choice.levels.front();
  std::map<int, std::vector<int>> clusters;
  for (int m = 0; m < tree.size(); ++m) {
    clusters[choice.topology.pus()[choice.placement.pu_of_member[m]].in(outer)].push_back(m);
  }
  for (const auto& [object, members] : clusters) {
    out << "  subgraph cluster_" << (object < 0 ? 0 : object) << " {\n    label=\""
        << to_string(outer) << ' ' << object << "\";\n";
    for (int m : members) {
      const Pu& pu = choice.topology.pus()[choice.placement.pu_of_member[m]];
      out << "    m" << m << " [label=\"" << m << "\\nPU " << pu.logical_index << "\""
          << (m == tree.root() ? ", shape=doublecircle" : "") << "];\n";
    }
    out << "  }\n";
  }
  for (const Transfer& t : tree.transfers()) {
    out << "  m" << t.sender << " -> m" << t.receiver << " [label=\"" << t.step << "\"];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace

// Under mpirun: the processes of the first process's node, each with its
// members' PUs and its binding, and where the node segment's pages sit.
int topo_mpi(const Args& args, const MachineChoice& choice) {
  const MpiSession mpi(true);
  TeamOptions options;
  options.members = args.has("--members") ? choice.placement.members() : 1;
  options.placement = choice.placement.policy;
  options.topology = choice.topology;
  Team team = make_mpi_team(MPI_COMM_WORLD, options.members, options, mpi_team_options(args));
  // One allreduce through the staging chunks gives their pages a place. Two
  // processes would take the single copy instead, which never touches them,
  // but it serves only ops that cannot throw: this one may, as far as the
  // node level knows.
  const std::size_t n = std::size_t{1} << 16;
  std::vector<std::vector<double>> in(team.local_size(), std::vector<double>(n, 1.0)), out = in;
  const auto add = make_op<double>([](double a, double b) { return a + b; }).named("add");
  team.run([&](Member& m) {
    const int i = m.rank() - team.member(0).rank();
    m.allreduce(in[i].data(), out[i].data(), n, add);
  });
  if (mpi.rank != 0) return 0;
  std::cout << choice.topology.render() << '\n'
            << "Team over MPI_COMM_WORLD: " << team.size() << " members in " << team.processes()
            << " processes\n"
            << team.explain(Collective::allreduce, n * sizeof(double)) << '\n';
  return 0;
}

int topo_command(const std::vector<std::string>& argv) {
  std::set<std::string> valued = machine_valued_options();
  valued.insert("--node-chunk-bytes");
  const Args args("hreduce topo", argv, {"--dot", "--mpi", "--no-shared-memory"}, valued);
  const MachineChoice choice = choose_machine("hreduce topo", args);
  if (args.has("--mpi")) return topo_mpi(args, choice);
  const Schedule tree =
      schedules::hierarchical(choice.topology, choice.placement, choice.levels, 0, choice.radix);
  tree.validate();
  if (args.has("--dot")) {
    std::cout << tree_dot(choice, tree);
    return 0;
  }
  std::cout << choice.topology.render() << '\n';
  print_placement(choice, std::cout);
  std::cout << "\nLevels: " << levels_text(choice.levels) << ", radix " << choice.radix
            << "; rank-ordered (non-commutative ops): "
            << (tree.is_valid(false) ? "yes" : "no, a rank-order tree is used instead") << "\n"
            << tree.describe();
  return 0;
}

}  // namespace hreduce::cli
