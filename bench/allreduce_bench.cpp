// allreduce: every member receives the reduced vector. Besides double sum it
// is measured on int32 sum (half the bytes per element, integer adds) and on
// MINLOC pairs (a comparison per element instead of an add, 16-byte
// elements), the element types an MPI user reaches for most.
#include <cstdint>

#include "bench/suite.hpp"

namespace hreduce::bench {

void register_allreduce_benchmarks() {
  register_comparisons<double>(Collective::allreduce);
  register_comparisons<std::int32_t>(Collective::allreduce);
  register_comparisons<cmp::MinLoc>(Collective::allreduce);
}

}  // namespace hreduce::bench
