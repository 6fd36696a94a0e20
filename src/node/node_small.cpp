// The small path: inputs of at most inline_bytes() travel inside the
// announcements (node_agreement.cpp).
//
//   small      each process folds the slots it needs, in rank order.
//
// A small call costs its round trips between cores, not its bytes: the
// announcement that every process writes anyway carries the input, so the
// whole call is one publish and one wait per process, and a process that
// only contributes may leave at once (run ahead). An input that nobody
// else reads stays out of the announcement (keeps_input()).
#include <cstddef>

#include "src/common/copy.hpp"
#include "src/common/failure.hpp"
#include "src/common/fold.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {

Failure NodeGroup::reduce_inline(const NodeCallInfo& info, const NodeReduction& r) {
  // A process that failed already may have no input to offer.
  const bool healthy = !info.failure;
  // Copying an input that nobody reads into the announcement cost the
  // process that waits for the others (an exscan's last, a reduce's
  // root) a third of a 16 KiB call on two processes.
  const bool kept_input = healthy && keeps_input(r);
  const bool offers = healthy && !kept_input;
  // The first process's inclusive prefix is its own input.
  const bool own_prefix = r.prefix != nullptr && r.inclusive && rank_ == 0;
  Announcement announcement;
  announcement.payload = offers ? r.in : nullptr;
  announcement.payload_bytes = offers ? r.count * r.op->elem_size : 0;
  announcement.inclusive = r.prefix != nullptr && r.inclusive;
  announcement.contributes_only =
      r.may_run_ahead && healthy && r.out_hi == r.out_lo && (!receives_prefix(r) || own_prefix);
  announcement.needs_only_earlier =
      r.may_run_ahead && healthy && r.out_hi == r.out_lo && receives_prefix(r);
  if (Failure failure = announce_and_agree(info, announcement); failure || r.count == 0) {
    return failure;
  }
  reduce_small(r, kept_input);
  return {};
}

bool NodeGroup::keeps_input(const NodeReduction& r) const {
  if (!r.input_private) return false;
  const std::size_t bytes = r.count * r.op->elem_size;
  const auto* in = static_cast<const std::byte*>(r.in);
  // The fold into `to` reads this process's input in its first pass (rank
  // 0 or 1: x_0 ∘ x_1 elementwise, into `to` even where that is the input
  // itself), or in a later pass, after the first has written `to`.
  auto reads_it_first = [&](const void* to, std::size_t lo, std::size_t hi) {
    const auto* t = static_cast<const std::byte*>(to);
    const std::size_t to_bytes = (hi - lo) * r.op->elem_size;
    const bool apart = t + to_bytes <= in || in + bytes <= t;
    return apart || (rank_ <= 1 && t == in + lo * r.op->elem_size);
  };
  if (r.out_hi > r.out_lo && !reads_it_first(r.out, r.out_lo, r.out_hi)) return false;
  // An exclusive prefix leaves this process's own input out.
  if (receives_prefix(r) && r.inclusive && !reads_it_first(r.prefix, 0, r.count)) return false;
  return true;
}

void NodeGroup::reduce_small(const NodeReduction& r, bool kept_input) {
  const std::size_t es = r.op->elem_size;
  auto input = [&](int q) {
    return q == rank_ && kept_input ? static_cast<const std::byte*>(r.in) : payload_of(q);
  };
  // out[0, m) = x_0 ∘ … ∘ x_{upto-1} over elements [lo, lo + m).
  auto fold = [&](void* out, int upto, std::size_t lo, std::size_t m) {
    auto from_lo = [&](int q) { return input(q) + lo * es; };
    fold_in_rank_order(*r.op, upto, from_lo, out, m);
  };
  if (r.out_hi > r.out_lo) fold(r.out, size_, r.out_lo, r.out_hi - r.out_lo);
  if (!receives_prefix(r)) return;
  const int upto = r.inclusive ? rank_ + 1 : rank_;
  // The prefix that is one process's input (an exscan's second process, a
  // scan's first) is a copy of a few bytes: inline here, cheaper than the
  // call into the fold (which would copy it too).
  if (upto == 1) {
    copy_if_distinct(r.prefix, input(0), r.count * es);
  } else {
    fold(r.prefix, upto, 0, r.count);
  }
}

}  // namespace hreduce::detail
