// The exact sum. Every finite float or double is an integer times a power
// of two, so the sum of a call's values is an integer on the grid of the
// smallest power any of them uses. Integer addition is associative and
// commutative: once every member has written its values as integers on one
// grid, the engine's ordinary collective (any path, any layout, any
// bracketing) adds them without error, and each receiving member rounds its
// integers back once, to nearest, ties to even.
//
//   1. agree on the grid: an allreduce (max) of the highest and the lowest
//      set bit over all values of all members, and whether any is NaN or ±∞;
//   2. the user's collective over integers of W 64-bit words per value, W
//      just large enough for the highest bit, 31 bits of headroom (2^31
//      members cannot overflow it) and the sign;
//   3. round back.
//
// W follows the data: doubles whose magnitudes lie within 2^10 of each
// other need 2 words (16 B per double), the whole double range, from
// 2^-1074 to 2^1023, 34. A binned sum (ReproBLAS) runs in one pass with a
// fixed few words per value, but drops the bits below its window
// (1e308 − 1e308 + 1e-300 gives 0 there), as a fixed-point sum with a chosen
// window (as climate models use) does too. This one is exact for every
// input, and pays for a wide exponent range only in calls that have one.
//
// Non-finite values: NaN anywhere, or +∞ and −∞ together, give a quiet NaN;
// otherwise ±∞ gives ±∞. A finite sum beyond the largest finite value rounds
// to ±∞, as IEEE addition does. An exact zero is +0.0, also when every value
// is −0.0.
#include "src/engine/exact_sum.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <typeinfo>

#include "hreduce/ops.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/team_state.hpp"

namespace hreduce::detail {
namespace {

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
// first, then the counts word when `counted`; `values` values per element
// (2 for complex types).
struct Layout {
  int words = 1;
  bool counted = false;
  int values = 1;
  int base = 0;  // the grid: an integer i stands for i × 2^base
  int stride() const { return words + (counted ? 1 : 0); }
};

// The op of step 2 (its type names it in messages).
struct ExactIntegerSum {};

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
};

template <class F>
void summarize(const F* v, std::size_t n, Summary& s) {
  for (std::size_t i = 0; i < n; ++i) {
    const Parts p = parts_of(v[i]);
    if (!p.finite) {
      s.not_finite = 1;
    } else if (p.mantissa != 0) {
      s.highest = std::max<std::int64_t>(s.highest, p.exponent + 63 - std::countl_zero(p.mantissa));
      s.minus_lowest = std::max<std::int64_t>(s.minus_lowest, -p.exponent);
    }
  }
}

Layout layout_of(const Summary& s, int values) {
  Layout layout;
  layout.values = values;
  layout.counted = s.not_finite != 0;
  if (s.highest == INT32_MIN) return layout;  // only zeros (and non-finite values)
  layout.base = static_cast<int>(-s.minus_lowest);
  const std::int64_t bits = s.highest - layout.base + 1 + kHeadroomBits;
  layout.words = static_cast<int>((bits + 63) / 64);
  return layout;
}

void negate(Word* w, int words) {
  Word carry = 1;
  for (int k = 0; k < words; ++k) {
    w[k] = ~w[k] + carry;
    carry &= w[k] == 0 ? 1 : 0;
  }
}

template <class F>
void to_integers(const F* v, std::size_t n, const Layout& layout, Word* out) {
  const int stride = layout.stride();
  for (std::size_t i = 0; i < n; ++i, out += stride) {
    std::fill(out, out + stride, Word{0});
    const Parts p = parts_of(v[i]);
    if (!p.finite) {
      out[layout.words] = p.mantissa != 0 ? kNotANumber
                          : p.negative    ? kMinusInfinity
                                          : kPlusInfinity;
      continue;
    }
    if (p.mantissa == 0) continue;
    const int shift = p.exponent - layout.base;  // >= 0: base is the lowest bit of all
    const int word = shift / 64, bit = shift % 64;
    out[word] = p.mantissa << bit;
    if (bit != 0 && word + 1 < layout.words) out[word + 1] = p.mantissa >> (64 - bit);
    if (p.negative) negate(out, layout.words);
  }
}

// out = a + b, `n` elements: exact, so any order and bracketing agree.
void add_integers(const void* a, const void* b, void* out, std::size_t n, const void* self) {
  const Layout& layout = *static_cast<const Layout*>(self);
  const auto* x = static_cast<const Word*>(a);
  const auto* y = static_cast<const Word*>(b);
  auto* z = static_cast<Word*>(out);
  const int stride = layout.stride();
  const std::size_t values = n * static_cast<std::size_t>(layout.values);
  for (std::size_t i = 0; i < values; ++i, x += stride, y += stride, z += stride) {
    Word carry = 0;
    for (int k = 0; k < layout.words; ++k) {
      const unsigned __int128 sum = static_cast<unsigned __int128>(x[k]) + y[k] + carry;
      z[k] = static_cast<Word>(sum);
      carry = static_cast<Word>(sum >> 64);
    }
    if (layout.counted) z[layout.words] = x[layout.words] + y[layout.words];
  }
}

bool bit_at(const Word* m, int i) { return ((m[i / 64] >> (i % 64)) & 1) != 0; }

bool any_bit_below(const Word* m, int i) {
  const int word = i / 64, bit = i % 64;
  for (int k = 0; k < word; ++k) {
    if (m[k] != 0) return true;
  }
  return bit != 0 && (m[word] & ((Word{1} << bit) - 1)) != 0;
}

// The 64 bits of m from bit i up.
Word bits_from(const Word* m, int words, int i) {
  const int word = i / 64, bit = i % 64;
  Word v = m[word] >> bit;
  if (bit != 0 && word + 1 < words) v |= m[word + 1] << (64 - bit);
  return v;
}

template <class F>
F from_integer(const Word* w, const Layout& layout) {
  using Fm = Format<F>;
  if (layout.counted) {
    const Word counts = w[layout.words];
    const bool plus = (counts & kCountMask) != 0;
    const bool minus = ((counts >> kCountBits) & kCountMask) != 0;
    if ((counts >> (2 * kCountBits)) != 0 || (plus && minus)) {
      return std::numeric_limits<F>::quiet_NaN();
    }
    if (plus) return std::numeric_limits<F>::infinity();
    if (minus) return -std::numeric_limits<F>::infinity();
  }
  const int words = layout.words;
  std::array<Word, kMaxWords> magnitude;
  std::copy(w, w + words, magnitude.begin());
  const bool negative = (magnitude[words - 1] >> 63) != 0;
  if (negative) negate(magnitude.data(), words);
  int top_word = words - 1;
  while (top_word >= 0 && magnitude[top_word] == 0) --top_word;
  if (top_word < 0) return F(0);
  const int top = top_word * 64 + 63 - std::countl_zero(magnitude[top_word]);
  // The lowest bit the result keeps: `digits` bits below the top, but none
  // below the smallest subnormal.
  const int cut = std::max(top - (Fm::digits - 1), Fm::lowest - layout.base);
  Word kept = magnitude[0];
  int exponent = layout.base;
  if (cut > 0) {
    kept = bits_from(magnitude.data(), words, cut);
    if (bit_at(magnitude.data(), cut - 1) &&
        (any_bit_below(magnitude.data(), cut - 1) || (kept & 1) != 0)) {
      ++kept;  // may reach 2^digits: still exact in F
    }
    exponent += cut;
  }
  // kept has at most `digits` + 1 bits, so both steps are exact but for an
  // overflow to ±∞, which is IEEE's rounding too.
  const F result = std::ldexp(static_cast<F>(kept), exponent);
  return negative ? -result : result;
}

template <class F>
void from_integers(const Word* w, std::size_t n, const Layout& layout, F* out) {
  for (std::size_t i = 0; i < n; ++i, w += layout.stride()) out[i] = from_integer<F>(w, layout);
}

template <class F>
void run_exact_sum(MemberState& me, const Call& call, int values) {
  TeamState& team = me.team;
  const int size = team.total_members, rank = me.global_rank;
  CollectiveOptions plain = *call.options;
  plain.reproducibility = Reproducibility::run_to_run;
  // Both steps are named after the user's collective in messages, and a
  // member with bad arguments fails step 1 on every member.
  ProcessStep step;
  step.reported_as = &call.kind;
  const std::string problem = member_problem(call, rank, size, team.options.collectives);
  std::string relayed;
  if (!problem.empty()) {
    relayed = std::string(to_string(call.kind)) + ": member " + std::to_string(rank) + ": " +
              problem;
    step.relayed_failure = relayed.c_str();
  }

  const std::size_t in_values = problem.empty() ? input_elements(call, size) * values : 0;
  Summary mine, all;
  summarize(static_cast<const F*>(call.in), in_values, mine);
  Call agree(CallArgs(CollectiveKind::allreduce, &mine, &all, sizeof(Summary) / sizeof(std::int64_t),
                      nullptr, SIZE_MAX, SIZE_MAX, 0, erase_op<std::int64_t>(op::max), plain));
  agree.step = &step;
  execute_call(me, agree);

  const Layout layout = layout_of(all, values);
  const std::size_t stride_bytes = static_cast<std::size_t>(layout.stride()) * sizeof(Word);
  const std::size_t out_values = output_elements(call, rank) * values;
  auto* ints_in = static_cast<Word*>(me.scratch(3, std::max<std::size_t>(in_values, 1) * stride_bytes));
  auto* ints_out =
      out_values > 0 ? static_cast<Word*>(me.scratch(4, out_values * stride_bytes)) : nullptr;
  to_integers(static_cast<const F*>(call.in), in_values, layout, ints_in);

  Call sum = call;
  sum.in = ints_in;
  sum.out = ints_out;
  sum.in_size = SIZE_MAX;
  sum.out_size = SIZE_MAX;
  sum.op = ErasedOp{&add_integers,       &layout, values * stride_bytes, true, call.op.type,
                    &typeid(ExactIntegerSum), "sum (exact)", false};
  sum.options = &plain;
  sum.step = &step;
  execute_call(me, sum);
  from_integers(ints_out, out_values, layout, static_cast<F*>(call.out));
}

}  // namespace

bool exact_sum_applies(const ErasedOp& op) {
  if (op.op_type == nullptr || op.type == nullptr || *op.op_type != typeid(op::sum_t)) {
    return false;
  }
  const std::type_info& t = *op.type;
  return t == typeid(float) || t == typeid(double) || t == typeid(std::complex<float>) ||
         t == typeid(std::complex<double>);
}

void execute_exact_sum(MemberState& me, const Call& call) {
  const std::type_info& t = *call.op.type;
  if (t == typeid(double)) return run_exact_sum<double>(me, call, 1);
  if (t == typeid(std::complex<double>)) return run_exact_sum<double>(me, call, 2);
  if (t == typeid(float)) return run_exact_sum<float>(me, call, 1);
  run_exact_sum<float>(me, call, 2);
}

}  // namespace hreduce::detail
