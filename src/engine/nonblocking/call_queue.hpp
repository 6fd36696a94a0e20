// The nonblocking calls of a member of a team spanning processes (and of
// the MPI drop-in's communicators), run one at a time in the order they
// were started (MPI's rule: every process starts its collectives in the
// same order, so running them in that order on each process matches them
// up).
//
// Each call runs as a blocking call of the team, by whoever gets there:
// an application thread that waits for the call (wait(), MPI_Wait) and
// finds the queue's turn free, or the queue's own thread, woken when a
// call is started, which steps in only once the queue has stood still for
// a few microseconds (serve()). The thread is what makes a call progress
// while the application computes or sits in another MPI call: Open MPI's
// own nonblocking collectives advance only inside MPI calls of the
// application, and a call that advanced only inside a wait could hang a
// program that MPI allows (one process tests in a loop while waiting for a
// message that another sends only after its own wait).
//
//   start ──► queue ──► [turn] ──► run (blocking, on the team) ──► done
//                          ▲                      ▲
//                  the queue's thread    or a waiting application thread
//
// The queue takes no lock, and a call costs one atomic read-modify-write
// (taking the turn) where its starters come one at a time and waiters
// order publications with the asymmetric fence (wait.hpp), else three
// (numbering it too, and giving the turn back). A start numbers its call
// with the one write of `started_` that wakes the thread anyway, and
// writes it into that number's slot of a ring; only the turn's holder
// reads slots, in order, so it needs none. A mutex and a deque took four
// more per call; a linked list two more, a noticeable share of an 8-byte
// call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
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
};

class CallQueue {
 public:
  // `on_thread_start` (may be null) runs first on the queue's thread: where
  // MPI gives the process less than MPI_THREAD_MULTIPLE, it makes the
  // thread refuse MPI messages (src/transport/mpi_channel.hpp), so that a
  // call that needs one fails instead of racing the application's MPI
  // calls.
  // Who may start calls: `concurrent`, any threads at once;
  // `one_at_a_time`, one thread at a time with each start ordered before
  // the next by the application (MPI's rule for a communicator's
  // collectives; a member's calls), which spares a start its
  // read-modify-write.
  enum class Starters { concurrent, one_at_a_time };
  explicit CallQueue(void (*on_thread_start)() = nullptr, Starters starters = Starters::concurrent);
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
  // The next call to run (the turn's holder only); null when none is
  // started, or the latest start has not written its slot yet.
  QueuedCall* next_to_run() const;
  // Waits until call `number`'s slot is free: the call kRing before it has
  // been run.
  void wait_for_slot(std::uint64_t number);
  // With the turn: runs the queued calls in order until `until` (null:
  // every one) is done or none is left, then gives the turn back. Returns
  // whether any ran.
  bool run_with_turn(const QueuedCall* until);
  void serve();  // the thread's loop
  // How long the thread leaves started calls to the application before it
  // runs them itself (serve()). Returns whether a yield outlasted the
  // longest nap: other threads were waiting for this CPU.
  static bool nap(std::chrono::nanoseconds length);
  // Yields once and moves `last` (the previous look at the clock) to now.
  // Returns whether the yield outlasted the longest nap: other threads
  // were waiting for this CPU.
  static bool yield_was_away(std::chrono::steady_clock::time_point& last);
  // The idle thread's wait for the next start: it polls this long, then
  // sleeps until a start wakes it. Returns whether the start came while
  // the thread was off its CPU (a yield outlasted the longest nap).
  bool wait_for_start(std::uint64_t finished);
  static constexpr std::chrono::microseconds kIdlePolling{1000};
  static constexpr std::chrono::microseconds kLongestNap{8};
  static constexpr std::chrono::microseconds kShortestNap{1};
  // Naps in a row with the turn held by another thread (about a
  // millisecond) after which the thread sleeps until the turn is given
  // back.
  static constexpr int kNapsBeforeSleep = 1000;

  // Call n is in slot n % kRing once `number` reads n + 1. A program with
  // more calls outstanding on one communicator waits at its start for the
  // oldest to be run.
  static constexpr std::uint64_t kRing = 256;
  struct Slot {
    std::atomic<std::uint64_t> number{0};
    QueuedCall* call = nullptr;
  };
  std::unique_ptr<Slot[]> ring_ = std::make_unique<Slot[]>(kRing);
  // The doorbell, alone on its line: what the queue's thread polls while
  // idle. The application writes it once per call; the words below it
  // writes several times per call, and the thread reads those only between
  // naps.
  alignas(128) std::atomic<std::uint64_t> started_{0};   // calls numbered
  alignas(128) std::atomic<std::uint64_t> finished_{0};  // calls run: the next to run's number
  // The turn and what a thread that could not take it waits for, in one
  // word: bit 0 is set while the turn is taken, and the word grows by one
  // when it is given back (clearing the bit) and by two when a call ends
  // under it. So its holder changes it with a plain store.
  static constexpr std::uint64_t kTaken = 1;
  std::atomic<std::uint64_t> turn_{0};
  std::atomic<bool> stopping_{false};
  // Threads waiting on turn_, and the queue's thread, idle, waiting on
  // started_. Both yield after a few polls: the thread that runs
  // the call they wait for often shares their CPU (mpirun --bind-to core
  // binds a process's threads to one core).
  Waiting app_waiting_{kSpinsShared};
  Waiting thread_waiting_{kSpinsShared};
  const bool starters_one_at_a_time_;
  void (*const on_thread_start_)();
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace hreduce::detail
