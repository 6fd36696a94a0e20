// The single copy's balanced cut on its own: the share's step from two busy
// times against the arithmetic it stands for, and the table of shares by
// receiver and size (cut_balance.hpp).
#include "src/node/cut_balance.hpp"

#include <catch2/catch.hpp>
#include <cstdint>

#include "src/node/node_way.hpp"

using namespace hreduce::detail;

namespace {

constexpr std::uint32_t U = kCutShareUnits;

// Where the two times would have been equal had each grown with its share:
// process 0 took busy0 for share s, process 1 busy1 for U - s.
double equal_times_at(double s, double busy0, double busy1) {
  const double per0 = busy0 / s, per1 = busy1 / (U - s);
  return U * per1 / (per0 + per1);
}

}  // namespace

TEST_CASE("a share moves halfway to where the two times would be equal", "[node]") {
  // Process 0 did 60 % in 10 us, 16.7 us per whole vector; process 1 did
  // 40 % in 12 us, 30 us per whole: equal at 30 / 46.7 = 64.3 %.
  const std::uint32_t s = U * 60 / 100;
  const double target = equal_times_at(s, 10000, 12000);
  CHECK(target / U == Approx(0.6429).epsilon(1e-3));
  // Half of the way is 2.1 % of the vector, more than the largest step
  // (1/64): one step up.
  CHECK(balanced_share(s, 10000, 12000) == s + U / 64);
  // A smaller gap moves exactly halfway (integer arithmetic: within 1):
  // 10.4 us for 40 % is 26 us per whole, equal at 60.9 %.
  const std::uint32_t near = balanced_share(s, 10000, 10400);
  const double halfway = s + (equal_times_at(s, 10000, 10400) - s) / 2;
  CHECK(near > s);
  CHECK(near - s < U / 64);
  CHECK(static_cast<double>(near) == Approx(halfway).margin(1));
  // The side that took longer sheds work.
  CHECK(balanced_share(s, 12000, 10000) < s);
  CHECK(balanced_share(U / 2, 10000, 12000) > U / 2);
}

TEST_CASE("a share stays where the times agree within 1/64, and within its bounds", "[node]") {
  const std::uint32_t s = U * 3 / 5;
  CHECK(balanced_share(s, 10000, 10000) == s);
  CHECK(balanced_share(s, 10000, 10150) == s);  // 1.5 %
  CHECK(balanced_share(s, 10150, 10000) == s);
  CHECK(balanced_share(s, 10000, 10200) != s);  // 2 %
  CHECK(balanced_share(s, 0, 0) == s);
  // Never below 1/16 nor above 15/16, however lopsided the times.
  std::uint32_t low = U / 8, high = U - U / 8;
  for (int i = 0; i < 100; ++i) {
    low = balanced_share(low, 1000000, 1);
    high = balanced_share(high, 1, 1000000);
  }
  CHECK(low == U / 16);
  CHECK(high == U - U / 16);
  // Out-of-range shares come back in; the longest times do not overflow.
  CHECK(balanced_share(0, 5, 5) == U / 16);
  CHECK(balanced_share(U, 5, 5) == U - U / 16);
  const double halfway = U / 2 + (equal_times_at(U / 2, 32e9, 31e9) - U / 2) / 2;
  CHECK(static_cast<double>(balanced_share(U / 2, 32'000'000'000ull, 31'000'000'000ull)) ==
        Approx(halfway).margin(1));
}

TEST_CASE("repeated steps from noiseless linear times settle at the balance", "[node]") {
  // Process 0's part costs 3 per unit plus 500, process 1's 5 per unit
  // plus 2000: equal at (5U + 1500) / 8.
  std::uint32_t s = U / 2;
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t busy0 = 3ull * s + 500, busy1 = 5ull * (U - s) + 2000;
    s = balanced_share(s, busy0, busy1);
  }
  const double balance = (5.0 * U + 1500) / 8;
  const double busy0 = 3.0 * s + 500, busy1 = 5.0 * (U - s) + 2000;
  CHECK(std::max(busy0, busy1) - std::min(busy0, busy1) <= std::max(busy0, busy1) / 64);
  CHECK(static_cast<double>(s) == Approx(balance).epsilon(0.02));
}

TEST_CASE("the table starts from the rule and moves only after kCutRounds copies", "[node]") {
  CutBalance table;
  const std::size_t n = 16384, es = 8, bytes = n * es;  // 128 KiB of doubles
  const std::size_t rule = single_copy_cut(n, es, 1, 0, false);
  CHECK(table.share(0, false, bytes) == 0);
  CHECK(table.cut(0, false, n, es, rule) == rule);
  const std::uint32_t first = table.share(0, false, bytes);
  CHECK(first == rule * std::uint64_t{U} / n);
  // Process 1 slower: nothing moves until kCutRounds copies are in.
  for (std::uint32_t i = 1; i < kCutRounds; ++i) table.observe(0, false, bytes, 1000, 1500);
  CHECK(table.share(0, false, bytes) == first);
  CHECK(table.cut(0, false, n, es, rule) == rule);
  table.observe(0, false, bytes, 1000, 1500);
  const std::uint32_t moved = table.share(0, false, bytes);
  CHECK(moved == balanced_share(first, 1000ull * kCutRounds, 1500ull * kCutRounds));
  CHECK(moved > first);
  // The cut follows the share, on a line (8 doubles).
  const std::size_t cut = table.cut(0, false, n, es, rule);
  CHECK(cut > rule);
  CHECK(cut % 8 == 0);
  CHECK(cut == (n * std::uint64_t{moved} / U + 7) / 8 * 8);
  // Another size, receiver or way of sharing has a share of its own.
  CHECK(table.share(0, false, 2 * bytes) == 0);
  CHECK(table.share(1, false, bytes) == 0);
  CHECK(table.share(0, true, bytes) == 0);
  // Back to the rule after a reset.
  table.reset();
  CHECK(table.share(0, false, bytes) == 0);
  CHECK(table.cut(0, false, n, es, rule) == rule);
}

TEST_CASE("a rule that gives everything to one process stands", "[node]") {
  CutBalance table;
  CHECK(table.cut(0, false, 1000, 8, 1000) == 1000);
  CHECK(table.cut(1, false, 1000, 8, 0) == 0);
  CHECK(table.share(0, false, 8000) == 0);
  CHECK(table.share(1, false, 8000) == 0);
  // Times observed without a share are dropped.
  table.observe(0, false, 8000, 1, 1000000);
  CHECK(table.share(0, false, 8000) == 0);
}
