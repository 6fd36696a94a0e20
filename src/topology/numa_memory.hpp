// Memory placed on one NUMA node, for buffers that the threads of that node
// read and write most (docs/spec.md: "buffers placed on the NUMA node of the threads
// that touch them").
#pragma once

#include <cstddef>
#include <string>

#include "hreduce/topology.hpp"

namespace hreduce::detail {

// Owns `bytes` of page-aligned memory. On this machine (Topology::discover())
// with a valid NUMA node it asks hwloc to bind the pages to that node.
// Otherwise, or when the kernel refuses the binding (containers often do),
// it falls back to aligned memory that the constructing thread touches
// first, so Linux's first-touch policy puts it on that thread's node: build
// the buffer from a thread already pinned to the node you want.
class NumaBuffer {
 public:
  NumaBuffer() = default;
  // numa_logical: logical NUMA index, or -1 for no preference. Throws Error
  // when the allocation itself fails.
  NumaBuffer(const Topology& topology, std::size_t bytes, int numa_logical);
  ~NumaBuffer();

  NumaBuffer(NumaBuffer&& other) noexcept;
  NumaBuffer& operator=(NumaBuffer&& other) noexcept;
  NumaBuffer(const NumaBuffer&) = delete;
  NumaBuffer& operator=(const NumaBuffer&) = delete;

  // nullptr when size() is 0.
  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  // True when hwloc bound the pages to the node (strictly; it fails rather
  // than silently allocating elsewhere); false for first-touch memory.
  bool placed_by_hwloc() const { return placed_by_hwloc_; }

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool placed_by_hwloc_ = false;
};

// Where the pages of [data, data + bytes) sit now, for people: "NUMA node
// 0", "NUMA nodes 0,1", "not touched yet" (Linux places a page on first
// touch), or "unknown" where the kernel does not say.
std::string memory_location(const void* data, std::size_t bytes);

}  // namespace hreduce::detail
