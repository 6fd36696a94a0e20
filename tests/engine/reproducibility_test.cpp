// The reproducibility levels inside one process (docs/spec.md,
// "Reproducibility"): shape_independent is the rank-order left fold on every
// path, exact is the correctly rounded sum whatever the order and the team
// size, and a level a call cannot have is an ArgumentError.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "families.hpp"
#include "harness.hpp"
#include "hreduce/team.hpp"
#include "tests/support/error_class.hpp"
#include "tests/support/exact_oracle.hpp"

using namespace hreduce;
using hreduce::test::same_bits;

namespace {

Team team_of(int members) {
  TeamOptions options;
  options.members = members;
  options.topology = Topology::synthetic("pack:2 numa:2 core:2 pu:2");
  return Team(options);
}

CollectiveOptions level(Reproducibility r) {
  CollectiveOptions o;
  o.reproducibility = r;
  return o;
}

}  // namespace

TEST_CASE("reproducibility levels have names", "[engine][reproducibility]") {
  for (Reproducibility r :
       {Reproducibility::run_to_run, Reproducibility::shape_independent, Reproducibility::exact}) {
    CHECK(parse_reproducibility(to_string(r)) == r);
  }
  CHECK_FALSE(parse_reproducibility("bitwise"));
}

TEST_CASE("shape_independent is the rank-order left fold on every single-process path",
          "[engine][reproducibility]") {
  const int members = GENERATE(3, 4, 6, 8, 12);
  Team team = team_of(members);
  const auto sum_family = test::family<double>("double sum", op::sum, test::spread);
  const auto prod_family = test::family<double>("double prod", op::prod, [](int m, std::size_t i) {
    return 1.0 +
           test::spread(m, i) * 0x1p-61;  // products near 1, rounded differently per bracketing
  });
  for (std::size_t n : {std::size_t{1}, std::size_t{64}, std::size_t{65}, std::size_t{700}}) {
    for (Collective c : test::all_collectives()) {
      CollectiveOptions o = level(Reproducibility::shape_independent);
      // A small tree threshold and chunk: run_to_run would take the tree for
      // reduce and allreduce, and the sliced path crosses chunk boundaries.
      o.tree_min_members = 2;
      o.tree_max_bytes = 1 << 20;
      o.chunk_bytes = 64;
      INFO(test::name_of(c) << " members " << members << " n " << n);
      const int root = members - 1;
      CHECK(test::check_on_team(team, sum_family, c, n, false, root, o) == "");
      CHECK(test::check_on_team(team, prod_family, c, n, true, root, o) == "");
    }
  }
}

TEST_CASE("run_to_run down the tree brackets otherwise, so the check above can fail",
          "[engine][reproducibility]") {
  Team team = team_of(8);
  CollectiveOptions o;
  o.tree_min_members = 2;
  o.tree_max_bytes = 1 << 20;
  const auto sum_family = test::family<double>("double sum", op::sum, test::spread);
  CHECK(test::check_on_team(team, sum_family, Collective::allreduce, 700, false, 0, o) != "");
}

TEST_CASE("a level a call cannot have is an ArgumentError naming the op",
          "[engine][reproducibility][negative]") {
  Team team = team_of(3);
  std::vector<std::string> messages(3), classes(3);
  team.run([&](Member& m) {
    std::vector<double> x(4, 1.0), y(4);
    try {
      m.allreduce(x.data(), y.data(), 4, op::prod, level(Reproducibility::exact));
    } catch (const Error& e) {
      messages[m.rank()] = e.what();
      classes[m.rank()] = test::class_tag(e);
    }
  });
  for (int r = 0; r < 3; ++r) {
    CHECK(classes[r] == "[ArgumentError] ");
    CHECK_THAT(messages[r], Catch::Contains("reproducibility exact is for op sum") &&
                                Catch::Contains("not op prod on double"));
  }
  CHECK(team.usable());

  std::vector<std::string> int_sum(3), tree(3);
  team.run([&](Member& m) {
    std::vector<int> a(4, 1), b(4);
    try {
      m.allreduce(a.data(), b.data(), 4, op::sum, level(Reproducibility::exact));
    } catch (const ArgumentError& e) {
      int_sum[m.rank()] = e.what();
    }
    CollectiveOptions o = level(Reproducibility::shape_independent);
    o.algorithm = Algorithm::tree;
    try {
      m.allreduce(a.data(), b.data(), 4, op::sum, o);
    } catch (const ArgumentError& e) {
      tree[m.rank()] = e.what();
    }
    // The team goes on: a barrier and an exact sum with the team's options.
    m.barrier();
  });
  for (int r = 0; r < 3; ++r) {
    CHECK_THAT(int_sum[r], Catch::Contains("not op sum on int"));
    CHECK_THAT(tree[r], Catch::Contains("shape_independent cannot go with options.algorithm tree"));
  }

  CollectiveOptions bad;
  bad.reproducibility = static_cast<Reproducibility>(7);
  std::vector<std::string> invalid(3);
  team.run([&](Member& m) {
    double a = 1, b = 0;
    try {
      m.allreduce(&a, &b, 1, op::sum, bad);
    } catch (const ArgumentError& e) {
      invalid[m.rank()] = e.what();
    }
  });
  CHECK_THAT(invalid[0], Catch::Contains("options.reproducibility is 7"));
}

TEST_CASE("a team whose default level is exact still runs barriers and other ops' errors",
          "[engine][reproducibility]") {
  TeamOptions options;
  options.members = 2;
  options.topology = Topology::synthetic("pack:1 core:2 pu:1");
  options.collectives.reproducibility = Reproducibility::exact;
  Team team(options);
  std::vector<double> sums(2);
  team.run([&](Member& m) {
    m.barrier();
    double x = m.rank() == 0 ? 1e16 : 1.0, y = 0;
    m.allreduce(&x, &y, 1, op::sum);
    sums[m.rank()] = y;
  });
  CHECK(sums[0] == 1e16 + 1.0);  // one addition is correctly rounded
  CHECK(same_bits(sums[0], sums[1]));
}

TEST_CASE("exact sums equal the correctly rounded sum on every collective",
          "[engine][reproducibility][exact]") {
  const int members = GENERATE(1, 2, 3, 5, 8);
  Team team = team_of(members);
  // 4500 doubles: an allreduce of 3 or more members rounds in blocks.
  for (std::size_t n :
       {std::size_t{1}, std::size_t{3}, std::size_t{64}, std::size_t{1500}, std::size_t{4500}}) {
    for (Collective c : test::all_collectives()) {
      INFO(test::name_of(c) << " members " << members << " n " << n);
      const int root = members / 2;
      const auto fam = test::family<double>("double sum", op::sum, test::spread);
      test::CollectiveCheck check(fam, c, members, n, c == Collective::allreduce, root);
      team.run([&](Member& m) { check.run(m, level(Reproducibility::exact)); });
      // The oracle: each element's values summed exactly, rounded once.
      for (int r = 0; r < members; ++r) {
        const auto share = check.share_of(r);
        for (std::size_t i = 0; i < share.length; ++i) {
          INFO("member " << r << " element " << i);
          REQUIRE(same_bits(check.output(r)[i],
                            test::exact_sum_of_spread(share.last, share.offset + i)));
        }
      }
    }
  }
}

TEST_CASE("exact sums are correctly rounded in every integer width",
          "[engine][reproducibility][exact]") {
  // The conversions are compiled apart for one word, two words and more:
  // inputs that need each (the grid runs from the lowest value's last
  // mantissa bit), and one with subnormals that needs 34.
  struct Data {
    const char* what;
    double (*value)(int, std::size_t);
  };
  const std::vector<Data> data = {
      {"subnormals only (1 word)",
       [](int m, std::size_t i) {
         const auto k = static_cast<long>((m * 7919 + i * 104729) % 2001) - 1000;
         return static_cast<double>(k) * std::numeric_limits<double>::denorm_min();
       }},
      {"small integers (2 words)",
       [](int m, std::size_t i) {
         return static_cast<double>(static_cast<long>((m * 7919 + i * 104729) % 2001) - 1000);
       }},
      {"ten binades (2 words)",
       [](int m, std::size_t i) {
         int e = 0;
         return std::ldexp(std::frexp(test::spread(m, i), &e), static_cast<int>((m + i) % 10));
       }},
      {"120 binades (4 words)", test::spread},
      {"subnormals beside large values (34 words)",
       [](int m, std::size_t i) {
         return (m + i) % 3 == 0 ? test::spread(m, i) * 0x1p900 : test::spread(m, i) * 0x1p-1000;
       }},
  };
  const int members = 7;
  Team team = team_of(members);
  const std::size_t n = 300;
  for (const Data& d : data) {
    INFO(d.what);
    std::vector<std::vector<double>> x(members, std::vector<double>(n)), y = x;
    for (int m = 0; m < members; ++m) {
      for (std::size_t i = 0; i < n; ++i) x[m][i] = d.value(m, i);
    }
    team.run([&](Member& m) {
      m.scan(x[m.rank()].data(), y[m.rank()].data(), n, op::sum, level(Reproducibility::exact));
    });
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> values;
      for (int m = 0; m < members; ++m) {
        values.push_back(x[m][i]);
        INFO("member " << m << " element " << i);
        REQUIRE(same_bits(y[m][i], test::correctly_rounded_sum(values)));
      }
    }
  }
}

TEST_CASE("exact sums give the same bits for the same multiset on any team size and order",
          "[engine][reproducibility][exact]") {
  // 3 values per element with a wide exponent spread; larger teams hold them
  // at other members, the others contribute zeros.
  const std::size_t n = 257;
  std::mt19937_64 rng(7);
  std::vector<std::vector<double>> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) values[i].push_back(test::spread(k + 40, i * 3 + k));
  }
  std::vector<double> first;
  for (int members : {3, 4, 7, 16}) {
    Team team = team_of(members);
    std::vector<std::vector<double>> x(members, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<int> holders(members);
      for (int q = 0; q < members; ++q) holders[q] = q;
      std::shuffle(holders.begin(), holders.end(), rng);
      for (int k = 0; k < 3; ++k) x[holders[k]][i] = values[i][k];
    }
    std::vector<std::vector<double>> out(members, std::vector<double>(n));
    team.run([&](Member& m) {
      m.allreduce(x[m.rank()].data(), out[m.rank()].data(), n, op::sum,
                  level(Reproducibility::exact));
    });
    if (first.empty()) {
      first = out[0];
      for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(same_bits(first[i], test::correctly_rounded_sum(values[i])));
      }
    }
    for (int q = 0; q < members; ++q) {
      INFO("members " << members << " member " << q);
      CHECK(std::memcmp(out[q].data(), first.data(), n * sizeof(double)) == 0);
    }
  }
}

TEST_CASE("exact sums of adversarial inputs", "[engine][reproducibility][exact]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  struct Case {
    const char* what;
    std::vector<double> values;  // one per member
    double expected;
  };
  const std::vector<Case> cases = {
      {"1e308 - 1e308 + tiny", {1e308, -1e308, 1e-300}, 1e-300},
      {"cancellation leaves the small terms", {1.0, 0x1p-60, -1.0, 0x1p-70}, 0x1p-60 + 0x1p-70},
      {"ties round to even", {1.0, 0x1p-53}, 1.0},
      {"a sticky bit breaks the tie", {1.0, 0x1p-53, 0x1p-106}, 1.0 + 0x1p-52},
      {"subnormals add exactly", {tiny, tiny, tiny, -tiny}, 2 * tiny},
      {"subnormal and normal", {DBL_MIN, -tiny}, DBL_MIN - tiny},
      {"overflow rounds to infinity", {DBL_MAX, DBL_MAX}, inf},
      {"no intermediate overflow", {DBL_MAX, DBL_MAX, -DBL_MAX}, DBL_MAX},
      {"negative overflow", {-DBL_MAX, -DBL_MAX, 0.0}, -inf},
      {"infinity wins over finite values", {inf, 1.0, -DBL_MAX}, inf},
      {"minus infinity", {-inf, 1.0}, -inf},
      {"both infinities give NaN", {inf, -inf}, nan},
      {"NaN anywhere gives NaN", {1.0, nan, inf}, nan},
      {"-0 + -0 is -0, as in IEEE", {-0.0, -0.0}, -0.0},
      {"-0 + -0 + -0 is -0 on the integer path", {-0.0, -0.0, -0.0}, -0.0},
      {"-0 + +0 is +0", {-0.0, 0.0, -0.0}, 0.0},
      {"cancelling values give +0", {-3.5, 3.5}, 0.0},
      {"cancelling values give +0 beside -0", {-3.5, -0.0, 3.5}, 0.0},
      {"three infinities", {inf, inf, 2.0}, inf},
  };
  // One element: short vectors are gathered and summed on each member; 600
  // copies of it: long ones go through the agreement and the integers.
  const std::size_t n = GENERATE(1, 600);
  for (const Case& k : cases) {
    INFO(k.what << ", " << n << " elements");
    const int members = static_cast<int>(k.values.size());
    Team team = team_of(members);
    std::vector<std::vector<double>> out(members, std::vector<double>(n));
    team.run([&](Member& m) {
      const std::vector<double> x(n, k.values[m.rank()]);
      m.allreduce(x.data(), out[m.rank()].data(), n, op::sum, level(Reproducibility::exact));
    });
    for (int r = 0; r < members; ++r) {
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(k.expected)) {
          REQUIRE(std::isnan(out[r][i]));
        } else {
          REQUIRE(same_bits(out[r][i], k.expected));
        }
      }
    }
  }
}

TEST_CASE("exact sums of float and complex values", "[engine][reproducibility][exact]") {
  const int members = 5;
  Team team = team_of(members);
  // Short, and long enough for an allreduce to round in blocks.
  const std::size_t n = GENERATE(100, 9000);
  // Floats within 2^20 of each other: their exact sum fits a double, so a
  // double sum rounded once to float is the oracle.
  const auto value = [](int m, std::size_t i) {
    int exponent = 0;
    const double mantissa = std::frexp(test::spread(m, i), &exponent);  // ±[0.5, 1)
    return static_cast<float>(std::ldexp(mantissa, static_cast<int>((i + m) % 20)));
  };
  std::vector<std::vector<float>> fx(members, std::vector<float>(n)), fy = fx;
  std::vector<std::vector<std::complex<double>>> cx(members, std::vector<std::complex<double>>(n)),
      cy = cx, cz = cx;
  std::vector<std::vector<std::complex<float>>> gx(members, std::vector<std::complex<float>>(n)),
      gy = gx;
  for (int m = 0; m < members; ++m) {
    for (std::size_t i = 0; i < n; ++i) {
      fx[m][i] = value(m, i);
      cx[m][i] = {test::spread(m, i), test::spread(m + 9, i)};
      gx[m][i] = {value(m, i), value(m + 9, i)};
    }
  }
  team.run([&](Member& m) {
    const int r = m.rank();
    const CollectiveOptions o = level(Reproducibility::exact);
    m.allreduce(fx[r].data(), fy[r].data(), n, op::sum, o);
    m.scan(cx[r].data(), cy[r].data(), n, op::sum, o);
    m.allreduce(gx[r].data(), gy[r].data(), n, op::sum, o);
    m.allreduce(cx[r].data(), cz[r].data(), n, op::sum, o);
  });
  for (std::size_t i = 0; i < n; ++i) {
    double exact = 0, exact_re = 0, exact_im = 0;
    std::vector<double> re, im;
    for (int m = 0; m < members; ++m) {
      exact += fx[m][i];
      exact_re += gx[m][i].real();
      exact_im += gx[m][i].imag();
      re.push_back(cx[m][i].real());
      im.push_back(cx[m][i].imag());
      INFO("element " << i << " member " << m);
      REQUIRE(same_bits(cy[m][i].real(), test::correctly_rounded_sum(re)));
      REQUIRE(same_bits(cy[m][i].imag(), test::correctly_rounded_sum(im)));
    }
    for (int m = 0; m < members; ++m) {
      REQUIRE(same_bits(cz[m][i].real(), test::correctly_rounded_sum(re)));
      REQUIRE(same_bits(cz[m][i].imag(), test::correctly_rounded_sum(im)));
      REQUIRE(fy[m][i] == static_cast<float>(exact));
      REQUIRE(gy[m][i] ==
              std::complex<float>(static_cast<float>(exact_re), static_cast<float>(exact_im)));
    }
  }
}

TEST_CASE("an exact sum with a bad argument fails on every member, in step",
          "[engine][reproducibility][exact][negative]") {
  Team team = team_of(3);
  std::vector<std::string> messages(3);
  std::vector<double> results(3);
  team.run([&](Member& m) {
    std::vector<double> x(4, 1.0), y(4);
    try {
      m.allreduce(m.rank() == 1 ? nullptr : x.data(), y.data(), 4, op::sum,
                  level(Reproducibility::exact));
    } catch (const ArgumentError& e) {
      messages[m.rank()] = e.what();
    }
    double one = 1.0;
    m.allreduce(&one, &results[m.rank()], 1, op::sum, level(Reproducibility::exact));
  });
  for (int r = 0; r < 3; ++r) {
    CHECK_THAT(messages[r], Catch::Contains("allreduce: member 1: in is a null pointer"));
    CHECK(results[r] == 3.0);
  }
}

TEST_CASE("explain says which level a call delivers", "[engine][reproducibility]") {
  Team eight = team_of(8);
  CHECK_THAT(eight.explain(Collective::allreduce, 8),
             Catch::Contains("tree") && Catch::Contains("reproducibility run_to_run"));
  const std::string shape =
      eight.explain(Collective::allreduce, 8, level(Reproducibility::shape_independent));
  CHECK_THAT(shape, !Catch::Contains("tree") &&
                        Catch::Contains("reproducibility shape_independent: the left fold in "
                                        "rank order over 8 members"));
  CHECK_THAT(eight.explain(Collective::scan, 1 << 20, level(Reproducibility::exact)),
             Catch::Contains("correctly rounded sum (an allreduce agrees on a grid"));
  CHECK_THAT(team_of(2).explain(Collective::scan, 8, level(Reproducibility::exact)),
             Catch::Contains("one IEEE addition"));
  CollectiveOptions bad;
  bad.reproducibility = static_cast<Reproducibility>(9);
  CHECK_THROWS_AS(eight.explain(Collective::reduce, 8, bad), ArgumentError);
}
