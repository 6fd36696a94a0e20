// The flat machine model: counts are derived from the PUs so that a
// topology built by hand (tests, irregular machines) and one built by the
// hwloc loader obey the same invariants.
#include <algorithm>
#include <string>
#include <utility>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

namespace hreduce {
namespace {

std::string describe(const Pu& pu, int position) {
  return "Topology: PU at position " + std::to_string(position) + " (logical index " +
         std::to_string(pu.logical_index) + ")";
}

// Everything downstream indexes arrays by PU and container indices, so a
// malformed PU list is rejected here rather than read out of bounds later.
void check_pu(const Pu& pu, int position) {
  if (pu.logical_index != position) {
    throw ArgumentError(describe(pu, position) + ": PUs must be listed in logical order 0..n-1");
  }
  if (pu.in(Level::machine) != 0) {
    throw ArgumentError(describe(pu, position) + ": machine container is " +
                        std::to_string(pu.in(Level::machine)) + ", expected 0");
  }
  if (pu.in(Level::pu) != position) {
    throw ArgumentError(describe(pu, position) + ": pu container is " +
                        std::to_string(pu.in(Level::pu)) + ", expected its own index");
  }
  for (int level = 0; level < kLevelCount; ++level) {
    if (pu.container[level] < -1) {
      throw ArgumentError(describe(pu, position) + ": " +
                          std::string(to_string(static_cast<Level>(level))) + " container is " +
                          std::to_string(pu.container[level]) + ", expected -1 or more");
    }
  }
}

}  // namespace

Topology::Topology(std::string source, bool is_this_system, std::vector<Pu> pus,
                   std::vector<int> numa_os_indices,
                   std::array<std::uint64_t, kLevelCount> cache_bytes)
    : source_(std::move(source)), is_this_system_(is_this_system), pus_(std::move(pus)),
      numa_os_indices_(std::move(numa_os_indices)), cache_bytes_(cache_bytes) {
  if (pus_.empty()) throw ArgumentError("Topology \"" + source_ + "\": no PUs");
  for (int i = 0; i < pu_count(); ++i) {
    check_pu(pus_[i], i);
    // Logical indices number every object of a level, so the highest one
    // seen (plus one) is the count; a level no PU sits under counts 0.
    for (int level = 0; level < kLevelCount; ++level) {
      counts_[level] = std::max(counts_[level], pus_[i].container[level] + 1);
    }
  }
  // CPU-less NUMA nodes may add entries past count(numa), never fewer.
  if (static_cast<int>(numa_os_indices_.size()) < count(Level::numa)) {
    throw ArgumentError("Topology \"" + source_ + "\": " + std::to_string(numa_os_indices_.size()) +
                        " NUMA OS indices for " + std::to_string(count(Level::numa)) +
                        " NUMA nodes");
  }
}

int Topology::numa_os_index(int numa_logical) const {
  if (numa_logical < 0 || numa_logical >= static_cast<int>(numa_os_indices_.size())) {
    throw ArgumentError("Topology::numa_os_index: NUMA node " + std::to_string(numa_logical) +
                        " out of range [0, " + std::to_string(numa_os_indices_.size()) + ")");
  }
  return numa_os_indices_[numa_logical];
}

}  // namespace hreduce
