// The exact sum's way back (exact_sum.cpp): an integer sum on the agreed
// grid, rounded once to float or double, to nearest, ties to even.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <limits>

#include "src/engine/exact_integers.hpp"

namespace hreduce::detail::exact {

// What rounding needs of a magnitude: its 64 bits from bit `cut` up (cut
// > 0), the bit below them, whether any bit lies below that, and its low
// word. One form in a 128-bit register, one over words.
struct WideMagnitude {
  Word hi, lo;
  // Selects rather than 128-bit shifts, which branch on the amount (cut
  // varies with every value's exponent).
  Word from(int cut) const {
    const int bit = cut & 63;
    const Word low_part = (lo >> bit) | ((hi << 1) << (63 - bit));
    return cut >= 64 ? hi >> bit : low_part;
  }
  bool half(int cut) const {
    const int c = cut - 1;
    return (((c >= 64 ? hi : lo) >> (c & 63)) & 1) != 0;
  }
  bool sticky(int cut) const {
    const int c = cut - 1;
    const Word mask = (Word{1} << (c & 63)) - 1;
    return (c >= 64 ? (lo | (hi & mask)) : (lo & mask)) != 0;
  }
  Word low() const { return lo; }
};

struct LongMagnitude {
  const Word* m;
  int words;
  Word from(int cut) const {
    const int word = cut / 64, bit = cut % 64;
    Word v = m[word] >> bit;
    if (bit != 0 && word + 1 < words) v |= m[word + 1] << (64 - bit);
    return v;
  }
  bool half(int cut) const { return ((m[(cut - 1) / 64] >> ((cut - 1) % 64)) & 1) != 0; }
  bool sticky(int cut) const {
    const int word = (cut - 1) / 64, bit = (cut - 1) % 64;
    for (int k = 0; k < word; ++k) {
      if (m[k] != 0) return true;
    }
    return bit != 0 && (m[word] & ((Word{1} << bit) - 1)) != 0;
  }
  Word low() const { return m[0]; }
};

// ±magnitude × 2^base rounded to F, to nearest, ties to even; `top` is the
// magnitude's highest set bit. The bits are put together by hand: the
// kept mantissa, with its leading bit, added to the exponent field minus
// one, so that a rounding carry moves into the exponent (or to ∞) by itself.
template <class F, class Magnitude>
[[gnu::always_inline]] inline F rounded(const Magnitude& magnitude, int top, int base,
                                        bool negative) {
  using Fm = Format<F>;
  using Bits = typename Fm::Bits;
  constexpr int digits = Fm::digits;
  const int leading = base + top;  // the exponent of the leading bit
  if (leading > Fm::bias) {
    return negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
  }
  // The lowest bit kept: `digits` below the top, but none below the
  // smallest subnormal.
  const int normal_cut = top - (digits - 1);
  const int cut = std::max(normal_cut, Fm::lowest - base);
  Word kept;
  if (cut > 0) {
    kept = magnitude.from(cut);
    // Without branches: the round bit is a coin toss for most data.
    kept += static_cast<Word>(magnitude.half(cut) & (magnitude.sticky(cut) | ((kept & 1) != 0)));
  } else {
    kept = magnitude.low() << -cut;
  }
  Bits bits = static_cast<Bits>(kept);
  if (cut == normal_cut) bits += static_cast<Bits>(leading + Fm::bias - 1) << (digits - 1);
  if (negative) bits |= Bits{1} << (sizeof(Bits) * CHAR_BIT - 1);
  return std::bit_cast<F>(bits);
}

// An exact zero: −0.0 when every value was −0.0, as IEEE addition gives.
template <class F>
F zero(const Word* w, const Layout& layout) {
  return layout.zero_signs && w[layout.zero_word()] == 0 ? -F(0) : F(0);
}

template <class F, int Words>
F from_integer(const Word* w, const Layout& layout) {
  const int words = Words > 0 ? Words : layout.words;
  if (layout.counted) {
    const Word counts = w[words];
    const bool plus = (counts & kCountMask) != 0;
    const bool minus = ((counts >> kCountBits) & kCountMask) != 0;
    if ((counts >> (2 * kCountBits)) != 0 || (plus && minus)) {
      return std::numeric_limits<F>::quiet_NaN();
    }
    if (plus) return std::numeric_limits<F>::infinity();
    if (minus) return -std::numeric_limits<F>::infinity();
  }
  const bool negative = (w[words - 1] >> 63) != 0;
  if constexpr (Words == 1 || Words == 2) {
    Wide x = w[0];
    if constexpr (Words == 2) {
      x |= Wide{w[1]} << 64;
    } else if (negative) {
      x |= ~Wide{0} << 64;  // sign-extended
    }
    if (negative) x = -x;
    const Word high = static_cast<Word>(x >> 64), low = static_cast<Word>(x);
    if (x == 0) return zero<F>(w, layout);
    const int top = high != 0 ? 127 - std::countl_zero(high) : 63 - std::countl_zero(low);
    return rounded<F>(WideMagnitude{high, low}, top, layout.base, negative);
  } else {
    std::array<Word, kMaxWords> magnitude;
    std::copy(w, w + words, magnitude.begin());
    if (negative) negate(magnitude.data(), words);
    int top_word = words - 1;
    while (top_word >= 0 && magnitude[top_word] == 0) --top_word;
    if (top_word < 0) return zero<F>(w, layout);
    const int top = top_word * 64 + 63 - std::countl_zero(magnitude[top_word]);
    return rounded<F>(LongMagnitude{magnitude.data(), words}, top, layout.base, negative);
  }
}

template <class F, int Words>
void from_integers(const Word* w, std::size_t n, const Layout& layout, F* out) {
  for (std::size_t i = 0; i < n; ++i, w += layout.stride()) {
    out[i] = from_integer<F, Words>(w, layout);
  }
}

// Back to F, the common forms compiled apart.
template <class F>
void convert_out(const Word* w, std::size_t n, const Layout& layout, F* out) {
  switch (layout.words) {
    case 1: from_integers<F, 1>(w, n, layout, out); break;
    case 2: from_integers<F, 2>(w, n, layout, out); break;
    default: from_integers<F, 0>(w, n, layout, out); break;
  }
}

}  // namespace hreduce::detail::exact
