// Waiting for another member's progress word: spin briefly, then yield, then
// block in the kernel. A team of 16–64 members on two cores would crawl if
// waiters only spun: the member they wait for needs the core.
//
// The blocking step is futex(2) on the word's low 32 bits (x86-64 is little
// endian; a word that grows by one per publish changes its low half every
// time, which is all FUTEX_WAIT compares), private to the process, with the
// deadline as its timeout. C++20's atomic::wait cannot time out, and the
// sleeps of growing length that stood in for it with a deadline (every team
// over MPI has one) woke up to a millisecond after the word had changed
// (`bazel run //bench:late_member` compares waits with and without one).
//
// Progress words only grow (they hold call sequence numbers), so "done" is
// `word >= target` and a waiter can never miss a value.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>
#include <thread>

#include "src/common/asymmetric_fence.hpp"

namespace hreduce::detail {

// A call's time limit. The clock is read only when a wait first gets as
// far as sleeping, and the limit counts from there: most waits end while
// spinning, and a clock read at every call's start was a noticeable share
// of a small call's time. The limit so starts at most a few microseconds
// late.
struct Deadline {
  std::chrono::milliseconds timeout{0};
  bool active = false;

  static Deadline after(std::chrono::milliseconds limit) {
    Deadline d;
    d.timeout = limit;
    d.active = limit.count() > 0;
    return d;
  }
  // When the limit falls; the first question starts it.
  std::chrono::steady_clock::time_point at() const {
    if (!started_) {
      at_ = std::chrono::steady_clock::now() + timeout;
      started_ = true;
    }
    return at_;
  }

 private:
  mutable std::chrono::steady_clock::time_point at_{};
  mutable bool started_ = false;
};

// The word's low half, where futex(2) looks.
inline std::uint32_t* futex_word(const std::atomic<std::uint64_t>& word) {
  static_assert(std::endian::native == std::endian::little, "futex_word: the low half comes first");
  return reinterpret_cast<std::uint32_t*>(const_cast<std::atomic<std::uint64_t>*>(&word));
}

// Sleeps while the word's low half still reads `seen`, at most `limit` (none:
// until woken). Wakes from a signal or early are fine: callers reread.
inline void private_futex_wait(const std::atomic<std::uint64_t>& word, std::uint64_t seen,
                               std::chrono::nanoseconds limit) {
  timespec ts{static_cast<time_t>(limit.count() / 1000000000),
              static_cast<long>(limit.count() % 1000000000)};
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT_PRIVATE, static_cast<std::uint32_t>(seen),
          limit.count() > 0 ? &ts : nullptr, nullptr, 0);
}

inline void private_futex_wake_all(const std::atomic<std::uint64_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();  // eases the sibling hyper-thread and the memory bus
#endif
}

// Spins before a waiter yields. With a core to itself a member spins a few
// microseconds, the usual wait in a collective. When members outnumber the
// CPUs, the member it waits for is likely queued behind it on the same CPU:
// a long spin only delays it, several times over for small calls.
inline constexpr int kSpinsAlone = 512;
inline constexpr int kSpinsShared = 8;

// After those spins, a member that has a CPU of its own keeps polling this
// long before it yields and sleeps. A sleeping member's CPU goes idle, and
// waking it takes longer than the spins last (tens of microseconds, at
// times milliseconds, in a virtual machine: `bazel run //bench:core_to_core`
// shows it). Then the member it woke waits in turn for longer than its
// spins, sleeps too, and every call pays a wake-up; 1 ms of polling still
// let one late member start such a chain now and then, 10 ms rarely. The
// price is up to 10 ms of a CPU per wait when members arrive that far
// apart; libgomp polls about 1 ms by default (GOMP_SPINCOUNT), Intel's
// OpenMP runtime 200 ms (KMP_BLOCKTIME).
inline constexpr std::chrono::microseconds kKeepPollingAlone{10000};

// How one team's members wait for each other, shared by all its progress
// words.
struct Waiting {
  int spins = kSpinsAlone;
  std::chrono::microseconds keep_polling{0};
  // Publishers need no fence: a waiter about to sleep orders their stores
  // with the asymmetric fence (asymmetric_fence.hpp). Set by teams whose
  // process registered for it; never under ThreadSanitizer, which does not
  // model membarrier(2).
  bool light = false;
  // Members blocked in the kernel right now. A publisher wakes the word's
  // waiters only when there are some: a wake-up is a system call, and on
  // the fast path nobody sleeps.
  alignas(128) std::atomic<int> sleepers{0};
};

// The first half of publish(): everything this member wrote for the call
// (its partial result, its announcement) becomes visible to whoever
// acquires the word, but a waiter blocked in the kernel stays asleep until
// wake_blocked().
inline void announce(std::atomic<std::uint64_t>& word, std::uint64_t value) {
  word.store(value, std::memory_order_release);
}

// The second half. A waiter registers in `sleepers`, then rereads the word;
// the store must be ordered before reading `sleepers`: either the waiter
// sees the new value or this sees it registered, never neither. Where the
// waiters issue the asymmetric fence (Waiting::light), a compiler barrier
// does; else the fence here, which waits for the store to leave the store
// buffer: for a line other members have just read, a round trip to their
// cores.
inline void wake_blocked(std::atomic<std::uint64_t>& word, Waiting& waiting) {
#if defined(__SANITIZE_THREAD__)
  // GCC's ThreadSanitizer refuses fences. A sequentially consistent
  // read-modify-write of the word orders the same way, at the price of
  // fetching the line back from the members that read it.
  word.fetch_add(0, std::memory_order_seq_cst);
  if (waiting.sleepers.load(std::memory_order_seq_cst) != 0) private_futex_wake_all(word);
#else
  if (waiting.light) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  if (waiting.sleepers.load(std::memory_order_relaxed) != 0) private_futex_wake_all(word);
#endif
}

// wake_blocked() for a word this thread has just changed with a
// sequentially consistent read-modify-write. That write and the look at
// `sleepers`, both sequentially consistent, are ordered as the waiter's
// registration and reread are, so the fence (an mfence on x86-64, tens of
// cycles) is left out.
inline void wake_blocked_after_rmw(std::atomic<std::uint64_t>& word, Waiting& waiting) {
  if (waiting.sleepers.load(std::memory_order_seq_cst) != 0) private_futex_wake_all(word);
}

inline void publish(std::atomic<std::uint64_t>& word, std::uint64_t value, Waiting& waiting) {
  announce(word, value);
  wake_blocked(word, waiting);
}

// The part of wait_at_least() after a first look found the word short.
[[gnu::noinline]] inline bool wait_longer(const std::atomic<std::uint64_t>& word,
                                          std::uint64_t target, const Deadline& deadline,
                                          Waiting& waiting) {
  constexpr int kYields = 64;
  for (int i = 0; i < waiting.spins; ++i) {
    cpu_relax();
    if (word.load(std::memory_order_acquire) >= target) return true;
  }
  if (waiting.keep_polling.count() > 0) {
    // The clock is read once per 64 polls: a read costs as much as a poll.
    const auto until = std::chrono::steady_clock::now() + waiting.keep_polling;
    do {
      for (int i = 0; i < 64; ++i) {
        cpu_relax();
        if (word.load(std::memory_order_acquire) >= target) return true;
      }
    } while (std::chrono::steady_clock::now() < until);
  }
  for (int i = 0; i < kYields; ++i) {
    std::this_thread::yield();
    if (word.load(std::memory_order_acquire) >= target) return true;
  }
  waiting.sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (waiting.light) asymmetric_fence_heavy();
  bool reached = true;
  for (std::uint64_t seen = word.load(std::memory_order_seq_cst); seen < target;
       seen = word.load(std::memory_order_seq_cst)) {
    std::chrono::nanoseconds limit{0};
    if (deadline.active) {
      limit = deadline.at() - std::chrono::steady_clock::now();
      if (limit.count() <= 0) {
        reached = word.load(std::memory_order_acquire) >= target;
        break;
      }
    }
    private_futex_wait(word, seen, limit);
  }
  waiting.sleepers.fetch_sub(1, std::memory_order_relaxed);
  return reached;
}

// Returns true once word >= target (with acquire ordering), false if the
// deadline passed first. The first look is inline: in a team whose members
// keep pace it is often all a wait takes.
inline bool wait_at_least(const std::atomic<std::uint64_t>& word, std::uint64_t target,
                          const Deadline& deadline, Waiting& waiting) {
  if (word.load(std::memory_order_acquire) >= target) return true;
  return wait_longer(word, target, deadline, waiting);
}

}  // namespace hreduce::detail
