// Regime 1: processes exchange messages only (no node level). Each
// collective is the three steps of hybrid_execute.cpp: the process's
// members combine onto its leader, the leaders agree and run the
// inter-process algorithm the cost model picked (src/inter/), and every
// member takes its part.
#include <cstring>
#include <vector>

#include "src/hybrid/hybrid_call.hpp"

namespace hreduce::detail {

const HybridCall::Regime HybridCall::kByMessages = {
    &HybridCall::allreduce,      &HybridCall::reduce,  &HybridCall::scan,
    &HybridCall::reduce_scatter, &HybridCall::barrier,
};

// The inter-process part of allreduce on `count` elements at `buf`.
void HybridCall::allreduce_between_processes(void* buf, std::size_t count) {
  const ErasedOp& op = guarded_op();
  const InterAlgorithm algorithm =
      group_.pick(CollectiveKind::allreduce, count * op.elem_size, op.commutative);
  if (group_.two_level()) {
    inter::binomial_reduce(group_.node_channel(), buf, count, op, 0, group_.workspace);
    if (Channel* leaders = group_.node_leaders_channel()) {
      run_allreduce(algorithm, *leaders, buf, count, op);
    }
    inter::binomial_broadcast(group_.node_channel(), buf, count * op.elem_size, 0);
  } else {
    run_allreduce(algorithm, group_.channel(), buf, count, op);
  }
}

void HybridCall::allreduce() {
  if (pipelined()) {
    allreduce_pipelined();
    return;
  }
  const std::size_t n = call_.count;
  Call c = base(CollectiveKind::reduce);
  c.root = 0;
  c.out = leader_ ? call_.out : nullptr;
  local(c);
  if (leader_) leaders(n, [&](const ErasedOp&) { allreduce_between_processes(call_.out, n); });
  finish_copy(leader_ ? call_.out : nullptr, call_.out, 0, leader_ ? 0 : n);
}

void HybridCall::reduce() {
  const ReduceSteps r = reduce_onto_leader(call_.count, false);
  if (leader_) {
    leaders(r.n, [&](const ErasedOp& op) {
      inter::binomial_reduce(group_.channel(), r.partial, r.n, op, r.root_process,
                             group_.workspace);
    });
  }
  hand_to_root(r);
}

void HybridCall::scan() {
  const std::size_t n = call_.count;
  const bool exclusive = call_.kind == CollectiveKind::exscan;
  const std::size_t bytes = n * call_.op.elem_size;
  void* total = leader_ ? group_.workspace.get(kSlotPartial, bytes) : nullptr;
  void* prefix = leader_ ? group_.workspace.get(kSlotResult, bytes) : nullptr;
  Call c = base(call_.kind);
  step_.total_out = total;
  local(c);
  if (leader_) {
    leaders(n, [&](const ErasedOp& op) {
      inter::hypercube_scan(group_.channel(), total, prefix, n, op, true, group_.workspace);
    });
  }
  // Every member goes on to the status round, whatever it caught, so the
  // process leaves together; a failure known to all leaders already
  // (failure_) needs no second exchange.
  Failure step3_failure;
  if (!combine_prefix(prefix, n, exclusive, step3_failure)) return;
  if (leader_ && !failure_) status_round(step3_failure);
  finish_copy(nullptr, nullptr, 0, 0);
}

void HybridCall::reduce_scatter() {
  const std::size_t es = call_.op.elem_size;
  const Blocks b = blocks();
  void* partial = reduce_whole_onto_leader(b.whole, false);
  void* block = nullptr;
  if (leader_) {
    std::vector<std::size_t>& per_process = group_.process_counts;
    per_process.assign(layout_.processes(), 0);
    if (!problem_) {
      for (int r = 0; r < total(); ++r) per_process[layout_.process_of(r)] += count_of(r);
    }
    block = group_.workspace.get(kSlotResult, per_process[layout_.process] * es);
    leaders(b.whole, [&](const ErasedOp& op) {
      if (group_.pick(call_.kind, b.whole * es, op.commutative) == InterAlgorithm::pairwise &&
          op.commutative) {
        inter::pairwise_reduce_scatter(group_.channel(), partial, block, per_process.data(), op,
                                       group_.workspace);
      } else {
        inter::reduce_then_scatter(group_.channel(), partial, block, per_process.data(), op,
                                   group_.workspace);
      }
    });
  }
  finish_copy(block, call_.out, b.offset_in_process(), b.count);
}

void HybridCall::barrier() {
  local(base(CollectiveKind::barrier));
  if (leader_) leaders(0, [](const ErasedOp&) {});
  finish_copy(nullptr, nullptr, 0, 0);
}

}  // namespace hreduce::detail
