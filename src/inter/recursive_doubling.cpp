// Recursive-doubling allreduce. On a power of two p', in step k every
// virtual rank v swaps its whole vector with v XOR 2^k and combines, the
// lower virtual rank's vector on the left. Before step k, v holds the
// reduction of its aligned block of 2^k virtual ranks; the partner holds the
// adjacent block, so afterwards both hold the block of 2^(k+1):
//
//   p' = 8        step 0 (^1)    step 1 (^2)    step 2 (^4)
//   v = 0 holds   [0,1]          [0,3]          [0,7]
//   v = 5 holds   [4,5]          [4,7]          [0,7]
//
// log2 p' steps of (α + mβ). Both partners combine the same two operands in
// the same order, so all members end bitwise identical. Other P go through
// the fold/unfold steps (power_of_two_fold.cpp): two more messages.
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void recursive_doubling_allreduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                                  Workspace& workspace) {
  const std::size_t bytes = n * op.elem_size;
  void* tmp = workspace.get(kSlotReceive, bytes);
  const PowerOfTwoFold fold =
      fold_to_power_of_two(channel, buf, n, op, tmp, tags::recursive_doubling_fold);
  if (fold.vrank >= 0) {
    const int v = fold.vrank;
    int k = 0;
    for (int mask = 1; mask < fold.pow2; mask <<= 1, ++k) {
      const int partner_v = v ^ mask;
      const int partner = real_rank(fold, partner_v);
      channel.sendrecv(partner, buf, bytes, partner, tmp, bytes, tags::recursive_doubling_step + k);
      if (n == 0) continue;
      if (partner_v < v) {
        op.apply(tmp, buf, buf, n);
      } else {
        op.apply(buf, tmp, buf, n);
      }
    }
  }
  unfold_from_power_of_two(channel, fold, buf, bytes, tags::recursive_doubling_unfold);
}

}  // namespace hreduce::detail::inter
