#include "src/model/local_decision_adapter.hpp"

#include "src/engine/collectives.hpp"

namespace hreduce::detail::model {

const char* to_string(LocalPath path) {
  switch (path) {
    case LocalPath::mailbox: return "mailbox";
    case LocalPath::tree: return "tree";
    case LocalPath::sliced: return "sliced";
  }
  return "?";
}

LocalDecision decide_local(const LocalFacts& facts) {
  Call call;
  call.kind = facts.kind;
  call.count = facts.bytes_per_member / facts.element_bytes;
  call.op.elem_size = facts.element_bytes;
  call.op.may_throw = facts.may_throw;
  call.options = &facts.options;
  if (wants_tree(call, facts.members)) {
    return {LocalPath::tree,
            "tree: reduce/allreduce of at most tree_max_bytes over at least "
            "tree_min_members members"};
  }
  // wants_mailbox() asks the same of a TeamState, which needs a running
  // team; its conditions on the call and the team's size are these.
  const bool mailbox_kind =
      facts.kind != CollectiveKind::reduce_scatter && facts.kind != CollectiveKind::barrier;
  if (mailbox_kind && !facts.team_spans_processes && !facts.may_throw &&
      facts.bytes_per_member > 0 && facts.bytes_per_member <= kMailboxBytes &&
      facts.options.algorithm == Algorithm::automatic &&
      facts.members < facts.options.tree_min_members) {
    return {LocalPath::mailbox, "mailbox: a short vector on a small team, one synchronisation"};
  }
  return {LocalPath::sliced, "sliced: every byte read and written once"};
}

Schedule plan_tree(const Topology& topology, const std::vector<int>& pus,
                   const CollectiveOptions& options) {
  Placement placement;
  placement.pu_of_member = pus;
  return schedules::hierarchical(topology, placement, schedules::default_levels(topology), 0,
                                 options.radix);
}

}  // namespace hreduce::detail::model
