// Interface: reduce_local's argument checks and its span overload.
#include <cstddef>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "hreduce/combine.hpp"
#include "hreduce/error.hpp"
#include "hreduce/ops.hpp"

namespace op = hreduce::op;

TEST_CASE("reduce_local on spans", "[ops][reduce_local][interface]") {
  const std::vector<int> in{1, 2, 3};
  std::vector<int> inout{10, 20, 30};
  hreduce::reduce_local(std::span<const int>(in), std::span<int>(inout), op::sum);
  CHECK(inout == std::vector<int>{11, 22, 33});
  hreduce::reduce_local<int>(in, inout, op::max);  // vectors convert once T is named
  CHECK(inout == std::vector<int>{11, 22, 33});
  hreduce::reduce_local<int>(std::span<const int>(), std::span<int>(), op::prod);
}

TEST_CASE("reduce_local rejects spans of different sizes", "[ops][reduce_local][negative]") {
  const std::vector<double> in(3, 1.0);
  std::vector<double> inout(4, 2.0);
  CHECK_THROWS_AS(hreduce::reduce_local<double>(in, inout, op::sum), hreduce::Error);
  CHECK_THROWS_WITH(hreduce::reduce_local<double>(in, inout, op::sum),
                    "reduce_local: in has 3 elements but inout has 4");
  CHECK(inout == std::vector<double>(4, 2.0));  // untouched
}

TEST_CASE("reduce_local rejects null pointers when n > 0", "[ops][reduce_local][negative]") {
  std::vector<long> buffer(5, 1);
  CHECK_THROWS_AS(hreduce::reduce_local<long>(nullptr, buffer.data(), 5, op::sum), hreduce::Error);
  CHECK_THROWS_WITH(hreduce::reduce_local<long>(nullptr, buffer.data(), 5, op::sum),
                    "reduce_local: in is a null pointer but n = 5");
  CHECK_THROWS_WITH(hreduce::reduce_local<long>(buffer.data(), nullptr, 2, op::sum),
                    "reduce_local: inout is a null pointer but n = 2");
  // n == 0: nothing is read or written, so null is fine.
  CHECK_NOTHROW(hreduce::reduce_local<long>(nullptr, nullptr, 0, op::sum));
}
