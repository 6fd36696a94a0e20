// Implementation: combine never touches the heap, in particular not in the
// vector-form path that parks the left operand in a stack buffer.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include <catch2/catch.hpp>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"
#include "tests/support/count_allocations.hpp"

namespace {

struct Big {  // larger than the stack chunk: the chunk degrades to one element
  double x[600];
};

template <class T, class Op>
long allocations_during_combines(std::vector<T>& a, std::vector<T>& b, std::vector<T>& c,
                                 const Op& op) {
  const long before = hreduce::test::heap_allocations();
  hreduce::combine(a.data(), b.data(), a.data(), a.size(), op);
  hreduce::combine(a.data(), b.data(), b.data(), a.size(), op);
  hreduce::combine(a.data(), b.data(), c.data(), a.size(), op);
  hreduce::combine(a.data(), a.data(), a.data(), a.size(), op);
  return hreduce::test::heap_allocations() - before;
}

}  // namespace

TEST_CASE("combine does not allocate", "[ops][combine][implementation]") {
  const std::size_t n = GENERATE(as<std::size_t>{}, 1, 511, 512, 513, 100003);
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n);
  const auto vector_op =
      hreduce::make_op<double>([](const double* in, double* inout, std::size_t len) {
        for (std::size_t i = 0; i < len; ++i) inout[i] = in[i] - inout[i];
      });
  const auto elementwise_op =
      hreduce::make_op<double>([](const double& x, const double& y) { return x - y; });
  CHECK(allocations_during_combines(a, b, c, vector_op) == 0);
  CHECK(allocations_during_combines(a, b, c, elementwise_op) == 0);
  CHECK(allocations_during_combines(a, b, c, hreduce::op::sum) == 0);

  std::vector<Big> ba(3), bb(3), bc(3);
  const auto big_op = hreduce::make_op<Big>([](const Big* in, Big* inout, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) inout[i].x[0] += in[i].x[0];
  });
  CHECK(allocations_during_combines(ba, bb, bc, big_op) == 0);
}
