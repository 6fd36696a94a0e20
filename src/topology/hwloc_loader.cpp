// Topology::discover/synthetic/from_xml: load a topology with hwloc and
// flatten it into one Pu record per hardware thread.
#include <hwloc.h>

#include <array>
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

namespace hreduce {
namespace {

// Levels that are ordinary ancestors of a PU in hwloc's tree. NUMA nodes are
// not: hwloc 2 hangs them off the side as memory children (see numa_of).
constexpr std::array<std::pair<Level, hwloc_obj_type_t>, 5> kAncestorLevels = {{
    {Level::package, HWLOC_OBJ_PACKAGE},
    {Level::l3, HWLOC_OBJ_L3CACHE},
    {Level::l2, HWLOC_OBJ_L2CACHE},
    {Level::l1, HWLOC_OBJ_L1CACHE},
    {Level::core, HWLOC_OBJ_CORE},
}};

[[noreturn]] void fail(const std::string& what, int error) {
  // generic_category().message is the thread-safe spelling of strerror.
  throw ArgumentError(
      what + ": " +
      (error != 0 ? std::generic_category().message(error) : std::string("hwloc gave no reason")));
}

// Runs one hwloc call that reports failure as nonzero plus errno. errno is
// cleared first because not every hwloc failure path sets it, and a stale
// value from an earlier, harmless call would name the wrong cause.
template <typename Call>
void must(const std::string& what, Call call) {
  errno = 0;
  if (call() != 0) fail(what, errno);
}

// Owns an hwloc topology for the duration of one load.
class Handle {
 public:
  explicit Handle(const std::string& what) {
    must(what, [this] { return hwloc_topology_init(&topology_); });
  }
  ~Handle() { hwloc_topology_destroy(topology_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

hwloc_obj_t first_numa_below(hwloc_obj_t object) {
  for (hwloc_obj_t child = object->memory_first_child; child != nullptr;
       child = child->next_sibling) {
    if (child->type == HWLOC_OBJ_NUMANODE) return child;
    // A memory-side cache sits between its parent and the NUMA node.
    if (hwloc_obj_t inner = first_numa_below(child)) return inner;
  }
  return nullptr;
}

// The nearest NUMA node: the first one attached to the closest ancestor
// that has memory. Taking "the first node whose cpuset covers the PU"
// instead would pick a machine-wide node (CXL, say) over the package's own
// DRAM, because hwloc numbers the outer node first.
hwloc_obj_t numa_of(hwloc_topology_t topology, hwloc_obj_t pu) {
  for (hwloc_obj_t object = pu; object != nullptr; object = object->parent) {
    if (hwloc_obj_t numa = first_numa_below(object)) return numa;
  }
  return hwloc_get_next_obj_covering_cpuset_by_type(topology, pu->cpuset, HWLOC_OBJ_NUMANODE,
                                                    nullptr);
}

int os_index_of(hwloc_obj_t object) {
  return object->os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<int>(object->os_index);
}

Topology flatten(hwloc_topology_t topology, std::string source, bool is_this_system) {
  const int pu_total = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  std::vector<Pu> pus;
  pus.reserve(static_cast<std::size_t>(pu_total));
  std::array<std::uint64_t, kLevelCount> cache_bytes{};
  for (int i = 0; i < pu_total; ++i) {
    hwloc_obj_t object = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    Pu pu;
    pu.logical_index = static_cast<int>(object->logical_index);
    pu.os_index = os_index_of(object);
    pu.container.fill(-1);
    pu.container[static_cast<int>(Level::machine)] = 0;
    pu.container[static_cast<int>(Level::pu)] = pu.logical_index;
    for (const auto& [level, type] : kAncestorLevels) {
      hwloc_obj_t ancestor = hwloc_get_ancestor_obj_by_type(topology, type, object);
      if (ancestor == nullptr) continue;
      pu.container[static_cast<int>(level)] = static_cast<int>(ancestor->logical_index);
      // Caches of one level are assumed uniform; the first one speaks for all.
      auto& bytes = cache_bytes[static_cast<int>(level)];
      if (bytes == 0 && hwloc_obj_type_is_cache(type)) bytes = ancestor->attr->cache.size;
    }
    if (hwloc_obj_t numa = numa_of(topology, object)) {
      pu.container[static_cast<int>(Level::numa)] = static_cast<int>(numa->logical_index);
    }
    pus.push_back(pu);
  }
  // Every NUMA node, CPU-less ones included, so numa_os_index covers them.
  std::vector<int> numa_os_indices;
  const int numa_total = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < numa_total; ++i) {
    numa_os_indices.push_back(
        os_index_of(hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i))));
  }
  return Topology(std::move(source), is_this_system, std::move(pus), std::move(numa_os_indices),
                  cache_bytes);
}

}  // namespace

Topology Topology::discover() {
  const std::string what = "Topology::discover: hwloc could not load this machine";
  Handle handle(what);
  must(what, [&] { return hwloc_topology_load(handle.get()); });
  return flatten(handle.get(), "this machine", true);
}

Topology Topology::synthetic(std::string_view description) {
  const std::string text(description);  // hwloc wants a NUL-terminated string
  const std::string what = "Topology::synthetic: hwloc rejected \"" + text + "\"";
  Handle handle(what);
  must(what, [&] { return hwloc_topology_set_synthetic(handle.get(), text.c_str()); });
  must(what, [&] { return hwloc_topology_load(handle.get()); });
  return flatten(handle.get(), "synthetic: " + text, false);
}

Topology Topology::from_xml(const std::string& path) {
  const std::string what = "Topology::from_xml: hwloc could not load \"" + path + "\"";
  Handle handle(what);
  must(what, [&] { return hwloc_topology_set_xml(handle.get(), path.c_str()); });
  must(what, [&] { return hwloc_topology_load(handle.get()); });
  return flatten(handle.get(), "xml: " + path, false);
}

}  // namespace hreduce
