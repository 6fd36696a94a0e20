// A distributed prefix sum: each member holds a block of a long array; scan
// gives every member the sum of all blocks up to and including its own, and
// exscan the offset at which its block starts. Run: bazel run //examples:prefix_sum
#include <cstdio>
#include <vector>

#include "hreduce/team.hpp"

int main() {
  hreduce::TeamOptions options;
  options.members = 3;
  hreduce::Team team(options);
  std::vector<long> inclusive(team.size()), offset(team.size(), 0);
  auto block_size = [](int rank) { return 10L * (rank + 1); };

  team.run([&](hreduce::Member& m) {
    const long mine = block_size(m.rank());
    m.scan(&mine, &inclusive[m.rank()], 1, hreduce::op::sum);
    m.exscan(&mine, &offset[m.rank()], 1, hreduce::op::sum);  // member 0's stays 0
  });

  long running = 0;
  int wrong = 0;
  for (int r = 0; r < team.size(); ++r) {
    std::printf("member %d: block of %ld elements starts at %ld, prefix sum %ld\n", r,
                block_size(r), offset[r], inclusive[r]);
    wrong += offset[r] != running;
    running += block_size(r);
    wrong += inclusive[r] != running;
  }
  return wrong == 0 ? 0 : 1;
}
