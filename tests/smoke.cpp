#include <catch2/catch.hpp>
#include "hreduce/error.hpp"
TEST_CASE("error is a runtime_error") {
  try { throw hreduce::Error("x"); } catch (const std::runtime_error& e) { CHECK(std::string(e.what()) == "x"); }
}
