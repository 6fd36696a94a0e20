// Regime 3, reproducibility shape_independent: the left fold in team rank
// order, whatever the layout. A process's members are consecutive team
// ranks first_k .. last_k, so the processes form a chain in rank order:
//
//   leader k receives C_k = x_0 ∘ … ∘ x_{first_k - 1} (left fold) from
//   leader k-1 and hands its members C_k ∘ x_first_k as the leader's
//   input; the engine's local reduce or scan folds in rank order
//   (sliced.cpp), so it yields C_{k+1} = ((C_k ∘ x_first_k) ∘ …) ∘ x_last_k,
//   which leader k sends on to leader k+1.
//
// Then allreduce and reduce_scatter broadcast the last process's total to
// every leader (reduce_scatter carries the whole vector, each member takes
// its block), reduce sends it to the root's process, and scan / exscan
// already hold their answers (exscan: the leader of process k > 0 takes
// C_k). The chain runs over messages on the channel that connects all
// processes, also between processes of one node where the node level
// exists (it only checks agreement then): simple, and the bits cannot
// depend on the node level's chunking. The cost: latency linear in the
// number of processes, and no overlap between processes — process k
// starts folding only once k-1 has finished.
//
// Steps: a local step that only checks the arguments; the leaders agree
// (as every other path does first, so that a process calling with another
// level fails with the others); the chain with the local fold; for a user
// op a status round (an op that threw anywhere); a final local step that
// hands out the results and any failure, the same text on every member.
#include <climits>

#include "src/common/copy.hpp"
#include "src/hybrid/hybrid_call.hpp"

namespace hreduce::detail {

// A left fold has no barrier (wants_left_fold).
const HybridCall::Regime HybridCall::kLeftFold = {
    &HybridCall::left_fold_allreduce,
    &HybridCall::left_fold_reduce,
    &HybridCall::left_fold_scan,
    &HybridCall::left_fold_reduce_scatter,
    nullptr,
};

bool HybridCall::wants_left_fold() const {
  return call_.options->reproducibility == Reproducibility::shape_independent &&
         call_.kind != CollectiveKind::barrier && group_.left_fold_by_chain();
}

// Leaders, after the data moved: whether a user op threw anywhere.
void HybridCall::left_fold_status_round() {
  if (!call_.op.may_throw || failure_) return;
  if (group_.node() != nullptr) {
    node_status_round(op_failure());
  } else {
    status_round(op_failure());
  }
}

// The leader's input for the local fold: x_first itself on process 0,
// C_k ∘ x_first (received from the previous process) on the others.
const void* HybridCall::chain_head(std::size_t n) {
  if (layout_.process == 0 || n == 0 || failure_) return call_.in;
  const std::size_t bytes = n * call_.op.elem_size;
  carry_ = group_.workspace.get(kSlotCarry, bytes);
  void* head = group_.workspace.get(kSlotHead, bytes);
  over_messages([&] {
    group_.channel().recv(layout_.process - 1, carry_, bytes, tags::left_fold_chain);
    guarded_op().apply(carry_, call_.in, head, n);
  });
  return head;
}

// The local fold: the members' inputs, the leader's replaced by `head`,
// reduced onto the leader's `out` (reduce kinds) or scanned with the
// process's total at `total` (scan kinds).
void HybridCall::local_fold(const void* head, std::size_t n, void* out, void* total) {
  const bool scans = call_.kind == CollectiveKind::scan || call_.kind == CollectiveKind::exscan;
  Call c = base(scans ? call_.kind : CollectiveKind::reduce);
  c.count = n;
  c.counts = nullptr;
  if (call_.in == call_.out) c.in_size = SIZE_MAX;  // a whole vector, in reduce_scatter's
  if (!scans) {
    c.root = 0;
    c.out = leader_ ? out : nullptr;
    c.out_size = SIZE_MAX;
  }
  if (leader_ && head != call_.in) {
    c.in = head;
    c.in_size = SIZE_MAX;
  }
  // Whatever the user asked, the fold in rank order: the tree brackets
  // by the machine (an explicit tree is refused with shape_independent).
  fold_options_ = *call_.options;
  fold_options_.algorithm = Algorithm::sliced;
  c.options = &fold_options_;
  step_.total_out = scans && leader_ ? total : nullptr;
  if (leader_) {
    // The op threw on C_k ∘ x_first: the members skip the fold.
    if (!failure_ && guard_.failed) chain_failure_ = op_failure();
    step_.relayed = relayed(failure_ ? failure_ : chain_failure_);
  }
  local(c);
}

// Leader: C_{k+1} (n elements at `total`) to the next process.
void HybridCall::chain_on(const void* total, std::size_t n) {
  if (layout_.process + 1 == layout_.processes() || n == 0 || failure_) return;
  over_messages([&] {
    group_.channel().send(layout_.process + 1, total, n * call_.op.elem_size,
                          tags::left_fold_chain);
  });
}

// Leader: the last process's `result` (bytes) to every process.
void HybridCall::broadcast_from_last(void* result, std::size_t bytes) {
  if (bytes == 0 || failure_) return;
  over_messages(
      [&] { inter::binomial_broadcast(group_.channel(), result, bytes, layout_.processes() - 1); });
}

void HybridCall::left_fold_allreduce() {
  const std::size_t n = problem_ ? 0 : call_.count;
  Call checks = base(CollectiveKind::reduce);
  checks.root = 0;
  checks.out = leader_ ? call_.out : nullptr;
  step_.checks_only = true;
  local(checks);
  const void* head = call_.in;
  if (leader_ && agree_everywhere(n)) head = chain_head(n);
  local_fold(head, n, call_.out, nullptr);
  if (leader_) {
    chain_on(call_.out, n);
    broadcast_from_last(call_.out, n * call_.op.elem_size);
    left_fold_status_round();
  }
  finish_copy(leader_ ? call_.out : nullptr, call_.out, 0, leader_ ? 0 : n);
}

void HybridCall::left_fold_reduce() {
  const ReduceSteps r = reduce_onto_leader(problem_ ? 0 : call_.count, true);
  const int last = layout_.processes() - 1;
  const bool root_here = layout_.process == r.root_process;
  // The root's process folds into the root's buffer; the others (and the
  // root's, unless it is the last) forward their fold.
  void* fold = nullptr;
  const void* head = call_.in;
  if (leader_) {
    fold = root_here && layout_.process == last ? r.partial
                                                : group_.workspace.get(kSlotResult, r.bytes);
    if (agree_everywhere(r.n)) head = chain_head(r.n);
  }
  local_fold(head, r.n, fold, nullptr);
  if (leader_) {
    chain_on(fold, r.n);
    if (r.root_process != last && r.n > 0 && !failure_) {
      over_messages([&] {
        if (layout_.process == last) {
          group_.channel().send(r.root_process, fold, r.bytes, tags::left_fold_result);
        } else if (root_here) {
          group_.channel().recv(last, r.partial, r.bytes, tags::left_fold_result);
        }
      });
    }
    left_fold_status_round();
  }
  hand_to_root(r);
}

void HybridCall::left_fold_scan() {
  const std::size_t n = problem_ ? 0 : call_.count;
  const bool exclusive = call_.kind == CollectiveKind::exscan;
  Call checks = base(call_.kind);
  step_.checks_only = true;
  local(checks);
  const void* head = call_.in;
  void* total = nullptr;
  if (leader_) {
    total = group_.workspace.get(kSlotPartial, n * call_.op.elem_size);
    if (agree_everywhere(n)) head = chain_head(n);
  }
  local_fold(head, n, nullptr, total);
  if (leader_) {
    chain_on(total, n);
    // The leader is local rank 0, which the local exscan leaves alone.
    if (exclusive && layout_.process > 0 && n > 0 && !failure_) {
      copy_bytes(call_.out, carry_, n * call_.op.elem_size);
    }
    left_fold_status_round();
  }
  finish_copy(nullptr, nullptr, 0, 0);
}

void HybridCall::left_fold_reduce_scatter() {
  const Blocks b = blocks();
  // The whole vector, as for allreduce, in the leader's workspace.
  void* result = reduce_whole_onto_leader(b.whole, true);
  const void* head = call_.in;
  if (leader_ && agree_everywhere(b.whole)) head = chain_head(b.whole);
  local_fold(head, b.whole, result, nullptr);
  if (leader_) {
    chain_on(result, b.whole);
    broadcast_from_last(result, b.whole * call_.op.elem_size);
    left_fold_status_round();
  }
  finish_copy(result, call_.out, b.team_offset, b.count);
}

}  // namespace hreduce::detail
