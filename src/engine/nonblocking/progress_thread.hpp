// The optional progress thread (HREDUCE_PROGRESS_THREAD=1): one per
// process, folding the chunks of open nonblocking calls of every team while
// the members compute, so a call started before a compute phase can be
// done by its end. It sleeps in the kernel whenever no call is open (a
// call that opens wakes it), starts with the first team that has
// nonblocking calls and is joined when the last such team goes.
//
// When it pays: where a core is free while members compute (members wait
// on I/O or messages, or fewer members than cores). Where every core
// computes, it takes time slices from the members, and the call finishes
// no sooner than a member's own test() or wait() would finish it
// (docs/nonblocking.md has the figures).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace hreduce::detail {

class PendingCalls;

class ProgressThread {
 public:
  // HREDUCE_PROGRESS_THREAD, read once per process.
  static bool wanted();
  static ProgressThread& instance();

  void add(PendingCalls* calls);
  void remove(PendingCalls* calls);
  // A call opened: wake the thread if it sleeps.
  void notify() {
    signals_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst)) signals_.notify_one();
  }

 private:
  void loop();

  std::mutex mutex_;  // guards teams_, and is held while the thread works on them
  std::vector<PendingCalls*> teams_;
  std::thread thread_;
  bool stop_ = false;
  std::atomic<std::uint64_t> signals_{0};
  std::atomic<bool> sleeping_{false};
};

}  // namespace hreduce::detail
