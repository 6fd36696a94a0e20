// The decisions a shared-memory call makes inside one process, as pure
// functions of plain values: which path (mailbox, tree or sliced), which
// tree, and how a vector is cut among the members. The runtime asks these
// functions and nothing else (execute.cpp, tree.cpp, sliced.cpp,
// pipeline.cpp, Team::local_path, Team::explain), so a cost model that
// calls them replays the runtime's choices with the runtime's thresholds.
// Nothing here needs a team, a thread or a running call.
//
// The hot path asks the inline parts (local_choice, slice_of,
// chunk_elements, pipeline_piece); the functions returning plans and
// reasons build them from the same inline parts, and allocate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "hreduce/schedule.hpp"
#include "hreduce/team.hpp"  // CollectiveKind (hreduce/detail/call.hpp), the options

namespace hreduce::detail {

// Inputs of at most this many bytes per member travel inside the
// announcement (src/engine/mailbox.hpp): one synchronisation per call
// instead of two.
inline constexpr std::size_t kMailboxBytes = 512;

// ---------------------------------------------------------------------------
// Which local path.

enum class LocalPath { mailbox, tree, sliced };
std::string_view to_string(LocalPath path);

// Everything the choice of path depends on.
struct LocalFacts {
  CollectiveKind kind = CollectiveKind::allreduce;
  // Each member's input in bytes (reduce_scatter and reduce_scatter_block:
  // the whole vector a member contributes).
  std::size_t bytes_per_member = 0;
  std::size_t elem_size = 1;
  // A user op, which may throw: a member that returned early could not
  // learn that another member's op threw, so it never goes by mailbox.
  bool op_may_throw = false;
  int members_here = 1;     // the team's members in this process
  int members_in_team = 1;  // across all its processes
  bool spans_processes = false;
  CollectiveOptions options;
};

// Why the path was taken, as a code (no allocation on the hot path).
enum class LocalReason {
  asked_tree,            // options.algorithm tree (reduce and allreduce)
  asked_sliced,          // options.algorithm sliced
  tree_for_reductions,   // options.algorithm tree, but only reduce/allreduce have one
  many_members_short,    // >= tree_min_members members, <= tree_max_bytes
  fits_mailbox,          // <= kMailboxBytes, few members, a predefined op
  rank_order_level,      // a level above run_to_run wants the rank-order fold
  longer_than_tree_max,  // > tree_max_bytes
  no_mailbox_for_kind,   // reduce_scatter, barrier and the internal steps
  spans_processes,       // the process level needs the sliced steps
  too_many_for_mailbox,  // >= tree_min_members members
  nothing_to_move,       // 0 bytes
  longer_than_mailbox,   // > kMailboxBytes
  op_may_throw,          // a user op
};

struct LocalChoice {
  LocalPath path;
  LocalReason why;
};

namespace local_decision_detail {
inline bool has_tree(CollectiveKind kind) {
  return kind == CollectiveKind::reduce || kind == CollectiveKind::allreduce;
}
inline bool has_mailbox(CollectiveKind kind) {
  return has_tree(kind) || kind == CollectiveKind::reduce_scatter_block ||
         kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
}
// Why an automatic call that takes neither the tree nor the mailbox goes
// sliced: the first condition that ruled them out.
inline LocalReason why_sliced(const LocalFacts& f) {
  const CollectiveOptions& o = f.options;
  if (has_tree(f.kind) && f.members_here >= o.tree_min_members) {
    return o.reproducibility != Reproducibility::run_to_run ? LocalReason::rank_order_level
                                                            : LocalReason::longer_than_tree_max;
  }
  if (!has_mailbox(f.kind)) return LocalReason::no_mailbox_for_kind;
  if (f.spans_processes) return LocalReason::spans_processes;
  if (f.members_here >= o.tree_min_members) return LocalReason::too_many_for_mailbox;
  if (f.bytes_per_member == 0) return LocalReason::nothing_to_move;
  if (f.bytes_per_member > kMailboxBytes) return LocalReason::longer_than_mailbox;
  return LocalReason::op_may_throw;
}
}  // namespace local_decision_detail

// The path and its reason code. Every member decides the same, from values
// the agreement check compares. Inline: every call asks.
inline LocalChoice local_choice(const LocalFacts& f) {
  using namespace local_decision_detail;
  const CollectiveOptions& o = f.options;
  switch (o.algorithm) {
    case Algorithm::tree:
      if (has_tree(f.kind)) return {LocalPath::tree, LocalReason::asked_tree};
      return {LocalPath::sliced, LocalReason::tree_for_reductions};
    case Algorithm::sliced: return {LocalPath::sliced, LocalReason::asked_sliced};
    case Algorithm::automatic: break;
  }
  // The tree brackets by the machine's shape; the other paths fold in rank
  // order, the bracketing shape_independent promises.
  if (has_tree(f.kind) && o.reproducibility == Reproducibility::run_to_run &&
      f.members_here >= o.tree_min_members && f.bytes_per_member <= o.tree_max_bytes) {
    return {LocalPath::tree, LocalReason::many_members_short};
  }
  // Teams spanning processes need the totals and the steps of src/hybrid;
  // a large team goes down the tree, whose bracketing differs.
  if (has_mailbox(f.kind) && !f.spans_processes && f.members_here < o.tree_min_members &&
      f.bytes_per_member > 0 && f.bytes_per_member <= kMailboxBytes && !f.op_may_throw) {
    return {LocalPath::mailbox, LocalReason::fits_mailbox};
  }
  return {LocalPath::sliced, why_sliced(f)};
}

struct LocalDecision {
  LocalPath path = LocalPath::sliced;
  LocalReason why = LocalReason::asked_sliced;
  // The reason in words, with the values that decided (no "; ": explain()
  // separates its clauses with it).
  std::string reason;
};

// local_choice() with its reason in words (allocates).
LocalDecision decide_local(const LocalFacts& facts);

// ---------------------------------------------------------------------------
// Which tree.

// Where the members sit, for the shape of the tree.
struct TreeFacts {
  int members = 1;  // the team's members in this process
  int root = 0;     // reduce's root; allreduce reduces to 0
  // A non-commutative op needs rank-contiguous subtrees.
  bool commutative = true;
  CollectiveOptions options;  // tree and radix
  // The hierarchical tree's grouping levels, outermost first, and for each
  // level every member's container there (containers[level][member]; the
  // index only tells groups apart).
  std::vector<Level> levels;
  std::vector<std::vector<int>> containers;
};

// containers for TreeFacts where members sit in rank order (a compact
// placement): at level i, groups of members_per_group[i] members.
std::vector<std::vector<int>> compact_containers(int members,
                                                 const std::vector<int>& members_per_group);

// containers for TreeFacts from where a placement puts the members on a
// machine (what a team does).
inline std::vector<std::vector<int>> tree_containers(const Topology& topology,
                                                     const Placement& placement,
                                                     const std::vector<Level>& levels) {
  std::vector<std::vector<int>> containers;
  for (Level level : levels) {
    std::vector<int>& of_level = containers.emplace_back();
    for (int pu : placement.pu_of_member) of_level.push_back(topology.pus()[pu].in(level));
  }
  return containers;
}

struct TreePlan {
  TreeShape shape = TreeShape::hierarchical;
  int radix = 2;
  int members = 1;
  // Where the reduction ends. A non-commutative op on a tree whose
  // subtrees are not rank ranges (a scatter placement, a rotated root)
  // reduces on a binomial tree rooted at 0 instead (binomial_for_order),
  // and the result is then forwarded to the root (forwarded_to_root).
  int tree_root = 0;
  bool binomial_for_order = false;
  bool forwarded_to_root = false;
  // Rounds: rounds[s - 1] holds the transfers of step s. In a transfer the
  // receiver combines the sender's whole partial result (the vector) into
  // its own; rounds run one after the other, transfers of a round at once.
  std::vector<std::vector<Transfer>> rounds;
  int depth() const { return static_cast<int>(rounds.size()); }
  Schedule schedule{1, 0, {}};  // the same tree, as the executor runs it
  std::string reason;
};

// Throws Error when the facts make no tree (members < 1, a root outside
// the team, containers of the wrong size).
TreePlan plan_tree(const TreeFacts& facts);

// ---------------------------------------------------------------------------
// Slicing.

struct Slice {
  std::size_t lo = 0, hi = 0;  // elements [lo, hi)
  std::size_t size() const { return hi - lo; }
};

// Elements per slicing unit: a cache line where the element size divides
// it, so that two members never write the same line of an output.
inline std::size_t slice_granule(std::size_t elem_size) {
  return elem_size <= 64 && 64 % elem_size == 0 ? 64 / elem_size : 1;
}

// Member `member`'s slice of `count` elements among `members`, in whole
// granules (the last slices may be empty).
inline Slice slice_of(int member, int members, std::size_t count, std::size_t elem_size) {
  const std::size_t granule = slice_granule(elem_size);
  const std::size_t units = (count + granule - 1) / granule;
  const auto edge = [&](int j) { return std::min(count, units * j / members * granule); };
  return {edge(member), edge(member + 1)};
}

// Elements a member folds at a time (options.chunk_bytes, at least one).
inline std::size_t chunk_elements(std::size_t chunk_bytes, std::size_t elem_size) {
  return std::max<std::size_t>(1, chunk_bytes / elem_size);
}

struct SlicePlan {
  std::size_t granule = 1;         // elements per slicing unit
  std::size_t chunk_elements = 1;  // elements folded at a time
  // slices[j]: the j-th along the vector, which member j folds under a
  // compact placement (NumaPlan::member_of_slice says who in general).
  std::vector<Slice> slices;
  // Chunks of slice j: each reads members inputs and writes the outputs
  // it feeds.
  std::vector<std::size_t> chunks;
};

SlicePlan plan_slices(int members, std::size_t count, std::size_t elem_size,
                      const CollectiveOptions& options);

// The pipelined allreduce of a team spanning processes (pipeline.cpp): the
// members other than the leader ("helpers") split each chunk; helper h
// (member h + 1) folds this piece of `chunk`.
inline Slice pipeline_piece(int helper, int helpers, Slice chunk) {
  const std::size_t share = (chunk.size() + helpers - 1) / helpers;
  const std::size_t lo = std::min(chunk.hi, chunk.lo + helper * share);
  return {lo, std::min(chunk.hi, lo + share)};
}

}  // namespace hreduce::detail
