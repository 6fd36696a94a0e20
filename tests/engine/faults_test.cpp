// Bad input and faults: each must reach every member as hreduce::Error,
// with a message naming members and values, and leave no hang behind.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "hreduce/team.hpp"
#include "tests/support/error_class.hpp"

using namespace hreduce;
using hreduce::test::class_tag;

namespace {

Team small_team(int members, std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                bool run_ahead = true) {
  TeamOptions options;
  options.members = members;
  options.topology = Topology::synthetic("pack:1 core:4 pu:2");
  options.timeout = timeout;
  options.run_ahead = run_ahead;
  return Team(options);
}

// Runs fn on every member and returns each member's Error, its class first
// (class_tag), or "" when the member did not throw.
template <class Fn>
std::vector<std::string> errors_on(Team& team, Fn&& fn) {
  std::vector<std::string> messages(team.size());
  team.run([&](Member& m) {
    try {
      fn(m);
    } catch (const Error& e) {
      messages[m.rank()] = class_tag(e) + e.what();
    }
  });
  return messages;
}

// The team still computes correctly after a failed call.
void check_usable(Team& team) {
  CHECK(team.usable());
  std::vector<std::vector<long>> out(team.size(), std::vector<long>(3));
  team.run([&](Member& m) {
    const long in[3] = {m.rank(), 1, 2};
    m.allreduce(in, out[m.rank()].data(), 3, op::sum);
  });
  const long p = team.size();
  for (const auto& o : out) CHECK(o == std::vector<long>{p * (p - 1) / 2, p, 2 * p});
}

void check_all(const std::vector<std::string>& messages, const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < messages.size(); ++r) {
    INFO("member " << r << ": " << messages[r]);
    REQUIRE_FALSE(messages[r].empty());
    for (const std::string& part : parts) CHECK_THAT(messages[r], Catch::Contains(part));
  }
}

const auto throwing_sum = make_op<int>([](int a, int b) {
  if (a == 13 || b == 13) throw std::runtime_error("boom: saw 13");
  return a + b;
});

}  // namespace

TEST_CASE("a user op that throws fails the call on every member", "[engine][negative]") {
  const int members = GENERATE(2, 3, 8);
  const std::size_t n = GENERATE(1, 5000);  // tree and sliced
  Team team = small_team(members);
  for (int call = 0; call < 3; ++call) {
    INFO("call " << call << ", n=" << n);
    std::vector<std::vector<int>> out(members, std::vector<int>(n));
    auto messages = errors_on(team, [&](Member& m) {
      std::vector<int> in(n, 1);
      if (m.rank() == members - 1) in[n / 2] = 13;
      m.allreduce(in.data(), out[m.rank()].data(), n, throwing_sum);
    });
    check_all(messages, {"[OpError] allreduce", "the op threw", "boom: saw 13"});
    check_usable(team);
    // The same op on clean data in every collective works afterwards.
    auto clean = errors_on(team, [&](Member& m) {
      std::vector<int> in(n * members, 2), res(n * members);
      m.scan(in.data(), res.data(), n, throwing_sum);
      m.reduce_scatter_block(in.data(), res.data(), n, throwing_sum);
      m.reduce(in.data(), res.data(), n, throwing_sum, 0);
    });
    for (const auto& e : clean) CHECK(e.empty());
  }
}

TEST_CASE("an op that throws something else than a std::exception is reported too",
          "[engine][negative]") {
  const int members = GENERATE(2, 3);
  const std::size_t n = GENERATE(1, 5000);  // tree and sliced
  Team team = small_team(members);
  const auto throws_int = make_op<int>([](int a, int b) {
    if (a == 13 || b == 13) throw 13;
    return a + b;
  });
  std::vector<std::vector<int>> out(members, std::vector<int>(n));
  auto messages = errors_on(team, [&](Member& m) {
    std::vector<int> in(n, 1);
    if (m.rank() == members - 1) in[n / 2] = 13;
    m.allreduce(in.data(), out[m.rank()].data(), n, throws_int);
  });
  check_all(messages, {"allreduce", "an exception not derived from std::exception"});
  check_usable(team);
}

TEST_CASE("members that disagree are named with their values", "[engine][negative]") {
  const bool run_ahead = GENERATE(true, false);
  Team team = small_team(4, std::chrono::milliseconds(0), run_ahead);
  SECTION("collective") {
    auto messages = errors_on(team, [](Member& m) {
      double x = 1, y = 0;
      if (m.rank() == 2) {
        m.scan(&x, &y, 1, op::sum);
      } else {
        m.allreduce(&x, &y, 1, op::sum);
      }
    });
    check_all(messages, {"[ArgumentError] ", "called different collectives",
                         "member 0 called allreduce", "member 2 called scan"});
  }
  SECTION("count") {
    auto messages = errors_on(team, [](Member& m) {
      std::vector<double> x(11, 1), y(11);
      m.allreduce(x.data(), y.data(), m.rank() == 1 ? 11 : 10, op::sum);
    });
    check_all(messages,
              {"[ArgumentError] ", "element count", "member 0 has 10", "member 1 has 11"});
  }
  SECTION("op") {
    auto messages = errors_on(team, [](Member& m) {
      double x = 1, y = 0;
      if (m.rank() == 3) {
        m.allreduce(&x, &y, 1, op::max);
      } else {
        m.allreduce(&x, &y, 1, op::sum);
      }
    });
    check_all(messages, {"the op", "sum", "max", "member 3"});
  }
  SECTION("user ops: their names, or their functions when unnamed") {
    const auto add = make_op<double>([](double a, double b) { return a + b; });
    const auto mul = make_op<double>([](double a, double b) { return a * b; });
    auto named = errors_on(team, [&](Member& m) {
      double x = 1, y = 0;
      if (m.rank() == 2) {
        m.allreduce(&x, &y, 1, mul.named("product"));
      } else {
        m.allreduce(&x, &y, 1, add.named("plus"));
      }
    });
    check_all(named, {"[ArgumentError] ",
                      "members disagree on the op: member 0 has plus, member 2 has product"});
    auto unnamed = errors_on(team, [&](Member& m) {
      double x = 1, y = 0;
      if (m.rank() == 2) {
        m.allreduce(&x, &y, 1, mul);
      } else {
        m.allreduce(&x, &y, 1, add);
      }
    });
    check_all(unnamed,
              {"member 0 has user op (", "lambda(double, double)#", "member 2 has user op ("});
    for (const auto& text : unnamed) CHECK_THAT(text, !Catch::Contains("UserOp<"));
  }
  SECTION("element type") {
    auto messages = errors_on(team, [](Member& m) {
      double x = 1, y = 0;
      float fx = 1, fy = 0;
      if (m.rank() == 1) {
        m.allreduce(&fx, &fy, 1, op::sum);
      } else {
        m.allreduce(&x, &y, 1, op::sum);
      }
    });
    check_all(messages, {"element type", "double", "float"});
  }
  SECTION("root") {
    auto messages = errors_on(team, [](Member& m) {
      double x = 1, y = 0;
      m.reduce(&x, &y, 1, op::sum, m.rank() == 2 ? 1 : 0);
    });
    if (run_ahead) {
      // Members 1-3 only contributed and had left; they learn at their next
      // call, and the team is unusable (run_ahead_test has more).
      check_all({messages[0]}, {"the root", "member 0 has 0", "member 2 has 1",
                                "member(s) 1, 2, 3 had already returned", "no longer usable"});
      for (int r = 1; r < 4; ++r) CHECK(messages[r].empty());
      check_all(errors_on(team, [](Member& m) { m.barrier(); }),
                {"no longer usable", "member 2 has 1"});
      return;
    }
    check_all(messages, {"the root", "member 0 has 0", "member 2 has 1"});
  }
  SECTION("counts") {
    auto messages = errors_on(team, [](Member& m) {
      std::vector<std::size_t> counts = {1, 2, 3, 4};
      if (m.rank() == 3) counts[2] = 5;
      std::vector<int> x(12, 1), y(5);
      m.reduce_scatter(x.data(), y.data(), std::span<const std::size_t>(counts), op::sum);
    });
    check_all(messages, {"counts[2]", "member 0 has 3", "member 3 has 5"});
  }
  SECTION("options") {
    auto messages = errors_on(team, [](Member& m) {
      CollectiveOptions options;
      if (m.rank() == 0) options.algorithm = Algorithm::sliced;
      double x = 1, y = 0;
      m.allreduce(&x, &y, 1, op::sum, options);
    });
    check_all(messages, {"options", "sliced", "automatic"});
  }
  check_usable(team);
}

// Each member keeps its slots' last signatures while calls repeat
// (execute.cpp): a difference after many agreeing calls must still be seen,
// on the mailbox and the sliced path alike, and agreeing calls afterwards
// must work again. (Members running ahead would leave the team unusable
// after the deviating reduce: run_ahead_test covers that.)
TEST_CASE("a disagreement after many agreeing calls is still caught", "[engine][negative]") {
  const std::size_t n = GENERATE(2, 3000);  // mailbox, sliced
  Team team = small_team(3, std::chrono::milliseconds(0), false);
  // One call that deviates on member 1 when `deviate` is set.
  using Call = void (*)(Member&, bool, std::vector<double>&, std::vector<double>&);
  const std::pair<const char*, Call> cases[] = {
      {"element count",
       [](Member& m, bool deviate, std::vector<double>& x, std::vector<double>& y) {
         m.allreduce(x.data(), y.data(), x.size() - (deviate ? 1 : 0), op::sum);
       }},
      {"the op",
       [](Member& m, bool deviate, std::vector<double>& x, std::vector<double>& y) {
         if (deviate) {
           m.allreduce(x.data(), y.data(), x.size(), op::max);
         } else {
           m.allreduce(x.data(), y.data(), x.size(), op::sum);
         }
       }},
      {"the root",
       [](Member& m, bool deviate, std::vector<double>& x, std::vector<double>& y) {
         m.reduce(x.data(), y.data(), x.size(), op::sum, deviate ? 2 : 0);
       }},
      {"the options",
       [](Member& m, bool deviate, std::vector<double>& x, std::vector<double>& y) {
         CollectiveOptions options;
         if (deviate) options.chunk_bytes = 8192;
         m.allreduce(x.data(), y.data(), x.size(), op::sum, options);
       }},
      {"called different collectives",
       [](Member& m, bool deviate, std::vector<double>& x, std::vector<double>& y) {
         if (deviate) {
           m.scan(x.data(), y.data(), x.size(), op::sum);
         } else {
           m.allreduce(x.data(), y.data(), x.size(), op::sum);
         }
       }},
  };
  for (const auto& [what, call] : cases) {
    INFO(what << ", n=" << n);
    std::vector<std::vector<double>> x(3, std::vector<double>(n, 1.0));
    std::vector<std::vector<double>> y(3, std::vector<double>(n, 0.0));
    auto run_calls = [&](bool deviate_on_last) {
      return errors_on(team, [&](Member& m) {
        for (int c = 0; c < 50; ++c) call(m, false, x[m.rank()], y[m.rank()]);
        call(m, deviate_on_last && m.rank() == 1, x[m.rank()], y[m.rank()]);
      });
    };
    check_all(run_calls(true), {what, "member 1"});
    for (const auto& e : run_calls(false)) CHECK(e.empty());
  }
  SECTION("reduce_scatter counts changed in place") {
    std::vector<std::vector<std::size_t>> counts(3, std::vector<std::size_t>{1, 2, 3});
    std::vector<double> x(6, 1.0);
    std::vector<std::vector<double>> y(3, std::vector<double>(4));
    auto messages = errors_on(team, [&](Member& m) {
      const std::span<const std::size_t> mine(counts[m.rank()]);
      for (int c = 0; c < 50; ++c) m.reduce_scatter(x.data(), y[m.rank()].data(), mine, op::sum);
      if (m.rank() == 2) counts[2][0] = 0;  // only member 2 reads its own array here
      m.reduce_scatter(x.data(), y[m.rank()].data(), mine, op::sum);
    });
    check_all(messages, {"counts[0]", "member 0 has 1", "member 2 has 0"});
  }
  SECTION("options changed in place") {
    // Calls point to the caller's options instead of copying them: the same
    // object, changed between calls, must still count as a change.
    const std::pair<const char*, void (*)(CollectiveOptions&)> changes[] = {
        {"algorithm", [](CollectiveOptions& o) { o.algorithm = Algorithm::sliced; }},
        {"tree", [](CollectiveOptions& o) { o.tree = TreeShape::binomial; }},
        {"radix", [](CollectiveOptions& o) { o.radix = 4; }},
        {"chunk_bytes", [](CollectiveOptions& o) { o.chunk_bytes = 8192; }},
        {"tree_max_bytes", [](CollectiveOptions& o) { o.tree_max_bytes = 64; }},
        {"tree_min_members", [](CollectiveOptions& o) { o.tree_min_members = 2; }},
    };
    for (const auto& [field, change] : changes) {
      INFO(field << ", n=" << n);
      std::vector<CollectiveOptions> options(3);
      std::vector<double> x(n, 1.0);
      std::vector<std::vector<double>> y(3, std::vector<double>(n));
      auto messages = errors_on(team, [&](Member& m) {
        CollectiveOptions& mine = options[m.rank()];
        for (int c = 0; c < 50; ++c) m.allreduce(x.data(), y[m.rank()].data(), n, op::sum, mine);
        if (m.rank() == 1) change(mine);
        m.allreduce(x.data(), y[m.rank()].data(), n, op::sum, mine);
      });
      check_all(messages, {"the options", "member 1"});
    }
  }
  check_usable(team);
}

TEST_CASE("bad arguments fail on every member before data moves", "[engine][negative]") {
  Team team = small_team(4);
  std::vector<std::vector<double>> out(4, std::vector<double>(8, -1.0));
  auto untouched = [&] {
    for (const auto& o : out) CHECK(o == std::vector<double>(8, -1.0));
  };
  SECTION("root out of range") {
    auto messages = errors_on(team, [&](Member& m) {
      std::vector<double> x(8, 1);
      m.reduce(x.data(), out[m.rank()].data(), 8, op::sum, 4);
    });
    check_all(messages, {"[ArgumentError] reduce", "root 4 is outside 0..3"});
  }
  SECTION("null pointer with n > 0") {
    auto messages = errors_on(team, [&](Member& m) {
      std::vector<double> x(8, 1);
      m.allreduce(m.rank() == 1 ? nullptr : x.data(), out[m.rank()].data(), 8, op::sum);
    });
    check_all(messages,
              {"[ArgumentError] ", "invalid arguments", "member 1", "in is a null pointer"});
  }
  SECTION("output partially overlapping the input") {
    auto messages = errors_on(team, [&](Member& m) {
      std::vector<double> x(16, 1);
      double* in = m.rank() == 2 ? x.data() : x.data();
      double* o = m.rank() == 2 ? x.data() + 3 : out[m.rank()].data();
      m.allreduce(in, o, 8, op::sum);
    });
    check_all(messages, {"member 2", "partially overlaps"});
  }
  SECTION("counts of the wrong length") {
    auto messages = errors_on(team, [&](Member& m) {
      const std::vector<std::size_t> counts = {2, 2, 2};
      std::vector<double> x(8, 1);
      m.reduce_scatter(x.data(), out[m.rank()].data(), std::span<const std::size_t>(counts),
                       op::sum);
    });
    check_all(messages, {"counts has 3 entries but the team has 4 members"});
  }
  SECTION("span too small") {
    auto messages = errors_on(team, [&](Member& m) {
      std::vector<double> x(8, 1);
      std::span<double> o(out[m.rank()].data(), m.rank() == 0 ? 4 : 8);
      m.allreduce(std::span<const double>(x), o, op::sum);
    });
    check_all(messages, {"member 0", "out has 4 elements but 8 are needed"});
  }
  SECTION("options out of range on one member") {
    struct Bad {
      const char* what;
      void (*spoil)(CollectiveOptions&);
    };
    for (const Bad& bad : {
             Bad{"options.chunk_bytes is 0", [](CollectiveOptions& o) { o.chunk_bytes = 0; }},
             Bad{"options.tree_min_members is 0",
                 [](CollectiveOptions& o) { o.tree_min_members = 0; }},
             Bad{"options.radix is 1", [](CollectiveOptions& o) { o.radix = 1; }},
             Bad{"options.algorithm is 7",
                 [](CollectiveOptions& o) { o.algorithm = static_cast<Algorithm>(7); }},
             Bad{"options.tree is 9",
                 [](CollectiveOptions& o) { o.tree = static_cast<TreeShape>(9); }},
         }) {
      auto messages = errors_on(team, [&](Member& m) {
        std::vector<double> x(8, 1);
        CollectiveOptions options;
        if (m.rank() == 3) bad.spoil(options);
        m.allreduce(x.data(), out[m.rank()].data(), 8, op::sum, options);
      });
      check_all(messages, {"member 3", bad.what});
    }
  }
  untouched();
  check_usable(team);
}

TEST_CASE("a team's default options out of range are refused when it is built",
          "[engine][negative]") {
  TeamOptions options;
  options.members = 2;
  options.collectives.chunk_bytes = 0;
  CHECK_THROWS_AS(Team(options), ArgumentError);
  CHECK_THROWS_WITH(Team(options), Catch::Contains("TeamOptions::collectives") &&
                                       Catch::Contains("options.chunk_bytes is 0"));
  options.collectives.chunk_bytes = 4096;
  options.collectives.tree_min_members = -1;
  CHECK_THROWS_WITH(Team(options), Catch::Contains("options.tree_min_members is -1"));
}

TEST_CASE("a member that never arrives times out the others", "[engine][negative]") {
  const bool from_environment = GENERATE(false, true);
  if (from_environment) ::setenv("HREDUCE_TIMEOUT_MS", "150", 1);
  Team team = small_team(
      4, from_environment ? std::chrono::milliseconds(0) : std::chrono::milliseconds(150));
  ::unsetenv("HREDUCE_TIMEOUT_MS");
  check_usable(team);  // timeouts do not fire on a healthy team
  const auto start = std::chrono::steady_clock::now();
  auto messages = errors_on(team, [](Member& m) {
    if (m.rank() == 3) return;  // never calls
    double x = 1, y = 0;
    m.allreduce(&x, &y, 1, op::sum);
  });
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  for (int r = 0; r < 3; ++r) {
    INFO(messages[r]);
    CHECK_THAT(messages[r], Catch::StartsWith("[UnusableTeamError] ") &&
                                Catch::Contains("timed out after 150 ms") &&
                                Catch::Contains("waiting for members 3"));
  }
  CHECK(messages[3].empty());
  CHECK_FALSE(team.usable());
  auto after = errors_on(team, [](Member& m) { m.barrier(); });
  for (const auto& e : after) {
    CHECK_THAT(e, Catch::StartsWith("[UnusableTeamError] ") && Catch::Contains("no longer usable"));
  }
  // Every member is out of its calls (Team::run returned): resynchronised,
  // the team computes again.
  team.resynchronize();
  check_usable(team);
}

TEST_CASE("malformed HREDUCE_TIMEOUT_MS and HREDUCE_SPIN_US are errors", "[engine][negative]") {
  ::setenv("HREDUCE_TIMEOUT_MS", "soon", 1);
  CHECK_THROWS_AS(small_team(2), ArgumentError);
  CHECK_THROWS_WITH(small_team(2),
                    Catch::Contains("HREDUCE_TIMEOUT_MS") && Catch::Contains("soon"));
  ::unsetenv("HREDUCE_TIMEOUT_MS");
  ::setenv("HREDUCE_SPIN_US", "-3", 1);
  CHECK_THROWS_WITH(small_team(2), Catch::Contains("HREDUCE_SPIN_US") && Catch::Contains("-3"));
  ::setenv("HREDUCE_SPIN_US", "0", 1);
  Team team = small_team(2);
  ::unsetenv("HREDUCE_SPIN_US");
  check_usable(team);
}

TEST_CASE("run and member reject misuse", "[engine][negative]") {
  Team team = small_team(2);
  CHECK_THROWS_AS(team.member(2), ArgumentError);
  CHECK_THROWS_WITH(team.member(2), Catch::Contains("index 2 is outside 0..1"));
  CHECK_THROWS_WITH(team.run([&](Member&) { team.run([](Member&) {}); }),
                    Catch::Contains("already in progress"));
  TeamOptions bad;
  bad.members = -1;
  CHECK_THROWS_WITH(Team(bad), Catch::Contains("members must be >= 0"));
}
