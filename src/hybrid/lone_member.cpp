#include "src/hybrid/lone_member.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

#include "src/common/failure.hpp"
#include "src/engine/member_access.hpp"
#include "src/engine/team_state.hpp"
#include "src/hybrid/call_signature.hpp"
#include "src/hybrid/inter_process_group.hpp"

namespace hreduce::detail {
namespace {

bool partially_overlap(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return bytes > 0 && x != y && x < y + bytes && y < x + bytes;
}

}  // namespace

NodeCallInfo node_call_info(std::uint64_t signature, CollectiveKind kind, std::size_t count,
                            int root, const ErasedOp& op, const Failure& failure) {
  NodeCallInfo info;
  info.signature = signature;
  info.kind = kind;
  info.count = count;
  info.root = root;
  info.type_name = op.type_name != nullptr ? op.type_name
                   : op.type != nullptr    ? op.type->name()
                                           : "";
  info.op_name = op.op_name;
  info.failure = failure;
  return info;
}

Failure run_lone_member_call(MemberState& me, NodeGroup& node, const LoneMemberCall& call) {
  const NodeCallInfo info = node_call_info(call.signature, call.kind, call.announced_count,
                                           call.root, *call.op, call.failure);
  NodeReduction r = node_reduction(call.in, call.count, *call.op);
  r.may_run_ahead = true;
  switch (call.kind) {
    case CollectiveKind::allreduce:
      r.out = call.out;
      r.out_hi = call.count;
      break;
    case CollectiveKind::reduce:
      r.out = call.out;
      r.out_hi = call.receives ? call.count : 0;
      r.input_private = call.receives;
      break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block:
      // As the general path's node_level_reduce_scatter, which does not
      // run ahead.
      r.out = call.out;
      r.out_lo = call.out_lo;
      r.out_hi = call.out_hi;
      r.may_run_ahead = false;
      break;
    default:
      r.prefix = call.prefix;
      r.inclusive = call.kind == CollectiveKind::scan;
      // On one node nobody wants the node's total.
      r.input_private = node.last();
      break;
  }
  try {
    return node.reduce(info, r);
  } catch (const Error& e) {
    // A process of the node died or timed out: the team is broken.
    me.team.break_team(failure_of(e));
    return failure_of(e);
  }
}

void finish_lone_member_call(MemberState& me, CollectiveKind kind, const Failure& failure) {
  if (me.team.broken.load(std::memory_order_relaxed)) {
    const Failure reason = me.team.broken_failure();
    throw_failure(Failure::of(when_broken(reason.kind),
                              broken_team_message(std::string(to_string(kind)) + ": member " +
                                                      std::to_string(me.global_rank),
                                                  reason.text)));
  }
  if (!failure) return;
  try {
    throw_failure(failure);
  } catch (const UnusableTeamError& e) {
    // Another process's failure that broke the team breaks it here too
    // (as InterProcessGroup::execute does on the general path).
    me.team.break_team(Failure::of(ErrorKind::unusable, e.what()));
    throw;
  }
}

LoneMemberPath::LoneMemberPath(MemberState& me, NodeGroup& node)
    : me_(me), node_(node), rank_(me.global_rank), size_(me.team.total_members) {}

std::uint64_t LoneMemberPath::signature(CollectiveKind kind, std::size_t count, int root,
                                        const ErasedOp& op) {
  const Signed call{kind, count, op.elem_size, root, op.type, op.op_type, 0};
  if (call.kind != last_.kind || call.count != last_.count || call.elem_size != last_.elem_size ||
      call.root != last_.root || call.type != last_.type || call.op_type != last_.op_type) {
    last_ = call;
    last_.signature =
        process_call_signature(kind, count, root, op, Reproducibility::run_to_run, nullptr, size_);
  }
  return last_.signature;
}

std::unique_ptr<LoneMemberPath> LoneMemberPath::of(Member& member) {
  MemberState& me = state_of(member);
  auto* group = dynamic_cast<InterProcessGroup*>(me.team.group.get());
  if (group == nullptr || group->node() == nullptr || group->multi_node() || me.team.size() != 1 ||
      me.team.options.collectives.reproducibility != Reproducibility::run_to_run) {
    return nullptr;
  }
  return std::make_unique<LoneMemberPath>(me, *group->node());
}

bool LoneMemberPath::arguments_fine(CollectiveKind kind, const void* in, const void* out,
                                    std::size_t bytes, int root, bool& receives) const {
  receives = true;
  switch (kind) {
    case CollectiveKind::allreduce:
    case CollectiveKind::scan: break;
    case CollectiveKind::reduce:
      if (root < 0 || root >= size_) return false;
      receives = root == rank_;
      break;
    case CollectiveKind::exscan: receives = rank_ > 0; break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block: break;  // an empty block still passes `out`
    default: return false;
  }
  if (bytes > 0 && (in == nullptr || (receives && out == nullptr))) return false;
  // An exscan's process 0 may pass no output; the general path finds it
  // a place.
  if (kind == CollectiveKind::exscan && out == nullptr) return false;
  return !(receives && partially_overlap(in, out, bytes));
}

LoneMemberPath::Block LoneMemberPath::block_of(CollectiveKind kind, std::size_t count,
                                               const std::size_t* counts) const {
  Block b;
  if (kind == CollectiveKind::reduce_scatter_block) {
    b.whole = count * static_cast<std::size_t>(size_);
    b.lo = count * static_cast<std::size_t>(rank_);
    b.hi = b.lo + count;
    return b;
  }
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) b.lo = b.whole;
    b.whole += counts[r];
  }
  b.hi = b.lo + counts[rank_];
  return b;
}

// Flattened: everything it calls down to the node's announcement is
// inlined into it. Seven nested calls, each with its own prologue and
// checks, were a sixth of a 4 B exscan's time on two processes
// (back-to-back: 0.129 -> 0.113 us, Open MPI 0.127; the library grows by
// 0.2 MB).
[[gnu::flatten]] bool LoneMemberPath::run(CollectiveKind kind, const void* in, void* out,
                                          std::size_t count, int root, const ErasedOp& op,
                                          const std::size_t* counts) {
  const bool scatters =
      kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::reduce_scatter_block;
  if (kind == CollectiveKind::reduce_scatter &&
      (counts == nullptr || count != static_cast<std::size_t>(size_))) {
    return false;
  }
  // The whole vector of a reduce_scatter(_block): one node reduction of
  // which this process receives its block, as the general path's, without
  // its local steps (most of a small call's time).
  const Block block = scatters ? block_of(kind, count, counts) : Block{count, 0, count};
  const std::size_t bytes = block.whole * op.elem_size;
  // A long allreduce may run pipelined where another process of the team
  // holds several members (HybridCall::pipelined): the general path decides.
  if (((kind == CollectiveKind::allreduce || scatters) && bytes > node_.inline_bytes(kind)) ||
      op.may_throw || me_.team.broken.load(std::memory_order_relaxed)) {
    return false;
  }
  LoneMemberCall call;
  if (!arguments_fine(kind, in, out, bytes, root, call.receives)) return false;
  call.kind = kind;
  call.in = in;
  call.out = out;
  call.prefix = out;
  call.count = block.whole;
  call.announced_count = count;
  call.out_lo = block.lo;
  call.out_hi = block.hi;
  call.root = root;
  call.op = &op;
  // reduce_scatter's counts are part of its signature, and may change
  // from call to call: hashed each time.
  call.signature = kind == CollectiveKind::reduce_scatter
                       ? process_call_signature(kind, count, root, op, Reproducibility::run_to_run,
                                                counts, size_)
                       : signature(kind, count, root, op);
  const Failure failure = run_lone_member_call(me_, node_, call);
  if (failure || me_.team.broken.load(std::memory_order_relaxed)) [[unlikely]] {
    finish_lone_member_call(me_, kind, failure);
  }
  return true;
}

}  // namespace hreduce::detail
