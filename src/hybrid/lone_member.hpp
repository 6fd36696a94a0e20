// The hybrid steps' door to the node level, and the one path of a lone
// member.
//
// Processes that each hold one member of a team, on a single node: an
// allreduce, reduce, scan or exscan is one node operation on the member's
// own buffers (and, from the drop-in, a reduce_scatter(_block) of the
// node's inline size: one node reduction of the whole vector, of which
// each process receives its block, as the general path's
// node_level_reduce_scatter), without the local steps around it (checking the arguments,
// handing the result and any failure to the process's members), which cost
// a small call more than the node operation itself. Both the team's
// general path (HybridCall::alone_on_one_node, node_level.cpp) and the MPI
// drop-in, whose teams are all of that shape and which reaches it through
// LoneMemberPath without the engine's entry, run it as run_lone_member_call.
// Processes of one call may take either way: both announce the call as
// process_call_signature hashes it (call_signature.hpp).
//
// Every call into NodeGroup from src/hybrid goes through here or through
// HybridCall::on_node (node_level.cpp); the node level returns its
// failures as values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>

#include "hreduce/team.hpp"
#include "src/common/failure.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {

class MemberState;

// What this process announces to the node: the call, and `failure` when it
// failed already.
NodeCallInfo node_call_info(std::uint64_t signature, CollectiveKind kind, std::size_t count,
                            int root, const ErasedOp& op, const Failure& failure);

// A lone member's call, as the node level takes it.
struct LoneMemberCall {
  CollectiveKind kind =
      CollectiveKind::allreduce;  // allreduce, reduce, scan, exscan, reduce_scatter(_block)
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t count = 0;            // moved: none where the member failed already
  std::size_t announced_count = 0;  // as called, for the others' messages
  int root = 0;
  const ErasedOp* op = nullptr;
  bool receives = false;   // reduce: this member is the root
  void* prefix = nullptr;  // scan, exscan: where the prefix goes
  // reduce_scatter(_block): the elements of the whole vector (`count`) this
  // process receives, [out_lo, out_hi), at `out`.
  std::size_t out_lo = 0, out_hi = 0;
  std::uint64_t signature = 0;
  Failure failure;  // this member's own, announced instead of data
};

// Runs the call's one node operation; returns the failure every process of
// the node saw. A process of the node that died or timed out breaks the
// team, and that is the failure returned.
Failure run_lone_member_call(MemberState& me, NodeGroup& node, const LoneMemberCall& call);

// After the node operation: the failure every process of the node saw or
// the team's breaking, thrown as the member must see them.
void finish_lone_member_call(MemberState& me, CollectiveKind kind, const Failure& failure);

// The drop-in's way to the path above, straight from an MPI call.
class LoneMemberPath {
 public:
  // The path for `member`, or null where its team is not of that shape
  // (its process holds more members, the team spans several nodes or has
  // no node level) or its calls default to a reproducibility level other
  // than run_to_run.
  static std::unique_ptr<LoneMemberPath> of(Member& member);

  // Runs a call of the team's default options if its op cannot throw, its
  // arguments are fine and, for an allreduce or a reduce_scatter(_block),
  // it is small (at most NodeGroup::inline_bytes() in all); else returns
  // false, having done nothing: the call then takes the general path,
  // which words what is wrong. Throws as the general path. `counts`:
  // reduce_scatter's, in elements of `op`, `count` of them.
  bool run(CollectiveKind kind, const void* in, void* out, std::size_t count, int root,
           const ErasedOp& op, const std::size_t* counts = nullptr);

  LoneMemberPath(MemberState& me, NodeGroup& node);
  // The member's rank and the team's size.
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  std::uint64_t signature(CollectiveKind kind, std::size_t count, int root, const ErasedOp& op);
  // Whether the general path's argument checks would pass the call
  // (member_problem's verdict, without building the engine's Call); sets
  // `receives`.
  bool arguments_fine(CollectiveKind kind, const void* in, const void* out, std::size_t bytes,
                      int root, bool& receives) const;
  // A reduce_scatter(_block)'s whole vector and this member's block of it,
  // as the general path's blocks (HybridCall::blocks).
  struct Block {
    std::size_t whole = 0, lo = 0, hi = 0;
  };
  Block block_of(CollectiveKind kind, std::size_t count, const std::size_t* counts) const;

  MemberState& me_;
  NodeGroup& node_;
  const int rank_, size_;
  // The last call and its signature: calls mostly repeat, and hashing
  // again (the type names through thread-local caches) is a visible share
  // of a small call. One thread at a time calls, as for any member.
  struct Signed {
    CollectiveKind kind = CollectiveKind::barrier;
    std::size_t count = 0, elem_size = 0;
    int root = 0;
    const std::type_info* type = nullptr;
    const std::type_info* op_type = nullptr;
    std::uint64_t signature = 0;
  } last_;
};

}  // namespace hreduce::detail
