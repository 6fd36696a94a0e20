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
#include <cstdint>
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

// With HREDUCE_MPI_VERBOSE, makes MPI_Finalize print this process's summary
// even where no call was intercepted.
void prepare_summary();

}  // namespace hreduce::detail::mpi_dropin
namespace hreduce::detail {
class CallQueue;
}  // namespace hreduce::detail
namespace hreduce::detail::mpi_dropin {

// The team of `comm`, or null when this call goes to PMPI (too early, an
// intercommunicator, or building the team failed: `why` says which, empty
// while warming up). Collective at the call that builds the team. `lone`:
// the team's lean path for small calls (lone_member.hpp), or null.
// `queue`: where the communicator's nonblocking calls wait (null until the
// first); a blocking call lets them finish first.
Team* team_for(MPI_Comm comm, std::string& why, LoneMemberPath*& lone,
               std::atomic<CallQueue*>*& queue);

// For a nonblocking or persistent call: the queue of `comm`'s served
// nonblocking calls (made at the first), with its team, or null when the
// call goes to PMPI (`why` says why; empty: the team is not built yet).
// Never builds a team: building is collective and blocking, which a
// nonblocking call may not be, so these calls are served from the first
// blocking call that built it. Where the communicator spans nodes, the
// queue's thread sends MPI messages, which needs MPI_THREAD_MULTIPLE on
// every process.
CallQueue* queue_for(MPI_Comm comm, std::string& why, Team*& team, LoneMemberPath*& lone);

// At MPI_Barrier on `comm` (collective, and blocking): builds its team
// where nonblocking or persistent reductions were handed on for want of
// one and the communicator is past its warm-up (its blocking and those
// calls together), so that a program whose reductions are all nonblocking
// is served from its first barrier on. Every process counts the same
// calls, so all build at the same barrier, or none does.
void build_at_barrier(MPI_Comm comm);

// A number for `comm`, never reused (MPI reuses a freed communicator's
// handle), and whether the communicator it numbers still exists: a served
// persistent request may outlive its communicator (MPI keeps the
// communicator for the request; its team goes at MPI_Comm_free).
std::uint64_t comm_serial(MPI_Comm comm);
bool comm_lives(std::uint64_t serial);

// Changes whenever a communicator's team goes (MPI_Comm_free, finalize): a
// thread that kept a team from before must look it up again, for MPI may
// reuse a freed communicator's handle.
unsigned teams_generation();

}  // namespace hreduce::detail::mpi_dropin
