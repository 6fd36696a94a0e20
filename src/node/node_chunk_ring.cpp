// The chunk ring: a vector longer than the announcements carry goes through
// the segment in chunks of C bytes, in a ring of B buffers (s = step mod B;
// B = buffers(), 2 to 8):
//
//     step t:  stage    copy my chunk into stage[me][s], but for my
//                       slice                                → staged = t
//              fold     my slice of the chunk, across stage[0..P-1][s]
//                       (mine from my input) in rank order,
//                       into result[s]                       → folded = t
//              drain    copy the parts of result[s] I receive (and, for
//                       scan, my exclusive prefix that the fold left in
//                       stage[me][s])                        → drained = t
//
//     Before staging step t a process waits until every process folded
//     t-B (nobody reads stage[me][s] any more); before folding, until
//     every process drained t-B (nobody reads result[s]). Steps count over
//     all operations, the same on every process.
//
// Every process folds a P-th of each chunk, so the work and the lines that
// cross between cores are shared evenly, and the fold is in rank order
// whoever computes it. The ring is as long as kNodeRingBytes allow: a
// buffer is written again only after the other processes' cores have read
// several chunks since, so its lines have mostly left their caches, and
// writing them costs no round trip to those cores to take them back.
// Buffers in Team::allocate's memory skip the stage or the drain
// (node_allocations.hpp); an op that throws is caught in the fold and
// reported once every process has finished the operation.
#include <algorithm>
#include <string>

#include "hreduce/error.hpp"
#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/failure.hpp"
#include "src/common/fold.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {
namespace {

// Elements of one slice: a chunk of m elements split over P processes,
// slices starting on cache lines where the element size allows.
std::size_t slice_elements(std::size_t m, int P, std::size_t es) {
  return std::max<std::size_t>(whole_lines((m + P - 1) / P, es), 1);
}

}  // namespace

NodeGroup::SharedPlaces NodeGroup::shared_places(const NodeReduction& r) const {
  const std::size_t es = r.op->elem_size, bytes = r.count * es;
  SharedPlaces places;
  places.wants_total = r.out_hi > r.out_lo;
  places.in = allocations_.find(r.in, bytes);
  // Folders of other slices write an output in place while the input is
  // still read in place: one over the input anywhere but at the same
  // elements (reduce_scatter in place) goes through the drain instead.
  auto clashes = [&](const NodePlace& out, std::size_t out_bytes, std::uint64_t same_at) {
    return places.in.shared() && out.allocation == places.in.allocation &&
           out.offset < places.in.offset + bytes && places.in.offset < out.offset + out_bytes &&
           out.offset != same_at;
  };
  if (receives_prefix(r)) {
    places.prefix = allocations_.find(r.prefix, bytes);
    if (clashes(places.prefix, bytes, places.in.offset)) places.prefix = {};
  }
  if (r.out_hi > r.out_lo && r.prefix == nullptr) {
    const std::size_t out_bytes = (r.out_hi - r.out_lo) * es;
    places.out = allocations_.find(r.out, out_bytes);
    places.out_lo = r.out_lo;
    places.out_hi = r.out_hi;
    const std::uint64_t same_at = places.in.offset + r.out_lo * es;
    if (clashes(places.out, out_bytes, same_at)) places.out = {};
  }
  return places;
}

Failure NodeGroup::reduce_chunked(const NodeReduction& r) {
  const std::size_t es = r.op->elem_size;
  const std::size_t per_chunk = chunk_ / es;
  if (per_chunk == 0) {
    throw ArgumentError(std::string(to_string(kind_)) + ": an element of " + std::to_string(es) +
                        " bytes is larger than the node level's chunk of " +
                        std::to_string(chunk_));
  }
  ProcessArea& mine = area(rank_);
  bool failed = false;
  const std::size_t chunks = (r.count + per_chunk - 1) / per_chunk;
  for (std::size_t c = 0; c < chunks; ++c) {
    ChunkStep k;
    k.step = steps_ + c + 1;
    k.buffer = static_cast<int>(k.step % buffers_);
    k.c0 = c * per_chunk;
    k.m = std::min(r.count, k.c0 + per_chunk) - k.c0;
    const std::size_t share = slice_elements(k.m, size_, es);
    k.lo = std::min(k.m, rank_ * share);
    k.hi = std::min(k.m, k.lo + share);
    stage_chunk(r, k);
    publish(mine.staged, k.step);
    wait_all(&ProcessArea::staged, k.step, "stage its chunk");
    if (k.step > buffers_) {
      wait_all(&ProcessArea::drained, k.step - buffers_, "drain an earlier chunk");
    }
    if (k.lo < k.hi && !failed) {
      try {
        fold_slice(r, k);
      } catch (...) {
        failed = true;
        copy_text(mine.fold_failure, sizeof mine.fold_failure, current_exception_text());
      }
      if (failed) mine.fold_failed = ops_;  // released by `folded` below
    }
    publish(mine.folded, k.step);
    wait_all(&ProcessArea::folded, k.step, "fold its slice");
    drain_chunk(r, k, failed);
    publish(mine.drained, k.step);
  }
  steps_ += chunks;
  return fold_failure();
}

// The op threw in some process's slice: every process says so alike.
Failure NodeGroup::fold_failure() const {
  for (int q = 0; q < size_; ++q) {
    if (area(q).fold_failed == ops_) {
      return Failure::of(ErrorKind::op,
                         std::string(to_string(kind_)) + ": the op threw in process " +
                             std::to_string(first_process_ + q) + ": " + area(q).fold_failure);
    }
  }
  return {};
}

void NodeGroup::stage_chunk(const NodeReduction& r, const ChunkStep& k) {
  const std::size_t es = r.op->elem_size;
  // Read in place by the folders, or (exscan on one node) by nobody.
  const bool unread_input = r.prefix != nullptr && last() && !last_input_read();
  if (slot(rank_).places.in.shared() || unread_input) return;
  if (k.step > buffers_) {
    wait_all(&ProcessArea::folded, k.step - buffers_, "fold an earlier chunk");
  }
  // Only what the others fold: this process folds its own slice from
  // its input (fold_slice), a copy of a P-th of the chunk saved.
  std::byte* staged = stage(rank_, k.buffer);
  copy_bytes(staged, bytes_at(r.in, k.c0, es), k.lo * es);
  copy_bytes(staged + k.hi * es, bytes_at(r.in, k.c0 + k.hi, es), (k.m - k.hi) * es);
}

void NodeGroup::drain_chunk(const NodeReduction& r, const ChunkStep& k, bool failed) {
  const std::size_t es = r.op->elem_size;
  const int buffer = k.buffer;
  const std::size_t c0 = k.c0, m = k.m, lo = k.lo, hi = k.hi;
  const SharedPlaces& places = slot(rank_).places;
  const std::size_t a = std::max(r.out_lo, c0), b = std::min(r.out_hi, c0 + m);
  if (a < b && !places.out.shared()) {
    // Around the slice this process folded: that part it wrote already.
    const bool wrote_own = r.prefix == nullptr && lo < hi && !places.in.shared();
    const std::size_t own_lo = wrote_own ? std::clamp(c0 + lo, a, b) : b;
    const std::size_t own_hi = wrote_own ? std::clamp(c0 + hi, a, b) : b;
    auto drain = [&](std::size_t from, std::size_t to) {
      if (from < to) {
        copy_bytes(bytes_at(r.out, from - r.out_lo, es), result(buffer) + (from - c0) * es,
                   (to - from) * es);
      }
    };
    drain(a, own_lo);
    drain(own_hi, b);
  }
  if (receives_prefix(r) && !places.prefix.shared()) {
    // Around the slice this process folded, if it wrote its prefix there.
    const bool wrote_own = writes_own_prefix(r) && lo < hi && !failed;
    const std::size_t own_lo = wrote_own ? lo : m, own_hi = wrote_own ? hi : m;
    std::byte* prefix = bytes_at(r.prefix, c0, es);
    copy_bytes(prefix, stage(rank_, buffer), own_lo * es);
    if (own_hi < m) {
      copy_bytes(prefix + own_hi * es, stage(rank_, buffer) + own_hi * es, (m - own_hi) * es);
    }
  }
}

void NodeGroup::fold_slice(const NodeReduction& r, const ChunkStep& k) {
  if (r.prefix == nullptr) {
    fold_reduction_slice(r, k);
  } else {
    fold_scan_slice(r, k);
  }
}

// Process q's input over this process's slice: where it lies in shared
// memory, this process's own (it did not stage its slice), or staged.
const std::byte* NodeGroup::slice_input(const NodeReduction& r, const ChunkStep& k, int q) const {
  const std::size_t es = r.op->elem_size;
  const SharedPlaces& d = slot(q).places;
  if (d.in.shared()) return allocations_.at(q, d.in) + (k.c0 + k.lo) * es;
  if (q == rank_) return bytes_at(r.in, k.c0 + k.lo, es);
  return stage(q, k.buffer) + k.lo * es;
}

void NodeGroup::fold_reduction_slice(const NodeReduction& r, const ChunkStep& k) {
  const std::size_t es = r.op->elem_size;
  const std::size_t c0 = k.c0, lo = k.lo, hi = k.hi, m = hi - lo;
  std::byte* total = result(k.buffer) + lo * es;
  auto in = [&](int q) { return slice_input(r, k, q); };
  fold_in_rank_order(*r.op, size_, in, total, m);
  // Outputs in shared memory get their part of the slice now, while it
  // is in this core's cache.
  for (int q = 0; q < size_; ++q) {
    const SharedPlaces& d = slot(q).places;
    if (!d.out.shared()) continue;
    const std::size_t a = std::max<std::size_t>(d.out_lo, c0 + lo);
    const std::size_t b = std::min<std::size_t>(d.out_hi, c0 + hi);
    if (a < b) {
      copy_bytes(allocations_.at(q, d.out) + (a - d.out_lo) * es, total + (a - c0 - lo) * es,
                 (b - a) * es);
    }
  }
  // And this process's own private output, which its drain then skips.
  // Only when its input was staged: an output over an input that others
  // still read in place (reduce_scatter in place) must wait for them.
  const SharedPlaces& own = slot(rank_).places;
  if (!own.out.shared() && !own.in.shared()) {
    const std::size_t a = std::max(r.out_lo, c0 + lo), b = std::min(r.out_hi, c0 + hi);
    if (a < b) {
      copy_bytes(bytes_at(r.out, a - r.out_lo, es), total + (a - c0 - lo) * es, (b - a) * es);
    }
  }
}

// Scan: process q's prefix x_0 ∘ … ∘ x_{q-1} (or … ∘ x_q when it asked
// for its inclusive prefix) goes to its output when that is in shared
// memory, else to stage[q] for it to drain; result gets the node's total.
// This process's own prefix goes straight to its private output when
// its input was staged (as for reductions above); its drain skips it.
void NodeGroup::fold_scan_slice(const NodeReduction& r, const ChunkStep& k) {
  const std::size_t es = r.op->elem_size;
  const std::size_t c0 = k.c0, lo = k.lo, m = k.hi - k.lo;
  std::byte* total = result(k.buffer) + lo * es;
  auto in = [&](int q) { return slice_input(r, k, q); };
  const bool own_private = writes_own_prefix(r);
  auto prefix_of = [&](int q) {
    const SharedPlaces& d = slot(q).places;
    if (d.prefix.shared()) return allocations_.at(q, d.prefix) + (c0 + lo) * es;
    if (q == rank_ && own_private) return bytes_at(r.prefix, c0 + lo, es);
    return stage(q, k.buffer) + lo * es;
  };
  auto inclusive = [&](int q) { return slot(q).inclusive != 0; };
  // Process 0's inclusive prefix is its input: staged, it is in place.
  if (inclusive(0)) copy_if_distinct(prefix_of(0), in(0), m * es);
  // Without a total or an inclusive last prefix (exscan on one node) the
  // last process's input is neither staged nor read.
  const bool last_read = last_input_read();
  if (size_ == 1) {
    if (last_read) copy_bytes(total, in(0), m * es);
    return;
  }
  const bool total_wanted = anyone_wants_total();
  // left = x_0 ∘ … ∘ x_{q-1} over the slice, in place where it can be:
  // every copy or write left out here is one less line taken from
  // another core (two processes' scan: a quarter off at 1 MiB).
  const std::byte* left = in(0);
  std::byte* spare = accumulator_.data();
  std::byte* other_spare = scratch_.data();
  for (int q = 1; q < size_; ++q) {
    const bool last = q + 1 == size_;
    if (last && !last_read) {
      copy_bytes(prefix_of(q), left, m * es);
      break;
    }
    // The last fold is the node's total, which only some may want; else
    // it is only the last process's inclusive prefix.
    std::byte* upto_q = !last ? spare : total_wanted ? total : prefix_of(q);
    r.op->apply(left, in(q), upto_q, m);
    if (inclusive(q)) {
      copy_if_distinct(prefix_of(q), upto_q, m * es);
    } else {
      copy_bytes(prefix_of(q), left, m * es);
    }
    left = upto_q;
    if (!last) std::swap(spare, other_spare);
  }
}

bool NodeGroup::anyone_wants_total() const {
  for (int q = 0; q < size_; ++q) {
    if (slot(q).places.wants_total != 0) return true;
  }
  return false;
}

bool NodeGroup::last_input_read() const {
  return slot(size_ - 1).inclusive != 0 || anyone_wants_total();
}

bool NodeGroup::writes_own_prefix(const NodeReduction& r) const {
  const SharedPlaces& own = slot(rank_).places;
  return receives_prefix(r) && !own.prefix.shared() && !own.in.shared();
}

}  // namespace hreduce::detail
