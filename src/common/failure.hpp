// A failure is a value: a kind (hreduce::ErrorKind, which the public
// exception carries and the MPI drop-in maps to an MPI error class) and a
// text for people. Code that relays failures (between members, through a
// node's shared segment, in MPI messages) passes the value, and the member
// that finally throws picks the exception class from the kind alone.
//
// Failures that still travel as plain text keep their kind as a two-byte
// mark inside it; throw_marked strips every mark, so what() never shows one.
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

inline constexpr char kKindMark = '\x1e';  // ASCII record separator: no message holds one

inline std::string marked(ErrorKind kind, std::string_view text) {
  std::string s{kKindMark, static_cast<char>(kind)};
  return s.append(text);
}

inline ErrorKind kind_of(const Error& e) { return e.kind(); }

inline Failure failure_of(const Error& e) { return Failure::of(e.kind(), e.what()); }

// e's text with its class, for relaying.
inline std::string marked(const Error& e) { return marked(kind_of(e), e.what()); }

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

// `f` as marked text, for the layer that still relays text
// (the node segment's broken-node text): the kind first.
inline std::string marked(const Failure& f) { return f ? marked(f.kind, f.text) : std::string(); }

// Marked text back as a value: the kind of its first mark (else
// `fallback`), the marks removed; "" is no failure.
inline Failure unmarked(std::string_view text, ErrorKind fallback) {
  if (text.empty()) return Failure::none();
  Failure f = Failure::of(fallback, {});
  bool found = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != kKindMark) {
      f.text += text[i];
    } else if (++i < text.size() && !found) {  // a text cut short may end in half a mark
      f.kind = static_cast<ErrorKind>(text[i]);
      found = true;
    }
  }
  return f;
}

// Throws `text` as the class of its first mark (else `fallback`), with the
// marks removed. `team_unusable`: the team broke, so whatever the cause,
// the class says so (a transport failure stays one).
[[noreturn]] inline void throw_marked(std::string_view text, ErrorKind fallback,
                                      bool team_unusable = false) {
  Failure f = unmarked(text, fallback);
  if (team_unusable && f.kind != ErrorKind::transport) f.kind = ErrorKind::unusable;
  throw_error(f.kind, f.text);
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
