#include "src/hybrid/lone_member.hpp"

#include <cstdint>

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

NodeReduction lone_member_reduction(CollectiveKind kind, const void* in, void* out,
                                    std::size_t count, const ErasedOp& op, bool receives,
                                    void* prefix, bool last_on_node) {
  NodeReduction r;
  r.in = in;
  r.count = count;
  r.op = &op;
  r.may_run_ahead = true;
  switch (kind) {
    case CollectiveKind::allreduce:
      r.out = out;
      r.out_hi = count;
      break;
    case CollectiveKind::reduce:
      r.out = out;
      r.out_hi = receives ? count : 0;
      r.input_private = receives;
      break;
    default:
      r.prefix = prefix;
      r.inclusive = kind == CollectiveKind::scan;
      // On one node nobody wants the node's total.
      r.input_private = last_on_node;
      break;
  }
  return r;
}

NodeCallInfo node_call_info(std::uint64_t signature, CollectiveKind kind, std::size_t count,
                            int root, const ErasedOp& op, const char* failure) {
  NodeCallInfo info;
  info.signature = signature;
  info.kind = kind;
  info.count = count;
  info.root = root;
  info.type_name = op.type_name != nullptr ? op.type_name
                   : op.type != nullptr    ? op.type->name()
                                           : "";
  info.op_name = op.op_name;
  if (failure != nullptr) info.failure = failure_of_marked(failure, ErrorKind::argument);
  return info;
}

void finish_lone_member_call(MemberState& me, CollectiveKind kind, const std::string& failure) {
  if (me.team.broken.load(std::memory_order_relaxed)) {
    throw_marked(broken_team_message(
                     std::string(to_string(kind)) + ": member " + std::to_string(me.global_rank),
                     me.team.broken_reason()),
                 ErrorKind::unusable, true);
  }
  if (failure.empty()) return;
  try {
    throw_marked(failure, ErrorKind::argument);
  } catch (const UnusableTeamError& e) {
    // Another process's failure that broke the team breaks it here too
    // (as InterProcessGroup::execute does on the general path).
    me.team.break_team(e.what());
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

bool LoneMemberPath::run(CollectiveKind kind, const void* in, void* out, std::size_t count,
                         int root, const ErasedOp& op) {
  const std::size_t bytes = count * op.elem_size;
  // A long allreduce may run pipelined where another process of the team
  // holds several members (HybridCall::pipelined): the general path decides.
  if ((kind == CollectiveKind::allreduce && bytes > node_.inline_bytes(kind)) || op.may_throw ||
      me_.team.broken.load(std::memory_order_relaxed)) {
    return false;
  }
  const int rank = rank_, size = size_;
  // What the general path's argument checks (member_problem) would refuse.
  bool receives = true;
  switch (kind) {
    case CollectiveKind::allreduce:
    case CollectiveKind::scan: break;
    case CollectiveKind::reduce:
      if (root < 0 || root >= size) return false;
      receives = root == rank;
      break;
    case CollectiveKind::exscan: receives = rank > 0; break;
    default: return false;
  }
  if (bytes > 0 && (in == nullptr || (receives && out == nullptr))) return false;
  // An exscan's process 0 may pass no output; the general path finds it
  // a place.
  if (kind == CollectiveKind::exscan && out == nullptr) return false;
  if (receives && partially_overlap(in, out, bytes)) return false;
  const NodeCallInfo info =
      node_call_info(signature(kind, count, root, op), kind, count, root, op, nullptr);
  const NodeReduction r =
      lone_member_reduction(kind, in, out, count, op, receives, out, node_.last());
  const std::string failure = [&] {
    try {
      return marked(node_.reduce(info, r));
    } catch (const Error& e) {
      // As the general path: a process of the node died or timed out.
      std::string text = marked(e);
      me_.team.break_team(text);
      return text;
    }
  }();
  if (!failure.empty() || me_.team.broken.load(std::memory_order_relaxed)) [[unlikely]] {
    finish_lone_member_call(me_, kind, failure);
  }
  return true;
}

}  // namespace hreduce::detail
