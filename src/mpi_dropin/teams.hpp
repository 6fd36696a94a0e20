// One hreduce team per communicator, made when the communicator has seen a
// few intercepted calls (before that, and for a communicator used once, the
// calls go to PMPI: building a team costs far more than one small call).
// Every process counts the same calls on a communicator, so every process
// builds the team at the same call: the building is collective, as it must
// be. Teams are kept as an attribute of their communicator, freed by the
// attribute's delete callback at MPI_Comm_free, and the ones left at
// MPI_Finalize (MPI_COMM_WORLD's among them) by an attribute on
// MPI_COMM_SELF, whose delete callback MPI runs first in MPI_Finalize while
// MPI still works.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <string>

#include "hreduce/team.hpp"
#include "src/hybrid/lone_member.hpp"

namespace hreduce::detail::mpi_dropin {

// Settings read once from the environment.
struct Settings {
  bool enabled = true;   // HREDUCE_MPI=off turns interception off
  bool verbose = false;  // HREDUCE_MPI_VERBOSE=1
  // HREDUCE_MPI_WARMUP_CALLS: calls on a communicator that go to PMPI before
  // its team is built (a team costs 0.4 ms, the first of a process 8 ms:
  // bench/mpi/dropin_latency).
  unsigned long warmup = 8;
};
const Settings& settings();

// Calls handed on by this process.
struct Counters {
  std::atomic<unsigned long> handed_on{0};
};
Counters& counters();

// Calls served by one thread. Only that thread writes it, with a plain load
// and store: a locked add on every call is a full barrier on x86, which
// waited for the call's stores to reach the other core.
struct ServedTally {
  std::atomic<unsigned long> served{0};
  bool counted = false;  // in served_calls() (count_in)
  void add() {
    served.store(served.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};
// Makes served_calls() include `tally`, a thread_local of the calling
// thread, until that thread ends, and what it counted after. Once per thread.
void count_in(ServedTally& tally);
// Calls served by every thread of this process so far.
unsigned long served_calls();

// Count a call that went to PMPI. With HREDUCE_MPI_VERBOSE, say once per
// call and reason that `call` went to PMPI, and once per process that
// calls went there during a communicator's warm-up.
void handed_on(const char* call, const std::string& why);
void handed_on_during_warmup();
// With HREDUCE_MPI_VERBOSE, makes MPI_Finalize print this process's summary
// even where no call was intercepted.
void prepare_summary();

// The team of `comm`, or null when this call goes to PMPI (too early, an
// intercommunicator, or building the team failed: `why` says which, empty
// while warming up). Collective at the call that builds the team. `lone`:
// the team's lean path for small calls (lone_member.hpp), or null.
Team* team_for(MPI_Comm comm, std::string& why, LoneMemberPath*& lone);

// Changes whenever a communicator's team goes (MPI_Comm_free, finalize): a
// thread that kept a team from before must look it up again, for MPI may
// reuse a freed communicator's handle.
unsigned teams_generation();

}  // namespace hreduce::detail::mpi_dropin
