// A cache line's round trip between two PUs: the floor under every small
// collective (a member learns that another arrived no faster than half of
// it). bench/core_to_core times the same bounce with its variants.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "src/probe/measurements.hpp"

namespace hreduce::detail::probe {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBlocks = 9;
constexpr long kStop = -1;

// Each counter alone in its line (and its neighbour line, which the
// adjacent-line prefetcher drags along).
struct Lines {
  alignas(128) std::atomic<long> ping{0};
  alignas(128) std::atomic<long> pong{0};
};

void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The other side answers every new ping until it reads kStop, first
// writing the ping's value over `data` (empty: the bare flag).
void answer(Lines& lines, const Topology& topology, int pu, std::vector<long>& data) {
  bind_current_thread(topology, pu);
  long last = 0;
  while (true) {
    long seen = lines.ping.load(std::memory_order_acquire);
    while (seen == last) {
      spin_pause();
      seen = lines.ping.load(std::memory_order_acquire);
    }
    if (seen == kStop) return;
    std::fill(data.begin(), data.end(), seen);
    lines.pong.store(seen, std::memory_order_release);
    last = seen;
  }
}

double block_seconds(Lines& lines, long& next, long trips, const std::vector<long>& data,
                     long& sink) {
  const auto start = Clock::now();
  for (long i = 0; i < trips; ++i, ++next) {
    lines.ping.store(next, std::memory_order_release);
    while (lines.pong.load(std::memory_order_acquire) != next) spin_pause();
    for (long v : data) sink += v;
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A first block of 200 warms the lines and sizes the rest: kBlocks blocks
// that together take about `seconds`; the median of their time per item.
// `timed_block(n)` runs n items and returns seconds per item.
template <typename TimedBlock>
double median_per_item(double seconds, TimedBlock&& timed_block) {
  const double warm = timed_block(200);
  const long items =
      std::clamp(static_cast<long>(seconds / kBlocks / std::max(warm, 1e-9)), 100L, 1'000'000L);
  std::vector<double> per_item;
  for (int block = 0; block < kBlocks; ++block) per_item.push_back(timed_block(items));
  return median(per_item);
}

double bounce(const Topology& topology, int a, int b, std::size_t bytes, double seconds) {
  Lines lines;
  std::vector<long> data(bytes / sizeof(long), 0);
  long sink = 0;
  std::thread other(answer, std::ref(lines), std::cref(topology), b, std::ref(data));
  bind_current_thread(topology, a);
  long next = 1;
  const double per_trip = median_per_item(seconds, [&](long trips) {
    return block_seconds(lines, next, trips, data, sink) / static_cast<double>(trips);
  });
  lines.ping.store(kStop, std::memory_order_release);
  other.join();
  volatile long keep = sink;  // the reads stay
  (void)keep;
  return per_trip;
}

// Both sides publish a counter in their own line and wait for the
// other's to reach it, as members meeting in the engine's arrive barrier
// do: the two transfers overlap, so an exchange costs less than the round
// trip of a bounce, where the answer leaves only after the question came.
void exchange_side(std::atomic<long>& mine, const std::atomic<long>& theirs, long first,
                   long count) {
  for (long i = first; i < first + count; ++i) {
    mine.store(i, std::memory_order_release);
    while (theirs.load(std::memory_order_acquire) < i) spin_pause();
  }
}

}  // namespace

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double round_trip_seconds(const Topology& topology, int a, int b, double seconds) {
  return bounce(topology, a, b, 0, seconds);
}

double round_trip_with_data_seconds(const Topology& topology, int a, int b, std::size_t bytes,
                                    double seconds) {
  return bounce(topology, a, b, bytes, seconds);
}

double exchange_seconds(const Topology& topology, int a, int b, double seconds) {
  Lines lines;
  // The other side learns each block's length from this side before the
  // block starts, so that both stop on the same count.
  std::atomic<long> block_length{0};
  std::thread other([&] {
    bind_current_thread(topology, b);
    long done = 0;
    while (true) {
      long n = block_length.load(std::memory_order_acquire);
      while (n == 0) {
        spin_pause();
        n = block_length.load(std::memory_order_acquire);
      }
      if (n == kStop) return;
      block_length.store(0, std::memory_order_relaxed);
      exchange_side(lines.pong, lines.ping, done + 1, n);
      done += n;
    }
  });
  bind_current_thread(topology, a);
  long done = 0;
  const auto timed_block = [&](long n) {
    block_length.store(n, std::memory_order_release);
    const auto start = Clock::now();
    exchange_side(lines.ping, lines.pong, done + 1, n);
    done += n;
    // Both sides have finished the block once this side saw the other's
    // last count; wait until the other side took the length back.
    while (block_length.load(std::memory_order_acquire) != 0) spin_pause();
    return std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(n);
  };
  const double per_exchange = median_per_item(seconds, timed_block);
  block_length.store(kStop, std::memory_order_release);
  other.join();
  return per_exchange;
}

}  // namespace hreduce::detail::probe
