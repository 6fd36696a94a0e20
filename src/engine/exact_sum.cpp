// The exact sum. Every finite float or double is an integer times a power
// of two, so the sum of a call's values is an integer on the grid of the
// smallest power any of them uses. Integer addition is associative and
// commutative: once every member has written its values as integers on one
// grid, the engine's ordinary collective (any path, any layout, any
// bracketing) adds them without error, and each receiving member rounds its
// integers back once, to nearest, ties to even.
//
//   1. agree on the grid: an allreduce (max) of the highest leading bit and
//      the lowest last mantissa bit that the values' exponents allow, over
//      all values of all members, and whether any is NaN, ±∞ or −0;
//   2. the user's collective over integers of W 64-bit words per value, W
//      just large enough for the highest bit, 31 bits of headroom (2^31
//      members cannot overflow it) and the sign;
//   3. round back.
//
// W follows the data: doubles whose exponents lie within 43 binades of
// each other need 2 words (16 B per double), the whole double range, from
// 2^-1074 to 2^1023, 34. A binned sum (ReproBLAS) runs in one pass with a
// fixed few words per value, but drops the bits below its window
// (1e308 − 1e308 + 1e-300 gives 0 there), as a fixed-point sum with a chosen
// window (as climate models use) does too. This one is exact for every
// input, and pays for a wide exponent range only in calls that have one.
//
// A team of one or two members skips all of it: one IEEE addition is
// already correctly rounded (run_pair_sum). Short vectors skip the
// agreement (run_gathered_sum), and long allreduces and reduces round in
// blocks (reduce_in_blocks).
//
// Non-finite values: NaN anywhere, or +∞ and −∞ together, give a NaN (its
// sign and payload are not promised); otherwise ±∞ gives ±∞. A finite sum
// beyond the largest finite value rounds to ±∞, and an exact zero is −0.0
// only when every value is −0.0, as IEEE addition gives them.
#include "src/engine/exact_sum.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <typeinfo>
#include <vector>

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

Layout layout_of(const Summary& s, int values) {
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

void negate(Word* w, int words) {
  Word carry = 1;
  for (int k = 0; k < words; ++k) {
    w[k] = ~w[k] + carry;
    carry &= w[k] == 0 ? 1 : 0;
  }
}

using Wide = unsigned __int128;

// The counts word of a value that is not finite.
Word count_of(const Parts& p) {
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
void add_integers(const void* a, const void* b, void* out, std::size_t n, const void* self) {
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

// The conversions, the common forms compiled apart.
template <class F>
void convert_in(const F* v, std::size_t n, const Layout& layout, Word* out) {
  if (!layout.plain() || layout.words > 2) return to_integers(v, n, layout, out);
  if (layout.words == 1) return to_plain_integers<F, 1>(v, n, layout, out);
  to_plain_integers<F, 2>(v, n, layout, out);
}

template <class F>
void convert_out(const Word* w, std::size_t n, const Layout& layout, F* out) {
  switch (layout.words) {
    case 1: from_integers<F, 1>(w, n, layout, out); break;
    case 2: from_integers<F, 2>(w, n, layout, out); break;
    default: from_integers<F, 0>(w, n, layout, out); break;
  }
}

// A long allreduce or reduce: rounding is the dearest step of the
// conversions, and every member (a reduce's root) would round the whole
// vector. Instead a reduce_scatter of the integers gives each member one
// block to round, and an allreduce (a reduce) with `bor` of the rounded
// blocks, zeros elsewhere, hands every member (the root) all of them, bit
// for bit (one contributor per element). Below 32 KiB the extra
// synchronisation costs more than it saves.
constexpr std::size_t kRoundInBlocksBytes = 32 * 1024;

template <class F>
bool rounds_in_blocks(const Call& call, int size, int values) {
  return (call.kind == CollectiveKind::allreduce || call.kind == CollectiveKind::reduce) &&
         size >= 3 &&
         call.count * static_cast<std::size_t>(values) * sizeof(F) >= kRoundInBlocksBytes;
}

template <class F>
void reduce_in_blocks(MemberState& me, const Call& call, Call sum, const Layout& layout,
                      const ProcessStep& step, const CollectiveOptions& plain) {
  const int size = me.team.total_members, rank = me.global_rank;
  const std::size_t n = call.count;
  // Kept per thread: a steady stream of calls allocates nothing.
  thread_local std::vector<std::size_t> counts;
  counts.assign(static_cast<std::size_t>(size), n / static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < n % static_cast<std::size_t>(size); ++r) ++counts[r];
  std::size_t offset = 0;
  for (int r = 0; r < rank; ++r) offset += counts[r];
  const auto values = static_cast<std::size_t>(layout.values);
  sum.kind = CollectiveKind::reduce_scatter;
  sum.count = static_cast<std::size_t>(size);
  sum.counts = counts.data();
  sum.root = 0;
  sum.out = me.scratch(
      4, std::max<std::size_t>(counts[rank] * values, 1) * layout.stride() * sizeof(Word));
  execute_call(me, sum);

  // A reduce's other members round their block beside.
  const bool to_root = call.kind == CollectiveKind::reduce;
  thread_local std::vector<F> beside;
  if (to_root && rank != call.root) beside.resize(n * values);
  F* out = to_root && rank != call.root ? beside.data() : static_cast<F*>(call.out);
  std::fill(out, out + offset * values, F(0));
  convert_out(static_cast<const Word*>(sum.out), counts[rank] * values, layout,
              out + offset * values);
  std::fill(out + (offset + counts[rank]) * values, out + n * values, F(0));
  using Bits = typename Format<F>::Bits;
  Call gather(CallArgs(call.kind, out, out, n * values, nullptr, SIZE_MAX, SIZE_MAX,
                       to_root ? call.root : 0, erase_op<Bits>(op::bor), plain));
  gather.step = &step;
  execute_call(me, gather);
}

// Short vectors: the agreement round and the integer collective take two or
// three synchronisations where run_to_run takes one. Instead every member
// gathers all inputs in one call (an allreduce, or a reduce to the root,
// with `bor` over p slots, each member's input in its own) and sums what
// its result needs itself, exactly: the same bits, since the correctly
// rounded sum is one. Up to 4 KiB gathered, the size of a few mailbox
// calls.
constexpr std::size_t kGatherBytes = 4096;

template <class F>
bool sums_gathered(const Call& call, int size, int values) {
  const bool plain_vector =
      call.kind == CollectiveKind::allreduce || call.kind == CollectiveKind::reduce ||
      call.kind == CollectiveKind::scan || call.kind == CollectiveKind::exscan;
  // The count first: a wrong one (an argument error still to report) must
  // not overflow the product.
  return plain_vector && call.count <= kGatherBytes &&
         static_cast<std::size_t>(size) * call.count * static_cast<std::size_t>(values) *
                 sizeof(F) <=
             kGatherBytes;
}

template <class F>
void run_gathered_sum(MemberState& me, const Call& call, int values, const ProcessStep& step,
                      const CollectiveOptions& plain, bool ok) {
  const int size = me.team.total_members, rank = me.global_rank;
  const std::size_t per_member = call.count * static_cast<std::size_t>(values);
  using Bits = typename Format<F>::Bits;
  // Kept per thread: a steady stream of calls allocates nothing.
  thread_local std::vector<F> all;
  all.assign(per_member * static_cast<std::size_t>(size), F(0));
  if (ok) std::copy_n(static_cast<const F*>(call.in), per_member, all.data() + per_member * rank);
  const bool to_root = call.kind == CollectiveKind::reduce;
  Call gather(CallArgs(to_root ? CollectiveKind::reduce : CollectiveKind::allreduce, all.data(),
                       all.data(), all.size(), nullptr, SIZE_MAX, SIZE_MAX, to_root ? call.root : 0,
                       erase_op<Bits>(op::bor), plain));
  gather.step = &step;
  execute_call(me, gather);

  // The members whose inputs this member's result sums: [0, upto).
  int upto = size;
  if (call.kind == CollectiveKind::reduce && rank != call.root) upto = 0;
  if (call.kind == CollectiveKind::scan) upto = rank + 1;
  if (call.kind == CollectiveKind::exscan) upto = rank;
  if (upto == 0 || per_member == 0) return;
  Summary summary;
  summarize(all.data(), per_member * static_cast<std::size_t>(upto), summary);
  const Layout layout = layout_of(summary, values);
  const std::size_t stride_bytes = static_cast<std::size_t>(layout.stride()) * sizeof(Word);
  auto* sum = static_cast<Word*>(me.scratch(3, per_member * stride_bytes));
  auto* term = static_cast<Word*>(me.scratch(4, per_member * stride_bytes));
  convert_in(all.data(), per_member, layout, sum);
  for (int q = 1; q < upto; ++q) {
    convert_in(all.data() + per_member * q, per_member, layout, term);
    add_integers(sum, term, sum, call.count, &layout);
  }
  convert_out(sum, per_member, layout, static_cast<F*>(call.out));
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
  step.asked_level = &call.options->reproducibility;
  const std::string problem = member_problem(call, rank, size, team.options.collectives);
  std::string relayed;
  if (!problem.empty()) {
    relayed =
        std::string(to_string(call.kind)) + ": member " + std::to_string(rank) + ": " + problem;
    step.relayed_failure = relayed.c_str();
  }

  if (sums_gathered<F>(call, size, values)) {
    run_gathered_sum<F>(me, call, values, step, plain, problem.empty());
    return;
  }
  const std::size_t in_values = problem.empty() ? input_elements(call, size) * values : 0;
  Summary mine, all;
  summarize(static_cast<const F*>(call.in), in_values, mine);
  Call agree(CallArgs(CollectiveKind::allreduce, &mine, &all,
                      sizeof(Summary) / sizeof(std::int64_t), nullptr, SIZE_MAX, SIZE_MAX, 0,
                      erase_op<std::int64_t>(op::max), plain));
  agree.step = &step;
  execute_call(me, agree);

  const Layout layout = layout_of(all, values);
  const std::size_t stride_bytes = static_cast<std::size_t>(layout.stride()) * sizeof(Word);
  const std::size_t out_values = output_elements(call, rank) * values;
  auto* ints_in =
      static_cast<Word*>(me.scratch(3, std::max<std::size_t>(in_values, 1) * stride_bytes));
  auto* ints_out =
      out_values > 0 ? static_cast<Word*>(me.scratch(4, out_values * stride_bytes)) : nullptr;
  convert_in(static_cast<const F*>(call.in), in_values, layout, ints_in);

  Call sum = call;
  sum.in = ints_in;
  sum.out = ints_out;
  sum.in_size = SIZE_MAX;
  sum.out_size = SIZE_MAX;
  sum.op.combine = &add_integers;
  sum.op.op = &layout;
  sum.op.elem_size = values * stride_bytes;
  sum.op.commutative = true;
  sum.op.op_type = &typeid(ExactIntegerSum);  // the user's element type stays, for messages
  sum.op.op_name = "sum (exact)";
  sum.op.may_throw = false;
  sum.options = &plain;
  sum.step = &step;
  if (rounds_in_blocks<F>(call, size, values)) {
    reduce_in_blocks<F>(me, call, sum, layout, step, plain);
    return;
  }
  execute_call(me, sum);
  convert_out(ints_out, out_values, layout, static_cast<F*>(call.out));
}

// A team of one or two members: every result is one value or one IEEE
// addition of two, which is already the correctly rounded sum (overflow,
// infinities, NaN and the sign of zero included): the ordinary collective.
void run_pair_sum(MemberState& me, const Call& call) {
  CollectiveOptions plain = *call.options;
  plain.reproducibility = Reproducibility::run_to_run;
  Call sum = call;
  sum.options = &plain;
  execute_call(me, sum);
}

template <class F>
void run_exact(MemberState& me, const Call& call, int values) {
  if (me.team.total_members <= 2) {
    run_pair_sum(me, call);
  } else {
    run_exact_sum<F>(me, call, values);
  }
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
  if (t == typeid(double)) return run_exact<double>(me, call, 1);
  if (t == typeid(std::complex<double>)) return run_exact<double>(me, call, 2);
  if (t == typeid(float)) return run_exact<float>(me, call, 1);
  run_exact<float>(me, call, 2);
}

}  // namespace hreduce::detail
