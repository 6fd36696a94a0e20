// The progress thread's life and loop (progress_thread.hpp).
#include "src/engine/nonblocking/progress_thread.hpp"

#include <algorithm>
#include <cstring>

#include "src/common/environment.hpp"
#include "src/engine/nonblocking/pending_calls.hpp"

namespace hreduce::detail {

bool ProgressThread::wanted() {
  static const bool on = [] {
    const char* text = environment("HREDUCE_PROGRESS_THREAD");
    if (text == nullptr || std::strcmp(text, "0") == 0 || std::strcmp(text, "off") == 0) {
      return false;
    }
    if (std::strcmp(text, "1") == 0 || std::strcmp(text, "on") == 0) return true;
    throw ArgumentError(std::string("Team: HREDUCE_PROGRESS_THREAD must be 1, on, 0 or off, got ") +
                        text);
  }();
  return on;
}

// Never destroyed: teams may outlive static destruction's order.
ProgressThread& ProgressThread::instance() {
  static ProgressThread* thread = new ProgressThread;
  return *thread;
}

void ProgressThread::add(PendingCalls* calls) {
  std::lock_guard lock(mutex_);
  teams_.push_back(calls);
  if (!thread_.joinable()) {
    stop_ = false;
    thread_ = std::thread([this] { loop(); });
  }
}

void ProgressThread::remove(PendingCalls* calls) {
  std::thread finished;
  {
    std::lock_guard lock(mutex_);
    teams_.erase(std::find(teams_.begin(), teams_.end(), calls));
    if (!teams_.empty()) return;
    stop_ = true;
    finished = std::move(thread_);
  }
  notify();
  signals_.notify_one();
  finished.join();
}

// Work while any call is open; sleep on `signals_` when none is. A call
// that opens after the look counts a signal, so the wait returns at once.
void ProgressThread::loop() {
  for (;;) {
    const std::uint64_t seen = signals_.load(std::memory_order_acquire);
    bool worked = false;
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
      for (PendingCalls* calls : teams_) worked |= calls->work_on_any("the progress thread");
    }
    if (worked) continue;
    sleeping_.store(true, std::memory_order_seq_cst);
    if (signals_.load(std::memory_order_seq_cst) == seen) signals_.wait(seen);
    sleeping_.store(false, std::memory_order_relaxed);
  }
}

}  // namespace hreduce::detail
