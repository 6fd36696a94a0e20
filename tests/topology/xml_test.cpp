// Topology::from_xml: a hand-written export with the awkward numbering real
// machines have, a round trip through lstopo, and files hwloc cannot read.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

using hreduce::Level;
using hreduce::Topology;

namespace {

std::string temp_path(const std::string& name) {
  // Bazel gives each test a private directory; fall back for direct runs.
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::filesystem::path base = dir != nullptr ? dir : std::filesystem::temp_directory_path();
  return (base / name).string();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Two packages, each with its own NUMA node and one two-thread core. NUMA
// node L#0 is OS node 2 and L#1 is OS node 1; core 0's threads are OS CPUs
// 0 and 2, core 1's are 1 and 3.
constexpr const char* kTwoPackages = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000006" complete_nodeset="0x00000006" allowed_nodeset="0x00000006">
    <object type="Package" os_index="0" cpuset="0x00000005" complete_cpuset="0x00000005" nodeset="0x00000004" complete_nodeset="0x00000004">
      <object type="NUMANode" os_index="2" cpuset="0x00000005" complete_cpuset="0x00000005" nodeset="0x00000004" complete_nodeset="0x00000004" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x00000005" complete_cpuset="0x00000005" nodeset="0x00000004" complete_nodeset="0x00000004">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000004" complete_nodeset="0x00000004"/>
        <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000004" complete_nodeset="0x00000004"/>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0000000a" complete_cpuset="0x0000000a" nodeset="0x00000002" complete_nodeset="0x00000002">
      <object type="NUMANode" os_index="1" cpuset="0x0000000a" complete_cpuset="0x0000000a" nodeset="0x00000002" complete_nodeset="0x00000002" local_memory="1073741824"/>
      <object type="Core" os_index="1" cpuset="0x0000000a" complete_cpuset="0x0000000a" nodeset="0x00000002" complete_nodeset="0x00000002">
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002"/>
        <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002"/>
      </object>
    </object>
  </object>
</topology>
)";

bool have_lstopo() { return std::system("command -v lstopo-no-graphics >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("a hand-written XML export loads with its own numbering", "[xml]") {
  const std::string path = temp_path("two_packages.xml");
  write_file(path, kTwoPackages);
  const auto t = Topology::from_xml(path);
  CHECK(t.source() == "xml: " + path);
  CHECK_FALSE(t.is_this_system());
  REQUIRE(t.pu_count() == 4);
  CHECK(t.count(Level::package) == 2);
  CHECK(t.count(Level::numa) == 2);
  CHECK(t.count(Level::core) == 2);
  CHECK(t.count(Level::l3) == 0);
  const int os_of_pu[] = {0, 2, 1, 3};
  for (int p = 0; p < 4; ++p) {
    CAPTURE(p);
    CHECK(t.pus()[p].os_index == os_of_pu[p]);
    CHECK(t.pus()[p].in(Level::package) == p / 2);
    CHECK(t.pus()[p].in(Level::numa) == p / 2);
    CHECK(t.pus()[p].in(Level::core) == p / 2);
  }
  CHECK(t.numa_os_index(0) == 2);
  CHECK(t.numa_os_index(1) == 1);
}

TEST_CASE("an lstopo export matches the synthetic topology it came from", "[xml]") {
  if (!have_lstopo()) {
    WARN("lstopo-no-graphics not on PATH; round trip not checked");
    return;
  }
  const std::string description =
      GENERATE(std::string("pack:2 core:2 pu:1"), std::string("pack:2 numa:2 l3:2 core:4 pu:2"),
               std::string("pack:2 l3:1 l2:4 l1:1 core:1 pu:2"));
  CAPTURE(description);
  const std::string path = temp_path("round_trip.xml");
  const std::string command = "lstopo-no-graphics --input '" + description +
                              "' --of xml --force '" + path + "' 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);

  const auto from_xml = Topology::from_xml(path);
  const auto synthetic = Topology::synthetic(description);
  REQUIRE(from_xml.pu_count() == synthetic.pu_count());
  for (int level = 0; level < hreduce::kLevelCount; ++level) {
    const auto l = static_cast<Level>(level);
    CAPTURE(hreduce::to_string(l));
    CHECK(from_xml.count(l) == synthetic.count(l));
    CHECK(from_xml.cache_bytes(l) == synthetic.cache_bytes(l));
  }
  for (int p = 0; p < synthetic.pu_count(); ++p) {
    CAPTURE(p);
    CHECK(from_xml.pus()[p].os_index == synthetic.pus()[p].os_index);
    CHECK(from_xml.pus()[p].container == synthetic.pus()[p].container);
  }
}

TEST_CASE("a missing XML file throws Error naming it", "[xml][negative]") {
  const std::string path = temp_path("does_not_exist.xml");
  CHECK_THROWS_AS(Topology::from_xml(path), hreduce::Error);
  CHECK_THROWS_WITH(Topology::from_xml(path), Catch::Contains(path));
}

TEST_CASE("a file that is not hwloc XML throws Error naming it", "[xml][negative]") {
  const std::string path = temp_path("garbage.xml");
  write_file(path, "this is not XML\n");
  CHECK_THROWS_AS(Topology::from_xml(path), hreduce::Error);
  CHECK_THROWS_WITH(Topology::from_xml(path), Catch::Contains(path));
}
