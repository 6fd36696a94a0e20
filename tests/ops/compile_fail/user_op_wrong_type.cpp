// Must not compile: an op made for float applied to double buffers.
#include "hreduce/combine.hpp"

void f() {
  auto op = hreduce::make_op<float>([](const float& a, const float& b) { return a + b; });
  double in[2] = {1, 2}, inout[2] = {3, 4};
  hreduce::reduce_local(in, inout, 2, op);
}
