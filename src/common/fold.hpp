// The rank-order fold every data phase ends in: one range of elements,
// combined across the inputs of several ranks, lowest rank on the left.
#pragma once

#include <cstddef>

#include "hreduce/team.hpp"
#include "src/common/copy.hpp"

namespace hreduce::detail {

// out[0, n) = x_0 ∘ x_1 ∘ … ∘ x_{ranks-1}, where input(q) is the address of
// x_q's first element of the range; with one rank, a copy of x_0 (none when
// out is x_0). out may be input(0) or input(1) (in place), never a later
// input: the fold overwrites it before reading x_2 … x_{ranks-1}. An
// exception from the op leaves the fold where it stands.
template <class Input>
void fold_in_rank_order(const ErasedOp& op, int ranks, Input&& input, void* out, std::size_t n) {
  if (ranks == 1) {
    copy_if_distinct(out, input(0), n * op.elem_size);
    return;
  }
  op.apply(input(0), input(1), out, n);
  for (int q = 2; q < ranks; ++q) op.apply(out, input(q), out, n);
}

}  // namespace hreduce::detail
