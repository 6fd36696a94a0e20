// Topology-shaped trees on synthetic machines: valid, computing the right
// result, rank-ordered under compact placement, and crossing each level's
// boundary the minimum number of times (once per group joined).
#include <catch2/catch.hpp>
#include <set>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"
#include "hreduce/topology.hpp"
#include "oracle_ops.hpp"
#include "src/schedule/simulator.hpp"

using hreduce::Level;
using hreduce::PlacementPolicy;
using hreduce::Schedule;
using hreduce::Topology;

namespace {

std::vector<int> prefix(const Topology& topo, const hreduce::Placement& placement,
                        const std::vector<Level>& levels, int member, std::size_t depth) {
  const hreduce::Pu& pu = topo.pus()[placement.pu_of_member[member]];
  std::vector<int> key;
  for (std::size_t i = 0; i < depth; ++i) key.push_back(pu.in(levels[i]));
  return key;
}

// Transfers joining two groups of depth d+1 inside one group of depth d must
// number exactly (#groups at d+1) - (#groups at d): one per group joined.
void check_minimal_crossings(const Topology& topo, const hreduce::Placement& placement,
                             const std::vector<Level>& levels, const Schedule& s) {
  const int p = placement.members();
  for (std::size_t d = 0; d < levels.size(); ++d) {
    std::set<std::vector<int>> outer, inner;
    for (int m = 0; m < p; ++m) {
      outer.insert(prefix(topo, placement, levels, m, d));
      inner.insert(prefix(topo, placement, levels, m, d + 1));
    }
    int crossings = 0;
    for (const hreduce::Transfer& t : s.transfers()) {
      const bool same_outer = prefix(topo, placement, levels, t.sender, d) ==
                              prefix(topo, placement, levels, t.receiver, d);
      const bool same_inner = prefix(topo, placement, levels, t.sender, d + 1) ==
                              prefix(topo, placement, levels, t.receiver, d + 1);
      if (same_outer && !same_inner) ++crossings;
    }
    INFO("level " << to_string(levels[d]));
    CHECK(crossings == static_cast<int>(inner.size() - outer.size()));
  }
}

long sum_oracle(int p) {
  long total = 0;
  for (int m = 0; m < p; ++m) total += 3L * m + 1;
  return total;
}

}  // namespace

TEST_CASE("hierarchical trees on synthetic topologies", "[schedule][topology]") {
  const std::string description =
      GENERATE(as<std::string>{}, "pack:1 core:4 pu:2", "pack:2 numa:2 core:4 pu:1",
               "numa:8 core:8 pu:1", "pack:2 numa:2 l3:2 core:4 pu:2");
  const Topology topo = Topology::synthetic(description);
  const PlacementPolicy policy = GENERATE(PlacementPolicy::compact, PlacementPolicy::scatter);
  const int radix = GENERATE(2, 4);
  const std::vector<Level> levels = hreduce::schedules::default_levels(topo);
  REQUIRE_FALSE(levels.empty());

  for (int members : {1, 3, 7, 13, topo.pu_count() - 1, topo.pu_count(), topo.pu_count() + 5}) {
    if (members < 1) continue;
    INFO(description << ", " << to_string(policy) << ", radix " << radix << ", " << members
                     << " members");
    const hreduce::Placement placement = hreduce::place(topo, members, policy);
    const Schedule s = hreduce::schedules::hierarchical(topo, placement, levels, 0, radix);
    REQUIRE_NOTHROW(s.validate(true));
    check_minimal_crossings(topo, placement, levels, s);

    std::vector<std::vector<long>> inputs(members);
    for (int m = 0; m < members; ++m) inputs[m] = {3L * m + 1};
    auto add = [](const long* a, const long* b, long* out, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
    };
    CHECK(hreduce::detail::simulate(s, inputs, add) == std::vector<long>{sum_oracle(members)});

    if (policy == PlacementPolicy::compact && members <= topo.pu_count()) {
      // Compact groups are contiguous rank ranges: rank order holds.
      REQUIRE_NOTHROW(s.validate(false));
      std::vector<std::vector<hreduce::test::Mat2>> matrices(members);
      for (int m = 0; m < members; ++m) matrices[m] = {hreduce::test::sample_matrix(m, 7)};
      CHECK(hreduce::detail::simulate(s, matrices, hreduce::test::multiply_matrices) ==
            hreduce::test::sequential_product(matrices));
    }
  }
}

TEST_CASE("hierarchical tree follows the levels given", "[schedule][topology]") {
  // 2 packages × 2 NUMA × 2 cores × 2 PUs; levels {numa, core}, compact.
  const Topology topo = Topology::synthetic("pack:2 numa:2 core:2 pu:2");
  const auto placement = hreduce::place(topo, 16, PlacementPolicy::compact);
  const Schedule s = hreduce::schedules::hierarchical(topo, placement, {Level::numa, Level::core});
  // Stage core: the two PUs of each core; stage numa: cores of a NUMA node;
  // last stage: the four NUMA leaders 0, 4, 8, 12 along a binomial tree.
  CHECK(s.describe() ==
        "hierarchical(numa,core): 16 members, root 0, 4 steps\n"
        "  step 1: 1->0 3->2 5->4 7->6 9->8 11->10 13->12 15->14\n"
        "  step 2: 2->0 6->4 10->8 14->12\n"
        "  step 3: 4->0 12->8\n"
        "  step 4: 8->0\n");
}

TEST_CASE("hierarchical tree with a non-zero root keeps the root as leader",
          "[schedule][topology]") {
  const Topology topo = Topology::synthetic("pack:2 numa:2 core:4 pu:1");
  const auto placement = hreduce::place(topo, 16, PlacementPolicy::compact);
  for (int root : {5, 15}) {
    const Schedule s =
        hreduce::schedules::hierarchical(topo, placement, {Level::package, Level::numa}, root);
    REQUIRE_NOTHROW(s.validate(true));
    CHECK(s.root() == root);
    CHECK_FALSE(s.outgoing(root).has_value());
  }
}

TEST_CASE("default levels skip levels that do not split the machine", "[topology]") {
  using L = std::vector<Level>;
  CHECK(hreduce::schedules::default_levels(Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2")) ==
        L{Level::package, Level::numa, Level::l3, Level::core});
  CHECK(hreduce::schedules::default_levels(Topology::synthetic("numa:8 core:8 pu:1")) ==
        L{Level::numa});
  CHECK(hreduce::schedules::default_levels(Topology::synthetic("pack:1 core:4 pu:2")) ==
        L{Level::core});
}

TEST_CASE("hierarchical rejects bad arguments", "[schedule][negative]") {
  const Topology topo = Topology::synthetic("pack:1 core:2 pu:1");
  hreduce::Placement placement{PlacementPolicy::compact, {0, 5}};
  CHECK_THROWS_WITH(hreduce::schedules::hierarchical(topo, placement, {Level::core}),
                    Catch::Contains("member 1 is placed on PU 5"));
  placement.pu_of_member = {0, 1};
  CHECK_THROWS_WITH(hreduce::schedules::hierarchical(topo, placement, {Level::core}, 0, 1),
                    Catch::Contains("radix must be >= 2, got 1"));
}
