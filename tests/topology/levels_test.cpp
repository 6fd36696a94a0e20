// Level and placement names: the spellings users type in options and the
// environment, and the errors they get for typos.
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"

using hreduce::Level;

TEST_CASE("parse_level accepts every documented name and alias", "[levels]") {
  const auto [name, level] = GENERATE(table<const char*, Level>({
      {"machine", Level::machine},
      {"package", Level::package},
      {"pack", Level::package},
      {"socket", Level::package},
      {"numa", Level::numa},
      {"l3", Level::l3},
      {"l2", Level::l2},
      {"l1", Level::l1},
      {"core", Level::core},
      {"pu", Level::pu},
      {"L3", Level::l3},
      {"NUMA", Level::numa},
  }));
  CAPTURE(name);
  CHECK(hreduce::parse_level(name) == level);
}

TEST_CASE("to_string and parse_level round-trip for all levels", "[levels]") {
  const int index = GENERATE(range(0, hreduce::kLevelCount));
  const auto level = static_cast<Level>(index);
  CHECK(hreduce::parse_level(hreduce::to_string(level)) == level);
}

TEST_CASE("parse_level rejects unknown names", "[levels][negative]") {
  const char* name = GENERATE("", "l4", "numanode", "cores", " core", "machine,");
  CAPTURE(name);
  CHECK_FALSE(hreduce::parse_level(name).has_value());
}

TEST_CASE("parse_levels keeps the order given", "[levels]") {
  CHECK(hreduce::parse_levels("numa,l3,core") ==
        std::vector<Level>{Level::numa, Level::l3, Level::core});
  CHECK(hreduce::parse_levels(" socket , pu ") == std::vector<Level>{Level::package, Level::pu});
  CHECK(hreduce::parse_levels("machine") == std::vector<Level>{Level::machine});
  CHECK(hreduce::parse_levels("").empty());
}

TEST_CASE("parse_levels names the bad entry", "[levels][negative]") {
  const auto [list, bad] = GENERATE(table<std::string, std::string>({
      {"numa,l4,core", "\"l4\""},
      {"numa,,core", "\"\""},
      {"core,", "\"\""},
      {"caches", "\"caches\""},
  }));
  CAPTURE(list);
  CHECK_THROWS_AS(hreduce::parse_levels(list), hreduce::Error);
  CHECK_THROWS_WITH(hreduce::parse_levels(list), Catch::Contains(bad) && Catch::Contains(list));
  CHECK_THROWS_WITH(hreduce::parse_levels(list),
                    Catch::Contains("(expected machine, package, numa, l3, l2, l1, core or pu)"));
}

TEST_CASE("placement policy names round-trip", "[levels]") {
  using hreduce::PlacementPolicy;
  const PlacementPolicy policy = GENERATE(PlacementPolicy::compact, PlacementPolicy::scatter);
  CHECK(hreduce::parse_placement(hreduce::to_string(policy)) == policy);
  CHECK(hreduce::to_string(PlacementPolicy::compact) == "compact");
  CHECK(hreduce::to_string(PlacementPolicy::scatter) == "scatter");
  CHECK(hreduce::parse_placement("Scatter") == PlacementPolicy::scatter);
  CHECK_FALSE(hreduce::parse_placement("spread").has_value());
  CHECK_FALSE(hreduce::parse_placement("").has_value());
}
