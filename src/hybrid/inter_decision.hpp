// Which algorithm the leaders run between processes for one call, as a pure
// function of the call (collective, bytes, commutativity), the team's shape
// and its options: callable without a team or a running call. A running
// call asks for the algorithm alone (no allocation); explain() and a model
// of the machine ask for the reasons too, from the same function, so the
// reason given is always for the choice made.
#pragma once

#include <cstddef>

#include "hreduce/team.hpp"  // CollectiveKind
#include "src/inter/inter.hpp"

namespace hreduce::detail {

// What decides where the leaders' messages go.
struct InterShape {
  int processes = 1;
  int nodes = 1;
  // Processes of one node combine through a shared segment (src/node/): the
  // messages, if any, run between the nodes' first processes.
  bool node_level = false;
  // No shared segment, but an allreduce reduces inside each node first
  // (InterOptions::by_node), so its exchange runs between node leaders.
  bool grouped_by_node = false;
};

// The overrides the decision honours (InterOptions' fields of that name).
struct InterOverrides {
  CostModel cost;
  InterAlgorithm allreduce = InterAlgorithm::automatic;
  InterAlgorithm reduce_scatter = InterAlgorithm::automatic;
};

struct InterDecision {
  // How many parties the algorithm runs over (processes, or node leaders);
  // 1 means the call sends no message between processes.
  int participants = 1;
  // What runs when participants > 1; for reduce_scatter across several
  // nodes with the node level, the allreduce between node leaders.
  InterAlgorithm algorithm = InterAlgorithm::automatic;
};

// `bytes`: what one participant contributes (reduce_scatter: the whole
// vector). Barrier and the engine's internal steps take binomial.
InterDecision decide_between_processes(CollectiveKind kind, std::size_t bytes, bool commutative,
                                       const InterShape& shape, const InterOverrides& overrides);

// Whether an allreduce of `bytes` per member overlaps the three steps chunk
// by chunk (pipeline.cpp): only where some process has helpers (members
// besides its leader) to reduce later chunks while the leader exchanges
// earlier ones; lone members have nothing to overlap.
bool pipelines_allreduce(std::size_t bytes, std::size_t pipeline_min_bytes,
                         std::size_t pipeline_chunk_bytes, bool some_process_has_helpers);

// The same decision with the cost model's reasoning (allocates).
Choice explain_between_processes(CollectiveKind kind, std::size_t bytes, bool commutative,
                                 const InterShape& shape, const InterOverrides& overrides);

}  // namespace hreduce::detail
