// How long a member waits beyond a late partner: one member of two arrives
// `late` microseconds after the other (busy until then), and the early one's
// allreduce of 8 B is timed. Its time minus `late` is what waking up costs:
// the spins and yields end, the member blocks, and the partner's publish must
// wake it. Measured without and with a team timeout (TeamOptions::timeout,
// which every team over MPI has), because a deadline changes how a member
// blocks.
// Run: bazel run //bench:late_member [-- ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hreduce/team.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void busy_until(Clock::time_point t) {
  while (Clock::now() < t) {
  }
}

// Median of the early member's call time minus `late`, in microseconds.
double median_overshoot_us(std::chrono::milliseconds timeout, std::chrono::microseconds late,
                           int rounds) {
  hreduce::TeamOptions options;
  options.members = 2;
  options.timeout = timeout;
  hreduce::Team team(options);
  std::vector<double> overshoot(rounds);
  team.run([&](hreduce::Member& m) {
    double in = 1, out = 0;
    for (int i = 0; i < rounds; ++i) {
      m.allreduce(&in, &out, 1, hreduce::op::sum);  // both start together
      const Clock::time_point start = Clock::now();
      if (m.rank() == 1) busy_until(start + late);
      m.allreduce(&in, &out, 1, hreduce::op::sum);
      if (m.rank() == 0) {
        const std::chrono::duration<double, std::micro> took = Clock::now() - start;
        overshoot[i] = took.count() - static_cast<double>(late.count());
      }
    }
  });
  std::sort(overshoot.begin(), overshoot.end());
  return overshoot[overshoot.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  std::printf("late_member: 2 members, allreduce 8 B, the second %s\n",
              "arriving `late` us after the first; the first's call time beyond that (median)");
  std::printf("%10s %18s %22s\n", "late us", "no timeout us", "timeout 60 s us");
  for (int late : {20, 100, 300, 1000, 3000}) {
    const auto l = std::chrono::microseconds(late);
    std::printf("%10d %18.1f %22.1f\n", late,
                median_overshoot_us(std::chrono::milliseconds(0), l, rounds),
                median_overshoot_us(std::chrono::milliseconds(60000), l, rounds));
    std::fflush(stdout);
  }
  return 0;
}
