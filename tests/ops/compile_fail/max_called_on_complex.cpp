// Must not compile: calling an op directly goes through the same check.
#include <complex>

#include "hreduce/ops.hpp"

std::complex<double> f(std::complex<double> x, std::complex<double> y) {
  return hreduce::op::max(x, y);
}
