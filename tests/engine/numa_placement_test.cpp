// NUMA placement (src/engine/numa_placement.hpp): which member folds which
// slice, checked on synthetic multi-NUMA machines against expectations
// built another way (by hand, or node by node from the topology); the
// memory a team asks for on this machine, checked against what the kernel
// reports; and the bits of a call, which placement must not change.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "families.hpp"
#include "harness.hpp"
#include "hreduce/team.hpp"
#include "src/engine/local_decision.hpp"
#include "src/engine/numa_placement.hpp"
#include "src/engine/process_group.hpp"
#include "src/engine/team_state.hpp"
#include "tests/support/exact_oracle.hpp"
#include "tests/support/mempolicy.hpp"

using namespace hreduce;
using detail::NumaPlan;
using detail::NumaRange;

namespace {

// The expected slice order built node by node: for each NUMA node in
// turn, its members in rank order (no sort involved).
std::vector<int> members_node_by_node(const Topology& topology, const Placement& placement) {
  std::vector<int> order;
  for (int node = -1; node < topology.count(Level::numa); ++node) {
    for (int r = 0; r < placement.members(); ++r) {
      if (topology.pus()[placement.pu_of_member[r]].in(Level::numa) == node) order.push_back(r);
    }
  }
  return order;
}

// The node that folds byte `at` of a vector of `bytes`, found by walking
// the slices (slice_of) with no help from the plan's spans.
int folder_node(const NumaPlan& plan, std::size_t bytes, std::size_t at) {
  for (int s = 0; s < plan.members(); ++s) {
    const detail::Slice slice = detail::slice_of(s, plan.members(), bytes, 1);
    if (at >= slice.lo && at < slice.hi) return plan.numa_of_slice(s);
  }
  return plan.numa_of_slice(plan.members() - 1);  // past the end: the last page's tail
}

}  // namespace

TEST_CASE("slices follow the NUMA nodes, by hand on a small machine", "[engine][numa]") {
  // PUs 0 and 1 on node 0, PUs 2 and 3 on node 1.
  const Topology machine = Topology::synthetic("numa:2 core:2 pu:1");
  const Placement placement{PlacementPolicy::compact, {2, 0, 3, 1}};
  const NumaPlan plan = detail::plan_numa(machine, placement);
  CHECK(plan.numa_of_member == std::vector<int>{1, 0, 1, 0});
  CHECK(plan.member_of_slice == std::vector<int>{1, 3, 0, 2});
  CHECK(plan.slice_of_member == std::vector<int>{2, 0, 3, 1});
  // 1000 doubles in lines of 8: slices end at elements 248, 496, 744, 1000.
  CHECK(detail::numa_spans(plan, 1000, 8) ==
        std::vector<NumaRange>{{0, 496 * 8, 0}, {496 * 8, 8000, 1}});
  // Byte 3968 starts node 1's run, inside page 0, which stays node 0's.
  CHECK(detail::page_spans(plan, 8000, 4096) ==
        std::vector<NumaRange>{{0, 4096, 0}, {4096, 8192, 1}});
}

TEST_CASE("slices follow the NUMA nodes on synthetic machines", "[engine][numa]") {
  const char* shape = GENERATE("pack:2 numa:2 l3:2 core:4 pu:2", "pack:2 numa:4 core:3 pu:1",
                               "numa:3 core:5 pu:2", "pack:1 core:4 pu:2");
  const Topology machine = Topology::synthetic(shape);
  const auto policy = GENERATE(PlacementPolicy::compact, PlacementPolicy::scatter);
  const int members = GENERATE(1, 3, 8, 13, 32, 70);  // 70: more members than PUs, wrapped
  const Placement placement = place(machine, members, policy);
  INFO(shape << ", " << to_string(policy) << ", " << members << " members");
  const NumaPlan plan = detail::plan_numa(machine, placement);

  REQUIRE(plan.members() == members);
  CHECK(plan.member_of_slice == members_node_by_node(machine, placement));
  for (int r = 0; r < members; ++r) {
    CHECK(plan.member_of_slice[plan.slice_of_member[r]] == r);
    CHECK(plan.numa_of_member[r] == machine.pus()[placement.pu_of_member[r]].in(Level::numa));
  }
  if (policy == PlacementPolicy::compact && members <= machine.pu_count()) {
    // Compact placement already sits in NUMA order: nothing moves.
    for (int r = 0; r < members; ++r) CHECK(plan.slice_of_member[r] == r);
  }

  // Every node's slices form one run of the vector, folded by its members
  // alone, and each holds its members' share to within a line per member.
  const std::size_t bytes = GENERATE(std::size_t{64}, std::size_t{100003}, std::size_t{1} << 24);
  const std::vector<NumaRange> spans = detail::numa_spans(plan, bytes, 1);
  std::size_t covered = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    CHECK(spans[i].lo == covered);
    covered = spans[i].hi;
    if (i > 0) CHECK(spans[i].numa > spans[i - 1].numa);
    const auto on_node =
        std::count(plan.numa_of_member.begin(), plan.numa_of_member.end(), spans[i].numa);
    const double share = static_cast<double>(bytes) * static_cast<double>(on_node) / members;
    CHECK(std::abs(static_cast<double>(spans[i].hi - spans[i].lo) - share) <=
          64.0 * static_cast<double>(on_node) + 64.0);
    for (std::size_t at : {spans[i].lo, (spans[i].lo + spans[i].hi) / 2, spans[i].hi - 1}) {
      CHECK(folder_node(plan, bytes, at) == spans[i].numa);
    }
  }
  CHECK(covered == bytes);

  // Pages: every page on the node that folds its first byte, no gaps.
  const std::size_t page = 4096;
  const std::vector<NumaRange> pages = detail::page_spans(plan, bytes, page);
  std::size_t at = 0;
  for (const NumaRange& run : pages) {
    CHECK(run.lo == at);
    CHECK(run.hi % page == 0);
    for (std::size_t p = run.lo; p < run.hi; p += page) {
      CHECK(folder_node(plan, bytes, p) == run.numa);
    }
    at = run.hi;
  }
  CHECK(at == (bytes + page - 1) / page * page);
}

TEST_CASE("a process's staging chunks belong on its member 0's node", "[engine][numa]") {
  // A node's processes each bound to one NUMA node's PUs, as mpirun
  // --bind-to numa would: PUs 0-3 on node 0, 4-7 on node 1.
  const Topology machine = Topology::synthetic("numa:2 core:2 pu:2");
  for (int node : {0, 1}) {
    const std::vector<int> allowed{4 * node, 4 * node + 1, 4 * node + 2, 4 * node + 3};
    const Placement placement = place(machine, 3, PlacementPolicy::scatter, allowed);
    CHECK(detail::staging_numa(detail::plan_numa(machine, placement)) == node);
  }
  // By hand: member 0 on PU 2, on node 1.
  const Topology small = Topology::synthetic("numa:2 core:2 pu:1");
  CHECK(detail::staging_numa(
            detail::plan_numa(small, Placement{PlacementPolicy::compact, {2, 0, 3, 1}})) == 1);
}

TEST_CASE("a placement outside the machine is an error naming the member", "[engine][numa]") {
  const Topology machine = Topology::synthetic("numa:2 core:2 pu:1");
  const Placement placement{PlacementPolicy::compact, {0, 9}};
  CHECK_THROWS_WITH(detail::plan_numa(machine, placement),
                    Catch::Contains("member 1") && Catch::Contains("PU 9"));
}

TEST_CASE("placement moves memory, not arithmetic: the rank-order fold's bits on a scatter team",
          "[engine][numa]") {
  // Scatter places members 0..3 on nodes 0 1 0 1, so slices are folded out
  // of rank order; the elements must still be x_0 ∘ … ∘ x_{p-1} in rank
  // order, to the bit.
  TeamOptions options;
  options.members = GENERATE(4, 7);
  options.topology = Topology::synthetic("pack:2 numa:1 core:2 pu:1");
  options.placement = PlacementPolicy::scatter;
  Team team(options);
  const auto rounding_prod =
      test::family<double>("double prod", op::prod,
                           [](int m, std::size_t i) { return 1.0 + test::spread(m, i) * 0x1p-61; });
  CollectiveOptions o;
  o.algorithm = Algorithm::sliced;
  o.reproducibility = Reproducibility::shape_independent;
  o.chunk_bytes = 256;
  const auto affine = test::family<
      test::Affine>("affine", test::affine_op, [](int m, std::size_t i) {
    return test::Affine{3u + 2u * static_cast<std::uint64_t>(m), i + static_cast<std::uint64_t>(m)};
  });
  for (std::size_t n : {std::size_t{7}, std::size_t{1000}, std::size_t{100003}}) {
    for (Collective c : test::all_collectives()) {
      for (bool in_place : {false, true}) {
        INFO(test::name_of(c) << " n " << n << (in_place ? " in place" : ""));
        CHECK(test::check_on_team(team, rounding_prod, c, n, in_place, 1, o) == "");
        CHECK(test::check_on_team(team, affine, c, n, in_place, options.members - 1, o) == "");
      }
    }
  }
}

TEST_CASE("a member's working memory is asked for on its NUMA node, and the kernel agrees",
          "[engine][numa]") {
  TeamOptions options;
  options.members = 2;
  detail::TeamState team(options);
  const NumaPlan& plan = team.numa_plan;
  for (int r = 0; r < team.size(); ++r) {
    const int numa = team.topology.pus()[team.placement.pu_of_member[r]].in(Level::numa);
    CHECK(plan.numa_of_member[r] == numa);
    CHECK(team.members[r]->numa == numa);
    // The tree's accumulator (0) and the sliced path's scratch (1).
    for (int which : {0, 1}) {
      auto* memory = static_cast<unsigned char*>(team.members[r]->scratch(which, 1 << 16));
      memory[0] = 1;
      const auto policy = test::page_policy(memory);
      if (!policy) {
        WARN("the kernel does not report memory policies here (get_mempolicy failed)");
        continue;
      }
      CHECK(policy->mode == MPOL_BIND);
      CHECK(policy->nodes == std::uint64_t{1} << team.topology.numa_os_index(numa));
      if (const auto node = test::page_node(memory)) {
        CHECK(*node == team.topology.numa_os_index(numa));
      }
    }
  }
}

TEST_CASE("Team::allocate lays a vector's slices on the nodes that fold them", "[engine][numa]") {
  TeamOptions options;
  options.members = 2;
  Team team(options);
  const std::size_t n = 300000;
  const std::span<double> memory = team.allocate<double>(n);
  REQUIRE(memory.size() == n);
  CHECK(std::all_of(memory.begin(), memory.end(), [](double x) { return x == 0.0; }));
  const NumaPlan plan = detail::plan_numa(team.topology(), team.placement());
  const std::size_t page = 4096;
  const auto* base = reinterpret_cast<const std::byte*>(memory.data());
  for (const NumaRange& run : detail::page_spans(plan, n * sizeof(double), page)) {
    for (std::size_t at = run.lo; at < std::min(run.hi, n * sizeof(double)); at += page) {
      const auto policy = test::page_policy(base + at);
      if (!policy) {
        WARN("the kernel does not report memory policies here (get_mempolicy failed)");
        return;
      }
      CHECK(policy->mode == MPOL_BIND);
      CHECK(policy->nodes == std::uint64_t{1} << team.topology().numa_os_index(run.numa));
    }
  }
  // Calls read such memory like any other (Catch's checks stay on this thread).
  std::fill(memory.begin(), memory.end(), 1.5);
  std::vector<std::vector<double>> out(team.size(), std::vector<double>(n));
  team.run([&](Member& m) { m.allreduce(memory.data(), out[m.rank()].data(), n, op::sum); });
  for (const std::vector<double>& result : out) {
    CHECK(std::all_of(result.begin(), result.end(), [&](double x) { return x == 1.5 * 2; }));
  }
}
