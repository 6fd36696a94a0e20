// reduce_scatter for any op: a binomial reduce of the whole vector to member
// 0 (the generic executor on schedules::binomial(P, 0), which keeps rank
// order), then member 0 sends each block to its owner.
//
//   P = 4        reduce (binomial, whole vector)     scatter
//                step 1        step 2                 step 3
//                1→0  3→2      2→0                    0→1 0→2 0→3 (block b to b)
//
// ⌈log2 P⌉(α + mβ) + (P-1)(α + mβ/P): every member moves the whole vector,
// so this is the fallback for non-commutative ops, where pairwise exchange
// would combine out of rank order.
//
// The reduce runs on a workspace copy of the input, which also makes the
// in-place form (in == out, the block lands at the start of out) safe.
#include <string>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void reduce_then_scatter(Channel& channel, const void* in, void* out, const std::size_t* counts,
                         const ErasedOp& op, Workspace& workspace) {
  if (counts == nullptr) throw ArgumentError("reduce_then_scatter: counts is a null pointer");
  const int P = channel.size();
  const int me = channel.rank();
  const std::size_t es = op.elem_size;
  if (P == 1) {
    copy_if_distinct(out, in, counts[0] * es);
    return;
  }
  std::size_t total = 0;
  for (int i = 0; i < P; ++i) total += counts[i];

  void* whole = workspace.get(kSlotKeep, total * es);
  copy_if_distinct(whole, in, total * es);
  execute_schedule(channel, cached_binomial_schedule(P), whole, total, op, workspace,
                   tags::reduce_then_scatter_reduce);
  if (me == 0) {
    std::size_t offset = counts[0];
    for (int b = 1; b < P; ++b) {
      channel.send(b, bytes_at(whole, offset, es), counts[b] * es,
                   tags::reduce_then_scatter_scatter);
      offset += counts[b];
    }
    copy_if_distinct(out, whole, counts[0] * es);
  } else {
    channel.recv(0, out, counts[me] * es, tags::reduce_then_scatter_scatter);
  }
}

}  // namespace hreduce::detail::inter
