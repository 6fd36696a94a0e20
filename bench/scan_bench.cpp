// scan: member r receives x_0 ∘ … ∘ x_r. Every member has a different
// result, so the work is a prefix over members rather than one reduction
// copied out.
#include "bench/suite.hpp"

namespace hreduce::bench {

void register_scan_benchmarks() { register_comparisons<double>(Collective::scan); }

}  // namespace hreduce::bench
