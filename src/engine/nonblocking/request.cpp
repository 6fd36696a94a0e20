// Requests: what a member keeps of its nonblocking or persistent call, and
// start / test / wait over the team's PendingCalls; on a team spanning
// processes, and with the progress threads (progress_thread.hpp), over the
// member's CallQueue instead (call_queue.hpp), where each call runs as the
// blocking call would.
//
// A request owns copies of everything the caller may let go of while the
// call runs (the op, the options, reduce_scatter's counts), so the member's
// published Call points into it; it lives on the heap, so moving the handle
// moves none of that. A persistent request checks its arguments and
// computes its signature once, and each start() only publishes them.
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hreduce/team.hpp"
#include "src/engine/call_checks.hpp"
#include "src/engine/call_failures.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/nonblocking/pending_calls.hpp"
#include "src/engine/nonblocking/progress_thread.hpp"
#include "src/engine/process_group.hpp"

namespace hreduce::detail {

// A call run as a blocking call by the member's queue. What it throws is
// kept for the test() or wait() that sees the end: an hreduce::Error as its
// kind and text (rethrown naming the nonblocking call), anything else as
// it is.
class QueuedTeamCall final : public QueuedCall {
 public:
  QueuedTeamCall(MemberState& member, const Call& call) : member_(member), call_(call) {}
  void run() override {
    failure_ = {};
    other_ = nullptr;
    try {
      if (member_.team.group != nullptr) {
        member_.team.group->execute(member_, call_);
      } else {
        execute_local(member_, call_);
      }
    } catch (const Error& e) {
      failure_ = failure_of(e);
    } catch (...) {
      other_ = std::current_exception();
    }
  }
  // A spare request state's call runs for its next member if it is this one.
  bool runs_for(const MemberState& member) const { return &member_ == &member; }
  // Whether the last run threw.
  bool failed() const { return other_ != nullptr || static_cast<bool>(failure_); }
  // Throws what the last run threw; `label` names the call.
  void rethrow(const std::string& label) {
    if (other_) std::rethrow_exception(std::exchange(other_, nullptr));
    if (failure_) throw_error(failure_.kind, label + " (nonblocking): " + failure_.text);
  }

 private:
  MemberState& member_;
  const Call& call_;
  Failure failure_;
  std::exception_ptr other_;
};

// Aligned so that two members' states never share a line: each member
// writes its own (`pending`) on every call.
struct alignas(kControlAlign) RequestState {
  MemberState* member = nullptr;
  std::unique_ptr<QueuedTeamCall> queued;  // run on the member's CallQueue
  PendingCalls* calls = nullptr;
  Call call;
  CollectiveOptions options;
  std::vector<std::size_t> counts;
  std::unique_ptr<KeptOp> kept_op;
  std::uint64_t signature = 0;
  std::string problem;  // this member's argument error, empty when fine
  std::uint64_t seq = 0;
  bool pending = false;
  bool persistent = false;
};

namespace {

std::string label_of(const RequestState& state) {
  return nonblocking_label(state.call.kind, state.persistent);
}

// Why the nonblocking calls refuse the call outright, whatever the members
// say; empty when they serve it.
std::string_view refusal(const TeamState& team, const CollectiveOptions& options) {
  if (options.reproducibility == Reproducibility::exact) {
    return "reproducibility exact is not served by the nonblocking and persistent calls yet";
  }
  return team.nonblocking_refusal;
}

// The label only where the call threw: built on every call, its string
// was a stack frame and its guard for every queued call.
[[gnu::noinline]] void rethrow_queued(RequestState& state) {
  state.queued->rethrow(label_of(state));
}

void finish_queued(RequestState& state) {
  state.pending = false;
  if (state.queued->failed()) rethrow_queued(state);
}

// Teams spanning processes run their calls on queues always; teams of
// threads only with the progress threads.
bool runs_on_queues(const TeamState& team) {
  return team.group != nullptr || progress_threads_wanted();
}

// Whether `args` is the call `state` last carried for `member`, on the
// team's defaults: a loop of nonblocking calls takes the same state back
// from the spares every time, and its checks and signature still hold.
// (reduce_scatter's counts may change behind the same pointer.)
bool carries_same_call(const RequestState& state, const MemberState& member, const CallArgs& args) {
  const CallArgs& last = state.call;
  return state.member == &member && state.calls != nullptr && !state.queued &&
         last.options == &member.team.options.collectives && args.kind == last.kind &&
         args.kind != CollectiveKind::reduce_scatter && args.in == last.in &&
         args.out == last.out && args.count == last.count && args.in_size == last.in_size &&
         args.out_size == last.out_size && args.root == last.root && args.step == last.step &&
         args.counts == last.counts && args.op == last.op;
}

// Apart from finish(), which every call ends with: its strings would give
// finish() a stack frame and its guard on every call.
[[gnu::noinline]] void throw_failure(const RequestState& state) {
  Failure failure = state.calls->take_failure(state.seq);
  if (!failure) return;
  throw_error(failure.kind, label_of(state) + " (nonblocking call " + std::to_string(state.seq) +
                                "): " + failure.text);
}

void finish(RequestState& state) {
  state.pending = false;
  if (state.calls->failures_pending()) throw_failure(state);
}

[[noreturn, gnu::noinline]] void refuse_start_while_active(const RequestState& state) {
  throw ArgumentError(label_of(state) + ": member " + std::to_string(state.member->global_rank) +
                      ": start() while the call is still active (wait for it first)");
}

void check_usable(RequestState& state) {
  if (state.member->team.broken.load(std::memory_order_acquire)) {
    fail_broken(*state.member, state.call.kind);
  }
}

}  // namespace

// The states of this thread's finished requests, for its next calls: a heap
// allocation and its release were a fifth of an 8-byte call's time. Kept
// per thread, not per member, because a handle may outlive its team. The
// latest one given back sits apart, where a loop of nonblocking calls finds
// it on every call (issue_call's short path) without touching the vector.
class SpareStates {
 public:
  ~SpareStates() {
    delete std::exchange(latest_, nullptr);
    for (RequestState* state : older_) delete state;
    older_.clear();
    closed = true;
  }
  // The state a call just ended with, if any: a repeated call's candidate.
  RequestState* latest() const { return latest_; }
  RequestState* take() {
    if (latest_ != nullptr) return std::exchange(latest_, nullptr);
    if (older_.empty()) return new RequestState;
    RequestState* state = older_.back();
    older_.pop_back();
    return state;
  }
  void give_back(RequestState* state) {
    // A request destroyed after this thread's spares (a thread-local
    // request made earlier, destroyed later at the thread's exit).
    if (closed) {
      delete state;
      return;
    }
    state->kept_op.reset();  // the user's op is not kept past its request
    if (latest_ != nullptr) {
      if (older_.size() < kKept) {
        older_.push_back(latest_);
      } else {
        delete latest_;
      }
    }
    latest_ = state;
  }

 private:
  static constexpr std::size_t kKept = 16;
  // Outside the object, which is gone by then: a store to a member in its
  // own destructor may be dropped as dead.
  static thread_local bool closed;
  RequestState* latest_ = nullptr;
  std::vector<RequestState*> older_;
};
thread_local bool SpareStates::closed = false;

// Of external linkage, and so its type outside the file's anonymous
// namespace: a thread-local local to one file made GNU ld 2.40 write a
// wrong offset for the drop-in's initial-exec thread-local into
// libhreduce_mpi.so (mpi_channel.cpp's mpi_messages_refused; the drop-in
// tests crash in a combiner when it recurs).
thread_local SpareStates spare_request_states;

namespace {

// A call this thread has not just made: checked, signed and copied.
[[gnu::noinline]] RequestHandle issue_new_call(MemberState& member, const CallArgs& args,
                                               bool team_defaults, std::unique_ptr<KeptOp> kept_op,
                                               bool persistent) {
  TeamState& team = member.team;
  const CollectiveOptions& options = team_defaults ? team.options.collectives : *args.options;
  if (const std::string_view why = refusal(team, options); !why.empty()) {
    throw ArgumentError(nonblocking_label(args.kind, persistent) + ": member " +
                        std::to_string(member.global_rank) + ": " + std::string(why));
  }
  RequestHandle state(spare_request_states.take());
  state->member = &member;
  state->persistent = persistent;
  state->kept_op = std::move(kept_op);
  const bool on_queues = runs_on_queues(team);
  if (on_queues) {
    if (member.queued_calls == nullptr) {
      // A member is driven by one thread at a time (docs/spec.md).
      member.queued_calls =
          std::make_unique<CallQueue>(team.queue_thread_start, CallQueue::Starters::one_at_a_time);
    }
  } else {
    state->queued.reset();  // a spare state may come from a team over processes
    state->calls = &pending_calls_of(team);
  }
  // Copied only after the work above: the caller has just written `args`,
  // and a copy at once waited for those stores (call.hpp says why).
  state->call = args;
  if (!team_defaults) state->options = options;
  state->call.options = team_defaults ? &team.options.collectives : &state->options;
  if (args.kind == CollectiveKind::reduce_scatter && args.counts != nullptr) {
    state->counts.assign(args.counts, args.counts + args.count);
    state->call.counts = state->counts.data();
  }
  if (on_queues) {
    // The blocking call checks the arguments, on every member.
    if (!state->queued || !state->queued->runs_for(member)) {
      state->queued = std::make_unique<QueuedTeamCall>(member, state->call);
    }
  } else {
    const int size = team.size();
    state->problem = local_problem(state->call, member.rank, size, team.options.collectives);
    state->signature = state->calls->signature(member.rank, state->call);
  }
  if (!persistent) start_request(*state);
  return state;
}

}  // namespace

RequestHandle issue_call(MemberState& member, const CallArgs& args, bool team_defaults,
                         std::unique_ptr<KeptOp> kept_op, bool persistent) {
  // The same call again (a loop on the same buffers): the state it ended
  // with still holds its checks, signature and copy (they were a fifth of
  // an 8-byte iallreduce + wait). Its last ran on the team's pending calls,
  // so the team still runs none on queues; and what the general path
  // refuses depends only on the team and its defaults, which it passed.
  if (const RequestState* last = spare_request_states.latest();
      !persistent && team_defaults && last != nullptr && carries_same_call(*last, member, args)) {
    RequestHandle state(spare_request_states.take());
    state->persistent = false;
    state->kept_op = std::move(kept_op);
    start_request(*state);
    return state;
  }
  return issue_new_call(member, args, team_defaults, std::move(kept_op), persistent);
}

void start_request(RequestState& state) {
  if (state.pending) refuse_start_while_active(state);
  check_usable(state);
  if (state.queued) {
    state.member->queued_calls->start(*state.queued);
    state.pending = true;
    return;
  }
  state.seq = state.calls->publish(state.member->rank, state.call, state.signature, state.problem);
  state.pending = true;
}

bool test_request(RequestState& state) {
  if (!state.pending) return true;
  if (state.queued) {
    if (!state.queued->done()) return false;
    finish_queued(state);
    return true;
  }
  if (!state.calls->test(state.seq, state.member->rank)) return false;
  finish(state);
  return true;
}

void wait_request(RequestState& state) {
  if (!state.pending) return;
  if (state.queued) {
    state.member->queued_calls->wait(*state.queued, true);
    finish_queued(state);
    return;
  }
  try {
    state.calls->drive(state.seq, state.member->rank, state.call.kind, state.persistent);
  } catch (...) {  // timed out: the team broke, and the call is given up
    state.pending = false;
    throw;
  }
  finish(state);
}

bool request_pending(const RequestState& state) { return state.pending; }

void RequestStateDeleter::operator()(RequestState* state) const noexcept {
  if (state->pending) {
    try {
      wait_request(*state);
    } catch (...) {  // reported by the members that wait (request.hpp)
    }
  }
  spare_request_states.give_back(state);
}

}  // namespace hreduce::detail
