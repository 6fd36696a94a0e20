// reduce_scatter_block: member r receives block r of the reduced vector, so
// each member's input is a multiple of the members (the sizes round down to
// one, see element_count). OpenMP has no array-section form of it; the
// sliced OpenMP baseline and oneTBB do.
#include "bench/suite.hpp"

namespace hreduce::bench {

void register_reduce_scatter_block_benchmarks() {
  register_comparisons<double>(Collective::reduce_scatter_block);
}

}  // namespace hreduce::bench
