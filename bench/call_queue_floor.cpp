// The floor under a nonblocking call's extra cost: what the call queue
// (src/engine/nonblocking/call_queue.hpp), which the MPI drop-in's
// MPI_I*/MPI_Start calls go through, adds to a call that does nothing, with
// its own thread alive as in the drop-in (starts one at a time), and what
// its one atomic read-modify-write (taking the turn) costs bare on this
// machine. Timed in turns, R rounds of N calls each, medians:
//
//   direct     the call's run(), called directly (a virtual call)
//   queued     start() then wait() on the queue, the waiting thread running
//              the call itself (the drop-in's MPI_Start + MPI_Wait minus
//              MPI's request handle and the collective)
//   one RMW    an exchange on a line of its own
//
//   bazel run -c opt //bench:call_queue_floor [-- ROUNDS [CALLS]]
//   taskset -c 0 bazel-bin/bench/call_queue_floor   # the queue's thread on
//                                                   # the caller's core, as
//                                                   # under mpirun --bind-to core
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/engine/nonblocking/call_queue.hpp"

namespace {

using Clock = std::chrono::steady_clock;

class NothingCall : public hreduce::detail::QueuedCall {
 public:
  void run() override { ran_ = ran_ + 1; }
  long ran() const { return ran_; }

 private:
  volatile long ran_ = 0;
};

struct alignas(64) Line {
  std::atomic<std::uint64_t> word{0};
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Body>
double nanoseconds_per_call(long calls, Body body) {
  const auto start = Clock::now();
  for (long i = 0; i < calls; ++i) body();
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
         static_cast<double>(calls);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 31;
  const long calls = argc > 2 ? std::atol(argv[2]) : 200000;
  if (rounds < 1 || calls < 1) {
    std::fprintf(stderr, "call_queue_floor: ROUNDS and CALLS must be at least 1\n");
    return 2;
  }
  hreduce::detail::CallQueue queue(nullptr, hreduce::detail::CallQueue::Starters::one_at_a_time);
  NothingCall call;
  hreduce::detail::QueuedCall& as_queued = call;
  Line line;
  std::vector<double> direct, queued, bare;
  for (int r = 0; r < rounds; ++r) {
    direct.push_back(nanoseconds_per_call(calls, [&] { as_queued.run(); }));
    queued.push_back(nanoseconds_per_call(calls, [&] {
      queue.start(call);
      queue.wait(call, true);
    }));
    bare.push_back(
        nanoseconds_per_call(calls, [&] { line.word.exchange(1, std::memory_order_acquire); }));
  }
  const long expected = 2L * rounds * calls;
  if (call.ran() != expected) {
    std::fprintf(stderr, "call_queue_floor: the call ran %ld times, not %ld\n", call.ran(),
                 expected);
    return 1;
  }
  const double d = median(direct), q = median(queued), b = median(bare);
  std::printf("# medians of %d rounds of %ld calls, ns per call\n", rounds, calls);
  std::printf("direct %.1f  queued %.1f  (the queue adds %.1f)  one RMW %.1f\n", d, q, q - d, b);
  return 0;
}
