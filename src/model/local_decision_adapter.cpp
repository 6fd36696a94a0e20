#include "src/model/local_decision_adapter.hpp"

#include "hreduce/schedule.hpp"

namespace hreduce::detail::model {

LocalDecision local_path(CollectiveKind kind, std::size_t bytes_per_member, std::size_t elem_size,
                         int members_here, int members_in_team, const CollectiveOptions& options) {
  LocalFacts facts;
  facts.kind = kind;
  facts.bytes_per_member = bytes_per_member;
  facts.elem_size = elem_size;
  facts.op_may_throw = false;  // the bench's ops are predefined
  facts.members_here = members_here;
  facts.members_in_team = members_in_team;
  facts.spans_processes = members_in_team > members_here;
  facts.options = options;
  return decide_local(facts);
}

TreePlan local_tree(const Topology& node, const std::vector<int>& pus,
                    const CollectiveOptions& options) {
  TreeFacts facts;
  facts.members = static_cast<int>(pus.size());
  facts.options = options;
  facts.levels = schedules::default_levels(node);
  Placement placement;
  placement.pu_of_member = pus;
  facts.containers = tree_containers(node, placement, facts.levels);
  return plan_tree(facts);
}

std::vector<double> slice_shares(int members, std::size_t bytes_per_member, std::size_t elem_size,
                                 const CollectiveOptions& options) {
  const std::size_t count = std::max<std::size_t>(1, bytes_per_member / elem_size);
  const SlicePlan plan = plan_slices(members, count, elem_size, options);
  std::vector<double> shares;
  for (const Slice& s : plan.slices) {
    shares.push_back(static_cast<double>(s.size()) / static_cast<double>(count));
  }
  return shares;
}

}  // namespace hreduce::detail::model
