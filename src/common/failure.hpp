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

}  // namespace hreduce::detail
