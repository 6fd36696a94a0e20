// How a member waits (src/common/wait.hpp): with keep_polling it outlasts a
// short wait without sleeping (a sleeping member's CPU goes idle, and waking
// it costs more than the wait); without, it soon sleeps in the kernel and is
// woken by the publisher.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "src/common/wait.hpp"

using namespace hreduce::detail;
using namespace std::chrono_literals;

namespace {

// Publishes `word` = 1 once `ready()` holds and `delay` has passed, from
// another thread, while this one waits for it; returns the sleepers the
// publisher saw just before publishing.
template <class Ready>
int sleepers_at_publish(Waiting& waiting, std::chrono::milliseconds delay, Ready ready) {
  std::atomic<std::uint64_t> word{0};
  int seen = -1;
  std::thread publisher([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!ready() || std::chrono::steady_clock::now() - start < delay) {
      if (std::chrono::steady_clock::now() - start > 10s) break;  // fail, do not hang
      std::this_thread::sleep_for(100us);
    }
    seen = waiting.sleepers.load();
    publish(word, 1, waiting);
  });
  CHECK(wait_at_least(word, 1, Deadline{}, waiting));
  publisher.join();
  return seen;
}

}  // namespace

TEST_CASE("a waiter with keep_polling does not sleep through a short wait", "[engine][wait]") {
  Waiting waiting;
  waiting.keep_polling = 2s;  // far beyond the wait, so a slow machine cannot flake
  CHECK(sleepers_at_publish(waiting, 20ms, [] { return true; }) == 0);
  CHECK(waiting.sleepers.load() == 0);
}

TEST_CASE("a waiter without keep_polling sleeps and is woken", "[engine][wait]") {
  Waiting waiting;  // keep_polling 0: a few hundred polls, 64 yields, then sleep
  CHECK(sleepers_at_publish(waiting, 0ms, [&] { return waiting.sleepers.load() == 1; }) == 1);
  CHECK(waiting.sleepers.load() == 0);
}

TEST_CASE("a waiter polls longer than keep_polling only by a round of polls", "[engine][wait]") {
  Waiting waiting;
  waiting.keep_polling = 5ms;
  const auto start = std::chrono::steady_clock::now();
  CHECK(sleepers_at_publish(waiting, 0ms, [&] { return waiting.sleepers.load() == 1; }) == 1);
  // It went to sleep, and not before keep_polling had passed.
  CHECK(std::chrono::steady_clock::now() - start >= 5ms);
}

TEST_CASE("a publisher without a fence wakes a waiter that registered as it published",
          "[engine][wait]") {
  // Waiting::light: the publisher only stores and reads the sleepers; the
  // waiter's membarrier orders both. A publication that both sides missed
  // would leave the waiter asleep until its deadline.
  if (!register_asymmetric_fence()) {
    WARN("membarrier is not offered here: nothing to test");
    return;
  }
  Waiting waiting;
  waiting.light = true;
  waiting.spins = 8;
  for (int round = 0; round < 100; ++round) {
    std::atomic<std::uint64_t> word{0};
    std::thread publisher([&] {
      // Publishes the moment the waiter registers: the store and the
      // waiter's reread race.
      const auto start = std::chrono::steady_clock::now();
      while (waiting.sleepers.load(std::memory_order_relaxed) == 0 &&
             std::chrono::steady_clock::now() - start < 10s) {
      }
      publish(word, 1, waiting);
    });
    const auto start = std::chrono::steady_clock::now();
    CHECK(wait_at_least(word, 1, Deadline::after(20s), waiting));
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    publisher.join();
  }
  CHECK(waiting.sleepers.load() == 0);
}
