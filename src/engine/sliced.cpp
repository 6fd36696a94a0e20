// Sliced collectives for long vectors: all members work at once, each on its
// own slice of the element range, and every input and output byte is read or
// written exactly once — the least memory traffic any implementation needs.
//
//             slice 0      slice 1      slice 2        (p = 3)
//   x_0   [ member 0 ][ member 1 ][ member 2 ]
//   x_1   [ member 0 ][ member 1 ][ member 2 ]   ← member j reads slice j
//   x_2   [ member 0 ][ member 1 ][ member 2 ]     of every input ...
//   out_q [ member 0 ][ member 1 ][ member 2 ]   ← ... and writes slice j
//                                                  of the outputs it feeds
//
// The picture shows a compact placement. Slices go to members by NUMA node,
// then rank (numa_placement.hpp), so that the members of one node fold one
// run of every buffer, which memory on that node can hold; under a scatter
// placement slice j is then not member j's.
//
// Member j folds its slice chunk by chunk (options.chunk_bytes):
// x_0 ∘ x_1 ∘ … ∘ x_{p-1}, always in rank order, so non-commutative ops work
// and the bits do not depend on timing. It folds straight into the first
// output that wants the result and copies that chunk, still in its cache,
// to the others:
//   allreduce       every member's output (folded into member 0's)
//   reduce          the root's output
//   reduce_scatter  the output of the block's owner
//   scan / exscan   a running prefix: out_q = x_0 ∘ … ∘ x_q (exclusive: x_{q-1})
// Folding into a separate accumulator first costs one more pass over every
// chunk through the cache: up to twice the time of a 2-member allreduce
// from 256 KiB (hreduce bench --members 2, against the limit kernel).
//
// In place is safe because slice j of every buffer is touched by member j
// alone, which reads each element of an input before it overwrites the same
// element of that member's output (the fold's first step reads x_0 and x_1
// and writes in the same pass; a fold into a later member's in-place
// buffer goes through scratch). The one exception is in-place
// reduce_scatter, where a block lands at the start of the owner's buffer,
// over elements other members still read; such blocks go through the
// computing member's scratch and the owner copies them after everyone is
// done.
//
// The call ends with every member publishing `done` and waiting for all
// others: then nobody reads anyone's buffers any more.
#include <algorithm>
#include <utility>

#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/fold.hpp"
#include "src/engine/collectives.hpp"

namespace hreduce::detail {
namespace {

// The slice member `rank` folds, by NUMA node (numa_placement.hpp).
Slice slice_folded_by(const CallContext& ctx, int rank, std::size_t count, std::size_t es) {
  return slice_of(ctx.team.numa_plan.slice_of_member[rank], ctx.size(), count, es);
}

class SliceWorker {
 public:
  explicit SliceWorker(const CallContext& ctx)
      : ctx_(ctx), es_(ctx.call.op.elem_size),
        chunk_(detail::chunk_elements(ctx.call.options->chunk_bytes, es_)) {}

  std::size_t chunk_elements() const { return chunk_; }
  std::size_t elem_size() const { return es_; }

  // to[0, len) = x_0 ∘ … ∘ x_{p-1} over elements [at, at + len). `to` may
  // be x_0's or x_1's own chunk (an in-place output), never a later input's:
  // the fold overwrites it before reading x_2 … x_{p-1}.
  void fold(std::size_t at, std::size_t len, void* to) const {
    auto input = [&](int q) { return bytes_at(ctx_.of(q).in, at, es_); };
    fold_in_rank_order(ctx_.call.op, ctx_.size(), input, to, len);
  }

  // Runs body(at, len) over the chunks of [range.lo, range.hi). An exception
  // from the op is recorded and ends this member's work; the protocol goes on.
  template <class Body>
  void for_each_chunk(Slice range, Body&& body) const {
    try {
      for (std::size_t at = range.lo; at < range.hi; at += chunk_) {
        body(at, std::min(chunk_, range.hi - at));
      }
    } catch (...) {
      ctx_.record_failure(current_exception_text());
    }
  }

  void finish() const { ctx_.finish_together("finishing its slice"); }

 private:
  const CallContext& ctx_;
  std::size_t es_;
  std::size_t chunk_;
};

// Block layout of reduce_scatter and reduce_scatter_block.
class Blocks {
 public:
  explicit Blocks(const CallContext& ctx) : ctx_(ctx) {}

  std::size_t count(int r) const {
    const Call& call = ctx_.call;
    return call.kind == CollectiveKind::reduce_scatter_block ? call.count : call.counts[r];
  }
  std::size_t total() const {
    std::size_t sum = 0;
    for (int r = 0; r < ctx_.size(); ++r) sum += count(r);
    return sum;
  }
  bool in_place(int r) const { return ctx_.of(r).in == ctx_.of(r).out; }

 private:
  const CallContext& ctx_;
};

}  // namespace

void sliced_allreduce(const CallContext& ctx) {
  const SliceWorker worker(ctx);
  const std::size_t es = worker.elem_size();
  worker.for_each_chunk(slice_folded_by(ctx, ctx.me.rank, ctx.call.count, es),
                        [&](std::size_t at, std::size_t len) {
                          void* first = bytes_at(ctx.of(0).out, at, es);
                          worker.fold(at, len, first);
                          for (int q = 1; q < ctx.size(); ++q) {
                            copy_bytes(bytes_at(ctx.of(q).out, at, es), first, len * es);
                          }
                        });
  worker.finish();
  ctx.throw_if_failed();
}

void sliced_reduce(const CallContext& ctx) {
  const SliceWorker worker(ctx);
  const std::size_t es = worker.elem_size();
  const int root = ctx.call.root;
  void* out = ctx.of(root).out;
  // An in-place root after member 1 holds an input the fold reads after its
  // first step: fold beside it.
  void* acc = root >= 2 && out == ctx.of(root).in ? ctx.me.scratch(1, worker.chunk_elements() * es)
                                                  : nullptr;
  worker.for_each_chunk(slice_folded_by(ctx, ctx.me.rank, ctx.call.count, es),
                        [&](std::size_t at, std::size_t len) {
                          worker.fold(at, len, acc ? acc : bytes_at(out, at, es));
                          if (acc) copy_bytes(bytes_at(out, at, es), acc, len * es);
                        });
  worker.finish();
  ctx.throw_if_failed();
}

void sliced_reduce_scatter(const CallContext& ctx) {
  const SliceWorker worker(ctx);
  const Blocks blocks(ctx);
  const std::size_t es = worker.elem_size();
  const int p = ctx.size();
  const Slice mine = slice_folded_by(ctx, ctx.me.rank, blocks.total(), es);
  bool any_in_place = false;
  for (int r = 0; r < p; ++r) any_in_place |= blocks.in_place(r) && blocks.count(r) > 0;
  void* parked = any_in_place ? ctx.me.scratch(2, (mine.hi - mine.lo) * es) : nullptr;

  // The owner of element `at` and where its block starts, walked forwards.
  int owner = 0;
  std::size_t block_lo = 0;
  worker.for_each_chunk(mine, [&](std::size_t at, std::size_t len) {
    for (std::size_t pos = at; pos < at + len;) {
      while (pos >= block_lo + blocks.count(owner)) block_lo += blocks.count(owner++);
      const std::size_t piece = std::min(at + len, block_lo + blocks.count(owner)) - pos;
      void* to = blocks.in_place(owner) ? bytes_at(parked, pos - mine.lo, es)
                                        : bytes_at(ctx.of(owner).out, pos - block_lo, es);
      worker.fold(pos, piece, to);
      pos += piece;
    }
  });
  ctx.team.control(ctx.me.rank).partial = parked;
  worker.finish();

  if (blocks.in_place(ctx.me.rank)) {
    // Everyone is done reading the inputs; collect this block from the
    // scratch of each member whose slice overlaps it.
    std::size_t my_lo = 0;
    for (int r = 0; r < ctx.me.rank; ++r) my_lo += blocks.count(r);
    const std::size_t my_hi = my_lo + blocks.count(ctx.me.rank);
    for (int j = 0; j < p; ++j) {
      const Slice theirs = slice_folded_by(ctx, j, blocks.total(), es);
      const std::size_t lo = std::max(theirs.lo, my_lo), hi = std::min(theirs.hi, my_hi);
      if (lo >= hi) continue;
      copy_bytes(bytes_at(ctx.call.out, lo - my_lo, es),
                 bytes_at(ctx.team.control(j).partial, lo - theirs.lo, es), (hi - lo) * es);
    }
  }
  ctx.throw_if_failed();
}

void sliced_scan(const CallContext& ctx, bool exclusive) {
  const SliceWorker worker(ctx);
  const std::size_t es = worker.elem_size();
  const int p = ctx.size();
  const Slice mine = slice_folded_by(ctx, ctx.me.rank, ctx.call.count, es);
  if (!exclusive) {
    // out_0 = x_0, out_q = out_{q-1} ∘ x_q: the previous prefix is the chunk
    // this member has just written, still in its cache.
    void* total = ctx.of(0).total_out;
    worker.for_each_chunk(mine, [&](std::size_t at, std::size_t len) {
      copy_if_distinct(bytes_at(ctx.of(0).out, at, es), bytes_at(ctx.of(0).in, at, es), len * es);
      for (int q = 1; q < p; ++q) {
        ctx.call.op.apply(bytes_at(ctx.of(q - 1).out, at, es), bytes_at(ctx.of(q).in, at, es),
                          bytes_at(ctx.of(q).out, at, es), len);
      }
      if (total) copy_bytes(bytes_at(total, at, es), bytes_at(ctx.of(p - 1).out, at, es), len * es);
    });
  } else {
    // out_q = x_0 ∘ … ∘ x_{q-1}. x_q must be read before out_q (maybe the
    // same memory) is overwritten, so the next prefix is formed first in a
    // second buffer. The first prefix is x_0 itself, read where it lies
    // rather than staged (exscan on two members is then a plain copy).
    // Member 0's output is never touched.
    // A multi-process team also wants the total x_0 ∘ … ∘ x_{p-1}, one
    // more combine past the last exclusive prefix.
    void* scratch[2] = {ctx.me.scratch(1, worker.chunk_elements() * es),
                        ctx.me.scratch(2, worker.chunk_elements() * es)};
    void* total = ctx.of(0).total_out;
    worker.for_each_chunk(mine, [&](std::size_t at, std::size_t len) {
      const void* prefix = bytes_at(ctx.of(0).in, at, es);
      for (int q = 1; q < p; ++q) {
        void* next = scratch[q % 2];
        if (q + 1 < p || total)
          ctx.call.op.apply(prefix, bytes_at(ctx.of(q).in, at, es), next, len);
        copy_bytes(bytes_at(ctx.of(q).out, at, es), prefix, len * es);
        prefix = next;
      }
      if (total) copy_bytes(bytes_at(total, at, es), prefix, len * es);
    });
  }
  worker.finish();
  ctx.throw_if_failed();
}

}  // namespace hreduce::detail
