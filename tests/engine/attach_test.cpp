// Attach mode: threads the application owns become members by index.
#include <catch2/catch.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "families.hpp"
#include "harness.hpp"
#include "hreduce/team.hpp"

using namespace hreduce;

TEST_CASE("std::threads attach as members", "[engine][attach]") {
  const int members = GENERATE(1, 3, 6);
  TeamOptions options;
  options.members = members;
  Team team(options);
  const auto fam = test::family<double>("double sum", op::sum, test::quarter);
  for (test::Collective c : test::all_collectives()) {
    for (std::size_t n : {1, 4000}) {
      test::CollectiveCheck<decltype(fam)> check(fam, c, members, n, false, members - 1);
      std::vector<std::thread> threads;
      for (int t = 0; t < members; ++t) {
        threads.emplace_back([&, t] { check.run(team.member(t), team.options().collectives); });
      }
      for (auto& t : threads) t.join();
      INFO(test::name_of(c) << " n=" << n);
      CHECK(check.verify().empty());
    }
  }
}

TEST_CASE("run and attach can alternate on one team", "[engine][attach]") {
  TeamOptions options;
  options.members = 3;
  Team team(options);
  for (int round = 0; round < 5; ++round) {
    std::vector<int> results(3);
    auto body = [&](Member& m) {
      int in = m.rank() + round, out = 0;
      m.allreduce(&in, &out, 1, op::sum);
      results[m.rank()] = out;
    };
    if (round % 2) {
      team.run(body);
    } else {
      std::vector<std::thread> threads;
      for (int t = 0; t < 3; ++t) threads.emplace_back([&, t] { body(team.member(t)); });
      for (auto& t : threads) t.join();
    }
    CHECK(results == std::vector<int>(3, 3 + 3 * round));
  }
}

TEST_CASE("outputs nobody receives may be null pointers", "[engine][attach]") {
  TeamOptions options;
  options.members = 3;
  Team team(options);
  std::vector<double> root_out(5, -1), scanned(3 * 5, -1);
  team.run([&](Member& m) {
    std::vector<double> in(5, m.rank() + 1.0);
    // Non-roots of a reduce and member 0 of an exscan receive nothing.
    m.reduce(in.data(), m.rank() == 2 ? root_out.data() : nullptr, 5, op::sum, 2);
    m.exscan(in.data(), m.rank() == 0 ? nullptr : scanned.data() + 5 * m.rank(), 5, op::sum);
  });
  for (int i = 0; i < 5; ++i) {
    CHECK(root_out[i] == 6.0);
    CHECK(scanned[5 + i] == 1.0);
    CHECK(scanned[10 + i] == 3.0);
  }
}

TEST_CASE("a team moves between calls", "[engine][attach]") {
  TeamOptions options;
  options.members = 3;
  auto allreduce_ranks = [](Team& team) {
    std::vector<int> out(team.size(), -1);
    team.run([&](Member& m) {
      int in = m.rank() + 1;
      m.allreduce(&in, &out[m.rank()], 1, op::sum);
    });
    return out;
  };
  Team first(options);
  CHECK(allreduce_ranks(first) == std::vector<int>{6, 6, 6});  // its workers now run
  auto held = std::make_unique<Team>(std::move(first));
  CHECK(allreduce_ranks(*held) == std::vector<int>{6, 6, 6});
  std::vector<Team> teams;
  teams.push_back(std::move(*held));
  options.members = 2;
  teams.emplace_back(options);
  CHECK(allreduce_ranks(teams[0]) == std::vector<int>{6, 6, 6});
  CHECK(allreduce_ranks(teams[1]) == std::vector<int>{3, 3});
  Team later(options);
  later = std::move(teams[0]);  // stops the two workers `later` had not started
  CHECK(allreduce_ranks(later) == std::vector<int>{6, 6, 6});
  teams[1] = std::move(later);  // stops teams[1]'s running workers first
  CHECK(allreduce_ranks(teams[1]) == std::vector<int>{6, 6, 6});
}
