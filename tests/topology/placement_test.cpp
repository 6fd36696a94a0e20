// place(): compact and scatter orders, wrap-around, bad team sizes.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

using hreduce::Level;
using hreduce::PlacementPolicy;
using hreduce::Topology;

namespace {

// Distinct objects of `level` under the first `members` members.
int distinct(const Topology& t, const hreduce::Placement& p, int members, Level level) {
  std::set<int> seen;
  for (int m = 0; m < members; ++m) seen.insert(t.pus()[p.pu_of_member[m]].in(level));
  return static_cast<int>(seen.size());
}

}  // namespace

TEST_CASE("compact puts member i on PU i, wrapping past the last PU", "[placement]") {
  const auto t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");
  // Non-monotonic on purpose, including oversubscribed teams.
  const int members = GENERATE(7, 1, 64, 3, 65, 130, 16);
  CAPTURE(members);
  const auto p = hreduce::place(t, members, PlacementPolicy::compact);
  CHECK(p.policy == PlacementPolicy::compact);
  REQUIRE(p.members() == members);
  for (int m = 0; m < members; ++m) CHECK(p.pu_of_member[m] == m % 64);
}

TEST_CASE("scatter spreads over packages, then NUMA, L3 and cores", "[placement]") {
  const auto t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");
  const auto p = hreduce::place(t, 64, PlacementPolicy::scatter);
  CHECK(p.policy == PlacementPolicy::scatter);
  REQUIRE(p.members() == 64);
  CHECK(distinct(t, p, 2, Level::package) == 2);
  CHECK(distinct(t, p, 4, Level::numa) == 4);
  CHECK(distinct(t, p, 8, Level::l3) == 8);
  CHECK(distinct(t, p, 32, Level::core) == 32);
  // A full team is a permutation of the PUs.
  CHECK(distinct(t, p, 64, Level::pu) == 64);
}

TEST_CASE("scatter order on a small machine, written out", "[placement]") {
  // Package 0 holds cores {0,1} = PUs {0,1},{2,3}; package 1 PUs 4..7. Each
  // package alternates its cores (0 2 1 3 / 4 6 5 7); the packages alternate.
  const auto t = Topology::synthetic("pack:2 core:2 pu:2");
  const auto p = hreduce::place(t, 8, PlacementPolicy::scatter);
  CHECK(p.pu_of_member == std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7});
}

TEST_CASE("scatter wraps round-robin over the same order", "[placement]") {
  const auto t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");
  const auto full = hreduce::place(t, 64, PlacementPolicy::scatter);
  const int members = GENERATE(65, 100, 128, 200);
  CAPTURE(members);
  const auto p = hreduce::place(t, members, PlacementPolicy::scatter);
  REQUIRE(p.members() == members);
  for (int m = 0; m < members; ++m) CHECK(p.pu_of_member[m] == full.pu_of_member[m % 64]);
}

TEST_CASE("a shorter scatter team is a prefix of the full order", "[placement]") {
  const auto t = Topology::synthetic("numa:8 core:8 pu:1");
  const auto full = hreduce::place(t, 64, PlacementPolicy::scatter);
  CHECK(distinct(t, full, 8, Level::numa) == 8);
  const int members = GENERATE(1, 5, 13, 63);
  const auto p = hreduce::place(t, members, PlacementPolicy::scatter);
  for (int m = 0; m < members; ++m) CHECK(p.pu_of_member[m] == full.pu_of_member[m]);
}

TEST_CASE("one PU takes every member", "[placement]") {
  const auto t = Topology::synthetic("pack:1 core:1 pu:1");
  const PlacementPolicy policy = GENERATE(PlacementPolicy::compact, PlacementPolicy::scatter);
  const auto p = hreduce::place(t, 3, policy);
  CHECK(p.pu_of_member == std::vector<int>{0, 0, 0});
}

TEST_CASE("place rejects teams smaller than one", "[placement][negative]") {
  const auto t = Topology::synthetic("pack:1 core:2 pu:1");
  const int members = GENERATE(0, -1, -64);
  const PlacementPolicy policy = GENERATE(PlacementPolicy::compact, PlacementPolicy::scatter);
  CHECK_THROWS_AS(hreduce::place(t, members, policy), hreduce::Error);
  CHECK_THROWS_WITH(hreduce::place(t, members, policy),
                    Catch::Contains("members is " + std::to_string(members)));
}
