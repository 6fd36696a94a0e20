// Every tree generator for p = 1..70: valid, and the simulated executor
// computes exactly x_0 ∘ … ∘ x_{p-1} for a non-commutative op.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"
#include "oracle_ops.hpp"
#include "src/schedule/simulator.hpp"

namespace hs = hreduce::schedules;
using hreduce::Schedule;
using hreduce::test::Mat2;
using hreduce::test::RankRange;

namespace {

struct Generator {
  const char* name;
  std::function<Schedule(int p, int root)> make;
};

const std::vector<Generator>& generators() {
  static const std::vector<Generator> all = {
      {"flat", [](int p, int r) { return hs::flat(p, r); }},
      {"chain", [](int p, int r) { return hs::chain(p, r); }},
      {"binary", [](int p, int r) { return hs::binary(p, r); }},
      {"binomial", [](int p, int r) { return hs::binomial(p, r); }},
      {"3-nomial", [](int p, int r) { return hs::knomial(p, 3, r); }},
      {"4-nomial", [](int p, int r) { return hs::knomial(p, 4, r); }},
      {"7-nomial", [](int p, int r) { return hs::knomial(p, 7, r); }},
  };
  return all;
}

void check_rank_ordered(const Schedule& s) {
  std::vector<std::vector<RankRange>> ranges(s.size());
  std::vector<std::vector<Mat2>> matrices(s.size());
  for (int m = 0; m < s.size(); ++m) {
    ranges[m] = {RankRange{m, m}};
    matrices[m] = {hreduce::test::sample_matrix(m, 0), hreduce::test::sample_matrix(m, 1)};
  }
  const auto joined = hreduce::detail::simulate(s, ranges, hreduce::test::join_ranges);
  CHECK(joined == std::vector<RankRange>{{0, s.size() - 1}});
  const auto product = hreduce::detail::simulate(s, matrices, hreduce::test::multiply_matrices);
  CHECK(product == hreduce::test::sequential_product(matrices));
}

}  // namespace

TEST_CASE("generators with root 0 are valid and rank-ordered for p = 1..70", "[schedule]") {
  for (const Generator& g : generators()) {
    for (int p = 1; p <= 70; ++p) {
      INFO(g.name << " p=" << p);
      const Schedule s = g.make(p, 0);
      REQUIRE(s.size() == p);
      REQUIRE(s.root() == 0);
      REQUIRE_NOTHROW(s.validate(false));
      CHECK(static_cast<int>(s.transfers().size()) == p - 1);
      check_rank_ordered(s);
    }
  }
}

TEST_CASE("generators with any root are valid commutative trees", "[schedule]") {
  for (const Generator& g : generators()) {
    for (int p : {1, 2, 5, 16, 33, 70}) {
      for (int root : {0, p / 2, p - 1}) {
        INFO(g.name << " p=" << p << " root=" << root);
        const Schedule s = g.make(p, root);
        REQUIRE(s.root() == root);
        REQUIRE_NOTHROW(s.validate(true));
        // Integer sum is commutative: every member's input must arrive once.
        std::vector<std::vector<long>> inputs(p);
        for (int m = 0; m < p; ++m) inputs[m] = {1L << (m % 40), m};
        auto add = [](const long* a, const long* b, long* out, std::size_t n) {
          for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
        };
        long bits = 0, ranks = 0;
        for (int m = 0; m < p; ++m) bits += 1L << (m % 40), ranks += m;
        CHECK(hreduce::detail::simulate(s, inputs, add) == std::vector<long>{bits, ranks});
      }
    }
  }
}

TEST_CASE("chain and flat stay rank-contiguous for every root", "[schedule]") {
  for (int p = 1; p <= 20; ++p) {
    for (int root = 0; root < p; ++root) {
      INFO("p=" << p << " root=" << root);
      CHECK(hs::chain(p, root).is_valid(false));
      CHECK(hs::flat(p, root).is_valid(false));
    }
  }
}

TEST_CASE("tree depths match their textbook step counts", "[schedule]") {
  for (int p = 1; p <= 70; ++p) {
    INFO("p=" << p);
    const int log2p = p == 1 ? 0 : static_cast<int>(std::ceil(std::log2(p)));
    CHECK(hs::binomial(p).steps() == log2p);
    CHECK(hs::flat(p).steps() == (p > 1 ? 1 : 0));
    CHECK(hs::chain(p).steps() == p - 1);
    int log4p = 0;
    for (long span = 1; span < p; span *= 4) ++log4p;
    CHECK(hs::knomial(p, 4).steps() == log4p);
    // A binary tree of p members is at least log2(p+1)-1 deep and, being
    // balanced by halving, at most 2·log2(p).
    CHECK(hs::binary(p).steps() <= 2 * log2p);
  }
}

TEST_CASE("generators reject bad arguments", "[schedule][negative]") {
  CHECK_THROWS_WITH(hs::binomial(0), Catch::Contains("binomial") && Catch::Contains("got 0"));
  CHECK_THROWS_WITH(hs::chain(4, 4), Catch::Contains("root 4 is outside 0..3"));
  CHECK_THROWS_WITH(hs::knomial(8, 1), Catch::Contains("radix k must be >= 2, got 1"));
}

TEST_CASE("simulator reports a schedule that would hang", "[schedule][negative]") {
  // Valid structure but the simulator needs the right element counts.
  const Schedule s = hs::binomial(2);
  std::vector<std::vector<long>> inputs = {{1, 2}, {3}};
  auto add = [](const long* a, const long* b, long* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  };
  CHECK_THROWS_WITH(hreduce::detail::simulate(s, inputs, add), Catch::Contains("sent 1 elements"));
}
