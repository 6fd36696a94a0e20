// The exact sum's integers (exact_sum.cpp): every finite float or double
// as an integer on one grid, W 64-bit words per value, the grid agreed
// from a summary of every member's values, and their exact addition.
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>

namespace hreduce::detail::exact {

using Word = std::uint64_t;

constexpr int kMaxWords = 36;          // the whole double range, with headroom
constexpr int kHeadroomBits = 31 + 1;  // 2^31 members, and the sign
// The word of counts that follows a value's integer when some value of the
// call is not finite: how many +∞, −∞ and NaN went into it.
constexpr int kCountBits = 21;
constexpr Word kCountMask = (Word{1} << kCountBits) - 1;
constexpr Word kPlusInfinity = 1;
constexpr Word kMinusInfinity = Word{1} << kCountBits;
constexpr Word kNotANumber = Word{1} << (2 * kCountBits);

// A call's integers: `words` two's-complement words per value, lowest
// first, then the counts word when `counted`, then, when `zero_signs`, a
// word counting the values other than −0.0; `values` values per element
// (2 for complex types).
struct Layout {
  int words = 1;
  bool counted = false;
  bool zero_signs = false;  // some value is −0.0
  int values = 1;
  int base = 0;  // the grid: an integer i stands for i × 2^base
  int stride() const { return words + (counted ? 1 : 0) + (zero_signs ? 1 : 0); }
  int zero_word() const { return words + (counted ? 1 : 0); }
  bool plain() const { return !counted && !zero_signs; }
};

template <class F>
struct Format;
template <>
struct Format<double> {
  using Bits = std::uint64_t;
  static constexpr int digits = 53, exponent_bits = 11, bias = 1023, lowest = -1074;
};
template <>
struct Format<float> {
  using Bits = std::uint32_t;
  static constexpr int digits = 24, exponent_bits = 8, bias = 127, lowest = -149;
};

// x = ±mantissa × 2^exponent with an odd mantissa, or 0; a NaN has a
// non-zero mantissa and is not finite, an infinity a zero one.
struct Parts {
  Word mantissa = 0;
  int exponent = 0;
  bool negative = false;
  bool finite = true;
};

template <class F>
Parts parts_of(F x) {
  using Fm = Format<F>;
  using Bits = typename Fm::Bits;
  const auto bits = std::bit_cast<Bits>(x);
  Parts p;
  p.negative = (bits >> (sizeof(Bits) * CHAR_BIT - 1)) != 0;
  const int biased =
      static_cast<int>((bits >> (Fm::digits - 1)) & ((Bits{1} << Fm::exponent_bits) - 1));
  Word fraction = bits & ((Bits{1} << (Fm::digits - 1)) - 1);
  if (biased == (1 << Fm::exponent_bits) - 1) {
    p.finite = false;
    p.mantissa = fraction;
    return p;
  }
  if (biased == 0) {
    p.exponent = Fm::lowest;
  } else {
    fraction |= Word{1} << (Fm::digits - 1);
    p.exponent = biased - Fm::bias - (Fm::digits - 1);
  }
  if (fraction != 0) {
    const int zeros = std::countr_zero(fraction);
    fraction >>= zeros;
    p.exponent += zeros;
  }
  p.mantissa = fraction;
  return p;
}

// Step 1's vector, reduced with max.
struct Summary {
  std::int64_t highest = INT32_MIN;       // the highest set bit of any value
  std::int64_t minus_lowest = INT32_MIN;  // minus the lowest
  std::int64_t not_finite = 0;            // 1 when some value is NaN or ±∞
  std::int64_t negative_zero = 0;         // 1 when some value is −0.0
};

// Over the raw bits and without branches, so that it vectorises: the
// exponent field alone bounds a value's bits, from its leading bit (field
// − bias; a subnormal's field 0 counts as 1, above its leading bit) down to
// its last mantissa bit (digits − 1 lower). Trailing zero bits are not
// looked for: they could only narrow the grid.
template <class F>
void summarize(const F* v, std::size_t n, Summary& s) {
  using Fm = Format<F>;
  using Bits = typename Fm::Bits;
  constexpr Bits kSign = Bits{1} << (sizeof(Bits) * CHAR_BIT - 1);
  constexpr std::int32_t kMaxField = (1 << Fm::exponent_bits) - 1;
  // Integers rather than bools throughout: GCC vectorises none of the loop
  // when a reduction is a bool.
  std::int32_t high = 0, low = kMaxField;  // fields of the finite non-zero values
  std::int32_t not_finite = 0, negative_zero = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, v + i, sizeof b);
    const auto field = static_cast<std::int32_t>((b >> (Fm::digits - 1)) & kMaxField);
    const auto infinite_or_nan = static_cast<std::int32_t>(field == kMaxField);
    const auto zero = static_cast<std::int32_t>((b & ~kSign) == 0);
    const std::int32_t at_least_one = field | static_cast<std::int32_t>(field == 0);
    const std::int32_t skip = infinite_or_nan | zero;
    const std::int32_t h = skip != 0 ? 0 : at_least_one;
    const std::int32_t l = skip != 0 ? kMaxField : at_least_one;
    high = h > high ? h : high;
    low = l < low ? l : low;
    not_finite |= infinite_or_nan;
    negative_zero |= static_cast<std::int32_t>(b == kSign);
  }
  s.not_finite = std::max<std::int64_t>(s.not_finite, not_finite);
  s.negative_zero = std::max<std::int64_t>(s.negative_zero, negative_zero);
  if (high == 0) return;
  s.highest = std::max<std::int64_t>(s.highest, high - Fm::bias);
  s.minus_lowest = std::max<std::int64_t>(s.minus_lowest, -(low - Fm::bias - (Fm::digits - 1)));
}

inline Layout layout_of(const Summary& s, int values) {
  Layout layout;
  layout.values = values;
  layout.counted = s.not_finite != 0;
  layout.zero_signs = s.negative_zero != 0;
  if (s.highest == INT32_MIN) return layout;  // only zeros (and non-finite values)
  layout.base = static_cast<int>(-s.minus_lowest);
  const std::int64_t bits = s.highest - layout.base + 1 + kHeadroomBits;
  layout.words = static_cast<int>((bits + 63) / 64);
  return layout;
}

inline void negate(Word* w, int words) {
  Word carry = 1;
  for (int k = 0; k < words; ++k) {
    w[k] = ~w[k] + carry;
    carry &= w[k] == 0 ? 1 : 0;
  }
}

using Wide = unsigned __int128;

// The counts word of a value that is not finite.
inline Word count_of(const Parts& p) {
  return p.mantissa != 0 ? kNotANumber : p.negative ? kMinusInfinity : kPlusInfinity;
}

// The common case, one or two words and every value finite and not −0:
// from the raw bits, without branches, so that it vectorises (variable
// shifts; a 128-bit shift by a varying amount would branch on "64 or
// more", which random exponents mispredict).
template <class F, int Words>
void to_plain_integers(const F* v, std::size_t n, const Layout& layout, Word* out) {
  using Fm = Format<F>;
  using Bits = typename Fm::Bits;
  constexpr std::int32_t kMaxField = (1 << Fm::exponent_bits) - 1;
  constexpr Word kHidden = Word{1} << (Fm::digits - 1);
  const int ulp_of_field_one = 1 - Fm::bias - (Fm::digits - 1) - layout.base;
  for (std::size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, v + i, sizeof b);
    const auto field = static_cast<std::int32_t>((b >> (Fm::digits - 1)) & kMaxField);
    const Word mantissa = (b & (kHidden - 1)) | (field != 0 ? kHidden : 0);
    // >= 0 for every non-zero value (base is the lowest last mantissa bit);
    // a zero's mantissa makes it moot.
    const int shift = (field | static_cast<std::int32_t>(field == 0)) - 1 + ulp_of_field_one;
    const int bit = shift & 63;
    const bool high = shift >= 64;
    Word lo = high ? 0 : mantissa << bit;
    Word hi = high ? mantissa << bit : (mantissa >> 1) >> (63 - bit);
    const bool negative = (b >> (sizeof(Bits) * CHAR_BIT - 1)) != 0;
    if constexpr (Words == 1) {
      out[i] = negative ? Word{0} - lo : lo;
    } else {
      const Word negated_hi = Word{0} - hi - static_cast<Word>(lo != 0);
      hi = negative ? negated_hi : hi;
      lo = negative ? Word{0} - lo : lo;
      out[2 * i] = lo;
      out[2 * i + 1] = hi;
    }
  }
}

// Any layout: the values that are not finite or are −0 counted beside.
template <class F>
void to_integers(const F* v, std::size_t n, const Layout& layout, Word* out) {
  const int words = layout.words;
  const int stride = layout.stride();
  for (std::size_t i = 0; i < n; ++i, out += stride) {
    const Parts p = parts_of(v[i]);
    std::fill(out, out + words, Word{0});
    if (layout.counted) out[words] = p.finite ? 0 : count_of(p);
    if (layout.zero_signs) {
      out[layout.zero_word()] = p.finite && p.mantissa == 0 && p.negative ? 0 : 1;
    }
    if (!p.finite || p.mantissa == 0) continue;
    const int shift = p.exponent - layout.base;  // >= 0: base is the lowest bit of all
    const int word = shift / 64, bit = shift % 64;
    out[word] = p.mantissa << bit;
    if (bit != 0 && word + 1 < words) out[word + 1] = p.mantissa >> (64 - bit);
    if (p.negative) negate(out, words);
  }
}

// out = a + b, `n` elements: exact, so any order and bracketing agree.
inline void add_integers(const void* a, const void* b, void* out, std::size_t n, const void* self) {
  const Layout& layout = *static_cast<const Layout*>(self);
  const auto* x = static_cast<const Word*>(a);
  const auto* y = static_cast<const Word*>(b);
  auto* z = static_cast<Word*>(out);
  const std::size_t values = n * static_cast<std::size_t>(layout.values);
  if (layout.words == 2 && layout.plain()) {
    for (std::size_t i = 0; i < 2 * values; i += 2) {
      Wide u, w;
      std::memcpy(&u, x + i, sizeof u);
      std::memcpy(&w, y + i, sizeof w);
      u += w;
      std::memcpy(z + i, &u, sizeof u);
    }
    return;
  }
  const int stride = layout.stride();
  for (std::size_t i = 0; i < values; ++i, x += stride, y += stride, z += stride) {
    Word carry = 0;
    for (int k = 0; k < layout.words; ++k) {
      const Wide sum = Wide{x[k]} + y[k] + carry;
      z[k] = static_cast<Word>(sum);
      carry = static_cast<Word>(sum >> 64);
    }
    for (int k = layout.words; k < stride; ++k) z[k] = x[k] + y[k];
  }
}

// Into integers, the common forms compiled apart.
template <class F>
void convert_in(const F* v, std::size_t n, const Layout& layout, Word* out) {
  if (!layout.plain() || layout.words > 2) return to_integers(v, n, layout, out);
  if (layout.words == 1) return to_plain_integers<F, 1>(v, n, layout, out);
  to_plain_integers<F, 2>(v, n, layout, out);
}

}  // namespace hreduce::detail::exact
