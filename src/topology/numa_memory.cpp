#include "src/topology/numa_memory.hpp"

#include <hwloc.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "hreduce/error.hpp"
#include "src/topology/system_hwloc.hpp"

namespace hreduce::detail {
namespace {

constexpr std::size_t kPage = 4096;

// nullptr when hwloc cannot or may not bind; the caller falls back.
void* alloc_on_node(const Topology& topology, std::size_t bytes, int numa_logical) {
  if (!topology.is_this_system() || numa_logical < 0 ||
      numa_logical >= topology.count(Level::numa)) {
    return nullptr;
  }
  hwloc_topology_t system = system_hwloc();
  const int os_index = topology.numa_os_index(numa_logical);
  if (system == nullptr || os_index < 0) return nullptr;
  hwloc_bitmap_t nodeset = hwloc_bitmap_alloc();
  if (nodeset == nullptr) return nullptr;
  hwloc_bitmap_only(nodeset, static_cast<unsigned>(os_index));
  // STRICT: without it hwloc hands back unbound memory when mbind is
  // refused, and placed_by_hwloc() would claim a placement that never
  // happened.
  void* memory = hwloc_alloc_membind(system, bytes, nodeset, HWLOC_MEMBIND_BIND,
                                     HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
  hwloc_bitmap_free(nodeset);
  return memory;
}

}  // namespace

NumaBuffer::NumaBuffer(const Topology& topology, std::size_t bytes, int numa_logical)
    : size_(bytes) {
  if (bytes == 0) return;
  data_ = alloc_on_node(topology, bytes, numa_logical);
  if (data_ != nullptr) {
    placed_by_hwloc_ = true;
    return;
  }
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  data_ = std::aligned_alloc(kPage, rounded);
  if (data_ == nullptr) {
    throw ArgumentError("NumaBuffer: cannot allocate " + std::to_string(bytes) + " bytes");
  }
  // The first write decides which node backs each page; make it this one.
  std::memset(data_, 0, rounded);
}

NumaBuffer::~NumaBuffer() { release(); }

NumaBuffer::NumaBuffer(NumaBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      placed_by_hwloc_(std::exchange(other.placed_by_hwloc_, false)) {}

NumaBuffer& NumaBuffer::operator=(NumaBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    placed_by_hwloc_ = std::exchange(other.placed_by_hwloc_, false);
  }
  return *this;
}

void NumaBuffer::release() noexcept {
  if (data_ == nullptr) return;
  if (placed_by_hwloc_) {
    hwloc_free(system_hwloc(), data_, size_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = 0;
  placed_by_hwloc_ = false;
}

std::string memory_location(const void* data, std::size_t bytes) {
  hwloc_topology_t system = system_hwloc();
  if (system == nullptr || data == nullptr || bytes == 0) return "unknown";
  hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
  if (nodes == nullptr) return "unknown";
  std::string text = "unknown";
  if (hwloc_get_area_memlocation(system, data, bytes, nodes, HWLOC_MEMBIND_BYNODESET) == 0) {
    const int count = hwloc_bitmap_weight(nodes);
    if (count == 0) {
      text = "not touched yet";
    } else {
      text = count == 1 ? "NUMA node " : "NUMA nodes ";
      bool first = true;
      unsigned os_index = 0;
      hwloc_bitmap_foreach_begin(os_index, nodes) {
        // Logical index, as hreduce topo prints nodes.
        hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(system, os_index);
        text += (first ? "" : ",") + std::to_string(node ? node->logical_index : os_index);
        first = false;
      }
      hwloc_bitmap_foreach_end();
    }
  }
  hwloc_bitmap_free(nodes);
  return text;
}

}  // namespace hreduce::detail
