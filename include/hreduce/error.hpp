// The exceptions of hreduce (docs/errors.md). Every failure is an Error;
// its class says what the program can do next.
#pragma once

#include <stdexcept>
#include <string>

namespace hreduce {

// What failed, finer than the class: a program (or the MPI drop-in, which
// maps it to an MPI error class) branches on this, never on what()'s words.
enum class ErrorKind : char {
  argument = 'A',        // a bad argument that the member itself passed
  mismatch = 'M',        // members disagree on the call: type, op, options, collective
  count_mismatch = 'C',  // members disagree on the count (or counts)
  root_mismatch = 'R',   // members disagree on the root
  op = 'O',              // a user op threw
  unusable = 'U',        // a timeout, a dead process, members out of step
  transport = 'T',       // MPI or the node's shared memory failed
};

// The root: catch it to catch everything hreduce throws. Messages name the
// operation, the member (where there is one) and the values compared.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::argument)
      : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// A bad argument, or members whose calls disagree (count, type, op, root,
// counts, options), found before any data moved; also a bad option when a
// team is built. The team stays usable: fix the call and go on. (Unless a
// member had already left the call, run_ahead: then UnusableTeamError.)
class ArgumentError : public Error {
 public:
  explicit ArgumentError(const std::string& what, ErrorKind kind = ErrorKind::argument)
      : Error(what, kind) {}
};

// A user op threw on some member; what() keeps the op's own message. Every
// member throws it in the same call, the outputs are unspecified, and the
// team stays usable.
class OpError : public Error {
 public:
  explicit OpError(const std::string& what) : Error(what, ErrorKind::op) {}
};

// The team can no longer be used: a member did not arrive within
// TeamOptions::timeout, a process of the node died, or members fell out of
// step (a failure in a call that some member had already left). Every
// later call on the team throws this too and Team::usable() says false,
// until Team::resynchronize() where every member is still alive; else
// build a new team.
class UnusableTeamError : public Error {
 public:
  explicit UnusableTeamError(const std::string& what, ErrorKind kind = ErrorKind::unusable)
      : Error(what, kind) {}
};

// The transport failed: an MPI call returned an error (what() carries MPI's
// error string), or the node's shared memory could not be set up. A team
// that was running is unusable after it.
class TransportError : public UnusableTeamError {
 public:
  explicit TransportError(const std::string& what)
      : UnusableTeamError(what, ErrorKind::transport) {}
};

}  // namespace hreduce
