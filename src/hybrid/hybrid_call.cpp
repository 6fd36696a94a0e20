// The argument checks and the local steps that every regime runs around
// the leaders' work (hybrid_call.hpp).
#include "src/hybrid/hybrid_call.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "src/common/exception_text.hpp"
#include "src/engine/collectives.hpp"
#include "src/hybrid/call_signature.hpp"

namespace hreduce::detail {

void GuardedOp::combine(const void* a, const void* b, void* out, std::size_t n, const void* self) {
  auto* guard = const_cast<GuardedOp*>(static_cast<const GuardedOp*>(self));
  if (guard->failed) return;
  try {
    guard->inner->apply(a, b, out, n);
  } catch (...) {
    guard->failed = true;
    std::strncpy(guard->message, current_exception_text(), sizeof guard->message - 1);
    guard->message[sizeof guard->message - 1] = '\0';
  }
}

ErasedOp GuardedOp::erased() const {
  ErasedOp op = *inner;
  op.combine = &GuardedOp::combine;
  op.op = this;
  return op;
}

HybridCall::HybridCall(InterProcessGroup& group, MemberState& me, const Call& call)
    : me_(me), call_(call), group_(group), layout_(group_.layout()), leader_(me.rank == 0),
      first_(layout_.first_rank(layout_.process)) {
  guard_.inner = &call_.op;
}

std::size_t HybridCall::count_of(int team_rank) const {
  return call_.kind == CollectiveKind::reduce_scatter_block ? call_.count : call_.counts[team_rank];
}

// Checks that need the whole team's size; a failure is relayed through
// step 1 so the process fails together.
void HybridCall::check_arguments() {
  // Built only on failure: this runs on every call.
  auto refuse = [&](const std::string& why) {
    problem_ = Failure::of(ErrorKind::argument, std::string(to_string(call_.kind)) + ": member " +
                                                    std::to_string(me_.global_rank) + ": " + why);
  };
  // A failure the caller already worded (a step of an exact sum).
  if (call_.step != nullptr && call_.step->relayed != nullptr) {
    problem_ = *call_.step->relayed;
    return;
  }
  if (call_.kind == CollectiveKind::reduce && (call_.root < 0 || call_.root >= total())) {
    refuse("root " + std::to_string(call_.root) + " is outside 0.." + std::to_string(total() - 1));
  } else if (call_.kind == CollectiveKind::reduce_scatter &&
             (call_.count != static_cast<std::size_t>(total()) || call_.counts == nullptr)) {
    refuse("counts has " + std::to_string(call_.count) + " entries but the team has " +
           std::to_string(total()) + " members");
  } else if (call_.out == nullptr && call_.in != call_.out) {
    // The local steps see a process's first member as rank 0, which
    // receives nothing in an exscan and a reduce_scatter block of the
    // local view; the team's view decides.
    const std::size_t receives =
        call_.kind == CollectiveKind::scan ||
                (call_.kind == CollectiveKind::exscan && me_.global_rank > 0)
            ? call_.count
        : call_.kind == CollectiveKind::reduce_scatter ||
                call_.kind == CollectiveKind::reduce_scatter_block
            ? count_of(me_.global_rank)
            : 0;
    if (receives > 0) {
      refuse("out is a null pointer but must receive " + std::to_string(receives) + " elements");
    }
  }
}

const Failure* HybridCall::problem() const { return problem_ ? &problem_ : nullptr; }

// `failure` as the engine's local step relays it, or null.
const Failure* HybridCall::relayed(const Failure& failure) { return failure ? &failure : nullptr; }

// Step 1 or 3: runs the local step; a failure is remembered (the leader
// reports it in step 2) unless `rethrow`.
void HybridCall::local(Call step, bool rethrow) {
  try {
    execute_local(me_, step);
  } catch (const Error& e) {
    if (rethrow) throw;
    if (!local_failure_) local_failure_ = failure_of(e);
  }
}

// A local step of this call. Its ProcessStep (step_) starts from the
// failure to relay; the step sets the rest of it before it runs.
Call HybridCall::base(CollectiveKind kind) {
  step_ = ProcessStep{};
  step_.relayed = problem();
  step_.reported_as = &call_.kind;
  step_.asked_level = step_of(call_).asked_level;
  Call c = call_;
  c.kind = kind;
  c.step = &step_;
  return c;
}

// Step 3's shape for all: copy `count` elements from the leader's `source`.
void HybridCall::finish_copy(const void* source, void* out, std::size_t offset, std::size_t count) {
  Call c = base(kCopyFromRoot);
  c.root = 0;
  c.in = source;
  c.out = out;
  c.count = count;
  step_.offset = offset;
  step_.relayed = leader_ ? relayed(failure_) : nullptr;
  local(c, true);
}

std::uint64_t HybridCall::signature(std::size_t count) const {
  return process_call_signature(call_.kind, count, call_.root, call_.op,
                                call_.options->reproducibility, problem_ ? nullptr : call_.counts,
                                total());
}

void HybridCall::fail(const Failure& failure) {
  if (!failure_ && failure) failure_ = failure;
}

// What the leader saw of the op in step 2: it threw here, or what step 1
// threw.
Failure HybridCall::op_failure() const {
  if (!guard_.failed) return local_failure_;
  return Failure::of(ErrorKind::op, std::string("the op threw: ") + guard_.message);
}

const ErasedOp& HybridCall::guarded_op() {
  if (!guarded_op_) guarded_op_ = guard_.erased();
  return *guarded_op_;
}

HybridCall::Blocks HybridCall::blocks() const {
  Blocks b;
  if (problem_) return b;
  for (int r = 0; r < total(); ++r) {
    const std::size_t n = count_of(r);
    if (r < me_.global_rank) b.team_offset += n;
    if (r < first_) b.process_offset += n;
    if (layout_.process_of(r) == layout_.process) b.process_count += n;
    b.whole += n;
  }
  b.count = count_of(me_.global_rank);
  return b;
}

// A reduce's first step, shared by every regime: the process's members
// reduce onto the leader, into the output when the leader is the root
// itself, else into the workspace. (Its last step, hand_to_root: a root
// that is not its process's leader copies the result from it.)
HybridCall::ReduceSteps HybridCall::reduce_onto_leader(std::size_t n, bool checks_only) {
  ReduceSteps r;
  r.n = n;
  r.bytes = n * call_.op.elem_size;
  r.root = problem_ ? 0 : call_.root;
  r.root_process = layout_.process_of(r.root);
  r.root_leads = layout_.first_rank(r.root_process) == r.root;
  if (leader_) {
    r.partial = me_.global_rank == r.root ? call_.out : group_.workspace.get(kSlotPartial, r.bytes);
  }
  Call c = base(CollectiveKind::reduce);
  c.root = 0;
  c.out = r.partial;
  step_.checks_only = checks_only;
  local(c);
  return r;
}

void HybridCall::hand_to_root(const ReduceSteps& r) {
  const bool receives = me_.global_rank == r.root && !r.root_leads;
  finish_copy(r.partial, receives ? call_.out : nullptr, 0, receives ? r.n : 0);
}

// reduce_scatter's first step: the process's members reduce the whole
// vector (`whole` elements) onto the leader's workspace, which it returns.
void* HybridCall::reduce_whole_onto_leader(std::size_t whole, bool checks_only) {
  void* partial =
      leader_ ? group_.workspace.get(kSlotPartial, whole * call_.op.elem_size) : nullptr;
  Call c = base(CollectiveKind::reduce);
  c.root = 0;
  c.count = whole;
  c.counts = nullptr;
  c.in_size = call_.in == call_.out ? SIZE_MAX : call_.in_size;
  c.out_size = SIZE_MAX;
  c.out = partial;
  step_.checks_only = checks_only;
  local(c);
  return partial;
}

// The last step of scan and exscan: the lower processes' prefix (at the
// leader's `prefix`) on the left of each member's own. Returns false when
// the op cannot throw: the call is then complete. Otherwise the caller
// holds one more round that tells every process whether the combine threw
// anywhere; what it threw here is kept in `failure` (unless it holds one).
bool HybridCall::combine_prefix(void* prefix, std::size_t n, bool exclusive, Failure& failure) {
  Call combine = base(kCombineFromRoot);
  combine.root = 0;
  combine.in = prefix;
  combine.count = layout_.process > 0 ? n : 0;
  step_.copy_only = exclusive && me_.rank == 0;
  step_.relayed = leader_ ? relayed(failure_) : nullptr;
  if (!call_.op.may_throw) {
    local(combine, true);
    return false;
  }
  try {
    execute_local(me_, combine);
  } catch (const Error& e) {
    if (!failure) failure = failure_of(e);
  }
  return true;
}

void HybridCall::run_allreduce(InterAlgorithm algorithm, Channel& channel, void* buf, std::size_t n,
                               const ErasedOp& op) {
  switch (algorithm) {
    case InterAlgorithm::rabenseifner:
      inter::rabenseifner_allreduce(channel, buf, n, op, group_.workspace);
      break;
    case InterAlgorithm::ring:
      if (op.commutative) {
        inter::ring_allreduce(channel, buf, n, op, group_.workspace);
        break;
      }
      [[fallthrough]];
    default: inter::recursive_doubling_allreduce(channel, buf, n, op, group_.workspace);
  }
}

// Lone members have nothing to overlap (inter_decision.hpp): their whole
// vector goes in one exchange, from the input. Every process decides
// alike: the layout is the same everywhere.
bool HybridCall::pipelined() const {
  const InterOptions& o = group_.options();
  return pipelines_allreduce(call_.count * call_.op.elem_size, o.pipeline_min_bytes,
                             o.pipeline_chunk_bytes, group_.some_process_has_helpers()) &&
         !problem_;
}

}  // namespace hreduce::detail
