// Must not compile: the function has neither accepted form.
#include "hreduce/ops.hpp"

void f() {
  auto op = hreduce::make_op<int>([](int* inout, const int* in) { *inout += *in; });
  (void)op;
}
