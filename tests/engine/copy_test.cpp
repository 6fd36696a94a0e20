// The engine's bulk copy (src/common/copy.hpp) against a byte loop: every
// length up to a few blocks, every misalignment of source and destination,
// and not one byte written outside the destination.
#include <catch2/catch.hpp>
#include <cstddef>
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
