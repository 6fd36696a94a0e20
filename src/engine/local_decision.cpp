// The words and plans of local_decision.hpp; the thresholds themselves are
// in the header, where the hot path reads them.
#include "src/engine/local_decision.hpp"

#include <string>

#include "hreduce/error.hpp"
#include "src/schedule/grouped_tree.hpp"

namespace hreduce::detail {
namespace {

std::string bytes_text(std::size_t bytes) { return std::to_string(bytes) + " bytes per member"; }

std::string members_text(int members) { return std::to_string(members) + " members"; }

std::string reason_text(const LocalFacts& f, LocalReason why) {
  const CollectiveOptions& o = f.options;
  const std::string min_members = "tree_min_members " + std::to_string(o.tree_min_members);
  const std::string mailbox = "the " + std::to_string(kMailboxBytes) + "-byte mailbox";
  switch (why) {
    case LocalReason::asked_tree: return "options.algorithm is tree";
    case LocalReason::asked_sliced: return "options.algorithm is sliced";
    case LocalReason::tree_for_reductions:
      return "options.algorithm tree applies to reduce and allreduce only";
    case LocalReason::many_members_short:
      return members_text(f.members_here) + ", at least " + min_members + ", and " +
             bytes_text(f.bytes_per_member) + ", at most tree_max_bytes " +
             std::to_string(o.tree_max_bytes);
    case LocalReason::fits_mailbox:
      return bytes_text(f.bytes_per_member) + " fit " + mailbox + ", and " +
             members_text(f.members_here) + " are fewer than " + min_members;
    case LocalReason::rank_order_level:
      return "reproducibility " + std::string(hreduce::to_string(o.reproducibility)) +
             " asks for the fold in rank order, whatever the machine's shape";
    case LocalReason::longer_than_tree_max:
      return bytes_text(f.bytes_per_member) + ", above tree_max_bytes " +
             std::to_string(o.tree_max_bytes);
    case LocalReason::no_mailbox_for_kind:
      return std::string(to_string(f.kind)) + " has only the sliced path";
    case LocalReason::spans_processes: return "a team spanning processes does not go by mailbox";
    case LocalReason::too_many_for_mailbox:
      return members_text(f.members_here) + ", at least " + min_members +
             ", are too many for each to fold every copy";
    case LocalReason::nothing_to_move: return "0 bytes: the call only synchronises";
    case LocalReason::longer_than_mailbox:
      return bytes_text(f.bytes_per_member) + ", above " + mailbox;
    case LocalReason::op_may_throw:
      return "a user op may throw, and a member that returned early would not learn of it";
  }
  return {};
}

std::string levels_text(const std::vector<Level>& levels) {
  std::string text;
  for (Level level : levels) text += (text.empty() ? "" : ",") + std::string(to_string(level));
  return text;
}

Schedule shaped_schedule(const TreeFacts& f) {
  const int p = f.members;
  switch (f.options.tree) {
    case TreeShape::hierarchical:
      return grouped_tree(p, f.containers, f.root, f.options.radix,
                          "hierarchical(" + levels_text(f.levels) + ")");
    case TreeShape::binomial: return schedules::binomial(p, f.root);
    case TreeShape::knomial: return schedules::knomial(p, f.options.radix, f.root);
    case TreeShape::binary: return schedules::binary(p, f.root);
    case TreeShape::flat: return schedules::flat(p, f.root);
    case TreeShape::chain: return schedules::chain(p, f.root);
  }
  throw ArgumentError("tree: unknown tree shape");
}

std::string tree_reason(const TreePlan& plan) {
  std::string text = plan.schedule.name().empty() ? std::string(to_string(plan.shape))
                                                  : plan.schedule.name();
  if (plan.shape == TreeShape::hierarchical || plan.shape == TreeShape::knomial) {
    text += ", radix " + std::to_string(plan.radix);
  }
  text += ", " + std::to_string(plan.depth()) + " rounds";
  if (plan.binomial_for_order) {
    text += " (a non-commutative op needs subtrees of consecutive ranks: binomial from member 0";
    text += plan.forwarded_to_root ? ", the result forwarded to the root)" : ")";
  }
  return text;
}

}  // namespace

std::string_view to_string(LocalPath path) {
  switch (path) {
    case LocalPath::mailbox: return "mailbox";
    case LocalPath::tree: return "tree";
    case LocalPath::sliced: return "sliced";
  }
  return "unknown";
}

LocalDecision decide_local(const LocalFacts& facts) {
  const LocalChoice choice = local_choice(facts);
  return {choice.path, choice.why, reason_text(facts, choice.why)};
}

std::vector<std::vector<int>> compact_containers(int members,
                                                 const std::vector<int>& members_per_group) {
  std::vector<std::vector<int>> containers;
  for (int group : members_per_group) {
    if (group < 1) {
      throw ArgumentError("compact_containers: a group of " + std::to_string(group) +
                          " members (at least 1)");
    }
    std::vector<int>& level = containers.emplace_back(std::max(members, 0));
    for (int m = 0; m < members; ++m) level[m] = m / group;
  }
  return containers;
}

TreePlan plan_tree(const TreeFacts& facts) {
  TreePlan plan;
  plan.shape = facts.options.tree;
  plan.radix = facts.options.radix;
  plan.members = facts.members;
  Schedule schedule = shaped_schedule(facts);
  // A non-commutative op needs rank-contiguous subtrees; where the asked
  // tree has none (a scatter placement, a rotated root), a binomial tree
  // rooted at 0 always has.
  if (!facts.commutative && !schedule.is_valid(false)) {
    schedule = schedules::binomial(facts.members, 0);
    plan.binomial_for_order = true;
    plan.forwarded_to_root = facts.root != 0;
  }
  schedule.validate(facts.commutative);
  plan.tree_root = schedule.root();
  plan.rounds.resize(schedule.steps());
  for (const Transfer& t : schedule.transfers()) plan.rounds[t.step - 1].push_back(t);
  plan.schedule = std::move(schedule);
  plan.reason = tree_reason(plan);
  return plan;
}

SlicePlan plan_slices(int members, std::size_t count, std::size_t elem_size,
                      const CollectiveOptions& options) {
  SlicePlan plan;
  plan.granule = slice_granule(elem_size);
  plan.chunk_elements = chunk_elements(options.chunk_bytes, elem_size);
  for (int j = 0; j < members; ++j) {
    const Slice slice = slice_of(j, members, count, elem_size);
    plan.slices.push_back(slice);
    plan.chunks.push_back((slice.size() + plan.chunk_elements - 1) / plan.chunk_elements);
  }
  return plan;
}

}  // namespace hreduce::detail
