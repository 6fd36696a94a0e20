// Nonblocking and persistent calls against the blocking call, on a team of
// two pinned threads (docs/nonblocking.md):
//
//  - latency at 8 B: a blocking allreduce, iallreduce + wait, and a
//    persistent start + wait, in turns: every round times a block of calls
//    of each, each call alone, and the median calls are compared;
//  - overlap at 1 MiB, as the OSU nonblocking benchmarks define it: the
//    pure time t of iallreduce + wait, then start, compute for t, wait;
//    overlap = 1 - (overall - compute) / t. Two kinds of compute: busy (the
//    member spins on its core) and idle (the member sleeps, as one waiting
//    on I/O or a message would, leaving its core free).
//
//   bazel run -c opt //bench:nonblocking_bench [-- ROUNDS]
//   HREDUCE_PROGRESS_THREAD=1 bazel run -c opt //bench:nonblocking_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/team.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double microseconds(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// One 8-byte allreduce in one of the three ways, timed alone: on a shared
// machine a block's mean is the time slices the members lost, so the
// comparison takes the median call.
double time_one(hreduce::Member& m, int way, hreduce::PersistentRequest& prepared, double* in,
                double* out) {
  const auto start = Clock::now();
  switch (way) {
    case 0: m.allreduce(in, out, 1, hreduce::op::sum); break;
    case 1: m.iallreduce(in, out, 1, hreduce::op::sum).wait(); break;
    default:
      prepared.start();
      prepared.wait();
      break;
  }
  return microseconds(Clock::now() - start);
}

void small_latency(hreduce::Team& team, int rounds) {
  constexpr int kCalls = 2000;
  std::vector<double> times[3];
  // Grown while timing, member 0's vectors would cost it page faults that
  // the other member does not pay, and the ways are compared on member 0's
  // calls, whose pace depends on both.
  for (std::vector<double>& t : times) t.reserve(static_cast<std::size_t>(rounds) * kCalls);
  team.run([&](hreduce::Member& m) {
    double in = m.rank() + 1, out = 0;
    hreduce::PersistentRequest prepared = m.allreduce_init(&in, &out, 1, hreduce::op::sum);
    for (int round = 0; round < rounds; ++round) {
      for (int way = 0; way < 3; ++way) {
        m.barrier();
        for (int c = 0; c < kCalls; ++c) {
          const double t = time_one(m, way, prepared, &in, &out);
          if (m.rank() == 0) times[way].push_back(t);
        }
      }
    }
  });
  const double blocking = median(times[0]);
  std::printf("8 B allreduce, 2 members, median call of %d rounds of %d calls per way:\n", rounds,
              kCalls);
  std::printf("  blocking allreduce        %8.3f us\n", blocking);
  std::printf("  iallreduce + wait         %8.3f us  (%.2fx blocking)\n", median(times[1]),
              median(times[1]) / blocking);
  std::printf("  persistent start + wait   %8.3f us  (%.2fx blocking)\n", median(times[2]),
              median(times[2]) / blocking);
}

// Busy for `us` microseconds on this core, or asleep for them.
void compute(double us, bool busy) {
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
  if (!busy) {
    std::this_thread::sleep_until(until);
    return;
  }
  while (Clock::now() < until) {
  }
}

void overlap(hreduce::Team& team, int rounds) {
  constexpr std::size_t kN = (1 << 20) / sizeof(double);
  std::vector<double> pure, busy_overall, idle_overall, busy_compute, idle_compute;
  team.run([&](hreduce::Member& m) {
    std::vector<double> in(kN, m.rank() + 1.0), out(kN);
    for (int round = 0; round < rounds; ++round) {
      m.barrier();
      auto start = Clock::now();
      m.iallreduce(in, out, hreduce::op::sum).wait();
      const double t = microseconds(Clock::now() - start);
      double shared_t = t;
      m.allreduce(&t, &shared_t, 1, hreduce::op::max);  // both compute equally long
      for (bool busy : {true, false}) {
        m.barrier();
        start = Clock::now();
        hreduce::Request r = m.iallreduce(in, out, hreduce::op::sum);
        const auto computing = Clock::now();
        compute(shared_t, busy);
        const double c = microseconds(Clock::now() - computing);
        r.wait();
        const double overall = microseconds(Clock::now() - start);
        if (m.rank() != 0) continue;
        (busy ? busy_overall : idle_overall).push_back(overall);
        (busy ? busy_compute : idle_compute).push_back(c);
      }
      if (m.rank() == 0) pure.push_back(shared_t);
    }
  });
  const double t = median(pure);
  std::printf("1 MiB allreduce, 2 members, medians of %d rounds:\n", rounds);
  std::printf("  pure iallreduce + wait    %8.1f us\n", t);
  for (bool busy : {true, false}) {
    const double overall = median(busy ? busy_overall : idle_overall);
    const double c = median(busy ? busy_compute : idle_compute);
    const double overlap = std::clamp(1 - (overall - c) / t, 0.0, 1.0);
    std::printf("  %s compute %7.1f us: overall %8.1f us, overlap %5.1f %%\n",
                busy ? "busy" : "idle", c, overall, 100 * overlap);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  const char* thread = std::getenv("HREDUCE_PROGRESS_THREAD");
  std::printf("progress thread: %s\n",
              thread != nullptr && std::string(thread) == "1" ? "on" : "off");
  hreduce::TeamOptions options;
  options.members = 2;
  hreduce::Team team(options);
  small_latency(team, rounds);
  overlap(team, rounds);
  return 0;
}
