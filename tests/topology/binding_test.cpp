// bind_current_thread(): pins for real on this machine, refuses politely
// everywhere else. Binding runs on a fresh thread each time so the test
// process itself stays unpinned; Catch2 assertions stay on the main thread
// because Catch2 v2 is not thread-safe.
#include <catch2/catch.hpp>

#include <sched.h>

#include <thread>
#include <vector>

#include "hreduce/topology.hpp"

using hreduce::Topology;

namespace {

struct BindResult {
  bool bound = false;
  std::vector<int> allowed_cpus;  // the thread's affinity after the call
};

BindResult bind_on_new_thread(const Topology& topology, int pu) {
  BindResult result;
  std::thread([&] {
    result.bound = hreduce::bind_current_thread(topology, pu);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) result.allowed_cpus.push_back(cpu);
    }
  }).join();
  return result;
}

}  // namespace

TEST_CASE("binding on this machine pins the thread to that PU's OS CPU", "[binding]") {
  const auto t = Topology::discover();
  for (int pu = 0; pu < t.pu_count(); ++pu) {
    CAPTURE(pu);
    const BindResult result = bind_on_new_thread(t, pu);
    CHECK(result.bound);
    CHECK(result.allowed_cpus == std::vector<int>{t.pus()[pu].os_index});
  }
}

TEST_CASE("binding to a synthetic machine returns false and leaves the thread alone",
          "[binding][negative]") {
  const auto t = Topology::synthetic("pack:2 core:2 pu:1");
  bool bound = true;
  CHECK_NOTHROW(bound = hreduce::bind_current_thread(t, 0));
  CHECK_FALSE(bound);
  // A new thread inherits the process's affinity; a refused bind keeps it.
  const BindResult unpinned = bind_on_new_thread(t, 0);
  const BindResult refused = bind_on_new_thread(t, 1);
  CHECK_FALSE(refused.bound);
  CHECK_FALSE(refused.allowed_cpus.empty());
  CHECK(refused.allowed_cpus == unpinned.allowed_cpus);
}

TEST_CASE("binding to a PU that does not exist returns false", "[binding][negative]") {
  const auto t = Topology::discover();
  const int pu = GENERATE_COPY(-1, t.pu_count(), 1000);
  CAPTURE(pu);
  const BindResult result = bind_on_new_thread(t, pu);
  CHECK_FALSE(result.bound);
  CHECK_FALSE(result.allowed_cpus.empty());
}
