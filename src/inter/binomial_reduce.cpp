// Binomial-tree reduce: the generic executor (schedule_executor.cpp) on
// schedules::binomial(P, 0). In step s the members that are odd multiples of
// 2^(s-1) send their partial result 2^(s-1) ranks down, so after step s
// member v (a multiple of 2^s) holds x_v ∘ … ∘ x_{v+2^s-1}: every partial
// result covers a contiguous rank range, and the lower range is always the
// left operand. ⌈log2 P⌉ steps of the whole vector, (α + mβ) each.
//
//   P = 8     step 1            step 2       step 3
//             1→0 3→2 5→4 7→6   2→0 6→4      4→0
//   member 0: [0]  →  [0,1]  →  [0,3]    →   [0,7]
//
// The tree is rooted at member 0 even for another root: rotating it to the
// root (as schedules::binomial(P, root) does) would make the ranges wrap
// around and break rank order for a non-commutative op, so member 0 forwards
// the finished result to the root instead, one more α + mβ.
#include <string>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void binomial_reduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op, int root,
                     Workspace& workspace) {
  const int P = channel.size();
  if (root < 0 || root >= P) {
    throw ArgumentError("binomial_reduce: root " + std::to_string(root) + " is outside 0.." +
                        std::to_string(P - 1));
  }
  execute_schedule(channel, cached_binomial_schedule(P), buf, n, op, workspace,
                   tags::binomial_reduce);
  if (root == 0) return;
  const int me = channel.rank();
  const std::size_t bytes = n * op.elem_size;
  if (me == 0) channel.send(root, buf, bytes, tags::binomial_forward);
  if (me == root) channel.recv(0, buf, bytes, tags::binomial_forward);
}

}  // namespace hreduce::detail::inter
