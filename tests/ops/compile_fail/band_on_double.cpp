// Must not compile: band's row has no floating-point types.
#include <vector>

#include "hreduce/combine.hpp"

void f() {
  std::vector<double> in(4), inout(4);
  hreduce::reduce_local(in.data(), inout.data(), in.size(), hreduce::op::band);
}
