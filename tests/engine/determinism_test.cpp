// Run-to-run and member-to-member bitwise determinism with floating point,
// where the combination order changes the bits (docs/spec.md, "Determinism").
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "families.hpp"
#include "harness.hpp"
#include "hreduce/team.hpp"

using namespace hreduce;

namespace {

std::vector<std::vector<double>> random_inputs(int p, std::size_t n) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> x(p, std::vector<double>(n));
  for (auto& v : x) {
    for (double& e : v) e = dist(rng) * std::pow(10.0, static_cast<int>(rng() % 12) - 6);
  }
  return x;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

Team oversubscribed_team(int members) {
  TeamOptions options;
  options.members = members;
  options.topology = Topology::synthetic("pack:2 numa:2 core:2 pu:2");
  return Team(options);
}

}  // namespace

TEST_CASE("allreduce and scan of doubles give the same bits every time", "[engine][determinism]") {
  const int members = GENERATE(5, 16);
  const std::size_t n = GENERATE(7, 1000, 100003);
  const int repetitions = test::quick() ? 10 : 100;
  const auto x = random_inputs(members, n);
  std::vector<std::vector<double>> first_allreduce, first_scan;
  for (int rep = 0; rep < repetitions; ++rep) {
    // A new team now and then: determinism holds across instances too.
    static std::unique_ptr<Team> team;
    if (rep % 25 == 0) {
      team.reset();
      TeamOptions options;
      options.members = members;
      options.topology = Topology::synthetic("pack:2 numa:2 core:2 pu:2");
      team = std::make_unique<Team>(options);
    }
    std::vector<std::vector<double>> all(members, std::vector<double>(n)), pre = all;
    team->run([&](Member& m) {
      m.allreduce(x[m.rank()].data(), all[m.rank()].data(), n, op::sum);
      m.scan(x[m.rank()].data(), pre[m.rank()].data(), n, op::sum);
    });
    for (int r = 1; r < members; ++r) REQUIRE(same_bits(all[r], all[0]));
    if (rep == 0) {
      first_allreduce = all;
      first_scan = pre;
      continue;
    }
    INFO("repetition " << rep << ", " << members << " members, n=" << n);
    REQUIRE(same_bits(all[0], first_allreduce[0]));
    for (int r = 0; r < members; ++r) REQUIRE(same_bits(pre[r], first_scan[r]));
  }
  if (test::quick()) return;
  // The sum really is order-sensitive for these inputs: a different order
  // (reversed ranks) changes some bits, so the checks above had teeth.
  std::vector<double> forward(n, 0.0), backward(n, 0.0);
  for (int r = 0; r < members; ++r) {
    for (std::size_t i = 0; i < n; ++i) forward[i] += x[r][i], backward[i] += x[members - 1 - r][i];
  }
  CHECK_FALSE(same_bits(forward, backward));
}

TEST_CASE("100000 back-to-back small allreduces", "[engine][stress]") {
  const int members = 4;  // more members than cores
  const int calls = test::quick() ? 5000 : 100000;
  Team team = oversubscribed_team(members);
  std::vector<long> wrong(members, 0);
  team.run([&](Member& m) {
    for (int i = 0; i < calls; ++i) {
      const long in[2] = {m.rank() + i, 1};
      long out[2];
      m.allreduce(in, out, 2, op::sum);
      const long expected = members * (members - 1) / 2 + static_cast<long>(members) * i;
      wrong[m.rank()] += out[0] != expected || out[1] != members;
    }
  });
  CHECK(wrong == std::vector<long>(members, 0));
}

TEST_CASE("a mix of collectives back to back in one run", "[engine][stress]") {
  const int members = 7;
  Team team = oversubscribed_team(members);
  const auto fam = test::family<test::Affine>("affine", test::affine_op, [](int m, std::size_t i) {
    return test::Affine{static_cast<std::uint64_t>(test::small(m, i, 50)) * 2 + 1,
                        static_cast<std::uint64_t>(m)};
  });
  // Different collectives and sizes without a run() in between: members
  // drift apart by up to a call, which the protocol must absorb.
  std::vector<test::CollectiveCheck<decltype(fam)>> checks;
  int i = 0;
  for (int round = 0; round < 20; ++round) {
    for (test::Collective c : test::all_collectives()) {
      checks.emplace_back(fam, c, members, static_cast<std::size_t>((round * 37 + i++) % 300),
                          round % 2 == 1, round % members);
    }
  }
  team.run([&](Member& m) {
    for (auto& check : checks) check.run(m, CollectiveOptions{});
  });
  for (std::size_t k = 0; k < checks.size(); ++k) {
    INFO("check " << k);
    CHECK(checks[k].verify().empty());
  }
}
