// The byte counts the command line accepts, against the documented units
// (K = 1000, Ki = 1024, ...), and the message for what it refuses.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "hreduce/error.hpp"
#include "src/cli/byte_size.hpp"

using hreduce::cli::byte_count_or_throw;
using hreduce::cli::parse_byte_count;

TEST_CASE("plain integers are bytes", "[byte_size]") {
  CHECK(parse_byte_count("0") == 0u);
  CHECK(parse_byte_count("8") == 8u);
  CHECK(parse_byte_count("4096") == 4096u);
  CHECK(parse_byte_count("8B") == 8u);
  CHECK(parse_byte_count("007") == 7u);
}

TEST_CASE("decimal and binary units, with or without B, in any case", "[byte_size]") {
  const std::size_t k = 1000, ki = 1024;
  CHECK(parse_byte_count("3K") == 3 * k);
  CHECK(parse_byte_count("3k") == 3 * k);
  CHECK(parse_byte_count("3KB") == 3 * k);
  CHECK(parse_byte_count("3Ki") == 3 * ki);
  CHECK(parse_byte_count("3KiB") == 3 * ki);
  CHECK(parse_byte_count("3kib") == 3 * ki);
  CHECK(parse_byte_count("1M") == k * k);
  CHECK(parse_byte_count("1Mi") == ki * ki);
  CHECK(parse_byte_count("1MiB") == ki * ki);
  CHECK(parse_byte_count("64Mi") == 64 * ki * ki);
  CHECK(parse_byte_count("2G") == 2 * k * k * k);
  CHECK(parse_byte_count("2Gi") == 2 * ki * ki * ki);
  CHECK(parse_byte_count("2GIB") == 2 * ki * ki * ki);
}

TEST_CASE("anything else is refused", "[byte_size]") {
  for (const char* bad : {"", "K", "Ki", "-1", "+1", "1.5Mi", "1 Mi", " 1", "1 ", "1Q", "1KiBB",
                          "1Bi", "1iB", "1KK", "1T", "1Ti", "0x10", "1e3", "Mi1"}) {
    INFO("text: '" << bad << "'");
    CHECK_FALSE(parse_byte_count(bad).has_value());
  }
}

TEST_CASE("counts that do not fit a size_t are refused, the largest that do are not",
          "[byte_size]") {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  CHECK(parse_byte_count(std::to_string(kMax)) == kMax);
  CHECK_FALSE(parse_byte_count(std::to_string(kMax) + "0").has_value());
  CHECK_FALSE(parse_byte_count("99999999999999999999999").has_value());
  const std::size_t most_gi = kMax / (std::size_t{1} << 30);
  CHECK(parse_byte_count(std::to_string(most_gi) + "Gi") == most_gi << 30);
  CHECK_FALSE(parse_byte_count(std::to_string(most_gi + 1) + "Gi").has_value());
}

TEST_CASE("the error names the command, the option, the units and the text", "[byte_size]") {
  CHECK(byte_count_or_throw("hreduce bench", "--max-bytes", "1Mi", 8) == 1048576u);
  try {
    byte_count_or_throw("hreduce bench", "--max-bytes", "1Q", 8);
    FAIL("1Q was accepted");
  } catch (const hreduce::ArgumentError& e) {
    const std::string what = e.what();
    CHECK(what.find("hreduce bench: --max-bytes wants a byte count") == 0);
    CHECK(what.find("Ki = 1024") != std::string::npos);
    CHECK(what.find("got '1Q'") != std::string::npos);
  }
  try {
    byte_count_or_throw("hreduce bench", "--max-bytes", "4B", 8);
    FAIL("4 bytes were accepted below the minimum of 8");
  } catch (const hreduce::ArgumentError& e) {
    CHECK(std::string(e.what()) ==
          "hreduce bench: --max-bytes wants at least 8 bytes, got '4B' (4 bytes)");
  }
}
