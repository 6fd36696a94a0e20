// Handles of nonblocking and persistent collectives (docs/nonblocking.md).
//
//   hreduce::Request r = m.iallreduce(in, out, n, hreduce::op::sum);
//   ... compute ...                   // the call progresses when any member
//   r.wait();                         // of the team tests or waits
//
//   hreduce::PersistentRequest p = m.allreduce_init(in, out, n, hreduce::op::sum);
//   for (...) { p.start(); ... p.wait(); }
//
// A call's buffers belong to the call from its start until its request
// completes: do not touch the input or the output in between. Errors of
// the call (bad or mismatched arguments, a user op that threw, a timeout)
// are thrown by the test() or wait() that observes its end, on every
// member, with the same classes as the blocking calls (docs/errors.md).
#pragma once

#include <memory>
#include <string>

#include "hreduce/error.hpp"

namespace hreduce {

class Request;
class PersistentRequest;

namespace detail {

// The compiled side of a request (src/engine/nonblocking/request.cpp).
struct RequestState;
// Destroying a pending request waits for its call to end (its buffers are
// in use until then), and drops the call's error: the members that wait
// report it.
struct RequestStateDeleter {
  void operator()(RequestState* state) const noexcept;
};
using RequestHandle = std::unique_ptr<RequestState, RequestStateDeleter>;

// A copy of a stateful user op that a request keeps for as long as its
// call may run: the caller's op may be a temporary.
struct KeptOp {
  virtual ~KeptOp() = default;
};
template <class Op>
struct KeptOpOf final : KeptOp {
  explicit KeptOpOf(const Op& kept) : op(kept) {}
  Op op;
};

bool test_request(RequestState& state);
void wait_request(RequestState& state);
void start_request(RequestState& state);
bool request_pending(const RequestState& state);

// The state behind a handle; ArgumentError naming `operation` when the
// request is empty (default-built or moved from).
inline RequestState& checked_request(const RequestHandle& handle, const char* operation) {
  if (handle == nullptr) {
    throw ArgumentError(std::string(operation) + ": the request is empty (moved from or default)");
  }
  return *handle;
}

// Builds the handles (the member's forms in hreduce/nonblocking.hpp).
struct RequestAccess {
  static Request request(RequestHandle handle);
  static PersistentRequest persistent(RequestHandle handle);
};

}  // namespace detail

// One nonblocking call. Movable, not copyable. test() and wait() throw
// Error when the request is empty (default-built or moved from).
class Request {
 public:
  Request() = default;
  Request(Request&&) noexcept = default;
  // Assigning over a pending request first waits for its call to end.
  Request& operator=(Request&&) noexcept = default;
  // Waits for a pending call to end (see RequestStateDeleter).
  ~Request() = default;

  // True once the call is complete: this member's output is written and
  // its input no longer read. Does a share of the call's work if the call
  // can progress; returns false at once otherwise. Throws the call's error.
  bool test() { return detail::test_request(checked("Request::test")); }
  // Works on the call and waits until it is complete; throws its error.
  void wait() { detail::wait_request(checked("Request::wait")); }
  // Started and not yet seen complete by test() or wait().
  bool pending() const { return state_ != nullptr && detail::request_pending(*state_); }

 private:
  friend struct detail::RequestAccess;
  explicit Request(detail::RequestHandle state) : state_(std::move(state)) {}
  detail::RequestState& checked(const char* operation) const {
    return detail::checked_request(state_, operation);
  }

  detail::RequestHandle state_;
};

// A call prepared once (m.allreduce_init(...)) and started as often as
// wanted, with the same buffers, counts, op and options each time; the
// buffers' contents may change between starts. Members start their
// persistent calls in the same order, as for any other call.
class PersistentRequest {
 public:
  PersistentRequest() = default;
  PersistentRequest(PersistentRequest&&) noexcept = default;
  PersistentRequest& operator=(PersistentRequest&&) noexcept = default;
  ~PersistentRequest() = default;

  // Starts the call once more. ArgumentError if it is still active (start
  // it again after test() said true or wait() returned).
  void start() { detail::start_request(checked("PersistentRequest::start")); }
  bool test() { return detail::test_request(checked("PersistentRequest::test")); }
  void wait() { detail::wait_request(checked("PersistentRequest::wait")); }
  // Started and not yet seen complete.
  bool active() const { return state_ != nullptr && detail::request_pending(*state_); }

 private:
  friend struct detail::RequestAccess;
  explicit PersistentRequest(detail::RequestHandle state) : state_(std::move(state)) {}
  detail::RequestState& checked(const char* operation) const {
    return detail::checked_request(state_, operation);
  }

  detail::RequestHandle state_;
};

namespace detail {
inline Request RequestAccess::request(RequestHandle handle) { return Request(std::move(handle)); }
inline PersistentRequest RequestAccess::persistent(RequestHandle handle) {
  return PersistentRequest(std::move(handle));
}
}  // namespace detail

}  // namespace hreduce
