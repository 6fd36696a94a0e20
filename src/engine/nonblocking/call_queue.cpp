#include "src/engine/nonblocking/call_queue.hpp"

#include <algorithm>
#include <utility>

#include "src/common/asymmetric_fence.hpp"
#include "src/topology/thread_cpus.hpp"

namespace hreduce::detail {

namespace {

// Whether the queue's waiters order publications with the asymmetric
// fence, so that giving the turn back and numbering a call need no fence
// or read-modify-write. These come right after a call whose last stores
// went to lines other processes read, and any such instruction waits for
// them to leave the store buffer: in a loop of 8-byte calls through the
// MPI drop-in, these two and the drop-in's own four (served_calls.cpp)
// were 0.03-0.05 us of a 0.38-0.39 us call.
bool light_waiting() {
#if defined(__SANITIZE_THREAD__)
  return false;  // ThreadSanitizer does not model membarrier(2)
#else
  return use_asymmetric_fence();
#endif
}

}  // namespace

CallQueue::CallQueue(void (*on_thread_start)(), Starters starters)
    : app_waiting_{kSpinsShared, std::chrono::microseconds{0}, light_waiting()},
      thread_waiting_{kSpinsShared, std::chrono::microseconds{0}, light_waiting()},
      starters_one_at_a_time_(starters == Starters::one_at_a_time),
      on_thread_start_(on_thread_start), thread_([this] { serve(); }) {
  name_thread(thread_, "hreduce queue");
}

CallQueue::~CallQueue() {
  drain();
  stopping_.store(true, std::memory_order_release);
  started_.fetch_add(1, std::memory_order_seq_cst);
  wake_blocked_after_rmw(started_, thread_waiting_);
  thread_.join();
}

QueuedCall* CallQueue::next_to_run() const {
  const std::uint64_t next = finished_.load(std::memory_order_relaxed);
  const Slot& slot = ring_[next % kRing];
  if (slot.number.load(std::memory_order_acquire) != next + 1) return nullptr;
  return slot.call;
}

void CallQueue::wait_for_slot(std::uint64_t number) {
  // The queue's thread runs the calls in the way; this start waits, as a
  // blocked MPI call would, without running them itself.
  while (finished_.load(std::memory_order_acquire) + kRing <= number) {
    const std::uint64_t seen = turn_.load(std::memory_order_acquire);
    if (finished_.load(std::memory_order_acquire) + kRing > number) break;
    wait_at_least(turn_, seen + 1, Deadline{}, app_waiting_);
  }
}

void CallQueue::start(QueuedCall& call) {
  call.done_.store(false, std::memory_order_relaxed);
  std::uint64_t number = 0;
  if (starters_one_at_a_time_) {
    // The previous start happened before this one (the application
    // orders them), so nobody else writes the word now.
    number = started_.load(std::memory_order_relaxed);
    publish(started_, number + 1, thread_waiting_);
  } else {
    number = started_.fetch_add(1, std::memory_order_seq_cst);
    wake_blocked_after_rmw(started_, thread_waiting_);
  }
  if (finished_.load(std::memory_order_acquire) + kRing <= number) wait_for_slot(number);
  Slot& slot = ring_[number % kRing];
  slot.call = &call;
  slot.number.store(number + 1, std::memory_order_release);
}

bool CallQueue::take_turn() {
  if ((turn_.load(std::memory_order_relaxed) & kTaken) != 0) return false;
  return (turn_.fetch_or(kTaken, std::memory_order_acquire) & kTaken) == 0;
}

void CallQueue::give_turn() {
  // Only the holder changes the word (a failed take writes it unchanged):
  // adding one clears the bit and counts an event.
  publish(turn_, turn_.load(std::memory_order_relaxed) + 1, app_waiting_);
}

bool CallQueue::run_with_turn(const QueuedCall* until) {
  bool ran = false;
  while (until == nullptr || !until->done()) {
    QueuedCall* const call = next_to_run();
    if (call == nullptr) break;
    // The previous call's waiters; the last call's learn of its end from
    // give_turn(), which says both at the price of one.
    if (ran) {
      publish(turn_, turn_.load(std::memory_order_relaxed) + 2, app_waiting_);
    }
    call->run();
    // The call's owner may free it as soon as it reads done: nothing here
    // touches it after.
    call->done_.store(true, std::memory_order_release);
    // Only the turn's holder writes it; it frees the call's slot.
    finished_.store(finished_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    ran = true;
  }
  give_turn();
  return ran;
}

void CallQueue::wait(const QueuedCall& call, bool may_run, void (*between)()) {
  while (!call.done()) {
    if (may_run && take_turn()) {
      // Nothing to run yet: the call's slot is being written by a thread
      // that may share this CPU.
      if (!run_with_turn(&call) && !call.done()) std::this_thread::yield();
      continue;
    }
    if (between != nullptr) {
      // Requests of MPI's own wait in the same call: keep MPI progressing
      // them, as MPI_Waitall would, while the queue's thread runs ours.
      between();
      std::this_thread::yield();
      continue;
    }
    const std::uint64_t seen = turn_.load(std::memory_order_acquire);
    if (call.done()) break;
    if (may_run && (seen & kTaken) == 0) continue;
    wait_at_least(turn_, seen + 1, Deadline{}, app_waiting_);
  }
}

void CallQueue::drain() {
  while (!idle()) {
    if (take_turn()) {
      if (!run_with_turn(nullptr)) std::this_thread::yield();
      continue;
    }
    const std::uint64_t seen = turn_.load(std::memory_order_acquire);
    if (idle()) break;
    if ((seen & kTaken) == 0) continue;
    wait_at_least(turn_, seen + 1, Deadline{}, app_waiting_);
  }
}

bool CallQueue::yield_was_away(std::chrono::steady_clock::time_point& last) {
  std::this_thread::yield();
  const auto now = std::chrono::steady_clock::now();
  const bool away = now - last > kLongestNap;
  last = now;
  return away;
}

bool CallQueue::nap(std::chrono::nanoseconds length) {
  // Reads nothing the application writes: a line the thread polled is one
  // the application's next write must take back from this core, and a call
  // writes that line several times (numbering, the turn, finishing). On a
  // CPU of its own yield() returns at once; on a shared one it lets the
  // application run.
  auto last = std::chrono::steady_clock::now();
  const auto until = last + length;
  bool away = false;
  do {
    away |= yield_was_away(last);
  } while (last < until);
  return away;
}

bool CallQueue::wait_for_start(std::uint64_t finished) {
  // A thread asleep in the kernel on a CPU that then idles wakes tens of
  // microseconds after the start that woke it, in a virtual machine: all of
  // a call's overlap with a short compute phase. So it first polls the
  // doorbell between yields, which on a CPU it shares lets the application
  // run, and on a free one costs nothing but that CPU.
  auto last = std::chrono::steady_clock::now();
  const auto until = last + kIdlePolling;
  for (;;) {
    const bool was_away = yield_was_away(last);
    if (started_.load(std::memory_order_acquire) != finished) return was_away;
    if (last >= until) {
      wait_at_least(started_, finished + 1, Deadline{}, thread_waiting_);
      return false;
    }
  }
}

void CallQueue::serve() {
  let_current_thread_use_process_cpus();
  if (on_thread_start_ != nullptr) on_thread_start_();
  std::chrono::nanoseconds nap_length = kLongestNap;
  int naps_held_off = 0;  // in a row, the turn held by an application thread
  bool started_while_away = false;
  for (;;) {
    const std::uint64_t finished = finished_.load(std::memory_order_acquire);
    // The destructor drained the queue first, and nothing starts after.
    if (stopping_.load(std::memory_order_acquire)) return;
    if (started_.load(std::memory_order_acquire) == finished) {
      started_while_away = wait_for_start(finished);
      continue;
    }
    // Where other threads outnumber the CPUs, a yield hands the CPU to one
    // of them for a time slice, and a nap then lasts milliseconds. A call
    // started while this thread was off its CPU has had the application's
    // attention already: it is run at once.
    if (std::exchange(started_while_away, false)) {
      if (take_turn() && !run_with_turn(nullptr)) std::this_thread::yield();
      continue;
    }
    // The thread that started the call often waits for it at once and runs
    // it itself, cheaper than handing it over (which costs it a wake-up
    // when the call ends). So the thread steps in only where the queue
    // stood still for a nap: its owner computes, or waits without running
    // calls (MPI progress of its own). The nap shortens while the thread
    // keeps finding the queue still, and grows back while the application
    // runs its calls: a call left alone then starts soon, and one that its
    // owner runs costs the thread a look only now and then.
    const bool away = nap(nap_length);
    if (finished_.load(std::memory_order_acquire) != finished) {
      nap_length = std::min(2 * nap_length, std::chrono::nanoseconds{kLongestNap});
      naps_held_off = 0;
      continue;
    }
    nap_length = std::max(nap_length / 2, std::chrono::nanoseconds{kShortestNap});
    const std::uint64_t seen = turn_.load(std::memory_order_acquire);
    if (take_turn()) {
      naps_held_off = 0;
      if (!run_with_turn(nullptr)) std::this_thread::yield();
      continue;
    }
    // An application thread holds the turn and runs the calls. Through a
    // long call the thread sleeps, as the application's other threads do,
    // rather than take time slices from it where they share a CPU; at once
    // where its nap showed that other threads wait for this CPU.
    if (++naps_held_off >= kNapsBeforeSleep || away) {
      naps_held_off = 0;
      if ((seen & kTaken) != 0) wait_at_least(turn_, seen + 1, Deadline{}, app_waiting_);
    }
  }
}

}  // namespace hreduce::detail
