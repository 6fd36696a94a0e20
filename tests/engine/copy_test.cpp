// The engine's bulk copy (src/common/copy.hpp) against a byte loop: every
// length up to a few blocks, every misalignment of source and destination,
// and not one byte written outside the destination; where a string copy
// crawls, against the distances measured, and the placement that avoids it.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/common/copy.hpp"

TEST_CASE("copy_bytes copies exactly the given bytes", "[engine][copy]") {
  constexpr std::size_t kGuard = 80;
  constexpr unsigned char kUntouched = 0xA5;
  for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
    for (std::size_t from_offset = 0; from_offset < 8; ++from_offset) {
      for (std::size_t to_offset = 0; to_offset < 8; to_offset += 3) {
        std::vector<unsigned char> from(bytes + from_offset);
        for (std::size_t i = 0; i < from.size(); ++i) {
          from[i] = static_cast<unsigned char>(i * 7 + 1);
        }
        std::vector<unsigned char> to(kGuard + to_offset + bytes + kGuard, kUntouched);
        hreduce::detail::copy_bytes(to.data() + kGuard + to_offset, from.data() + from_offset,
                                    bytes);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < to.size(); ++i) {
          const bool inside = i >= kGuard + to_offset && i < kGuard + to_offset + bytes;
          const unsigned char expected =
              inside ? from[from_offset + (i - kGuard - to_offset)] : kUntouched;
          wrong += to[i] != expected;
        }
        INFO("bytes=" << bytes << " from+" << from_offset << " to+" << to_offset);
        REQUIRE(wrong == 0);
      }
    }
  }
}

TEST_CASE("a string copy crawls where the destination lies 1-31 bytes past the source in a page",
          "[engine][copy]") {
  using hreduce::detail::string_copy_crawls;
  // Addresses only: nothing is read or written.
  auto at = [](std::uintptr_t address) { return reinterpret_cast<const void*>(address); };
  const std::uintptr_t page = 0x7f0000400000;
  // The distances measured on AMD Zen 3 (bench/string_copy_alignment.cpp).
  for (std::uintptr_t slow : {1, 4, 16, 31}) {
    INFO("distance " << slow);
    CHECK(string_copy_crawls(at(page + slow), at(page)));
    CHECK(string_copy_crawls(at(page + 48 + slow), at(page + 48)));   // within a line
    CHECK(string_copy_crawls(at(page + 3 * 4096 + slow), at(page)));  // pages apart
    CHECK(string_copy_crawls(at(page + slow), at(page + 4096 * 5)));  // backwards by pages
    CHECK(string_copy_crawls(at(page + 4096 + slow - 8), at(page + 4096 - 8)));  // over a page
  }
  for (std::uintptr_t fast : {0, 32, 33, 48, 63, 64, 80, 2048, 4064, 4095, 4096}) {
    INFO("distance " << fast);
    CHECK_FALSE(string_copy_crawls(at(page + fast), at(page)));
  }
  CHECK_FALSE(string_copy_crawls(at(page), at(page + 16)));  // the source past the destination
}

TEST_CASE("at_line_offset_of places a buffer at another address's line offset", "[engine][copy]") {
  using hreduce::detail::at_line_offset_of;
  using hreduce::detail::string_copy_crawls;
  std::vector<std::byte> buffer(64 + 256);
  for (std::size_t base = 0; base < 64; base += 8) {
    std::byte* start = buffer.data() + base;
    for (std::uintptr_t like = 0x7f0000400000; like < 0x7f0000400000 + 128; like += 4) {
      std::byte* placed = at_line_offset_of(start, reinterpret_cast<const void*>(like));
      INFO("buffer + " << base << ", like " << like % 64);
      CHECK(placed >= start);
      CHECK(placed < start + 64);
      CHECK(reinterpret_cast<std::uintptr_t>(placed) % 64 == like % 64);
      CHECK_FALSE(string_copy_crawls(placed, reinterpret_cast<const void*>(like)));
      CHECK_FALSE(string_copy_crawls(reinterpret_cast<const void*>(like), placed));
    }
  }
}
