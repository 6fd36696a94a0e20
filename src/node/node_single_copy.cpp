// The node level's single-copy path (the picture in node_group.hpp): the one
// process that receives reads the others' private inputs straight from
// their memory, one read each, and folds them in rank order; the others
// only wait until it has read them.
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

bool NodeGroup::takes_single_copy(const NodeReduction& r) const {
  // Only what every process announced decides: all take the same path.
  if (!single_copy_ || size_ < 2 || size_ > kNodeSingleCopyMaxProcesses) return false;
  // An op that may throw would have to tell the others; the chunks do.
  if (r.op->may_throw || r.op->elem_size > chunk_) return false;
  // From one chunk up the chunks overlap staging with folding and split
  // the fold between the processes, which beats one process reading and
  // folding everything (measured: docs/performance.md).
  const std::size_t bytes = r.count * r.op->elem_size;
  if (bytes < kNodeSingleCopyBytes || bytes >= chunk_) return false;
  const int s = static_cast<int>(ops_ % kNodeSlots);
  std::uint32_t readers = 0;
  for (int q = 0; q < size_; ++q) {
    const std::uint32_t reads = area(q).slot[s].direct.reads_others;
    // A total and a prefix both, in place, would read an input it rewrote.
    if (reads > 1) return false;
    readers += reads;
  }
  return readers == 1;
}

void NodeGroup::fold_remote(const NodeReduction& r, int first, int last, std::size_t lo,
                            std::size_t hi, void* dest) {
  const std::size_t es = r.op->elem_size;
  const int s = static_cast<int>(ops_ % kNodeSlots);
  // Pieces as large as the spare buffers: a read costs a system call and
  // pinning the pages, and one read per input measured fastest.
  const std::size_t piece = chunk_ / es;
  std::byte* const spare[2] = {accumulator_.data(), scratch_.data()};
  if (first == last && first != rank_) {
    // One input, another's: read straight into place, in one call.
    std::string why;
    const auto* remote =
        reinterpret_cast<const std::byte*>(area(first).slot[s].direct.input_address) + lo * es;
    if (!read_process_memory(pid(first), remote, dest, (hi - lo) * es, why)) {
      throw TransportError(why);
    }
    return;
  }
  for (std::size_t a = lo; a < hi; a += piece) {
    const std::size_t m = std::min(piece, hi - a);
    std::byte* to = static_cast<std::byte*>(dest) + (a - lo) * es;
    // x_q over [a, a + m): this process's own in place, another's read
    // into `buffer`.
    auto input = [&](int q, std::byte* buffer) -> const std::byte* {
      if (q == rank_) return static_cast<const std::byte*>(r.in) + a * es;
      const auto* remote =
          reinterpret_cast<const std::byte*>(area(q).slot[s].direct.input_address) + a * es;
      std::string why;
      if (!read_process_memory(pid(q), remote, buffer, m * es, why)) throw TransportError(why);
      return buffer;
    };
    if (first == last) {  // this process's own input only
      copy_if_distinct(to, input(first, nullptr), m * es);
      continue;
    }
    // Partial folds stay in the spare buffers and only the last one writes
    // `to`: in place, `to` is this process's input, which a later step
    // may still read.
    const std::byte* acc = input(first, spare[0]);
    for (int q = first + 1; q <= last; ++q) {
      const std::byte* x = input(q, spare[1]);
      std::byte* into = q == last ? to : spare[0];
      r.op->apply(acc, x, into, m);
      acc = into;
    }
  }
}

std::string NodeGroup::reduce_single_copy(const NodeReduction& r) {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  ProcessArea& mine = area(rank_);
  // The first process's inclusive prefix is its own input.
  if (r.prefix != nullptr && r.inclusive && rank_ == 0) {
    copy_if_distinct(r.prefix, r.in, r.count * r.op->elem_size);
  }
  if (mine.slot[s].direct.reads_others != 0) {
    try {
      if (r.out_hi > r.out_lo) {
        fold_remote(r, 0, size_ - 1, r.out_lo, r.out_hi, r.out);
      } else {
        fold_remote(r, 0, r.inclusive ? rank_ : rank_ - 1, 0, r.count, r.prefix);
      }
    } catch (...) {
      std::strncpy(mine.fold_failure, current_exception_text(), sizeof mine.fold_failure - 1);
      mine.fold_failure[sizeof mine.fold_failure - 1] = '\0';
      mine.fold_failed = ops_;  // released by `released` below
    }
    publish(mine.released, ops_);
  }
  // Every input stays as it is until its reader is done with it.
  for (int q = 0; q < size_; ++q) {
    if (q == rank_ || area(q).slot[s].direct.reads_others == 0) continue;
    wait(area(q).released, ops_, q, "finish reading this process's input");
    if (area(q).fold_failed == ops_) {
      return marked(ErrorKind::transport,
                    std::string(to_string(kind_)) + ": process " +
                        std::to_string(first_process_ + q) +
                        " could not read another's input: " + area(q).fold_failure);
    }
  }
  if (mine.fold_failed == ops_) {
    return marked(ErrorKind::transport,
                  std::string(to_string(kind_)) + ": process " +
                      std::to_string(first_process_ + rank_) +
                      " could not read another's input: " + mine.fold_failure);
  }
  return {};
}

}  // namespace hreduce::detail
