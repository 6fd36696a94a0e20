// What the drop-in counts, per MPI function: calls served by hreduce and
// calls handed on to PMPI_*, and, with HREDUCE_MPI_VERBOSE=1, why each was
// handed on (said once per reason) and a summary at MPI_Finalize. A C and a
// Fortran entry point of one MPI function count under its C name.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "hreduce/team.hpp"  // CollectiveKind

namespace hreduce::detail::mpi_dropin {

// The MPI functions the library defines, in the order the summary lists them.
enum class MpiFunction : std::uint8_t {
  allreduce,
  reduce,
  reduce_scatter,
  reduce_scatter_block,
  scan,
  exscan,
  iallreduce,
  ireduce,
  ireduce_scatter,
  ireduce_scatter_block,
  iscan,
  iexscan,
  allreduce_init,
  reduce_init,
  reduce_scatter_init,
  reduce_scatter_block_init,
  scan_init,
  exscan_init,
};
inline constexpr std::size_t kMpiFunctions = 18;

// The three forms of each reduction, in MpiFunction's order.
enum class Form : std::uint8_t { blocking, nonblocking, persistent };

// "MPI_Allreduce" and the like, as the C binding spells it.
const char* mpi_name(MpiFunction function);
// The function of `form` that makes a `kind` call. Inline: every served
// call asks, and a call into the library's other file went through the PLT.
constexpr MpiFunction mpi_function(CollectiveKind kind, Form form = Form::blocking) {
  std::size_t row = 0;  // allreduce
  switch (kind) {
    case CollectiveKind::reduce: row = 1; break;
    case CollectiveKind::reduce_scatter: row = 2; break;
    case CollectiveKind::reduce_scatter_block: row = 3; break;
    case CollectiveKind::scan: row = 4; break;
    case CollectiveKind::exscan: row = 5; break;
    default: break;
  }
  return static_cast<MpiFunction>(row + 6 * static_cast<std::size_t>(form));
}

// Calls served by one thread. Only that thread writes it, with a plain load
// and store: a locked add on every call is a full barrier on x86, which
// waited for the call's stores to reach the other core.
struct ServedTally {
  std::array<std::atomic<unsigned long>, kMpiFunctions> served{};
  bool counted = false;  // in served_calls() (count_in)
  void add(MpiFunction function) {
    std::atomic<unsigned long>& n = served[static_cast<std::size_t>(function)];
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};
// Makes served_calls() include `tally`, a thread_local of the calling
// thread, until that thread ends, and what it counted after. Once per thread.
void count_in(ServedTally& tally);
// Calls of `function` served by every thread of this process so far.
unsigned long served_calls(MpiFunction function);

// Count a call of `function` that went to PMPI. With HREDUCE_MPI_VERBOSE,
// say once per entry point `name` and reason that it went to PMPI, and once
// per process that calls went there during a communicator's warm-up.
void handed_on(MpiFunction function, const char* name, const std::string& why);
void handed_on_during_warmup(MpiFunction function);
// Count a persistent request of `function` handed on at its init and
// served from a later MPI_Start (awaiting_team.hpp); with
// HREDUCE_MPI_VERBOSE, say so once per entry point `name`.
void served_from_start(MpiFunction function, const char* name);

// HREDUCE_MPI_VERBOSE's summary of this process, on stderr:
//   hreduce: process R: N calls served, M handed on to PMPI
// and, for each MPI function called, in MpiFunction's order,
//   hreduce: process R: MPI_Allreduce N served, M handed on
void print_summary();

}  // namespace hreduce::detail::mpi_dropin
