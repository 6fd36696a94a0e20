// The long allreduce of a team spanning processes, pipelined in chunks so
// the shared-memory steps and the leader's messages overlap:
//
//   chunk:        0        1        2        3
//   members 1..  reduce   reduce   reduce   reduce   copy 0  copy 1 ...
//   member 0              send 0   send 1   send 2   send 3
//
// Members other than the leader (member 0) reduce each chunk across every
// member's input, in rank order, straight into the leader's output, each
// taking a slice of the chunk, and tick their `chunks` word. The leader
// waits for a chunk to be complete, hands it to on_chunk (the inter-process
// allreduce, in place) and ticks its own word; the others copy finished
// chunks into their outputs while it sends later ones. A leader alone in its
// process reduces and sends in turn.
#include <algorithm>

#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/fold.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/process_step.hpp"

namespace hreduce::detail {
namespace {

constexpr int kChunkBits = 24;  // chunk counts live in the low bits of the word

std::uint64_t mark(std::uint64_t seq, std::size_t chunks) { return (seq << kChunkBits) + chunks; }

void wait_chunks(const CallContext& ctx, int rank, std::size_t chunks) {
  ctx.wait_for(ctx.team.control(rank).chunks, mark(ctx.seq, chunks), rank,
               "a chunk of the pipeline");
}

// out[lo, hi) = x_0 ∘ … ∘ x_{p-1}, into the leader's output.
void reduce_range(const CallContext& ctx, std::size_t lo, std::size_t hi) {
  if (lo >= hi) return;
  const std::size_t es = ctx.call.op.elem_size;
  // Slice j of every buffer is touched by one member only, so the leader's
  // output may be its input: x_0's chunk is read before it is overwritten.
  auto input = [&](int q) { return bytes_at(ctx.of(q).in, lo, es); };
  fold_in_rank_order(ctx.call.op, ctx.size(), input, bytes_at(ctx.of(0).out, lo, es), hi - lo);
}

}  // namespace

void pipelined_allreduce(const CallContext& ctx) {
  const std::size_t n = ctx.call.count;
  const std::size_t es = ctx.call.op.elem_size;
  const std::size_t chunk = std::max<std::size_t>(1, ctx.call.step->chunk);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  const int p = ctx.size();
  const int rank = ctx.me.rank;
  std::atomic<std::uint64_t>& mine = ctx.team.control(rank).chunks;
  bool failed = false;
  auto guarded = [&](auto&& work) {
    if (failed) return;
    try {
      work();
    } catch (...) {
      failed = true;
      ctx.record_failure(current_exception_text());
    }
  };

  if (rank == 0) {
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t lo = c * chunk, hi = std::min(n, lo + chunk);
      if (p == 1) {
        guarded([&] { reduce_range(ctx, lo, hi); });
      } else {
        for (int r = 1; r < p; ++r) wait_chunks(ctx, r, c + 1);
      }
      // Always called, failed or not: the other processes expect the
      // messages (the callback stops combining after a failure).
      ctx.call.step->on_chunk(ctx.call.step->on_chunk_context, bytes_at(ctx.call.out, lo, es),
                              hi - lo);
      publish(mine, mark(ctx.seq, c + 1), ctx.team.waiting);
    }
  } else {
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t lo = c * chunk, hi = std::min(n, lo + chunk);
      const Slice piece = pipeline_piece(rank - 1, p - 1, {lo, hi});
      guarded([&] { reduce_range(ctx, piece.lo, piece.hi); });
      publish(mine, mark(ctx.seq, c + 1), ctx.team.waiting);
    }
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t lo = c * chunk, hi = std::min(n, lo + chunk);
      wait_chunks(ctx, 0, c + 1);
      copy_if_distinct(bytes_at(ctx.call.out, lo, es), bytes_at(ctx.of(0).out, lo, es),
                       (hi - lo) * es);
    }
  }
  // The leader's output is read until everyone has copied it.
  ctx.finish_together("finishing the pipeline");
  ctx.throw_if_failed();
}

}  // namespace hreduce::detail
