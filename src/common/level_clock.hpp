// Time per level of a call (`hreduce bench --breakdown`): where a member's
// time inside a collective goes, level by level of the hierarchy.
//
//   inside_process  the process's own work: the shared-memory path among
//                   its threads, argument checks, the hybrid bookkeeping
//   node_segment    an operation of the node level (src/node/), among the
//                   processes of a node in their shared segment
//   between_nodes   a message phase (src/inter/ over MPI), between nodes or
//                   between processes without the node level
//   waiting         blocked until another member (thread or process of the
//                   node) has written the word this one waits for: its
//                   arrival at the call, or its part of a step
//
// A LevelScope at the entry of a function charges the time until it returns
// to its level; a scope inside another takes its time out of the outer one,
// so the levels split the call without overlap and add up to it. The
// runtime's hooks are one line each, at a handful of function entries (the
// call's entry, the node level's operations, the message phase, the waits).
//
// The clock runs only on threads that asked: a thread installs a LevelClock
// (LevelClock::start), runs its calls, and reads the seconds per level
// (the bench does this per member around each timed batch). Everywhere
// else a scope costs one load of a thread-local pointer and a branch: the
// clock is never read when nobody asked.
//
// While a clock runs, the thread is always in some level: inside_process
// where no scope says otherwise. So the time between two calls (the
// caller's loop, Member's inline packing of the arguments, the clock's own
// reads at the call's edges) is the process's too, the levels add up to
// the clock's whole window, and the call's entry scope reads no clock (it
// enters the level that is current already).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace hreduce::detail {

enum class CallLevel : std::uint8_t { inside_process, node_segment, between_nodes, waiting };
inline constexpr int kCallLevels = 4;
inline constexpr CallLevel kAllCallLevels[kCallLevels] = {
    CallLevel::inside_process, CallLevel::node_segment, CallLevel::between_nodes,
    CallLevel::waiting};

// "inside_process", "node_segment", "between_nodes", "waiting": the names
// the bench's table, JSON and plot use.
std::string_view level_name(CallLevel level);

// Seconds per level.
struct LevelSeconds {
  std::array<double, kCallLevels> seconds{};

  double& operator[](CallLevel level) { return seconds[static_cast<int>(level)]; }
  double operator[](CallLevel level) const { return seconds[static_cast<int>(level)]; }
  double total() const;
  LevelSeconds& operator+=(const LevelSeconds& other);
  LevelSeconds scaled(double factor) const;
};

// One thread's clock. Not shared: only the thread it is started on charges
// time to it, and only while started.
class LevelClock {
 public:
  LevelClock() = default;
  LevelClock(const LevelClock&) = delete;
  LevelClock& operator=(const LevelClock&) = delete;
  ~LevelClock();

  // Installs this clock on the calling thread (a thread runs one clock at
  // a time) and starts charging inside_process.
  void start();
  // Charges the last stretch and uninstalls the clock; seconds() keeps
  // what it gathered.
  void stop();
  // Everything charged since construction or reset().
  LevelSeconds seconds() const;
  void reset();

 private:
  friend class LevelScope;
  // Charges the time since the last mark to the current level and makes
  // `level` current; returns the level to go back to, or -1 when `level`
  // is current already (a nested scope of the same level changes nothing).
  int enter(CallLevel level);
  void leave(int back);
  void charge_until(std::uint64_t now);

  std::array<std::uint64_t, kCallLevels> ticks_{};
  std::uint64_t mark_ = 0;
  int current_ = 0;
};

// The calling thread's clock; null unless the thread started one. The
// initial-exec model makes reading it one instruction also from the shared
// libraries (every one of them is loaded at program start, or preloaded).
extern constinit thread_local LevelClock* t_level_clock __attribute__((tls_model("initial-exec")));

// The hook: `LevelScope scope(CallLevel::node_segment);` at a function's
// entry charges the rest of the function to that level.
class LevelScope {
 public:
  explicit LevelScope(CallLevel level) : clock_(t_level_clock) {
    if (clock_ != nullptr) [[unlikely]]
      back_ = clock_->enter(level);
  }
  ~LevelScope() {
    if (clock_ != nullptr) [[unlikely]]
      clock_->leave(back_);
  }
  LevelScope(const LevelScope&) = delete;
  LevelScope& operator=(const LevelScope&) = delete;

 private:
  LevelClock* clock_;
  int back_ = -1;
};

}  // namespace hreduce::detail
