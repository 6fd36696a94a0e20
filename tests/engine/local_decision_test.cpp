// The local decisions as pure functions (src/engine/local_decision.hpp):
// the path, the tree and the slices against hand-computed cases, and the
// team's own answers (Team::local_path, Team::explain, the tree the
// executor runs) against the functions over sweeps of sizes and teams.
#include "src/engine/local_decision.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "hreduce/team.hpp"

using namespace hreduce;
using detail::CollectiveKind;
using detail::LocalFacts;
using detail::LocalPath;
using detail::LocalReason;

namespace {

LocalFacts facts(CollectiveKind kind, std::size_t bytes, int members) {
  LocalFacts f;
  f.kind = kind;
  f.bytes_per_member = bytes;
  f.members_here = members;
  f.members_in_team = members;
  return f;
}

// Every transfer of a plan, round by round, as "s:a->b".
std::vector<std::string> rounds_of(const detail::TreePlan& plan) {
  std::vector<std::string> text;
  for (std::size_t s = 0; s < plan.rounds.size(); ++s) {
    for (const Transfer& t : plan.rounds[s]) {
      CHECK(t.step == static_cast<int>(s) + 1);
      text.push_back(std::to_string(t.step) + ":" + std::to_string(t.sender) + "->" +
                     std::to_string(t.receiver));
    }
  }
  return text;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("the local path: hand-computed cases", "[engine][decision]") {
  using K = CollectiveKind;
  const auto path = [](const LocalFacts& f) { return detail::decide_local(f); };
  // Two members, a short vector of a predefined op: the mailbox, up to 512 B.
  CHECK(path(facts(K::allreduce, 8, 2)).path == LocalPath::mailbox);
  CHECK(path(facts(K::scan, 512, 2)).path == LocalPath::mailbox);
  CHECK(path(facts(K::scan, 513, 2)).why == LocalReason::longer_than_mailbox);
  CHECK(path(facts(K::scan, 0, 2)).why == LocalReason::nothing_to_move);
  CHECK(path(facts(K::reduce_scatter, 8, 2)).why == LocalReason::no_mailbox_for_kind);
  LocalFacts user = facts(K::reduce, 8, 2);
  user.op_may_throw = true;
  CHECK(path(user).why == LocalReason::op_may_throw);
  LocalFacts spanning = facts(K::reduce, 8, 2);
  spanning.spans_processes = true;
  CHECK(path(spanning).why == LocalReason::spans_processes);
  // Eight members (tree_min_members): reduce and allreduce go down the tree
  // up to 4096 B (tree_max_bytes); the others never go by mailbox.
  CHECK(path(facts(K::allreduce, 8, 8)).why == LocalReason::many_members_short);
  CHECK(path(facts(K::reduce, 4096, 8)).path == LocalPath::tree);
  CHECK(path(facts(K::reduce, 4097, 8)).why == LocalReason::longer_than_tree_max);
  CHECK(path(facts(K::scan, 8, 8)).why == LocalReason::too_many_for_mailbox);
  CHECK(path(facts(K::allreduce, 8, 7)).path == LocalPath::mailbox);
  // Levels above run_to_run fold in rank order: not the tree.
  LocalFacts shape = facts(K::allreduce, 8, 8);
  shape.options.reproducibility = Reproducibility::shape_independent;
  const detail::LocalDecision shaped = path(shape);
  CHECK(shaped.why == LocalReason::rank_order_level);
  CHECK_THAT(shaped.reason, !Catch::Contains("tree") && Catch::Contains("shape_independent"));
  // What the options ask for wins.
  LocalFacts asked = facts(K::reduce, 1 << 20, 2);
  asked.options.algorithm = Algorithm::tree;
  CHECK(path(asked).why == LocalReason::asked_tree);
  asked.kind = K::scan;
  CHECK(path(asked).why == LocalReason::tree_for_reductions);
  asked.options.algorithm = Algorithm::sliced;
  asked.bytes_per_member = 8;
  CHECK(path(asked).why == LocalReason::asked_sliced);
  // Thresholds move with the options.
  LocalFacts tuned = facts(K::allreduce, 100, 3);
  tuned.options.tree_min_members = 3;
  tuned.options.tree_max_bytes = 100;
  CHECK(path(tuned).path == LocalPath::tree);
  CHECK_THAT(path(tuned).reason, Catch::Contains("tree_min_members 3") &&
                                     Catch::Contains("tree_max_bytes 100") &&
                                     !Catch::Contains("; "));
  CHECK(detail::to_string(LocalPath::sliced) == "sliced");
}

TEST_CASE("Team::local_path and explain agree with decide_local", "[engine][decision]") {
  const Collective kinds[] = {Collective::reduce,         Collective::allreduce,
                              Collective::reduce_scatter, Collective::reduce_scatter_block,
                              Collective::scan,           Collective::exscan};
  const std::size_t sizes[] = {0, 1, 8, 16, 17, 511, 512, 513, 4095, 4096, 4097, 1 << 20};
  CollectiveOptions tree, sliced, shape, low_threshold;
  tree.algorithm = Algorithm::tree;
  sliced.algorithm = Algorithm::sliced;
  shape.reproducibility = Reproducibility::shape_independent;
  low_threshold.tree_min_members = 3;
  low_threshold.tree_max_bytes = 512;
  int checked = 0;
  for (int members : {1, 2, 3, 7, 8, 9, 16}) {
    for (const CollectiveOptions& options : {CollectiveOptions{}, tree, sliced, shape,
                                             low_threshold}) {
      TeamOptions team_options;
      team_options.members = members;
      team_options.topology = Topology::synthetic("pack:2 core:4 pu:2");
      team_options.bind = false;
      team_options.collectives = options;
      const Team team(team_options);
      for (Collective kind : kinds) {
        for (std::size_t bytes : sizes) {
          LocalFacts f = facts(detail::kind_of(kind), bytes, members);
          f.options = options;
          const detail::LocalDecision decision = detail::decide_local(f);
          INFO(to_string(kind) << ", " << bytes << " B, " << members << " members");
          CHECK(team.local_path(kind, bytes) == detail::to_string(decision.path));
          CHECK_THAT(team.explain(kind, bytes),
                     Catch::Contains("inside each process: " +
                                     std::string(detail::to_string(decision.path))) &&
                         Catch::Contains(decision.reason));
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 7 * 5 * 6 * 12);
}

TEST_CASE("tree plans: hand-computed rounds", "[engine][decision]") {
  detail::TreeFacts f;
  f.members = 8;
  f.options.tree = TreeShape::binomial;
  detail::TreePlan binomial = detail::plan_tree(f);
  CHECK(binomial.depth() == 3);
  CHECK(binomial.tree_root == 0);
  CHECK(rounds_of(binomial) ==
        Strings{"1:1->0", "1:3->2", "1:5->4", "1:7->6", "2:2->0", "2:6->4", "3:4->0"});

  // Two NUMA nodes of four members, cores of two, in rank order: the same
  // rounds, one stage per level.
  f.options.tree = TreeShape::hierarchical;
  f.levels = {Level::numa, Level::core};
  f.containers = detail::compact_containers(8, {4, 2});
  CHECK(f.containers == std::vector<std::vector<int>>{{0, 0, 0, 0, 1, 1, 1, 1},
                                                      {0, 0, 1, 1, 2, 2, 3, 3}});
  const detail::TreePlan grouped = detail::plan_tree(f);
  CHECK(rounds_of(grouped) == rounds_of(binomial));
  CHECK_THAT(grouped.reason, Catch::Contains("hierarchical(numa,core)") &&
                                 Catch::Contains("radix 2") && Catch::Contains("3 rounds"));

  f.members = 9;
  f.options.tree = TreeShape::knomial;
  f.options.radix = 3;
  CHECK(rounds_of(detail::plan_tree(f)) == Strings{"1:1->0", "1:2->0", "1:4->3", "1:5->3",
                                                   "1:7->6", "1:8->6", "2:3->0", "2:6->0"});
  f.members = 4;
  f.options.tree = TreeShape::flat;
  CHECK(rounds_of(detail::plan_tree(f)) == Strings{"1:1->0", "1:2->0", "1:3->0"});
  f.options.tree = TreeShape::chain;
  CHECK(detail::plan_tree(f).depth() == 3);

  // Members alternating between two NUMA nodes (a scatter placement): the
  // groups are {0, 2} and {1, 3}. A non-commutative op needs consecutive
  // ranks, so it gets the binomial tree from member 0, forwarded to root 3.
  f.options.tree = TreeShape::hierarchical;
  f.options.radix = 2;
  f.levels = {Level::numa};
  f.containers = {{0, 1, 0, 1}};
  CHECK(rounds_of(detail::plan_tree(f)) == Strings{"1:2->0", "1:3->1", "2:1->0"});
  f.commutative = false;
  f.root = 3;
  const detail::TreePlan ordered = detail::plan_tree(f);
  CHECK(ordered.tree_root == 0);
  CHECK(ordered.forwarded_to_root);
  CHECK(rounds_of(ordered) == Strings{"1:1->0", "1:3->2", "2:2->0"});
  CHECK_THAT(ordered.reason, Catch::Contains("non-commutative"));

  f.root = 4;
  CHECK_THROWS_AS(detail::plan_tree(f), Error);
  CHECK_THROWS_AS(detail::compact_containers(4, {0}), ArgumentError);
}

TEST_CASE("the tree a team runs is the hierarchical schedule of its machine",
          "[engine][decision]") {
  for (PlacementPolicy placement : {PlacementPolicy::compact, PlacementPolicy::scatter}) {
    TeamOptions options;
    options.members = 12;
    options.topology = Topology::synthetic("pack:2 numa:2 core:4 pu:1");
    options.placement = placement;
    options.bind = false;
    const Team team(options);
    for (int root : {0, 5}) {
      detail::TreeFacts f;
      f.members = team.local_size();
      f.root = root;
      f.levels = team.levels();
      f.containers = detail::tree_containers(team.topology(), team.placement(), team.levels());
      const Schedule expected = schedules::hierarchical(team.topology(), team.placement(),
                                                        team.levels(), root, 2);
      CHECK(detail::plan_tree(f).schedule.transfers() == expected.transfers());
    }
  }
}

TEST_CASE("slices: hand-computed bounds and chunks", "[engine][decision]") {
  CollectiveOptions options;
  // 100 doubles among 3: 13 cache lines of 8, cut at lines 4 and 8.
  detail::SlicePlan plan = detail::plan_slices(3, 100, sizeof(double), options);
  CHECK(plan.granule == 8);
  CHECK(plan.chunk_elements == 2048);
  REQUIRE(plan.slices.size() == 3);
  CHECK((plan.slices[0].lo == 0 && plan.slices[0].hi == 32));
  CHECK((plan.slices[1].lo == 32 && plan.slices[1].hi == 64));
  CHECK((plan.slices[2].lo == 64 && plan.slices[2].hi == 100));
  CHECK(plan.chunks == std::vector<std::size_t>{1, 1, 1});
  // 96-byte chunks of doubles: 12 elements, so 32 elements take 3.
  options.chunk_bytes = 96;
  plan = detail::plan_slices(3, 100, sizeof(double), options);
  CHECK(plan.chunks == std::vector<std::size_t>{3, 3, 3});
  // An element size that does not divide a line slices by elements; fewer
  // elements than members leave some slices empty (edges at 2j/4: 0 0 1 1 2).
  plan = detail::plan_slices(4, 2, 24, options);
  CHECK(plan.granule == 1);
  CHECK((plan.slices[0].size() == 0 && plan.slices[2].size() == 0));
  CHECK((plan.slices[1].lo == 0 && plan.slices[1].hi == 1));
  CHECK((plan.slices[3].lo == 1 && plan.slices[3].hi == 2));
  CHECK(detail::chunk_elements(4, sizeof(double)) == 1);

  // The pipeline's helpers split a chunk in equal shares, the last short.
  const detail::Slice chunk{0, 10};
  CHECK(detail::pipeline_piece(0, 3, chunk).hi == 4);
  CHECK((detail::pipeline_piece(2, 3, chunk).lo == 8 && detail::pipeline_piece(2, 3, chunk).hi == 10));
  CHECK(detail::pipeline_piece(2, 3, {100, 101}).size() == 0);
}
