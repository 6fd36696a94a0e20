// Reading a duration from the environment, for the variables that override
// a team's options: HREDUCE_TIMEOUT_MS and HREDUCE_SPIN_US (read by the
// engine, src/engine/team_state.cpp) and HREDUCE_TIMEOUT_MS again where teams
// over MPI pick their default timeout (src/hybrid/mpi_team.cpp).
#pragma once

#include <cstdlib>
#include <string>

#include "hreduce/error.hpp"

namespace hreduce::detail {

// `variable` as a count of `unit`s >= 0, or `fallback` when unset; a
// malformed value is an Error naming `who`, the variable and the value.
template <class Duration>
Duration duration_from_environment(const char* who, const char* variable, const char* unit,
                                   Duration fallback) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0) {
    throw Error(std::string(who) + ": " + variable + " must be a number of " + unit +
                " >= 0, got '" + text + "'");
  }
  return Duration(value);
}

}  // namespace hreduce::detail
