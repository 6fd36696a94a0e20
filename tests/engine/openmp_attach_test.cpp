// Attach mode from an OpenMP parallel region. Not run under TSan: it does not
// see libgomp's barriers and would report false races.
#include <omp.h>
#include <catch2/catch.hpp>

#include "families.hpp"
#include "harness.hpp"
#include "hreduce/team.hpp"

using namespace hreduce;

TEST_CASE("OpenMP threads attach as members", "[engine][attach]") {
  const int members = GENERATE(2, 5);
  TeamOptions options;
  options.members = members;
  Team team(options);
  const auto fam = test::family<std::int64_t>("int64 sum", op::sum, [](int m, std::size_t i) {
    return static_cast<std::int64_t>(test::small(m, i, 1000));
  });
  for (test::Collective c : test::all_collectives()) {
    test::CollectiveCheck<decltype(fam)> check(fam, c, members, 2500, true, 0);
#pragma omp parallel num_threads(members)
    check.run(team.member(omp_get_thread_num()), CollectiveOptions{});
    INFO(test::name_of(c));
    CHECK(check.verify().empty());
  }
}
