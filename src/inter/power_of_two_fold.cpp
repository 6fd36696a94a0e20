// The non-power-of-two pre- and post-step shared by recursive doubling and
// Rabenseifner. With p' the largest power of two <= P and r = P - p', the
// first 2r ranks pair up, (0,1), (2,3), …: the even rank hands its vector to
// the odd one, which combines x_{2i} ∘ x_{2i+1} and plays virtual rank i;
// ranks from 2r on play virtual rank rank - r. The p' virtual ranks then run
// the power-of-two algorithm, and at the end each odd rank below 2r copies
// the result to its even partner.
//
//   P = 6 (p' = 4, r = 2)
//     rank:          0    1    2    3    4    5
//     fold:          0 →  1    2 →  3
//     virtual rank:  -    0    -    1    2    3
//     covers ranks:      0-1       2-3   4    5
//     unfold:        0 ←  1    2 ←  3
//
// Virtual rank v covers a contiguous rank range and the ranges are ordered
// like v, so "lower virtual rank on the left" keeps rank order. The unfold
// copies bytes, so the even ranks end bitwise equal to their partners.
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

PowerOfTwoFold fold_to_power_of_two(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                                    void* scratch, int tag) {
  const int P = channel.size();
  const int me = channel.rank();
  PowerOfTwoFold fold;
  while (fold.pow2 <= P / 2) fold.pow2 *= 2;
  fold.extra = P - fold.pow2;
  const std::size_t bytes = n * op.elem_size;
  if (me >= 2 * fold.extra) {
    fold.vrank = me - fold.extra;
  } else if (me % 2 == 0) {
    channel.send(me + 1, buf, bytes, tag);
    fold.vrank = -1;
  } else {
    channel.recv(me - 1, scratch, bytes, tag);
    if (n > 0) op.apply(scratch, buf, buf, n);  // x_{2i} ∘ x_{2i+1}
    fold.vrank = me / 2;
  }
  return fold;
}

void unfold_from_power_of_two(Channel& channel, const PowerOfTwoFold& fold, void* buf,
                              std::size_t bytes, int tag) {
  const int me = channel.rank();
  if (me >= 2 * fold.extra) return;
  if (me % 2 == 1) {
    channel.send(me - 1, buf, bytes, tag);
  } else {
    channel.recv(me + 1, buf, bytes, tag);
  }
}

}  // namespace hreduce::detail::inter
