#include "src/engine/nonblocking/call_queue.hpp"

namespace hreduce::detail {

CallQueue::CallQueue(void (*on_thread_start)())
    : on_thread_start_(on_thread_start), thread_([this] { serve(); }) {}

CallQueue::~CallQueue() {
  drain();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  started_.fetch_add(1, std::memory_order_seq_cst);
  wake_blocked_after_rmw(started_, thread_waiting_);
  thread_.join();
}

void CallQueue::start(QueuedCall& call) {
  call.done_.store(false, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(&call);
  }
  started_.fetch_add(1, std::memory_order_seq_cst);
  wake_blocked_after_rmw(started_, thread_waiting_);
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

bool CallQueue::run_oldest() {
  QueuedCall* call = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (queued_.empty()) return false;
    call = queued_.front();
    queued_.pop_front();
  }
  call->run();
  // The call's owner may free it as soon as it reads done: nothing here
  // touches it after.
  call->done_.store(true, std::memory_order_release);
  // Only the turn's holder writes it.
  finished_.store(finished_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  events_.fetch_add(1, std::memory_order_seq_cst);
  wake_blocked_after_rmw(events_, app_waiting_);
  return true;
}

void CallQueue::wait(const QueuedCall& call, bool may_run, void (*between)()) {
  while (!call.done()) {
    if (may_run && take_turn()) {
      while (!call.done() && run_oldest()) {
      }
      give_turn();
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
      while (run_oldest()) {
      }
      give_turn();
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
  if (on_thread_start_ != nullptr) on_thread_start_();
  for (;;) {
    const std::uint64_t finished = finished_.load(std::memory_order_acquire);
    {
      std::lock_guard lock(mutex_);
      if (stopping_ && queued_.empty()) return;
    }
    if (started_.load(std::memory_order_acquire) == finished) {
      wait_at_least(started_, finished + 1, Deadline{}, thread_waiting_);
      give_starter_a_head_start();
      continue;
    }
    if (take_turn()) {
      while (run_oldest()) {
      }
      give_turn();
      continue;
    }
    const std::uint64_t seen = events_.load(std::memory_order_acquire);
    if (!turn_taken_.load(std::memory_order_acquire)) continue;
    wait_at_least(events_, seen + 1, Deadline{}, app_waiting_);
  }
}

}  // namespace hreduce::detail
