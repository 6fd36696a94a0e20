// Processes that each hold one member of a team, on a single node: an
// allreduce, reduce, scan or exscan is one node operation on the member's
// own buffers (HybridCall::alone_on_one_node, hybrid_execute.cpp). The MPI
// drop-in, whose teams are all of that shape, runs such calls through
// LoneMemberPath straight to the node level: the engine's entry, the
// hybrid steps' set-up and their argument checks cost a small call more
// than the node operation itself, and a long one still a measurable share.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <typeinfo>

#include "hreduce/team.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {

class MemberState;

// What the node level gets for such a call (on one node). `receives`: a
// reduce's root; `prefix`: where a scan or exscan's result goes;
// `last_on_node`: this process has the node's last rank.
NodeReduction lone_member_reduction(CollectiveKind kind, const void* in, void* out,
                                    std::size_t count, const ErasedOp& op, bool receives,
                                    void* prefix, bool last_on_node);
NodeCallInfo node_call_info(std::uint64_t signature, CollectiveKind kind, std::size_t count,
                            int root, const ErasedOp& op, const char* failure);
// After the node operation: the failure every process of the node saw
// (`failure`, "" when none) or the team's breaking, thrown as the member
// must see them.
void finish_lone_member_call(MemberState& me, CollectiveKind kind, const std::string& failure);

class LoneMemberPath {
 public:
  // The path for `member`, or null where its team is not of that shape
  // (its process holds more members, the team spans several nodes or has
  // no node level) or its calls default to a reproducibility level other
  // than run_to_run.
  static std::unique_ptr<LoneMemberPath> of(Member& member);

  // Runs a call of the team's default options if its op cannot throw, its
  // arguments are fine and, for an allreduce, it is small (at most
  // NodeGroup::inline_bytes()); else returns false, having done nothing:
  // the call then takes the general path, which words what is wrong.
  // Throws as the general path.
  bool run(CollectiveKind kind, const void* in, void* out, std::size_t count, int root,
           const ErasedOp& op);

  LoneMemberPath(MemberState& me, NodeGroup& node);
  // The member's rank and the team's size.
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  std::uint64_t signature(CollectiveKind kind, std::size_t count, int root, const ErasedOp& op);

  MemberState& me_;
  NodeGroup& node_;
  const int rank_, size_;
  // The last call and its signature: calls mostly repeat, and hashing
  // again (the type names through thread-local caches) was a fifteenth of
  // a small call (perf). One thread at a time calls, as for any member.
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
