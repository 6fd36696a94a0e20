// Pairwise-exchange reduce_scatter. Member r owns block r of the reduced
// vector. In step s = 1 … P-1 it sends block (r + s) of its input straight
// to that block's owner and receives its own block from member (r - s),
// combining it into an accumulator:
//
//   P = 4      step 1       step 2       step 3
//   member 0   →1  ←3       →2  ←2       →3  ←1
//   member 1   →2  ←0       →3  ←3       →0  ←2
//   member 2   →3  ←1       →0  ←0       →1  ←3
//   member 3   →0  ←2       →1  ←1       →2  ←0
//
// Every input byte but one's own block is sent once, directly to where it is
// needed: (P-1)α + mβ(P-1)/P for blocks of equal size. The accumulator sees
// x_r, x_{r-1}, …, x_{r+1}: not rank order, so the algorithm is for
// commutative ops only; the order is fixed by P, so results are
// deterministic.
//
// In place (in == out): blocks of the input are still being sent until the
// last step, so the block accumulates in the workspace and lands at the
// start of out only at the end.
#include <string>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void pairwise_reduce_scatter(Channel& channel, const void* in, void* out, const std::size_t* counts,
                             const ErasedOp& op, Workspace& workspace) {
  require_commutative(op, "pairwise_reduce_scatter");
  if (counts == nullptr) throw ArgumentError("pairwise_reduce_scatter: counts is a null pointer");
  const int P = channel.size();
  const int me = channel.rank();
  const std::size_t es = op.elem_size;
  std::size_t my_offset = 0;
  for (int i = 0; i < me; ++i) my_offset += counts[i];
  const std::size_t my_n = counts[me];
  const std::size_t my_bytes = my_n * es;

  void* acc = in == out ? workspace.get(kSlotKeep, my_bytes) : out;
  copy_if_distinct(acc, bytes_at(in, my_offset, es), my_bytes);
  void* tmp = workspace.get(kSlotReceive, my_bytes);

  // Block `to` = me + s (mod P) and its offset, walked along with s.
  int to = me;
  std::size_t to_offset = my_offset;
  for (int s = 1; s < P; ++s) {
    to_offset += counts[to];
    if (++to == P) {
      to = 0;
      to_offset = 0;
    }
    const int from = (me - s + P) % P;
    channel.sendrecv(to, bytes_at(in, to_offset, es), counts[to] * es, from, tmp, my_bytes,
                     tags::pairwise_reduce_scatter);
    if (my_n > 0) op.apply(acc, tmp, acc, my_n);
  }
  copy_if_distinct(out, acc, my_bytes);
}

}  // namespace hreduce::detail::inter
