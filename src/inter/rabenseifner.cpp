// Rabenseifner's allreduce: a reduce-scatter by recursive halving of the
// data, then an allgather by recursive doubling, on p' (a power of two)
// virtual ranks; other P go through the fold/unfold steps
// (power_of_two_fold.cpp).
//
// Reduce-scatter. The distance doubles (partner v XOR 1, 2, 4, …) while the
// data halves: in each step partners share the same range of the vector,
// split it in two, each keeps one half (the lower virtual rank the lower
// half), sends the other half and combines what it receives into the half
// it keeps. The distance doubling, rather than MPICH's halving, is what
// keeps rank order: each combine joins two adjacent blocks of virtual ranks,
// the lower one on the left.
//
//   p' = 4, vector [A B C D]         after ^1                after ^2
//   v = 0   A0 B0 C0 D0      keeps   AB[0,1]          keeps  A[0,3]
//   v = 1   A1 B1 C1 D1      keeps   CD[0,1]          keeps  C[0,3]
//   v = 2   A2 B2 C2 D2      keeps   AB[2,3]          keeps  B[0,3]
//   v = 3   A3 B3 C3 D3      keeps   CD[2,3]          keeps  D[0,3]
//
// Allgather. The same exchanges in reverse (XOR …, 4, 2, 1): partners swap
// the pieces they own, and the owned range doubles back to the whole vector.
// Each element is combined by exactly one member and then copied, so all
// members end bitwise identical.
//
// 2 log2 p' messages per member, each half the size of the one before:
// 2α log2 p' + 2mβ(p'-1)/p'. Ranges are halved element-wise, so n < p'
// gives empty pieces and still works.
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void rabenseifner_allreduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                            Workspace& workspace) {
  const std::size_t es = op.elem_size;
  void* tmp = workspace.get(kSlotReceive, n * es);
  const PowerOfTwoFold fold =
      fold_to_power_of_two(channel, buf, n, op, tmp, tags::rabenseifner_fold);
  if (fold.vrank >= 0) {
    const int v = fold.vrank;
    // The range [lo[k], hi[k]) this member owns after reduce-scatter step k.
    std::size_t lo[32];
    std::size_t hi[32];
    int steps = 0;
    std::size_t cur_lo = 0;
    std::size_t cur_hi = n;
    for (int mask = 1; mask < fold.pow2; mask <<= 1, ++steps) {
      const int partner = real_rank(fold, v ^ mask);
      const std::size_t mid = cur_lo + (cur_hi - cur_lo) / 2;
      const bool lower = (v & mask) == 0;
      const std::size_t keep_lo = lower ? cur_lo : mid;
      const std::size_t keep_hi = lower ? mid : cur_hi;
      const std::size_t send_lo = lower ? mid : cur_lo;
      const std::size_t send_hi = lower ? cur_hi : mid;
      const std::size_t keep_n = keep_hi - keep_lo;
      channel.sendrecv(partner, bytes_at(buf, send_lo, es), (send_hi - send_lo) * es, partner, tmp,
                       keep_n * es, tags::rabenseifner_scatter_step + steps);
      if (keep_n > 0) {
        std::byte* mine = bytes_at(buf, keep_lo, es);
        if (lower) {
          op.apply(mine, tmp, mine, keep_n);
        } else {
          op.apply(tmp, mine, mine, keep_n);
        }
      }
      lo[steps] = cur_lo = keep_lo;
      hi[steps] = cur_hi = keep_hi;
    }
    for (int k = steps - 1; k >= 0; --k) {
      const int partner = real_rank(fold, v ^ (1 << k));
      // The partner owns the other half of the range both owned before step k.
      const std::size_t parent_lo = k > 0 ? lo[k - 1] : 0;
      const std::size_t parent_hi = k > 0 ? hi[k - 1] : n;
      const bool lower = (v & (1 << k)) == 0;
      const std::size_t other_lo = lower ? hi[k] : parent_lo;
      const std::size_t other_hi = lower ? parent_hi : lo[k];
      channel.sendrecv(partner, bytes_at(buf, lo[k], es), (hi[k] - lo[k]) * es, partner,
                       bytes_at(buf, other_lo, es), (other_hi - other_lo) * es,
                       tags::rabenseifner_gather_step + k);
    }
  }
  unfold_from_power_of_two(channel, fold, buf, n * es, tags::rabenseifner_unfold);
}

}  // namespace hreduce::detail::inter
