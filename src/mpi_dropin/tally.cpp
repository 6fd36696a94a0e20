#include "src/mpi_dropin/tally.hpp"

#include <mpi.h>

#include <cstdio>
#include <mutex>
#include <set>

#include "src/mpi_dropin/serve.hpp"
#include "src/mpi_dropin/teams.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

constexpr const char* kNames[kMpiFunctions] = {
    "MPI_Allreduce",
    "MPI_Reduce",
    "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block",
    "MPI_Scan",
    "MPI_Exscan",
    "MPI_Iallreduce",
    "MPI_Ireduce",
    "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block",
    "MPI_Iscan",
    "MPI_Iexscan",
#if MPI_VERSION >= 4
    "MPI_Allreduce_init",
    "MPI_Reduce_init",
    "MPI_Reduce_scatter_init",
    "MPI_Reduce_scatter_block_init",
    "MPI_Scan_init",
    "MPI_Exscan_init",
#else
    // Open MPI 4.1's persistent collectives extension (mpi-ext.h).
    "MPIX_Allreduce_init",
    "MPIX_Reduce_init",
    "MPIX_Reduce_scatter_init",
    "MPIX_Reduce_scatter_block_init",
    "MPIX_Scan_init",
    "MPIX_Exscan_init",
#endif
};

std::size_t index_of(MpiFunction function) { return static_cast<std::size_t>(function); }

struct Tallies {
  std::mutex mutex;
  std::set<ServedTally*> live;
  std::array<unsigned long, kMpiFunctions> ended{};  // of threads that have ended
  // Handed on are rare (warm-up, unserved types and ops, nonblocking
  // calls): a shared counter costs them nothing that matters.
  std::array<std::atomic<unsigned long>, kMpiFunctions> handed_on{};
};
Tallies& tallies() {
  static Tallies* t = new Tallies;  // outlives every thread's exit
  return *t;
}

// Takes a thread's tally out of the live ones when the thread ends.
struct TallyOwner {
  ServedTally* tally = nullptr;
  ~TallyOwner() {
    if (tally == nullptr) return;
    std::lock_guard lock(tallies().mutex);
    for (std::size_t f = 0; f < kMpiFunctions; ++f) {
      tallies().ended[f] += tally->served[f].load(std::memory_order_relaxed);
    }
    tallies().live.erase(tally);
  }
};

int world_rank() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Prints `line` after "hreduce: process R: ", the first time only.
void say_once(const std::string& line) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (said.insert(line).second)
    std::fprintf(stderr, "hreduce: process %d: %s\n", world_rank(), line.c_str());
}

void count_handed_on(MpiFunction function) {
  tallies().handed_on[index_of(function)].fetch_add(1, std::memory_order_relaxed);
  // A program whose calls all go to PMPI builds no team, yet gets its
  // summary at MPI_Finalize.
  prepare_summary();
}

}  // namespace

const char* mpi_name(MpiFunction function) { return kNames[index_of(function)]; }

void count_in(ServedTally& tally) {
  thread_local TallyOwner owner;
  if (tally.counted) return;
  std::lock_guard lock(tallies().mutex);
  tallies().live.insert(&tally);
  owner.tally = &tally;
  tally.counted = true;
}

unsigned long served_calls(MpiFunction function) {
  const std::size_t f = index_of(function);
  std::lock_guard lock(tallies().mutex);
  unsigned long total = tallies().ended[f];
  for (const ServedTally* t : tallies().live) total += t->served[f].load(std::memory_order_relaxed);
  return total;
}

void handed_on(MpiFunction function, const char* name, const std::string& why) {
  count_handed_on(function);
  if (settings().verbose) say_once(std::string(name) + " handed to PMPI: " + why);
}

void handed_on_during_warmup(MpiFunction function) {
  count_handed_on(function);
  if (settings().verbose) {
    say_once("calls handed to PMPI: warm-up (each communicator's first " +
             std::to_string(settings().warmup) +
             " calls, before its team is built; HREDUCE_MPI_WARMUP_CALLS)");
  }
}

void served_from_start(MpiFunction function, const char* name) {
  count_served(function);
  if (settings().verbose) {
    say_once(std::string(name) +
             " served from its first MPI_Start after its communicator's team was built");
  }
}

void print_summary() {
  unsigned long served[kMpiFunctions], handed[kMpiFunctions];
  unsigned long all_served = 0, all_handed = 0;
  for (std::size_t f = 0; f < kMpiFunctions; ++f) {
    served[f] = served_calls(static_cast<MpiFunction>(f));
    handed[f] = tallies().handed_on[f].load(std::memory_order_relaxed);
    all_served += served[f];
    all_handed += handed[f];
  }
  const int rank = world_rank();
  std::fprintf(stderr, "hreduce: process %d: %lu calls served, %lu handed on to PMPI\n", rank,
               all_served, all_handed);
  for (std::size_t f = 0; f < kMpiFunctions; ++f) {
    if (served[f] + handed[f] == 0) continue;
    std::fprintf(stderr, "hreduce: process %d: %s %lu served, %lu handed on\n", rank, kNames[f],
                 served[f], handed[f]);
  }
}

}  // namespace hreduce::detail::mpi_dropin
