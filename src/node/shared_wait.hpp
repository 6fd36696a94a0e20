// Waiting for a progress word that another *process* writes: spin briefly,
// yield, then block in the kernel on the word itself.
//
// libstdc++'s std::atomic::wait cannot do the last step across processes:
// it waits with FUTEX_PRIVATE_FLAG (bits/atomic_wait.h), and a private futex
// is keyed by the waiter's own address space, so a notify from another
// process never reaches it. We call futex(2) without that flag, keyed by the
// shared page, on the low 32 bits of the 64-bit word (x86-64 is little
// endian; a word that grows by one per publish changes its low half every
// time, which is all FUTEX_WAIT compares).
//
// Every blocking wait has a deadline, and sleeps at most kLivenessPeriod at
// a time so that a peer that died (SIGKILL leaves no time to say goodbye)
// is noticed within that period instead of at the deadline.
#pragma once

#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#include "src/common/asymmetric_fence.hpp"
#include "src/common/wait.hpp"

namespace hreduce::detail {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "progress words must be lock-free to be shared between processes");

inline constexpr auto kLivenessPeriod = std::chrono::milliseconds(20);

// Shared by all the processes of a node (it lives in the segment).
struct alignas(128) SharedSleepers {
  // Processes blocked in futex_wait on some word of the segment right now:
  // a publisher makes the system call only when there are some.
  std::atomic<int> count{0};
};

inline void futex_wake_all(const std::atomic<std::uint64_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Sleeps while the word's low half still reads `seen`, for at most `period`.
inline void futex_wait_for(const std::atomic<std::uint64_t>& word, std::uint64_t seen,
                           std::chrono::nanoseconds period) {
  timespec ts{static_cast<time_t>(period.count() / 1000000000),
              static_cast<long>(period.count() % 1000000000)};
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT, static_cast<std::uint32_t>(seen), &ts, nullptr,
          0);
}

// Whether process `pid` still runs: gone, or a zombie nobody reaped yet,
// counts as dead.
inline bool process_alive(int pid) {
  if (pid <= 0) return true;  // unknown: only the deadline can tell
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return true;
  const char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

// Releases `value` into `word` and wakes any process blocked on it. The
// store must be ordered before reading the sleeper count: a waiter
// registers, then rereads the word, so either it sees the value or we see
// it registered. `light`: every process of the node registered for the
// asymmetric fence (asymmetric_fence.hpp), so the waiters order it for us
// before they sleep; else the fence here does.
inline void shared_publish(std::atomic<std::uint64_t>& word, std::uint64_t value,
                           SharedSleepers& sleepers, bool light) {
  word.store(value, std::memory_order_release);
#if defined(__SANITIZE_THREAD__)
  (void)light;
  word.fetch_add(0, std::memory_order_seq_cst);  // GCC's TSan refuses fences
  if (sleepers.count.load(std::memory_order_seq_cst) != 0) futex_wake_all(word);
#else
  if (light) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  if (sleepers.count.load(std::memory_order_relaxed) != 0) futex_wake_all(word);
#endif
}

enum class WaitResult { reached, timed_out, peer_died };

// Waits until word >= target (acquire). `spins` and `keep_polling` as in
// wait.hpp; `peer_pid`: the process expected to write the word; `light` as
// for shared_publish, which this waiter then orders with the heavy fence.
inline WaitResult shared_wait_at_least(const std::atomic<std::uint64_t>& word, std::uint64_t target,
                                       const Deadline& deadline, SharedSleepers& sleepers,
                                       int spins, std::chrono::microseconds keep_polling,
                                       int peer_pid, bool light) {
  if (word.load(std::memory_order_acquire) >= target) return WaitResult::reached;
  for (int i = 0; i < spins; ++i) {
    cpu_relax();
    if (word.load(std::memory_order_acquire) >= target) return WaitResult::reached;
  }
  if (keep_polling.count() > 0) {
    const auto until = std::chrono::steady_clock::now() + keep_polling;
    do {
      for (int i = 0; i < 64; ++i) {
        cpu_relax();
        if (word.load(std::memory_order_acquire) >= target) return WaitResult::reached;
      }
    } while (std::chrono::steady_clock::now() < until);
  }
  for (int i = 0; i < 64; ++i) {
    std::this_thread::yield();
    if (word.load(std::memory_order_acquire) >= target) return WaitResult::reached;
  }
  sleepers.count.fetch_add(1, std::memory_order_seq_cst);
  if (light) asymmetric_fence_heavy();
  WaitResult result = WaitResult::reached;
  for (std::uint64_t seen = word.load(std::memory_order_seq_cst); seen < target;
       seen = word.load(std::memory_order_seq_cst)) {
    std::chrono::nanoseconds period = kLivenessPeriod;
    if (deadline.active) {
      const auto left = deadline.at() - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds(0)) {
        result = WaitResult::timed_out;
        break;
      }
      if (left < period) period = left;
    }
    futex_wait_for(word, seen, period);
    if (word.load(std::memory_order_acquire) >= target) break;
    if (!process_alive(peer_pid)) {
      result = word.load(std::memory_order_acquire) >= target ? WaitResult::reached
                                                              : WaitResult::peer_died;
      break;
    }
  }
  sleepers.count.fetch_sub(1, std::memory_order_relaxed);
  return result;
}

}  // namespace hreduce::detail
