// Synthetic machines: hwloc builds them from a description, so every count,
// container and OS index has a closed form the tests compute on their own.
#include <catch2/catch.hpp>

#include <string>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

using hreduce::Level;
using hreduce::Topology;

namespace {

// Every level's count, machine first, as Topology::count reports them.
void check_counts(const Topology& t, std::array<int, hreduce::kLevelCount> expected) {
  for (int level = 0; level < hreduce::kLevelCount; ++level) {
    CAPTURE(hreduce::to_string(static_cast<Level>(level)));
    CHECK(t.count(static_cast<Level>(level)) == expected[level]);
  }
}

}  // namespace

TEST_CASE("pack:2 numa:2 l3:2 core:4 pu:2", "[synthetic]") {
  const auto t = Topology::synthetic("pack:2 numa:2 l3:2 core:4 pu:2");
  CHECK(t.source() == "synthetic: pack:2 numa:2 l3:2 core:4 pu:2");
  CHECK_FALSE(t.is_this_system());
  REQUIRE(t.pu_count() == 64);
  check_counts(t, {1, 2, 4, 8, 0, 0, 32, 64});
  for (int p = 0; p < 64; ++p) {
    CAPTURE(p);
    const auto& pu = t.pus()[p];
    CHECK(pu.logical_index == p);
    CHECK(pu.os_index == p);
    CHECK(pu.in(Level::machine) == 0);
    CHECK(pu.in(Level::package) == p / 32);
    CHECK(pu.in(Level::numa) == p / 16);
    CHECK(pu.in(Level::l3) == p / 8);
    CHECK(pu.in(Level::l2) == -1);
    CHECK(pu.in(Level::l1) == -1);
    CHECK(pu.in(Level::core) == p / 2);
    CHECK(pu.in(Level::pu) == p);
  }
  for (int n = 0; n < 4; ++n) CHECK(t.numa_os_index(n) == n);
}

TEST_CASE("pack:1 core:2 pu:1", "[synthetic]") {
  const auto t = Topology::synthetic("pack:1 core:2 pu:1");
  REQUIRE(t.pu_count() == 2);
  // hwloc always adds one NUMA node when the description names none.
  check_counts(t, {1, 1, 1, 0, 0, 0, 2, 2});
  for (int p = 0; p < 2; ++p) {
    CHECK(t.pus()[p].in(Level::package) == 0);
    CHECK(t.pus()[p].in(Level::numa) == 0);
    CHECK(t.pus()[p].in(Level::core) == p);
  }
}

TEST_CASE("numa:8 core:8 pu:1 has NUMA nodes but no packages", "[synthetic]") {
  const auto t = Topology::synthetic("numa:8 core:8 pu:1");
  REQUIRE(t.pu_count() == 64);
  check_counts(t, {1, 0, 8, 0, 0, 0, 64, 64});
  for (int p = 0; p < 64; ++p) {
    CAPTURE(p);
    CHECK(t.pus()[p].in(Level::package) == -1);
    CHECK(t.pus()[p].in(Level::numa) == p / 8);
    CHECK(t.pus()[p].in(Level::core) == p);
  }
}

TEST_CASE("caches: pack:2 l3:1 l2:4 l1:1 core:1 pu:2", "[synthetic]") {
  // The same shape with and without explicit sizes; hwloc invents sizes for
  // the first, so only the second pins them down.
  const std::string description =
      GENERATE(std::string("pack:2 l3:1 l2:4 l1:1 core:1 pu:2"),
               std::string("pack:2 l3:1(size=32MiB) l2:4(size=1MiB) l1:1(size=48KiB) core:1 pu:2"));
  CAPTURE(description);
  const auto t = Topology::synthetic(description);
  REQUIRE(t.pu_count() == 16);
  check_counts(t, {1, 2, 1, 2, 8, 8, 8, 16});
  for (int p = 0; p < 16; ++p) {
    CAPTURE(p);
    const auto& pu = t.pus()[p];
    CHECK(pu.in(Level::package) == p / 8);
    CHECK(pu.in(Level::numa) == 0);  // one machine-wide node
    CHECK(pu.in(Level::l3) == p / 8);
    CHECK(pu.in(Level::l2) == p / 2);
    CHECK(pu.in(Level::l1) == p / 2);
    CHECK(pu.in(Level::core) == p / 2);
  }
  for (Level cache : {Level::l3, Level::l2, Level::l1}) CHECK(t.cache_bytes(cache) > 0);
  CHECK(t.cache_bytes(Level::core) == 0);
  if (description.find("size=") != std::string::npos) {
    CHECK(t.cache_bytes(Level::l3) == 32ull << 20);
    CHECK(t.cache_bytes(Level::l2) == 1ull << 20);
    CHECK(t.cache_bytes(Level::l1) == 48ull << 10);
  }
}

TEST_CASE("OS indices that differ from logical ones are kept", "[synthetic]") {
  // Hyperthread siblings numbered half the machine apart, as on most x86
  // servers: core c holds OS CPUs c and c + 4.
  const auto t = Topology::synthetic("pack:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)");
  REQUIRE(t.pu_count() == 8);
  for (int p = 0; p < 8; ++p) {
    CAPTURE(p);
    CHECK(t.pus()[p].os_index == (p % 2) * 4 + p / 2);
    CHECK(t.pus()[p].in(Level::core) == p / 2);
  }
}

TEST_CASE("a description hwloc rejects throws Error quoting it", "[synthetic][negative]") {
  const std::string bad = GENERATE(std::string("pack:0 pu:2"), std::string("banana:2 pu:1"),
                                   std::string("pack:2 core:two pu:1"), std::string(""));
  CAPTURE(bad);
  CHECK_THROWS_AS(Topology::synthetic(bad), hreduce::Error);
  CHECK_THROWS_WITH(Topology::synthetic(bad), Catch::Contains("\"" + bad + "\""));
}
