// The floor under every small-vector team collective on a machine: how long
// one cache line takes to travel between two cores. Two pinned threads bounce
// a counter; half the round trip is what a member pays at least to learn that
// another has arrived.   bazel run //bench:core_to_core [-- CORE_A CORE_B]
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

alignas(128) std::atomic<long> ping{0};
alignas(128) std::atomic<long> pong{0};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace

int main(int argc, char** argv) {
  const int a = argc > 2 ? std::atoi(argv[1]) : 0;
  const int b = argc > 2 ? std::atoi(argv[2]) : 1;
  constexpr long kTrips = 1'000'000;
  for (int run = 0; run < 3; ++run) {
    ping = 0;
    pong = 0;
    std::thread other([&] {
      pin(b);
      for (long i = 1; i <= kTrips; ++i) {
        while (ping.load(std::memory_order_acquire) < i) {
        }
        pong.store(i, std::memory_order_release);
      }
    });
    pin(a);
    const auto start = std::chrono::steady_clock::now();
    for (long i = 1; i <= kTrips; ++i) {
      ping.store(i, std::memory_order_release);
      while (pong.load(std::memory_order_acquire) < i) {
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    other.join();
    std::printf("cores %d <-> %d: round trip %.0f ns, one way %.0f ns\n", a, b,
                seconds / kTrips * 1e9, seconds / kTrips * 1e9 / 2);
  }
  return 0;
}
