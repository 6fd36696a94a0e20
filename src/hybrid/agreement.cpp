// The status rounds of a call across processes: before data moves, do all
// processes make the same call and did any fail so far; after it, did a
// user op throw anywhere. Every process gets the same answer, so all fail
// or succeed together. With the node level, the node's processes agree
// through their segment (node_level.cpp) and only the nodes' first
// processes exchange a CallStatus here.
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "src/engine/collectives.hpp"
#include "src/hybrid/hybrid_call.hpp"

namespace hreduce::detail {

// What the leaders agree on: the lowest and highest call signature and who
// made them (to say how they differ), and the lowest process that failed
// with its failure.
struct CallStatus {
  std::uint64_t sig_min = 0, sig_max = 0;
  std::int32_t sig_min_process = 0, sig_max_process = 0;
  std::int32_t kind_min = 0, kind_max = 0;
  std::int32_t root_min = 0, root_max = 0;
  std::uint64_t count_min = 0, count_max = 0;
  std::int32_t failed_process = INT32_MAX;  // the lowest process that failed
  ErrorKind failed_kind = ErrorKind::argument;
  char text[240] = {};

  friend bool operator==(const CallStatus&, const CallStatus&) = default;
};

namespace {

CallStatus merge(const CallStatus& a, const CallStatus& b) {
  CallStatus s = a;
  if (b.sig_min < a.sig_min) {
    s.sig_min = b.sig_min, s.sig_min_process = b.sig_min_process, s.kind_min = b.kind_min,
    s.root_min = b.root_min, s.count_min = b.count_min;
  }
  if (b.sig_max > a.sig_max) {
    s.sig_max = b.sig_max, s.sig_max_process = b.sig_max_process, s.kind_max = b.kind_max,
    s.root_max = b.root_max, s.count_max = b.count_max;
  }
  if (b.failed_process < a.failed_process) {
    s.failed_process = b.failed_process;
    s.failed_kind = b.failed_kind;
    std::memcpy(s.text, b.text, sizeof s.text);
  }
  return s;
}

const auto& status_op() {
  static const auto op = make_op<CallStatus>(merge);
  static const ErasedOp erased = erase_op<CallStatus>(op);
  return erased;
}

// How the lowest and highest call differ, for the message, and the kind
// that says so to a program (or to the MPI drop-in's error class).
Failure disagreement(CollectiveKind kind, const CallStatus& s) {
  auto called = [](std::int32_t process, std::int32_t kind, std::uint64_t count,
                   std::int32_t root) {
    const auto collective = static_cast<CollectiveKind>(kind);
    return "process " + std::to_string(process) + " called " + to_string(collective) +
           " with count " + std::to_string(count) +
           (collective == CollectiveKind::reduce ? ", root " + std::to_string(root) : "");
  };
  const std::string low = called(s.sig_min_process, s.kind_min, s.count_min, s.root_min);
  const std::string high = called(s.sig_max_process, s.kind_max, s.count_max, s.root_max);
  const bool alike = low.substr(low.find(" called")) == high.substr(high.find(" called"));
  const bool both_reduce = s.kind_min == static_cast<std::int32_t>(CollectiveKind::reduce) &&
                           s.kind_max == static_cast<std::int32_t>(CollectiveKind::reduce);
  const ErrorKind differs = s.count_min != s.count_max                ? ErrorKind::count_mismatch
                            : both_reduce && s.root_min != s.root_max ? ErrorKind::root_mismatch
                                                                      : ErrorKind::mismatch;
  return Failure::of(
      differs,
      std::string(to_string(kind)) + ": processes disagree on the call: " + low + ", " + high +
          (alike ? " (they differ in the element type, op, counts or reproducibility)" : ""));
}

}  // namespace

// The leaders that check agreement between them: every process, or with
// the node level the first process of each node (the node level has
// checked its own processes).
Channel& HybridCall::status_channel() {
  return group_.node() != nullptr ? *group_.leaders_of_nodes() : group_.channel();
}

CallStatus HybridCall::exchange(const CallStatus& mine) {
  CallStatus s = mine;
  inter::recursive_doubling_allreduce(status_channel(), &s, 1, status_op(), group_.workspace);
  return s;
}

CallStatus HybridCall::own_status(std::uint64_t sig, std::size_t count,
                                  const Failure& failure) const {
  CallStatus s;
  s.sig_min = s.sig_max = sig;
  s.sig_min_process = s.sig_max_process = layout_.process;
  s.kind_min = s.kind_max = static_cast<std::int32_t>(call_.kind);
  s.root_min = s.root_max = call_.root;
  s.count_min = s.count_max = count;
  if (failure) {
    s.failed_process = layout_.process;
    s.failed_kind = failure.kind;
    std::strncpy(s.text, failure.text.c_str(), sizeof s.text - 1);
  }
  return s;
}

void HybridCall::fail_from(const CallStatus& s) {
  if (s.failed_process != INT32_MAX) {
    fail(Failure::of(s.failed_kind, std::string(to_string(call_.kind)) + ": process " +
                                        std::to_string(s.failed_process) + " failed: " + s.text));
  }
}

// Step 2 begins, leader only: do all processes make the same call, and
// did any fail so far? Every leader gets the same answer.
bool HybridCall::agree(std::size_t count) {
  agreed_ = true;
  const CallStatus s = exchange(own_status(signature(count), count, local_failure_));
  fail_from(s);
  if (!failure_ && s.sig_min != s.sig_max) fail(disagreement(call_.kind, s));
  return !failure_;
}

// Step 2 ends: a user op may have thrown meanwhile, here or elsewhere.
void HybridCall::confirm(std::size_t count) {
  if (!call_.op.may_throw) return;
  fail_from(exchange(own_status(signature(count), count, op_failure())));
}

// A round over messages that only carries failures (`here`: this
// process's); with the node level, node_status_round (node_level.cpp).
void HybridCall::status_round(const Failure& here) {
  over_messages([&] { fail_from(exchange(own_status(0, 0, here))); });
}

// Leaders: do all processes make the same call, and did any fail so far?
// The same answer on every process, with or without the node level.
bool HybridCall::agree_everywhere(std::size_t count) {
  if (group_.node() == nullptr) {
    over_messages([&] { agree(count); });
  } else {
    node_agree(count);
  }
  return !failure_;
}

}  // namespace hreduce::detail
