// exscan: member r receives x_0 ∘ … ∘ x_{r-1}; member 0's output is
// undefined, so it counts no output bytes.
#include "bench/suite.hpp"

namespace hreduce::bench {

void register_exscan_benchmarks() { register_comparisons<double>(Collective::exscan); }

}  // namespace hreduce::bench
