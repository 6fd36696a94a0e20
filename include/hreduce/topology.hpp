// The machine as hreduce sees it: processing units (PUs) and, for each, the
// package, NUMA node, caches and core that contain it.
//
// The model is deliberately flat: every PU records the logical index of its
// container at each level. Grouping members "by NUMA node, then by L3" is
// then a lookup, whether the hardware nests those levels strictly or not.
// hwloc stays behind this interface (src/topology/); nothing else includes
// hwloc.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hreduce {

// Outermost first. `machine` always has exactly one object.
enum class Level : int { machine, package, numa, l3, l2, l1, core, pu };
inline constexpr int kLevelCount = 8;

std::string_view to_string(Level level);
// Accepts "machine", "package" (also "pack", "socket"), "numa", "l3", "l2",
// "l1", "core", "pu"; nullopt for anything else.
std::optional<Level> parse_level(std::string_view name);
// Parses a comma-separated list such as "numa,l3,core"; throws Error naming
// the bad entry.
std::vector<Level> parse_levels(std::string_view list);

// One hardware thread.
struct Pu {
  int logical_index = 0;  // 0..pu_count-1, in the topology's depth-first order
  int os_index = 0;       // the number the OS uses (binding)
  // Logical index of the object of each level that contains this PU, or -1
  // when the machine has no object of that level above it. Indexed by Level.
  std::array<int, kLevelCount> container{};

  int in(Level level) const { return container[static_cast<int>(level)]; }
};

class Topology {
 public:
  // This machine, as hwloc discovers it.
  static Topology discover();
  // An hwloc synthetic description, e.g. "pack:2 numa:2 l3:2 core:4 pu:2".
  // Throws Error quoting the string when hwloc rejects it.
  static Topology synthetic(std::string_view description);
  // An hwloc XML export (`lstopo file.xml`). Throws Error naming the file.
  static Topology from_xml(const std::string& path);

  // True only for discover(): binding and NUMA allocation act on this one.
  bool is_this_system() const { return is_this_system_; }
  // "this machine", "synthetic: <string>" or "xml: <path>".
  const std::string& source() const { return source_; }

  const std::vector<Pu>& pus() const { return pus_; }
  int pu_count() const { return static_cast<int>(pus_.size()); }
  // Number of objects of a level (0 when the machine has none).
  int count(Level level) const { return counts_[static_cast<int>(level)]; }
  // OS index of the NUMA node with the given logical index.
  int numa_os_index(int numa_logical) const;
  // Size in bytes of one cache of the level (l1, l2, l3), 0 when unknown.
  std::uint64_t cache_bytes(Level level) const { return cache_bytes_[static_cast<int>(level)]; }

  // Indented text tree: machine, packages, NUMA nodes, caches, cores, PUs
  // (with OS indices), skipping levels the machine does not have.
  std::string render() const;

  // Builds a topology from already-extracted data (used by the hwloc
  // loader and by tests that need an irregular machine).
  Topology(std::string source, bool is_this_system, std::vector<Pu> pus,
           std::vector<int> numa_os_indices, std::array<std::uint64_t, kLevelCount> cache_bytes);

 private:
  std::string source_;
  bool is_this_system_ = false;
  std::vector<Pu> pus_;
  std::array<int, kLevelCount> counts_{};
  std::vector<int> numa_os_indices_;
  std::array<std::uint64_t, kLevelCount> cache_bytes_{};
};

// How team members are laid onto PUs.
//  - compact: member i on PU i (members sharing caches are neighbours in
//    rank order, so topology-shaped trees keep contiguous rank ranges);
//  - scatter: consecutive members spread as far apart as possible (different
//    packages, then NUMA nodes, then cores), for bandwidth-bound work.
// More members than PUs wrap round-robin over the same order.
enum class PlacementPolicy { compact, scatter };
std::string_view to_string(PlacementPolicy policy);
std::optional<PlacementPolicy> parse_placement(std::string_view name);

struct Placement {
  PlacementPolicy policy = PlacementPolicy::compact;
  std::vector<int> pu_of_member;  // logical PU index, one per member

  int members() const { return static_cast<int>(pu_of_member.size()); }
};

// Throws Error when members < 1.
Placement place(const Topology& topology, int members, PlacementPolicy policy);
// The same over the PUs `allowed` alone (logical indices, e.g. those a
// process was bound to by mpirun): each process of a node then keeps its
// members on its own cores. Throws Error when `allowed` is empty.
Placement place(const Topology& topology, int members, PlacementPolicy policy,
                const std::vector<int>& allowed);

// The PUs this process may run on (hwloc_get_cpubind), as logical indices;
// every PU when the topology is not this machine or the binding is unknown.
std::vector<int> process_pus(const Topology& topology);

// Pins the calling thread to one PU of `topology`. Returns false, and warns
// once per process on stderr, when binding fails or the topology is not this
// system; never throws for a failed bind.
bool bind_current_thread(const Topology& topology, int pu_logical_index);

}  // namespace hreduce
