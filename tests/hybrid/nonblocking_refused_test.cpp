// Nonblocking and persistent calls on a team spanning processes are not
// served yet: they throw ArgumentError at the start on every member, naming
// the call, and the team stays usable (docs/nonblocking.md).
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/hybrid/world.hpp"

using namespace hreduce;

TEST_CASE("nonblocking calls on a team over processes are refused", "[hybrid][negative]") {
  test::World world({2, 1});
  std::atomic<int> refused{0}, named{0}, wrong{0};
  world.run([&](Member& m) {
    std::vector<double> in(4, 1), out(4);
    auto expect_refusal = [&](auto&& start, const char* call) {
      try {
        start();
      } catch (const ArgumentError& e) {
        ++refused;
        const std::string text = e.what();
        if (text.find(call) == 0 && text.find("not served yet") != std::string::npos) ++named;
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
