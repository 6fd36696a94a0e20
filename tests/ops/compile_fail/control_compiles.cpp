// Must compile: the same calls with accepted types. Guards the negative cases
// against passing for the wrong reason (a bad include path, a missing flag).
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include "hreduce/combine.hpp"

void f() {
  std::vector<double> in(4), inout(4);
  hreduce::reduce_local(in.data(), inout.data(), in.size(), hreduce::op::sum);
  std::vector<std::byte> bytes(4), bytes2(4);
  hreduce::reduce_local(bytes.data(), bytes2.data(), bytes.size(), hreduce::op::band);
  bool b[3] = {true, false, true}, b2[3] = {false, false, true};
  hreduce::reduce_local(b, b2, 3, hreduce::op::lor);
  hreduce::double_int p[2] = {{1, 0}, {2, 1}}, q[2] = {{1, 2}, {0, 3}};
  hreduce::combine(p, q, p, 2, hreduce::op::maxloc);
  auto user = hreduce::make_op<float>([](const float& a, const float& c) { return a * c; });
  float x[2] = {1, 2}, y[2] = {3, 4};
  hreduce::reduce_local(x, y, 2, user);
}
