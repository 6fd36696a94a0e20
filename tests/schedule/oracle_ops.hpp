// Combine functions with independent oracles, for schedule tests. They are
// written here rather than taken from the ops layer so a schedule test cannot
// pass because of a bug shared with the code under test.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hreduce::test {

// A rank range. Joining is defined only for adjacent ranges, lower first, so
// a schedule that combines out of rank order throws instead of passing.
struct RankRange {
  int lo, hi;
  friend bool operator==(const RankRange&, const RankRange&) = default;
};

inline void join_ranges(const RankRange* left, const RankRange* right, RankRange* out,
                        std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (left[i].hi + 1 != right[i].lo) {
      throw std::logic_error("combined ranks " + std::to_string(left[i].lo) + ".." +
                             std::to_string(left[i].hi) + " with " + std::to_string(right[i].lo) +
                             ".." + std::to_string(right[i].hi));
    }
    out[i] = {left[i].lo, right[i].hi};
  }
}

// 2×2 matrices over integers mod 2^64: associative, not commutative.
using Mat2 = std::array<std::uint64_t, 4>;

inline Mat2 mat_mul(const Mat2& a, const Mat2& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
          a[2] * b[1] + a[3] * b[3]};
}

inline void multiply_matrices(const Mat2* left, const Mat2* right, Mat2* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = mat_mul(left[i], right[i]);
}

// Deterministic, distinct-looking inputs: member m, element i.
inline Mat2 sample_matrix(int m, std::size_t i) {
  const std::uint64_t s = 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(m) * 131 + i + 1);
  return {s | 1, s >> 7, (s << 3) + m, (s ^ 0xABCDEFull) | 1};
}

// x_0 ∘ x_1 ∘ … ∘ x_{p-1}, left to right.
inline std::vector<Mat2> sequential_product(const std::vector<std::vector<Mat2>>& inputs) {
  std::vector<Mat2> result = inputs.front();
  for (std::size_t m = 1; m < inputs.size(); ++m) {
    for (std::size_t i = 0; i < result.size(); ++i) result[i] = mat_mul(result[i], inputs[m][i]);
  }
  return result;
}

}  // namespace hreduce::test
