// Every collective × op family × type × size × team size × in place or not ×
// placement, against a sequential oracle (issue: shared-memory engine).
#include <catch2/catch.hpp>

#include "families.hpp"
#include "harness.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

struct TeamShape {
  const char* name;
  const char* synthetic;  // nullptr: this machine
  PlacementPolicy placement;
};

Team make_team(const TeamShape& shape, int members) {
  TeamOptions options;
  options.members = members;
  options.placement = shape.placement;
  if (shape.synthetic) options.topology = Topology::synthetic(shape.synthetic);
  return Team(options);
}

std::vector<std::size_t> sizes() {
  if (quick()) return {0, 1, 7, 1000};
  return {0, 1, 7, 100, 1000, 100003};
}

}  // namespace

TEST_CASE("collectives match the sequential oracle", "[engine][conformance]") {
  const TeamShape shape =
      GENERATE(TeamShape{"synthetic 2x2x2x4x2, compact", "pack:2 numa:2 l3:2 core:4 pu:2",
                         PlacementPolicy::compact},
               TeamShape{"synthetic 2x2x2x4x2, scatter", "pack:2 numa:2 l3:2 core:4 pu:2",
                         PlacementPolicy::scatter},
               TeamShape{"this machine, compact", nullptr, PlacementPolicy::compact});
  // Non-monotonic order, so a size that only works after a larger one ran
  // (a pool sized by an earlier call) cannot hide.
  const int members = quick() ? GENERATE(3, 1, 16, 4) : GENERATE(3, 1, 16, 2, 7, 4, 8);
  Team team = make_team(shape, members);
  INFO(shape.name << ", " << members << " members");

  int checked = 0;
  for_each_family([&](const auto& fam) {
    for (std::size_t n : sizes()) {
      // The largest size runs a type-covering subset, to keep the suite fast.
      if (n > 1000 && fam.name.find("sum") == std::string::npos &&
          fam.name.find("user") == std::string::npos &&
          fam.name.find("minloc") == std::string::npos) {
        continue;
      }
      for (Collective c : all_collectives()) {
        for (bool in_place : {false, true}) {
          const int root = members > 1 ? members - 2 : 0;
          const std::string problem = check_on_team(team, fam, c, n, in_place, root);
          if (!problem.empty()) {
            FAIL_CHECK(fam.name << " " << name_of(c) << " n=" << n << (in_place ? " in place" : "")
                                << ": " << problem);
          }
          ++checked;
        }
      }
    }
  });
  CHECK(checked > 0);
}

TEST_CASE("forced algorithms and tree shapes give the oracle's result", "[engine][conformance]") {
  const int members = GENERATE(3, 8, 5);
  TeamOptions team_options;
  team_options.members = members;
  team_options.topology = Topology::synthetic("pack:2 numa:2 core:2 pu:2");
  team_options.placement = GENERATE(PlacementPolicy::compact, PlacementPolicy::scatter);
  Team team(team_options);
  const auto double_sum = family<double>("double sum", op::sum, quarter);
  const auto affine = family<Affine>("affine", affine_op, [](int m, std::size_t i) {
    return Affine{static_cast<std::uint64_t>(small(m, i, 100)) * 2 + 1,
                  static_cast<std::uint64_t>(m)};
  });
  for (Algorithm algorithm : {Algorithm::tree, Algorithm::sliced}) {
    for (TreeShape shape : {TreeShape::hierarchical, TreeShape::binomial, TreeShape::knomial,
                            TreeShape::binary, TreeShape::flat, TreeShape::chain}) {
      CollectiveOptions options;
      options.algorithm = algorithm;
      options.tree = shape;
      options.radix = 3;
      options.chunk_bytes = 64;  // many chunks even for short vectors
      for (std::size_t n : {1, 7, 1000}) {
        for (Collective c : {Collective::reduce, Collective::allreduce}) {
          for (int root : {0, members - 1, members / 2}) {
            for (bool in_place : {false, true}) {
              INFO(to_string(algorithm) << " " << to_string(shape) << " " << name_of(c) << " n="
                                        << n << " root=" << root << (in_place ? " in place" : ""));
              CHECK(check_on_team(team, double_sum, c, n, in_place, root, options).empty());
              CHECK(check_on_team(team, affine, c, n, in_place, root, options).empty());
            }
          }
        }
      }
    }
  }
}
