// Internal: MAXLOC / MINLOC on (double, int) pairs with AVX2, two pairs per
// register, for combine() in hreduce/combine.hpp. The scalar op decides by
// data-dependent branches, which the predictor loses on real data; the
// selects here take none.
// Same result as the scalar op for every non-NaN input, ties included.
#pragma once

// Only hreduce's public headers include this one (they define the macro).
#ifndef HREDUCE_PUBLIC_HEADER
#error "hreduce/detail/loc_kernel.hpp is internal: include \"hreduce/combine.hpp\" instead"
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"

namespace hreduce::detail {

#if defined(__AVX2__)
template <class T, class Op>
inline constexpr bool has_loc_kernel_v = std::is_same_v<T, ValueIndex<double, int>> &&
                                         (std::is_same_v<Op, op::minloc_t> ||
                                          std::is_same_v<Op, op::maxloc_t>);

// Lanes of a register: [value_0, index_0 + padding, value_1, index_1 + padding].
template <class Op>
void loc_kernel(const ValueIndex<double, int>* a, const ValueIndex<double, int>* b,
                ValueIndex<double, int>* out, std::size_t n) {
  static_assert(sizeof(ValueIndex<double, int>) == 16);
  constexpr int kWins = std::is_same_v<Op, op::minloc_t> ? _CMP_LT_OQ : _CMP_GT_OQ;
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const __m256d va = _mm256_loadu_pd(reinterpret_cast<const double*>(a + i));
    const __m256d vb = _mm256_loadu_pd(reinterpret_cast<const double*>(b + i));
    // Decided on the value lanes, then copied onto the index lanes.
    const __m256d a_wins = _mm256_permute_pd(_mm256_cmp_pd(va, vb, kWins), 0b0000);
    const __m256d b_wins = _mm256_permute_pd(_mm256_cmp_pd(vb, va, kWins), 0b0000);
    // A tie keeps a's value and the lower index (only the index's own 32
    // bits of the lane matter; the padding is unspecified).
    const __m256d lower =
        _mm256_castsi256_pd(_mm256_min_epi32(_mm256_castpd_si256(va), _mm256_castpd_si256(vb)));
    const __m256d tie = _mm256_blend_pd(va, lower, 0b1010);
    const __m256d pair = _mm256_blendv_pd(_mm256_blendv_pd(tie, va, a_wins), vb, b_wins);
    // out may be exactly a or b: both were loaded above.
    _mm256_storeu_pd(reinterpret_cast<double*>(out + i), pair);
  }
  for (; i < n; ++i) out[i] = Op{}(a[i], b[i]);
}
#else
template <class T, class Op>
inline constexpr bool has_loc_kernel_v = false;

template <class Op>
void loc_kernel(const ValueIndex<double, int>*, const ValueIndex<double, int>*,
                ValueIndex<double, int>*, std::size_t) {}
#endif

}  // namespace hreduce::detail
