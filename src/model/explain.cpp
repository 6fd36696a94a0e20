#include "src/model/explain.hpp"

#include <optional>

#include "src/model/local_decision_adapter.hpp"

namespace hreduce::detail::model {
namespace {

bool is(const CallCase& call, const char* collective) { return call.collective == collective; }

}  // namespace

std::vector<Candidate> explain_candidates(const MachinePrices& prices, const Topology& node,
                                          const Layout& layout, const CallCase& call,
                                          const ModelSettings& settings) {
  std::vector<Candidate> out;
  auto add = [&](const char* level, const std::string& what, const ModelSettings& s, bool chosen) {
    out.push_back({level, what, predict_hreduce(prices, node, layout, call, s).seconds, chosen});
  };
  const ModelSettings chosen = settings;
  if (layout.threads > 1) {
    add("inside a process", "the runtime's path", chosen, true);
    for (Algorithm a : {Algorithm::tree, Algorithm::sliced}) {
      ModelSettings s = chosen;
      s.options.algorithm = a;
      add("inside a process", a == Algorithm::tree ? "tree" : "sliced", s, false);
    }
    // The mailbox, where tree_min_members closes it (bench --tree-min-members).
    const std::optional<Collective> collective = parse_collective(call.collective);
    if (collective && layout.threads >= chosen.options.tree_min_members) {
      ModelSettings s = chosen;
      s.options.tree_min_members = layout.threads + 1;
      const LocalDecision d =
          local_path(kind_of(*collective), call.bytes_per_member, element_bytes(call.type),
                     layout.threads, layout.threads * layout.processes, s.options);
      if (d.path == LocalPath::mailbox) add("inside a process", "mailbox", s, false);
    }
  }
  if (layout.processes > 1 && settings.node_shared_memory) {
    add("node level", "the runtime's way", chosen, true);
    // HREDUCE_NODE_SINGLE_COPY=off, =on and =auto, other than the chosen.
    ModelSettings s = chosen;
    if (chosen.single_copy) {
      s.single_copy = false;
      add("node level", "single copy off", s, false);
    }
    for (const bool race : {false, true}) {
      if (layout.processes != 2 || (chosen.single_copy && chosen.single_copy_race == race)) {
        continue;
      }
      s.single_copy = true;
      s.single_copy_race = race;
      add("node level", race ? "single copy auto (raced)" : "single copy on", s, false);
    }
    // Where the measure picks between the size's way and the single copy:
    // each alone, as the runtime times them.
    if (const std::optional<NodeWay> from =
            predict_hreduce(prices, node, layout, call, chosen).measured_from) {
      const NodeWay other = *from == NodeWay::single_copy ? NodeWay::chunks : NodeWay::single_copy;
      for (const NodeWay way : {*from, other}) {
        ModelSettings alone = chosen;
        alone.measured_node_way = way;
        add("node level", std::string(to_string(way)) + " alone", alone, false);
      }
    }
  }
  const bool messages = layout.nodes > 1 || (layout.processes > 1 && !settings.node_shared_memory);
  if (messages && (is(call, "allreduce") || is(call, "reduce_scatter_block"))) {
    add("between processes", "the runtime's algorithm", chosen, true);
    const bool allreduce = is(call, "allreduce");
    const std::vector<InterAlgorithm> others =
        allreduce ? std::vector<InterAlgorithm>{InterAlgorithm::recursive_doubling,
                                                InterAlgorithm::rabenseifner, InterAlgorithm::ring}
                  : std::vector<InterAlgorithm>{InterAlgorithm::pairwise,
                                                InterAlgorithm::reduce_then_scatter};
    for (InterAlgorithm a : others) {
      ModelSettings s = chosen;
      (allreduce ? s.inter_allreduce : s.inter_reduce_scatter) = a;
      add("between processes", std::string(to_string(a)), s, false);
    }
  }
  return out;
}

}  // namespace hreduce::detail::model
