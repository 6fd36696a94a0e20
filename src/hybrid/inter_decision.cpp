// The leaders' algorithm for each regime (by_messages.cpp, node_level.cpp):
//
//   collective       messages only                  node level, several nodes
//   allreduce        cheapest over processes,       cheapest over nodes
//                    or nodes when grouped by node
//   reduce_scatter   pairwise (commutative) or      an allreduce over nodes
//                    reduce_then_scatter
//   reduce           binomial over processes        binomial over nodes
//   scan, exscan     hypercube over processes       hypercube over nodes
//
// The node level on one node sends no message. Forced algorithms fall back
// as the executor does: ring needs a commutative op, pairwise too, and an
// allreduce only runs recursive doubling, Rabenseifner or ring.
#include "src/hybrid/inter_decision.hpp"

#include <string>

namespace hreduce::detail {
namespace {

bool is_allreduce_algorithm(InterAlgorithm a) {
  return a == InterAlgorithm::recursive_doubling || a == InterAlgorithm::rabenseifner ||
         a == InterAlgorithm::ring;
}

// What the allreduce exchange runs for `forced` (automatic: the model's).
InterAlgorithm allreduce_algorithm(InterAlgorithm forced, int participants, std::size_t bytes,
                                   bool commutative, const CostModel& cost) {
  if (forced == InterAlgorithm::automatic) {
    return cheapest_allreduce(participants, bytes, commutative, cost);
  }
  if (!is_allreduce_algorithm(forced) || (forced == InterAlgorithm::ring && !commutative)) {
    return InterAlgorithm::recursive_doubling;
  }
  return forced;
}

InterAlgorithm reduce_scatter_algorithm(InterAlgorithm forced, bool commutative) {
  const bool wants_pairwise =
      forced == InterAlgorithm::automatic || forced == InterAlgorithm::pairwise;
  return wants_pairwise && commutative ? InterAlgorithm::pairwise
                                       : InterAlgorithm::reduce_then_scatter;
}

bool is_scan(CollectiveKind kind) {
  return kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
}

bool is_reduce_scatter(CollectiveKind kind) {
  return kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::reduce_scatter_block;
}

int participants_of(CollectiveKind kind, const InterShape& shape) {
  if (shape.node_level) return shape.nodes;
  if (shape.grouped_by_node && kind == CollectiveKind::allreduce) return shape.nodes;
  return shape.processes;
}

}  // namespace

InterDecision decide_between_processes(CollectiveKind kind, std::size_t bytes, bool commutative,
                                       const InterShape& shape, const InterOverrides& overrides) {
  InterDecision d;
  d.participants = participants_of(kind, shape);
  if (kind == CollectiveKind::allreduce || (is_reduce_scatter(kind) && shape.node_level)) {
    d.algorithm = allreduce_algorithm(overrides.allreduce, d.participants, bytes, commutative,
                                      overrides.cost);
  } else if (is_reduce_scatter(kind)) {
    d.algorithm = reduce_scatter_algorithm(overrides.reduce_scatter, commutative);
  } else if (is_scan(kind)) {
    d.algorithm = InterAlgorithm::hypercube;
  } else {
    d.algorithm = InterAlgorithm::binomial;
  }
  return d;
}

bool pipelines_allreduce(std::size_t bytes, std::size_t pipeline_min_bytes,
                         std::size_t pipeline_chunk_bytes, bool some_process_has_helpers) {
  return pipeline_min_bytes > 0 && pipeline_chunk_bytes > 0 && some_process_has_helpers &&
         bytes >= pipeline_min_bytes;
}

Choice explain_between_processes(CollectiveKind kind, std::size_t bytes, bool commutative,
                                 const InterShape& shape, const InterOverrides& overrides) {
  const InterDecision d = decide_between_processes(kind, bytes, commutative, shape, overrides);
  const int P = d.participants;
  Choice model;
  InterAlgorithm forced = InterAlgorithm::automatic;
  if (kind == CollectiveKind::allreduce || (is_reduce_scatter(kind) && shape.node_level)) {
    model = choose_allreduce(P, bytes, commutative, overrides.cost);
    forced = overrides.allreduce;
    if (kind != CollectiveKind::allreduce) {
      model.why = "an allreduce of the whole vector between the node leaders: " + model.why;
    }
  } else if (is_reduce_scatter(kind)) {
    model = choose_reduce_scatter(P, bytes, commutative, overrides.cost);
    forced = overrides.reduce_scatter;
  } else if (is_scan(kind)) {
    model = choose_scan(P, bytes, commutative, overrides.cost);
  } else {
    model = choose_reduce(P, bytes, commutative, overrides.cost);
  }
  Choice choice{d.algorithm, model.why};
  if (forced != InterAlgorithm::automatic) {
    choice.why = "forced to " + std::string(to_string(forced)) + " by the team's options, runs " +
                 std::string(to_string(d.algorithm)) + " (the model said: " + model.why + ")";
  }
  return choice;
}

}  // namespace hreduce::detail
