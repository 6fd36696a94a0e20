// The nonblocking calls of a member of a team spanning processes (and of
// the MPI drop-in's communicators), run one at a time in the order they
// were started (MPI's rule: every process starts its collectives in the
// same order, so running them in that order on each process matches them
// up).
//
// Each call runs as a blocking call of the team, by whoever gets there:
// the queue's own thread, woken when a call is started, or an application
// thread that waits for the call (wait(), MPI_Wait) and finds the queue's
// turn free. The thread is what makes a call progress while the
// application computes or sits in another MPI call: Open MPI's own
// nonblocking collectives advance only inside MPI calls of the
// application, and a call that advanced only inside a wait could hang a
// program that MPI allows (one process tests in a loop while waiting for a
// message that another sends only after its own wait).
//
//   start ──► queue ──► [turn] ──► run (blocking, on the team) ──► done
//                          ▲                      ▲
//                  the queue's thread    or a waiting application thread
//
// The queue takes no lock: the started calls are linked through their own
// `next_`, a starter appends with one exchange of the tail, and only the
// turn's holder takes calls off the head (an intrusive multi-producer,
// single-consumer list after Vyukov's). A mutex and a deque cost two more
// atomic read-modify-writes per start and per run, a noticeable share of
// an 8-byte call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "src/common/wait.hpp"

namespace hreduce::detail {

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
  std::atomic<QueuedCall*> next_{nullptr};  // the next started call (CallQueue)
};

class CallQueue {
 public:
  // `on_thread_start` (may be null) runs first on the queue's thread: where
  // MPI gives the process less than MPI_THREAD_MULTIPLE, it makes the
  // thread refuse MPI messages (src/transport/mpi_channel.hpp), so that a
  // call that needs one fails instead of racing the application's MPI
  // calls.
  explicit CallQueue(void (*on_thread_start)() = nullptr);
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
  void append(QueuedCall& call);
  // The oldest queued call, taken off the list (the turn's holder only);
  // null when none is, or when a start is halfway through appending.
  QueuedCall* take_oldest();
  // With the turn: runs the queued calls in order until `until` (null:
  // every one) is done or none is left, then gives the turn back. Returns
  // whether any ran.
  bool run_with_turn(const QueuedCall* until);
  void serve();  // the thread's loop
  void give_starter_a_head_start();
  static constexpr std::chrono::microseconds kHeadStart{5};

  // Stands in the list when no call does, so that appending never finds
  // it empty.
  struct Stub final : QueuedCall {
    void run() override {}
  };
  Stub stub_;
  std::atomic<QueuedCall*> tail_{&stub_};  // the latest appended
  QueuedCall* head_ = &stub_;              // the turn's holder's
  std::atomic<bool> stopping_{false};
  std::atomic<bool> turn_taken_{false};
  std::atomic<std::uint64_t> started_{0};
  std::atomic<std::uint64_t> finished_{0};
  // Grows whenever a call finishes or the turn is given back: what a
  // thread that could not take the turn waits for.
  std::atomic<std::uint64_t> events_{0};
  // Threads waiting on events_, and the queue's thread, idle, waiting on
  // started_. Both yield after a few polls: the thread that runs the call
  // they wait for often shares their CPU (mpirun --bind-to core binds a
  // process's threads to one core).
  Waiting app_waiting_{kSpinsShared};
  Waiting thread_waiting_{kSpinsShared};
  void (*const on_thread_start_)();
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace hreduce::detail
