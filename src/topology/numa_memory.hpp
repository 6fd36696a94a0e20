// Memory placed on NUMA nodes, for buffers that the threads of a node read
// and write most (docs/spec.md, "Where memory lives"). Whatever happens to
// the request, a NumaBuffer remembers it, so tests on any machine can check
// what was asked for, and where the kernel reports it, what it did.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hreduce/topology.hpp"

namespace hreduce::detail {

// Bytes [lo, hi) of a buffer that belong on logical NUMA node `numa` (-1:
// no preference).
struct NumaRange {
  std::size_t lo = 0, hi = 0;
  int numa = -1;
  bool operator==(const NumaRange&) const = default;
};

// Owns `bytes` of zeroed, page-aligned memory. On this machine
// (Topology::discover()) with a valid NUMA node it binds the pages to that
// node (mbind) before any is touched, so each lands there whoever writes it
// first. Otherwise, or when the kernel refuses the binding (containers
// often do), it falls back to aligned memory that the constructing thread
// touches first, so Linux's first-touch policy puts it on that thread's
// node: build the buffer from a thread already pinned to the node you want.
class NumaBuffer {
 public:
  NumaBuffer() = default;
  // numa_logical: logical NUMA index, or -1 for no preference. Throws Error
  // when the allocation itself fails.
  NumaBuffer(const Topology& topology, std::size_t bytes, int numa_logical);
  // The same with pages that follow `ranges` (page-aligned offsets, as
  // page_spans gives them), each bound to its node; first touch as above
  // only when no range could be bound.
  NumaBuffer(const Topology& topology, std::size_t bytes, std::vector<NumaRange> ranges);
  ~NumaBuffer();

  NumaBuffer(NumaBuffer&& other) noexcept;
  NumaBuffer& operator=(NumaBuffer&& other) noexcept;
  NumaBuffer(const NumaBuffer&) = delete;
  NumaBuffer& operator=(const NumaBuffer&) = delete;

  // nullptr when size() is 0.
  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  // True when the kernel took every binding requested; false for
  // first-touch memory.
  bool bound() const { return bound_; }
  // Where the pages were asked to live: one range over the whole buffer
  // for the first constructor, empty for no preference or zero bytes.
  const std::vector<NumaRange>& requested() const { return requested_; }

 private:
  enum class Source { none, mapped, aligned };
  void release() noexcept;
  void fall_back_to_first_touch();

  void* data_ = nullptr;
  std::size_t size_ = 0;
  Source source_ = Source::none;
  bool bound_ = false;
  std::vector<NumaRange> requested_;
};

// Binds the whole pages inside [data, data + bytes) to logical NUMA node
// `numa_logical` of this machine (mbind, MPOL_BIND), moving the pages
// already touched. Memory shared between processes (a node segment) takes
// the binding for every process that maps it. False, and nothing changed,
// when the topology is not this machine, the node does not exist, no whole
// page lies inside, or the kernel refuses.
bool bind_pages(const Topology& topology, void* data, std::size_t bytes, int numa_logical);

// Where the pages of [data, data + bytes) sit now, for people: "NUMA node
// 0", "NUMA nodes 0,1", "not touched yet" (Linux places a page on first
// touch), or "unknown" where the kernel does not say.
std::string memory_location(const void* data, std::size_t bytes);

}  // namespace hreduce::detail
