// The global minimum of distributed vectors and where it is: each member
// finds its local minimum, encodes its position as rank * LEN + position,
// and MINLOC returns the smallest value with the lowest such index.
// Run: bazel run //examples:minloc_position
#include <cstdio>
#include <vector>

#include "hreduce/team.hpp"

int main() {
  constexpr int kLen = 1000;
  hreduce::TeamOptions options;
  options.members = 5;
  hreduce::Team team(options);
  auto value_at = [](int rank, int pos) {
    return 1.0 + ((rank * 7919 + pos * 104729 + 12345) % 1009) / 1009.0;  // the minimum recurs
  };
  hreduce::double_int result{};

  team.run([&](hreduce::Member& m) {
    hreduce::double_int local{value_at(m.rank(), 0), m.rank() * kLen};
    for (int pos = 1; pos < kLen; ++pos) {
      if (value_at(m.rank(), pos) < local.value)
        local = {value_at(m.rank(), pos), m.rank() * kLen + pos};
    }
    m.allreduce(&local, m.rank() == 0 ? &result : &local, 1, hreduce::op::minloc);
  });

  // The sequential answer: first occurrence of the minimum in rank order.
  hreduce::double_int expected{value_at(0, 0), 0};
  for (int r = 0; r < team.size(); ++r) {
    for (int pos = 0; pos < kLen; ++pos) {
      if (value_at(r, pos) < expected.value) expected = {value_at(r, pos), r * kLen + pos};
    }
  }
  std::printf("global minimum %.6f on member %d at position %d\n", result.value,
              result.index / kLen, result.index % kLen);
  return result == expected ? 0 : 1;
}
