// Failures that travel as text (between members, through a node's shared
// segment, in MPI messages) keep their class: the text carries a two-byte
// mark, and the member that finally throws picks the class from it and
// strips every mark, so what() never shows one.
#pragma once

#include <string>
#include <string_view>

#include "hreduce/error.hpp"

namespace hreduce::detail {

enum class ErrorKind : char { argument = 'A', op = 'O', unusable = 'U', transport = 'T' };

inline constexpr char kKindMark = '\x1e';  // ASCII record separator: no message holds one

inline std::string marked(ErrorKind kind, std::string_view text) {
  std::string s{kKindMark, static_cast<char>(kind)};
  return s.append(text);
}

inline ErrorKind kind_of(const Error& e) {
  if (dynamic_cast<const TransportError*>(&e)) return ErrorKind::transport;
  if (dynamic_cast<const UnusableTeamError*>(&e)) return ErrorKind::unusable;
  if (dynamic_cast<const OpError*>(&e)) return ErrorKind::op;
  return ErrorKind::argument;
}

// e's text with its class, for relaying.
inline std::string marked(const Error& e) { return marked(kind_of(e), e.what()); }

[[noreturn]] inline void throw_error(ErrorKind kind, const std::string& text) {
  switch (kind) {
    case ErrorKind::op: throw OpError(text);
    case ErrorKind::unusable: throw UnusableTeamError(text);
    case ErrorKind::transport: throw TransportError(text);
    case ErrorKind::argument: break;
  }
  throw ArgumentError(text);
}

// Throws `text` as the class of its first mark (else `fallback`), with the
// marks removed. `team_unusable`: the team broke, so whatever the cause,
// the class says so (a transport failure stays one).
[[noreturn]] inline void throw_marked(std::string_view text, ErrorKind fallback,
                                      bool team_unusable = false) {
  ErrorKind kind = fallback;
  bool found = false;
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != kKindMark) {
      plain += text[i];
    } else if (++i < text.size() && !found) {  // a text cut short may end in half a mark
      kind = static_cast<ErrorKind>(text[i]);
      found = true;
    }
  }
  if (team_unusable && kind != ErrorKind::transport) kind = ErrorKind::unusable;
  throw_error(kind, plain);
}

// How a broken team's messages end. Every later call repeats that the team
// is unusable; without the way back, users rebuilt teams that one call
// would have restored.
inline constexpr std::string_view kNoLongerUsable = "the team is no longer usable";
inline constexpr std::string_view kWayBack =
    "the way back, where every member is alive: once all have left their calls, each process "
    "calls Team::resynchronize() once, from one thread; a team whose processes exchange MPI "
    "messages cannot be resynchronised: build a new one";

// `text` with the way back after it, once.
inline std::string with_way_back(std::string text) {
  if (text.find(kWayBack) != std::string::npos) return text;
  return text.append(" (").append(kWayBack).append(")");
}

// The message of a call on a team that broke earlier: `label` names the
// call and member, `reason` is why the team broke (which may say already
// that the team is unusable: it is said once).
inline std::string broken_team_message(std::string_view label, std::string_view reason) {
  const std::string ending = "; " + std::string(kNoLongerUsable);
  if (reason.ends_with(ending)) reason.remove_suffix(ending.size());
  // A reason relayed from a call that found the team broken already
  // starts with the same words: keep only the first cause.
  const std::string nested = std::string(kNoLongerUsable) + ": ";
  if (const std::size_t at = reason.rfind(nested); at != std::string_view::npos) {
    reason.remove_prefix(at + nested.size());
  }
  std::string text(label);
  text.append(": ").append(kNoLongerUsable).append(": ").append(reason);
  return with_way_back(std::move(text));
}

}  // namespace hreduce::detail
