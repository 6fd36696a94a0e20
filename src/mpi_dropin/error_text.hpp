// The text MPI_Error_string shows for an error hreduce found. MPI keeps at
// most MPI_MAX_ERROR_STRING - 1 characters; a longer message used to be cut
// there, mid-word. It is shortened here on purpose instead: whole clauses
// (or at least whole words) and a mark that says so.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "src/common/failure.hpp"

namespace hreduce::detail::mpi_dropin {

// Ends a message that had to be shortened.
inline constexpr std::string_view kShortened = " [...]";

// What a program using MPI alone can do once a communicator's team broke:
// Team::resynchronize() is out of its reach.
inline constexpr std::string_view kDropinWayBack =
    "the way back: use another communicator, e.g. MPI_Comm_dup of a working one";

// `text` in at most `limit` characters: whole if it fits; else cut after
// the last clause ("; ") that fits, or failing one in its second half,
// after the last whole word, and marked with kShortened.
inline std::string fitted(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  const std::size_t room = limit > kShortened.size() ? limit - kShortened.size() : 0;
  std::size_t cut = text.rfind("; ", room);
  if (cut == std::string::npos || cut < room / 2) {
    cut = text.rfind(' ', room);
    if (cut == std::string::npos) cut = room;
    while (cut > 0 && std::string_view(",;:(").find(text[cut - 1]) != std::string_view::npos) {
      --cut;
    }
  }
  text.resize(cut);
  return text.append(kShortened);
}

// The message as a program using MPI sees it: prefixed, within `limit`
// characters, and where it names Team::resynchronize() (out of a C or
// Fortran program's reach), ending with the drop-in's way back, kept whole.
inline std::string dropin_message(std::string_view text, std::size_t limit) {
  std::string message = "hreduce: ";
  message.append(text);
  const std::string way_back = " (" + std::string(kWayBack) + ")";
  bool broken = false;
  for (std::size_t at = message.find(way_back); at != std::string::npos;
       at = message.find(way_back, at)) {
    message.erase(at, way_back.size());
    broken = true;
  }
  if (!broken) return fitted(std::move(message), limit);
  const std::string ending = " (" + std::string(kDropinWayBack) + ")";
  return fitted(std::move(message), limit - ending.size()) + ending;
}

}  // namespace hreduce::detail::mpi_dropin
