// Steady state allocates nothing: after one warm-up call of each collective
// and size, 1000 more calls must not touch the heap or grow the pools.
#include <catch2/catch.hpp>

#include "hreduce/team.hpp"
#include "src/engine/team_state.hpp"
#include "tests/support/count_allocations.hpp"

using namespace hreduce;

TEST_CASE("1000 steady-state calls allocate nothing", "[engine][allocation]") {
  TeamOptions options;
  options.members = 3;
  options.topology = Topology::synthetic("pack:1 core:2 pu:2");
  Team team(options);
  long allocations = -1;
  std::uint64_t growths = 0;
  team.run([&](Member& m) {
    std::vector<double> in(3 * 20000, 1.0), out(3 * 20000);
    const std::size_t counts[3] = {100, 20000, 7};
    auto round = [&] {
      for (std::size_t n : {std::size_t{3}, std::size_t{20000}}) {
        m.allreduce(in.data(), out.data(), n, op::sum);
        m.reduce(in.data(), out.data(), n, op::max, 1);
        m.scan(in.data(), out.data(), n, op::sum);
        m.exscan(in.data(), out.data(), n, op::sum);
        m.reduce_scatter_block(in.data(), out.data(), n, op::sum);
      }
      m.reduce_scatter(in.data(), out.data(), std::span<const std::size_t>(counts), op::sum);
      m.allreduce(out.data(), out.data(), 500, op::sum);  // in place
    };
    round();  // warm-up: pools and tree plans are built here
    m.barrier();
    long before = 0;
    std::uint64_t growths_before = 0;
    if (m.rank() == 0) {
      before = test::heap_allocations();
      growths_before = detail::pool_growth_count();
    }
    m.barrier();
    for (int i = 0; i < 1000 / 11 + 1; ++i) round();
    m.barrier();
    if (m.rank() == 0) {
      allocations = test::heap_allocations() - before;
      growths = detail::pool_growth_count() - growths_before;
    }
  });
  CHECK(allocations == 0);
  CHECK(growths == 0);
}
