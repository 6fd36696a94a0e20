// The hwloc topology of the machine this process runs on, loaded once and
// shared by binding and NUMA allocation. Private to src/topology: it is the
// only header that exposes hwloc types.
#pragma once

#include <hwloc.h>

namespace hreduce::detail {

// nullptr when hwloc could not load this machine; callers then fall back
// (no binding, first-touch memory). Safe to call from any thread.
hwloc_topology_t system_hwloc();

}  // namespace hreduce::detail
