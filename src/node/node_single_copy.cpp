// The single copy, for two processes, from kNodeSingleCopyBytes and above
// inline_bytes(kind):
//
//   single     the vector is cut in two, and process q computes every
//   copy       result over its part: it reads the other's input and writes
//              the other's output straight in its memory (peer_memory.hpp),
//              in pieces of a chunk, folding in rank order; then it says
//              `released` and waits for the other's. Each byte moves once.
//
// Through the segment every byte is copied in by its owner and out by its
// receiver; here the one process that needs it reads it where it lies. An
// exscan's copy and an allreduce's fold are cut in halves; a fold to a
// single receiver goes all to it below kNodeSplitFoldBytes, and from there
// first 3/5 of it (4/5 when the other also copies its input to its own
// scan prefix) plus kNodeSplitFoldExtraBytes, then as the two processes'
// measured times balance it (cut_balance.hpp). Parts of the total
// (reduce_scatter): each process folds its own part, unless an output lies
// over the input the other reads. Where the kernel forbids such access
// (probed by describe()) or HREDUCE_NODE_SINGLE_COPY=off, the chunks do it.
// Only what both processes announced decides the plan, so both take the
// same path.
#include <algorithm>
#include <chrono>
#include <string>

#include "hreduce/error.hpp"
#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/failure.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"
#include "src/node/node_way.hpp"
#include "src/node/peer_memory.hpp"

namespace hreduce::detail {

// What process p receives, as a fold x_first ∘ … ∘ x_last over the whole
// vector into `to` (an address in p's memory); first > last: nothing.
struct NodeGroup::Wanted {
  int first = 1, last = 0;
  std::uint64_t to = 0;
  bool any() const { return first <= last; }

  static Wanted of(const PeerAddresses& d, int p, bool inclusive) {
    if (d.total != 0) return {0, 1, d.output};
    if (d.prefix == 0) return {};
    if (p == 1) return {0, inclusive ? 1 : 0, d.prefix};
    // Process 0's inclusive prefix is its own input, which it copies itself.
    return {};
  }
};

namespace {

void require(bool done, const std::string& why) {
  if (!done) throw TransportError(why);
}

}  // namespace

NodeGroup::PeerAddresses NodeGroup::peer_addresses(const NodeReduction& r) const {
  PeerAddresses a;
  a.input = reinterpret_cast<std::uint64_t>(r.in);
  a.output = reinterpret_cast<std::uint64_t>(r.out);
  a.prefix = reinterpret_cast<std::uint64_t>(r.prefix);
  if (r.out_hi > r.out_lo && r.prefix == nullptr) {
    a.out_lo = r.out_lo;
    a.out_hi = r.out_hi;
  }
  a.total = r.out_hi == r.out_lo ? 0 : r.out_lo == 0 && r.out_hi == r.count ? 1 : 2;
  return a;
}

// Parts of the total (reduce_scatter): each process folds its own part,
// reading the other's input there, so every byte moves once, unless its
// output lies over the input that the other reads meanwhile (in place):
// then the chunks.
NodeGroup::SingleCopyPlan NodeGroup::own_parts_plan(std::size_t es) const {
  for (int p = 0; p < 2; ++p) {
    const PeerAddresses& mine = slot(p).addresses;
    const PeerAddresses& other = slot(1 - p).addresses;
    if (mine.prefix != 0) return {};
    if (mine.total == 0 || other.total == 0) continue;
    const std::uint64_t out_lo = mine.output, out_hi = out_lo + (mine.out_hi - mine.out_lo) * es;
    const std::uint64_t read_lo = mine.input + other.out_lo * es,
                        read_hi = mine.input + other.out_hi * es;
    if (out_lo < read_hi && read_lo < out_hi) return {};
  }
  return {SingleCopyPlan::Way::own_parts, 0};
}

NodeGroup::SingleCopyPlan NodeGroup::single_copy_plan(const NodeReduction& r) {
  using Way = SingleCopyPlan::Way;
  // Called where node_way() chose the single copy (two processes, a long
  // enough vector, an op that cannot throw).
  const std::size_t es = r.op->elem_size;
  const PeerAddresses* d[2] = {&slot(0).addresses, &slot(1).addresses};
  if (d[0]->total == 2 || d[1]->total == 2) return own_parts_plan(es);
  int folders = 0, receiver = 0;
  for (int p = 0; p < 2; ++p) {
    // A total and a prefix both: the chunks.
    if (d[p]->total == 1 && d[p]->prefix != 0) return {};
    const Wanted w = Wanted::of(*d[p], p, slot(p).inclusive != 0);
    if (w.any() && w.last == 1) ++folders, receiver = p;
  }
  const int other = 1 - receiver;
  const bool other_copies = folders == 1 && d[other]->prefix != 0 && slot(other).inclusive != 0 &&
                            d[other]->prefix != d[other]->input;
  const std::size_t rule = single_copy_cut(r.count, es, folders, receiver, other_copies);
  if (folders != 1 || rule == 0 || rule >= r.count) return {Way::cut, rule};
  return {Way::cut, cut_balance_.cut(receiver, other_copies, r.count, es, rule), receiver,
          other_copies};
}

Failure NodeGroup::reduce_single_copy(const NodeReduction& r, const SingleCopyPlan& plan) {
  ProcessArea& mine = area(rank_);
  const int peer = 1 - rank_;
  const bool balanced = plan.receiver >= 0;
  const auto began =
      balanced ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  try {
    copy_pieces(r, plan);
  } catch (...) {
    copy_text(mine.fold_failure, sizeof mine.fold_failure, current_exception_text());
    mine.fold_failed = ops_;  // released by `released` below
  }
  if (balanced) {
    const auto took = std::chrono::steady_clock::now() - began;
    mine.copy_nanoseconds = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
  }
  publish(mine.released, ops_);
  // My input and output stay mine only once the other is done with them.
  wait(area(peer).released, ops_, peer, "finish with this process's input and output");
  if (balanced) {
    cut_balance_.observe(plan.receiver, plan.other_copies, r.count * r.op->elem_size,
                         area(0).copy_nanoseconds, area(1).copy_nanoseconds);
  }
  for (int p : {0, 1}) {
    if (area(p).fold_failed == ops_) {
      return Failure::of(ErrorKind::transport,
                         std::string(to_string(kind_)) + ": process " +
                             std::to_string(first_process_ + p) +
                             " could not reach the other's memory: " + area(p).fold_failure);
    }
  }
  return {};
}

void NodeGroup::copy_pieces(const NodeReduction& r, const SingleCopyPlan& plan) {
  const std::size_t es = r.op->elem_size;
  const int q = rank_;
  Wanted want[2];
  std::size_t lo = 0, hi = 0;
  if (plan.way == SingleCopyPlan::Way::own_parts) {
    // Only my part, for me: `to` is where element 0 of the total would go.
    const PeerAddresses& d = slot(q).addresses;
    if (d.total != 0) want[q] = {0, 1, d.output - d.out_lo * es};
    lo = d.out_lo, hi = d.out_hi;
  } else {
    for (int p = 0; p < 2; ++p) want[p] = Wanted::of(slot(p).addresses, p, slot(p).inclusive != 0);
    lo = q == 0 ? 0 : plan.cut, hi = q == 0 ? plan.cut : r.count;
  }
  if (q == 0 && r.prefix != nullptr && r.inclusive) {
    copy_if_distinct(r.prefix, r.in, r.count * es);
  }
  const std::size_t piece = chunk_ / es;
  for (std::size_t a = lo; a < hi; a += piece) copy_piece(r, want, a, std::min(piece, hi - a));
}

// Elements [a, a + m): x_peer read once when some result needs it, and
// x_0 ∘ x_1 computed once for whoever needs it, first for this process,
// straight into its output. What the kernel copies goes between addresses
// at the same offset in their 64-byte lines wherever a buffer of ours is
// one side, and elsewhere too where its copy would crawl otherwise
// (PeerEndpoint::copy_crawls): on AMD Zen 3 a crawling kernel copy made a
// 128 KiB call 1.4-3x slower (docs/mpi.md).
void NodeGroup::copy_piece(const NodeReduction& r, const Wanted (&want)[2], std::size_t a,
                           std::size_t m) {
  const std::size_t es = r.op->elem_size, bytes = m * es;
  const int q = rank_, peer = 1 - rank_;
  PeerEndpoint& other_process = *peers_[static_cast<std::size_t>(peer)];
  auto at = [&](std::uint64_t address) { return reinterpret_cast<std::byte*>(address) + a * es; };
  const std::byte* their_input = at(slot(peer).addresses.input);
  std::string why;
  const std::byte* other = nullptr;
  auto other_input = [&] {
    if (other == nullptr) {
      std::byte* into = at_line_offset_of(accumulator_.data(), their_input);
      require(other_process.copy_from(their_input, into, bytes, why), why);
      other = into;
    }
    return other;
  };
  auto send = [&](std::byte* to, const std::byte* value) {
    if (other_process.copy_crawls(to, value)) {
      if (bounce_.empty()) bounce_.resize(chunk_ + 64);
      std::byte* matched = at_line_offset_of(bounce_.data(), to);
      copy_bytes(matched, value, bytes);
      value = matched;
    }
    require(other_process.copy_to(to, value, bytes, why), why);
  };
  const std::byte* both = nullptr;
  for (int p : {q, peer}) {
    const Wanted& w = want[p];
    if (!w.any()) continue;
    std::byte* to = at(w.to);  // in p's memory
    std::byte* local_to = p == q ? to : nullptr;
    const std::byte* value = nullptr;
    if (w.last == 1) {
      if (both == nullptr) {
        // Folded for the peer only: at its output's line offset.
        std::byte* into = local_to != nullptr ? local_to : at_line_offset_of(scratch_.data(), to);
        const std::byte* x_q = bytes_at(r.in, a, es);
        const std::byte* x_peer = other_input();
        r.op->apply(q == 0 ? x_q : x_peer, q == 0 ? x_peer : x_q, into, m);
        both = into;
      }
      value = both;
    } else if (q == 0) {
      value = bytes_at(r.in, a, es);  // x_0 is mine
    } else if (local_to != nullptr) {
      // x_0 is the peer's, and I want it: straight into place, unless the
      // kernel's copy would crawl between the two buffers.
      if (other == nullptr && !other_process.copy_crawls(local_to, their_input)) {
        require(other_process.copy_from(their_input, local_to, bytes, why), why);
      } else {
        copy_bytes(local_to, other_input(), bytes);
      }
      continue;
    } else {
      value = other_input();
    }
    if (p == q) {
      copy_if_distinct(local_to, value, bytes);
    } else {
      send(to, value);
    }
  }
}

}  // namespace hreduce::detail
