// Small nonblocking calls go by the slot, as the blocking calls go by
// mailbox (mailbox.hpp): each member copies its input into the first line
// of its part of the slot, with the call's number, and folds its own
// output from every member's copy once all have published. One transfer of
// a line between members, where the chunks' way (an opener, a claim, a
// completion word) takes several. The same rank-order fold, so the same
// bits. A member's output is written by that member, at its test() or
// wait(); the slot is reused once every member is done with it.
#include "src/common/copy.hpp"
#include "src/common/fold.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/nonblocking/pending_calls.hpp"

namespace hreduce::detail {

bool goes_small(const Call& call, int members) {
  if (call.op.may_throw) return false;
  const std::size_t bytes = input_elements(call, members) * call.op.elem_size;
  return bytes > 0 && bytes <= kSmallCallBytes;
}

namespace {

// Where member `rank`'s block starts in the vector of a reduce_scatter.
std::size_t block_start(const Call& call, int rank) {
  if (call.kind == CollectiveKind::reduce_scatter_block) return call.count * rank;
  std::size_t start = 0;
  for (int q = 0; q < rank; ++q) start += call.counts[q];
  return start;
}

}  // namespace

void fold_small(const PendingSlot& slot, int members, int rank) {
  const Call& mine = *slot.members[rank].call;
  const std::size_t es = mine.op.elem_size;
  int ranks = members;  // inputs folded: x_0 … x_{ranks-1}
  std::size_t from = 0, n = mine.count;
  switch (mine.kind) {
    case CollectiveKind::reduce:
      if (rank != mine.root) return;
      break;
    case CollectiveKind::scan: ranks = rank + 1; break;
    case CollectiveKind::exscan:
      if (rank == 0) return;
      ranks = rank;
      break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block:
      from = block_start(mine, rank);
      n = output_elements(mine, rank);
      break;
    default: break;
  }
  if (n == 0) return;
  fold_in_rank_order(
      mine.op, ranks, [&](int q) { return slot.members[q].payload + from * es; }, mine.out, n);
}

}  // namespace hreduce::detail
