// One chunk of a nonblocking call: elements [at, at + len) of every
// member's input, folded in rank order (x_0 ∘ x_1 ∘ … ∘ x_{p-1}, lowest
// rank on the left) and written to every output they feed:
//
//   allreduce             member 0's output, then copied to the others'
//   reduce                the root's output
//   reduce_scatter(_block) each piece of the chunk to its block's owner
//   scan                  out_q = x_0 ∘ … ∘ x_q, each prefix from the last
//   exscan                out_q = x_0 ∘ … ∘ x_{q-1}
//
// The order, and so the bits, are those of the blocking sliced and mailbox
// paths (fold.hpp), which the blocking calls take everywhere but in the
// tree (docs/nonblocking.md says where that differs).
//
// In place: a chunk is touched by one worker only, which reads every input
// element before it writes the same element of any output, with two
// exceptions handled here. A fold may not write into a later member's input
// (the root of a reduce from rank 2 in place): it goes through scratch. An
// in-place reduce_scatter block lands at its owner's buffer start, over
// input elements that other chunks still read: blocks go to the slot's
// staging and are copied to their owners when the last chunk is done.
#include <utility>
#include <vector>

#include "src/common/copy.hpp"
#include "src/common/fold.hpp"
#include "src/engine/nonblocking/pending_calls.hpp"

namespace hreduce::detail {

namespace {

// Each worker thread's scratch, grown to a chunk and kept.
std::byte* scratch(int which, std::size_t bytes) {
  thread_local std::vector<std::byte> buffers[2];
  if (buffers[which].size() < bytes) buffers[which].resize(bytes);
  return buffers[which].data();
}

class ChunkView {
 public:
  ChunkView(const PendingSlot& slot, int members)
      : calls_(slot.members), members_(members), op_(calls_[0].call->op), es_(slot.plan.elem_size) {
  }

  const std::byte* in(int q, std::size_t at) const {
    return static_cast<const std::byte*>(calls_[q].call->in) + at * es_;
  }
  std::byte* out(int q, std::size_t at) const {
    return static_cast<std::byte*>(calls_[q].call->out) + at * es_;
  }
  bool in_place(int q) const { return calls_[q].in_place; }
  int members() const { return members_; }
  const ErasedOp& op() const { return op_; }
  std::size_t bytes(std::size_t len) const { return len * es_; }
  const Call& first() const { return *calls_[0].call; }

  // to[0, len) = x_0 ∘ … ∘ x_{p-1} over [at, at + len). `to` may be x_0's or
  // x_1's own elements, or any buffer that is no member's input.
  void fold(std::size_t at, std::size_t len, void* to) const {
    fold_in_rank_order(
        op_, members_, [&](int q) { return in(q, at); }, to, len);
  }
  // The same into member q's output, through scratch where that output is
  // a later member's input.
  void fold_into_output(int q, std::size_t at, std::size_t len, std::size_t out_at) const {
    if (q < 2 || !in_place(q)) return fold(at, len, out(q, out_at));
    std::byte* staged = scratch(0, bytes(len));
    fold(at, len, staged);
    copy_bytes(out(q, out_at), staged, bytes(len));
  }

 private:
  const PublishedCall* calls_;
  int members_;
  const ErasedOp& op_;
  std::size_t es_;
};

void allreduce_chunk(const ChunkView& v, std::size_t at, std::size_t len) {
  v.fold_into_output(0, at, len, at);
  for (int q = 1; q < v.members(); ++q) copy_if_distinct(v.out(q, at), v.out(0, at), v.bytes(len));
}

// Where block q of a reduce_scatter starts in the whole vector.
std::size_t block_start(const Call& first, int q) {
  if (first.kind == CollectiveKind::reduce_scatter_block) return first.count * q;
  std::size_t start = 0;
  for (int r = 0; r < q; ++r) start += first.counts[r];
  return start;
}

void reduce_scatter_chunk(const ChunkView& v, PendingSlot& slot, std::size_t at, std::size_t len) {
  const std::size_t end = at + len;
  std::size_t start = 0;
  for (int q = 0; q < v.members() && start < end; ++q) {
    const std::size_t next = block_start(v.first(), q + 1);
    const std::size_t from = std::max(at, start), to = std::min(end, next);
    if (from < to) {
      void* target = v.in_place(q) ? slot.plan.staging.data() + v.bytes(from)
                                   : static_cast<void*>(v.out(q, from - start));
      v.fold(from, to - from, target);
    }
    start = next;
  }
}

void scan_chunk(const ChunkView& v, std::size_t at, std::size_t len) {
  copy_if_distinct(v.out(0, at), v.in(0, at), v.bytes(len));
  if (v.members() < 2) return;
  v.op().apply(v.in(0, at), v.in(1, at), v.out(1, at), len);
  for (int q = 2; q < v.members(); ++q) {
    v.op().apply(v.out(q - 1, at), v.in(q, at), v.out(q, at), len);
  }
}

// The running prefix lives in scratch: an in-place member's output
// overwrites the input the next prefix needs.
void exscan_chunk(const ChunkView& v, std::size_t at, std::size_t len) {
  if (v.members() < 2) return;
  std::byte* prefix = scratch(0, v.bytes(len));
  std::byte* next = scratch(1, v.bytes(len));
  copy_bytes(prefix, v.in(0, at), v.bytes(len));
  for (int q = 1; q < v.members(); ++q) {
    if (q + 1 < v.members()) v.op().apply(prefix, v.in(q, at), next, len);
    copy_bytes(v.out(q, at), prefix, v.bytes(len));
    std::swap(prefix, next);
  }
}

}  // namespace

void fold_chunk(PendingSlot& slot, int members, std::uint64_t chunk) {
  const ChunkView view(slot, members);
  const std::size_t at = chunk * slot.plan.chunk;
  const std::size_t len = std::min(slot.plan.chunk, slot.plan.total - at);
  switch (slot.plan.kind) {
    case CollectiveKind::allreduce: return allreduce_chunk(view, at, len);
    case CollectiveKind::reduce: return view.fold_into_output(view.first().root, at, len, at);
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block: return reduce_scatter_chunk(view, slot, at, len);
    case CollectiveKind::scan: return scan_chunk(view, at, len);
    case CollectiveKind::exscan: return exscan_chunk(view, at, len);
    case CollectiveKind::barrier: return;
  }
}

void unstage_blocks(PendingSlot& slot, int members) {
  const ChunkView view(slot, members);
  for (int q = 0; q < members; ++q) {
    if (!view.in_place(q)) continue;
    const std::size_t start = block_start(view.first(), q);
    const std::size_t len = block_start(view.first(), q + 1) - start;
    copy_bytes(view.out(q, 0), slot.plan.staging.data() + view.bytes(start), view.bytes(len));
  }
}

}  // namespace hreduce::detail
