// The node level's single-copy path for two processes (the picture in
// node_group.hpp). The vector is cut in two; process q computes every result
// the two processes need over its part, reading the other's input and
// writing the other's output directly in its memory (cross_memory.hpp).
// Where the cut falls depends on the work: halves for copies (exscan) and
// for two receivers, most to a single receiver that folds (all of a short
// vector), and for parts of the total (reduce_scatter) each process its
// own part.
#include <algorithm>
#include <cstring>
#include <string>

#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/failure.hpp"
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

NodeGroup::SingleCopyPlan NodeGroup::single_copy_plan(const NodeReduction& r) const {
  using Way = SingleCopyPlan::Way;
  // Called where node_way() chose the single copy (two processes, a long
  // enough vector, an op that cannot throw). Only what both processes
  // announced decides the rest: both take the same path.
  const std::size_t es = r.op->elem_size, bytes = r.count * es;
  const int s = static_cast<int>(ops_ % kNodeSlots);
  const Direct* d[2] = {&area(0).slot[s].direct, &area(1).slot[s].direct};
  if (d[0]->total == 2 || d[1]->total == 2) {
    // Parts of the total (reduce_scatter): each process folds its own part,
    // reading the other's input there, so every byte moves once, unless
    // its output lies over the input that the other reads meanwhile (in
    // place): then the chunks.
    for (int p = 0; p < 2; ++p) {
      const Direct& mine = *d[p];
      const Direct& other = *d[1 - p];
      if (mine.prefix_address != 0) return {};
      if (mine.total == 0 || other.total == 0) continue;
      const std::uint64_t out_lo = mine.output_address,
                          out_hi = out_lo + (mine.out_hi - mine.out_lo) * es;
      const std::uint64_t read_lo = mine.input_address + other.out_lo * es,
                          read_hi = mine.input_address + other.out_hi * es;
      if (out_lo < read_hi && read_lo < out_hi) return {};
    }
    return {Way::own_parts, 0};
  }
  int folders = 0, receiver = 0;
  for (int p = 0; p < 2; ++p) {
    // A total and a prefix both: the chunks.
    if (d[p]->total == 1 && d[p]->prefix_address != 0) return {};
    const Wanted w = wanted(*d[p], p, area(p).slot[s].inclusive != 0);
    if (w.any() && w.last == 1) ++folders, receiver = p;
  }
  // Cuts on a cache line where the element size allows.
  auto on_line = [&](std::size_t elements) { return std::min(r.count, whole_lines(elements, es)); };
  const std::size_t half = on_line((r.count + 1) / 2);
  // Copies only (an exscan), or two receivers (allreduce): each process
  // does half.
  if (folders != 1) return {Way::cut, half};
  // One receiver: below kNodeSplitFoldBytes it does everything; above, it
  // folds 3/5 and the other reads, folds and writes back 2/5, which evens
  // their time when reading, folding and writing cost alike. A scan's
  // process 0 also copies its own input to its prefix: then 4/5. Both
  // shares beat halves where measured (64 KiB to 1 MiB).
  if (bytes < kNodeSplitFoldBytes) return {Way::cut, receiver == 0 ? r.count : 0};
  const int other = 1 - receiver;
  const bool other_copies = d[other]->prefix_address != 0 && area(other).slot[s].inclusive != 0 &&
                            d[other]->prefix_address != d[other]->input_address;
  const std::size_t fifths = other_copies ? 4 : 3;
  // The other makes two system calls to the receiver's one: a fixed cost
  // that the receiver evens by taking kNodeSplitFoldExtraBytes more.
  const std::size_t extra = kNodeSplitFoldExtraBytes / es;
  const std::size_t receivers =
      std::min(r.count, r.count / 5 * fifths + r.count % 5 * fifths / 5 + extra);
  return {Way::cut, on_line(receiver == 0 ? receivers : r.count - receivers)};
}

std::string NodeGroup::reduce_single_copy(const NodeReduction& r, const SingleCopyPlan& plan) {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  const std::size_t es = r.op->elem_size;
  const int q = rank_, peer = 1 - rank_;
  const int peer_pid = pid(peer);
  ProcessArea& mine = area(q);
  const Direct& theirs = area(peer).slot[s].direct;
  Wanted want[2];
  std::size_t lo = 0, hi = 0;
  if (plan.way == SingleCopyPlan::Way::own_parts) {
    // Only my part, for me: `to` is where element 0 of the total would go.
    const Direct& d = area(q).slot[s].direct;
    if (d.total != 0) want[q] = {0, 1, d.output_address - d.out_lo * es};
    lo = d.out_lo, hi = d.out_hi;
  } else {
    for (int p = 0; p < 2; ++p) {
      want[p] = wanted(area(p).slot[s].direct, p, area(p).slot[s].inclusive != 0);
    }
    lo = q == 0 ? 0 : plan.cut, hi = q == 0 ? plan.cut : r.count;
  }
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
