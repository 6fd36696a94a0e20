// The nonblocking reductions started on one communicator, run one at a
// time in the order they were started (MPI's rule: every process starts a
// communicator's collectives in the same order, so running them in that
// order on each process matches them up).
//
// Each call runs as a blocking call of the communicator's team, by
// whoever gets there: the queue's own thread, woken when a call is
// started, or an application thread that waits for the call (MPI_Wait)
// and finds the queue's turn free. The thread is what makes a call
// progress while the application computes or sits in another MPI call:
// Open MPI's own nonblocking collectives advance only inside MPI calls of
// the application, and a call that advanced only inside MPI_Wait could
// hang a program that MPI allows (one process tests in a loop while
// waiting for a message that another sends only after its own MPI_Wait).
//
//   start ──► queue ──► [turn] ──► run (blocking, on the team) ──► done
//                          ▲                      ▲
//                  the queue's thread    or a waiting application thread
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "src/common/wait.hpp"

namespace hreduce::detail::mpi_dropin {

// One started call. The queue only runs it and says when it is done;
// what it computes and how it fails belong to the caller.
class QueuedCall {
 public:
  virtual ~QueuedCall() = default;
  virtual void run() = 0;  // never throws
  bool done() const { return done_.load(std::memory_order_acquire); }

 private:
  friend class CallQueue;
  std::atomic<bool> done_{true};
};

class CallQueue {
 public:
  // `thread_may_call_mpi`: false where MPI gives the process less than
  // MPI_THREAD_MULTIPLE; the queue's thread then refuses MPI messages
  // (src/transport/mpi_channel.hpp), so that a call that needs one fails
  // instead of racing the application's MPI calls.
  explicit CallQueue(bool thread_may_call_mpi);
  // Finishes every started call, then stops the thread.
  ~CallQueue();
  CallQueue(const CallQueue&) = delete;
  CallQueue& operator=(const CallQueue&) = delete;

  // Queues `call` (not done from here on) and wakes the thread.
  void start(QueuedCall& call);
  // Started calls not yet done: a blocking call on the communicator must
  // wait for them first (drain()).
  bool idle() const {
    return finished_.load(std::memory_order_acquire) == started_.load(std::memory_order_acquire);
  }
  // Returns once `call` is done. `may_run`: this thread may run queued
  // calls itself when the queue's turn is free (not while it also owes
  // MPI progress to requests of its own, which a run would not give).
  // `between` (may be null) is called between naps: MPI progress.
  void wait(const QueuedCall& call, bool may_run, void (*between)() = nullptr);
  // Returns once every started call is done, running them where it can.
  void drain();

 private:
  bool take_turn();
  void give_turn();
  // Runs the oldest queued call; false when none was queued.
  bool run_oldest();
  void serve();  // the thread's loop

  std::mutex mutex_;
  std::deque<QueuedCall*> queued_;
  bool stopping_ = false;
  std::atomic<bool> turn_taken_{false};
  std::atomic<std::uint64_t> started_{0};
  std::atomic<std::uint64_t> finished_{0};
  // Grows whenever a call finishes or the turn is given back: what a
  // thread that could not take the turn waits for.
  std::atomic<std::uint64_t> events_{0};
  Waiting app_waiting_;     // threads waiting on events_
  Waiting thread_waiting_;  // the queue's thread, idle, waiting on started_
  const bool thread_may_call_mpi_;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace hreduce::detail::mpi_dropin
