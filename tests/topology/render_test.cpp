// Topology::render(): the text tree, compared line for line with trees the
// test builds from the shape it asked for.
#include <catch2/catch.hpp>

#include <string>

#include "hreduce/topology.hpp"

using hreduce::Topology;

namespace {

std::string indent(int depth) { return std::string(static_cast<std::size_t>(2 * depth), ' '); }

}  // namespace

TEST_CASE("render draws packages, NUMA nodes, cores and PUs", "[render]") {
  const auto t = Topology::synthetic("pack:2 numa:2 core:2 pu:1");
  std::string expected = "Machine (synthetic: pack:2 numa:2 core:2 pu:1)\n";
  int numa = 0;
  int pu = 0;
  for (int package = 0; package < 2; ++package) {
    expected += indent(1) + "Package L#" + std::to_string(package) + "\n";
    for (int n = 0; n < 2; ++n, ++numa) {
      const std::string id = std::to_string(numa);
      expected += indent(2) + "NUMANode L#" + id + " (P#" + id + ")\n";
      for (int core = 0; core < 2; ++core, ++pu) {
        const std::string p = std::to_string(pu);
        expected += indent(3) + "Core L#" + p + "\n";
        expected += indent(4) + "PU L#" + p + " (P#" + p + ")\n";
      }
    }
  }
  CHECK(t.render() == expected);
}

TEST_CASE("render shows cache sizes and skips absent levels", "[render]") {
  const auto t = Topology::synthetic(
      "pack:1 l3:1(size=32MiB) l2:2(size=1MiB) l1:1(size=48KiB) core:1 pu:2(indexes=0,2,1,3)");
  const std::string expected =
      "Machine (synthetic: pack:1 l3:1(size=32MiB) l2:2(size=1MiB) l1:1(size=48KiB) core:1 "
      "pu:2(indexes=0,2,1,3))\n"
      "  Package L#0\n"
      "    NUMANode L#0 (P#0)\n"
      "      L3 L#0 (32 MiB)\n"
      "        L2 L#0 (1 MiB)\n"
      "          L1 L#0 (48 KiB)\n"
      "            Core L#0\n"
      "              PU L#0 (P#0)\n"
      "              PU L#1 (P#2)\n"
      "        L2 L#1 (1 MiB)\n"
      "          L1 L#1 (48 KiB)\n"
      "            Core L#1\n"
      "              PU L#2 (P#1)\n"
      "              PU L#3 (P#3)\n";
  CHECK(t.render() == expected);
}

TEST_CASE("render leaves out a level missing above some PUs", "[render]") {
  hreduce::Pu a;
  a.logical_index = 0;
  a.os_index = 4;
  a.container = {0, -1, 0, 0, -1, -1, 0, 0};
  hreduce::Pu b = a;
  b.logical_index = 1;
  b.os_index = 5;
  b.container = {0, -1, 0, -1, -1, -1, 1, 1};  // no L3 above this one
  const Topology t("hand-built", false, {a, b}, {3}, {});
  CHECK(t.render() ==
        "Machine (hand-built)\n"
        "  NUMANode L#0 (P#3)\n"
        "    L3 L#0\n"
        "      Core L#0\n"
        "        PU L#0 (P#4)\n"
        "    Core L#1\n"
        "      PU L#1 (P#5)\n");
}

TEST_CASE("render of this machine names it and every PU", "[render]") {
  const auto t = Topology::discover();
  const std::string text = t.render();
  CHECK(text.rfind("Machine (this machine)\n", 0) == 0);
  for (const auto& pu : t.pus()) {
    CHECK_THAT(text, Catch::Contains("PU L#" + std::to_string(pu.logical_index) + " (P#" +
                                     std::to_string(pu.os_index) + ")\n"));
  }
}
