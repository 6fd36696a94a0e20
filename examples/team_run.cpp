// A team of persistent, pinned worker threads (one per core) sums a vector
// per member with allreduce. Run: bazel run //examples:team_run
#include <cstdio>
#include <vector>

#include "hreduce/team.hpp"

int main() {
  hreduce::Team team;  // one member per core, compact placement
  const std::size_t n = 1 << 20;
  std::vector<std::vector<double>> results(team.size(), std::vector<double>(n));

  team.run([&](hreduce::Member& m) {
    std::vector<double> mine(n, m.rank() + 1.0);  // member r contributes r+1
    m.allreduce(mine.data(), results[m.rank()].data(), n, hreduce::op::sum);
  });

  const double p = team.size();
  const double expected = p * (p + 1) / 2;
  for (const auto& r : results) {
    for (double x : r) {
      if (x != expected) {
        std::printf("wrong: %g instead of %g\n", x, expected);
        return 1;
      }
    }
  }
  std::printf("%d members: every element of every result is %g (= 1 + ... + %d)\n", team.size(),
              expected, team.size());
  return 0;
}
