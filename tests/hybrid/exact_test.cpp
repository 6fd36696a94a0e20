// The levels on teams spanning processes (in-memory channel): for exact, every
// layout, with and without the node level, gives the correctly rounded sum,
// so the same bits as one process of threads; explain names what a level
// does there.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "tests/engine/families.hpp"
#include "tests/engine/harness.hpp"
#include "tests/support/error_class.hpp"
#include "tests/support/exact_oracle.hpp"
#include "world.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {"2 processes x 1", {1, 1}, {}},
      {"2 processes x 2", {2, 2}, {}},
      {"3 uneven processes, one node", {1, 2, 3}, {0, 0, 0}},
      {"4 processes, 2 virtual nodes", {2, 1, 2, 2}, {0, 0, 1, 1}},
      {"3 processes, a node each", {2, 1, 1}, {0, 1, 2}},
  };
  return all;
}

CollectiveOptions exact() {
  CollectiveOptions o;
  o.reproducibility = Reproducibility::exact;
  return o;
}

}  // namespace

TEST_CASE("exact sums across processes are the correctly rounded sum on every layout",
          "[hybrid][reproducibility][exact]") {
  const Layout& layout = layouts()[GENERATE(range(0, 5))];
  const bool node_level = GENERATE(true, false);
  detail::InterOptions inter;
  inter.node_shared_memory = node_level;
  World world(layout.threads, layout.node_of, inter);
  const int p = world.size();
  INFO(layout.name << (node_level ? ", node level" : ", messages only"));
  const auto fam = family<double>("double sum", op::sum, spread);
  for (std::size_t n : {std::size_t{1}, std::size_t{64}, std::size_t{1000}, std::size_t{4500}}) {
    for (Collective c : all_collectives()) {
      INFO(name_of(c) << " n " << n);
      const int root = p - 1;
      CollectiveCheck check(fam, c, p, n, false, root);
      world.run([&](Member& m) { check.run(m, exact()); });
      for (int r = 0; r < p; ++r) {
        const auto share = check.share_of(r);
        for (std::size_t i = 0; i < share.length; ++i) {
          INFO("member " << r << " element " << i);
          REQUIRE(same_bits(check.output(r)[i], exact_sum_of_spread(share.last, share.offset + i)));
        }
      }
    }
  }
}

TEST_CASE("an exact sum across processes with a bad argument fails everywhere, in step",
          "[hybrid][reproducibility][exact][negative]") {
  const bool node_level = GENERATE(true, false);
  detail::InterOptions inter;
  inter.node_shared_memory = node_level;
  World world({2, 1}, {}, inter);
  std::vector<std::string> messages(3), classes(3);
  std::vector<double> after(3);
  world.run([&](Member& m) {
    const int r = m.rank();
    std::vector<double> x(4, 1.0), y(4);
    try {
      m.reduce(x.data(), y.data(), 4, op::sum, r == 2 ? 5 : 0, exact());
    } catch (const Error& e) {
      messages[r] = e.what();
      classes[r] = class_tag(e);
    }
    double one = 0.5;
    m.allreduce(&one, &after[r], 1, op::sum, exact());
  });
  for (int r = 0; r < 3; ++r) {
    INFO("member " << r << (node_level ? ", node level" : ", messages only"));
    CHECK(classes[r] == "[ArgumentError] ");
    CHECK_THAT(messages[r], Catch::Contains("reduce") && Catch::Contains("root 5 is outside 0..2"));
    CHECK(after[r] == 1.5);
  }
}

TEST_CASE("explain names the chain of a shape_independent call across processes",
          "[hybrid][reproducibility]") {
  CollectiveOptions shape;
  shape.reproducibility = Reproducibility::shape_independent;
  World chained({1, 2, 1});
  CHECK_THAT(chained.team(1).explain(Collective::allreduce, 1 << 20, shape),
             Catch::Contains("3 processes fold in turn, in rank order") &&
                 Catch::Contains("the left fold in rank order over 4 members"));
  CHECK_THAT(chained.team(1).explain(Collective::allreduce, 1 << 20, exact()),
             Catch::Contains("correctly rounded sum (an allreduce agrees on a grid"));
  // One member in every process after the first, on one node: the node
  // level's rank-order fold is the left fold already, and no chain runs.
  World single({2, 1, 1});
  CHECK_THAT(single.team(1).explain(Collective::allreduce, 1 << 20, shape),
             !Catch::Contains("fold in turn") &&
                 Catch::Contains("the left fold in rank order over 4 members"));
}
