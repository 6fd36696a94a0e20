// Regime 2, with the node level (src/node/): the processes of a node meet
// in their shared segment, and only the first process of each node sends
// messages. Each collective is
//
//   1. local   the process's members combine in place (the engine);
//   2. node    the process leaders of the node combine the partials
//              through the segment (node_group.hpp), which also checks
//              that they agree and carries any failure;
//   3. nodes   (several nodes only) the nodes' first processes check
//              agreement and combine over messages, then hand the
//              result and any failure down their node through the
//              segment;
//   4. local   every member takes its part from its leader.
//
// Every call into NodeGroup from src/hybrid is in this file, through
// on_node() with node_info(), or in the lone-member path (lone_member.hpp).
#include <algorithm>

#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/engine/collectives.hpp"
#include "src/hybrid/hybrid_call.hpp"
#include "src/hybrid/lone_member.hpp"

namespace hreduce::detail {

const HybridCall::Regime HybridCall::kNodeLevel = {
    &HybridCall::node_level_allreduce, &HybridCall::node_level_reduce,
    &HybridCall::node_level_scan,      &HybridCall::node_level_reduce_scatter,
    &HybridCall::node_level_barrier,
};

// Runs one node operation, which returns the failure the node's processes
// saw; a process of the node that died or a timeout leaves the team
// unusable (the local step then tells every member).
template <class Operation>
void HybridCall::on_node(Operation&& operation) {
  if (node_lost_) return;
  try {
    fail(operation());
  } catch (const Error& e) {
    node_lost_ = true;
    fail(failure_of(e));
    me_.team.break_team(failure_of(e));
  }
}

// Step 3 for several nodes: the node's first process agrees with the
// others' and runs `data` (with the guarded op), then every process of the
// node receives `bytes` at `buffer` and the verdict from it.
template <class Data>
void HybridCall::between_nodes(std::size_t count, void* buffer, std::size_t bytes, Data&& data) {
  if (!group_.multi_node() || node_lost_) return;
  if (node_first()) {
    local_failure_ = failure_;
    leaders(count, data);
  }
  on_node([&] { return node().broadcast(node_info(count, failure_), buffer, bytes, 0); });
}

NodeCallInfo HybridCall::node_info(std::size_t count, const Failure& failure) {
  return node_call_info(signature(count), call_.kind, count, call_.root, call_.op, failure);
}

void HybridCall::node_reduce(const NodeReduction& r) {
  on_node([&] { return node().reduce(node_info(call_.count, local_failure_), r); });
}

// Do the node's processes, then the nodes' first processes, all make the
// same call, and did any fail so far?
void HybridCall::node_agree(std::size_t count) {
  on_node([&] { return node().agree(node_info(count, local_failure_)); });
  between_nodes(count, nullptr, 0, [](const ErasedOp&) {});
}

// A round that only carries failures (`here`: this process's; a user op
// that threw after the data moved), through the node and between nodes.
void HybridCall::node_status_round(const Failure& here) {
  on_node([&] { return node().agree(node_info(0, here)); });
  between_nodes(0, nullptr, 0, [](const ErasedOp&) {});
}

// The process's partial at `in` (count elements) becomes the whole team's
// result at `buffer`, on every process.
void HybridCall::node_allreduce(void* buffer, std::size_t count, const void* in) {
  const std::size_t receives = group_.multi_node() && !node_first() ? 0 : count;
  node_reduce(node_reduction(in != nullptr ? in : buffer, count, call_.op, buffer, 0, receives));
  between_nodes(call_.count, buffer, count * call_.op.elem_size, [&](const ErasedOp& op) {
    run_allreduce(group_.pick(CollectiveKind::allreduce, count * op.elem_size, op.commutative),
                  *group_.leaders_of_nodes(), buffer, count, op);
  });
}

// A process of one member on a single node, in a collective whose node
// operation takes the member's own buffers: the lone-member path
// (lone_member.hpp). Returns false where the general path must run.
bool HybridCall::alone_on_one_node() {
  const CollectiveKind kind = call_.kind;
  if (!alone() || group_.multi_node() || me_.team.broken.load(std::memory_order_relaxed)) {
    return false;
  }
  if (kind != CollectiveKind::allreduce && kind != CollectiveKind::reduce &&
      kind != CollectiveKind::scan && kind != CollectiveKind::exscan) {
    return false;
  }
  const std::string problem =
      member_problem(call_, me_.global_rank, total(), me_.team.options.collectives);
  if (call_.step != nullptr && call_.step->relayed != nullptr) {
    // Worded by the caller already.
    problem_ = problem.empty() ? Failure::none() : Failure::of(ErrorKind::argument, problem);
  } else if (!problem.empty()) {
    problem_ =
        Failure::of(ErrorKind::argument, std::string(to_string(kind)) + ": member " +
                                             std::to_string(me_.global_rank) + ": " + problem);
  }
  if (kind == CollectiveKind::allreduce && pipelined()) return false;
  const bool scans = kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
  LoneMemberCall lone;
  lone.kind = kind;
  lone.in = call_.in;
  lone.out = call_.out;
  lone.count = problem_ ? 0 : call_.count;
  lone.announced_count = call_.count;
  lone.root = call_.root;
  lone.op = &call_.op;
  lone.receives = !problem_ && call_.root == me_.global_rank;
  lone.prefix = scans ? prefix_place(lone.count) : nullptr;
  lone.signature = signature(call_.count);
  lone.failure = local_failure_ = problem_;
  fail(run_lone_member_call(me_, node(), lone));
  // The node's processes with more members hold one more round for a
  // combine that may throw (node_level_scan): keep in step.
  if (scans && call_.op.may_throw && !failure_) node_status_round(Failure::none());
  finish_lone_member_call(me_, kind, failure_);
  return true;
}

void HybridCall::node_level_allreduce() {
  if (pipelined()) {
    allreduce_pipelined();
    return;
  }
  const std::size_t n = call_.count;
  Call c = base(CollectiveKind::reduce);
  c.root = 0;
  c.out = leader_ ? call_.out : nullptr;
  step_.checks_only = alone();
  local(c);
  if (leader_) node_allreduce(call_.out, problem_ ? 0 : n, alone() ? call_.in : nullptr);
  finish_copy(leader_ ? call_.out : nullptr, call_.out, 0, leader_ ? 0 : n);
}

void HybridCall::node_level_reduce() {
  const ReduceSteps steps = reduce_onto_leader(problem_ ? 0 : call_.count, alone());
  if (leader_) {
    const int root_node = layout_.node_of[steps.root_process];
    const bool receives =
        group_.multi_node() ? node_first() : layout_.process == steps.root_process;
    NodeReduction r = node_reduction(alone() ? call_.in : steps.partial, steps.n, call_.op,
                                     steps.partial, 0, receives ? steps.n : 0);
    r.input_private = receives;
    // Several nodes: the node's answer follows in a broadcast that waits.
    r.may_run_ahead = !group_.multi_node();
    node_reduce(r);
    // Several nodes: the root's node gets the result and hands it down.
    const bool root_here = group_.node_index() == root_node;
    between_nodes(call_.count, steps.partial, root_here ? steps.bytes : 0, [&](const ErasedOp& op) {
      inter::binomial_reduce(*group_.leaders_of_nodes(), steps.partial, steps.n, op, root_node,
                             group_.workspace);
    });
  }
  hand_to_root(steps);
}

void HybridCall::node_level_scan() {
  const std::size_t n = problem_ ? 0 : call_.count;
  const bool exclusive = call_.kind == CollectiveKind::exscan;
  const std::size_t bytes = n * call_.op.elem_size;
  if (alone() && !group_.multi_node()) {
    alone_scan(n, exclusive);
    return;
  }
  void* total = leader_ ? group_.workspace.get(kSlotPartial, bytes) : nullptr;
  void* prefix = leader_ ? group_.workspace.get(kSlotResult, bytes) : nullptr;
  Call c = base(call_.kind);
  step_.total_out = total;
  local(c);
  Failure step3_failure;
  if (leader_) {
    // Node level: each process's exclusive prefix within the node, and on
    // the node's first process the node's total.
    const bool several = group_.multi_node();
    void* within = several ? group_.workspace.get(kSlotWithinNode, bytes) : prefix;
    // In place: the process total is staged before it is overwritten.
    NodeReduction r = node_reduction(total, n, call_.op, total, 0, several && node_first() ? n : 0);
    r.prefix = within;
    r.input_private = !several && node().last();
    node_reduce(r);
    if (several) node_level_scan_between_nodes(total, within, prefix, n, step3_failure);
  }
  if (!combine_prefix(prefix, n, exclusive, step3_failure)) return;
  if (leader_ && !failure_) node_status_round(step3_failure);
  finish_copy(nullptr, nullptr, 0, 0);
}

// Several nodes: the lower nodes' totals, on every process of the node,
// then on the left of the prefix within the node.
void HybridCall::node_level_scan_between_nodes(void* total, void* within, void* prefix,
                                               std::size_t n, Failure& failure) {
  const std::size_t bytes = n * call_.op.elem_size;
  void* lower = group_.workspace.get(kSlotLowerNodes, bytes);
  between_nodes(call_.count, lower, bytes, [&](const ErasedOp& op) {
    inter::hypercube_scan(*group_.leaders_of_nodes(), total, lower, n, op, true, group_.workspace);
  });
  if (failure_ || n == 0) return;
  const bool lower_nodes = group_.node_index() > 0, lower_here = !node_first();
  try {
    if (lower_nodes && lower_here) {
      call_.op.apply(lower, within, prefix, n);
    } else if (lower_nodes) {
      copy_bytes(prefix, lower, bytes);
    } else if (lower_here) {
      copy_bytes(prefix, within, bytes);
    }
  } catch (...) {
    failure = Failure::of(ErrorKind::op, std::string("the op threw: ") + current_exception_text());
  }
}

// Where a lone member's scan prefix goes: its output. The node level
// tells a scan from a reduction by a prefix being given, so process 0 of
// an exscan, which may pass no output (it receives nothing), gets a place
// that is never written.
void* HybridCall::prefix_place(std::size_t n) {
  if (call_.out != nullptr) return call_.out;
  return group_.workspace.get(kSlotResult, std::max<std::size_t>(n, 1) * call_.op.elem_size);
}

// One member per process, one node: the node level reads the member's
// input and writes its prefix straight into its output.
void HybridCall::alone_scan(std::size_t n, bool exclusive) {
  Call c = base(call_.kind);
  step_.checks_only = true;
  local(c);
  NodeReduction r = node_reduction(call_.in, n, call_.op);
  r.prefix = prefix_place(n);
  r.inclusive = !exclusive;
  r.may_run_ahead = true;
  r.input_private = node().last();  // one node: nobody wants its total
  node_reduce(r);
  // The node's other processes, with more members, hold one more round
  // for a combine that may throw (node_level_scan): keep in step.
  if (call_.op.may_throw && !failure_) node_status_round(Failure::none());
  finish_copy(nullptr, nullptr, 0, 0);
}

void HybridCall::node_level_reduce_scatter() {
  const std::size_t es = call_.op.elem_size;
  const Blocks b = blocks();
  // A lone member on one node: its own buffers (in place, its block lands
  // at the start of the buffer, never ahead of what the node level has
  // already staged).
  const bool direct = alone() && !group_.multi_node();
  // (The local step still gets a place for the partial, which it only
  // checks, so that its checks read as for a reduce.)
  void* partial = reduce_whole_onto_leader(b.whole, direct);
  const std::size_t lo = b.process_offset, hi = b.process_offset + b.process_count;
  if (direct) {
    node_reduce(node_reduction(call_.in, b.whole, call_.op, call_.out, lo, hi));
    finish_copy(nullptr, nullptr, 0, 0);
    return;
  }
  void* block = nullptr;
  if (leader_ && group_.multi_node()) {
    // Every node's first process gets the whole vector, then its node.
    node_allreduce(partial, b.whole);
    block = bytes_at(partial, b.process_offset, es);
  } else if (leader_) {
    block = group_.workspace.get(kSlotResult, b.process_count * es);
    node_reduce(node_reduction(partial, b.whole, call_.op, block, lo, hi));
  }
  finish_copy(block, call_.out, b.offset_in_process(), b.count);
}

void HybridCall::node_level_barrier() {
  local(base(CollectiveKind::barrier));
  if (leader_) node_status_round(local_failure_);
  finish_copy(nullptr, nullptr, 0, 0);
}

}  // namespace hreduce::detail
