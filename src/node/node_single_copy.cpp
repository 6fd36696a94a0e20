// The node level's single-copy path for two processes (the picture in
// node_group.hpp). The vector is cut in two; process q computes every result
// the two processes need over its part, reading the other's input and
// writing the other's output directly in its memory (cross_memory.hpp).
// Where the cut falls depends on the work: halves for copies (exscan) and
// for two receivers, everything to a single receiver that folds.
#include <algorithm>
#include <cstring>
#include <string>

#include "src/engine/copy.hpp"
#include "src/engine/exception_text.hpp"
#include "src/engine/failure.hpp"
#include "src/node/cross_memory.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {
namespace {

// What process p receives, as a fold x_first ∘ … ∘ x_last over the whole
// vector into `to` (an address in p's memory); first > last: nothing.
struct Wanted {
  int first = 1, last = 0;
  std::uint64_t to = 0;
  bool any() const { return first <= last; }
};

template <class Direct>
Wanted wanted(const Direct& d, int p, bool inclusive) {
  if (d.total != 0) return {0, 1, d.output_address};
  if (d.prefix_address == 0) return {};
  if (p == 1) return {0, inclusive ? 1 : 0, d.prefix_address};
  // Process 0's inclusive prefix is its own input, which it copies itself.
  return {};
}

}  // namespace

std::size_t NodeGroup::single_copy_cut(const NodeReduction& r) const {
  constexpr std::size_t kNone = ~std::size_t{0};
  // Only what both processes announced decides: both take the same path.
  if (!single_copy_ || size_ != 2) return kNone;
  // An op that may throw would have to tell the other; the chunks do.
  const std::size_t es = r.op->elem_size, bytes = r.count * es;
  if (r.op->may_throw || es > chunk_ || bytes < kNodeSingleCopyBytes) return kNone;
  const int s = static_cast<int>(ops_ % kNodeSlots);
  int folders = 0, receiver = 0;
  for (int p = 0; p < 2; ++p) {
    const Direct& d = area(p).slot[s].direct;
    // A part of the total (reduce_scatter), or a total and a prefix both:
    // the chunks.
    if (d.total > 1 || (d.total == 1 && d.prefix_address != 0)) return kNone;
    const Wanted w = wanted(d, p, area(p).slot[s].inclusive != 0);
    if (w.any() && w.last == 1) ++folders, receiver = p;
  }
  // Halves on a cache line where the element size allows.
  std::size_t half = (r.count + 1) / 2;
  if (es <= 64 && 64 % es == 0) {
    half = std::min(r.count, (half + 64 / es - 1) / (64 / es) * (64 / es));
  }
  // Copies only (an exscan): each process moves half, at any length.
  if (folders == 0) return half;
  // Folds: from one chunk up the chunks win (they overlap the steps and
  // split the fold without system calls); below, one receiver reads and
  // folds everything itself (one system call, no writing back), and two
  // (allreduce) split the work (measured: docs/performance.md).
  if (bytes >= chunk_) return kNone;
  if (folders == 2) return half;
  return receiver == 0 ? r.count : 0;
}

std::string NodeGroup::reduce_single_copy(const NodeReduction& r, std::size_t cut) {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  const std::size_t es = r.op->elem_size;
  const int q = rank_, peer = 1 - rank_;
  const int peer_pid = pid(peer);
  ProcessArea& mine = area(q);
  const Direct& theirs = area(peer).slot[s].direct;
  Wanted want[2];
  for (int p = 0; p < 2; ++p) {
    want[p] = wanted(area(p).slot[s].direct, p, area(p).slot[s].inclusive != 0);
  }
  const std::size_t lo = q == 0 ? 0 : cut, hi = q == 0 ? cut : r.count;
  const std::size_t piece = chunk_ / es;
  auto at = [&](std::uint64_t address, std::size_t element) {
    return reinterpret_cast<std::byte*>(address) + element * es;
  };
  try {
    std::string why;
    auto check = [&](bool done) {
      if (!done) throw TransportError(why);
    };
    if (q == 0 && r.prefix != nullptr && r.inclusive) {
      copy_if_distinct(r.prefix, r.in, r.count * es);
    }
    const auto own_input = reinterpret_cast<std::uint64_t>(r.in);
    for (std::size_t a = lo; a < hi; a += piece) {
      const std::size_t m = std::min(piece, hi - a), bytes = m * es;
      // x_peer over the piece, read once when some result needs it.
      const std::byte* other = nullptr;
      auto other_input = [&] {
        if (other == nullptr) {
          check(read_process_memory(peer_pid, at(theirs.input_address, a), accumulator_.data(),
                                    bytes, why));
          other = accumulator_.data();
        }
        return other;
      };
      // x_0 ∘ x_1 over the piece, computed once for whoever needs it:
      // first for this process, straight into its output.
      const std::byte* both = nullptr;
      for (int p : {q, peer}) {
        const Wanted& w = want[p];
        if (!w.any()) continue;
        std::byte* local_to = p == q ? at(w.to, a) : nullptr;
        const std::byte* value = nullptr;
        if (w.last == 1) {
          if (both == nullptr) {
            std::byte* into = local_to != nullptr ? local_to : scratch_.data();
            const std::byte* x_q = at(own_input, a);
            const std::byte* x_peer = other_input();
            r.op->apply(q == 0 ? x_q : x_peer, q == 0 ? x_peer : x_q, into, m);
            both = into;
          }
          value = both;
        } else if (q == 0) {
          value = at(own_input, a);  // x_0 is mine
        } else if (local_to != nullptr) {
          // x_0 is the peer's, and I want it: straight into place.
          if (other != nullptr) {
            std::memcpy(local_to, other, bytes);
          } else {
            check(read_process_memory(peer_pid, at(theirs.input_address, a), local_to, bytes, why));
          }
          continue;
        } else {
          value = other_input();
        }
        if (p == q) {
          copy_if_distinct(local_to, value, bytes);
        } else {
          check(write_process_memory(peer_pid, at(w.to, a), value, bytes, why));
        }
      }
    }
  } catch (...) {
    std::strncpy(mine.fold_failure, current_exception_text(), sizeof mine.fold_failure - 1);
    mine.fold_failure[sizeof mine.fold_failure - 1] = '\0';
    mine.fold_failed = ops_;  // released by `released` below
  }
  publish(mine.released, ops_);
  // My input and output stay mine only once the other is done with them.
  wait(area(peer).released, ops_, peer, "finish with this process's input and output");
  for (int p : {0, 1}) {
    if (area(p).fold_failed == ops_) {
      return marked(ErrorKind::transport,
                    std::string(to_string(kind_)) + ": process " +
                        std::to_string(first_process_ + p) +
                        " could not reach the other's memory: " + area(p).fold_failure);
    }
  }
  return {};
}

}  // namespace hreduce::detail
