#include "src/common/level_clock.hpp"

#include <chrono>
#include <thread>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace hreduce::detail {

constinit thread_local LevelClock* t_level_clock = nullptr;

namespace {

using SteadyClock = std::chrono::steady_clock;

// The time stamp counter where there is one: a clock read is a large share
// of what it measures in a call of a few hundred nanoseconds, and the
// counter costs about half of steady_clock's read (which scales the same
// counter in the vDSO). Linux uses it as its own clock only where it is
// constant and synchronised between cores, which the scaling below also
// needs.
std::uint64_t ticks_now() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(SteadyClock::now().time_since_epoch().count());
#endif
}

struct ClockPair {
  SteadyClock::time_point steady;
  std::uint64_t ticks;
};

// Both clocks read back to back; a read bracketed by steady_clock reads
// more than 2 µs apart (the thread was preempted between them) is taken
// again.
ClockPair read_both() {
  ClockPair pair{};
  for (int attempt = 0; attempt < 20; ++attempt) {
    const SteadyClock::time_point before = SteadyClock::now();
    pair.ticks = ticks_now();
    pair.steady = SteadyClock::now();
    if (pair.steady - before < std::chrono::microseconds(2)) break;
  }
  return pair;
}

// Seconds per tick, measured once over 5 ms against steady_clock.
double seconds_per_tick() {
  static const double value = [] {
    const ClockPair from = read_both();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const ClockPair to = read_both();
    const double seconds = std::chrono::duration<double>(to.steady - from.steady).count();
    return to.ticks > from.ticks ? seconds / static_cast<double>(to.ticks - from.ticks) : 1e-9;
  }();
  return value;
}

}  // namespace

std::string_view level_name(CallLevel level) {
  switch (level) {
    case CallLevel::inside_process: return "inside_process";
    case CallLevel::node_segment: return "node_segment";
    case CallLevel::between_nodes: return "between_nodes";
    case CallLevel::waiting: return "waiting";
  }
  return "?";
}

double LevelSeconds::total() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum;
}

LevelSeconds& LevelSeconds::operator+=(const LevelSeconds& other) {
  for (int i = 0; i < kCallLevels; ++i) seconds[i] += other.seconds[i];
  return *this;
}

LevelSeconds LevelSeconds::scaled(double factor) const {
  LevelSeconds s = *this;
  for (double& level : s.seconds) level *= factor;
  return s;
}

LevelClock::~LevelClock() {
  if (t_level_clock == this) t_level_clock = nullptr;
}

void LevelClock::start() {
  current_ = static_cast<int>(CallLevel::inside_process);
  mark_ = ticks_now();
  t_level_clock = this;
}

void LevelClock::stop() {
  charge_until(ticks_now());
  if (t_level_clock == this) t_level_clock = nullptr;
}

LevelSeconds LevelClock::seconds() const {
  const double scale = seconds_per_tick();
  LevelSeconds s;
  for (int i = 0; i < kCallLevels; ++i) s.seconds[i] = static_cast<double>(ticks_[i]) * scale;
  return s;
}

void LevelClock::reset() { ticks_ = {}; }

void LevelClock::charge_until(std::uint64_t now) {
  // A counter read on another core after a migration may lag: nothing
  // rather than a wrapped-around charge.
  if (now > mark_) ticks_[current_] += now - mark_;
  mark_ = now;
}

int LevelClock::enter(CallLevel level) {
  const int next = static_cast<int>(level);
  if (next == current_) return -1;
  charge_until(ticks_now());
  const int back = current_;
  current_ = next;
  return back;
}

void LevelClock::leave(int back) {
  if (back < 0) return;
  charge_until(ticks_now());
  current_ = back;
}

}  // namespace hreduce::detail
