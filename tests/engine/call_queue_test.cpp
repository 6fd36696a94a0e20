// The nonblocking calls' queue (src/engine/nonblocking/call_queue.hpp): a
// ring of numbered slots, written without a lock by the threads that start
// calls and read in order by whoever holds the turn. The oracle is a plain
// count and order of what ran.
#include <sched.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/engine/nonblocking/call_queue.hpp"

using namespace hreduce::detail;

namespace {

// Counts its runs, and writes the queue-wide order it ran in.
class CountingCall final : public QueuedCall {
 public:
  void run() override {
    ++runs;
    order = next_in_order->fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t runs = 0;
  std::uint64_t order = 0;
  std::atomic<std::uint64_t>* next_in_order = nullptr;
};

// `n` calls that number their runs from `ran`.
std::vector<CountingCall> counting_calls(std::size_t n, std::atomic<std::uint64_t>& ran) {
  std::vector<CountingCall> calls(n);
  for (auto& c : calls) c.next_in_order = &ran;
  return calls;
}

}  // namespace

TEST_CASE("call queue: calls run once each, in the order started", "[call_queue]") {
  // More than the queue's ring holds: the later starts wait for slots.
  std::atomic<std::uint64_t> ran{0};
  std::vector<CountingCall> calls = counting_calls(600, ran);
  CallQueue queue;
  for (auto& c : calls) queue.start(c);
  // Only the queue's thread runs them here.
  queue.wait(calls.back(), false);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].done());
    CHECK(calls[i].runs == 1);
    CHECK(calls[i].order == i);
  }
  CHECK(queue.idle());
}

TEST_CASE("call queue: a call started again at once, by its waiter", "[call_queue]") {
  // The single-call loop of MPI_Start + MPI_Wait, round the ring many times.
  std::atomic<std::uint64_t> ran{0};
  CountingCall call;
  call.next_in_order = &ran;
  CallQueue queue;
  constexpr int kRounds = 20000;
  for (int i = 0; i < kRounds; ++i) {
    queue.start(call);
    queue.wait(call, (i % 3) != 0);  // the queue's thread runs a third
    REQUIRE(call.done());
    REQUIRE(call.runs == static_cast<std::uint64_t>(i + 1));
  }
  CHECK(ran.load() == kRounds);
}

namespace {

// Records whether the thread that made it ran it.
class WhoRanCall final : public QueuedCall {
 public:
  void run() override { by_starter = std::this_thread::get_id() == starter; }
  std::thread::id starter = std::this_thread::get_id();
  bool by_starter = false;
};

}  // namespace

TEST_CASE("call queue: calls their starter waits for at once are run by the starter",
          "[call_queue]") {
  // Handing a call to the queue's thread costs its starter a wake-up, or
  // lines the thread polls; with a CPU of its own the thread ran about a
  // tenth of such calls and made a short call through the MPI drop-in cost
  // 2.2 times the blocking one. It steps in only where the queue stands
  // still.
  cpu_set_t process{};
  REQUIRE(sched_getaffinity(0, sizeof(process), &process) == 0);
  if (CPU_COUNT(&process) < 2) return;  // the thread then runs only when the starter yields
  WhoRanCall call;
  CallQueue queue;
  constexpr int kRounds = 20000;
  int by_thread = 0;
  for (int i = 0; i < kRounds; ++i) {
    queue.start(call);
    queue.wait(call, true);
    if (!call.by_starter) ++by_thread;
  }
  INFO(by_thread << " of " << kRounds << " calls run by the queue's thread");
  CHECK(by_thread < kRounds / 100);
}

TEST_CASE("call queue: a call nobody waits for runs after the thread has slept", "[call_queue]") {
  // The idle thread polls for a while, then sleeps until a start wakes it.
  std::atomic<std::uint64_t> ran{0};
  std::vector<CountingCall> calls = counting_calls(3, ran);
  CallQueue queue;
  for (auto& c : calls) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past its polling
    queue.start(c);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!c.done() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    REQUIRE(c.done());
    CHECK(c.runs == 1);
  }
  CHECK(queue.idle());
}

TEST_CASE("call queue: several threads start, wait and drain at once", "[call_queue]") {
  // Oversubscribed on purpose (the machine has 2 cores): starters are
  // preempted between numbering a call and writing its slot, and the
  // turn's holder must wait for the slot.
  constexpr int kThreads = 6;
  constexpr int kCallsEach = 4;
  constexpr int kRounds = 1500;
  std::atomic<std::uint64_t> ran{0};
  std::atomic<int> out_of_order{0};  // counted here: Catch2's checks are not for threads
  auto queue = std::make_unique<CallQueue>();
  std::vector<CountingCall> calls = counting_calls(kThreads * kCallsEach, ran);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      CountingCall* const mine = &calls[static_cast<std::size_t>(t * kCallsEach)];
      for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < kCallsEach; ++k) queue->start(mine[k]);
        // Waited for in reverse, some by running, some not, one by drain.
        for (int k = kCallsEach - 1; k >= 0; --k) queue->wait(mine[k], (round + k) % 2 == 0);
        if (round % 100 == 0) queue->drain();
        // Started in order: the later one ran later.
        for (int k = 1; k < kCallsEach; ++k) {
          if (mine[k - 1].order >= mine[k].order) out_of_order.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  queue->drain();
  CHECK(out_of_order.load() == 0);
  CHECK(queue->idle());
  for (const auto& c : calls) CHECK(c.runs == kRounds);
  CHECK(ran.load() == std::uint64_t{kThreads} * kCallsEach * kRounds);
  queue.reset();  // stops its thread with nothing queued
}

TEST_CASE("call queue: starts one at a time from several threads, ordered by a lock",
          "[call_queue]") {
  // The drop-in's communicators and a member's progress queue: starts come
  // one at a time, each ordered before the next by the application (here a
  // mutex), and number their calls with a plain store. Waits run at once.
  constexpr int kThreads = 4;
  constexpr int kRounds = 3000;
  std::atomic<std::uint64_t> ran{0};
  std::vector<CountingCall> calls = counting_calls(kThreads, ran);
  CallQueue queue(nullptr, CallQueue::Starters::one_at_a_time);
  std::mutex starting;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      CountingCall& mine = calls[static_cast<std::size_t>(t)];
      for (int round = 0; round < kRounds; ++round) {
        {
          std::lock_guard lock(starting);
          queue.start(mine);
        }
        queue.wait(mine, (round + t) % 3 != 0);
        if (mine.runs != static_cast<std::uint64_t>(round + 1)) wrong.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  queue.drain();
  CHECK(wrong.load() == 0);
  CHECK(ran.load() == std::uint64_t{kThreads} * kRounds);
  CHECK(queue.idle());
}

TEST_CASE("call queue: destroyed with calls still queued, it runs them first", "[call_queue]") {
  std::atomic<std::uint64_t> ran{0};
  std::vector<CountingCall> calls = counting_calls(50, ran);
  {
    CallQueue queue;
    for (auto& c : calls) queue.start(c);
  }
  for (const auto& c : calls) CHECK(c.runs == 1);
  CHECK(ran.load() == calls.size());
}

namespace {

// Records the CPUs the thread that runs it may use.
class AffinityCall final : public QueuedCall {
 public:
  void run() override {
    CPU_ZERO(&cpus);
    ran_here = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
  }
  cpu_set_t cpus{};
  bool ran_here = false;
};

}  // namespace

TEST_CASE("call queue: a queue made by a pinned thread runs its calls on the process's CPUs",
          "[call_queue]") {
  // A progress thread started by a member pinned to one PU would otherwise
  // share that PU, and overlap nothing while the member computes.
  cpu_set_t process{};
  REQUIRE(sched_getaffinity(0, sizeof(process), &process) == 0);
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
    if (CPU_ISSET(cpu, &process)) first = cpu;
  }
  REQUIRE(first >= 0);
  AffinityCall call;
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
    CallQueue queue;  // its thread starts from this one's binding
    queue.start(call);
    queue.wait(call, false);  // the queue's thread runs it
  });
  pinned.join();
  REQUIRE(call.ran_here);
  INFO(CPU_COUNT(&process) << " CPUs for the process, " << CPU_COUNT(&call.cpus)
                           << " for the queue's thread");
  CHECK(CPU_EQUAL(&call.cpus, &process));
}
