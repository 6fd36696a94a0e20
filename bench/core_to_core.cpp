// The floor under every small-vector team collective on a machine: how long
// one cache line takes to travel between two cores.
//
//  - round trip: two pinned threads bounce a counter; half of it is what a
//    member pays at least to learn that another has arrived (the same
//    measurement as `hreduce probe`'s, src/probe/round_trip.cpp: the median
//    over blocks);
//  - exchange: both threads publish a value and a counter, then wait for
//    the other's (what a 2-member mailbox call does, without the rest of
//    the call), with the value in the counter's cache line or in the next;
//  - wake-up: how long a thread blocked in atomic::wait takes to respond
//    after notify_one, its CPU having been idle for 500 µs (what a member
//    pays once it has stopped spinning).
//
//   bazel run //bench:core_to_core [-- CORE_A CORE_B]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/probe/measurements.hpp"

namespace {

// One slot per thread and call parity, like the engine's announcements.
struct alignas(128) Slot {
  std::atomic<long> seq{0};
  double near_value = 0;             // in seq's line
  alignas(64) double far_value = 0;  // in the next line
};
Slot slots[2][2];

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double exchange_seconds(int a, int b, long calls, bool same_line) {
  for (auto& pair : slots) {
    for (auto& slot : pair) slot.seq = 0;
  }
  double sums[2] = {0, 0};
  const auto member = [&](int me, int cpu) {
    pin(cpu);
    double sum = 0;
    for (long k = 1; k <= calls; ++k) {
      Slot& mine = slots[me][k & 1];
      (same_line ? mine.near_value : mine.far_value) = static_cast<double>(k + me);
      mine.seq.store(k, std::memory_order_release);
      const Slot& other = slots[1 - me][k & 1];
      while (other.seq.load(std::memory_order_acquire) < k) {
      }
      sum += same_line ? other.near_value : other.far_value;
    }
    sums[me] = sum;
  };
  std::thread other(member, 1, b);
  const auto start = std::chrono::steady_clock::now();
  member(0, a);
  other.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Each side summed the other's values: k + 1 on thread 0, k on thread 1.
  const double n = static_cast<double>(calls);
  if (sums[0] != n * (n + 1) / 2 + n || sums[1] != n * (n + 1) / 2) {
    std::fprintf(stderr, "core_to_core: exchange read a wrong value\n");
    std::exit(1);
  }
  return seconds;
}

// Microseconds from notify to the woken thread's answer, sorted.
std::vector<double> wake_up_microseconds(int a, int b, int wakes) {
  std::atomic<int> go{0};
  std::atomic<int> answered{0};
  std::thread sleeper([&] {
    pin(b);
    for (int i = 1; i <= wakes; ++i) {
      for (int seen = go.load(); seen < i; seen = go.load()) go.wait(seen);
      answered.store(i);
    }
  });
  pin(a);
  std::vector<double> took;
  for (int i = 1; i <= wakes; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    const auto start = std::chrono::steady_clock::now();
    go.store(i);
    go.notify_one();
    while (answered.load() < i) {
    }
    const auto end = std::chrono::steady_clock::now();
    took.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  sleeper.join();
  std::sort(took.begin(), took.end());
  return took;
}

// The topology's logical index of the PU the OS numbers `cpu`.
int logical_pu(const hreduce::Topology& topology, int cpu) {
  for (const hreduce::Pu& pu : topology.pus()) {
    if (pu.os_index == cpu) return pu.logical_index;
  }
  std::fprintf(stderr, "core_to_core: this machine has no CPU %d\n", cpu);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const int a = argc > 2 ? std::atoi(argv[1]) : 0;
  const int b = argc > 2 ? std::atoi(argv[2]) : 1;
  const hreduce::Topology topology = hreduce::Topology::discover();
  const int pu_a = logical_pu(topology, a), pu_b = logical_pu(topology, b);
  constexpr long kTrips = 1'000'000;
  for (int run = 0; run < 3; ++run) {
    const double trip = hreduce::detail::probe::round_trip_seconds(topology, pu_a, pu_b, 0.5) * 1e9;
    const double near = exchange_seconds(a, b, kTrips, true) / kTrips * 1e9;
    const double far = exchange_seconds(a, b, kTrips, false) / kTrips * 1e9;
    std::printf(
        "cores %d <-> %d: round trip %.0f ns, one way %.0f ns; exchange %.0f ns (value in the "
        "counter's line), %.0f ns (in the next line)\n",
        a, b, trip, trip / 2, near, far);
  }
  constexpr int kWakes = 1000;
  const std::vector<double> wake = wake_up_microseconds(a, b, kWakes);
  std::printf(
      "wake-up of a blocked thread on core %d: median %.1f us, 90th percentile %.1f, "
      "99th %.1f, max %.1f\n",
      b, wake[kWakes / 2], wake[kWakes * 9 / 10], wake[kWakes * 99 / 100], wake.back());
  return 0;
}
