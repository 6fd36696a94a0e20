// Hash mixing for call signatures (which members, and processes, compare).
#pragma once

#include <cstdint>

namespace hreduce::detail {

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

}  // namespace hreduce::detail
