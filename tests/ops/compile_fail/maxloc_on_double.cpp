// Must not compile: maxloc takes value-index pairs, not bare values.
#include "hreduce/combine.hpp"

void f() {
  double a[2] = {1, 2}, b[2] = {3, 4};
  hreduce::combine(a, b, a, 2, hreduce::op::maxloc);
}
