// Must not compile: sum's row has no bool (use lor or lxor).
#include "hreduce/combine.hpp"

void f() {
  bool in[3] = {true, false, true};
  bool inout[3] = {false, false, true};
  hreduce::reduce_local(in, inout, 3, hreduce::op::sum);
}
