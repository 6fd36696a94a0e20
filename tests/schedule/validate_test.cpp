// Schedule::validate on hand-written valid and invalid triple sets: every
// kind of invalid set is rejected with a message naming the offending triple.
#include <catch2/catch.hpp>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"

using hreduce::Schedule;
using hreduce::Transfer;

namespace {

std::string rejection(const Schedule& s, bool commutative = true) {
  try {
    s.validate(commutative);
  } catch (const hreduce::Error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("validate accepts well-formed schedules", "[schedule]") {
  CHECK(Schedule(1, 0, {}).is_valid(false));
  CHECK(Schedule(2, 0, {{1, 1, 0}}).is_valid(false));
  CHECK(Schedule(2, 1, {{0, 1, 1}}).is_valid(false));
  // Binomial by hand, and a root in the middle combining from both sides.
  CHECK(Schedule(4, 0, {{1, 1, 0}, {3, 1, 2}, {2, 2, 0}}).is_valid(false));
  CHECK(Schedule(5, 2, {{0, 1, 1}, {1, 2, 2}, {4, 1, 3}, {3, 2, 2}}).is_valid(false));
  // Two predecessors from the same side in one step, nearest first.
  CHECK(Schedule(3, 2, {{0, 1, 2}, {1, 1, 2}}).is_valid(false));
  // Commutative-only: the root combines 0 then 2 before 1 arrives.
  const Schedule gap(3, 0, {{2, 1, 0}, {1, 2, 0}});
  CHECK(gap.is_valid(true));
  CHECK_FALSE(gap.is_valid(false));
}

TEST_CASE("validate rejects each kind of invalid set, naming it", "[schedule][negative]") {
  SECTION("member out of range") {
    CHECK_THAT(rejection(Schedule(3, 0, {{1, 1, 0}, {3, 1, 0}})),
               Catch::Contains("<3,1,0>") && Catch::Contains("outside 0..2"));
  }
  SECTION("root out of range") {
    CHECK_THAT(rejection(Schedule(2, 2, {{1, 1, 0}})), Catch::Contains("root 2"));
  }
  SECTION("step below 1") {
    CHECK_THAT(rejection(Schedule(2, 0, {{1, 0, 0}})), Catch::Contains("<1,0,0> has step < 1"));
  }
  SECTION("self send") {
    CHECK_THAT(rejection(Schedule(3, 0, {{1, 1, 0}, {2, 1, 2}})),
               Catch::Contains("<2,1,2> sends to itself"));
  }
  SECTION("repeated triple") {
    CHECK_THAT(rejection(Schedule(2, 0, {{1, 1, 0}, {1, 1, 0}})), Catch::Contains("twice"));
  }
  SECTION("non-root without successor") {
    CHECK_THAT(rejection(Schedule(3, 0, {{1, 1, 0}})),
               Catch::Contains("member 2 has no successor"));
  }
  SECTION("non-root with two successors") {
    CHECK_THAT(rejection(Schedule(3, 0, {{1, 1, 0}, {2, 1, 0}, {2, 2, 1}})),
               Catch::Contains("member 2 has two successors") && Catch::Contains("<2,1,0>") &&
                   Catch::Contains("<2,2,1>"));
  }
  SECTION("root with a successor") {
    CHECK_THAT(rejection(Schedule(2, 0, {{1, 1, 0}, {0, 2, 1}})),
               Catch::Contains("root 0 sends in triple <0,2,1>"));
  }
  SECTION("cycle") {
    CHECK_THAT(
        rejection(Schedule(4, 0, {{1, 1, 0}, {2, 1, 3}, {3, 2, 2}})),
        Catch::Contains("cycle") && Catch::Contains("<2,1,3>") && Catch::Contains("<3,2,2>"));
  }
  SECTION("steps not increasing along a path") {
    CHECK_THAT(rejection(Schedule(3, 0, {{2, 2, 1}, {1, 2, 0}})),
               Catch::Contains("<2,2,1> then <1,2,0>"));
    CHECK_THAT(rejection(Schedule(3, 0, {{2, 3, 1}, {1, 1, 0}})),
               Catch::Contains("<2,3,1> then <1,1,0>"));
  }
  SECTION("non-contiguous subtree for a non-commutative op") {
    // Member 0 receives 2 (ranks 2..2) while holding only 0..0.
    CHECK_THAT(rejection(Schedule(3, 0, {{2, 1, 0}, {1, 2, 0}}), false),
               Catch::Contains("<2,1,0>") && Catch::Contains("ranks 2..2") &&
                   Catch::Contains("holding ranks 0..0"));
    // Interleaved subtrees: 0 collects {0,2}, 1 collects {1,3}.
    CHECK_THAT(rejection(Schedule(4, 0, {{2, 1, 0}, {3, 1, 1}, {1, 2, 0}}), false),
               Catch::Contains("not rank-contiguous"));
  }
  SECTION("size below one") { CHECK_THROWS_AS(Schedule(0, 0, {}), hreduce::Error); }
}

TEST_CASE("incoming lists predecessors in executor combine order", "[schedule]") {
  const Schedule s(7, 3, {{0, 1, 3}, {1, 1, 3}, {2, 1, 3}, {4, 2, 3}, {5, 1, 3}, {6, 1, 5}});
  std::vector<int> senders;
  for (const Transfer& t : s.incoming(3)) senders.push_back(t.sender);
  // Step 1: above ascending (5), then below descending (2, 1, 0); step 2: 4.
  CHECK(senders == std::vector<int>{5, 2, 1, 0, 4});
  CHECK(s.outgoing(6) == Transfer{6, 1, 5});
  CHECK_FALSE(s.outgoing(3).has_value());
  CHECK(s.steps() == 2);
}

TEST_CASE("describe and to_dot show every triple", "[schedule]") {
  const Schedule s(3, 0, {{1, 1, 0}, {2, 2, 0}}, "example");
  CHECK(s.describe() == "example: 3 members, root 0, 2 steps\n  step 1: 1->0\n  step 2: 2->0\n");
  const std::string dot = s.to_dot();
  CHECK_THAT(dot, Catch::Contains("m1 -> m0 [label=\"1\"]") &&
                      Catch::Contains("m2 -> m0 [label=\"2\"]") && Catch::Contains("doublecircle"));
}
