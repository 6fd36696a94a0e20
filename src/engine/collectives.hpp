// The data phases of the shared-memory collectives. execute() (execute.cpp)
// runs the common prologue — local argument checks, the arrive barrier, the
// agreement check — and then one of these.
#pragma once

#include <cstdint>
#include <string>

#include "src/engine/local_decision.hpp"
#include "src/engine/team_state.hpp"

namespace hreduce::detail {

// Everything a data phase needs about the call, resolved once.
struct CallContext {
  MemberState& me;
  TeamState& team;
  const Call& call;
  std::uint64_t seq;
  int slot;  // seq % kSlots
  Deadline deadline;
  // Read once: every atomic load in between would make the compiler fetch
  // them from the team again.
  int members = team.size();
  MemberControl* controls = &team.control(0);

  int size() const { return members; }
  const Announcement& of(int rank) const { return controls[rank].announce[slot]; }

  // Waits for `word >= seq`; on a timeout marks the team broken and throws
  // Error naming the member waited for and why.
  void wait_for(const std::atomic<std::uint64_t>& word, int rank, const char* what) const {
    wait_for(word, seq, rank, what);
  }
  // The same for `word >= target`.
  void wait_for(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
                const char* what) const;
  // Whether members [0, upto) announced this call with valid arguments and
  // member 0's history. Every member reads the same announcements.
  bool agree_before(int upto) const {
    const std::uint64_t history = of(0).history;
    bool agreed = true;
    for (int r = 0; r < upto; ++r) agreed &= !of(r).invalid & (of(r).history == history);
    return agreed;
  }
  // Whether member r left this call without waiting for every member, as
  // every member that compares concludes alike once all have announced.
  bool left_early(int r) const {
    const Leaving leaving = of(r).leaving;
    return leaving == Leaving::runs_ahead ||
           (leaving == Leaving::after_earlier && agree_before(r + 1));
  }
  // Publishes this member's `done` and waits for everybody else's (but
  // those who left early): after it, nobody reads anyone's buffers for
  // this call any more.
  void finish_together(const char* what) const;
  // Records an exception thrown by the op on this member.
  void record_failure(const std::string& message) const;
  // Throws on every member if any op threw during this call.
  void throw_if_failed() const;
};

// Elements each buffer must hold for member `rank` of a team of `size`.
inline std::size_t input_elements(const Call& call, int size) {
  switch (call.kind) {
    case CollectiveKind::reduce_scatter: {
      std::size_t total = 0;
      for (std::size_t i = 0; i < call.count; ++i) total += call.counts[i];
      return total;
    }
    case CollectiveKind::reduce_scatter_block: return call.count * size;
    default: return call.count;
  }
}

inline std::size_t output_elements(const Call& call, int rank) {
  switch (call.kind) {
    case CollectiveKind::reduce: return rank == call.root ? call.count : 0;
    case CollectiveKind::exscan: return rank == 0 ? 0 : call.count;
    case CollectiveKind::reduce_scatter: return call.counts[rank];
    case CollectiveKind::reduce_scatter_block: return call.count;
    default: return call.count;
  }
}

// A call on this member's team, spanning processes or not (execute.cpp).
void execute_call(MemberState& me, const Call& call);
// The shared-memory collective among this process's members (execute.cpp);
// a multi-process team composes its collectives from these.
void execute_local(MemberState& me, const Call& call);
// The argument errors of member `rank` of a team of `size` in `call`, as
// execute_local checks them; empty when fine. `team_options`: the team's
// defaults, validated when it was built.
std::string member_problem(const Call& call, int rank, int size,
                           const CollectiveOptions& team_options);

// Which of the paths below a call takes: local_choice() (local_decision.hpp).
// Tree reduce / allreduce (tree.cpp).
void tree_reduce(const CallContext& ctx);
void tree_allreduce(const CallContext& ctx);
// The data phase is mailbox_collective() (mailbox.hpp).
// Sliced reduce / allreduce / reduce_scatter / scan / exscan (sliced.cpp).
void sliced_reduce(const CallContext& ctx);
void sliced_allreduce(const CallContext& ctx);
void sliced_reduce_scatter(const CallContext& ctx);
void sliced_scan(const CallContext& ctx, bool exclusive);
// Steps of multi-process teams (from_root.cpp).
void copy_from_root(const CallContext& ctx);
void combine_from_root(const CallContext& ctx);
// Long allreduce of multi-process teams (pipeline.cpp).
void pipelined_allreduce(const CallContext& ctx);

}  // namespace hreduce::detail
