// Hypercube prefix (docs/spec.md, "Algorithms"), for any P. Each member keeps its
// `result` and an outgoing `msg`, both starting as its own x. In the step
// with mask = 1, 2, 4, … < P it swaps msg with partner = rank XOR mask (when
// that member exists) and then
//
//   partner below:  result = recv ∘ result,   msg = recv ∘ msg
//   partner above:                             msg = msg ∘ recv
//
// Before the step, msg is the reduction of the member's aligned block of
// `mask` ranks; the partner's block is the adjacent one, so msg doubles and
// result gains exactly the block just below what it already covers:
//
//   P = 8, member 5      mask 1      mask 2        mask 4
//     partner            4           7             1
//     result             [4,5]       [4,5]         [0,5]
//     msg                [4,5]       [4,7]         [0,7]
//
// For P not a power of two, blocks above P are simply short: a missing
// partner lies above, so it would only have extended msg, and a short msg is
// only ever sent down (its own upper partners do not exist either), where it
// again only feeds msg. Every block sent up, into a result, lies wholly
// below the receiver and is therefore complete.
//
// Exclusive scan: the first block received from below becomes result and
// later ones go on its left; a member that receives nothing from below
// (member 0) never writes out.
//
// ⌈log2 P⌉ steps of (α + mβ). Messages use one tag per step.
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void hypercube_scan(Channel& channel, const void* in, void* out, std::size_t n, const ErasedOp& op,
                    bool exclusive, Workspace& workspace) {
  const int P = channel.size();
  const int me = channel.rank();
  const std::size_t bytes = n * op.elem_size;
  if (P == 1) {
    if (!exclusive) copy_if_distinct(out, in, bytes);
    return;
  }
  void* tmp = workspace.get(kSlotReceive, bytes);
  void* msg = workspace.get(kSlotKeep, bytes);
  // msg first: with in == out, result is about to overwrite the input.
  copy_if_distinct(msg, in, bytes);
  if (!exclusive) copy_if_distinct(out, in, bytes);
  bool have_result = !exclusive;

  int k = 0;
  for (long long mask = 1; mask < P; mask <<= 1, ++k) {
    const int partner = me ^ static_cast<int>(mask);
    if (partner >= P) continue;
    channel.sendrecv(partner, msg, bytes, partner, tmp, bytes, tags::hypercube_scan_step + k);
    const bool msg_needed = 2 * mask < P;  // not after the last step
    if (partner < me) {
      if (have_result) {
        if (n > 0) op.apply(tmp, out, out, n);
      } else {
        copy_if_distinct(out, tmp, bytes);
        have_result = true;
      }
      if (msg_needed && n > 0) op.apply(tmp, msg, msg, n);
    } else if (msg_needed && n > 0) {
      op.apply(msg, tmp, msg, n);
    }
  }
}

}  // namespace hreduce::detail::inter
