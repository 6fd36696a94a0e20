// reduce: the root alone receives the reduced vector, so the moved bytes
// count every input once and one output. OpenMP's array-section reduction
// fits it directly (its accumulator is the root's output).
#include "bench/suite.hpp"

namespace hreduce::bench {

void register_reduce_benchmarks() { register_comparisons<double>(Collective::reduce); }

}  // namespace hreduce::bench
