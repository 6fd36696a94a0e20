#include "src/topology/system_hwloc.hpp"

#include <mutex>

namespace hreduce::detail {

hwloc_topology_t system_hwloc() {
  // Deliberately never destroyed: NumaBuffers and pinned threads may outlive
  // static destruction (a static buffer, a detached thread), and hwloc_free
  // needs the topology. It stays reachable, so leak checkers accept it.
  static hwloc_topology_t topology = nullptr;
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    hwloc_topology_t candidate = nullptr;
    if (hwloc_topology_init(&candidate) != 0) return;
    if (hwloc_topology_load(candidate) != 0) {
      hwloc_topology_destroy(candidate);
      return;
    }
    topology = candidate;
  });
  // A loaded topology is read-only, which hwloc documents as safe to use
  // from many threads at once.
  return topology;
}

}  // namespace hreduce::detail
