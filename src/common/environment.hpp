// Every environment variable hreduce reads, in one table (names, defaults,
// meanings: `hreduce --help` prints it), and the one way to read them.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "hreduce/error.hpp"

namespace hreduce::detail {

struct EnvironmentVariable {
  const char* name;
  const char* fallback;  // what applies when it is unset
  const char* meaning;
};

inline constexpr EnvironmentVariable kEnvironment[] = {
    {"HREDUCE_TIMEOUT_MS", "0 (wait forever); 60000 for teams over MPI",
     "milliseconds a member waits for another before the team fails with Error; overrides "
     "TeamOptions::timeout"},
    {"HREDUCE_SPIN_US", "10000 in a team of one process alone on its CPUs, else 0",
     "microseconds a waiting member keeps polling before it yields and then sleeps"},
    {"HREDUCE_PROCS_PER_NODE", "0 (the nodes MPI reports)",
     "make_mpi_team: virtual nodes of this many consecutive ranks (to test multi-node logic on "
     "one machine); overrides MpiTeamOptions::procs_per_node"},
    {"HREDUCE_NODE_SINGLE_COPY", "on",
     "teams over MPI: whether long reductions of two processes of a node read the other's "
     "memory in one copy (process_vm_readv) instead of the shared segment's chunks; on: "
     "wherever the kernel allows, but the chunks where they cost less lately; off: never; "
     "auto: per kind of call, where it won a race "
     "against the chunks when the team was built (docs/mpi.md)"},
    {"HREDUCE_NODE_ASYMMETRIC_FENCE", "on",
     "off keeps a fence in every publication of a progress word (the node level's, the "
     "members' of a team, and the nonblocking calls' queues) instead of having waiters about "
     "to sleep order it for all "
     "(membarrier, for which a process registers as the library loads unless this is off "
     "then)"},
    {"HREDUCE_PROGRESS_THREAD", "0 (off)",
     "1: each member's nonblocking calls run on a thread of its own, as blocking calls, while "
     "members compute (docs/nonblocking.md)"},
    {"HREDUCE_MPI", "on", "libhreduce_mpi.so: off hands every call to PMPI_*"},
    {"HREDUCE_MPI_VERBOSE", "off",
     "libhreduce_mpi.so: print each reason a call went to PMPI_*, once, and a line of calls "
     "served and handed on per process at MPI_Finalize"},
    {"HREDUCE_MPI_WARMUP_CALLS", "8",
     "libhreduce_mpi.so: calls on a communicator that go to PMPI_* before its team is built"},
};

// The value of a variable of the table, or null when unset or empty. A name
// outside the table is a bug here, not the user's: it throws.
inline const char* environment(const char* name) {
  for (const EnvironmentVariable& v : kEnvironment) {
    if (std::strcmp(v.name, name) == 0) {
      const char* text = std::getenv(name);
      return text != nullptr && *text != '\0' ? text : nullptr;
    }
  }
  throw ArgumentError(std::string("hreduce: ") + name +
                      " is not in the table of environment variables");
}

// `variable` as a whole number >= 0, or `fallback` when unset; a malformed
// value is an Error naming `who`, the variable, the unit and the value.
inline long long count_from_environment(const char* who, const char* variable, const char* unit,
                                        long long fallback) {
  const char* text = environment(variable);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0 || text[0] == '-') {
    throw ArgumentError(std::string(who) + ": " + variable + " must be a number of " + unit +
                        " >= 0, got '" + text + "'");
  }
  return value;
}

template <class Duration>
Duration duration_from_environment(const char* who, const char* variable, const char* unit,
                                   Duration fallback) {
  return Duration(count_from_environment(who, variable, unit, fallback.count()));
}

// An on/off variable: unset means `fallback`; 0, off, false and no mean off.
inline bool flag_from_environment(const char* variable, bool fallback) {
  const char* value = environment(variable);
  if (value == nullptr) return fallback;
  return !(std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0 ||
           std::strcmp(value, "false") == 0 || std::strcmp(value, "no") == 0);
}

}  // namespace hreduce::detail
