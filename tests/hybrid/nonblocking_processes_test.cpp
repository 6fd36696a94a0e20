// Nonblocking and persistent calls on a team spanning processes (simulated
// processes over in-memory channels): served by each member's queue of
// calls (src/engine/nonblocking/call_queue.hpp), equal to the sequential
// sums, several outstanding at once; and, where the team refuses them
// (TeamState::nonblocking_refusal, set by make_mpi_team without
// MPI_THREAD_MULTIPLE across nodes), an ArgumentError at the start on
// every member, naming the call, with the team still usable
// (docs/nonblocking.md).
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/engine/member_access.hpp"
#include "src/engine/team_state.hpp"
#include "tests/hybrid/world.hpp"

using namespace hreduce;

TEST_CASE("nonblocking calls on a team over processes equal the sequential sums",
          "[hybrid][nonblocking]") {
  test::World world({2, 1});  // two processes: 2 members and 1
  std::atomic<int> wrong{0};
  world.run([&](Member& m) {
    const int r = m.rank(), p = m.size();
    std::vector<long> in(300), all(300), scan(300), again(300);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = r * 10 + static_cast<long>(i);
    Request a = m.iallreduce(in, all, op::sum);
    Request s = m.iscan(in, scan, op::sum);
    PersistentRequest q = m.allreduce_init(in, again, op::sum);
    while (!s.test()) {
    }
    a.wait();
    for (int round = 0; round < 3; ++round) {
      q.start();
      q.wait();
      for (std::size_t i = 0; i < in.size(); ++i) {
        const long n = static_cast<long>(i);
        if (again[i] != 10L * p * (p - 1) / 2 + p * n) ++wrong;
      }
    }
    for (std::size_t i = 0; i < in.size(); ++i) {
      const long n = static_cast<long>(i);
      if (all[i] != 10L * p * (p - 1) / 2 + p * n) ++wrong;
      if (scan[i] != 10L * r * (r + 1) / 2 + (r + 1) * n) ++wrong;
    }
  });
  CHECK(wrong == 0);
}

TEST_CASE("nonblocking calls on a team over processes that refuses them throw at the start",
          "[hybrid][negative]") {
  test::World world({2, 1});
  for (int k = 0; k < world.processes(); ++k) {
    detail::state_of(world.team(k).member(0)).team.nonblocking_refusal = "refused for the test";
  }
  std::atomic<int> refused{0}, named{0}, wrong{0};
  world.run([&](Member& m) {
    std::vector<double> in(4, 1), out(4);
    auto expect_refusal = [&](auto&& start, const char* call) {
      try {
        start();
      } catch (const ArgumentError& e) {
        ++refused;
        const std::string text = e.what();
        if (text.find(call) == 0 && text.find("refused for the test") != std::string::npos) {
          ++named;
        }
      }
    };
    expect_refusal([&] { m.iallreduce(in, out, op::sum); }, "iallreduce");
    expect_refusal([&] { m.scan_init(in, out, op::sum); }, "scan_init");
    m.allreduce(in, out, op::sum);  // still usable
    if (out != std::vector<double>(4, 3)) ++wrong;
  });
  CHECK(refused == 6);
  CHECK(named == 6);
  CHECK(wrong == 0);
  for (int k = 0; k < world.processes(); ++k) CHECK(world.team(k).usable());
}
