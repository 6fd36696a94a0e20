#include "src/topology/numa_memory.hpp"

#include <hwloc.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "hreduce/error.hpp"
#include "src/topology/system_hwloc.hpp"

namespace hreduce::detail {
namespace {

constexpr std::size_t kPage = 4096;

std::size_t round_to_pages(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// The OS index of a logical NUMA node of this machine to bind to, or -1.
int bindable_node(const Topology& topology, int numa_logical) {
  if (!topology.is_this_system() || numa_logical < 0 ||
      numa_logical >= topology.count(Level::numa) || system_hwloc() == nullptr) {
    return -1;
  }
  return topology.numa_os_index(numa_logical);
}

}  // namespace

bool bind_pages(const Topology& topology, void* data, std::size_t bytes, int numa_logical) {
  const int os_index = bindable_node(topology, numa_logical);
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  // mbind takes whole pages; a page only partly inside may hold someone
  // else's data, so it keeps its policy.
  const std::uintptr_t lo = (start + page - 1) / page * page;
  const std::uintptr_t hi = (start + bytes) / page * page;
  if (os_index < 0 || data == nullptr || hi <= lo) return false;
  // mbind(2) itself rather than hwloc_set_area_membind: hwloc asks for
  // MPOL_PREFERRED_MANY unless told STRICT (a preference the kernel may
  // ignore under pressure), and with STRICT fails where a touched page
  // cannot move.
  constexpr int kBits = 64;
  std::vector<unsigned long> mask(static_cast<std::size_t>(os_index) / kBits + 2, 0);
  mask[static_cast<std::size_t>(os_index) / kBits] |= 1UL << (os_index % kBits);
  // MOVE: pages touched before the binding move too, so the binding says
  // where every page is, not only the pages still to come.
  return syscall(SYS_mbind, lo, hi - lo, MPOL_BIND, mask.data(), mask.size() * kBits,
                 MPOL_MF_MOVE) == 0;
}

NumaBuffer::NumaBuffer(const Topology& topology, std::size_t bytes, int numa_logical)
    : NumaBuffer(topology, bytes,
                 numa_logical >= 0 ? std::vector<NumaRange>{{0, bytes, numa_logical}}
                                   : std::vector<NumaRange>{}) {}

NumaBuffer::NumaBuffer(const Topology& topology, std::size_t bytes, std::vector<NumaRange> ranges)
    : size_(bytes), requested_(std::move(ranges)) {
  if (bytes == 0) {
    requested_.clear();
    return;
  }
  const std::size_t rounded = round_to_pages(bytes);
  const bool any_node = std::any_of(requested_.begin(), requested_.end(), [&](const NumaRange& r) {
    return bindable_node(topology, r.numa) >= 0;
  });
  // Fresh anonymous pages: zero, and placed only when first written.
  void* mapped =
      any_node ? mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
               : MAP_FAILED;
  if (mapped != MAP_FAILED) {
    bool all_bound = true, any_bound = false;
    for (const NumaRange& range : requested_) {
      // The last range takes the tail of its last page too.
      const std::size_t hi = range.hi >= bytes ? rounded : std::min(range.hi, rounded);
      const bool bound =
          range.lo < hi && bind_pages(topology, static_cast<std::byte*>(mapped) + range.lo,
                                      hi - range.lo, range.numa);
      all_bound &= bound;
      any_bound |= bound;
    }
    if (any_bound) {
      data_ = mapped;
      source_ = Source::mapped;
      bound_ = all_bound;
      return;
    }
    munmap(mapped, rounded);
  }
  fall_back_to_first_touch();
}

void NumaBuffer::fall_back_to_first_touch() {
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = round_to_pages(size_);
  data_ = std::aligned_alloc(kPage, rounded);
  if (data_ == nullptr) {
    throw ArgumentError("NumaBuffer: cannot allocate " + std::to_string(size_) + " bytes");
  }
  source_ = Source::aligned;
  // The first write decides which node backs each page; make it this one.
  std::memset(data_, 0, rounded);
}

NumaBuffer::~NumaBuffer() { release(); }

NumaBuffer::NumaBuffer(NumaBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      source_(std::exchange(other.source_, Source::none)),
      bound_(std::exchange(other.bound_, false)), requested_(std::exchange(other.requested_, {})) {}

NumaBuffer& NumaBuffer::operator=(NumaBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    source_ = std::exchange(other.source_, Source::none);
    bound_ = std::exchange(other.bound_, false);
    requested_ = std::exchange(other.requested_, {});
  }
  return *this;
}

void NumaBuffer::release() noexcept {
  switch (source_) {
    case Source::mapped: munmap(data_, round_to_pages(size_)); break;
    case Source::aligned: std::free(data_); break;
    case Source::none: break;
  }
  data_ = nullptr;
  size_ = 0;
  source_ = Source::none;
  bound_ = false;
  requested_.clear();
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
