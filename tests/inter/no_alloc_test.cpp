// Implementation: in steady state the inter-process algorithms allocate
// nothing. After a warm-up round (Workspace growth, the cached binomial
// schedule), a second round of every algorithm over a channel that itself
// never allocates must leave the process-wide allocation count unchanged.
// Replaces global operator new (//tests/support:count_allocations), hence a
// binary of its own.
#include <condition_variable>
#include <mutex>

#include "tests/inter/every_algorithm.hpp"
#include "tests/inter/harness.hpp"
#include "tests/inter/rendezvous_channel.hpp"
#include "tests/support/count_allocations.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

// A reusable barrier that does not allocate once built.
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      done_.notify_all();
    } else {
      done_.wait(lock, [&] { return generation_ != generation; });
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  int count_;
  int arrived_ = 0;
  long generation_ = 0;
};

}  // namespace

TEST_CASE("steady-state calls of every algorithm allocate nothing", "[inter][allocation]") {
  const int P = GENERATE(5, 8);
  const std::size_t n = GENERATE(as<std::size_t>{}, 7, 1000);
  INFO("P = " << P << ", n = " << n);
  RendezvousFabric fabric(P);
  Barrier barrier(P);
  long before = -1;
  long after = -1;
  // Round 0 warms up; round 1 is counted, from before it until after it.
  check_every_algorithm(fabric, n, 2, [&](int r, int round) {
    if (round == 0) return;
    barrier.arrive_and_wait();
    if (r == 0) (round == 1 ? before : after) = heap_allocations();
    barrier.arrive_and_wait();
  });
  REQUIRE(before >= 0);  // the hook did run
  CHECK(after - before == 0);
}
