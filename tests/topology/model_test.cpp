// The Topology constructor: the invariants it enforces and the counts it
// derives, on hand-built machines hwloc cannot describe synthetically.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

using hreduce::Level;
using hreduce::Pu;
using hreduce::Topology;

namespace {

// package, numa, l3, core containers; machine and pu filled in as required.
Pu make_pu(int index, int os_index, int package, int numa, int l3, int core) {
  Pu pu;
  pu.logical_index = index;
  pu.os_index = os_index;
  pu.container = {0, package, numa, l3, -1, -1, core, index};
  return pu;
}

// Three PUs; the third sits outside the only L3 (a core without a shared
// cache, as on some heterogeneous parts). NUMA OS indices are deliberately
// not 0..n-1.
Topology irregular() {
  return Topology(
      "irregular", false,
      {make_pu(0, 10, 0, 0, 0, 0), make_pu(1, 11, 0, 0, 0, 1), make_pu(2, 12, 0, 1, -1, 2)}, {5, 7},
      {});
}

}  // namespace

TEST_CASE("counts come from the PUs' containers", "[model]") {
  const Topology t = irregular();
  CHECK(t.pu_count() == 3);
  CHECK(t.count(Level::machine) == 1);
  CHECK(t.count(Level::package) == 1);
  CHECK(t.count(Level::numa) == 2);
  CHECK(t.count(Level::l3) == 1);
  CHECK(t.count(Level::l2) == 0);
  CHECK(t.count(Level::core) == 3);
  CHECK(t.count(Level::pu) == 3);
  CHECK(t.numa_os_index(0) == 5);
  CHECK(t.numa_os_index(1) == 7);
  CHECK(t.source() == "irregular");
}

TEST_CASE("numa_os_index rejects indices out of range", "[model][negative]") {
  const Topology t = irregular();
  const int bad = GENERATE(-1, 2, 100);
  CHECK_THROWS_AS(t.numa_os_index(bad), hreduce::Error);
  CHECK_THROWS_WITH(t.numa_os_index(bad), Catch::Contains(std::to_string(bad)));
}

TEST_CASE("the constructor rejects malformed PU lists", "[model][negative]") {
  std::vector<Pu> pus = {make_pu(0, 0, 0, 0, 0, 0), make_pu(1, 1, 0, 0, 0, 1)};
  std::vector<int> numa = {0};
  std::string expected;
  SECTION("no PUs") {
    pus.clear();
    expected = "no PUs";
  }
  SECTION("out of logical order") {
    pus[1].logical_index = 5;
    expected = "logical index 5";
  }
  SECTION("machine container not 0") {
    pus[0].container[static_cast<int>(Level::machine)] = 1;
    expected = "machine container is 1";
  }
  SECTION("pu container not its own index") {
    pus[1].container[static_cast<int>(Level::pu)] = 0;
    expected = "pu container is 0";
  }
  SECTION("container below -1") {
    pus[1].container[static_cast<int>(Level::l3)] = -2;
    expected = "l3 container is -2";
  }
  SECTION("fewer NUMA OS indices than NUMA nodes") {
    numa.clear();
    expected = "0 NUMA OS indices for 1 NUMA nodes";
  }
  CHECK_THROWS_WITH(Topology("bad", false, pus, numa, {}), Catch::Contains(expected));
}
