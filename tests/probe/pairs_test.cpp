// Relations between PUs and the pairs a probe times, on synthetic machines
// whose containers follow from the PU index (the oracle below).
#include <algorithm>
#include <set>
#include <utility>

#include <catch2/catch.hpp>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"
#include "src/probe/pairs.hpp"

namespace pr = hreduce::detail::probe;
using hreduce::Topology;
using pr::Relation;

namespace {

// "pack:2 numa:2 l3:2 core:4 pu:2": PU p sits in core p/2, L3 p/8, NUMA
// node p/16 and package p/32 (hwloc numbers depth first).
Relation expected_two_socket(int a, int b) {
  if (a / 2 == b / 2) return Relation::same_core;
  if (a / 8 == b / 8) return Relation::same_l3;
  if (a / 16 == b / 16) return Relation::same_numa;
  if (a / 32 == b / 32) return Relation::same_package;
  return Relation::across_packages;
}

}  // namespace

TEST_CASE("relation_of names the innermost level two PUs share", "[probe]") {
  const Topology t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");
  REQUIRE(t.pu_count() == 64);
  for (int a = 0; a < t.pu_count(); ++a) {
    for (int b = 0; b < t.pu_count(); ++b) {
      if (a == b) continue;
      INFO("PUs " << a << " and " << b);
      CHECK(pr::relation_of(t, a, b) == expected_two_socket(a, b));
      CHECK(pr::relation_of(t, a, b) == pr::relation_of(t, b, a));
    }
  }
}

TEST_CASE("relation_of sees a shared L2 where the machine has one", "[probe]") {
  // PU p: core p/2, L2 p/4 (two cores each), one L3.
  const Topology t = Topology::synthetic("pack:1 l3:1 l2:2 core:2 pu:2");
  CHECK(pr::relation_of(t, 0, 1) == Relation::same_core);
  CHECK(pr::relation_of(t, 0, 2) == Relation::same_l2);
  CHECK(pr::relation_of(t, 1, 3) == Relation::same_l2);
  CHECK(pr::relation_of(t, 0, 4) == Relation::same_l3);
  CHECK(pr::relation_of(t, 3, 7) == Relation::same_l3);
}

TEST_CASE("relation_of rejects a PU outside the machine, naming it", "[probe]") {
  const Topology t = Topology::synthetic("pack:1 core:2 pu:1");
  CHECK_THROWS_AS(pr::relation_of(t, 0, 2), hreduce::ArgumentError);
  CHECK_THROWS_WITH(pr::relation_of(t, -1, 0), Catch::Contains("PU -1"));
}

TEST_CASE("relation names read back", "[probe]") {
  for (int i = 0; i < pr::kRelationCount; ++i) {
    const auto r = static_cast<Relation>(i);
    CHECK(pr::parse_relation(pr::to_string(r)) == r);
  }
  CHECK_FALSE(pr::parse_relation("same_socket"));
}

TEST_CASE("probe_pairs: every pair on a small machine", "[probe]") {
  const Topology t = Topology::synthetic("pack:1 numa:2 core:3 pu:2");  // 12 PUs
  const auto pairs = pr::probe_pairs(t, 32, 5);
  CHECK(pairs.size() == 12u * 11 / 2);
  CHECK(std::is_sorted(pairs.begin(), pairs.end()));
  CHECK(std::set<std::pair<int, int>>(pairs.begin(), pairs.end()).size() == pairs.size());
  for (const auto& [a, b] : pairs) CHECK((0 <= a && a < b && b < 12));
}

TEST_CASE("probe_pairs: one pair per relation plus a sample on a large machine", "[probe]") {
  const Topology t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");  // 64 PUs
  const int sample = 20;
  const auto pairs = pr::probe_pairs(t, 32, sample);
  // The machine has five relations (no L2 level): five representatives.
  CHECK(pairs.size() == 5u + sample);
  std::set<Relation> seen;
  for (const auto& [a, b] : pairs) {
    CHECK((0 <= a && a < b && b < 64));
    seen.insert(pr::relation_of(t, a, b));
  }
  CHECK(seen == std::set<Relation>{Relation::same_core, Relation::same_l3, Relation::same_numa,
                                   Relation::same_package, Relation::across_packages});
  CHECK(std::set<std::pair<int, int>>(pairs.begin(), pairs.end()).size() == pairs.size());
  CHECK(std::is_sorted(pairs.begin(), pairs.end()));
  CHECK(pr::probe_pairs(t, 32, sample) == pairs);  // the same pairs every time
}

TEST_CASE("probe_pairs: a sample larger than the pairs left stops at every pair", "[probe]") {
  const Topology t = Topology::synthetic("pack:1 core:4 pu:1");
  CHECK(pr::probe_pairs(t, 2, 1000).size() == 6u);
}

TEST_CASE("describe copies the containers of every PU", "[probe]") {
  const Topology t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");
  const pr::MachineTopology d = pr::describe(t);
  CHECK(d.packages == 2);
  CHECK(d.numa_nodes == 4);
  CHECK(d.l3_caches == 8);
  CHECK(d.cores == 32);
  REQUIRE(d.pus.size() == 64u);
  for (int p = 0; p < 64; ++p) {
    CHECK(d.pus[p].core == p / 2);
    CHECK(d.pus[p].l3 == p / 8);
    CHECK(d.pus[p].numa == p / 16);
    CHECK(d.pus[p].package == p / 32);
    CHECK(d.pus[p].l2 == -1);
  }
}
