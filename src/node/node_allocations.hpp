// Team::allocate's memory: buffers that every process of the node maps, so
// that the chunk ring's folders read a process's input and write its output
// where they lie, skipping the copies through the staging chunks.
//
//   direct     a process whose input, output or prefix lies in such memory
//              says where in its announcement (a NodePlace): it skips its
//              stage (the folders read its input there) or its drain (the
//              folders write its part of result[s], or its prefix, there
//              right after folding their slice). The steps and waits stay.
//
// A pointer means nothing in another process, so a buffer is named by
// place: the k-th allocation of its process, and an offset. Every process
// calls allocate() in step, so the k-th allocation of each process is
// allocation k everywhere; every process maps every process's allocations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/node/segment.hpp"

namespace hreduce::detail {

class Channel;

// Where a buffer sits in the memory of NodeAllocations: the k-th
// allocation of its process, at an offset (allocation -1: elsewhere). It
// lives in the shared segment, so it holds no pointer.
struct NodePlace {
  std::int32_t allocation = -1;
  std::uint64_t offset = 0;
  bool shared() const { return allocation >= 0; }
  friend bool operator==(const NodePlace&, const NodePlace&) = default;
};

class NodeAllocations {
 public:
  NodeAllocations(int rank, int size) : rank_(rank), size_(size) {}

  // Collective over the node's processes (`node` connects exactly them,
  // each calls it in step, sizes may differ): `bytes` that every process
  // maps, alive as long as this registry.
  void* allocate(Channel& node, std::size_t bytes);
  // Where `bytes` at `data` of this process lie, if all in one allocation.
  NodePlace find(const void* data, std::size_t bytes) const;
  // Process `rank`'s buffer at `place`, as this process maps it.
  std::byte* at(int rank, const NodePlace& place) const;

 private:
  int rank_, size_;
  // Every process's allocations, this process's own included.
  std::vector<std::vector<SharedSegment>> peers_;
};

}  // namespace hreduce::detail
