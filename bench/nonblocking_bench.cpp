// Nonblocking and persistent calls against the blocking call, on a team of
// pinned threads, two by default (docs/nonblocking.md):
//
//  - latency at 8 B: a blocking allreduce, iallreduce + wait, and a
//    persistent start + wait, in turns: every round times a block of calls
//    of each back to back, then each call of another block alone
//    (small_latency says what is compared);
//  - overlap at 1 MiB, as the OSU nonblocking benchmarks define it: the
//    pure time t of iallreduce + wait, then start, compute for t, wait;
//    overlap = 1 - (overall - compute) / t. Two kinds of compute: busy (the
//    member spins on its core) and idle (the member sleeps, as one waiting
//    on I/O or a message would, leaving its core free).
//
//   bazel run -c opt //bench:nonblocking_bench [-- ROUNDS [MEMBERS]]
//   HREDUCE_PROGRESS_THREAD=1 bazel run -c opt //bench:nonblocking_bench
//
// A team of one (MEMBERS 1) prices the calls' own work, with no line moving
// between cores.
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

// The mean of the fastest 99 %.
double fastest_mean(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t kept = std::max<std::size_t>(1, v.size() * 99 / 100);
  double sum = 0;
  for (std::size_t i = 0; i < kept && i < v.size(); ++i) sum += v[i];
  return v.empty() ? 0 : sum / static_cast<double>(kept);
}

double microseconds(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// One 8-byte allreduce in one of the three ways.
void call_once(hreduce::Member& m, int way, hreduce::PersistentRequest& prepared, double* in,
               double* out) {
  switch (way) {
    case 0: m.allreduce(in, out, 1, hreduce::op::sum); break;
    case 1: m.iallreduce(in, out, 1, hreduce::op::sum).wait(); break;
    default:
      prepared.start();
      prepared.wait();
      break;
  }
}

// Two regimes: back to back, the mean call of a block (what a loop of calls
// takes; the median over rounds drops the blocks that lost a time slice),
// and one at a time, each call timed alone (the clock reads space the calls
// out): the mean of the fastest 99 % (the rest lost time slices). Not the
// median call: a layout of the nonblocking calls' slots once made most
// calls fast and every few slow, and its median call matched the blocking
// call's while a loop took 1.2x as long.
void small_latency(hreduce::Team& team, int rounds) {
  constexpr int kCalls = 2000;
  std::vector<double> alone[3], block_means[3];
  // Grown while timing, member 0's vectors would cost it page faults that
  // the other member does not pay, and the ways are compared on member 0's
  // calls, whose pace depends on both.
  for (int way = 0; way < 3; ++way) {
    alone[way].reserve(static_cast<std::size_t>(rounds) * kCalls);
    block_means[way].reserve(static_cast<std::size_t>(rounds));
  }
  team.run([&](hreduce::Member& m) {
    double in = m.rank() + 1, out = 0;
    hreduce::PersistentRequest prepared = m.allreduce_init(&in, &out, 1, hreduce::op::sum);
    for (int round = 0; round < rounds; ++round) {
      for (int way = 0; way < 3; ++way) {
        m.barrier();
        const auto block_start = Clock::now();
        for (int c = 0; c < kCalls; ++c) call_once(m, way, prepared, &in, &out);
        const double block = microseconds(Clock::now() - block_start) / kCalls;
        if (m.rank() == 0) block_means[way].push_back(block);
        m.barrier();
        for (int c = 0; c < kCalls; ++c) {
          const auto start = Clock::now();
          call_once(m, way, prepared, &in, &out);
          const double t = microseconds(Clock::now() - start);
          if (m.rank() == 0) alone[way].push_back(t);
        }
      }
    }
  });
  std::printf("8 B allreduce, %d member(s), %d rounds of %d calls per way:\n", team.size(), rounds,
              kCalls);
  std::printf("  %-24s %18s %18s\n", "", "back to back", "one at a time");
  const char* names[3] = {"blocking allreduce", "iallreduce + wait", "persistent start + wait"};
  const double loop = median(block_means[0]), single = fastest_mean(alone[0]);
  for (int way = 0; way < 3; ++way) {
    const double b = median(block_means[way]), a = fastest_mean(alone[way]);
    if (way == 0) {
      std::printf("  %-24s %8.3f us        %8.3f us\n", names[way], b, a);
    } else {
      std::printf("  %-24s %8.3f us %5.2fx %8.3f us %5.2fx\n", names[way], b, b / loop, a,
                  a / single);
    }
  }
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
  std::printf("1 MiB allreduce, %d member(s), medians of %d rounds:\n", team.size(), rounds);
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
  const int members = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2;
  const char* thread = std::getenv("HREDUCE_PROGRESS_THREAD");
  std::printf("progress thread: %s\n",
              thread != nullptr && std::string(thread) == "1" ? "on" : "off");
  hreduce::TeamOptions options;
  options.members = members;
  hreduce::Team team(options);
  small_latency(team, rounds);
  overlap(team, rounds);
  return 0;
}
