// Collectives of a team spanning several processes. Each is three steps:
//
//   1. local    the process's members combine through shared memory, the
//               partial result landing with the process's member 0 (its
//               leader) — the engine's own reduce or scan;
//   2. leaders  the leaders check that all processes called the same thing
//               (a small status allreduce), then run the inter-process
//               algorithm the cost model picked, over point-to-point
//               messages (src/inter/*.cpp);
//   3. local    every member takes its part of the leader's result (a copy,
//               or for scan a combine with the prefix of lower processes),
//               and learns whether anything failed anywhere.
//
//            process 0                 process 1
//   step 1   t0 t1 t2 ─► leader0       t0 t1 ─► leader1        shared memory
//   step 2        leader0  ◄═══ MPI ═══►  leader1              point to point
//   step 3   leader0 ─► t0 t1 t2       leader1 ─► t0 t1        shared memory
//
// Rank order holds because a process's members are consecutive team ranks
// (process rank, then thread index) and every inter-process algorithm keeps
// lower processes on the left. Failures never leave a process waiting: an
// error in step 1 or an op that throws in step 2 travels in the status
// words, the leaders finish their message pattern regardless (the op is
// wrapped so it stops combining instead of throwing), and step 3 rethrows the
// same message on every member of every process.
//
// Reproducibility shape_independent (options.hpp) wants the left fold in
// team rank order, which combining per-process partials breaks (2 × 2
// members give (x0 ∘ x1) ∘ (x2 ∘ x3)). Such calls take a chain over the
// processes instead, with or without the node level: see left_fold() below.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "hreduce/error.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/failure.hpp"
#include "src/common/level_clock.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/process_step.hpp"
#include "src/engine/team_state.hpp"
#include "src/hybrid/call_signature.hpp"
#include "src/hybrid/inter_process_group.hpp"
#include "src/hybrid/lone_member.hpp"

namespace hreduce::detail {
namespace {

// What the leaders agree on before data moves (and, for user ops, after).
struct Status {
  std::uint64_t sig_min = 0, sig_max = 0;
  std::int32_t sig_min_process = 0, sig_max_process = 0;
  std::int32_t kind_min = 0, kind_max = 0;
  std::int32_t root_min = 0, root_max = 0;
  std::uint64_t count_min = 0, count_max = 0;
  std::int32_t failed_process = INT32_MAX;  // the lowest process that failed
  char text[240] = {};

  friend bool operator==(const Status&, const Status&) = default;
};

Status merge(const Status& a, const Status& b) {
  Status s = a;
  if (b.sig_min < a.sig_min) {
    s.sig_min = b.sig_min, s.sig_min_process = b.sig_min_process, s.kind_min = b.kind_min,
    s.root_min = b.root_min, s.count_min = b.count_min;
  }
  if (b.sig_max > a.sig_max) {
    s.sig_max = b.sig_max, s.sig_max_process = b.sig_max_process, s.kind_max = b.kind_max,
    s.root_max = b.root_max, s.count_max = b.count_max;
  }
  if (b.failed_process < a.failed_process) {
    s.failed_process = b.failed_process;
    std::memcpy(s.text, b.text, sizeof s.text);
  }
  return s;
}

const auto& status_op() {
  static const auto op = make_op<Status>(merge);
  static const ErasedOp erased = erase_op<Status>(op);
  return erased;
}

// An op that records the first exception instead of throwing it, so a
// leader whose op fails still sends every message its partners expect.
struct GuardedOp {
  const ErasedOp* inner = nullptr;
  bool failed = false;
  char message[200];  // written (terminated) when `failed` is set

  static void combine(const void* a, const void* b, void* out, std::size_t n, const void* self) {
    auto* guard = const_cast<GuardedOp*>(static_cast<const GuardedOp*>(self));
    if (guard->failed) return;
    try {
      guard->inner->apply(a, b, out, n);
    } catch (...) {
      guard->remember(current_exception_text());
    }
  }
  void remember(const char* what) {
    failed = true;
    std::strncpy(message, what, sizeof message - 1);
    message[sizeof message - 1] = '\0';
  }
  ErasedOp erased() const {
    ErasedOp op = *inner;
    op.combine = &GuardedOp::combine;
    op.op = this;
    return op;
  }
};

class HybridCall {
 public:
  HybridCall(InterProcessGroup& group, MemberState& me, const Call& call)
      : me_(me), call_(call), group_(group), layout_(group_.layout()), leader_(me.rank == 0),
        first_(layout_.first_rank(layout_.process)) {
    guard_.inner = &call_.op;
  }

  void run() {
    if (wants_left_fold()) {
      check_arguments();
      left_fold();
      return;
    }
    if (group_.node() != nullptr && alone_on_one_node()) return;
    check_arguments();
    if (group_.node() != nullptr) {
      run_with_node_level();
      return;
    }
    switch (call_.kind) {
      case CollectiveKind::allreduce: allreduce(); break;
      case CollectiveKind::reduce: reduce(); break;
      case CollectiveKind::scan:
      case CollectiveKind::exscan: scan(); break;
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::reduce_scatter_block: reduce_scatter(); break;
      case CollectiveKind::barrier: barrier(); break;
      default: throw Error("hybrid: internal step called directly");
    }
  }

 private:
  int total() const { return layout_.total_members(); }

  std::size_t count_of(int team_rank) const {
    return call_.kind == CollectiveKind::reduce_scatter_block ? call_.count
                                                              : call_.counts[team_rank];
  }

  // Checks that need the whole team's size; a failure is relayed through
  // step 1 so the process fails together.
  void check_arguments() {
    // Built only on failure: this runs on every call.
    auto prefix = [&] {
      return std::string(to_string(call_.kind)) + ": member " + std::to_string(me_.global_rank) +
             ": ";
    };
    // A failure the caller already worded (a step of an exact sum).
    if (call_.step != nullptr && call_.step->relayed_failure != nullptr) {
      problem_ = call_.step->relayed_failure;
      return;
    }
    if (call_.kind == CollectiveKind::reduce && (call_.root < 0 || call_.root >= total())) {
      problem_ = prefix() + "root " + std::to_string(call_.root) + " is outside 0.." +
                 std::to_string(total() - 1);
    } else if (call_.kind == CollectiveKind::reduce_scatter &&
               (call_.count != static_cast<std::size_t>(total()) || call_.counts == nullptr)) {
      problem_ = prefix() + "counts has " + std::to_string(call_.count) +
                 " entries but the team has " + std::to_string(total()) + " members";
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
        problem_ = prefix() + "out is a null pointer but must receive " + std::to_string(receives) +
                   " elements";
      }
    }
  }
  const char* problem() const { return problem_.empty() ? nullptr : problem_.c_str(); }

  // Step 1 or 3: runs the local step; a failure is remembered (the leader
  // reports it in step 2) unless `rethrow`.
  void local(Call step, bool rethrow = false) {
    try {
      execute_local(me_, step);
    } catch (const Error& e) {
      if (rethrow) throw;
      if (local_failure_.empty()) local_failure_ = marked(e);
    }
  }

  // A local step of this call. Its ProcessStep (step_) starts from the
  // failure to relay; the step sets the rest of it before it runs.
  Call base(CollectiveKind kind) {
    step_ = ProcessStep{};
    step_.relayed_failure = problem();
    step_.reported_as = &call_.kind;
    step_.asked_level = step_of(call_).asked_level;
    Call c = call_;
    c.kind = kind;
    c.step = &step_;
    return c;
  }

  // Step 3's shape for all: copy `count` elements from the leader's `source`.
  void finish_copy(const void* source, void* out, std::size_t offset, std::size_t count) {
    Call c = base(kCopyFromRoot);
    c.root = 0;
    c.in = source;
    c.out = out;
    c.count = count;
    step_.offset = offset;
    step_.relayed_failure = leader_ && !failure_.empty() ? failure_.c_str() : nullptr;
    local(c, true);
  }

  std::uint64_t signature(std::size_t count) const {
    return process_call_signature(call_.kind, count, call_.root, call_.op,
                                  call_.options->reproducibility,
                                  problem_.empty() ? call_.counts : nullptr, total());
  }

  void fail(const std::string& why) {
    if (failure_.empty() && !why.empty()) failure_ = why;
  }

  // The leaders that check agreement between them: every process, or with
  // the node level the first process of each node (the node level has
  // checked its own processes).
  Channel& status_channel() {
    return group_.node() != nullptr ? *group_.leaders_of_nodes() : group_.channel();
  }

  Status exchange(Status s) {
    inter::recursive_doubling_allreduce(status_channel(), &s, 1, status_op(), group_.workspace);
    return s;
  }

  Status own_status(std::uint64_t sig, std::size_t count, const std::string& failure) const {
    Status s;
    s.sig_min = s.sig_max = sig;
    s.sig_min_process = s.sig_max_process = layout_.process;
    s.kind_min = s.kind_max = static_cast<std::int32_t>(call_.kind);
    s.root_min = s.root_max = call_.root;
    s.count_min = s.count_max = count;
    if (!failure.empty()) {
      s.failed_process = layout_.process;
      std::strncpy(s.text, failure.c_str(), sizeof s.text - 1);
    }
    return s;
  }

  void fail_from(const Status& s) {
    if (s.failed_process != INT32_MAX) {
      fail(std::string(to_string(call_.kind)) + ": process " + std::to_string(s.failed_process) +
           " failed: " + s.text);
    }
  }

  // Step 2 begins, leader only: do all processes make the same call, and
  // did any fail so far? Every leader gets the same answer.
  bool agree(std::size_t count) {
    agreed_ = true;
    const Status s = exchange(own_status(signature(count), count, local_failure_));
    fail_from(s);
    if (failure_.empty() && s.sig_min != s.sig_max) {
      auto called = [](std::int32_t process, std::int32_t kind, std::uint64_t count,
                       std::int32_t root) {
        const auto collective = static_cast<CollectiveKind>(kind);
        return "process " + std::to_string(process) + " called " + to_string(collective) +
               " with count " + std::to_string(count) +
               (collective == CollectiveKind::reduce ? ", root " + std::to_string(root) : "");
      };
      const std::string low = called(s.sig_min_process, s.kind_min, s.count_min, s.root_min);
      const std::string high = called(s.sig_max_process, s.kind_max, s.count_max, s.root_max);
      const bool alike = low.substr(low.find(" called")) == high.substr(high.find(" called"));
      fail(std::string(to_string(call_.kind)) + ": processes disagree on the call: " + low + ", " +
           high +
           (alike ? " (they differ in the element type, op, counts or reproducibility)" : ""));
    }
    return failure_.empty();
  }

  // Step 2 ends: a user op may have thrown meanwhile, here or elsewhere.
  void confirm(std::size_t count) {
    if (!call_.op.may_throw) return;
    const std::string here =
        guard_.failed ? marked(ErrorKind::op, std::string("the op threw: ") + guard_.message)
                      : local_failure_;
    fail_from(exchange(own_status(signature(count), count, here)));
  }

  // Runs the leader's message exchanges in `exchanges`. A message that
  // never comes (a process stopped answering within the timeout) or an MPI
  // error leaves the team unusable, as a lost process of the node does:
  // the members are told through the local step that follows.
  template <class Exchanges>
  void over_messages(Exchanges&& exchanges) {
    LevelScope scope(CallLevel::between_nodes);
    if (messages_lost_) return;
    try {
      exchanges();
    } catch (const Error& e) {
      messages_lost_ = true;
      const std::string text = std::string(to_string(call_.kind)) + ": " + marked(e);
      failure_ = text;
      me_.team.break_team(text);
    }
  }

  // Step 2, leader only: agree, run `data(op)` with the guarded op, confirm.
  template <class Data>
  void leaders(std::size_t count, Data&& data) {
    over_messages([&] {
      if (!agree(count)) return;
      data(guarded_op());
      confirm(count);
    });
  }

  // The inter-process part of allreduce on `count` elements at `buf`.
  void allreduce_between_processes(void* buf, std::size_t count) {
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

  // Lone members have nothing to overlap (inter_decision.hpp): their whole
  // vector goes in one exchange, from the input. Every process decides
  // alike: the layout is the same everywhere.
  bool pipelined() const {
    const InterOptions& o = group_.options();
    return pipelines_allreduce(call_.count * call_.op.elem_size, o.pipeline_min_bytes,
                               o.pipeline_chunk_bytes, group_.some_process_has_helpers()) &&
           problem_.empty();
  }

  // Long vectors: the three steps overlap chunk by chunk (pipeline.cpp);
  // each reduced chunk comes back here on the leader.
  void allreduce_pipelined() {
    const std::size_t n = call_.count;
    Call c = base(kPipelinedAllreduce);
    step_.chunk =
        std::max<std::size_t>(1, group_.options().pipeline_chunk_bytes / call_.op.elem_size);
    step_.on_chunk = [](void* self, void* data, std::size_t count) {
      static_cast<HybridCall*>(self)->on_chunk(data, count);
    };
    step_.on_chunk_context = this;
    local(c);
    if (leader_ && group_.node() != nullptr) {
      if (!agreed_) {
        node_allreduce(nullptr, std::min(n, step_.chunk));  // failed before any chunk
      } else if (failure_.empty() && call_.op.may_throw) {
        node_status_round(local_failure_);
      }
    } else if (leader_) {
      over_messages([&] {
        if (!agreed_) {
          agree(n);  // step 1 failed before any chunk: tell the others
        } else if (failure_.empty()) {
          confirm(n);
        }
      });
    }
    finish_copy(nullptr, nullptr, 0, 0);
  }

  void on_chunk(void* data, std::size_t count) {
    if (group_.node() != nullptr) {
      agreed_ = true;
      if (failure_.empty()) node_allreduce(data, count);
      return;
    }
    over_messages([&] {
      if (!agreed_) agree(call_.count);
      if (failure_.empty()) allreduce_between_processes(data, count);
    });
  }

  void allreduce() {
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

  void run_allreduce(InterAlgorithm algorithm, Channel& channel, void* buf, std::size_t n,
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

  // A reduce's steps 1 and 4, shared by both levels: the process's members
  // reduce onto the leader, into the output when the leader is the root
  // itself, else into the workspace; at the end a root that is not its
  // process's leader copies the result from it.
  struct ReduceSteps {
    std::size_t n = 0, bytes = 0;
    int root = 0, root_process = 0;
    bool root_leads = false;
    void* partial = nullptr;
  };

  ReduceSteps reduce_onto_leader(std::size_t n, bool checks_only) {
    ReduceSteps r;
    r.n = n;
    r.bytes = n * call_.op.elem_size;
    r.root = problem_.empty() ? call_.root : 0;
    r.root_process = layout_.process_of(r.root);
    r.root_leads = layout_.first_rank(r.root_process) == r.root;
    if (leader_) {
      r.partial =
          me_.global_rank == r.root ? call_.out : group_.workspace.get(kSlotPartial, r.bytes);
    }
    Call c = base(CollectiveKind::reduce);
    c.root = 0;
    c.out = r.partial;
    step_.checks_only = checks_only;
    local(c);
    return r;
  }

  void hand_to_root(const ReduceSteps& r) {
    const bool receives = me_.global_rank == r.root && !r.root_leads;
    finish_copy(r.partial, receives ? call_.out : nullptr, 0, receives ? r.n : 0);
  }

  void reduce() {
    const ReduceSteps r = reduce_onto_leader(call_.count, false);
    if (leader_) {
      leaders(r.n, [&](const ErasedOp& op) {
        inter::binomial_reduce(group_.channel(), r.partial, r.n, op, r.root_process,
                               group_.workspace);
      });
    }
    hand_to_root(r);
  }

  // The last step of scan and exscan: the lower processes' prefix (at the
  // leader's `prefix`) on the left of each member's own. Returns false when
  // the op cannot throw: the call is then complete. Otherwise the caller
  // holds one more round that tells every process whether the combine
  // threw anywhere; what it threw here is added to `failure`.
  bool combine_prefix(void* prefix, std::size_t n, bool exclusive, std::string& failure) {
    Call combine = base(kCombineFromRoot);
    combine.root = 0;
    combine.in = prefix;
    combine.count = layout_.process > 0 ? n : 0;
    step_.copy_only = exclusive && me_.rank == 0;
    step_.relayed_failure = leader_ && !failure_.empty() ? failure_.c_str() : nullptr;
    if (!call_.op.may_throw) {
      local(combine, true);
      return false;
    }
    try {
      execute_local(me_, combine);
    } catch (const Error& e) {
      if (failure.empty()) failure = marked(e);
    }
    return true;
  }

  void scan() {
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
    std::string step3_failure;
    if (!combine_prefix(prefix, n, exclusive, step3_failure)) return;
    if (leader_ && failure_.empty()) {
      over_messages([&] { fail_from(exchange(own_status(0, 0, step3_failure))); });
    }
    finish_copy(nullptr, nullptr, 0, 0);
  }

  // reduce_scatter's first step: the process's members reduce the whole
  // vector (`whole` elements) onto the leader's workspace, which it returns.
  void* reduce_whole_onto_leader(std::size_t whole, bool checks_only) {
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

  void reduce_scatter() {
    const std::size_t es = call_.op.elem_size;
    const int P = layout_.processes();
    std::size_t whole = 0, my_offset = 0, my_count = 0;
    if (problem_.empty()) {
      for (int r = 0; r < total(); ++r) {
        if (r < me_.global_rank && r >= first_) my_offset += count_of(r);
        whole += count_of(r);
      }
      my_count = count_of(me_.global_rank);
    }
    void* partial = reduce_whole_onto_leader(whole, false);
    void* block = nullptr;
    if (leader_) {
      std::vector<std::size_t>& per_process = group_.process_counts;
      per_process.assign(P, 0);
      if (problem_.empty()) {
        for (int r = 0; r < total(); ++r) per_process[layout_.process_of(r)] += count_of(r);
      }
      block = group_.workspace.get(kSlotResult, per_process[layout_.process] * es);
      leaders(whole, [&](const ErasedOp& op) {
        if (group_.pick(call_.kind, whole * es, op.commutative) == InterAlgorithm::pairwise &&
            op.commutative) {
          inter::pairwise_reduce_scatter(group_.channel(), partial, block, per_process.data(), op,
                                         group_.workspace);
        } else {
          inter::reduce_then_scatter(group_.channel(), partial, block, per_process.data(), op,
                                     group_.workspace);
        }
      });
    }
    finish_copy(block, call_.out, my_offset, my_count);
  }

  void barrier() {
    local(base(CollectiveKind::barrier));
    if (leader_) leaders(0, [](const ErasedOp&) {});
    finish_copy(nullptr, nullptr, 0, 0);
  }

  // --- With the node level (src/node/): the processes of a node meet in
  // their shared segment, and only the first process of each node sends
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

  void run_with_node_level() {
    switch (call_.kind) {
      case CollectiveKind::allreduce:
        if (pipelined()) {
          allreduce_pipelined();
        } else {
          node_level_allreduce();
        }
        break;
      case CollectiveKind::reduce: node_level_reduce(); break;
      case CollectiveKind::scan:
      case CollectiveKind::exscan: node_level_scan(); break;
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::reduce_scatter_block: node_level_reduce_scatter(); break;
      case CollectiveKind::barrier: node_level_barrier(); break;
      default: throw Error("hybrid: internal step called directly");
    }
  }

  NodeGroup& node() { return *group_.node(); }
  bool node_first() const { return group_.node()->rank() == 0; }

  NodeCallInfo node_info(std::size_t count, const std::string& failure) const {
    return node_call_info(signature(count), call_.kind, count, call_.root, call_.op,
                          failure.empty() ? nullptr : failure.c_str());
  }

  // Runs one node operation; a process of the node that died or a timeout
  // leaves the team unusable (the local step then tells every member).
  template <class Operation>
  void on_node(Operation&& operation) {
    if (node_lost_) return;
    try {
      fail(marked(operation()));
    } catch (const Error& e) {
      node_lost_ = true;
      fail(marked(e));
      me_.team.break_team(marked(e));
    }
  }

  void fail_if(const std::string& why) {
    if (!why.empty()) fail(why);
  }

  // Step 3 for several nodes: the node's first process agrees with the
  // others' and runs `data` (with the guarded op), then every process of
  // the node receives `bytes` at `buffer` and the verdict from it.
  template <class Data>
  void between_nodes(std::size_t count, void* buffer, std::size_t bytes, Data&& data) {
    if (!group_.multi_node() || node_lost_) return;
    if (node_first()) {
      local_failure_ = failure_;
      leaders(count, data);
    }
    on_node([&] { return node().broadcast(node_info(count, failure_), buffer, bytes, 0); });
  }

  // The process's partial at `in` (count elements) becomes the whole
  // team's result at `buffer`, on every process.
  void node_allreduce(void* buffer, std::size_t count, const void* in = nullptr) {
    NodeReduction r;
    r.in = in != nullptr ? in : buffer;
    r.count = count;
    r.op = &call_.op;
    r.out = buffer;
    r.out_hi = group_.multi_node() && !node_first() ? 0 : count;
    on_node([&] { return node().reduce(node_info(call_.count, local_failure_), r); });
    between_nodes(call_.count, buffer, count * call_.op.elem_size, [&](const ErasedOp& op) {
      run_allreduce(group_.pick(CollectiveKind::allreduce, count * op.elem_size, op.commutative),
                    *group_.leaders_of_nodes(), buffer, count, op);
    });
  }

  // A round that only carries failures (a user op that threw after the
  // data moved).
  void node_status_round(const std::string& failure) {
    on_node([&] { return node().agree(node_info(0, failure)); });
    between_nodes(0, nullptr, 0, [](const ErasedOp&) {});
  }

  // A process of one member gives the node level its own buffers: its
  // local step only checks them.
  bool alone() const { return me_.team.size() == 1; }

  // A process of one member on a single node, in a collective whose node
  // operation takes the member's own buffers: the same node operation as
  // below, without the two local steps around it (checking the arguments
  // and handing the result and any failure to the process's members),
  // which cost a small call more than the node operation itself. Returns
  // false where the general path must run.
  bool alone_on_one_node() {
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
    if (call_.step != nullptr && call_.step->relayed_failure != nullptr) {
      problem_ = problem;  // worded by the caller already
    } else if (!problem.empty()) {
      problem_ = std::string(to_string(kind)) + ": member " + std::to_string(me_.global_rank) +
                 ": " + problem;
    }
    if (kind == CollectiveKind::allreduce && pipelined()) return false;
    if (!problem_.empty()) local_failure_ = problem_;
    const std::size_t n = problem_.empty() ? call_.count : 0;
    const bool root_here = problem_.empty() && call_.root == me_.global_rank;
    const bool scans = kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
    const NodeReduction r = lone_member_reduction(kind, call_.in, call_.out, n, call_.op, root_here,
                                                  scans ? prefix_place(n) : nullptr, node().last());
    on_node([&] { return node().reduce(node_info(call_.count, local_failure_), r); });
    // The node's processes with more members hold one more round for a
    // combine that may throw (node_level_scan): keep in step.
    if (scans && call_.op.may_throw && failure_.empty()) node_status_round("");
    finish_lone_member_call(me_, kind, failure_);
    return true;
  }

  void node_level_allreduce() {
    const std::size_t n = call_.count;
    Call c = base(CollectiveKind::reduce);
    c.root = 0;
    c.out = leader_ ? call_.out : nullptr;
    step_.checks_only = alone();
    local(c);
    if (leader_) {
      node_allreduce(call_.out, problem_.empty() ? n : 0, alone() ? call_.in : nullptr);
    }
    finish_copy(leader_ ? call_.out : nullptr, call_.out, 0, leader_ ? 0 : n);
  }

  void node_level_reduce() {
    const ReduceSteps steps = reduce_onto_leader(problem_.empty() ? call_.count : 0, alone());
    if (leader_) {
      const int root_node = layout_.node_of[steps.root_process];
      NodeReduction r;
      r.in = alone() ? call_.in : steps.partial;
      r.count = steps.n;
      r.op = &call_.op;
      r.out = steps.partial;
      const bool receives =
          group_.multi_node() ? node_first() : layout_.process == steps.root_process;
      r.out_hi = receives ? steps.n : 0;
      r.input_private = receives;
      // Several nodes: the node's answer follows in a broadcast that waits.
      r.may_run_ahead = !group_.multi_node();
      on_node([&] { return node().reduce(node_info(call_.count, local_failure_), r); });
      // Several nodes: the root's node gets the result and hands it down.
      const bool root_here = group_.node_index() == root_node;
      between_nodes(call_.count, steps.partial, root_here ? steps.bytes : 0,
                    [&](const ErasedOp& op) {
                      inter::binomial_reduce(*group_.leaders_of_nodes(), steps.partial, steps.n, op,
                                             root_node, group_.workspace);
                    });
    }
    hand_to_root(steps);
  }

  void node_level_scan() {
    const std::size_t n = problem_.empty() ? call_.count : 0;
    const bool exclusive = call_.kind == CollectiveKind::exscan;
    const std::size_t es = call_.op.elem_size;
    const std::size_t bytes = n * es;
    if (alone() && !group_.multi_node()) {
      alone_scan(n, exclusive);
      return;
    }
    void* total = leader_ ? group_.workspace.get(kSlotPartial, bytes) : nullptr;
    void* prefix = leader_ ? group_.workspace.get(kSlotResult, bytes) : nullptr;
    Call c = base(call_.kind);
    step_.total_out = total;
    local(c);
    std::string step3_failure;
    if (leader_) {
      // Node level: each process's exclusive prefix within the node, and
      // on the node's first process the node's total.
      const bool several = group_.multi_node();
      void* within = several ? group_.workspace.get(kSlotWithinNode, bytes) : prefix;
      NodeReduction r;
      r.in = total;
      r.count = n;
      r.op = &call_.op;
      r.prefix = within;
      r.out = total;  // in place: the process total is staged before it is overwritten
      r.out_hi = several && node_first() ? n : 0;
      r.input_private = !several && node().last();
      on_node([&] { return node().reduce(node_info(call_.count, local_failure_), r); });
      if (several) {
        // Lower nodes' totals, on every process of the node.
        void* lower = group_.workspace.get(kSlotLowerNodes, bytes);
        between_nodes(call_.count, lower, bytes, [&](const ErasedOp& op) {
          inter::hypercube_scan(*group_.leaders_of_nodes(), total, lower, n, op, true,
                                group_.workspace);
        });
        if (failure_.empty() && n > 0) {
          const bool lower_nodes = group_.node_index() > 0, lower_here = !node_first();
          try {
            if (lower_nodes && lower_here) {
              call_.op.apply(lower, within, prefix, n);
            } else if (lower_nodes) {
              std::memcpy(prefix, lower, bytes);
            } else if (lower_here) {
              std::memcpy(prefix, within, bytes);
            }
          } catch (const std::exception& e) {
            step3_failure = marked(ErrorKind::op, std::string("the op threw: ") + e.what());
          }
        }
      }
    }
    if (!combine_prefix(prefix, n, exclusive, step3_failure)) return;
    if (leader_ && failure_.empty()) node_status_round(step3_failure);
    finish_copy(nullptr, nullptr, 0, 0);
  }

  // Where a lone member's scan prefix goes: its output. The node level
  // tells a scan from a reduction by a prefix being given, so process 0 of
  // an exscan, which may pass no output (it receives nothing), gets a place
  // that is never written.
  void* prefix_place(std::size_t n) {
    if (call_.out != nullptr) return call_.out;
    return group_.workspace.get(kSlotResult, std::max<std::size_t>(n, 1) * call_.op.elem_size);
  }

  // One member per process, one node: the node level reads the member's
  // input and writes its prefix straight into its output.
  void alone_scan(std::size_t n, bool exclusive) {
    Call c = base(call_.kind);
    step_.checks_only = true;
    local(c);
    NodeReduction r;
    r.in = call_.in;
    r.count = n;
    r.op = &call_.op;
    r.prefix = prefix_place(n);
    r.inclusive = !exclusive;
    r.may_run_ahead = true;
    r.input_private = node().last();  // one node: nobody wants its total
    on_node([&] { return node().reduce(node_info(call_.count, local_failure_), r); });
    // The node's other processes, with more members, hold one more round
    // for a combine that may throw (node_level_scan): keep in step.
    if (call_.op.may_throw && failure_.empty()) node_status_round("");
    finish_copy(nullptr, nullptr, 0, 0);
  }

  void node_level_reduce_scatter() {
    const std::size_t es = call_.op.elem_size;
    std::size_t whole = 0, my_offset = 0, my_count = 0, process_offset = 0, process_count = 0;
    if (problem_.empty()) {
      for (int r = 0; r < total(); ++r) {
        if (r < me_.global_rank && r >= first_) my_offset += count_of(r);
        if (r < first_) process_offset += count_of(r);
        if (layout_.process_of(r) == layout_.process) process_count += count_of(r);
        whole += count_of(r);
      }
      my_count = count_of(me_.global_rank);
    }
    // A lone member on one node: its own buffers (in place, its block lands
    // at the start of the buffer, never ahead of what the node level has
    // already staged).
    const bool direct = alone() && !group_.multi_node();
    // (The local step still gets a place for the partial, which it only
    // checks, so that its checks read as for a reduce.)
    void* partial = reduce_whole_onto_leader(whole, direct);
    void* block = nullptr;
    if (direct) {
      NodeReduction r;
      r.in = call_.in;
      r.count = whole;
      r.op = &call_.op;
      r.out = call_.out;
      r.out_lo = process_offset;
      r.out_hi = process_offset + process_count;
      on_node([&] { return node().reduce(node_info(whole, local_failure_), r); });
      finish_copy(nullptr, nullptr, 0, 0);
      return;
    }
    if (leader_) {
      if (group_.multi_node()) {
        // Every node's first process gets the whole vector, then its node.
        node_allreduce(partial, whole);
        block = bytes_at(partial, process_offset, es);
      } else {
        block = group_.workspace.get(kSlotResult, process_count * es);
        NodeReduction r;
        r.in = partial;
        r.count = whole;
        r.op = &call_.op;
        r.out = block;
        r.out_lo = process_offset;
        r.out_hi = process_offset + process_count;
        on_node([&] { return node().reduce(node_info(whole, local_failure_), r); });
      }
    }
    finish_copy(block, call_.out, my_offset, my_count);
  }

  void node_level_barrier() {
    local(base(CollectiveKind::barrier));
    if (leader_) node_status_round(local_failure_);
    finish_copy(nullptr, nullptr, 0, 0);
  }

  // --- Reproducibility shape_independent: the left fold in team rank order,
  // whatever the layout. A process's members are consecutive team ranks
  // first_k .. last_k, so the processes form a chain in rank order:
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

  bool wants_left_fold() const {
    return call_.options->reproducibility == Reproducibility::shape_independent &&
           call_.kind != CollectiveKind::barrier && group_.left_fold_by_chain();
  }

  // Leaders: do all processes make the same call, and did any fail so far?
  // The same answer on every process.
  bool agree_everywhere(std::size_t count) {
    if (group_.node() == nullptr) {
      over_messages([&] { agree(count); });
    } else {
      on_node([&] { return node().agree(node_info(count, local_failure_)); });
      between_nodes(count, nullptr, 0, [](const ErasedOp&) {});
    }
    return failure_.empty();
  }

  // Leaders, after the data moved: whether a user op threw anywhere.
  void left_fold_status_round() {
    if (!call_.op.may_throw || !failure_.empty()) return;
    const std::string here =
        guard_.failed ? marked(ErrorKind::op, std::string("the op threw: ") + guard_.message)
                      : local_failure_;
    if (group_.node() != nullptr) {
      node_status_round(here);
    } else {
      over_messages([&] { fail_from(exchange(own_status(0, 0, here))); });
    }
  }

  // The leader's input for the local fold: x_first itself on process 0,
  // C_k ∘ x_first (received from the previous process) on the others.
  const void* chain_head(std::size_t n) {
    if (layout_.process == 0 || n == 0 || !failure_.empty()) return call_.in;
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
  void local_fold(const void* head, std::size_t n, void* out, void* total) {
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
      if (failure_.empty() && guard_.failed) {
        chain_failure_ = marked(ErrorKind::op, std::string("the op threw: ") + guard_.message);
      }
      step_.relayed_failure = !failure_.empty()         ? failure_.c_str()
                              : !chain_failure_.empty() ? chain_failure_.c_str()
                                                        : nullptr;
    }
    local(c);
  }

  // Leader: C_{k+1} (n elements at `total`) to the next process.
  void chain_on(const void* total, std::size_t n) {
    if (layout_.process + 1 == layout_.processes() || n == 0 || !failure_.empty()) return;
    over_messages([&] {
      group_.channel().send(layout_.process + 1, total, n * call_.op.elem_size,
                            tags::left_fold_chain);
    });
  }

  // Leader: the last process's `result` (bytes) to every process.
  void broadcast_from_last(void* result, std::size_t bytes) {
    if (bytes == 0 || !failure_.empty()) return;
    over_messages([&] {
      inter::binomial_broadcast(group_.channel(), result, bytes, layout_.processes() - 1);
    });
  }

  void left_fold() {
    switch (call_.kind) {
      case CollectiveKind::allreduce: left_fold_allreduce(); break;
      case CollectiveKind::reduce: left_fold_reduce(); break;
      case CollectiveKind::scan:
      case CollectiveKind::exscan: left_fold_scan(); break;
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::reduce_scatter_block: left_fold_reduce_scatter(); break;
      default: throw Error("hybrid: internal step called directly");
    }
  }

  void left_fold_allreduce() {
    const std::size_t n = problem_.empty() ? call_.count : 0;
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

  void left_fold_reduce() {
    const ReduceSteps r = reduce_onto_leader(problem_.empty() ? call_.count : 0, true);
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
      if (r.root_process != last && r.n > 0 && failure_.empty()) {
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

  void left_fold_scan() {
    const std::size_t n = problem_.empty() ? call_.count : 0;
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
      if (exclusive && layout_.process > 0 && n > 0 && failure_.empty()) {
        std::memcpy(call_.out, carry_, n * call_.op.elem_size);
      }
      left_fold_status_round();
    }
    finish_copy(nullptr, nullptr, 0, 0);
  }

  void left_fold_reduce_scatter() {
    std::size_t whole = 0, my_offset = 0, my_count = 0;
    if (problem_.empty()) {
      for (int r = 0; r < total(); ++r) {
        if (r < me_.global_rank) my_offset += count_of(r);
        whole += count_of(r);
      }
      my_count = count_of(me_.global_rank);
    }
    // The whole vector, as for allreduce, in the leader's workspace.
    void* result = reduce_whole_onto_leader(whole, true);
    const void* head = call_.in;
    if (leader_ && agree_everywhere(whole)) head = chain_head(whole);
    local_fold(head, whole, result, nullptr);
    if (leader_) {
      chain_on(result, whole);
      broadcast_from_last(result, whole * call_.op.elem_size);
      left_fold_status_round();
    }
    finish_copy(result, call_.out, my_offset, my_count);
  }

  MemberState& me_;
  const Call& call_;
  ProcessStep step_;  // of the local step running now (base())
  InterProcessGroup& group_;
  const ProcessLayout& layout_;
  const bool leader_;
  const int first_;
  // The op as the leaders apply it, built at first use: the node level's
  // small calls never need it, and building it was a twentieth of theirs.
  const ErasedOp& guarded_op() {
    if (!guarded_op_) guarded_op_ = guard_.erased();
    return *guarded_op_;
  }
  GuardedOp guard_;
  std::optional<ErasedOp> guarded_op_;
  bool agreed_ = false;         // leader: step 2 has begun
  bool node_lost_ = false;      // leader: a process of the node died or timed out
  bool messages_lost_ = false;  // leader: a message exchange failed or timed out
  std::string problem_;         // this member's team-wide argument error
  std::string local_failure_;   // what step 1 threw here
  std::string failure_;         // leader: the failure every member must see
  // Left-fold chain (leader): the fold received from the previous process,
  // the op's failure on it, and the options of the local fold.
  void* carry_ = nullptr;
  std::string chain_failure_;
  CollectiveOptions fold_options_;
};

}  // namespace

void InterProcessGroup::execute(MemberState& me, const Call& call) {
  try {
    HybridCall(*this, me, call).run();
  } catch (const UnusableTeamError& e) {
    // Whatever told this process (its own wait, its node, its leader or
    // another node's, relayed as text), the team broke here too: usable()
    // says so from now on, on every process and whatever its role.
    me.team.break_team(e.what());
    throw;
  }
}

}  // namespace hreduce::detail
