// Scratch memory for the inter-process algorithms and the hybrid layer that
// runs them, kept across calls so a steady state allocates nothing.
#pragma once

#include <cstddef>
#include <vector>

namespace hreduce::detail {

// Every slot of a Workspace and who uses it. One Workspace serves a process
// group's leader (InterProcessGroup::workspace), one call at a time: the
// hybrid layer holds its slots while it runs the inter-process algorithms,
// so its slots and theirs differ, and an algorithm that calls another
// (reduce_then_scatter runs the schedule executor) keeps its own data out of
// the callee's slots. Both lists use a slot for one buffer at a time.
//
// The inter-process algorithms (src/inter/*.cpp):
inline constexpr int kSlotReceive = 0;  // incoming data before it is combined (all of them)
inline constexpr int kSlotKeep = 1;     // input copy, accumulator, scan message (pairwise,
                                        // hypercube scan, reduce_then_scatter)
// The hybrid layer (src/hybrid/hybrid_execute.cpp), leader only:
inline constexpr int kSlotPartial = 8;      // reduce: a non-root leader's partial result; scan:
                                            // the process total; reduce_scatter: the whole vector
inline constexpr int kSlotResult = 9;       // scan: the process's prefix; reduce_scatter: its block
inline constexpr int kSlotWithinNode = 10;  // scan over several nodes: the prefix inside the node
inline constexpr int kSlotLowerNodes = 11;  // scan over several nodes: the lower nodes' total
inline constexpr int kSlotCarry = 12;       // left-fold chain: the fold of the lower processes
inline constexpr int kSlotHead = 13;        // left-fold chain: that fold ∘ the leader's input
static_assert(kSlotReceive < kSlotKeep && kSlotKeep < kSlotPartial && kSlotPartial < kSlotResult &&
                  kSlotResult < kSlotWithinNode && kSlotWithinNode < kSlotLowerNodes &&
                  kSlotLowerNodes < kSlotCarry && kSlotCarry < kSlotHead,
              "every workspace slot has one user");

class Workspace {
 public:
  // A buffer of at least `bytes` bytes; slots are independent buffers.
  void* get(int slot, std::size_t bytes) {
    if (static_cast<int>(buffers_.size()) <= slot) buffers_.resize(slot + 1);
    std::vector<std::byte>& b = buffers_[slot];
    if (b.size() < bytes) b.resize(bytes);
    return b.data();
  }

 private:
  std::vector<std::vector<std::byte>> buffers_;
};

}  // namespace hreduce::detail
