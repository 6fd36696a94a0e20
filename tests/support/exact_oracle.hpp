// Test oracles for floating-point reductions: inputs whose bracketings
// round differently, and the correctly rounded sum by a method unlike the
// engine's (exact_sum.cpp works on integers; this on floating partials).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace hreduce::test {

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Doubles over 120 binades, both signs: any two bracketings differ somewhere.
inline double spread(int member, std::size_t i) {
  std::uint64_t h = (static_cast<std::uint64_t>(member) + 1) * 0x9E3779B97F4A7C15ull ^
                    (i + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  const double mantissa = 1.0 + static_cast<double>(h >> 12) * 0x1p-52;
  const int exponent = static_cast<int>(h % 121) - 60;
  return std::ldexp((h & 1) ? -mantissa : mantissa, exponent);
}

// Python's math.fsum (Shewchuk's exact partials, then one correct rounding):
// the oracle for exact sums, by a method unlike the one under test.
inline double correctly_rounded_sum(std::vector<double> values) {
  std::vector<double> partials;
  for (double x : values) {
    std::size_t kept = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials[kept++] = lo;
      x = hi;
    }
    partials.resize(kept);
    partials.push_back(x);
  }
  std::size_t n = partials.size();
  if (n == 0) return 0.0;
  double hi = partials[--n], lo = 0.0;
  while (n > 0) {
    const double x = hi, y = partials[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const double y = lo * 2, x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

// The correctly rounded sum of spread(0, i) … spread(last, i).
inline double exact_sum_of_spread(int last, std::size_t i) {
  std::vector<double> values;
  for (int q = 0; q <= last; ++q) values.push_back(spread(q, i));
  return correctly_rounded_sum(values);
}

}  // namespace hreduce::test
