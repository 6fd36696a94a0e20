// Collectives of a team spanning several processes. Each is three steps:
//
//   1. local    the process's members combine through shared memory, the
//               partial result landing with the process's member 0 (its
//               leader) — the engine's own reduce or scan;
//   2. leaders  the leaders check that all processes called the same thing
//               (a small status allreduce), then run the inter-process
//               algorithm the cost model picked, over point-to-point
//               messages (src/algorithms/inter_*.cpp);
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
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "hreduce/error.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/hash.hpp"
#include "src/engine/team_state.hpp"
#include "src/hybrid/process_group.hpp"

namespace hreduce::detail {
namespace {

// Workspace slots of the hybrid layer, clear of the algorithms' own.
constexpr int kSlotPartial = 8;
constexpr int kSlotResult = 9;

// What the leaders agree on before data moves (and, for user ops, after).
struct Status {
  std::uint64_t sig_min = 0, sig_max = 0;
  std::int32_t sig_min_process = 0, sig_max_process = 0;
  std::int32_t kind_min = 0, kind_max = 0;
  std::uint64_t count_min = 0, count_max = 0;
  std::int32_t failed_process = INT32_MAX;  // the lowest process that failed
  char text[240] = {};

  friend bool operator==(const Status&, const Status&) = default;
};

Status merge(const Status& a, const Status& b) {
  Status s = a;
  if (b.sig_min < a.sig_min) {
    s.sig_min = b.sig_min, s.sig_min_process = b.sig_min_process, s.kind_min = b.kind_min,
    s.count_min = b.count_min;
  }
  if (b.sig_max > a.sig_max) {
    s.sig_max = b.sig_max, s.sig_max_process = b.sig_max_process, s.kind_max = b.kind_max,
    s.count_max = b.count_max;
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
  char message[200] = {};

  static void combine(const void* a, const void* b, void* out, std::size_t n, const void* self) {
    auto* guard = const_cast<GuardedOp*>(static_cast<const GuardedOp*>(self));
    if (guard->failed) return;
    try {
      guard->inner->apply(a, b, out, n);
    } catch (const std::exception& e) {
      guard->remember(e.what());
    } catch (...) {
      guard->remember("an exception not derived from std::exception");
    }
  }
  void remember(const char* what) {
    failed = true;
    std::strncpy(message, what, sizeof message - 1);
  }
  ErasedOp erased() const {
    ErasedOp op = *inner;
    op.combine = &GuardedOp::combine;
    op.op = this;
    return op;
  }
};

// Type identity that holds across processes: the mangled names.
std::uint64_t name_hash(const std::type_info* type) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char* c = type ? type->name() : ""; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  return h;
}

class HybridCall {
 public:
  HybridCall(MemberState& me, const Call& call)
      : me_(me), call_(call), group_(static_cast<InterProcessGroup&>(*me.team.group)), layout_(group_.layout()),
        leader_(me.rank == 0), first_(layout_.first_rank(layout_.process)) {
    guard_.inner = &call_.op;
    guarded_op_ = guard_.erased();
  }

  void run() {
    check_arguments();
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
    return call_.kind == CollectiveKind::reduce_scatter_block ? call_.count : call_.counts[team_rank];
  }

  // Checks that need the whole team's size; a failure is relayed through
  // step 1 so the process fails together.
  void check_arguments() {
    // Built only on failure: this runs on every call.
    auto prefix = [&] {
      return std::string(to_string(call_.kind)) + ": member " + std::to_string(me_.global_rank) + ": ";
    };
    if (call_.kind == CollectiveKind::reduce && (call_.root < 0 || call_.root >= total())) {
      problem_ = prefix() + "root " + std::to_string(call_.root) + " is outside 0.." +
                 std::to_string(total() - 1);
    } else if (call_.kind == CollectiveKind::reduce_scatter &&
               (call_.count != static_cast<std::size_t>(total()) || call_.counts == nullptr)) {
      problem_ = prefix() + "counts has " + std::to_string(call_.count) +
                 " entries but the team has " + std::to_string(total()) + " members";
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
      if (local_failure_.empty()) local_failure_ = e.what();
    }
  }

  // A local step of this call. Its ProcessStep (step_) starts from the
  // failure to relay; the step sets the rest of it before it runs.
  Call base(CollectiveKind kind) {
    step_ = ProcessStep{};
    step_.relayed_failure = problem();
    Call c = call_;
    c.kind = kind;
    c.step = &step_;
    return c;
  }

  // Step 3's shape for all: copy `count` elements from the leader's `source`.
  void finish_copy(const void* source, void* out, std::size_t offset, std::size_t count) {
    Call c = base(CollectiveKind::copy_from_root);
    c.root = 0;
    c.in = source;
    c.out = out;
    c.count = count;
    step_.offset = offset;
    step_.relayed_failure = leader_ && !failure_.empty() ? failure_.c_str() : nullptr;
    local(c, true);
  }

  std::uint64_t signature(std::size_t count) const {
    std::uint64_t h = mix(0, static_cast<std::uint64_t>(call_.kind));
    h = mix(h, count);
    h = mix(h, static_cast<std::uint64_t>(call_.kind == CollectiveKind::reduce ? call_.root : 0));
    h = mix(h, call_.op.elem_size);
    h = mix(h, name_hash(call_.op.type));
    h = mix(h, name_hash(call_.op.op_type));
    if (call_.kind == CollectiveKind::reduce_scatter && problem_.empty()) {
      for (int r = 0; r < total(); ++r) h = mix(h, call_.counts[r]);
    }
    return h;
  }

  void fail(const std::string& why) {
    if (failure_.empty()) failure_ = why;
  }

  Status exchange(Status s) {
    inter::recursive_doubling_allreduce(group_.channel(), &s, 1, status_op(), group_.workspace);
    return s;
  }

  Status own_status(std::uint64_t sig, std::size_t count, const std::string& failure) const {
    Status s;
    s.sig_min = s.sig_max = sig;
    s.sig_min_process = s.sig_max_process = layout_.process;
    s.kind_min = s.kind_max = static_cast<std::int32_t>(call_.kind);
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
      fail(std::string(to_string(call_.kind)) + ": processes disagree on the call: process " +
           std::to_string(s.sig_min_process) + " called " +
           to_string(static_cast<CollectiveKind>(s.kind_min)) + " with count " +
           std::to_string(s.count_min) + ", process " + std::to_string(s.sig_max_process) +
           " called " + to_string(static_cast<CollectiveKind>(s.kind_max)) + " with count " +
           std::to_string(s.count_max) + " (or a different element type, op, root or counts)");
    }
    return failure_.empty();
  }

  // Step 2 ends: a user op may have thrown meanwhile, here or elsewhere.
  void confirm(std::size_t count) {
    if (!call_.op.may_throw) return;
    const std::string here = guard_.failed ? std::string("the op threw: ") + guard_.message
                                           : local_failure_;
    fail_from(exchange(own_status(signature(count), count, here)));
  }

  // Step 2, leader only: agree, run `data(op)` with the guarded op, confirm.
  template <class Data>
  void leaders(std::size_t count, Data&& data) {
    if (!agree(count)) return;
    data(guarded_op_);
    confirm(count);
  }

  // The inter-process part of allreduce on `count` elements at `buf`.
  void allreduce_between_processes(void* buf, std::size_t count) {
    const ErasedOp& op = guarded_op_;
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

  bool pipelined() const {
    const InterOptions& o = group_.options();
    return o.pipeline_min_bytes > 0 && o.pipeline_chunk_bytes > 0 &&
           call_.count * call_.op.elem_size >= o.pipeline_min_bytes && problem_.empty();
  }

  // Long vectors: the three steps overlap chunk by chunk (pipeline.cpp);
  // each reduced chunk comes back here on the leader.
  void allreduce_pipelined() {
    const std::size_t n = call_.count;
    Call c = base(CollectiveKind::pipelined_allreduce);
    step_.chunk =
        std::max<std::size_t>(1, group_.options().pipeline_chunk_bytes / call_.op.elem_size);
    step_.on_chunk = [](void* self, void* data, std::size_t count) {
      static_cast<HybridCall*>(self)->on_chunk(data, count);
    };
    step_.on_chunk_context = this;
    local(c);
    if (leader_) {
      if (!agreed_) {
        agree(n);  // step 1 failed before any chunk: tell the others
      } else if (failure_.empty()) {
        confirm(n);
      }
    }
    finish_copy(nullptr, nullptr, 0, 0);
  }

  void on_chunk(void* data, std::size_t count) {
    if (!agreed_) agree(call_.count);
    if (failure_.empty()) allreduce_between_processes(data, count);
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

  void reduce() {
    const std::size_t n = call_.count;
    const int root = problem_.empty() ? call_.root : 0;
    const int root_process = layout_.process_of(root);
    const bool root_leads = layout_.first_rank(root_process) == root;
    const std::size_t bytes = n * call_.op.elem_size;
    // The leader reduces into the output only if it is the root itself.
    void* partial = nullptr;
    if (leader_) {
      partial = me_.global_rank == root ? call_.out : group_.workspace.get(kSlotPartial, bytes);
    }
    Call c = base(CollectiveKind::reduce);
    c.root = 0;
    c.out = partial;
    local(c);
    if (leader_) {
      leaders(n, [&](const ErasedOp& op) {
        inter::binomial_reduce(group_.channel(), partial, n, op, root_process, group_.workspace);
      });
    }
    const bool receives = me_.global_rank == root && !root_leads;
    finish_copy(partial, receives ? call_.out : nullptr, 0, receives ? n : 0);
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
    // Lower processes' prefix on the left of each member's own.
    Call combine = base(CollectiveKind::combine_from_root);
    combine.root = 0;
    combine.in = prefix;
    combine.count = layout_.process > 0 ? n : 0;
    step_.copy_only = exclusive && me_.rank == 0;
    step_.relayed_failure = leader_ && !failure_.empty() ? failure_.c_str() : nullptr;
    if (!call_.op.may_throw) {
      local(combine, true);
      return;
    }
    // A user op may still throw in the combine: one more round tells all.
    // Every member goes on to that round, whatever it caught, so the
    // process leaves together; a failure known to all leaders already
    // (failure_) needs no second exchange.
    std::string step3_failure;
    try {
      execute_local(me_, combine);
    } catch (const Error& e) {
      step3_failure = e.what();
    }
    if (leader_ && failure_.empty()) {
      const Status s = exchange(own_status(0, 0, step3_failure));
      if (s.failed_process != INT32_MAX) {
        fail(std::string(to_string(call_.kind)) + ": process " + std::to_string(s.failed_process) +
             " failed: " + s.text);
      }
    }
    finish_copy(nullptr, nullptr, 0, 0);
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
    void* partial = leader_ ? group_.workspace.get(kSlotPartial, whole * es) : nullptr;
    Call c = base(CollectiveKind::reduce);
    c.root = 0;
    c.count = whole;
    c.counts = nullptr;
    c.in_size = call_.in == call_.out ? SIZE_MAX : call_.in_size;
    c.out_size = SIZE_MAX;
    c.out = partial;
    local(c);
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

  MemberState& me_;
  const Call& call_;
  ProcessStep step_;  // of the local step running now (base())
  InterProcessGroup& group_;
  const ProcessLayout& layout_;
  const bool leader_;
  const int first_;
  GuardedOp guard_;            // the op as the leaders apply it
  ErasedOp guarded_op_;
  bool agreed_ = false;        // leader: step 2 has begun
  std::string problem_;        // this member's team-wide argument error
  std::string local_failure_;  // what step 1 threw here
  std::string failure_;        // leader: the failure every member must see
};

}  // namespace

void InterProcessGroup::execute(MemberState& me, const Call& call) { HybridCall(me, call).run(); }

}  // namespace hreduce::detail
