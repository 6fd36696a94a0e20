// Topology::discover on the machine running the test. Its shape is unknown,
// so the checks are the invariants every real machine satisfies.
#include <catch2/catch.hpp>

#include <set>

#include "hreduce/topology.hpp"

using hreduce::Level;
using hreduce::Topology;

TEST_CASE("discover describes this machine", "[discover]") {
  const auto t = Topology::discover();
  CHECK(t.is_this_system());
  CHECK(t.source() == "this machine");
  REQUIRE(t.pu_count() >= 1);
  CHECK(t.count(Level::machine) == 1);
  CHECK(t.count(Level::pu) == t.pu_count());
  CHECK(t.count(Level::numa) >= 1);
  CHECK(t.count(Level::core) >= 1);
  CHECK(t.count(Level::core) <= t.pu_count());

  std::set<int> os_indices;
  for (const auto& pu : t.pus()) {
    CAPTURE(pu.logical_index);
    CHECK(pu.os_index >= 0);
    os_indices.insert(pu.os_index);
    // Linux always knows a PU's core and NUMA node.
    CHECK(pu.in(Level::core) >= 0);
    CHECK(pu.in(Level::numa) >= 0);
  }
  CHECK(static_cast<int>(os_indices.size()) == t.pu_count());
  for (int n = 0; n < t.count(Level::numa); ++n) CHECK(t.numa_os_index(n) >= 0);
}

TEST_CASE("two discoveries agree", "[discover]") {
  const auto a = Topology::discover();
  const auto b = Topology::discover();
  REQUIRE(a.pu_count() == b.pu_count());
  for (int p = 0; p < a.pu_count(); ++p) {
    CHECK(a.pus()[p].os_index == b.pus()[p].os_index);
    CHECK(a.pus()[p].container == b.pus()[p].container);
  }
  CHECK(a.render() == b.render());
}
