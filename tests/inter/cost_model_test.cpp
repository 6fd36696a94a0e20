// The α–β cost model that chooses inter-process algorithms: its choices
// against formulas recomputed here, its explanations, and its names.
#include <algorithm>
#include <cmath>
#include <string>

#include "hreduce/error.hpp"
#include "tests/inter/harness.hpp"

using namespace hreduce;
using detail::choose_allreduce;
using detail::choose_reduce;
using detail::choose_reduce_scatter;
using detail::choose_scan;
using detail::CostModel;
using detail::InterAlgorithm;

namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

}  // namespace

TEST_CASE("allreduce: short vectors take recursive doubling, long ones split the data",
          "[inter][cost_model]") {
  const CostModel model;
  CHECK(choose_allreduce(16, 8, true, model).algorithm == InterAlgorithm::recursive_doubling);
  CHECK(choose_allreduce(13, 8, false, model).algorithm == InterAlgorithm::recursive_doubling);
  CHECK(choose_allreduce(16, 64 * MiB, true, model).algorithm == InterAlgorithm::rabenseifner);
  CHECK(choose_allreduce(16, 64 * MiB, false, model).algorithm == InterAlgorithm::rabenseifner);
  // Not a power of two: Rabenseifner pays for the fold, the ring does not...
  CHECK(choose_allreduce(6, 64 * MiB, true, model).algorithm == InterAlgorithm::ring);
  // ...but the ring needs a commutative op.
  CHECK(choose_allreduce(6, 64 * MiB, false, model).algorithm == InterAlgorithm::rabenseifner);
}

TEST_CASE(
    "allreduce: the choice is the cheapest allowed formula, never the ring for a "
    "non-commutative op",
    "[inter][cost_model]") {
  const CostModel model{3e-6, 1e-10};
  for (int P = 1; P <= 70; ++P) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{8}, KiB, 64 * KiB, MiB, 256 * MiB}) {
      const double a = model.alpha_seconds;
      const double mb = static_cast<double>(bytes) * model.beta_seconds_per_byte;
      const double L = std::ceil(std::log2(static_cast<double>(P)));
      const bool pow2 = (P & (P - 1)) == 0;
      const double fold = pow2 ? 0 : 2 * (a + mb);
      const double rd = L * (a + mb) + fold;
      const double rab = 2 * a * L + 2 * mb * (P - 1) / P + fold;
      const double ring = 2 * (P - 1) * a + 2 * mb * (P - 1) / P;
      for (bool commutative : {true, false}) {
        INFO("P = " << P << ", bytes = " << bytes << ", commutative = " << commutative);
        const auto choice = choose_allreduce(P, bytes, commutative, model);
        const double best = commutative ? std::min({rd, rab, ring}) : std::min(rd, rab);
        const double chosen = choice.algorithm == InterAlgorithm::recursive_doubling ? rd
                              : choice.algorithm == InterAlgorithm::rabenseifner     ? rab
                              : choice.algorithm == InterAlgorithm::ring             ? ring
                                                                                     : -1;
        REQUIRE(chosen >= 0);
        REQUIRE(chosen <= best * (1 + 1e-12));
        if (!commutative) REQUIRE(choice.algorithm != InterAlgorithm::ring);
      }
    }
  }
}

TEST_CASE("allreduce: `why` gives every candidate's time and the winner", "[inter][cost_model]") {
  const auto choice = choose_allreduce(16, 1 * MiB, true, CostModel{});
  INFO(choice.why);
  CHECK_THAT(choice.why, Catch::Contains("recursive_doubling 846.861 µs") &&
                             Catch::Contains("rabenseifner 409.216 µs") &&
                             Catch::Contains("ring 453.216 µs") &&
                             Catch::EndsWith("-> rabenseifner"));
  const auto non_commutative = choose_allreduce(16, 1 * MiB, false, CostModel{});
  CHECK_THAT(non_commutative.why, Catch::Contains("ring 453.216 µs") &&
                                      Catch::Contains("not a candidate: needs a commutative op"));
}

TEST_CASE("one participant and nothing to send work", "[inter][cost_model]") {
  const CostModel model;
  const auto choice = choose_allreduce(1, 1 * MiB, true, model);
  CHECK(choice.algorithm == InterAlgorithm::recursive_doubling);  // 0 µs, ties go first
  CHECK_THAT(choice.why, Catch::Contains("0.000 µs"));
  CHECK(choose_reduce_scatter(1, 0, false, model).algorithm == InterAlgorithm::reduce_then_scatter);
  CHECK(choose_reduce(1, 0, true, model).algorithm == InterAlgorithm::binomial);
  CHECK(choose_scan(1, 8, true, model).algorithm == InterAlgorithm::hypercube);
  CHECK_THROWS_WITH(choose_allreduce(0, 8, true, model),
                    "choose_allreduce: participant count must be >= 1, got 0");
}

TEST_CASE("reduce_scatter: pairwise for commutative ops, reduce then scatter otherwise",
          "[inter][cost_model]") {
  const CostModel model;
  const auto commutative = choose_reduce_scatter(8, 1 * MiB, true, model);
  CHECK(commutative.algorithm == InterAlgorithm::pairwise);
  CHECK_THAT(commutative.why, Catch::Contains("pairwise ") && Catch::Contains("µs") &&
                                  Catch::Contains("reduce_then_scatter ") &&
                                  Catch::Contains("-> pairwise"));
  const auto other = choose_reduce_scatter(8, 1 * MiB, false, model);
  CHECK(other.algorithm == InterAlgorithm::reduce_then_scatter);
  CHECK_THAT(other.why, Catch::Contains("-> reduce_then_scatter"));
}

TEST_CASE("reduce and scan name their formulas", "[inter][cost_model]") {
  const CostModel model;
  const auto reduce = choose_reduce(8, 1000, false, model);
  CHECK(reduce.algorithm == InterAlgorithm::binomial);
  // 3 (2 µs + 1000 · 0.2 ns) = 6.6 µs
  CHECK_THAT(reduce.why, Catch::Contains("⌈log2 P⌉(α + mβ) = 6.600 µs"));
  const auto scan = choose_scan(5, 1000, true, model);
  CHECK(scan.algorithm == InterAlgorithm::hypercube);
  CHECK_THAT(scan.why, Catch::Contains("⌈log2 P⌉(α + mβ) = 6.600 µs"));
}

TEST_CASE("algorithm names round-trip", "[inter][cost_model]") {
  for (InterAlgorithm a :
       {InterAlgorithm::automatic, InterAlgorithm::binomial, InterAlgorithm::recursive_doubling,
        InterAlgorithm::rabenseifner, InterAlgorithm::ring, InterAlgorithm::hypercube,
        InterAlgorithm::pairwise, InterAlgorithm::reduce_then_scatter}) {
    CHECK(detail::parse_inter_algorithm(detail::to_string(a)) == a);
  }
  CHECK(detail::to_string(InterAlgorithm::reduce_then_scatter) == "reduce_then_scatter");
  CHECK_FALSE(detail::parse_inter_algorithm("Ring").has_value());
  CHECK_FALSE(detail::parse_inter_algorithm("").has_value());
}
