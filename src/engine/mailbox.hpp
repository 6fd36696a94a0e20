// Small vectors by mailbox: one synchronisation per call instead of two,
// and none for members that only contribute.
//
// The tree and sliced paths read the other members' buffers where they lie,
// so a member may return only when everyone is done reading its buffers: a
// call synchronises twice (arrive, then finish), and for a few cache lines
// the two rounds of cross-core traffic are most of the time. Here each member
// copies its input into its own announcement before publishing it; after the
// arrive barrier and the agreement check (execute.cpp) a member computes its
// output from those copies and returns at once, because nobody will read its
// buffers. The copies live in the announcement slot of the call (seq %
// kSlots), which a member rewrites only after every member has left the call
// that slot held.
//
// Running ahead: a member whose output needs nobody else's input — any
// member but the root of a reduce, member 0 of a scan or an exscan — does
// not even wait for the others. It copies its input, publishes, and
// returns, like an MPI eager send; back-to-back calls then overlap instead
// of each paying a cross-core exchange. The members that wait check its
// history of call signatures (execute.cpp). It runs at most kSlots - 1
// calls ahead of the slowest member (the slots), and after
// kRunAheadLimit calls in a row it waits once, so that members that all run
// ahead because they disagree (on the root, say) are caught.
//
// Leaving after the earlier members: in a scan or exscan, a member but the
// first and the last needs only the members before it. It waits for their
// announcements alone and, if they and it agree (valid arguments, member
// 0's history), folds its prefix and leaves on the same terms as one that
// ran ahead; the last member compares everyone. Otherwise it waits for
// every member as in any other call. Whether it left is read from the
// announcements alike by every member that compares
// (CallContext::left_early).
//
// Every member folds in rank order, acc = x_0 ∘ x_1 ∘ …, exactly as the
// sliced path does: the bits are the same whichever path a call takes.
// Only ops that cannot throw come here: a member that returned early could
// not learn that another member's op threw.
//
// Inline, in execute_local(): a call of its own cost 20 instructions of
// saving and restoring registers, a tenth of a one-member call.
#pragma once

#include "src/common/copy.hpp"
#include "src/engine/collectives.hpp"

namespace hreduce::detail {

// Calls this thread has made by mailbox (tests check the path is taken).
inline thread_local std::uint64_t mailbox_calls_on_this_thread = 0;

// Calls in a row a member may return from without waiting.
inline constexpr int kRunAheadLimit = 32;

// How a member of a call going by mailbox leaves it: without waiting where
// it only contributes (a reduce's member but the root, a scan's or exscan's
// first); after the members before it where it needs only theirs (a scan's
// or exscan's members but the first and the last, which compares
// everyone's announcement); else once every member announced. Leaving
// early asks the team's run_ahead and at most kRunAheadLimit such calls in
// a row.
inline Leaving mailbox_leaving(const Call& call, const MemberState& me) {
  if (!me.team.members_may_run_ahead || me.calls_run_ahead >= kRunAheadLimit) {
    return Leaving::waits_for_all;
  }
  const bool scan = call.kind == CollectiveKind::scan || call.kind == CollectiveKind::exscan;
  if (call.kind == CollectiveKind::reduce ? me.rank != call.root : scan && me.rank == 0) {
    return Leaving::runs_ahead;
  }
  if (scan && me.rank + 1 < me.team.size()) return Leaving::after_earlier;
  return Leaving::waits_for_all;
}

// out = x_0 ∘ … ∘ x_{ranks-1} over elements [first, first + n) of the
// copies, of `input_bytes` each.
inline void fold_ranks(const CallContext& ctx, std::size_t input_bytes, int ranks,
                       std::size_t first, std::size_t n, void* out) {
  const std::size_t offset = first * ctx.call.op.elem_size;
  const auto copy_of = [&](int r) { return ctx.of(r).payload_for(input_bytes) + offset; };
  if (ranks == 1) {
    copy_bytes(out, copy_of(0), n * ctx.call.op.elem_size);
    return;
  }
  ctx.call.op.apply(copy_of(0), copy_of(1), out, n);
  for (int q = 2; q < ranks; ++q) ctx.call.op.apply(out, copy_of(q), out, n);
}

// The data phase: folds the announced copies, no second synchronisation.
inline void mailbox_collective(const CallContext& ctx, std::size_t input_bytes) {
  ++mailbox_calls_on_this_thread;
  const Call& call = ctx.call;
  const int rank = ctx.me.rank;
  // Folds the copies of the first `ranks` members into this member's output.
  const auto fold = [&](int ranks, std::size_t first) {
    fold_ranks(ctx, input_bytes, ranks, first, call.count, call.out);
  };
  switch (call.kind) {
    case CollectiveKind::reduce:
      if (rank == call.root) fold(ctx.size(), 0);
      break;
    case CollectiveKind::allreduce: fold(ctx.size(), 0); break;
    case CollectiveKind::reduce_scatter_block: fold(ctx.size(), rank * call.count); break;
    case CollectiveKind::scan: fold(rank + 1, 0); break;
    case CollectiveKind::exscan:
      if (rank > 0) fold(rank, 0);
      break;
    default: break;
  }
}

}  // namespace hreduce::detail
