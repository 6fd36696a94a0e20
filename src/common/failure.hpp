// A failure is a value: a kind (hreduce::ErrorKind, which the public
// exception carries and the MPI drop-in maps to an MPI error class) and a
// text for people. Code that relays failures (between members, through a
// node's shared segment, in MPI messages) passes the value, and the member
// that finally throws picks the exception class from the kind alone.
#pragma once

#include <string>
#include <string_view>

#include "hreduce/error.hpp"

namespace hreduce::detail {

struct Failure {
  bool failed = false;
  ErrorKind kind = ErrorKind::argument;
  std::string text;

  static Failure none() { return {}; }
  static Failure of(ErrorKind kind, std::string text) { return {true, kind, std::move(text)}; }
  explicit operator bool() const { return failed; }

  // One string for a channel that carries bytes: "" for none, else the kind
  // then the text.
  std::string encoded() const {
    if (!failed) return {};
    std::string s(1, static_cast<char>(kind));
    return s.append(text);
  }
  static Failure decoded(std::string_view bytes) {
    if (bytes.empty()) return none();
    return of(static_cast<ErrorKind>(bytes.front()), std::string(bytes.substr(1)));
  }
};

inline Failure failure_of(const Error& e) { return Failure::of(e.kind(), e.what()); }

// Null, except in test builds that reword every failure message as it is
// thrown (tests/mpi_dropin's reworded library): what branches on a failure
// must read its kind, never its words.
inline std::string (*reword_failure_text)(const std::string& text) = nullptr;

// Throws the public exception of `kind`: its class follows from the kind.
[[noreturn]] inline void throw_error(ErrorKind kind, const std::string& original) {
  const std::string& text =
      reword_failure_text == nullptr ? original : reword_failure_text(original);
  switch (kind) {
    case ErrorKind::op: throw OpError(text);
    case ErrorKind::unusable: throw UnusableTeamError(text);
    case ErrorKind::transport: throw TransportError(text);
    case ErrorKind::argument:
    case ErrorKind::mismatch:
    case ErrorKind::count_mismatch:
    case ErrorKind::root_mismatch: break;
  }
  throw ArgumentError(text, kind);
}

[[noreturn]] inline void throw_failure(const Failure& f) { throw_error(f.kind, f.text); }

// The kind of a failure that leaves the team unusable: a transport failure
// stays one, whatever else broke it is unusable.
inline ErrorKind when_broken(ErrorKind kind) {
  return kind == ErrorKind::transport ? kind : ErrorKind::unusable;
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
