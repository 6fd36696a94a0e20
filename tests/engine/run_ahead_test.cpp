// Members that only contribute to a small reduce, scan or exscan return
// without waiting, and a small scan's other members but the last wait only
// for the members before them (src/engine/mailbox.hpp). They must run ahead
// only as far as the slots allow, never let a later call overwrite a copy
// another member still folds, deliver every result the sequential oracle
// gives, and bring every error to every member without a hang, even when
// the members that would have seen it had already left.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/team.hpp"
#include "src/engine/mailbox.hpp"
#include "src/engine/team_state.hpp"
#include "tests/engine/harness.hpp"
#include "tests/support/error_class.hpp"

using namespace hreduce;
using namespace std::chrono_literals;
using hreduce::test::class_tag;

namespace {

Team team_of(int members, bool run_ahead = true) {
  TeamOptions options;
  options.members = members;
  options.topology = Topology::synthetic("pack:1 core:4 pu:2");
  options.run_ahead = run_ahead;
  return Team(options);
}

// Spins (yielding) until `count` reaches `target` or 10 s pass.
bool reaches(const std::atomic<int>& count, int target) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (count.load() < target) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

// What call `c` of member `r` contributes: distinct per call and member.
long contribution(int c, int r) { return 1000L * c + r; }

// Where a member's calls first failed: the call's index (-1: none did) and
// the message.
struct FirstError {
  int call = -1;
  std::string message;
};

// Makes calls `call(c)` for c = 0 … calls-1 until one throws, then returns
// (and so leaves the team: nobody may wait for this member forever).
template <class Fn>
void until_error(int calls, FirstError& first, Fn&& call) {
  for (int c = 0; c < calls; ++c) {
    try {
      call(c);
    } catch (const Error& e) {
      first = {c, class_tag(e) + e.what()};
      return;
    }
  }
}

// Scans of ones on every member of a team of `p` until each member's first
// error, `calls` at most; member `bad` passes a null output in call
// `bad_call`, and a wrong result is an error too.
std::vector<FirstError> scans_until_error(Team& team, int p, int calls, int bad, int bad_call) {
  std::vector<FirstError> first(p);
  team.run([&](Member& m) {
    until_error(calls, first[m.rank()], [&](int c) {
      const long x = 1;
      long result = 0;
      m.scan(&x, m.rank() == bad && c == bad_call ? nullptr : &result, 1, op::sum);
      if (result != m.rank() + 1) throw Error("wrong scan result");
    });
  });
  return first;
}

}  // namespace

TEST_CASE("contributors return without waiting, at most kSlots - 1 calls ahead",
          "[engine][run_ahead]") {
  const bool run_ahead = GENERATE(true, false);
  constexpr int p = 3;
  constexpr int calls = 40;
  Team team = team_of(p, run_ahead);
  std::atomic<int> contributed{0};  // reduce calls members 1 and 2 returned from
  int seen_before_root_started = -1;
  std::vector<long> results(calls, -1);
  team.run([&](Member& m) {
    long in = 0;
    if (m.rank() == 0) {
      // The root holds back; the others run into the slots' limit, and
      // stay there.
      if (run_ahead) CHECK(reaches(contributed, 2 * (detail::kSlots - 1)));
      std::this_thread::sleep_for(50ms);
      seen_before_root_started = contributed.load();
      for (int c = 0; c < calls; ++c) {
        in = contribution(c, 0);
        m.reduce(&in, &results[c], 1, op::sum, 0);
      }
      return;
    }
    for (int c = 0; c < calls; ++c) {
      in = contribution(c, m.rank());
      m.reduce(&in, static_cast<long*>(nullptr), 1, op::sum, 0);
      in = -1;  // the call copied it: changing it now changes nothing
      ++contributed;
    }
  });
  if (run_ahead) {
    CHECK(seen_before_root_started == 2 * (detail::kSlots - 1));
  } else {
    CHECK(seen_before_root_started == 0);
  }
  for (int c = 0; c < calls; ++c) {
    INFO("call " << c);
    CHECK(results[c] == contribution(c, 0) + contribution(c, 1) + contribution(c, 2));
  }
}

TEST_CASE("running ahead through mixed calls gives the oracle's results", "[engine][run_ahead]") {
  // More members than this machine's cores; reduce with every root, scan
  // and exscan, in place or not, and now and then a call that waits for
  // everyone (allreduce) or takes the sliced path.
  const int p = GENERATE(2, 3, 6);
  const int rounds = test::quick() ? 300 : 3000;
  Team team = team_of(p);
  std::vector<long> failures(p);
  std::vector<std::uint64_t> ran(p);
  team.run([&](Member& m) {
    const int r = m.rank();
    std::mt19937 pick(7);  // the same sequence of calls on every member
    std::vector<long> in(80), out(80);
    const std::uint64_t mailbox_before = detail::mailbox_calls_on_this_thread;
    for (int round = 0; round < rounds; ++round) {
      const int what = static_cast<int>(pick() % 10);
      const std::size_t n = what == 9 ? 70 : 1 + pick() % 8;  // 70 longs: sliced
      const int root = static_cast<int>(pick() % p);
      const bool in_place = pick() % 3 == 0;
      for (std::size_t i = 0; i < n; ++i) in[i] = contribution(round, r) + 100000L * i;
      std::fill(out.begin(), out.end(), -1);
      long* source = in.data();
      if (in_place) {
        std::copy(in.begin(), in.begin() + n, out.begin());
        source = out.data();
      }
      int last = p;  // members folded: 0 .. last-1
      bool receives = true;
      if (what < 5) {
        m.reduce(source, out.data(), n, op::sum, root);
        receives = r == root;
      } else if (what < 7) {
        m.scan(source, out.data(), n, op::sum);
        last = r + 1;
      } else if (what < 9) {
        m.exscan(source, out.data(), n, op::sum);
        receives = r > 0;
        last = r;
      } else {
        m.allreduce(source, out.data(), n, op::sum);
      }
      std::fill(in.begin(), in.end(), -2);  // contributions were copied
      for (std::size_t i = 0; i < n; ++i) {
        long expected = in_place ? contribution(round, r) + 100000L * i : -1;
        if (receives) {
          expected = 0;
          for (int q = 0; q < last; ++q) expected += contribution(round, q) + 100000L * i;
        }
        if (out[i] != expected) ++failures[r];
      }
    }
    ran[r] = detail::mailbox_calls_on_this_thread - mailbox_before;
  });
  for (int r = 0; r < p; ++r) {
    INFO("member " << r);
    CHECK(failures[r] == 0);
    CHECK(ran[r] > 0);
  }
}

TEST_CASE("a bad argument on the root reaches contributors that had left", "[engine][run_ahead]") {
  Team team = team_of(3);
  std::vector<FirstError> first(3);
  team.run([&](Member& m) {
    const double x = 1;
    until_error(50, first[m.rank()], [&](int c) {
      double result = 0;
      // The root's out is null in call 2; the others' out is ignored.
      double* out = m.rank() == 0 && c != 2 ? &result : nullptr;
      m.reduce(&x, out, 1, op::sum, 0);
    });
  });
  INFO(first[0].message << " | " << first[1].message << " | " << first[2].message);
  CHECK(first[0].call == 2);
  CHECK_THAT(first[0].message, Catch::StartsWith("[UnusableTeamError] ") &&
                                   Catch::Contains("out is a null pointer") &&
                                   Catch::Contains("had already returned") &&
                                   Catch::Contains("no longer usable"));
  for (int r = 1; r < 3; ++r) {
    CHECK(first[r].call > 2);
    CHECK(first[r].call <= 2 + detail::kSlots);
    CHECK_THAT(first[r].message, Catch::StartsWith("[UnusableTeamError] ") &&
                                     Catch::Contains("no longer usable") &&
                                     Catch::Contains("out is a null pointer"));
  }
  // The way back: once every member has left, resynchronise, and the team
  // runs ahead and gives the oracle's results again, call after call.
  CHECK_FALSE(team.usable());
  team.resynchronize();
  CHECK(team.usable());
  for (int round = 0; round < 3; ++round) {
    std::vector<double> reduced(3, -1), scanned(3, -1);
    std::vector<int> failures(3, 0);
    team.run([&](Member& m) {
      for (int c = 0; c < 40; ++c) {
        const double x = m.rank() + c;
        double result = -1;
        try {
          m.reduce(&x, m.rank() == 0 ? &result : nullptr, 1, op::sum, 0);
          if (m.rank() == 0 && result != 3.0 * c + 3) ++failures[0];
          m.scan(&x, &scanned[m.rank()], 1, op::sum);
        } catch (const Error&) {
          ++failures[m.rank()];
        }
      }
    });
    CHECK(failures == std::vector<int>(3, 0));
    CHECK(scanned == std::vector<double>{39, 39 + 40, 39 + 40 + 41});
  }
}

TEST_CASE("disagreements that every member ran past are still caught", "[engine][run_ahead]") {
  // Each member names the other as the root: both only contribute, nobody
  // waits, nobody folds. They must both throw within kRunAheadLimit + 1
  // calls, and later agreeing calls must too (the team is unusable).
  SECTION("every call") {
    Team team = team_of(2);
    std::vector<FirstError> first(2);
    team.run([&](Member& m) {
      const double x = 1;
      until_error(200, first[m.rank()], [&](int) {
        m.reduce(&x, static_cast<double*>(nullptr), 1, op::sum, 1 - m.rank());
      });
    });
    for (int r = 0; r < 2; ++r) {
      INFO("member " << r << ": " << first[r].message);
      CHECK(first[r].call >= 0);
      CHECK(first[r].call <= detail::kRunAheadLimit);
      CHECK_THAT(first[r].message, Catch::Contains("the root") && Catch::Contains("earlier call") &&
                                       Catch::Contains("no longer usable"));
    }
    std::vector<std::string> after(2);
    team.run([&](Member& m) {
      try {
        m.barrier();
      } catch (const Error& e) {
        after[m.rank()] = e.what();
      }
    });
    for (const auto& e : after) CHECK_THAT(e, Catch::Contains("no longer usable"));
  }
  SECTION("one call among agreeing ones") {
    // Call 5 alone disagrees; at call 6 member 0 folds again and sees that
    // the histories differ.
    Team team = team_of(2);
    std::vector<FirstError> first(2);
    std::vector<double> results(40, -1);
    team.run([&](Member& m) {
      const double x = 1;
      until_error(40, first[m.rank()], [&](int c) {
        m.reduce(&x, &results[c], 1, op::sum, c == 5 && m.rank() == 0 ? 1 : 0);
      });
    });
    INFO(first[0].message << " | " << first[1].message);
    CHECK(first[0].call == 6);
    CHECK_THAT(first[0].message,
               Catch::Contains("earlier call") && Catch::Contains("no longer usable"));
    CHECK(first[1].call > 6);
    CHECK(first[1].call <= 6 + detail::kSlots);
    CHECK_THAT(first[1].message,
               Catch::Contains("no longer usable") && Catch::Contains("earlier call"));
    for (int c = 0; c < 5; ++c) CHECK(results[c] == 2);
  }
}

TEST_CASE("a late disagreement on the root is caught by the root", "[engine][run_ahead]") {
  // 50 agreeing calls, then member 1 names member 2 as the root: members 1
  // and 2 both only contribute and leave, member 0 sees it.
  Team team = team_of(3);
  std::vector<std::string> messages(3), next(3);
  team.run([&](Member& m) {
    double x = 1, y = 0;
    try {
      for (int c = 0; c < 50; ++c) m.reduce(&x, &y, 1, op::sum, 0);
      m.reduce(&x, &y, 1, op::sum, m.rank() == 1 ? 2 : 0);
    } catch (const Error& e) {
      messages[m.rank()] = e.what();
    }
    try {
      m.barrier();
    } catch (const Error& e) {
      next[m.rank()] = e.what();
    }
  });
  INFO(messages[0]);
  CHECK_THAT(messages[0], Catch::Contains("the root") && Catch::Contains("member 1 has 2") &&
                              Catch::Contains("member(s) 1, 2 had already returned"));
  CHECK(messages[1].empty());
  CHECK(messages[2].empty());
  // Both the failure and every later call name the way back.
  CHECK_THAT(messages[0], Catch::Contains("Team::resynchronize()"));
  for (int r = 0; r < 3; ++r) {
    INFO("member " << r << ": " << next[r]);
    CHECK_THAT(next[r], Catch::Contains("no longer usable") && Catch::Contains("member 1 has 2") &&
                            Catch::Contains("Team::resynchronize()"));
    // Said once, not once for the call and once more for the reason.
    CHECK(next[r].find("no longer usable") == next[r].rfind("no longer usable"));
  }
  // Taking it: the team is usable again and reduces to the root named by
  // every member, as a sequential sum says.
  CHECK_FALSE(team.usable());
  team.resynchronize();
  CHECK(team.usable());
  std::vector<double> results(3, -1);
  std::vector<std::string> after(3);
  team.run([&](Member& m) {
    for (int root = 0; root < 3; ++root) {
      const double x = 10.0 * root + m.rank();
      try {
        m.reduce(&x, m.rank() == root ? &results[root] : nullptr, 1, op::sum, root);
      } catch (const Error& e) {
        after[m.rank()] = e.what();
      }
    }
  });
  CHECK(after == std::vector<std::string>(3));
  for (int root = 0; root < 3; ++root) {
    double expected = 0;
    for (int r = 0; r < 3; ++r) expected += 10.0 * root + r;
    CHECK(results[root] == expected);
  }
}

TEST_CASE("a small scan's members wait only for the members before them", "[engine][run_ahead]") {
  // Member 3 holds back: members 0, 1 and 2 need nothing from it, so each
  // goes on into the slots' limit (member 0 runs ahead, 1 and 2 wait for
  // those before them); without run_ahead none returns.
  const bool exclusive = GENERATE(false, true);
  const bool run_ahead = GENERATE(true, false);
  constexpr int p = 4;
  constexpr int calls = 40;
  Team team = team_of(p, run_ahead);
  std::atomic<int> returned{0};  // calls members 0, 1 and 2 returned from
  int seen_before_last_started = -1;
  std::vector<std::vector<long>> results(p, std::vector<long>(calls, -1));
  team.run([&](Member& m) {
    const int r = m.rank();
    if (r == p - 1) {
      if (run_ahead) CHECK(reaches(returned, 3 * (detail::kSlots - 1)));
      std::this_thread::sleep_for(50ms);
      seen_before_last_started = returned.load();
    }
    for (int c = 0; c < calls; ++c) {
      long in = contribution(c, r);
      if (exclusive) {
        m.exscan(&in, &results[r][c], 1, op::sum);
      } else {
        m.scan(&in, &results[r][c], 1, op::sum);
      }
      in = -1;  // the call copied it
      if (r < p - 1) ++returned;
    }
  });
  INFO((exclusive ? "exscan" : "scan") << ", run_ahead " << run_ahead);
  CHECK(seen_before_last_started == (run_ahead ? 3 * (detail::kSlots - 1) : 0));
  for (int r = 0; r < p; ++r) {
    for (int c = 0; c < calls; ++c) {
      long expected = exclusive && r == 0 ? -1 : 0;  // exscan leaves member 0's out
      for (int q = 0; q < (exclusive ? r : r + 1); ++q) expected += contribution(c, q);
      INFO("member " << r << ", call " << c);
      CHECK(results[r][c] == expected);
    }
  }
}

TEST_CASE("a scan's member 0 with a bad argument: nobody leaves early, the team stays usable",
          "[engine][run_ahead]") {
  // Member 0 does not go by mailbox then, and members 1 and 2 must see
  // that it failed before leaving: every member throws in call 2.
  constexpr int p = 4;
  Team team = team_of(p);
  const std::vector<FirstError> first = scans_until_error(team, p, 20, 0, 2);
  for (int r = 0; r < p; ++r) {
    INFO("member " << r << ": " << first[r].message);
    CHECK(first[r].call == 2);
    CHECK_THAT(first[r].message,
               Catch::StartsWith("[ArgumentError] ") && Catch::Contains("out is a null pointer"));
    CHECK_THAT(first[r].message, !Catch::Contains("had already returned"));
  }
  CHECK(team.usable());
  std::vector<long> scanned(p, -1);
  team.run([&](Member& m) {
    const long x = 10 + m.rank();
    m.scan(&x, &scanned[m.rank()], 1, op::sum);
  });
  CHECK(scanned == std::vector<long>{10, 21, 33, 46});
}

TEST_CASE("a bad argument on a scan's last member names every member that had left",
          "[engine][run_ahead]") {
  constexpr int p = 4;
  Team team = team_of(p);
  const std::vector<FirstError> first = scans_until_error(team, p, 40, p - 1, 2);
  INFO(first[3].message);
  CHECK(first[3].call == 2);
  CHECK_THAT(first[3].message, Catch::StartsWith("[UnusableTeamError] ") &&
                                   Catch::Contains("out is a null pointer") &&
                                   Catch::Contains("member(s) 0, 1, 2 had already returned") &&
                                   Catch::Contains("no longer usable"));
  for (int r = 0; r < p - 1; ++r) {
    INFO("member " << r << ": " << first[r].message);
    CHECK(first[r].call > 2);
    CHECK(first[r].call <= 2 + detail::kSlots);
    CHECK_THAT(first[r].message,
               Catch::StartsWith("[UnusableTeamError] ") && Catch::Contains("no longer usable"));
  }
}

TEST_CASE("a scan's member that disagrees with those before it waits for everyone",
          "[engine][run_ahead]") {
  // In call 5 member 2 calls exscan, the others scan: members 0 and 1 agree
  // and leave; member 2 sees member 0's history differ, so it waits for all
  // and reports, as member 3 does.
  constexpr int p = 4;
  Team team = team_of(p);
  std::vector<FirstError> first(p);
  team.run([&](Member& m) {
    until_error(40, first[m.rank()], [&](int c) {
      const long x = 1;
      long result = 0;
      if (m.rank() == 2 && c == 5) {
        m.exscan(&x, &result, 1, op::sum);
      } else {
        m.scan(&x, &result, 1, op::sum);
      }
    });
  });
  for (int r = 2; r < p; ++r) {
    INFO("member " << r << ": " << first[r].message);
    CHECK(first[r].call == 5);
    CHECK_THAT(first[r].message, Catch::StartsWith("[UnusableTeamError] ") &&
                                     Catch::Contains("exscan") &&
                                     Catch::Contains("member(s) 0, 1 had already returned"));
  }
  for (int r = 0; r < 2; ++r) {
    INFO("member " << r << ": " << first[r].message);
    CHECK(first[r].call > 5);
    CHECK(first[r].call <= 5 + detail::kSlots);
    CHECK_THAT(first[r].message, Catch::Contains("no longer usable"));
  }
}
