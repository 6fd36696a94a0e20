// bind_current_thread(): pinning is an optimisation, never a reason to stop
// a run, so every failure becomes `false` plus one line on stderr.
#include <hwloc.h>
#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/topology/system_hwloc.hpp"
#include "src/topology/thread_cpus.hpp"

namespace hreduce {
namespace {

// A team of 64 threads failing to bind would otherwise print 64 identical
// lines; the first reason is enough to act on.
bool refuse(const std::string& reason) {
  static std::once_flag warned;
  std::call_once(warned, [&] {
    std::fprintf(stderr, "hreduce: warning: threads are not pinned (%s)\n", reason.c_str());
  });
  return false;
}

}  // namespace

bool bind_current_thread(const Topology& topology, int pu_logical_index) {
  if (!topology.is_this_system()) {
    return refuse("topology \"" + topology.source() + "\" is not this machine");
  }
  if (pu_logical_index < 0 || pu_logical_index >= topology.pu_count()) {
    return refuse("PU " + std::to_string(pu_logical_index) + " out of range [0, " +
                  std::to_string(topology.pu_count()) + ")");
  }
  hwloc_topology_t system = detail::system_hwloc();
  if (system == nullptr) return refuse("hwloc could not load this machine");

  const int os_index = topology.pus()[static_cast<std::size_t>(pu_logical_index)].os_index;
  if (os_index < 0) return refuse("PU " + std::to_string(pu_logical_index) + " has no OS index");
  hwloc_bitmap_t cpuset = hwloc_bitmap_alloc();
  if (cpuset == nullptr) return refuse("out of memory");
  hwloc_bitmap_only(cpuset, static_cast<unsigned>(os_index));
  errno = 0;
  const int rc = hwloc_set_cpubind(system, cpuset, HWLOC_CPUBIND_THREAD);
  const int error = errno;
  hwloc_bitmap_free(cpuset);
  if (rc != 0) {
    return refuse("binding to PU L#" + std::to_string(pu_logical_index) + " (P#" +
                  std::to_string(os_index) + ") failed: " + std::generic_category().message(error));
  }
  return true;
}

std::vector<int> process_pus(const Topology& topology) {
  std::vector<int> all(static_cast<std::size_t>(topology.pu_count()));
  for (int i = 0; i < topology.pu_count(); ++i) all[static_cast<std::size_t>(i)] = i;
  if (!topology.is_this_system()) return all;
  hwloc_topology_t system = detail::system_hwloc();
  hwloc_bitmap_t cpuset = hwloc_bitmap_alloc();
  if (system == nullptr || cpuset == nullptr) {
    if (cpuset != nullptr) hwloc_bitmap_free(cpuset);
    return all;
  }
  std::vector<int> bound;
  if (hwloc_get_cpubind(system, cpuset, HWLOC_CPUBIND_PROCESS) == 0) {
    for (const Pu& pu : topology.pus()) {
      if (pu.os_index >= 0 && hwloc_bitmap_isset(cpuset, static_cast<unsigned>(pu.os_index))) {
        bound.push_back(pu.logical_index);
      }
    }
  }
  hwloc_bitmap_free(cpuset);
  return bound.empty() ? all : bound;
}

namespace detail {

bool let_current_thread_use_process_cpus() {
  hwloc_topology_t system = system_hwloc();
  if (system == nullptr) return false;
  hwloc_bitmap_t cpuset = hwloc_bitmap_alloc();
  if (cpuset == nullptr) return false;
  // On Linux the process's binding is the union of its threads' own.
  const bool ok = hwloc_get_cpubind(system, cpuset, HWLOC_CPUBIND_PROCESS) == 0 &&
                  !hwloc_bitmap_iszero(cpuset) &&
                  hwloc_set_cpubind(system, cpuset, HWLOC_CPUBIND_THREAD) == 0;
  hwloc_bitmap_free(cpuset);
  return ok;
}

void name_thread(std::thread& thread, const std::string& name) {
  // Linux keeps 15 characters and a terminator; a longer name is refused.
  pthread_setname_np(thread.native_handle(), name.substr(0, 15).c_str());
}

}  // namespace detail
}  // namespace hreduce
