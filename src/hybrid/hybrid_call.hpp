// One collective call on a team spanning several processes, as the regimes
// run it (hybrid_execute.cpp draws the steps). This header is what they
// share: the call, this member, the group, the local steps around the
// leaders' work, and the failure every member must see. Each part lives in
// its own file:
//
//   hybrid_call.cpp          the argument checks and the local steps
//   agreement.cpp            the status rounds: do all processes make the
//                            same call, and did anything fail anywhere
//   by_messages.cpp          regime 1: processes exchange messages only
//   node_level.cpp           regime 2: processes of a node meet in their
//                            shared segment (src/node/)
//   left_fold.cpp            regime 3: shape_independent, a chain in rank
//                            order
//   pipelined_allreduce.cpp  a long allreduce of regimes 1 and 2, chunk by
//                            chunk
//
// Failures are values (src/common/failure.hpp): a kind and a text, carried
// as such between processes, through the node level and into the engine's
// local steps (ProcessStep::relayed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "src/common/failure.hpp"
#include "src/common/level_clock.hpp"
#include "src/engine/process_step.hpp"
#include "src/engine/team_state.hpp"
#include "src/hybrid/inter_process_group.hpp"

namespace hreduce::detail {

// An op that records the first exception instead of throwing it, so a
// leader whose op fails still sends every message its partners expect.
struct GuardedOp {
  const ErasedOp* inner = nullptr;
  bool failed = false;
  char message[200];  // written (terminated) when `failed` is set

  static void combine(const void* a, const void* b, void* out, std::size_t n, const void* self);
  ErasedOp erased() const;
};

// What the leaders agree on before data moves (and, for user ops, after):
// agreement.cpp.
struct CallStatus;

class HybridCall {
 public:
  HybridCall(InterProcessGroup& group, MemberState& me, const Call& call);
  void run();

 private:
  // One function per collective of a regime; run() picks the collective.
  struct Regime {
    void (HybridCall::*allreduce)();
    void (HybridCall::*reduce)();
    void (HybridCall::*scan)();  // and exscan
    void (HybridCall::*reduce_scatter)();
    void (HybridCall::*barrier)();
  };
  static const Regime kByMessages, kNodeLevel, kLeftFold;
  void run(const Regime& regime);

  // --- The call and its local steps (hybrid_call.cpp).
  int total() const { return layout_.total_members(); }
  std::size_t count_of(int team_rank) const;
  bool alone() const { return me_.team.size() == 1; }  // the process's one member
  void check_arguments();
  const Failure* problem() const;
  void local(Call step, bool rethrow = false);
  Call base(CollectiveKind kind);
  void finish_copy(const void* source, void* out, std::size_t offset, std::size_t count);
  static const Failure* relayed(const Failure& failure);
  std::uint64_t signature(std::size_t count) const;
  void fail(const Failure& failure);
  Failure op_failure() const;
  const ErasedOp& guarded_op();
  // A reduce_scatter's blocks, in elements of the whole vector (all zero
  // where the arguments are wrong): this member's, and its process's.
  struct Blocks {
    std::size_t whole = 0;
    std::size_t team_offset = 0, count = 0;  // this member's block
    std::size_t process_offset = 0, process_count = 0;
    std::size_t offset_in_process() const { return team_offset - process_offset; }
  };
  Blocks blocks() const;
  // A reduce's first and last steps, shared by every regime.
  struct ReduceSteps {
    std::size_t n = 0, bytes = 0;
    int root = 0, root_process = 0;
    bool root_leads = false;
    void* partial = nullptr;
  };
  ReduceSteps reduce_onto_leader(std::size_t n, bool checks_only);
  void hand_to_root(const ReduceSteps& r);
  void* reduce_whole_onto_leader(std::size_t whole, bool checks_only);
  bool combine_prefix(void* prefix, std::size_t n, bool exclusive, Failure& failure);
  void run_allreduce(InterAlgorithm algorithm, Channel& channel, void* buf, std::size_t n,
                     const ErasedOp& op);
  bool pipelined() const;

  // --- Agreement and status rounds (agreement.cpp).
  Channel& status_channel();
  CallStatus exchange(const CallStatus& s);
  CallStatus own_status(std::uint64_t sig, std::size_t count, const Failure& failure) const;
  void fail_from(const CallStatus& s);
  bool agree(std::size_t count);
  void confirm(std::size_t count);
  void status_round(const Failure& here);
  bool agree_everywhere(std::size_t count);
  template <class Exchanges>
  void over_messages(Exchanges&& exchanges);
  template <class Data>
  void leaders(std::size_t count, Data&& data);

  // --- Regime 1: messages only (by_messages.cpp).
  void allreduce_between_processes(void* buf, std::size_t count);
  void allreduce();
  void reduce();
  void scan();
  void reduce_scatter();
  void barrier();

  // --- Regime 2: the node level (node_level.cpp). Every call into
  // NodeGroup is there, through on_node() with node_info(), or in the
  // lone-member path (lone_member.hpp, which also turns the node's text
  // into a Failure).
  NodeGroup& node() { return *group_.node(); }
  bool node_first() const { return group_.node()->rank() == 0; }
  NodeCallInfo node_info(std::size_t count, const Failure& failure);
  template <class Operation>
  void on_node(Operation&& operation);
  template <class Data>
  void between_nodes(std::size_t count, void* buffer, std::size_t bytes, Data&& data);
  void node_reduce(const NodeReduction& r);
  void node_agree(std::size_t count);
  void node_status_round(const Failure& here);
  void node_allreduce(void* buffer, std::size_t count, const void* in = nullptr);
  bool alone_on_one_node();
  void* prefix_place(std::size_t n);
  void node_level_allreduce();
  void node_level_reduce();
  void node_level_scan();
  void node_level_scan_between_nodes(void* total, void* within, void* prefix, std::size_t n,
                                     Failure& failure);
  void alone_scan(std::size_t n, bool exclusive);
  void node_level_reduce_scatter();
  void node_level_barrier();

  // --- Regime 3: the left fold (left_fold.cpp).
  bool wants_left_fold() const;
  void left_fold_status_round();
  const void* chain_head(std::size_t n);
  void local_fold(const void* head, std::size_t n, void* out, void* total);
  void chain_on(const void* total, std::size_t n);
  void broadcast_from_last(void* result, std::size_t bytes);
  void left_fold_allreduce();
  void left_fold_reduce();
  void left_fold_scan();
  void left_fold_reduce_scatter();

  // --- A long allreduce, chunk by chunk (pipelined_allreduce.cpp).
  void allreduce_pipelined();
  void on_chunk(void* data, std::size_t count);

  MemberState& me_;
  const Call& call_;
  ProcessStep step_;  // of the local step running now (base())
  InterProcessGroup& group_;
  const ProcessLayout& layout_;
  const bool leader_;
  const int first_;
  // The op as the leaders apply it, built at first use: the node level's
  // small calls never need it.
  GuardedOp guard_;
  std::optional<ErasedOp> guarded_op_;
  bool agreed_ = false;         // leader: step 2 has begun
  bool node_lost_ = false;      // leader: a process of the node died or timed out
  bool messages_lost_ = false;  // leader: a message exchange failed or timed out
  Failure problem_;             // this member's team-wide argument error
  Failure local_failure_;       // what step 1 threw here
  Failure failure_;             // leader: the failure every member must see
  // Left-fold chain (leader): the fold received from the previous process,
  // the op's failure on it, and the options of the local fold.
  void* carry_ = nullptr;
  Failure chain_failure_;
  CollectiveOptions fold_options_;
};

// Runs the leader's message exchanges in `exchanges`. A message that never
// comes (a process stopped answering within the timeout) or an MPI error
// leaves the team unusable, as a lost process of the node does: the members
// are told through the local step that follows.
template <class Exchanges>
void HybridCall::over_messages(Exchanges&& exchanges) {
  LevelScope scope(CallLevel::between_nodes);
  if (messages_lost_) return;
  try {
    exchanges();
  } catch (const Error& e) {
    messages_lost_ = true;
    failure_ = Failure::of(e.kind(), std::string(to_string(call_.kind)) + ": " + e.what());
    me_.team.break_team(failure_);
  }
}

// Step 2, leader only: agree, run `data(op)` with the guarded op, confirm.
template <class Data>
void HybridCall::leaders(std::size_t count, Data&& data) {
  over_messages([&] {
    if (!agree(count)) return;
    data(guarded_op());
    confirm(count);
  });
}

}  // namespace hreduce::detail
