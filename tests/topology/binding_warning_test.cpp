// A failed bind warns once per process, however many threads fail. Alone in
// its binary: any earlier failure in the process would already have used up
// the one warning.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "hreduce/topology.hpp"

namespace {

// Runs `body` with stderr (file descriptor 2, where the warning goes)
// redirected into a file, and returns what was written.
template <typename Body>
std::string capture_stderr(Body body) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/stderr.txt";
  std::fflush(stderr);
  const int saved = dup(2);
  FILE* sink = std::fopen(path.c_str(), "w");
  REQUIRE(sink != nullptr);
  dup2(fileno(sink), 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(sink);
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("failed binds print exactly one warning", "[binding][negative]") {
  const auto synthetic = hreduce::Topology::synthetic("pack:2 core:2 pu:1");
  const auto real = hreduce::Topology::discover();
  int failures = 0;
  const std::string text = capture_stderr([&] {
    for (int i = 0; i < 5; ++i) failures += !hreduce::bind_current_thread(synthetic, 0);
    failures += !hreduce::bind_current_thread(real, -1);
  });
  CHECK(failures == 6);
  CHECK_THAT(text, Catch::StartsWith("hreduce: warning:") &&
                       Catch::Contains("synthetic: pack:2 core:2 pu:1"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}
