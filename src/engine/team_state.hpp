// The shared state of a team: one control block per member (the only memory
// members write for each other to read), the error record, and each
// member's private working state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hreduce/team.hpp"
#include "src/common/failure.hpp"
#include "src/common/wait.hpp"
#include "src/engine/local_decision.hpp"
#include "src/engine/nonblocking/call_queue.hpp"
#include "src/engine/numa_placement.hpp"
#include "src/engine/process_step.hpp"
#include "src/topology/numa_memory.hpp"

namespace hreduce::detail {

// What is wrong with collective options ("" when nothing): checked when a
// team is built (its defaults) and when a call starts (the call's).
std::string options_problem(const CollectiveOptions& options);
inline bool options_valid(const CollectiveOptions& o) {
  return (o.algorithm == Algorithm::automatic || o.algorithm == Algorithm::tree ||
          o.algorithm == Algorithm::sliced) &
         (static_cast<unsigned>(o.tree) <= static_cast<unsigned>(TreeShape::chain)) &
         (o.radix >= 2) & (o.chunk_bytes >= 1) & (o.tree_min_members >= 1) &
         (static_cast<unsigned>(o.reproducibility) <=
          static_cast<unsigned>(Reproducibility::exact));
}

// Control words written by different members sit on their own cache lines
// (and 128-byte pairs, for CPUs that prefetch lines two at a time).
inline constexpr std::size_t kControlAlign = 128;

// What a member says about its call. Every field that must agree across
// members feeds `signature`, so the agreement check reads one word per
// member; the rest is for building a precise message when they disagree.
struct Descriptor {
  CollectiveKind kind = CollectiveKind::barrier;
  int root = 0;
  std::size_t count = 0;
  const std::size_t* counts = nullptr;
  std::size_t elem_size = 0;
  const std::type_info* type = nullptr;
  const std::type_info* op_type = nullptr;
  const char* op_name = "";
  CollectiveOptions options;
};

static_assert(sizeof(Descriptor) == 96, "a new field of Descriptor belongs in describes() too");

inline Descriptor describe(const Call& call) {
  return {call.kind,    call.root,       call.count,      call.counts,  call.op.elem_size,
          call.op.type, call.op.op_type, call.op.op_name, *call.options};
}

// Whether describe(call) would give `d`, without building it: every call
// asks. Non-short-circuit `&` leaves one branch instead of one per field.
inline bool describes(const Descriptor& d, const Call& call) {
  const CollectiveOptions& a = d.options;
  const CollectiveOptions& b = *call.options;
  const bool same_options =
      (a.algorithm == b.algorithm) & (a.tree == b.tree) & (a.radix == b.radix) &
      (a.chunk_bytes == b.chunk_bytes) & (a.tree_max_bytes == b.tree_max_bytes) &
      (a.tree_min_members == b.tree_min_members) & (a.reproducibility == b.reproducibility);
  return same_options & (d.kind == call.kind) & (d.root == call.root) & (d.count == call.count) &
         (d.counts == call.counts) & (d.elem_size == call.op.elem_size) & (d.type == call.op.type) &
         (d.op_type == call.op.op_type) & (d.op_name == call.op.op_name);
}

// Announcement slots per member: a member writes slot (seq % kSlots) for
// call `seq`, and first makes sure every other member has left call
// seq - kSlots (execute.cpp). A member that only contributes to a small
// call returns without waiting for the others (mailbox.hpp), so it may be
// up to kSlots - 1 calls ahead of the slowest member.
inline constexpr int kSlots = 8;

// What a member remembers of the call in one of its slots. Other members
// read it only to word an error, while that call is still theirs: the slot,
// and so the record, is rewritten only after every member has left the call.
struct CallRecord {
  Descriptor descriptor;
  std::uint64_t signature = 0;       // of `descriptor`
  std::uint64_t history_before = 0;  // Announcement::history of the call before
  bool described = false;
  // The level the user asked for (ProcessStep::asked_level), which the
  // descriptor's options lack in an exact sum's steps.
  Reproducibility asked_level = Reproducibility::run_to_run;
};

// A slot's seq after the team broke: every waiter wakes up, sees the team
// broken and throws, instead of waiting for a member that has left.
inline constexpr std::uint64_t kBrokenSeq = UINT64_MAX;

// How a member leaves a call, in its announcement (mailbox.hpp).
enum class Leaving : std::uint8_t {
  waits_for_all,  // after every member announced
  runs_ahead,     // at once, having only contributed
  after_earlier,  // a scan's or exscan's: once the members before it
                  // announced, if they and it agree (CallContext::left_early)
};

struct alignas(kControlAlign) Announcement {
  // What every other member reads on every call shares the first line.
  std::atomic<std::uint64_t> seq{0};  // = call number once the fields below are set
  // A digest of the signatures of all this member's calls up to this one.
  // Comparing it checks this call's agreement and also every earlier call
  // that no member checked because all returned without waiting.
  std::uint64_t history = 0;
  bool invalid = false;  // this member's arguments failed its local checks
  bool relayed = false;  // ... or it relays another process's failure
  Leaving leaving = Leaving::waits_for_all;
  const void* in = nullptr;
  void* out = nullptr;
  void* total_out = nullptr;  // scan / exscan of a multi-process team
  // A copy of the input, for calls small enough to go by mailbox. Up to
  // 16 bytes it shares the first line, and arrives with `seq` in one
  // transfer: a second line took over a third of an exchange between two
  // cores. Longer inputs start on a line of their own, so that the copy and
  // the fold do not split vectors across lines. 16-byte alignment suits
  // every predefined type.
  alignas(16) std::byte short_payload[16];
  alignas(64) std::byte payload[kMailboxBytes];
  // The announcing member's record of this slot (set when the team is
  // built), read only to word an error.
  const CallRecord* record = nullptr;

  std::byte* payload_for(std::size_t bytes) {
    return bytes <= sizeof short_payload ? short_payload : payload;
  }
  const std::byte* payload_for(std::size_t bytes) const {
    return bytes <= sizeof short_payload ? short_payload : payload;
  }
};
static_assert(offsetof(Announcement, short_payload) + 16 <= 64, "short inputs share seq's line");

struct MemberControl {
  Announcement announce[kSlots];
  // Tree: `partial` holds this member's final partial result for call
  // `partial_ready`. Sliced reduce_scatter: `partial` is the scratch holding
  // this member's slice for in-place owners.
  alignas(kControlAlign) std::atomic<std::uint64_t> partial_ready{0};
  const void* partial = nullptr;
  // The member finished its part of call `done`.
  alignas(kControlAlign) std::atomic<std::uint64_t> done{0};
  // pipelined_allreduce: (call << 24) + chunks this member has finished.
  alignas(kControlAlign) std::atomic<std::uint64_t> chunks{0};
};

// This member's part in one tree (plan_tree): whom to combine, in executor
// order.
struct TreeRole {
  int tree_root = 0;
  int parent = -1;
  std::vector<int> children;             // executor combine order
  std::vector<bool> child_has_children;  // those publish partial_ready
};

class TeamState;
class ProcessGroup;
class PendingCalls;

// Pool growths in this process: a steady state must not add to it (tests).
std::uint64_t pool_growth_count();

// A member's private state. Only its own thread touches it, except through
// `control`.
class MemberState {
 public:
  MemberState(TeamState& team, int rank, int global_rank, int pu, int numa)
      : team(team), rank(rank), global_rank(global_rank), pu(pu), numa(numa) {}

  // Working memory on this member's NUMA node, grown (never shrunk) on this
  // member's thread so first touch lands there too. `which`: 0 the tree's
  // accumulator, 1 and 2 the sliced path's, 3 and 4 the exact sum's integers
  // (exact_sum.cpp), which live across the calls that use 0 to 2.
  void* scratch(int which, std::size_t bytes);

  TeamState& team;
  const int rank;         // among this process's members: the engine's rank
  const int global_rank;  // in the whole team (differs when it spans processes)
  const int pu;
  const int numa;
  std::uint64_t seq = 0;
  MemberControl* control = nullptr;
  // The calls of each slot. Calls mostly repeat, and comparing a slot's
  // previous description with the new call is cheaper than hashing it again
  // (8 dependent multiplies on the way to publishing).
  CallRecord records[kSlots];
  std::uint64_t history = 0;  // what this member's latest Announcement::history says
  // Every other member has announced at least this call, so slots of calls
  // up to everyone_reached + kSlots - 1 are free to write.
  std::uint64_t everyone_reached = 0;
  // Calls in a row this member returned from without waiting for every
  // member (mailbox.hpp).
  int calls_run_ahead = 0;
  std::map<std::tuple<int, int, int, bool>, TreeRole> plans;
  // A team spanning processes: this member's nonblocking calls, made by
  // the first (src/engine/nonblocking/request.cpp); a blocking call lets
  // them finish first (execute_call).
  std::unique_ptr<CallQueue> queued_calls;

 private:
  NumaBuffer buffers_[5];
};

class TeamState {
 public:
  // `group`: the other processes of a multi-process team, or null.
  TeamState(TeamOptions options, std::unique_ptr<ProcessGroup> group = nullptr);
  ~TeamState();

  int size() const { return static_cast<int>(members.size()); }
  MemberControl& control(int rank) { return controls_[rank]; }

  // The failures of call `seq`, one per member at most (error path only,
  // hence the mutex).
  void record_failure(std::uint64_t seq, int rank, Failure failure);
  // All of them in rank order, "member r: text; member s: text", of the
  // first kind that says more than `argument`.
  Failure failures_of(std::uint64_t seq);
  // Marks the team unusable; the first reason given is kept for the
  // members that learn of it later.
  void break_team(Failure reason);
  Failure broken_failure();
  // Every member's progress back to the start, as built (Team::resynchronize;
  // no member may be inside a call).
  void restart();

  TeamOptions options;
  Topology topology;
  Placement placement;
  // Who folds which slice, and the NUMA node each member's memory belongs on.
  NumaPlan numa_plan;
  std::vector<Level> levels;
  std::chrono::milliseconds timeout;
  std::vector<std::unique_ptr<MemberState>> members;
  std::unique_ptr<ProcessGroup> group;
  // Team::allocate's memory where no process shares it (freed with the team).
  std::vector<NumaBuffer> private_allocations;
  int total_members = 0;  // across all processes
  // How members wait (wait.hpp): spins are short when members share CPUs.
  Waiting waiting;
  // Members that only contribute to a mailbox call may return without
  // waiting (mailbox.hpp): TeamOptions::run_ahead, and someone to run
  // ahead of.
  bool members_may_run_ahead = false;
  // The latest call in which some member's op threw.
  alignas(kControlAlign) std::atomic<std::uint64_t> error_seq{0};
  // Set after a timeout, or an error in a call that some member had
  // already left: members are no longer in step.
  std::atomic<bool> broken{false};
  // A team spanning processes, set where it is built (src/hybrid/
  // mpi_team.cpp): why its nonblocking calls are refused (empty: served),
  // and what the queue threads that run them do first (call_queue.hpp).
  std::string nonblocking_refusal;
  void (*queue_thread_start)() = nullptr;
  // The nonblocking and persistent calls, built by the first one
  // (src/engine/nonblocking/pending_calls.hpp).
  std::once_flag pending_calls_once;
  std::unique_ptr<PendingCalls> pending_calls;

 private:
  Failure broken_reason_;
  std::unique_ptr<MemberControl[]> controls_;
  std::mutex error_mutex_;
  std::map<std::pair<std::uint64_t, int>, Failure> failures_;
};

}  // namespace hreduce::detail
