// Collectives of a team spanning several processes. Each is three steps:
//
//   1. local    the process's members combine through shared memory, the
//               partial result landing with the process's member 0 (its
//               leader) — the engine's own reduce or scan;
//   2. leaders  the leaders check that all processes called the same thing
//               (a small status allreduce), then run the inter-process
//               algorithm the cost model picked, over point-to-point
//               messages (src/inter/*.cpp);
//   3. local    every member takes its part of the leader's result (a copy,
//               or for scan a combine with the prefix of lower processes),
//               and learns whether anything failed anywhere.
//
//            process 0                 process 1
//   step 1   t0 t1 t2 ─► leader0       t0 t1 ─► leader1        shared memory
//   step 2        leader0  ◄═══ MPI ═══►  leader1              point to point
//   step 3   leader0 ─► t0 t1 t2       leader1 ─► t0 t1        shared memory
//
// Rank order holds because a process's members are consecutive team ranks
// (process rank, then thread index) and every inter-process algorithm keeps
// lower processes on the left. Failures never leave a process waiting: an
// error in step 1 or an op that throws in step 2 travels in the status
// words (agreement.cpp), the leaders finish their message pattern
// regardless (the op is wrapped so it stops combining instead of
// throwing), and step 3 rethrows the same failure on every member of every
// process.
//
// Three regimes run these steps, one file each: by_messages.cpp (processes
// exchange messages only), node_level.cpp (processes of a node meet in
// their shared segment, only the nodes' first processes send messages)
// and left_fold.cpp. Reproducibility shape_independent wants the left fold
// in team rank order, which combining per-process partials breaks (2 × 2
// members give (x0 ∘ x1) ∘ (x2 ∘ x3)); such calls take a chain over the
// processes instead, with or without the node level.
#include "src/hybrid/hybrid_call.hpp"

namespace hreduce::detail {

void HybridCall::run() {
  if (wants_left_fold()) {
    check_arguments();
    run(kLeftFold);
    return;
  }
  if (group_.node() != nullptr && alone_on_one_node()) return;
  check_arguments();
  run(group_.node() != nullptr ? kNodeLevel : kByMessages);
}

void HybridCall::run(const Regime& regime) {
  void (HybridCall::*collective)() = nullptr;
  switch (call_.kind) {
    case CollectiveKind::allreduce: collective = regime.allreduce; break;
    case CollectiveKind::reduce: collective = regime.reduce; break;
    case CollectiveKind::scan:
    case CollectiveKind::exscan: collective = regime.scan; break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block: collective = regime.reduce_scatter; break;
    case CollectiveKind::barrier: collective = regime.barrier; break;
    default: break;
  }
  if (collective == nullptr) throw Error("hybrid: internal step called directly");
  (this->*collective)();
}

void InterProcessGroup::execute(MemberState& me, const Call& call) {
  try {
    HybridCall(*this, me, call).run();
  } catch (const UnusableTeamError& e) {
    // Whatever told this process (its own wait, its node, its leader or
    // another node's, relayed as a failure), the team broke here too:
    // usable() says so from now on, on every process and whatever its role.
    me.team.break_team(Failure::of(ErrorKind::unusable, e.what()));
    throw;
  }
}

}  // namespace hreduce::detail
