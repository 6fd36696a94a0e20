#include "src/engine/nonblocking/call_queue.hpp"

#include "src/topology/thread_cpus.hpp"

namespace hreduce::detail {

CallQueue::CallQueue(void (*on_thread_start)())
    : on_thread_start_(on_thread_start), thread_([this] { serve(); }) {}

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
    const std::uint64_t seen = events_.load(std::memory_order_acquire);
    if (finished_.load(std::memory_order_acquire) + kRing > number) break;
    wait_at_least(events_, seen + 1, Deadline{}, app_waiting_);
  }
}

void CallQueue::start(QueuedCall& call) {
  call.done_.store(false, std::memory_order_relaxed);
  const std::uint64_t number = started_.fetch_add(1, std::memory_order_seq_cst);
  wake_blocked_after_rmw(started_, thread_waiting_);
  if (finished_.load(std::memory_order_acquire) + kRing <= number) wait_for_slot(number);
  Slot& slot = ring_[number % kRing];
  slot.call = &call;
  slot.number.store(number + 1, std::memory_order_release);
}

bool CallQueue::take_turn() {
  if (turn_taken_.load(std::memory_order_relaxed)) return false;
  return !turn_taken_.exchange(true, std::memory_order_acquire);
}

void CallQueue::give_turn() {
  turn_taken_.store(false, std::memory_order_release);
  events_.fetch_add(1, std::memory_order_seq_cst);
  wake_blocked_after_rmw(events_, app_waiting_);
}

bool CallQueue::run_with_turn(const QueuedCall* until) {
  bool ran = false;
  while (until == nullptr || !until->done()) {
    QueuedCall* const call = next_to_run();
    if (call == nullptr) break;
    // The previous call's waiters; the last call's learn of its end from
    // give_turn(), which says both at the price of one.
    if (ran) {
      events_.fetch_add(1, std::memory_order_seq_cst);
      wake_blocked_after_rmw(events_, app_waiting_);
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
    const std::uint64_t seen = events_.load(std::memory_order_acquire);
    if (call.done()) break;
    if (may_run && !turn_taken_.load(std::memory_order_acquire)) continue;
    wait_at_least(events_, seen + 1, Deadline{}, app_waiting_);
  }
}

void CallQueue::drain() {
  while (!idle()) {
    if (take_turn()) {
      if (!run_with_turn(nullptr)) std::this_thread::yield();
      continue;
    }
    const std::uint64_t seen = events_.load(std::memory_order_acquire);
    if (idle()) break;
    if (!turn_taken_.load(std::memory_order_acquire)) continue;
    wait_at_least(events_, seen + 1, Deadline{}, app_waiting_);
  }
}

void CallQueue::give_starter_a_head_start() {
  // The thread that started the call often waits for it at once, and runs
  // it itself: cheaper than handing it over, which costs it a wake-up when
  // the call ends. Where it shares this thread's CPU, it gets there first
  // only if this thread lets it run; a call left alone starts this much
  // later.
  const auto until = std::chrono::steady_clock::now() + kHeadStart;
  do {
    std::this_thread::yield();
  } while (!turn_taken_.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < until);
}

void CallQueue::serve() {
  let_current_thread_use_process_cpus();
  if (on_thread_start_ != nullptr) on_thread_start_();
  for (;;) {
    const std::uint64_t finished = finished_.load(std::memory_order_acquire);
    // The destructor drained the queue first, and nothing starts after.
    if (stopping_.load(std::memory_order_acquire)) return;
    if (started_.load(std::memory_order_acquire) == finished) {
      wait_at_least(started_, finished + 1, Deadline{}, thread_waiting_);
      give_starter_a_head_start();
      continue;
    }
    if (take_turn()) {
      if (!run_with_turn(nullptr)) std::this_thread::yield();
      continue;
    }
    const std::uint64_t seen = events_.load(std::memory_order_acquire);
    if (!turn_taken_.load(std::memory_order_acquire)) continue;
    wait_at_least(events_, seen + 1, Deadline{}, app_waiting_);
  }
}

}  // namespace hreduce::detail
